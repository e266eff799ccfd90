//! `ChildSetReconciler` under a `ResourceReconciler`, as a table against the in-memory API
//! server: a `Widget` of size n wants ConfigMaps `w-0` … `w-<n-1>`, each labelled with its id,
//! and reflects how many it has in `status.ready` (all of them) and its failures in conditions.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResourceExt;
use recon_core::{
    ChildSetReconciler, ChildSetResult, Error, OnlyReconcileChildStatus, ResourceReconciler,
    UpdatingObjectManager,
};
use recon_test_fixtures::*;
use recon_testing::{DeleteRef, EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests};
use serde_json::{Value, json};

use crate::support::*;

const UID: &str = "0b5e7a4c-0000-4000-8000-000000000002";

fn parent(size: i32, ready: Option<bool>) -> Widget {
    let mut w = widget("w", size);
    w.metadata.namespace = Some("default".to_owned());
    w.metadata.uid = Some(UID.to_owned());
    w.status = ready.map(|ready| WidgetStatus {
        ready: Some(ready),
        conditions: Vec::new(),
    });
    w
}

/// The ConfigMap of id `id`, owned by `w`, holding `value`.
fn member(id: usize, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": format!("w-{id}"), "namespace": "default", "labels": {"id": id.to_string()},
                        "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                                             "uid": UID, "controller": true, "blockOwnerDeletion": true}]},
           "data": {"value": value}})
}

fn desired_members(w: &Widget) -> Result<Vec<ConfigMap>, Error> {
    match w.spec.size {
        s if s < 0 => Err(OnlyReconcileChildStatus.into()),
        // Two children with one id: a bug in the hook, refused.
        99 => Ok(vec![member_of(0), member_of(0)]),
        s => Ok((0..s as usize).map(member_of).collect()),
    }
}

fn member_of(id: usize) -> ConfigMap {
    let mut child = ConfigMap::default();
    child.metadata.name = Some(format!("w-{id}"));
    child.metadata.labels = Some([("id".to_owned(), id.to_string())].into());
    child.data = Some([("value".to_owned(), "v".to_owned())].into());
    child
}

fn reflect(w: &mut Widget, set: &ChildSetResult<ConfigMap>) -> Result<(), Error> {
    // A negative size only reflects: every child there is counts.
    let size = usize::try_from(w.spec.size).unwrap_or(set.children.len());
    let status = w.status.get_or_insert_default();
    status.ready = Some(set.errors().next().is_none() && set.existing().count() == size);
    status.conditions = set
        .children
        .iter()
        .filter_map(|item| {
            let err = item.error.as_ref()?;
            Some(
                json!({"type": format!("Child-{}", item.id), "status": "False",
                        "reason": err.as_api_error().map(|s| s.reason.clone()),
                        "message": err.to_string()}),
            )
        })
        .collect();
    Ok(())
}

fn reconciler() -> ChildSetReconciler<Widget, ConfigMap> {
    ChildSetReconciler::new(
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
            current.metadata.labels = desired.metadata.labels.clone();
        }),
        |_, w| desired_members(w),
        |child| {
            child
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("id"))
                .cloned()
                .unwrap_or_default()
        },
        |_, w, set| reflect(w, set),
    )
}

fn ready_patch(ready: bool) -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"status": {"ready": ready}}),
    )
}

fn created(id: usize) -> EventRef {
    EventRef::normal("Created", &format!("Created ConfigMap \"w-{id}\""))
}

#[test]
fn child_set_reconciler() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "every desired child is created, in id order, and the set reflected once",
            reconcile_w()
                .given(&parent(2, None))
                .expect_create(&member(0, "v"))
                .expect_event(created(0))
                .expect_create(&member(1, "v"))
                .expect_event(created(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "a set in sync sends no write",
            reconcile_w()
                .given(&parent(2, Some(true)))
                .given(&member(0, "v"))
                .given(&member(1, "v")),
        )
        .case(
            "a drifted child is updated and a missing one created",
            reconcile_w()
                .given(&parent(2, Some(true)))
                .given(&member(0, "old"))
                .expect_update(&member(0, "v"))
                .expect_event(EventRef::normal("Updated", "Updated ConfigMap \"w-0\""))
                .expect_create(&member(1, "v"))
                .expect_event(created(1)),
        )
        .case(
            "a child whose id is no longer desired is deleted",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&member(0, "v"))
                .given(&member(1, "v"))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "w-1"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-1\"")),
        )
        .case(
            "desired children with one id are refused before any write",
            reconcile_w()
                .given(&parent(99, Some(true)))
                .expect_error("desired children have the id \"0\" more than once"),
        )
        .case(
            "a forbidden child is reflected while the others are created",
            reconcile_w()
                .given(&parent(2, None))
                .reactor(
                    ReactorSpec::new(
                        "create",
                        "configmaps",
                        FailureSpec::Status {
                            code: 403,
                            reason: "Forbidden".into(),
                            message: "quota exceeded".into(),
                        },
                    )
                    .name("w-0"),
                )
                .expect_create(&member(0, "v"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"w-0\": quota exceeded",
                ))
                .expect_create(&member(1, "v"))
                .expect_event(created(1))
                .expect_status_patch(PatchRef::merge(
                    "Widget",
                    Some("default"),
                    "w",
                    json!({"status": {"ready": false, "conditions": [{"type": "Child-0", "status": "False",
                            "reason": "Forbidden", "message": "quota exceeded"}]}}),
                ))
                .expect_event(status_patched()),
        )
        .case(
            "a failure of another reason is returned, after the other children and the reflection",
            reconcile_w()
                .given(&parent(2, None))
                .reactor(
                    ReactorSpec::new(
                        "create",
                        "configmaps",
                        FailureSpec::Internal("etcd is unavailable".into()),
                    )
                    .name("w-0"),
                )
                .expect_create(&member(0, "v"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"w-0\": Internal error occurred: etcd is unavailable",
                ))
                .expect_create(&member(1, "v"))
                .expect_event(created(1))
                .expect_status_patch(PatchRef::merge(
                    "Widget",
                    Some("default"),
                    "w",
                    json!({"status": {"ready": false, "conditions": [{"type": "Child-0", "status": "False",
                            "reason": "InternalError",
                            "message": "Internal error occurred: etcd is unavailable"}]}}),
                ))
                .expect_event(status_patched())
                .expect_error("etcd is unavailable"),
        )
        .case(
            "only the children's status: nothing is written but the reflection",
            reconcile_w()
                .given(&parent(-1, Some(false)))
                .given(&member(0, "old"))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "a terminating parent's children are all deleted, and nothing is reflected",
            reconcile_w()
                .given(&{
                    let mut w = parent(2, Some(true));
                    w.metadata.finalizers = Some(vec!["example.com/other".to_owned()]);
                    w.metadata.deletion_timestamp = Some(Time("2024-01-01T00:00:00Z".parse().unwrap()));
                    w
                })
                .given(&member(0, "v"))
                .given(&member(1, "v"))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "w-0"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-0\""))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "w-1"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-1\"")),
        )
        .run(|env| ResourceReconciler::new(env.config(), reconciler()));
}
