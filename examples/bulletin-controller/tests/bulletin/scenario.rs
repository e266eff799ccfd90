//! The controller as `main.rs` runs it, on an exploration's client, and what a user does.

use std::sync::Arc;

use bulletin_controller::{Bulletin, Context, error_policy, reconcile};
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{Controller, watcher};
use kube::{Api, CustomResourceExt};
use prometheus_client::registry::Registry;
use recon_testing::explore::{Scenario, UserAction};
use serde_json::{Value, json};

/// A `Bulletin` named `news` in `default`.
pub fn bulletin(spec: Value) -> Value {
    json!({"apiVersion": "examples.recon.dev/v1", "kind": "Bulletin",
           "metadata": {"name": "news", "namespace": "default"}, "spec": spec})
}

/// The CRD, the default audience `staff`, and the controller built as `main.rs` builds it:
/// its context comes from an `async fn`, so the stream awaits it first.
pub fn controller() -> Scenario {
    Scenario::new("bulletin")
        .crd(Bulletin::crd())
        .given(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "bulletin-defaults", "namespace": "default"},
                       "data": {"audience": "staff"}}))
        .controller(|client| {
            let context = async move {
                let mut registry = Registry::default();
                Context::new(client, "default", &mut registry)
                    .await
                    .expect("the context reads the defaults")
            };
            stream::once(context).flat_map(|context| {
                let client = context.client.clone();
                Controller::new(
                    Api::<Bulletin>::all(client.clone()),
                    watcher::Config::default(),
                )
                .owns(Api::<ConfigMap>::all(client), watcher::Config::default())
                .run(reconcile, error_policy, Arc::new(context))
            })
        })
}

/// A user who posts a bulletin, archives it, then deletes it.
pub fn post_archive_delete(scenario: Scenario) -> Scenario {
    scenario
        .action(UserAction::create(&bulletin(
            json!({"message": "lunch at noon"}),
        )))
        .action(UserAction::patch(&bulletin(json!({"archived": true}))))
        .action(UserAction::delete(
            "examples.recon.dev/v1",
            "Bulletin",
            Some("default"),
            "news",
        ))
}
