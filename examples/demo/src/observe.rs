//! Watching the cluster while the scenario runs, for the events others than the operators
//! publish (on a cluster, its own controllers': `ScalingReplicaSet`…); the operators' own are
//! printed with the reconcile that published them.

use std::sync::{Mutex, PoisonError};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::runtime::watcher;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::output::Output;

/// A watch that ends when dropped.
pub(crate) struct Watching(JoinHandle<()>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Prints each event published in `namespace` from now on by a controller not in `operators`,
/// until dropped.
pub(crate) fn others_events(
    client: kube::Client,
    namespace: &str,
    operators: &'static [&'static str],
    output: Output,
) -> Watching {
    let api: Api<Event> = Api::namespaced(client, namespace);
    Watching(tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        while let Ok(Some(change)) = events.try_next().await {
            // The initial listing holds what was published before the demo began.
            let watcher::Event::Apply(event) = change else {
                continue;
            };
            let reporter = event.reporting_controller.clone().unwrap_or_default();
            if operators.contains(&reporter.as_str()) {
                continue;
            }
            let regarding = event
                .regarding
                .as_ref()
                .map(|r| {
                    format!(
                        "{} {}",
                        r.kind.as_deref().unwrap_or("?"),
                        r.name.as_deref().unwrap_or("?")
                    )
                })
                .unwrap_or_default();
            let count = event
                .series
                .as_ref()
                .map(|s| format!(" (series count {})", s.count))
                .unwrap_or_default();
            output.note(format!(
                "event {} {} on {regarding}, by {reporter}: {}{count}",
                event.type_.as_deref().unwrap_or(""),
                event.reason.as_deref().unwrap_or(""),
                event.note.as_deref().unwrap_or("")
            ));
        }
    }))
}

/// `Ready=True, ImageResolved=True (Resolved)`: an object's conditions in a line.
pub(crate) fn describe_conditions(object: &Value) -> String {
    let Some(conditions) = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    conditions
        .iter()
        .map(|c| {
            let field = |name: &str| c.get(name).and_then(Value::as_str).unwrap_or("");
            match field("reason") {
                "" => format!("{}={}", field("type"), field("status")),
                reason => format!("{}={} ({reason})", field("type"), field("status")),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
