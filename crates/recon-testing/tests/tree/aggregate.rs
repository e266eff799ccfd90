//! `AggregateReconciler` against the in-memory API server: a ConfigMap `inventory` lists the
//! widgets of its namespace. As a table (through recon-testing's reconciler tables), then kept
//! up to date by `AggregateReconciler::run` as widgets come and go.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher;
use recon_core::{
    AggregateReconciler, Config, Reference, Request, SyncReconciler, UpdatingObjectManager,
};
use recon_fake::ApiServer;
use recon_test_fixtures::eventually;
use recon_test_fixtures::*;
use recon_testing::{DeleteRef, EventRef, FailureSpec, ReactorSpec, ReconcilerTests, TestCase};
use serde_json::{Value, json};

fn inventory_request() -> Request {
    Request::namespaced("default", "inventory")
}

/// Lists (and tracks) the widgets of the namespace into `data.widgets`.
fn list_widgets() -> SyncReconciler<ConfigMap> {
    SyncReconciler::<ConfigMap>::new("ListWidgets")
        .sync(async |ctx, inventory| {
            let widgets: Vec<Widget> = ctx.track_and_list(Some("default"), "").await?;
            let mut names: Vec<String> = widgets
                .into_iter()
                .filter_map(|w| w.metadata.name)
                .collect();
            names.sort();
            inventory.data = Some([("widgets".to_owned(), names.join(","))].into());
            Ok(())
        })
        .with_setup(|setup| setup.tracks::<Widget>())
}

fn aggregate(config: Config) -> AggregateReconciler<ConfigMap> {
    AggregateReconciler::new(
        config,
        inventory_request(),
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
        }),
    )
    .reconciler(list_widgets())
    // No widgets, no inventory.
    .desired_resource(|_, inventory| {
        let empty = inventory
            .data
            .as_ref()
            .and_then(|d| d.get("widgets"))
            .is_none_or(String::is_empty);
        Ok((!empty).then_some(inventory))
    })
}

fn inventory(widgets: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "inventory", "namespace": "default"},
           "data": {"widgets": widgets}})
}

fn in_default(name: &str) -> Widget {
    let mut w = widget(name, 1);
    w.metadata.namespace = Some("default".to_owned());
    w
}

fn widgets_tracked() -> Reference {
    Reference::selected("example.com", "Widget", Some("default"), "")
}

fn reconcile_inventory() -> TestCase {
    TestCase::reconcile(inventory_request()).expect_track(inventory_request(), widgets_tracked())
}

#[test]
fn aggregate_reconciler() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a missing aggregate is created from what the sub-reconcilers made",
            reconcile_inventory()
                .given(&in_default("b"))
                .given(&in_default("a"))
                .expect_create(&inventory("a,b"))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"inventory\"")),
        )
        .case(
            "an aggregate in sync sends no write",
            reconcile_inventory()
                .given(&in_default("a"))
                .given(&inventory("a")),
        )
        .case(
            "a drifted aggregate is updated",
            reconcile_inventory()
                .given(&in_default("a"))
                .given(&in_default("c"))
                .given(&inventory("a"))
                .expect_update(&inventory("a,c"))
                .expect_event(EventRef::normal("Updated", "Updated ConfigMap \"inventory\"")),
        )
        .case(
            "an aggregate no longer desired is deleted",
            reconcile_inventory()
                .given(&inventory("a"))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "inventory"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"inventory\"")),
        )
        .case(
            "a failed create is returned with a CreationFailed event",
            reconcile_inventory()
                .given(&in_default("a"))
                .reactor(ReactorSpec::new(
                    "create",
                    "configmaps",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_create(&inventory("a"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"inventory\": Internal error occurred: etcd is unavailable",
                ))
                .expect_error("etcd is unavailable"),
        )
        .case(
            "a failed read of the aggregate is returned before anything runs",
            TestCase::reconcile(inventory_request())
                .given(&in_default("a"))
                .reactor(ReactorSpec::new(
                    "get",
                    "configmaps",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_error("etcd is unavailable"),
        )
        .case(
            "an aggregate being deleted is left alone",
            TestCase::reconcile(inventory_request())
                .given(&in_default("a"))
                .given(&{
                    let mut cm = inventory("old");
                    cm["metadata"]["finalizers"] = json!(["example.com/keep"]);
                    cm["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
                    cm
                }),
        )
        .case(
            "other requests are ignored",
            TestCase::reconcile(Request::namespaced("default", "other"))
                .given(&in_default("a"))
                .verify(|env, _| {
                    let sent = env.server().requests().len();
                    if sent == 0 { Ok(()) } else { Err(format!("{sent} requests sent")) }
                }),
        )
        .run(|env| aggregate(env.config()));
}

#[tokio::test]
async fn run_keeps_the_aggregate_as_tracked_objects_and_the_aggregate_itself_change() {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    let client = server.client();
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    widgets
        .create(&PostParams::default(), &widget("a", 1))
        .await
        .unwrap();
    let running = tokio::spawn(
        aggregate(Config::new(client.clone(), "inventory")).run(watcher::Config::default()),
    );
    let listed = |expected: &'static str| {
        let config_maps = config_maps.clone();
        move || {
            let config_maps = config_maps.clone();
            async move {
                let data = config_maps
                    .get_opt("inventory")
                    .await
                    .ok()
                    .flatten()
                    .and_then(|c| c.data);
                data.and_then(|d| d.get("widgets").cloned()).as_deref() == Some(expected)
            }
        }
    };
    eventually("the inventory is created at start", listed("a")).await;

    widgets
        .create(&PostParams::default(), &widget("b", 1))
        .await
        .unwrap();
    eventually("a new widget (tracked) is listed", listed("a,b")).await;

    config_maps
        .delete("inventory", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the deleted aggregate is created again", listed("a,b")).await;
    running.abort();
}
