//! `ChildSetReconciler::with_known_children`: the desired-children hook sees the children the
//! reconcile listed (reconciler.io's `RetrieveKnownChildren`).
//!
//! Ported from reconciler.io runtime's `reconcilers/childset_test.go`: `preserve existing
//! children` and `garbage collect all but oldest child`. As there, ConfigMap children are told
//! apart by the annotation [`ID_KEY`] (`blue`, `green`) and reflected on the parent's status as
//! `<id>.<key>` fields and a ready flag; green is an hour older than blue. Adapted: the
//! children are written by an `UpdatingObjectManager` to the in-memory API server (the Go
//! tests stub the manager), so "no writes" and "one delete" are read from the server's request
//! log; the parent carries a uid so that it can control its children.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::Api;
use kube::{CustomResource, Resource};
use recon_core::{
    ChildSetReconciler, ChildSetResult, Config, Context, Error, EventLog, Request, SubReconciler,
    UpdatingObjectManager,
};
use recon_fake::{ApiServer, RequestOrigin, Verb};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const NAMESPACE: &str = "test-namespace";
const NAME: &str = "test-resource";
const UID: &str = "9b2f6d0e-4c1a-4e1b-9f7e-1f0c2d3b4a5c";
/// The annotation holding a child's id.
const ID_KEY: &str = "testing.reconciler.runtime/child-id";
const NOW: &str = "2024-01-01T00:00:00Z";
const AN_HOUR_AGO: &str = "2023-12-31T23:00:00Z";

/// The parent: the Go tests' `TestResource`, reduced to what the child set reflects.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResource",
    namespaced,
    status = "TestResourceStatus",
    derive = "PartialEq"
)]
pub struct TestResourceSpec {}

/// What the child set reflects: every child's data as `<id>.<key>`, and whether it is ready.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct TestResourceStatus {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

/// The parent, ready, reflecting the children with these ids (each `foo: bar`).
fn resource(ids: &[&str]) -> TestResource {
    let mut r = TestResource::new(NAME, TestResourceSpec {});
    r.metadata.namespace = Some(NAMESPACE.to_owned());
    r.metadata.uid = Some(UID.to_owned());
    r.status = Some(TestResourceStatus {
        fields: ids
            .iter()
            .map(|id| (format!("{id}.foo"), "bar".to_owned()))
            .collect(),
        ready: Some(true),
    });
    r
}

fn controlled_by(uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: "testing.reconciler.runtime/v1".to_owned(),
        kind: "TestResource".to_owned(),
        name: NAME.to_owned(),
        uid: uid.to_owned(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A stored child `test-resource-<id>` holding `foo: bar`, created at `created`, controlled
/// by `owner` (a uid) if any.
fn given(id: &str, created: &str, owner: Option<&str>) -> serde_json::Value {
    let mut cm = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("{NAME}-{id}"),
            "namespace": NAMESPACE,
            "annotations": { ID_KEY: id },
            "creationTimestamp": created,
        },
        "data": { "foo": "bar" },
    });
    if let Some(uid) = owner {
        cm["metadata"]["ownerReferences"] = json!([controlled_by(uid)]);
    }
    cm
}

fn blue() -> serde_json::Value {
    given("blue", NOW, Some(UID))
}

/// Older than blue.
fn green() -> serde_json::Value {
    given("green", AN_HOUR_AGO, Some(UID))
}

fn identify(child: &ConfigMap) -> String {
    child
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ID_KEY))
        .cloned()
        .unwrap_or_default()
}

/// The Go tests' default `ReflectChildrenStatusOnParent`, without failures to reflect.
fn reflect(
    _: &Context,
    parent: &mut TestResource,
    set: &ChildSetResult<ConfigMap>,
) -> Result<(), Error> {
    let status = parent.status.get_or_insert_default();
    status.fields.clear();
    for item in &set.children {
        for (k, v) in item.child.iter().flat_map(|c| c.data.iter().flatten()) {
            status.fields.insert(format!("{}.{k}", item.id), v.clone());
        }
    }
    status.ready = Some(set.errors().next().is_none());
    Ok(())
}

fn reconciler(
    desired: impl Fn(&Context, &TestResource, &[ConfigMap]) -> Result<Vec<ConfigMap>, Error>
    + Send
    + Sync
    + 'static,
) -> ChildSetReconciler<TestResource, ConfigMap> {
    ChildSetReconciler::with_known_children(
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
        }),
        desired,
        identify,
        reflect,
    )
}

fn server(given: &[serde_json::Value]) -> ApiServer {
    let server = ApiServer::new();
    for object in given {
        server.seed(object).unwrap();
    }
    server
}

/// Runs `reconciler` once on `parent`, as the Go `SubReconcilerTests` do.
async fn reconcile(
    server: &ApiServer,
    reconciler: &ChildSetReconciler<TestResource, ConfigMap>,
    parent: &mut TestResource,
) -> Result<(), Error> {
    let config = Config::new(server.client(), "test").with_recorder(EventLog::default());
    let ctx = Context::new(config, Request::namespaced(NAMESPACE, NAME));
    reconciler.reconcile(&ctx, parent).await.map(|_| ())
}

/// The reconciler's writes of ConfigMaps, as `(verb, name)`.
fn writes(server: &ApiServer) -> Vec<(Verb, String)> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.origin == RequestOrigin::Client && r.resource == "configmaps")
        .filter(|r| !matches!(r.verb, Verb::Get | Verb::List | Verb::Watch))
        .map(|r| (r.verb, r.name.unwrap_or_default()))
        .collect()
}

async fn stored_names(server: &ApiServer) -> Vec<String> {
    Api::<ConfigMap>::namespaced(server.client(), NAMESPACE)
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|cm| cm.metadata.name)
        .collect()
}

#[tokio::test]
async fn preserve_existing_children() {
    let server = server(&[blue(), green()]);
    let reconciler = reconciler(|_, _, known| Ok(known.to_vec()));
    let mut parent = resource(&["blue", "green"]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(
        parent,
        resource(&["blue", "green"]),
        "nothing to reflect anew"
    );
    assert_eq!(
        writes(&server),
        [],
        "known children returned as they are are in sync"
    );
    assert_eq!(
        stored_names(&server).await,
        ["test-resource-blue", "test-resource-green"]
    );
}

#[tokio::test]
async fn garbage_collect_all_but_oldest_child() {
    let server = server(&[blue(), green()]);
    let reconciler = reconciler(|_, _, known| {
        let mut children = known.to_vec();
        children.sort_by_key(|c| c.metadata.creation_timestamp.as_ref().map(|t| t.0));
        children.truncate(1);
        Ok(children)
    });
    let mut parent = resource(&["blue", "green"]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(parent, resource(&["green"]));
    assert_eq!(
        writes(&server),
        [(Verb::Delete, "test-resource-blue".to_owned())]
    );
    assert_eq!(stored_names(&server).await, ["test-resource-green"]);
}

#[tokio::test]
async fn known_children_are_empty_when_there_are_none() {
    let server = server(&[]);
    let reconciler = reconciler(|_, _, known| {
        assert!(known.is_empty(), "known: {known:?}");
        Ok(Vec::new())
    });
    let mut parent = resource(&[]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(parent, resource(&[]));
    assert_eq!(writes(&server), []);
}

#[tokio::test]
async fn known_children_leave_out_objects_the_parent_does_not_control() {
    let other = "00000000-0000-4000-8000-00000000000f";
    let server = server(&[
        blue(),
        // Same id annotation, but no owner, or another controller: not children.
        given("red", NOW, None),
        given("green", AN_HOUR_AGO, Some(other)),
    ]);
    let reconciler = reconciler(|_, _, known| {
        let names: Vec<_> = known
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        assert_eq!(names, ["test-resource-blue"]);
        Ok(known.to_vec())
    });
    let mut parent = resource(&["blue"]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(parent, resource(&["blue"]));
    assert_eq!(
        writes(&server),
        [],
        "foreign objects are neither known nor deleted"
    );
}

#[tokio::test]
async fn known_children_leave_out_what_our_child_refuses() {
    let server = server(&[blue(), green()]);
    let reconciler = reconciler(|_, _, known| {
        let ids: Vec<_> = known.iter().map(identify).collect();
        assert_eq!(ids, ["blue"]);
        Ok(known.to_vec())
    })
    .our_child(|_, child| identify(child) != "green");
    let mut parent = resource(&["blue", "green"]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(parent, resource(&["blue"]));
    assert_eq!(
        writes(&server),
        [],
        "a refused object is not the set's to delete"
    );
}

/// The stamper reconciler.io's documentation describes: keep every known child, add one.
#[tokio::test]
async fn a_stamper_keeps_known_children_and_creates_a_new_one() {
    let server = server(&[blue()]);
    let reconciler = reconciler(|_, parent, known| {
        let mut children = known.to_vec();
        let mut red = ConfigMap::default();
        red.metadata.name = Some(format!(
            "{}-red",
            parent.meta().name.as_deref().unwrap_or_default()
        ));
        red.metadata.annotations = Some([(ID_KEY.to_owned(), "red".to_owned())].into());
        red.data = Some([("foo".to_owned(), "bar".to_owned())].into());
        children.push(red);
        Ok(children)
    });
    let mut parent = resource(&["blue"]);

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(parent, resource(&["blue", "red"]));
    assert_eq!(
        writes(&server),
        [(Verb::Create, String::new())],
        "a create names its collection, not the object"
    );
    assert_eq!(
        stored_names(&server).await,
        ["test-resource-blue", "test-resource-red"]
    );
}

/// While the parent is being deleted, nothing is desired: the hook is not asked.
#[tokio::test]
async fn the_hook_is_not_asked_while_the_parent_is_being_deleted() {
    let server = server(&[blue()]);
    let reconciler = reconciler(|_, _, _| panic!("asked while the parent is being deleted"));
    let mut parent = resource(&["blue"]);
    parent.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(NOW.parse().unwrap()),
    );

    reconcile(&server, &reconciler, &mut parent).await.unwrap();

    assert_eq!(
        writes(&server),
        [(Verb::Delete, "test-resource-blue".to_owned())]
    );
}
