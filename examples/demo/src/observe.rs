//! Watching the cluster while the scenario runs: events as they are published and the
//! conditions of the example resources as they change, printed through tracing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::events::v1::Event;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::task::JoinHandle;

/// What the watchers saw.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// `Normal Created` … : the type and reason of every event published, once each.
    pub(crate) events: BTreeSet<String>,
    /// The last conditions printed, by `Kind namespace/name`.
    conditions: BTreeMap<String, String>,
}

/// The watchers, running until dropped.
pub(crate) struct Observer {
    tasks: Vec<JoinHandle<()>>,
    pub(crate) seen: Arc<Mutex<Seen>>,
}

impl Observer {
    pub(crate) fn new() -> Self {
        Observer {
            tasks: Vec::new(),
            seen: Arc::default(),
        }
    }

    /// Prints every event published in `namespace`.
    pub(crate) fn events(&mut self, client: kube::Client, namespace: &str) {
        let api: Api<Event> = Api::namespaced(client, namespace);
        let seen = Arc::clone(&self.seen);
        self.tasks.push(tokio::spawn(async move {
            let mut events = watcher(api, watcher::Config::default())
                .applied_objects()
                .boxed();
            while let Ok(Some(event)) = events.try_next().await {
                let kind = event.type_.clone().unwrap_or_default();
                let reason = event.reason.clone().unwrap_or_default();
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
                tracing::info!(
                    "event   {kind} {reason} on {regarding}: {}",
                    event.note.as_deref().unwrap_or("")
                );
                lock(&seen).events.insert(format!("{kind} {reason}"));
            }
        }));
    }

    /// Prints the conditions of each `K` whenever they change.
    pub(crate) fn conditions<K>(&mut self, api: Api<K>)
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Debug
            + DeserializeOwned
            + Serialize
            + Send
            + Sync
            + 'static,
    {
        let seen = Arc::clone(&self.seen);
        self.tasks.push(tokio::spawn(async move {
            let mut objects = watcher(api, watcher::Config::default())
                .applied_objects()
                .boxed();
            while let Ok(Some(object)) = objects.try_next().await {
                let key = format!(
                    "{} {}/{}",
                    K::kind(&()),
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                );
                let now = describe_conditions(&serde_json::to_value(&object).unwrap_or_default());
                if now.is_empty() {
                    continue;
                }
                let mut seen = lock(&seen);
                if seen.conditions.get(&key) != Some(&now) {
                    tracing::info!("status  {key}: {now}");
                    seen.conditions.insert(key, now);
                }
            }
        }));
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
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
