//! `ApplyObjectManager` against the in-memory API server: a sub-reconciler of a `Widget` manages
//! its ConfigMap `w-child` through the manager, as tables. The cases that start from an
//! existing child get it as a scratch server stored it after real applies and edits, so the
//! managedFields the manager reads are the server's own.

use std::future::Future;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::CustomResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use recon_core::{
    ApplyObjectManager, Config, Context, EventLog, ObjectManager, Parent, Reference, Request,
    Setup, SyncReconciler, Trigger,
};
use recon_fake::{ApiServer, RequestOrigin, Verb};
use recon_test_fixtures::*;
use recon_testing::{
    DeleteRef, EventRef, FailureSpec, PatchRef, ReactorSpec, SubReconcilerTests, TestCase, TestEnv,
};
use serde_json::{Value, json};

use crate::support::*;

const MANAGER: &str = "recon-test";
const CHILD: &str = "w-child";
const FINALIZER: &str = "example.com/child";
const W_UID: &str = "8c1e0f4a-0000-4000-8000-000000000001";

// ---- the tree under test ----

/// The child the widget wants: its size in `data.size`, with a label and a controller owner
/// reference (`None` for a widget of size 0).
fn desired_child(w: &Widget, unnamed: bool) -> Option<ConfigMap> {
    if w.spec.size == 0 {
        return None;
    }
    let mut cm = ConfigMap::default();
    if unnamed {
        cm.metadata.generate_name = Some("w-".to_owned());
    } else {
        cm.metadata.name = Some(CHILD.to_owned());
    }
    cm.metadata.namespace = Some("default".to_owned());
    cm.metadata.labels = Some([("app".to_owned(), "w".to_owned())].into());
    cm.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "example.com/v1".to_owned(),
        kind: "Widget".to_owned(),
        name: "w".to_owned(),
        uid: w.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    cm.data = Some([("size".to_owned(), w.spec.size.to_string())].into());
    Some(cm)
}

/// A sub-reconciler that reads the child and hands it to `manager` with what the widget wants
/// (nothing, once the widget is being deleted).
fn child_tree(manager: ApplyObjectManager<ConfigMap>, unnamed: bool) -> SyncReconciler<Widget> {
    let manager = Arc::new(manager);
    let finalizing = Arc::clone(&manager);
    SyncReconciler::<Widget>::new("Child")
        .sync_with((manager, unnamed), async |ctx, (manager, unnamed), w| {
            let actual = configmaps(ctx.config()).get_opt(CHILD).await?;
            let desired = desired_child(w, *unnamed);
            let parent = Parent {
                resource: w,
                dyntype: &(),
            };
            manager.manage(ctx, parent, actual, desired).await?;
            Ok(())
        })
        .finalize_with(finalizing, async |ctx, manager, w| {
            let actual = configmaps(ctx.config()).get_opt(CHILD).await?;
            let parent = Parent {
                resource: w,
                dyntype: &(),
            };
            manager.manage(ctx, parent, actual, None).await?;
            Ok(())
        })
}

fn configmaps(config: &Config) -> Api<ConfigMap> {
    Api::namespaced(config.client().clone(), "default")
}

/// The manager a case asks for in its metadata (`force`, `finalizer`, `track`).
fn manager_for(env: &TestEnv) -> ApplyObjectManager<ConfigMap> {
    let flag = |key: &str| env.metadata(key).and_then(Value::as_bool);
    let mut manager = ApplyObjectManager::<ConfigMap>::new(MANAGER);
    if let Some(force) = flag("force") {
        manager = manager.force(force);
    }
    if flag("finalizer") == Some(true) {
        manager = manager.finalizer(FINALIZER);
    }
    manager.track_desired(flag("track") == Some(true))
}

fn factory(env: &TestEnv) -> SyncReconciler<Widget> {
    let unnamed = env.metadata("unnamed").and_then(Value::as_bool) == Some(true);
    child_tree(manager_for(env), unnamed)
}

// ---- fixtures ----

/// The live widget `w` of size 1, with a uid.
fn live_with_uid() -> Widget {
    let mut w = widget("w", 1);
    w.metadata.namespace = Some("default".to_owned());
    w.metadata.uid = Some(W_UID.to_owned());
    w
}

/// The apply body for a widget of size 1, as JSON.
fn intent() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CHILD,
            "namespace": "default",
            "labels": {"app": "w"},
            "ownerReferences": [{
                "apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": W_UID,
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "data": {"size": "1"},
    })
}

/// The same body, byte for byte as kube-rs sends it.
const INTENT_WIRE: &str = concat!(
    r#"{"apiVersion":"v1","data":{"size":"1"},"kind":"ConfigMap","metadata":{"labels":{"app":"w"},"#,
    r#""name":"w-child","namespace":"default","ownerReferences":[{"apiVersion":"example.com/v1","#,
    r#""blockOwnerDeletion":true,"controller":true,"kind":"Widget","name":"w","#,
    r#""uid":"8c1e0f4a-0000-4000-8000-000000000001"}]}}"#
);

fn applied() -> PatchRef {
    PatchRef::apply("ConfigMap", Some("default"), CHILD, intent())
}

fn applied_event() -> EventRef {
    EventRef::normal("Applied", &format!("Applied ConfigMap \"{CHILD}\""))
}

fn finalizer_patch(finalizers: Value) -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"metadata": {"finalizers": finalizers}}),
    )
}

/// Runs `steps` against a fresh scratch server and returns the child as it then stores it
/// (managedFields included), to start a case from.
fn child_after<F, Fut>(steps: F) -> Value
where
    F: FnOnce(Api<ConfigMap>) -> Fut,
    Fut: Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let server = ApiServer::new();
        let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        steps(api.clone()).await;
        let stored = api.get(CHILD).await.expect("the child was stored");
        serde_json::to_value(stored).expect("serialisable")
    })
}

/// Applies `body` to the child as the manager under test would have in an earlier reconcile.
async fn apply_as_manager(api: &Api<ConfigMap>, body: Value) {
    api.patch(CHILD, &PatchParams::apply(MANAGER), &Patch::Apply(body))
        .await
        .expect("apply");
}

/// Another writer (`kubectl edit`) merges `data` into the child.
async fn edit_data(api: &Api<ConfigMap>, data: Value) {
    let params = PatchParams {
        field_manager: Some("kubectl-edit".to_owned()),
        ..PatchParams::default()
    };
    api.patch(CHILD, &params, &Patch::Merge(json!({"data": data})))
        .await
        .expect("edit");
}

/// The child as an earlier reconcile applied it for a widget of size 1.
fn in_sync_child() -> Value {
    child_after(|api| async move { apply_as_manager(&api, intent()).await })
}

/// The child after someone else set `data.size` to 9.
fn drifted_child() -> Value {
    child_after(|api| async move {
        apply_as_manager(&api, intent()).await;
        edit_data(&api, json!({"size": "9"})).await;
    })
}

fn stored_child(env: &TestEnv) -> Result<ConfigMap, String> {
    env.server()
        .stored_as::<ConfigMap>(Some("default"), CHILD)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the child is not stored".to_owned())
}

fn child_data(env: &TestEnv) -> Result<Value, String> {
    Ok(json!(stored_child(env)?.data))
}

/// The requests the code under test sent, as `METHOD path -> code`, reads included.
fn check_sent(env: &TestEnv, expected: &[&str]) -> Result<(), String> {
    let sent: Vec<String> = env
        .server()
        .requests()
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client)
        .map(ToString::to_string)
        .collect();
    if sent == expected {
        Ok(())
    } else {
        Err(format!("sent {sent:#?}"))
    }
}

fn expect_eq(what: &str, got: Value, want: Value) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, want {want}"))
    }
}

const GET_CHILD_200: &str = "GET /api/v1/namespaces/default/configmaps/w-child -> 200";
const GET_CHILD_404: &str = "GET /api/v1/namespaces/default/configmaps/w-child -> 404";
const APPLY_CHILD: &str =
    "PATCH /api/v1/namespaces/default/configmaps/w-child?force=true&fieldManager=recon-test";
const PATCH_W: &str = "PATCH /apis/example.com/v1/namespaces/default/widgets/w -> 200";
const DELETE_CHILD: &str = "DELETE /api/v1/namespaces/default/configmaps/w-child -> 200";

fn case(resource: &Widget) -> TestCase {
    TestCase::sub_reconcile(resource)
}

// ---- tables ----

#[test]
fn apply_manager_creates_leaves_alone_and_takes_back() {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a missing child is created with an apply",
            case(&live_with_uid())
                .expect_apply(applied().exactly(INTENT_WIRE))
                .expect_event(applied_event())
                .verify(|env, _| {
                    check_sent(env, &[GET_CHILD_404, &format!("{APPLY_CHILD} -> 201")])?;
                    expect_eq("stored data", child_data(env)?, json!({"size": "1"}))?;
                    let child = stored_child(env)?;
                    let owner = child
                        .metadata
                        .managed_fields
                        .unwrap_or_default()
                        .into_iter()
                        .find(|e| e.operation.as_deref() == Some("Apply"))
                        .and_then(|e| e.manager);
                    expect_eq("apply manager", json!(owner), json!(MANAGER))
                }),
        )
        .case(
            "an unchanged intent sends nothing",
            case(&live_with_uid()).given(&in_sync_child()).verify(|env, _| {
                check_sent(env, &[GET_CHILD_200])?;
                expect_eq("stored data", child_data(env)?, json!({"size": "1"}))
            }),
        )
        .case(
            "a changed intent is applied",
            case(&widget_of_size(2))
                .given(&in_sync_child())
                .expect_apply(applied_with(|i| i["data"]["size"] = json!("2")))
                .expect_event(applied_event())
                .verify(|env, _| expect_eq("stored data", child_data(env)?, json!({"size": "2"}))),
        )
        .case(
            "a field another manager changed is taken back with force",
            case(&live_with_uid())
                .given(&drifted_child())
                .expect_apply(applied())
                .expect_event(applied_event())
                .verify(|env, _| {
                    check_sent(env, &[GET_CHILD_200, &format!("{APPLY_CHILD} -> 200")])?;
                    expect_eq("stored data", child_data(env)?, json!({"size": "1"}))
                }),
        )
        .case(
            "without force a field another manager changed is a conflict",
            case(&live_with_uid())
                .metadata("force", &false)
                .given(&drifted_child())
                .expect_apply(applied())
                .expect_event(EventRef::warning(
                    "ApplyFailed",
                    &format!(
                        "Failed to apply ConfigMap \"{CHILD}\": Apply failed with 1 conflict: \
                         conflict with \"kubectl-edit\" using v1: .data.size"
                    ),
                ))
                .expect_error("Apply failed with 1 conflict")
                .verify(|env, _| {
                    check_sent(
                        env,
                        &[
                            GET_CHILD_200,
                            "PATCH /api/v1/namespaces/default/configmaps/w-child?fieldManager=recon-test -> 409",
                        ],
                    )?;
                    expect_eq("stored data", child_data(env)?, json!({"size": "9"}))
                }),
        )
        .case(
            "a field no longer desired is released and another manager's field stays",
            case(&live_with_uid())
                .given(&child_after(|api| async move {
                    let mut earlier = intent();
                    earlier["data"]["extra"] = json!("x");
                    apply_as_manager(&api, earlier).await;
                    edit_data(&api, json!({"other": "kept"})).await;
                }))
                .expect_apply(applied())
                .expect_event(applied_event())
                .verify(|env, _| {
                    expect_eq(
                        "stored data",
                        child_data(env)?,
                        json!({"size": "1", "other": "kept"}),
                    )
                }),
        )
        .case(
            "an apply the server refuses is an error and an ApplyFailed event",
            case(&live_with_uid())
                .reactor(ReactorSpec {
                    verb: "patch".to_owned(),
                    resource: "configmaps".to_owned(),
                    group: None,
                    subresource: None,
                    namespace: None,
                    name: None,
                    times: None,
                    fail: FailureSpec::Status {
                        code: 503,
                        reason: "ServiceUnavailable".to_owned(),
                        message: "etcd is down".to_owned(),
                    },
                })
                .expect_apply(applied())
                .expect_event(EventRef::warning(
                    "ApplyFailed",
                    &format!("Failed to apply ConfigMap \"{CHILD}\": etcd is down"),
                ))
                .expect_error("etcd is down")
                .verify(|env, _| match stored_child(env) {
                    Err(_) => Ok(()),
                    Ok(child) => Err(format!("stored anyway: {child:?}")),
                }),
        )
        .case(
            "a desired child without a name is an error and nothing is sent",
            case(&live_with_uid())
                .metadata("unnamed", &true)
                .expect_error("the desired object has no metadata.name")
                .verify(|env, _| check_sent(env, &[GET_CHILD_404])),
        )
        .run(factory);
}

/// `intent()` changed by `edit`, as an expected apply.
fn applied_with(edit: impl FnOnce(&mut Value)) -> PatchRef {
    let mut body = intent();
    edit(&mut body);
    PatchRef::apply("ConfigMap", Some("default"), CHILD, body)
}

fn widget_of_size(size: i32) -> Widget {
    let mut w = live_with_uid();
    w.spec.size = size;
    w
}

#[test]
fn apply_manager_deletes_and_keeps_its_finalizer() {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the finalizer is added before the first apply",
            case(&live_with_uid())
                .metadata("finalizer", &true)
                .expect_patch(finalizer_patch(json!([FINALIZER])))
                .expect_apply(applied())
                .expect_event(finalizer_patched(FINALIZER))
                .expect_event(applied_event())
                .expect_resource(&with_finalizer(FINALIZER, live_with_uid()))
                .verify(|env, _| {
                    check_sent(
                        env,
                        &[GET_CHILD_404, PATCH_W, &format!("{APPLY_CHILD} -> 201")],
                    )
                }),
        )
        .case(
            "an in-sync child with the finalizer in place sends nothing",
            case(&with_finalizer(FINALIZER, live_with_uid()))
                .metadata("finalizer", &true)
                .given(&in_sync_child())
                .verify(|env, _| check_sent(env, &[GET_CHILD_200])),
        )
        .case(
            "a child no longer desired is deleted, then the finalizer is cleared",
            case(&with_finalizer(FINALIZER, widget_of_size(0)))
                .metadata("finalizer", &true)
                .given(&in_sync_child())
                .expect_delete(child_deleted())
                .expect_patch(finalizer_patch(Value::Null))
                .expect_event(EventRef::normal(
                    "Deleted",
                    &format!("Deleted ConfigMap \"{CHILD}\""),
                ))
                .expect_event(finalizer_patched(FINALIZER))
                .expect_resource(&widget_of_size(0))
                .verify(|env, _| {
                    check_sent(env, &[GET_CHILD_200, DELETE_CHILD, PATCH_W])?;
                    match stored_child(env) {
                        Err(_) => Ok(()),
                        Ok(child) => Err(format!("still stored: {child:?}")),
                    }
                }),
        )
        .case(
            "a terminating widget gets its child deleted, then loses the finalizer, and is gone",
            case(&terminating_with(live_with_uid(), &[FINALIZER]))
                .metadata("finalizer", &true)
                .given(&in_sync_child())
                .expect_delete(child_deleted())
                .expect_patch(finalizer_patch(Value::Null))
                .expect_event(EventRef::normal(
                    "Deleted",
                    &format!("Deleted ConfigMap \"{CHILD}\""),
                ))
                .expect_event(finalizer_patched(FINALIZER))
                .expect_resource(&{
                    let mut w = terminating_with(live_with_uid(), &[FINALIZER]);
                    w.metadata.finalizers = None;
                    w
                })
                .verify(|env, _| {
                    check_sent(env, &[GET_CHILD_200, DELETE_CHILD, PATCH_W])?;
                    let widget = env
                        .server()
                        .stored_as::<Widget>(Some("default"), "w")
                        .map_err(|e| e.to_string())?;
                    match widget {
                        None => Ok(()),
                        Some(w) => Err(format!("the widget is still stored: {w:?}")),
                    }
                }),
        )
        .case(
            "a terminating widget whose child is gone only loses the finalizer",
            case(&terminating_with(live_with_uid(), &[FINALIZER]))
                .metadata("finalizer", &true)
                .expect_patch(finalizer_patch(Value::Null))
                .expect_event(finalizer_patched(FINALIZER))
                .expect_resource(&{
                    let mut w = terminating_with(live_with_uid(), &[FINALIZER]);
                    w.metadata.finalizers = None;
                    w
                })
                .verify(|env, _| check_sent(env, &[GET_CHILD_404, PATCH_W])),
        )
        .case(
            "a delete the server refuses keeps the finalizer",
            case(&terminating_with(live_with_uid(), &[FINALIZER]))
                .metadata("finalizer", &true)
                .given(&in_sync_child())
                .reactor(ReactorSpec {
                    verb: "delete".to_owned(),
                    resource: "configmaps".to_owned(),
                    group: None,
                    subresource: None,
                    namespace: None,
                    name: None,
                    times: None,
                    fail: FailureSpec::Internal("etcd is down".to_owned()),
                })
                .expect_delete(child_deleted())
                .expect_event(EventRef::warning(
                    "DeleteFailed",
                    &format!(
                        "Failed to delete ConfigMap \"{CHILD}\": Internal error occurred: etcd is down"
                    ),
                ))
                .expect_error("etcd is down"),
        )
        .run(factory);
}

fn child_deleted() -> DeleteRef {
    DeleteRef::new("ConfigMap", Some("default"), CHILD)
}

#[test]
fn apply_manager_tracks_what_it_applies() {
    let w = Request::namespaced("default", "w");
    let child = Reference::of::<ConfigMap>(Some("default"), CHILD);
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a created child is tracked",
            case(&live_with_uid())
                .metadata("track", &true)
                .expect_apply(applied())
                .expect_event(applied_event())
                .expect_track(w.clone(), child.clone()),
        )
        .case(
            "an in-sync child is tracked again",
            case(&live_with_uid())
                .metadata("track", &true)
                .given(&in_sync_child())
                .expect_track(w.clone(), child.clone()),
        )
        .case(
            "without track_desired nothing is tracked",
            case(&live_with_uid()).given(&in_sync_child()),
        )
        .run(factory);
}

#[test]
fn apply_manager_declares_a_watch_only_when_it_tracks() {
    let watches = |manager: ApplyObjectManager<ConfigMap>| {
        let mut setup = Setup::default();
        <ApplyObjectManager<ConfigMap> as ObjectManager<Widget, ConfigMap>>::setup(
            &manager, &mut setup,
        );
        setup
            .watches()
            .iter()
            .map(|w| (w.resource.kind.clone(), w.trigger))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        watches(ApplyObjectManager::new(MANAGER).track_desired(true)),
        [("ConfigMap".to_owned(), Trigger::Tracked)]
    );
    assert_eq!(watches(ApplyObjectManager::new(MANAGER)), []);
}

// ---- other kinds, straight against the server ----

/// A context on `server` for the request `default/w`, with an event log.
fn context(server: &ApiServer) -> (Context, EventLog) {
    let events = EventLog::default();
    let config = Config::new(server.client(), "test").with_recorder(events.clone());
    (
        Context::new(config, Request::namespaced("default", "w")),
        events,
    )
}

/// The writes sent since the log was cleared.
fn writes(server: &ApiServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client && r.verb != Verb::Get)
        .map(ToString::to_string)
        .collect()
}

#[tokio::test]
async fn a_deployment_applied_twice_is_sent_once_keyed_list_items_included() {
    let server = server().await;
    let mut parent = create_widget(&server, "w", &[]).await;
    let (ctx, events) = context(&server);
    let manager = ApplyObjectManager::<Deployment>::new(MANAGER);
    let mut desired = deployment("web");
    desired.metadata.namespace = Some("default".to_owned());
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "default");

    let first = manager
        .manage(
            &ctx,
            Parent {
                resource: &mut parent,
                dyntype: &(),
            },
            None,
            Some(desired.clone()),
        )
        .await
        .unwrap()
        .expect("applied");
    assert_eq!(first.metadata.name.as_deref(), Some("web"));
    server.clear_requests();

    let actual = deployments.get("web").await.unwrap();
    let second = manager
        .manage(
            &ctx,
            Parent {
                resource: &mut parent,
                dyntype: &(),
            },
            Some(actual.clone()),
            Some(desired.clone()),
        )
        .await
        .unwrap();
    assert_eq!(writes(&server), Vec::<String>::new(), "in sync");
    assert_eq!(
        second.and_then(|d| d.metadata.resource_version),
        actual.metadata.resource_version,
        "the actual object comes back"
    );

    // A container's image changes: the keyed list item differs, so it is applied.
    let mut changed: Value = serde_json::to_value(&desired).unwrap();
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    let changed: Deployment = serde_json::from_value(changed).unwrap();
    manager
        .manage(
            &ctx,
            Parent {
                resource: &mut parent,
                dyntype: &(),
            },
            Some(actual),
            Some(changed),
        )
        .await
        .unwrap();
    assert_eq!(
        writes(&server),
        [
            "PATCH /apis/apps/v1/namespaces/default/deployments/web?force=true&fieldManager=recon-test -> 200"
        ]
    );
    let stored = serde_json::to_value(deployments.get("web").await.unwrap()).unwrap();
    assert_eq!(
        stored["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:2"
    );
    let reasons: Vec<String> = events
        .events()
        .into_iter()
        .map(|e| e.event.reason)
        .collect();
    assert_eq!(reasons, ["Applied", "Applied"]);
}

#[tokio::test]
async fn a_custom_resource_as_a_dynamic_object_is_applied_then_left_alone() {
    let server = server().await;
    let mut parent: ConfigMap =
        from_json(json!({"metadata": {"name": "w", "namespace": "default"}}));
    let parent_api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    parent = parent_api.create(&pp(), &parent).await.unwrap();
    let (ctx, _events) = context(&server);
    let resource = kube::api::ApiResource::erase::<Widget>(&());
    let manager = ApplyObjectManager::<DynamicObject>::new_with(MANAGER, resource.clone())
        .finalizer(FINALIZER);
    let desired: DynamicObject = from_json(json!({
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"size": 3},
        "status": {"ready": true},
    }));

    let applied = manager
        .manage(
            &ctx,
            Parent {
                resource: &mut parent,
                dyntype: &(),
            },
            None,
            Some(desired.clone()),
        )
        .await
        .unwrap()
        .expect("applied");
    let apply = server
        .requests()
        .into_iter()
        .find(|r| r.verb == Verb::Patch && r.resource == "widgets")
        .expect("an apply");
    assert_eq!(
        apply.body_json().unwrap(),
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "g", "namespace": "default"}, "spec": {"size": 3}}),
        "typed from the ApiResource, without status"
    );
    assert_eq!(applied.data["spec"]["size"], 3);
    assert_eq!(
        parent.metadata.finalizers,
        Some(vec![FINALIZER.to_owned()]),
        "the finalizer is on the parent"
    );
    server.clear_requests();

    manager
        .manage(
            &ctx,
            Parent {
                resource: &mut parent,
                dyntype: &(),
            },
            Some(applied),
            Some(desired),
        )
        .await
        .unwrap();
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(widgets(&server).get("g").await.unwrap().spec.size, 3);
}
