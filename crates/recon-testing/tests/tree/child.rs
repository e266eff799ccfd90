//! `ChildReconciler` with an `UpdatingObjectManager` under a `ResourceReconciler`, as tables
//! against the in-memory API server: a `Widget` wants a ConfigMap `w-child` holding its size,
//! and reflects whether it has one in `status.ready` (and a failure in a condition).

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::CustomResourceExt;
use kube::api::{DynamicObject, ListParams};
use recon_core::{
    ChildListOptions, ChildReconciler, Error, OnlyReconcileChildStatus, Reference, Request,
    ResourceReconciler, Setup, SubReconciler, Trigger, UpdatingObjectManager,
};
use recon_fake::RequestOrigin;
use recon_test_fixtures::*;
use recon_testing::{
    DeleteRef, EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests, SubReconcilerTests,
    TestCase, TestEnv,
};
use serde_json::{Value, json};

use crate::support::*;

const UID: &str = "0b5e7a4c-0000-4000-8000-000000000001";
const FINALIZER: &str = "example.com/child";

/// The parent: widget `w` of `size`, already reflecting a child (`status.ready`).
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

/// The ready parent of `size`, deleted while these finalizers keep it.
fn terminating_parent(size: i32, finalizers: &[&str]) -> Widget {
    terminating_with(parent(size, Some(true)), finalizers)
}

fn owner_reference() -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": UID,
           "controller": true, "blockOwnerDeletion": true})
}

/// A ConfigMap `name` owned by `w` holding `size`.
fn owned(name: &str, size: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "ownerReferences": [owner_reference()]},
           "data": {"size": size}})
}

/// A ConfigMap `name` nobody owns.
fn foreign(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default"}, "data": {"size": "9"}})
}

fn desired(w: &Widget) -> ConfigMap {
    let mut child = ConfigMap::default();
    child.metadata.name = Some("w-child".to_owned());
    child.data = Some([("size".to_owned(), w.spec.size.to_string())].into());
    child
}

fn manager() -> UpdatingObjectManager<ConfigMap> {
    UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
        current.data = desired.data.clone();
    })
}

/// Sets `status.ready` from the child, or a `Ready: False` condition naming the failure.
fn reflect(w: &mut Widget, child: Result<Option<&ConfigMap>, Error>) -> Result<(), Error> {
    let status = w.status.get_or_insert_default();
    match child {
        Ok(child) => {
            status.ready = Some(child.is_some());
            status.conditions.clear();
        }
        Err(err) => {
            let reason = err.as_api_error().map(|s| s.reason.clone());
            status.ready = Some(false);
            status.conditions = vec![json!({"type": "Ready", "status": "False",
                                            "reason": reason, "message": err.to_string()})];
        }
    }
    Ok(())
}

/// The child reconciler under test: a size of 0 wants no child; a negative size only
/// reflects the child.
fn child_reconciler(
    manager: UpdatingObjectManager<ConfigMap>,
) -> ChildReconciler<Widget, ConfigMap> {
    ChildReconciler::new(
        manager,
        |_, w: &Widget| match w.spec.size {
            0 => Ok(None),
            s if s < 0 => Err(OnlyReconcileChildStatus.into()),
            _ => Ok(Some(desired(w))),
        },
        |_, w, child| reflect(w, child),
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

fn delete_of(name: &str) -> DeleteRef {
    DeleteRef::new("ConfigMap", Some("default"), name)
}

fn stored_child(env: &TestEnv, name: &str) -> Result<Option<ConfigMap>, String> {
    env.server()
        .stored_as::<ConfigMap>(Some("default"), name)
        .map_err(|e| e.to_string())
}

const GET_W: &str = "GET /apis/example.com/v1/namespaces/default/widgets/w -> 200";
const LIST_CHILDREN: &str = "GET /api/v1/namespaces/default/configmaps -> 200";

#[test]
fn child_reconciler_with_an_updating_manager() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a missing child is created with a controller reference, and reflected",
            reconcile_w()
                .given(&parent(1, None))
                .expect_create(&owned("w-child", "1"))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"w-child\""))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "a child in sync sends no write at all",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "1"))
                .verify(|env, _| {
                    let sent = sent(env);
                    if sent == [GET_W, LIST_CHILDREN] {
                        Ok(())
                    } else {
                        Err(format!("sent {sent:#?}"))
                    }
                }),
        )
        .case(
            "a drifted child is updated (PUT with the resourceVersion read)",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "7"))
                .expect_update(&owned("w-child", "1"))
                .expect_event(EventRef::normal("Updated", "Updated ConfigMap \"w-child\""))
                .verify(|env, _| {
                    let child = stored_child(env, "w-child")?.ok_or("the child is gone")?;
                    match child.data.as_ref().and_then(|d| d.get("size")) {
                        Some(size) if size == "1" => Ok(()),
                        other => Err(format!("stored size {other:?}")),
                    }
                }),
        )
        .case(
            "a child no longer desired is deleted",
            reconcile_w()
                .given(&parent(0, Some(true)))
                .given(&owned("w-child", "1"))
                .expect_delete(delete_of("w-child"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-child\""))
                .expect_status_patch(ready_patch(false))
                .expect_event(status_patched()),
        )
        .case(
            "of two children the extra one is deleted, the one with the desired name kept",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "1"))
                .given(&owned("w-extra", "1"))
                .expect_delete(delete_of("w-extra"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-extra\"")),
        )
        .case(
            "objects the widget does not control are not its children",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "1"))
                .given(&foreign("unrelated"))
                .verify(|env, _| match stored_child(env, "unrelated")? {
                    Some(_) => Ok(()),
                    None => Err("the foreign ConfigMap was deleted".to_owned()),
                }),
        )
        .case(
            "a foreign object in the way is tracked and reflected, not fought over",
            reconcile_w()
                .given(&parent(1, None))
                .given(&foreign("w-child"))
                .expect_create(&owned("w-child", "1"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"w-child\": configmaps \"w-child\" already exists",
                ))
                .expect_track(
                    Request::namespaced("default", "w"),
                    Reference::of::<ConfigMap>(Some("default"), "w-child"),
                )
                .expect_status_patch(PatchRef::merge(
                    "Widget",
                    Some("default"),
                    "w",
                    json!({"status": {"ready": false, "conditions": [{
                        "type": "Ready", "status": "False", "reason": "AlreadyExists",
                        "message": "configmaps \"w-child\" already exists"}]}}),
                ))
                .expect_event(status_patched())
                .verify(|env, _| {
                    let kept = stored_child(env, "w-child")?.ok_or("the foreign object is gone")?;
                    if kept.metadata.owner_references.is_none() {
                        Ok(())
                    } else {
                        Err("the foreign object was adopted".to_owned())
                    }
                }),
        )
        .case(
            "an AlreadyExists for a child of its own (not listed yet) is returned, to retry",
            reconcile_w()
                .given(&parent(1, None))
                .api_given(&parent(1, None))
                .api_given(&owned("w-child", "1"))
                .reactor(ReactorSpec::new("create", "configmaps", FailureSpec::AlreadyExists))
                .expect_create(&owned("w-child", "1"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"w-child\": configmaps \"w-child\" already exists",
                ))
                .expect_error("already exists"),
        )
        .case(
            "a forbidden create is reflected on the parent",
            reconcile_w()
                .given(&parent(1, None))
                .reactor(ReactorSpec::new(
                    "create",
                    "configmaps",
                    FailureSpec::Status {
                        code: 403,
                        reason: "Forbidden".into(),
                        message: "quota exceeded".into(),
                    },
                ))
                .expect_create(&owned("w-child", "1"))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create ConfigMap \"w-child\": quota exceeded",
                ))
                .expect_status_patch(PatchRef::merge(
                    "Widget",
                    Some("default"),
                    "w",
                    json!({"status": {"ready": false, "conditions": [{
                        "type": "Ready", "status": "False", "reason": "Forbidden",
                        "message": "quota exceeded"}]}}),
                ))
                .expect_event(status_patched()),
        )
        .case(
            "a failed list is returned and nothing is written",
            reconcile_w()
                .given(&parent(1, None))
                .reactor(ReactorSpec::new(
                    "list",
                    "configmaps",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_error("etcd is unavailable"),
        )
        .case(
            "a failed update is returned with an UpdateFailed event",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "7"))
                .reactor(ReactorSpec::new(
                    "update",
                    "configmaps",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_update(&owned("w-child", "1"))
                .expect_event(EventRef::warning(
                    "UpdateFailed",
                    "Failed to update ConfigMap \"w-child\": Internal error occurred: etcd is unavailable",
                ))
                .expect_error("etcd is unavailable"),
        )
        .case(
            "a 409 on the update (a concurrent write) is returned",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&owned("w-child", "7"))
                .reactor(ReactorSpec::new("update", "configmaps", FailureSpec::Conflict))
                .expect_update(&owned("w-child", "1"))
                .expect_event(EventRef::warning(
                    "UpdateFailed",
                    "Failed to update ConfigMap \"w-child\": Operation cannot be fulfilled on configmaps \"w-child\": the object has been modified; please apply your changes to the latest version and try again",
                ))
                .expect_error("the object has been modified"),
        )
        .case(
            "only the child's status: a drifted child is left alone and reflected",
            reconcile_w()
                .given(&parent(-1, None))
                .given(&owned("w-child", "7"))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "a terminating parent's child is deleted, and nothing is reflected",
            reconcile_w()
                .given(&terminating_parent(1, &["example.com/other"]))
                .given(&owned("w-child", "1"))
                .expect_delete(delete_of("w-child"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-child\"")),
        )
        .run(|env| ResourceReconciler::new(env.config(), child_reconciler(manager())));
}

/// The finalizer mode: no owner reference; children carry an `owner` label, and a finalizer on
/// the widget keeps it until its child is deleted.
fn labelled_child_reconciler() -> ChildReconciler<Widget, ConfigMap> {
    ChildReconciler::new(
        manager().finalizer(FINALIZER),
        |_, w: &Widget| {
            let mut child = desired(w);
            child.metadata.namespace = Some("default".to_owned());
            child.metadata.labels = Some([("owner".to_owned(), "w".to_owned())].into());
            Ok((w.spec.size > 0).then_some(child))
        },
        |_, w, child| reflect(w, child),
    )
    .without_owner_reference(
        |w, child| {
            child.metadata.labels.as_ref().and_then(|l| l.get("owner")) == w.metadata.name.as_ref()
        },
        |_, w| {
            let selector = format!("owner={}", w.metadata.name.as_deref().unwrap_or_default());
            ChildListOptions::in_namespace("default")
                .params(ListParams::default().labels(&selector))
        },
    )
}

fn labelled(size: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "w-child", "namespace": "default", "labels": {"owner": "w"}},
           "data": {"size": size}})
}

fn finalizer_patch(finalizers: Value) -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"metadata": {"finalizers": finalizers}}),
    )
}

#[test]
fn child_reconciler_with_a_finalizer_instead_of_an_owner_reference() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the finalizer is added before the child is created, without an owner reference",
            reconcile_w()
                .given(&parent(1, None))
                .expect_patch(finalizer_patch(json!([FINALIZER])))
                .expect_event(finalizer_patched(FINALIZER))
                .expect_create(&labelled("1"))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"w-child\""))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched())
                .verify(|env, _| {
                    let sent = sent(env);
                    let order = [
                        GET_W,
                        "GET /api/v1/namespaces/default/configmaps?labelSelector=owner%3Dw -> 200",
                        "PATCH /apis/example.com/v1/namespaces/default/widgets/w -> 200",
                        "POST /api/v1/namespaces/default/configmaps -> 201",
                        "PATCH /apis/example.com/v1/namespaces/default/widgets/w/status -> 200",
                    ];
                    if sent == order { Ok(()) } else { Err(format!("sent {sent:#?}")) }
                }),
        )
        .case(
            "a child in sync under the finalizer sends no write",
            reconcile_w()
                .given(&with_finalizer(FINALIZER, parent(1, Some(true))))
                .given(&labelled("1"))
                .given(&foreign("other")),
        )
        .case(
            "deleting the parent deletes the child, then clears the finalizer, and the parent is gone",
            reconcile_w()
                .given(&terminating_parent(1, &[FINALIZER]))
                .given(&labelled("1"))
                .expect_delete(delete_of("w-child"))
                .expect_event(EventRef::normal("Deleted", "Deleted ConfigMap \"w-child\""))
                .expect_patch(finalizer_patch(Value::Null))
                .expect_event(finalizer_patched(FINALIZER))
                .verify(|env, _| {
                    let widget = env
                        .server()
                        .stored_as::<Widget>(Some("default"), "w")
                        .map_err(|e| e.to_string())?;
                    match (widget, stored_child(env, "w-child")?) {
                        (None, None) => Ok(()),
                        left => Err(format!("still stored: {left:?}")),
                    }
                }),
        )
        .case(
            "a parent deleted after its child is gone just loses the finalizer",
            reconcile_w()
                .given(&terminating_parent(1, &[FINALIZER]))
                .expect_patch(finalizer_patch(Value::Null))
                .expect_event(finalizer_patched(FINALIZER)),
        )
        .case(
            "a failed delete keeps the finalizer",
            reconcile_w()
                .given(&terminating_parent(1, &[FINALIZER]))
                .given(&labelled("1"))
                .reactor(ReactorSpec::new(
                    "delete",
                    "configmaps",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_delete(delete_of("w-child"))
                .expect_event(EventRef::warning(
                    "DeleteFailed",
                    "Failed to delete ConfigMap \"w-child\": Internal error occurred: etcd is unavailable",
                ))
                .expect_error("etcd is unavailable"),
        )
        .run(|env| ResourceReconciler::new(env.config(), labelled_child_reconciler()));
}

#[test]
fn a_desired_child_in_another_namespace_cannot_be_owned() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the owner reference is refused before any write",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .expect_error("cross-namespace owner references are disallowed"),
        )
        .run(|env| {
            let elsewhere = ChildReconciler::new(
                manager(),
                |_, w: &Widget| {
                    let mut child = desired(w);
                    child.metadata.namespace = Some("elsewhere".to_owned());
                    Ok(Some(child))
                },
                |_, w, child| reflect(w, child),
            );
            ResourceReconciler::new(env.config(), elsewhere)
        });
}

/// reconciler.io adds the controller reference only to a desired child naming no controller
/// (child.go: `GetControllerOfNoCopy(desired) == nil`).
#[test]
fn a_desired_child_naming_its_controller_keeps_that_reference() {
    let own_reference = json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                               "uid": UID, "controller": true, "blockOwnerDeletion": false});
    let other_controller = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d",
                                  "uid": "0b5e7a4c-0000-4000-8000-00000000000d",
                                  "controller": true});
    let child_with = |reference: &Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "w-child", "namespace": "default",
                            "ownerReferences": [reference]},
               "data": {"size": "1"}})
    };
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "its own reference to the parent is kept, blockOwnerDeletion and all",
            reconcile_w()
                .metadata("reference", &own_reference)
                .given(&parent(1, None))
                .expect_create(&child_with(&own_reference))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"w-child\""))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "a reference to another controller is kept, and the child is not ours",
            reconcile_w()
                .metadata("reference", &other_controller)
                .given(&parent(1, None))
                .expect_create(&child_with(&other_controller))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"w-child\""))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .run(|env| {
            let reference: OwnerReference = env
                .metadata("reference")
                .and_then(|r| serde_json::from_value(r.clone()).ok())
                .unwrap_or_default();
            let named = ChildReconciler::new(
                manager(),
                move |_, w: &Widget| {
                    let mut child = desired(w);
                    child.metadata.namespace = Some("default".to_owned());
                    child.metadata.owner_references = Some(vec![reference.clone()]);
                    Ok(Some(child))
                },
                |_, w, child| reflect(w, child),
            );
            ResourceReconciler::new(env.config(), named)
        });
}

fn kinds(setup: &Setup) -> Vec<(String, Trigger)> {
    setup
        .watches()
        .iter()
        .map(|w| (w.resource.kind.clone(), w.trigger))
        .collect()
}

#[tokio::test]
async fn children_are_watched_as_owned_and_as_tracked() {
    let owned = child_reconciler(manager());
    let mut setup = Setup::default();
    owned.setup(&mut setup);
    assert_eq!(
        kinds(&setup),
        [
            ("ConfigMap".to_owned(), Trigger::Owner),
            ("ConfigMap".to_owned(), Trigger::Tracked)
        ]
    );
    let mut setup = Setup::default();
    labelled_child_reconciler().setup(&mut setup);
    assert_eq!(
        kinds(&setup),
        [("ConfigMap".to_owned(), Trigger::Tracked)],
        "no owner references, no owner watch"
    );
}

/// A mutating webhook defaults `data.defaulted` on every ConfigMap update: without the
/// manager remembering that mutation, each reconcile would see the default as drift and PUT
/// the child again, forever.
#[tokio::test]
async fn remembered_admission_mutations_stop_an_endless_update_loop() {
    use kube::api::{Api, Patch, PatchParams};
    use recon_fake::Verb;

    let server = recon_fake::ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    server.seed(&parent(1, Some(true))).unwrap();
    server.seed(&owned("w-child", "7")).unwrap();
    server.on(Verb::Update, "configmaps").mutate(|object| {
        object["data"]["defaulted"] = "yes".into();
    });
    let config = recon_core::Config::new(server.client(), "test")
        .with_recorder(recon_core::EventLog::default());
    let reconciler = ResourceReconciler::new(config, child_reconciler(manager()));
    let request = Request::namespaced("default", "w");
    let puts = |server: &recon_fake::ApiServer| {
        server
            .requests()
            .iter()
            .filter(|r| r.verb == Verb::Update && r.origin == RequestOrigin::Client)
            .count()
    };

    for _ in 0..3 {
        reconciler.reconcile(&request).await.unwrap();
    }
    assert_eq!(puts(&server), 1, "one update, then in sync");
    let children: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let stored = children.get("w-child").await.unwrap().data.unwrap();
    assert_eq!(
        (stored["size"].as_str(), stored["defaulted"].as_str()),
        ("1", "yes")
    );

    // Someone else changes the child: the remembered mutation no longer applies to this
    // version, and the drift is corrected once.
    children
        .patch(
            "w-child",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"size": "5"}})),
        )
        .await
        .unwrap();
    for _ in 0..3 {
        reconciler.reconcile(&request).await.unwrap();
    }
    assert_eq!(puts(&server), 2);
}

/// A cluster-scoped `Gizmo`, known only at runtime (a `DynamicObject`), owns a ConfigMap in
/// `default` (a namespaced child may have a cluster-scoped owner).
#[test]
fn child_reconciler_with_a_dynamic_parent() {
    const GIZMO_UID: &str = "0b5e7a4c-0000-4000-8000-00000000000a";
    let gizmo = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                       "metadata": {"name": "g", "uid": GIZMO_UID}, "spec": {"size": 3}});
    let mut reflected = gizmo.clone();
    reflected["status"] = json!({"child": "g-child"});
    SubReconcilerTests::new()
        .crd(&gizmo_crd())
        .case(
            "the child gets a controller reference to the dynamic parent",
            TestCase::sub_reconcile(&gizmo)
                .expect_create(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "g-child", "namespace": "default", "ownerReferences": [{
                        "apiVersion": "example.com/v1", "kind": "Gizmo", "name": "g", "uid": GIZMO_UID,
                        "controller": true, "blockOwnerDeletion": true}]},
                    "data": {"size": "3"}}))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"g-child\""))
                .expect_resource(&reflected),
        )
        .run(|_| {
            ChildReconciler::<DynamicObject, ConfigMap>::new_with(
                gizmo_resource(),
                (),
                manager(),
                |_, gizmo| {
                    let mut child = ConfigMap::default();
                    child.metadata.name = Some(format!("{}-child", gizmo.metadata.name.as_deref().unwrap_or_default()));
                    child.metadata.namespace = Some("default".to_owned());
                    child.data = Some([("size".to_owned(), gizmo.data["spec"]["size"].to_string())].into());
                    Ok(Some(child))
                },
                |_, gizmo, child| {
                    let name = child?.and_then(|c| c.metadata.name.clone());
                    gizmo.data["status"] = json!({"child": name});
                    Ok(())
                },
            )
        });
}

/// reconciler.io's `ListOptions`, with owner references kept: a cluster-scoped parent whose
/// children live in one namespace lists only there.
#[test]
fn list_options_narrow_where_owned_children_are_looked_for() {
    const GIZMO_UID: &str = "0b5e7a4c-0000-4000-8000-00000000000a";
    let gizmo = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                       "metadata": {"name": "g", "uid": GIZMO_UID}, "spec": {"size": 3}});
    let owner = json!([{"apiVersion": "example.com/v1", "kind": "Gizmo", "name": "g",
                        "uid": GIZMO_UID, "controller": true, "blockOwnerDeletion": true}]);
    let child_in = |namespace: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "g-child", "namespace": namespace, "ownerReferences": owner},
               "data": {"size": "3"}})
    };
    SubReconcilerTests::new()
        .crd(&gizmo_crd())
        .case(
            "an owned object outside the listed namespace is not a child",
            TestCase::sub_reconcile(&gizmo)
                .given(&child_in("default"))
                .expect_create(&child_in("team-a"))
                .expect_event(EventRef::normal("Created", "Created ConfigMap \"g-child\""))
                .verify(|env, _| {
                    let kept = env
                        .server()
                        .stored_as::<ConfigMap>(Some("default"), "g-child")
                        .map_err(|e| e.to_string())?;
                    kept.map(|_| ())
                        .ok_or_else(|| "the object in default was deleted".into())
                }),
        )
        .run(|_| {
            ChildReconciler::<DynamicObject, ConfigMap>::new_with(
                gizmo_resource(),
                (),
                manager(),
                |_, gizmo| {
                    let mut child = ConfigMap::default();
                    child.metadata.name = Some("g-child".to_owned());
                    child.metadata.namespace = Some("team-a".to_owned());
                    child.data =
                        Some([("size".to_owned(), gizmo.data["spec"]["size"].to_string())].into());
                    Ok(Some(child))
                },
                |_, _, child| child.map(|_| ()),
            )
            .list_options(|_, _| ChildListOptions::in_namespace("team-a"))
        });
}

/// A child's `created-at` label is set once: `harmonize_immutable_fields` copies it from the
/// actual child onto the desired one, so an update never changes it.
#[test]
fn immutable_fields_are_harmonized_before_an_update() {
    let labelled = |size: &str, created_at: &str| {
        let mut child = owned("w-child", size);
        child["metadata"]["labels"] = json!({"created-at": created_at});
        child
    };
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the update keeps the actual child's immutable label",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&labelled("7", "monday"))
                .expect_update(&labelled("1", "monday"))
                .expect_event(EventRef::normal("Updated", "Updated ConfigMap \"w-child\"")),
        )
        .case(
            "a child differing only in the immutable label is in sync",
            reconcile_w()
                .given(&parent(1, Some(true)))
                .given(&labelled("1", "monday")),
        )
        .run(|env| {
            let manager =
                UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
                    current.data = desired.data.clone();
                    current.metadata.labels = desired.metadata.labels.clone();
                })
                .harmonize_immutable_fields(
                    |actual: &ConfigMap, desired: &mut ConfigMap| {
                        let created = actual
                            .metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get("created-at"));
                        if let Some(created) = created {
                            desired
                                .metadata
                                .labels
                                .get_or_insert_default()
                                .insert("created-at".into(), created.clone());
                        }
                    },
                );
            let child = ChildReconciler::new(
                manager,
                |_, w: &Widget| {
                    let mut child = desired(w);
                    child.metadata.labels =
                        Some([("created-at".to_owned(), "today".to_owned())].into());
                    Ok(Some(child))
                },
                |_, w, child| reflect(w, child),
            );
            ResourceReconciler::new(env.config(), child)
        });
}

/// A child of a kind known at runtime, listed (list items of a built-in carry no `apiVersion`
/// and `kind`), is updated with its type: kube-apiserver refuses a body without one.
#[test]
fn a_dynamic_child_read_from_a_list_is_updated_with_its_type() {
    let config_maps = kube::api::ApiResource::erase::<ConfigMap>(&());
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a drifted child is updated",
            reconcile_w()
                .given(&parent(2, Some(true)))
                .given(&owned("w-child", "1"))
                .expect_update(&owned("w-child", "2"))
                .expect_event(EventRef::normal("Updated", "Updated ConfigMap \"w-child\"")),
        )
        .run(move |env| {
            let manager = UpdatingObjectManager::<DynamicObject>::new_with(
                config_maps.clone(),
                |current, desired| current.data["data"] = desired.data["data"].clone(),
            );
            let child = ChildReconciler::<Widget, DynamicObject>::new_with(
                (),
                config_maps.clone(),
                manager,
                |_, w: &Widget| {
                    let mut child = DynamicObject::new(
                        "w-child",
                        &kube::api::ApiResource::erase::<ConfigMap>(&()),
                    );
                    child.data = json!({"data": {"size": w.spec.size.to_string()}});
                    Ok(Some(child))
                },
                |_, _, child| child.map(|_| ()),
            );
            ResourceReconciler::new(env.config(), child)
        });
}
