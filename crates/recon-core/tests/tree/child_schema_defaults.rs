//! The bug class CRD schema defaulting causes in production, reproduced against the in-memory
//! API server: a reconciler's desired child leaves out a field its CRD defaults, so the stored
//! child always "differs" from what the reconciler wants. A `ChildReconciler` whose manager
//! forgot what the server did would send an update on every reconcile, forever; the
//! `UpdatingObjectManager`'s memory of mutations (reconciler.io's mutation cache) stops it after
//! one. Server-side apply (`ApplyObjectManager`) never sees the default as drift.

use kube::api::Api;
use kube::{CustomResource, CustomResourceExt};
use recon_core::{
    ApplyObjectManager, ChildReconciler, Config, EventLog, ObjectManager, Request,
    ResourceReconciler, UpdatingObjectManager,
};
use recon_fake::{ApiServer, RequestOrigin, Verb};
use recon_test_fixtures::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The child: a `Sprocket` whose CRD defaults `spec.mode` to `auto`. The reconciler never sets
/// `mode`, so it leaves it out.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Sprocket", namespaced)]
pub struct SprocketSpec {
    pub teeth: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "mode_schema")]
    pub mode: Option<String>,
}

fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "default": "auto"})
}

const UID: &str = "0b5e7a4c-0000-4000-8000-0000000000d1";

fn parent() -> Widget {
    let mut w = widget("w", 12);
    w.metadata.namespace = Some("default".to_owned());
    w.metadata.uid = Some(UID.to_owned());
    w
}

fn desired(w: &Widget) -> Sprocket {
    let mut s = Sprocket::new(
        "w-sprocket",
        SprocketSpec {
            teeth: w.spec.size,
            mode: None,
        },
    );
    s.metadata.namespace = w.metadata.namespace.clone();
    s
}

/// Copies the whole desired spec: what the reconciler wants, `mode` left out.
fn updating() -> UpdatingObjectManager<Sprocket> {
    UpdatingObjectManager::new(|current: &mut Sprocket, desired: &Sprocket| {
        current.spec = desired.spec.clone();
    })
}

fn reconciler(
    server: &ApiServer,
    manager: impl ObjectManager<Widget, Sprocket> + 'static,
) -> ResourceReconciler<Widget> {
    let config = Config::new(server.client(), "test").with_recorder(EventLog::default());
    ResourceReconciler::new(
        config,
        ChildReconciler::new(
            manager,
            |_, w: &Widget| Ok(Some(desired(w))),
            |_, _, _| Ok(()),
        ),
    )
}

async fn server() -> ApiServer {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    server.install_crd(&Sprocket::crd()).await.unwrap();
    server.seed(&parent()).unwrap();
    server
}

/// The client's writes of sprockets, as `verb`.
fn writes(server: &ApiServer, verb: Verb) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| {
            r.origin == RequestOrigin::Client && r.resource == "sprockets" && r.verb == verb
        })
        .count()
}

#[tokio::test]
async fn the_crd_defaults_the_field_the_reconciler_leaves_out() {
    let server = server().await;
    reconciler(&server, updating())
        .reconcile(&Request::namespaced("default", "w"))
        .await
        .unwrap();
    let stored = Api::<Sprocket>::namespaced(server.client(), "default")
        .get("w-sprocket")
        .await
        .unwrap();
    assert_eq!(stored.spec.mode.as_deref(), Some("auto"));
}

#[tokio::test]
async fn a_manager_that_forgets_what_the_server_defaulted_updates_on_every_reconcile() {
    let server = server().await;
    let request = Request::namespaced("default", "w");
    // A new manager each time: nothing is remembered between reconciles.
    for _ in 0..4 {
        reconciler(&server, updating())
            .reconcile(&request)
            .await
            .unwrap();
    }
    assert_eq!(writes(&server, Verb::Create), 1);
    assert_eq!(
        writes(&server, Verb::Update),
        3,
        "every reconcile after the create sees `mode: auto` as drift"
    );
}

#[tokio::test]
async fn the_remembered_mutation_stops_the_update_loop_after_one_update() {
    let server = server().await;
    let request = Request::namespaced("default", "w");
    let reconciler = reconciler(&server, updating());
    for _ in 0..4 {
        reconciler.reconcile(&request).await.unwrap();
    }
    assert_eq!(writes(&server, Verb::Create), 1);
    assert_eq!(
        writes(&server, Verb::Update),
        1,
        "the update teaches the manager that the server sets `mode`; then it is in sync"
    );
}

#[tokio::test]
async fn server_side_apply_does_not_see_the_default_as_drift() {
    let server = server().await;
    let request = Request::namespaced("default", "w");
    let reconciler = reconciler(&server, ApplyObjectManager::new("test"));
    for _ in 0..3 {
        reconciler.reconcile(&request).await.unwrap();
    }
    let sprockets: Api<Sprocket> = Api::namespaced(server.client(), "default");
    let stored = sprockets.get("w-sprocket").await.unwrap();
    assert_eq!(stored.spec.mode.as_deref(), Some("auto"));
    assert_eq!(
        stored.metadata.generation,
        Some(1),
        "the applies after the first change nothing"
    );
    let managed = stored.metadata.managed_fields.unwrap_or_default();
    assert_eq!(
        serde_json::to_value(&managed[0].fields_v1).unwrap()["f:spec"],
        json!({"f:teeth": {}}),
        "the applier owns what it sent, not the default"
    );
}
