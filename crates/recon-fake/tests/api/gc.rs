//! The opt-in garbage-collection step (O1–O3): `ApiServer::collect_garbage` runs what
//! kube-controller-manager's garbage collector (`pkg/controller/garbagecollector`:
//! `attemptToDeleteItem`, `classifyReferences`, `processDeletingDependentsItem`,
//! `attemptToOrphanWorker`) and namespace controller (`namespacedResourcesDeleter.Delete`) would
//! do, through ordinary API writes.

use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{
    Api, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy, WatchEvent,
    WatchParams,
};
use kube::{CustomResourceExt, ResourceExt};

use pretty_assertions::assert_eq;
use recon_fake::{
    ApiServer, GarbageCollection, GcAction, ManualClock, ObjectId, Propagation, RequestOrigin,
};
use recon_test_fixtures::*;
use serde_json::{Value, json};

use crate::support::{namespaces, propagation};

const NOW: &str = "2024-05-01T10:00:00Z";

async fn gc_server() -> ApiServer {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .build();
    server.install_crd(&Widget::crd()).await.unwrap();
    server.install_crd(&gizmo_crd()).await.unwrap();
    server
}

fn configmaps(server: &ApiServer, namespace: &str) -> Api<ConfigMap> {
    Api::namespaced(server.client(), namespace)
}

/// An `ownerReferences` entry naming `owner` (a ConfigMap unless it says otherwise).
fn owner_ref(api_version: &str, kind: &str, name: &str, uid: &str, block: bool) -> Value {
    let mut r = json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid});
    if block {
        r["blockOwnerDeletion"] = json!(true);
    }
    r
}

fn owned_by(owner: &ConfigMap) -> Value {
    owner_ref("v1", "ConfigMap", &owner.name_any(), &uid(owner), false)
}

fn blocked_by(owner: &ConfigMap) -> Value {
    owner_ref("v1", "ConfigMap", &owner.name_any(), &uid(owner), true)
}

fn uid(obj: &impl ResourceExt) -> String {
    obj.uid().expect("a stored object has a uid")
}

/// Creates the ConfigMap `name` in `namespace` with these owner references and finalizers.
async fn create_cm(
    server: &ApiServer,
    namespace: &str,
    name: &str,
    owners: Vec<Value>,
    finalizers: &[&str],
) -> ConfigMap {
    let mut metadata = json!({"name": name});
    if !owners.is_empty() {
        metadata["ownerReferences"] = Value::Array(owners);
    }
    if !finalizers.is_empty() {
        metadata["finalizers"] = json!(finalizers);
    }
    configmaps(server, namespace)
        .create(&pp(), &from_json(json!({"metadata": metadata})))
        .await
        .unwrap_or_else(|e| panic!("create {namespace}/{name}: {e}"))
}

async fn delete_cm(server: &ApiServer, name: &str, params: &DeleteParams) {
    configmaps(server, "default")
        .delete(name, params)
        .await
        .unwrap_or_else(|e| panic!("delete {name}: {e}"));
}

async fn get_cm(server: &ApiServer, name: &str) -> Option<ConfigMap> {
    configmaps(server, "default").get_opt(name).await.unwrap()
}

fn names(objects: &[&ObjectId]) -> Vec<String> {
    objects.iter().map(|o| o.name.clone()).collect()
}

/// The actions, reduced to what they did and to which object (by name).
fn summary(report: &GarbageCollection) -> Vec<String> {
    report
        .actions
        .iter()
        .map(|action| match action {
            GcAction::Deleted {
                object,
                propagation,
                removed,
            } => format!(
                "delete {} {} removed={removed}",
                object.name,
                propagation.as_str()
            ),
            GcAction::OwnerReferencesRemoved { object, owners } => {
                format!("unown {} from {}", object.name, owners.len())
            }
            GcAction::OwnerReferencesUnblocked { object } => format!("unblock {}", object.name),
            GcAction::FinalizerRemoved {
                object,
                finalizer,
                removed,
            } => format!("unfinalize {} {finalizer} removed={removed}", object.name),
            GcAction::NamespaceContentDeleted { object, removed } => {
                format!("purge {} {} removed={removed}", object.kind, object.name)
            }
            GcAction::NamespaceStatusUpdated { namespace } => format!("status {}", namespace.name),
            GcAction::NamespaceFinalized { namespace, removed } => {
                format!("finalize {} removed={removed}", namespace.name)
            }
            GcAction::Failed { object, error } => format!("failed {}: {error}", object.name),
            other => format!("{other:?}"),
        })
        .collect()
}

fn owner_uids(cm: &ConfigMap) -> Vec<String> {
    cm.owner_references()
        .iter()
        .map(|r| r.uid.clone())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// O3: opt-in

#[tokio::test]
async fn o3_nothing_is_collected_without_the_step() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(&server, "default", "dependent", vec![owned_by(&owner)], &[]).await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;
    let revision = server.resource_version();

    tokio::time::sleep(Duration::from_millis(20)).await;

    assert!(get_cm(&server, "dependent").await.is_some());
    assert_eq!(server.resource_version(), revision);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.origin != RequestOrigin::Controller)
    );
}

#[tokio::test]
async fn o3_a_step_with_nothing_to_do_writes_nothing() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(&server, "default", "dependent", vec![owned_by(&owner)], &[]).await;
    let revision = server.resource_version();

    let report = server.collect_garbage();

    assert!(report.is_empty(), "{report:?}");
    assert_eq!(server.resource_version(), revision);
}

// ---------------------------------------------------------------------------------------------
// attemptToDeleteItem: dangling owners

#[tokio::test]
async fn o2_a_dependent_whose_owner_is_gone_is_deleted_in_the_background() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    let dependent = create_cm(&server, "default", "dependent", vec![owned_by(&owner)], &[]).await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;

    let report = server.collect_garbage();

    assert_eq!(
        report.actions,
        vec![GcAction::Deleted {
            object: report.removed()[0].clone(),
            propagation: Propagation::Background,
            removed: true,
        }]
    );
    let removed = report.removed()[0];
    assert_eq!(
        (
            removed.api_version.as_str(),
            removed.kind.as_str(),
            removed.namespace.as_deref(),
            removed.name.as_str(),
            removed.uid.clone()
        ),
        (
            "v1",
            "ConfigMap",
            Some("default"),
            "dependent",
            uid(&dependent)
        )
    );
    assert!(get_cm(&server, "dependent").await.is_none());
}

#[tokio::test]
async fn o2_an_owner_of_the_same_name_with_another_uid_is_gone() {
    let server = gc_server().await;
    let old = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(&server, "default", "dependent", vec![owned_by(&old)], &[]).await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;
    let new = create_cm(&server, "default", "owner", vec![], &[]).await;
    assert_ne!(uid(&old), uid(&new));

    let report = server.collect_garbage();

    assert_eq!(names(&report.removed()), ["dependent"]);
    assert!(get_cm(&server, "owner").await.is_some());
}

#[tokio::test]
async fn o2_a_dependent_with_finalizers_is_marked_deleted_and_stays() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(
        &server,
        "default",
        "dependent",
        vec![owned_by(&owner)],
        &["example.com/keep"],
    )
    .await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["delete dependent Background removed=false"]
    );
    let dependent = get_cm(&server, "dependent").await.expect("kept");
    assert_eq!(
        dependent
            .metadata
            .deletion_timestamp
            .map(|t| t.0.to_string())
            .as_deref(),
        Some(NOW)
    );
    assert_eq!(
        dependent.metadata.finalizers,
        Some(vec!["example.com/keep".to_owned()]),
        "a background delete adds no finalizer"
    );
    assert!(
        server.collect_garbage().is_empty(),
        "a terminating object is left alone"
    );
}

#[tokio::test]
async fn o2_a_dependent_with_a_live_owner_stays_and_loses_its_dangling_references() {
    let server = gc_server().await;
    let alive = create_cm(&server, "default", "alive", vec![], &[]).await;
    let gone = create_cm(&server, "default", "gone", vec![], &[]).await;
    create_cm(
        &server,
        "default",
        "dependent",
        vec![owned_by(&gone), owned_by(&alive)],
        &[],
    )
    .await;
    delete_cm(&server, "gone", &DeleteParams::default()).await;

    let report = server.collect_garbage();

    assert_eq!(
        report.actions,
        vec![GcAction::OwnerReferencesRemoved {
            object: match &report.actions[0] {
                GcAction::OwnerReferencesRemoved { object, .. } => object.clone(),
                other => panic!("{other:?}"),
            },
            owners: vec![uid(&gone)],
        }]
    );
    let dependent = get_cm(&server, "dependent").await.expect("kept");
    assert_eq!(owner_uids(&dependent), [uid(&alive)]);
    assert!(dependent.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn o2_a_cross_namespace_owner_reference_is_absent() {
    let server = gc_server().await;
    let owner = create_cm(&server, "team-a", "owner", vec![], &[]).await;
    create_cm(&server, "team-b", "dependent", vec![owned_by(&owner)], &[]).await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["delete dependent Background removed=true"]
    );
    assert!(
        configmaps(&server, "team-a")
            .get_opt("owner")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn o2_a_namespaced_dependent_may_have_a_cluster_scoped_owner() {
    let server = gc_server().await;
    let gizmo = gizmos(&server)
        .create(
            &pp(),
            &from_json(
                json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}),
            ),
        )
        .await
        .unwrap();
    let reference = owner_ref("example.com/v1", "Gizmo", "g", &uid(&gizmo), false);
    create_cm(&server, "default", "dependent", vec![reference], &[]).await;

    assert!(server.collect_garbage().is_empty(), "the owner is alive");
    gizmos(&server)
        .delete("g", &DeleteParams::default())
        .await
        .unwrap();
    let report = server.collect_garbage();

    assert_eq!(names(&report.removed()), ["dependent"]);
}

#[tokio::test]
async fn o2_a_cluster_scoped_dependent_with_a_namespaced_owner_is_never_collected() {
    // `namespacedOwnerOfClusterScopedObjectErr`: the collector gives up on such an object.
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    let gizmo = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                       "metadata": {"name": "g", "ownerReferences": [owned_by(&owner)]}});
    gizmos(&server)
        .create(&pp(), &from_json(gizmo))
        .await
        .unwrap();
    delete_cm(&server, "owner", &DeleteParams::default()).await;

    let report = server.collect_garbage();

    assert!(report.is_empty(), "{report:?}");
    assert!(gizmos(&server).get_opt("g").await.unwrap().is_some());
}

#[tokio::test]
async fn o2_an_owner_of_a_kind_the_server_does_not_serve_cannot_be_resolved() {
    // A REST-mapping error: the real collector retries the object, never deleting it.
    let server = gc_server().await;
    let reference = owner_ref("example.com/v9", "Nope", "n", "0000", false);
    create_cm(&server, "default", "dependent", vec![reference], &[]).await;

    assert!(server.collect_garbage().is_empty());
    assert!(get_cm(&server, "dependent").await.is_some());
}

#[tokio::test]
async fn o2_events_are_not_garbage_collected() {
    // `DefaultIgnoredResources`: core and events.k8s.io Events.
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    server
        .seed(&json!({"apiVersion": "v1", "kind": "Event",
                      "metadata": {"name": "e", "namespace": "default", "ownerReferences": [owned_by(&owner)]},
                      "involvedObject": {"kind": "ConfigMap", "name": "owner", "namespace": "default"}}))
        .unwrap();
    delete_cm(&server, "owner", &DeleteParams::default()).await;

    assert!(server.collect_garbage().is_empty());
    assert!(server.stored("v1", "Event", Some("default"), "e").is_some());
}

#[tokio::test]
async fn o1_a_chain_of_owners_is_collected_in_one_step() {
    let server = gc_server().await;
    let a = create_cm(&server, "default", "a", vec![], &[]).await;
    let b = create_cm(&server, "default", "b", vec![owned_by(&a)], &[]).await;
    let c = create_cm(&server, "default", "c", vec![owned_by(&b)], &[]).await;
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "d", "ownerReferences": [owned_by(&c)]}, "spec": {"size": 1}});
    widgets(&server)
        .create(&pp(), &from_json(widget))
        .await
        .unwrap();
    delete_cm(&server, "a", &DeleteParams::default()).await;

    let report = server.collect_garbage();

    assert_eq!(names(&report.removed()), ["b", "c", "d"]);
    assert!(widgets(&server).get_opt("d").await.unwrap().is_none());
}

// ---------------------------------------------------------------------------------------------
// D7 Foreground: processDeletingDependentsItem

#[tokio::test]
async fn d7_a_foreground_owner_waits_for_the_dependents_that_block_its_deletion() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(
        &server,
        "default",
        "blocking",
        vec![blocked_by(&owner)],
        &["example.com/keep"],
    )
    .await;
    create_cm(
        &server,
        "default",
        "free",
        vec![owned_by(&owner)],
        &["example.com/keep"],
    )
    .await;
    delete_cm(
        &server,
        "owner",
        &propagation(PropagationPolicy::Foreground),
    )
    .await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "delete blocking Background removed=false",
            "delete free Background removed=false",
        ]
    );
    let owner = get_cm(&server, "owner").await.expect("still waiting");
    assert_eq!(
        owner.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );

    configmaps(&server, "default")
        .patch(
            "blocking",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["unfinalize owner foregroundDeletion removed=true"]
    );
    assert!(get_cm(&server, "owner").await.is_none());
    assert!(
        get_cm(&server, "free").await.is_some(),
        "a non-blocking dependent does not hold its owner"
    );
}

#[tokio::test]
async fn d7_a_foreground_chain_is_deleted_from_the_leaves_up() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "a-owner", vec![], &[]).await;
    let child = create_cm(&server, "default", "b-child", vec![blocked_by(&owner)], &[]).await;
    create_cm(
        &server,
        "default",
        "c-grandchild",
        vec![blocked_by(&child)],
        &[],
    )
    .await;
    delete_cm(
        &server,
        "a-owner",
        &propagation(PropagationPolicy::Foreground),
    )
    .await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            // The child has dependents of its own: it is deleted in the foreground too.
            "delete b-child Foreground removed=false",
            "delete c-grandchild Background removed=true",
            "unfinalize b-child foregroundDeletion removed=true",
            "unfinalize a-owner foregroundDeletion removed=true",
        ]
    );
    assert!(
        configmaps(&server, "default")
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn d7_a_dependent_with_another_live_owner_lets_go_of_a_foreground_owner() {
    let server = gc_server().await;
    let alive = create_cm(&server, "default", "owner-alive", vec![], &[]).await;
    let waiting = create_cm(&server, "default", "owner-waiting", vec![], &[]).await;
    create_cm(
        &server,
        "default",
        "dependent",
        vec![owned_by(&alive), blocked_by(&waiting)],
        &[],
    )
    .await;
    delete_cm(
        &server,
        "owner-waiting",
        &propagation(PropagationPolicy::Foreground),
    )
    .await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "unown dependent from 1",
            "unfinalize owner-waiting foregroundDeletion removed=true",
        ]
    );
    let dependent = get_cm(&server, "dependent").await.expect("kept");
    assert_eq!(owner_uids(&dependent), [uid(&alive)]);
}

#[tokio::test]
async fn d7_a_cycle_of_foreground_deletions_is_broken_by_unblocking() {
    let server = gc_server().await;
    let a = create_cm(&server, "default", "a", vec![], &[]).await;
    let b = create_cm(&server, "default", "b", vec![blocked_by(&a)], &[]).await;
    configmaps(&server, "default")
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"ownerReferences": [blocked_by(&b)]}})),
        )
        .await
        .unwrap();
    delete_cm(&server, "a", &propagation(PropagationPolicy::Foreground)).await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "unblock b",
            "delete b Foreground removed=false",
            "unfinalize a foregroundDeletion removed=true",
            "unfinalize b foregroundDeletion removed=true",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// D7 Orphan: attemptToOrphanWorker

#[tokio::test]
async fn d7_an_orphaning_owner_lets_go_of_its_dependents_then_of_its_finalizer() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    let other = create_cm(&server, "default", "other", vec![], &[]).await;
    create_cm(
        &server,
        "default",
        "dependent",
        vec![owned_by(&owner), owned_by(&other)],
        &[],
    )
    .await;
    delete_cm(&server, "owner", &propagation(PropagationPolicy::Orphan)).await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "unown dependent from 1",
            "unfinalize owner orphan removed=true"
        ]
    );
    let dependent = get_cm(&server, "dependent").await.expect("orphaned, kept");
    assert_eq!(owner_uids(&dependent), [uid(&other)]);
}

#[tokio::test]
async fn d7_a_job_deleted_without_options_orphans_its_pods() {
    // batch/v1 Job's default policy is OrphanDependents.
    let server = gc_server().await;
    let jobs: Api<Job> = Api::namespaced(server.client(), "default");
    let job = jobs
        .create(
            &pp(),
            &from_json(json!({"metadata": {"name": "j"}, "spec": {"template": {
                "metadata": {"labels": {"app": "j"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    pods.create(
        &pp(),
        &from_json(json!({"metadata": {"name": "j-1",
            "ownerReferences": [owner_ref("batch/v1", "Job", "j", &uid(&job), true)]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})),
    )
    .await
    .unwrap();
    jobs.delete("j", &DeleteParams::default()).await.unwrap();

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["unown j-1 from 1", "unfinalize j orphan removed=true"]
    );
    let pod = pods.get("j-1").await.expect("orphaned, kept");
    assert!(pod.metadata.owner_references.is_none());
}

// ---------------------------------------------------------------------------------------------
// The namespace controller

fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": NOW})
}

#[tokio::test]
async fn a_terminating_namespace_is_emptied_then_finalized_and_deleted() {
    let server = gc_server().await;
    namespaces(&server)
        .create(&pp(), &from_json(json!({"metadata": {"name": "team"}})))
        .await
        .unwrap();
    create_cm(&server, "team", "plain", vec![], &[]).await;
    let wanted = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}});
    Api::<Widget>::namespaced(server.client(), "team")
        .create(&pp(), &from_json(wanted))
        .await
        .unwrap();
    namespaces(&server)
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "purge ConfigMap plain removed=true",
            "purge Widget w removed=true",
            "status team",
            "finalize team removed=true",
        ]
    );
    assert!(namespaces(&server).get_opt("team").await.unwrap().is_none());
}

#[tokio::test]
async fn content_with_finalizers_holds_the_namespace_and_its_conditions_say_so() {
    let server = gc_server().await;
    namespaces(&server)
        .create(&pp(), &from_json(json!({"metadata": {"name": "team"}})))
        .await
        .unwrap();
    create_cm(&server, "team", "kept", vec![], &["example.com/keep"]).await;
    create_cm(&server, "team", "plain", vec![], &[]).await;
    namespaces(&server)
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [
            "purge ConfigMap kept removed=false",
            "purge ConfigMap plain removed=true",
            "status team",
        ]
    );
    let ns = namespaces(&server).get("team").await.unwrap();
    let status = serde_json::to_value(ns.status.unwrap()).unwrap();
    assert_eq!(
        status,
        json!({"phase": "Terminating", "conditions": [
            condition("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
            condition("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
            condition("NamespaceDeletionContentFailure", "False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
            condition("NamespaceContentRemaining", "True", "SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances"),
            condition("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances"),
        ]})
    );
    assert!(server.collect_garbage().is_empty(), "nothing new to say");

    configmaps(&server, "team")
        .patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["status team", "finalize team removed=true"]
    );
}

#[tokio::test]
async fn a_namespace_with_a_finalizer_of_its_own_is_finalized_but_stays() {
    let server = gc_server().await;
    namespaces(&server)
        .create(
            &pp(),
            &from_json(json!({"metadata": {"name": "team", "finalizers": ["example.com/ns"]}})),
        )
        .await
        .unwrap();
    namespaces(&server)
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["status team", "finalize team removed=false"]
    );
    let ns = namespaces(&server).get("team").await.unwrap();
    assert_eq!(ns.spec.and_then(|s| s.finalizers), None);
    assert!(
        server.collect_garbage().is_empty(),
        "a finalized namespace is done"
    );
}

#[tokio::test]
async fn a_namespace_controller_and_strict_namespaces_together() {
    let server = ApiServer::builder().strict_namespaces(true).build();
    namespaces(&server)
        .create(&pp(), &from_json(json!({"metadata": {"name": "team"}})))
        .await
        .unwrap();
    create_cm(&server, "team", "kept", vec![], &["example.com/keep"]).await;
    namespaces(&server)
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    server.collect_garbage();

    let refused = status(
        configmaps(&server, "team")
            .create(&pp(), &from_json(json!({"metadata": {"name": "late"}})))
            .await,
    );
    assert_eq!(refused.code, 403);

    configmaps(&server, "team")
        .patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    server.collect_garbage();

    let refused = status(
        configmaps(&server, "team")
            .create(&pp(), &from_json(json!({"metadata": {"name": "late"}})))
            .await,
    );
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (404, r#"namespaces "team" not found"#)
    );
}

// ---------------------------------------------------------------------------------------------
// Writes are ordinary API writes

type Events =
    std::pin::Pin<Box<dyn Stream<Item = Result<WatchEvent<ConfigMap>, kube::Error>> + Send>>;

async fn next(events: &mut Events) -> (String, String, u64) {
    let event = tokio::time::timeout(Duration::from_secs(1), events.next())
        .await
        .expect("an event within a second")
        .expect("the stream is open")
        .expect("the event decodes");
    let describe = |kind: &str, cm: ConfigMap| (kind.to_owned(), cm.name_any(), rv(&cm.metadata));
    match event {
        WatchEvent::Modified(cm) => describe("MODIFIED", cm),
        WatchEvent::Deleted(cm) => describe("DELETED", cm),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn collected_objects_reach_watchers_as_ordinary_events() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    create_cm(&server, "default", "d1", vec![owned_by(&owner)], &[]).await;
    create_cm(
        &server,
        "default",
        "d2",
        vec![owned_by(&owner)],
        &["example.com/keep"],
    )
    .await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;
    let before = server.resource_version();
    let mut events: Events = configmaps(&server, "default")
        .watch(&WatchParams::default(), &before.to_string())
        .await
        .unwrap()
        .boxed();

    server.collect_garbage();

    assert_eq!(
        next(&mut events).await,
        ("DELETED".to_owned(), "d1".to_owned(), before + 1)
    );
    assert_eq!(
        next(&mut events).await,
        ("MODIFIED".to_owned(), "d2".to_owned(), before + 2)
    );
    assert_eq!(server.resource_version(), before + 2);
}

#[tokio::test]
async fn controller_writes_are_logged_as_the_requests_a_controller_sends() {
    let server = gc_server().await;
    let owner = create_cm(&server, "default", "owner", vec![], &[]).await;
    let dependent = create_cm(&server, "default", "dependent", vec![owned_by(&owner)], &[]).await;
    delete_cm(&server, "owner", &DeleteParams::default()).await;
    server.clear_requests();

    server.collect_garbage();

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let delete = &requests[0];
    assert_eq!(
        (
            delete.origin,
            delete.method.as_str(),
            delete.path.as_str(),
            delete.status
        ),
        (
            RequestOrigin::Controller,
            "DELETE",
            "/api/v1/namespaces/default/configmaps/dependent",
            200
        )
    );
    assert_eq!(
        delete.body_json(),
        Some(json!({"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": uid(&dependent)}, "propagationPolicy": "Background"}))
    );
}

#[tokio::test]
async fn a_garbage_collector_patch_is_recorded_in_managed_fields_under_its_manager() {
    // Unblocking changes a field: kube-controller-manager (its User-Agent's first segment)
    // becomes a manager of the object.
    let server = gc_server().await;
    let a = create_cm(&server, "default", "a", vec![], &[]).await;
    let b = create_cm(
        &server,
        "default",
        "b",
        vec![blocked_by(&a)],
        &["example.com/keep"],
    )
    .await;
    configmaps(&server, "default")
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"ownerReferences": [blocked_by(&b)]}})),
        )
        .await
        .unwrap();
    delete_cm(&server, "a", &propagation(PropagationPolicy::Foreground)).await;

    server.collect_garbage();

    let b = get_cm(&server, "b").await.expect("kept by its finalizer");
    let managers: Vec<String> = b
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"kube-controller-manager".to_owned()),
        "{managers:?}"
    );
    let dynamic: Api<DynamicObject> = Api::default_namespaced_with(
        server.client(),
        &kube::api::ApiResource::erase::<ConfigMap>(&()),
    );
    let stored = dynamic.get("b").await.unwrap();
    assert_eq!(
        stored.metadata.owner_references.unwrap()[0].block_owner_deletion,
        Some(false)
    );
}

// ---------------------------------------------------------------------------------------------
// With strict namespaces (C11): a namespace finalized by hand leaves its content behind

/// Deletes `name` and finalizes it at once through `/finalize`, as `kubectl replace --raw
/// .../finalize` does: the namespace goes, whatever it still holds stays.
async fn force_remove_namespace(server: &ApiServer, name: &str) {
    namespaces(server)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
    let mut ns = namespaces(server).get(name).await.unwrap();
    ns.spec = None;
    namespaces(server)
        .replace_subresource("finalize", name, &pp(), &ns)
        .await
        .unwrap();
    assert!(namespaces(server).get_opt(name).await.unwrap().is_none());
}

async fn strict_gc_server() -> ApiServer {
    let server = ApiServer::builder().strict_namespaces(true).build();
    server.install_crd(&gizmo_crd()).await.unwrap();
    namespaces(&server)
        .create(&pp(), &from_json(json!({"metadata": {"name": "gone"}})))
        .await
        .unwrap();
    server
}

#[tokio::test]
async fn c11_deletes_are_not_admitted_so_leftovers_of_a_vanished_namespace_are_collected() {
    let server = strict_gc_server().await;
    let owner = create_cm(&server, "gone", "owner", vec![], &[]).await;
    create_cm(&server, "gone", "dependent", vec![owned_by(&owner)], &[]).await;
    configmaps(&server, "gone")
        .delete("owner", &DeleteParams::default())
        .await
        .unwrap();
    force_remove_namespace(&server, "gone").await;

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        ["delete dependent Background removed=true"]
    );
}

#[tokio::test]
async fn c11_a_patch_refused_because_the_namespace_is_gone_is_reported_as_a_failure() {
    // The update is admitted and refused with the namespace's NotFound, which the real
    // collector retries forever.
    let server = strict_gc_server().await;
    let gizmo = gizmos(&server)
        .create(
            &pp(),
            &from_json(
                json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}),
            ),
        )
        .await
        .unwrap();
    let dangling = create_cm(&server, "gone", "owner", vec![], &[]).await;
    let alive = owner_ref("example.com/v1", "Gizmo", "g", &uid(&gizmo), false);
    create_cm(
        &server,
        "gone",
        "dependent",
        vec![alive, owned_by(&dangling)],
        &[],
    )
    .await;
    configmaps(&server, "gone")
        .delete("owner", &DeleteParams::default())
        .await
        .unwrap();
    force_remove_namespace(&server, "gone").await;
    let revision = server.resource_version();

    let report = server.collect_garbage();

    assert_eq!(
        summary(&report),
        [r#"failed dependent: 404 (NotFound): namespaces "gone" not found"#]
    );
    assert_eq!(report.failures().len(), 1);
    assert_eq!(server.resource_version(), revision);
}
