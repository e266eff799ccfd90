//! Finalizers on the reconciled resource against the in-memory API server: `add_finalizer` and
//! `clear_finalizer` called directly (a JSON merge patch carrying the resourceVersion read, the
//! answer copied back, an event each time), then `WithFinalizer` under a `ResourceReconciler`,
//! as tables.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{CustomResourceExt, Resource};
use recon_core::{
    Config, Context, Error, Event, EventLog, EventType, Request, ResourceReconciler,
    SyncReconciler, WithFinalizer, add_finalizer, clear_finalizer,
};
use recon_fake::{ApiServer, RecordedRequest, Verb};
use recon_test_fixtures::*;
use recon_testing::{DeleteRef, EventRef, PatchRef, ReconcilerTests, TestEnv};
use serde_json::json;

use crate::support::*;

const FINALIZER: &str = "example.com/f";
const WIDGET_PATH: &str = "/apis/example.com/v1/namespaces/default/widgets/w";

/// A server with the test CRDs, an event log, and a config recording into it.
async fn setup() -> (ApiServer, EventLog, Config) {
    let server = server().await;
    let events = EventLog::default();
    let config = Config::new(server.client(), "test").with_recorder(events.clone());
    (server, events, config)
}

fn context(config: &Config) -> Context {
    Context::new(config.clone(), Request::namespaced("default", "w"))
}

fn finalizers(w: &Widget) -> Option<Vec<String>> {
    w.metadata.finalizers.clone()
}

fn resource_version(w: &Widget) -> String {
    w.metadata
        .resource_version
        .clone()
        .expect("resourceVersion")
}

fn last_request(server: &ApiServer) -> RecordedRequest {
    server.requests().last().cloned().expect("a request")
}

#[tokio::test]
async fn add_finalizer_sends_a_merge_patch_with_the_resource_version_read_and_copies_the_answer_back()
 {
    let (server, _events, config) = setup().await;
    let mut w = create_widget(&server, "w", &[]).await;
    let rv_read = resource_version(&w);
    server.clear_requests();

    add_finalizer(&context(&config), &mut w, &(), FINALIZER)
        .await
        .unwrap();

    assert_eq!(server.requests().len(), 1);
    let patch = last_request(&server);
    assert_eq!(
        (patch.verb, patch.path.as_str(), patch.status),
        (Verb::Patch, WIDGET_PATH, 200)
    );
    assert_eq!(
        patch.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    let expected =
        format!(r#"{{"metadata":{{"finalizers":["{FINALIZER}"],"resourceVersion":"{rv_read}"}}}}"#);
    assert_eq!(std::str::from_utf8(&patch.body).unwrap(), expected);

    let stored = widgets(&server).get("w").await.unwrap();
    assert_eq!(finalizers(&stored), Some(vec![FINALIZER.to_owned()]));
    assert_ne!(resource_version(&stored), rv_read, "the patch was a write");
    assert_eq!(
        finalizers(&w),
        finalizers(&stored),
        "finalizers copied back"
    );
    assert_eq!(
        resource_version(&w),
        resource_version(&stored),
        "resourceVersion copied back"
    );
}

#[tokio::test]
async fn add_finalizer_a_second_time_sends_no_request() {
    let (server, events, config) = setup().await;
    let mut w = create_widget(&server, "w", &[]).await;
    let ctx = context(&config);
    add_finalizer(&ctx, &mut w, &(), FINALIZER).await.unwrap();
    let after_first = resource_version(&w);
    server.clear_requests();

    add_finalizer(&ctx, &mut w, &(), FINALIZER).await.unwrap();

    assert!(server.requests().is_empty(), "{:#?}", server.requests());
    assert_eq!(resource_version(&w), after_first);
    assert_eq!(events.events().len(), 1, "one event, for the first call");
}

#[tokio::test]
async fn add_finalizer_records_a_finalizer_patched_event() {
    let (server, events, config) = setup().await;
    let mut w = create_widget(&server, "w", &[]).await;

    add_finalizer(&context(&config), &mut w, &(), FINALIZER)
        .await
        .unwrap();

    let recorded = events.events();
    assert_eq!(recorded.len(), 1, "{recorded:#?}");
    assert_eq!(
        recorded[0].event,
        Event::normal(
            "FinalizerPatched",
            "PatchFinalizer",
            "Patched finalizer \"example.com/f\""
        )
    );
    let regarding = &recorded[0].regarding;
    assert_eq!(
        (
            regarding.kind.as_deref(),
            regarding.namespace.as_deref(),
            regarding.name.as_deref()
        ),
        (Some("Widget"), Some("default"), Some("w"))
    );
}

#[tokio::test]
async fn clear_finalizer_of_the_last_finalizer_sends_null_finalizers() {
    let (server, events, config) = setup().await;
    let mut w = create_widget(&server, "w", &[FINALIZER]).await;
    let rv_read = resource_version(&w);
    server.clear_requests();

    clear_finalizer(&context(&config), &mut w, &(), FINALIZER)
        .await
        .unwrap();

    assert_eq!(server.requests().len(), 1);
    let patch = last_request(&server);
    assert_eq!(
        (patch.verb, patch.path.as_str(), patch.status),
        (Verb::Patch, WIDGET_PATH, 200)
    );
    assert_eq!(
        patch.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    let expected = format!(r#"{{"metadata":{{"finalizers":null,"resourceVersion":"{rv_read}"}}}}"#);
    assert_eq!(std::str::from_utf8(&patch.body).unwrap(), expected);

    let stored = widgets(&server).get("w").await.unwrap();
    assert_eq!(
        finalizers(&stored),
        None,
        "a live widget stays, unprotected"
    );
    assert_eq!(finalizers(&w), None);
    assert_eq!(resource_version(&w), resource_version(&stored));
    let reasons: Vec<String> = events
        .events()
        .into_iter()
        .map(|e| e.event.reason)
        .collect();
    assert_eq!(reasons, ["FinalizerPatched"]);
}

#[tokio::test]
async fn clear_finalizer_of_the_last_finalizer_on_a_terminating_resource_deletes_it() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[FINALIZER]).await;
    widgets(&server)
        .delete("w", &DeleteParams::default())
        .await
        .unwrap();
    let mut w = widgets(&server).get("w").await.unwrap();
    assert!(w.metadata.deletion_timestamp.is_some(), "terminating");

    clear_finalizer(&context(&config), &mut w, &(), FINALIZER)
        .await
        .unwrap();

    assert_eq!(last_request(&server).status, 200);
    let gone = status(widgets(&server).get("w").await);
    assert_status(
        &gone,
        404,
        "NotFound",
        "widgets.example.com \"w\" not found",
    );
}

#[tokio::test]
async fn a_stale_resource_version_makes_add_finalizer_a_409_with_a_warning_event_and_leaves_the_resource_unchanged()
 {
    let (server, events, config) = setup().await;
    let mut w = create_widget(&server, "w", &[]).await;
    // Someone writes after our read.
    widgets(&server)
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap();
    let before = serde_json::to_value(&w).unwrap();

    let err = add_finalizer(&context(&config), &mut w, &(), FINALIZER)
        .await
        .unwrap_err();

    let api_error = err.as_api_error().expect("an API error");
    let message = "Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again";
    assert_status(api_error, 409, "Conflict", message);
    assert_eq!(last_request(&server).status, 409);
    assert_eq!(serde_json::to_value(&w).unwrap(), before, "unchanged");
    assert_eq!(
        finalizers(&widgets(&server).get("w").await.unwrap()),
        None,
        "nothing stored"
    );

    let recorded = events.events();
    assert_eq!(recorded.len(), 1, "{recorded:#?}");
    let event = &recorded[0].event;
    assert_eq!(
        (event.type_, event.reason.as_str(), event.action.as_str()),
        (EventType::Warning, "FinalizerPatchFailed", "PatchFinalizer")
    );
    let note = event.note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("Failed to patch finalizer \"example.com/f\": ") && note.contains(message),
        "{note}"
    );
}

// ---- WithFinalizer ----

const CHILD: &str = "w-child";

/// Inner reconciler: on a live widget it says which finalizers it sees and creates a ConfigMap;
/// on a terminating one it says that and deletes the ConfigMap. What it sees shows whether the
/// finalizer was added before it ran, and is still there while it finalizes.
fn inner() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Child")
        .sync(async |ctx, w| {
            saw(ctx, w, "sync").await;
            let mut child = ConfigMap::default();
            child.metadata.name = Some(CHILD.to_owned());
            configmaps_of(ctx.config())
                .create(&PostParams::default(), &child)
                .await?;
            Ok(())
        })
        .finalize(async |ctx, w| {
            saw(ctx, w, "finalize").await;
            configmaps_of(ctx.config())
                .delete(CHILD, &DeleteParams::default())
                .await?;
            Ok(())
        })
}

fn configmaps_of(config: &Config) -> Api<ConfigMap> {
    Api::namespaced(config.client().clone(), "default")
}

/// Publishes which finalizers `hook` saw on `w`.
async fn saw(ctx: &Context, w: &Widget, hook: &str) {
    let note = format!(
        "{hook} saw {:?}",
        w.metadata.finalizers.clone().unwrap_or_default()
    );
    ctx.publish(&w.object_ref(&()), Event::normal("Saw", "Test", note))
        .await;
}

fn saw_event(hook: &str) -> EventRef {
    EventRef::normal("Saw", &format!("{hook} saw [\"{FINALIZER}\"]"))
}

fn finalizer_patch(finalizers: serde_json::Value) -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"metadata": {"finalizers": finalizers}}),
    )
}

/// The ConfigMap the inner reconciler manages, as stored.
fn child() -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CHILD, "namespace": "default"}})
}

/// The ConfigMap the inner reconciler creates, as sent.
fn child_created() -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CHILD}})
}

fn child_deleted() -> DeleteRef {
    DeleteRef::new("ConfigMap", Some("default"), CHILD)
}

/// Checks the reconciler sent exactly `expected`, in this order (reads included, which the
/// table's own expectations leave out, and the order between kinds of writes).
fn check_sent(env: &TestEnv, expected: &[&str]) -> Result<(), String> {
    let sent = sent(env);
    if sent == expected {
        Ok(())
    } else {
        Err(format!("sent {sent:#?}"))
    }
}

/// The stored object `name` in `default`, if any, read without a request.
fn stored<K>(env: &TestEnv, name: &str) -> Result<Option<K>, String>
where
    K: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    env.server()
        .stored_as::<K>(Some("default"), name)
        .map_err(|e| e.to_string())
}

const GET_W: &str = "GET /apis/example.com/v1/namespaces/default/widgets/w -> 200";
const PATCH_W: &str = "PATCH /apis/example.com/v1/namespaces/default/widgets/w -> 200";
const DELETE_CHILD: &str = "DELETE /api/v1/namespaces/default/configmaps/w-child -> 200";

#[test]
fn with_finalizer() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a live resource gets the finalizer before the inner reconciler runs",
            reconcile_w()
                .given(&live())
                .expect_patch(finalizer_patch(json!([FINALIZER])))
                .expect_create(&child_created())
                .expect_event(finalizer_patched(FINALIZER))
                .expect_event(saw_event("sync"))
                .verify(|env, _| {
                    check_sent(
                        env,
                        &[
                            GET_W,
                            PATCH_W,
                            "POST /api/v1/namespaces/default/configmaps -> 201",
                        ],
                    )?;
                    let stored = stored::<Widget>(env, "w")?.ok_or("the widget is gone")?;
                    if finalizers(&stored) == Some(vec![FINALIZER.to_owned()]) {
                        Ok(())
                    } else {
                        Err(format!("stored finalizers: {:?}", finalizers(&stored)))
                    }
                }),
        )
        .case(
            "a terminating resource gets the inner finalize, then loses the finalizer, and is gone",
            reconcile_w()
                .given(&terminating_with(live(), &[FINALIZER]))
                .given(&child())
                .expect_delete(child_deleted())
                .expect_patch(finalizer_patch(json!(null)))
                .expect_event(saw_event("finalize"))
                .expect_event(finalizer_patched(FINALIZER))
                .verify(|env, _| {
                    check_sent(env, &[GET_W, DELETE_CHILD, PATCH_W])?;
                    match (
                        stored::<Widget>(env, "w")?,
                        stored::<ConfigMap>(env, CHILD)?,
                    ) {
                        (None, None) => Ok(()),
                        left => Err(format!("still stored: {left:?}")),
                    }
                }),
        )
        .run(|env| ResourceReconciler::new(env.config(), WithFinalizer::new(FINALIZER, inner())));
}

#[test]
fn with_finalizer_not_ready_to_clear() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            // What tells this tree from one without `WithFinalizer` at all.
            "a live resource still gets the finalizer",
            reconcile_w()
                .given(&live())
                .expect_patch(finalizer_patch(json!([FINALIZER])))
                .expect_create(&child_created())
                .expect_event(finalizer_patched(FINALIZER))
                .expect_event(saw_event("sync")),
        )
        .case(
            "a terminating resource gets the inner finalize and keeps the finalizer",
            reconcile_w()
                .given(&terminating_with(live(), &[FINALIZER]))
                .given(&child())
                .expect_delete(child_deleted())
                .expect_event(saw_event("finalize"))
                .verify(|env, _| {
                    check_sent(env, &[GET_W, DELETE_CHILD])?;
                    let stored = stored::<Widget>(env, "w")?.ok_or("the widget is gone")?;
                    let kept = stored.metadata.deletion_timestamp.is_some()
                        && finalizers(&stored) == Some(vec![FINALIZER.to_owned()]);
                    if kept {
                        Ok(())
                    } else {
                        Err(format!("stored metadata: {:?}", stored.metadata))
                    }
                }),
        )
        .run(|env| {
            let tree =
                WithFinalizer::new(FINALIZER, inner()).ready_to_clear(async |_, _| Ok(false));
            ResourceReconciler::new(env.config(), tree)
        });
}

#[test]
fn with_finalizer_ready_hook_failing() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the hook's error fails the reconcile and the finalizer stays",
            reconcile_w()
                .given(&terminating_with(live(), &[FINALIZER]))
                .given(&child())
                .expect_delete(child_deleted())
                .expect_event(saw_event("finalize"))
                .expect_error("the external store is unreachable")
                .verify(|env, _| {
                    check_sent(env, &[GET_W, DELETE_CHILD])?;
                    let stored = stored::<Widget>(env, "w")?.ok_or("the widget is gone")?;
                    match finalizers(&stored) == Some(vec![FINALIZER.to_owned()]) {
                        true => Ok(()),
                        false => Err(format!("stored metadata: {:?}", stored.metadata)),
                    }
                }),
        )
        .run(|env| {
            let tree = WithFinalizer::new(FINALIZER, inner()).ready_to_clear(async |ctx, _| {
                // The context is there for I/O; here it only names the request.
                Err(Error::msg(format!(
                    "the external store is unreachable for {}",
                    ctx.request().name
                )))
            });
            ResourceReconciler::new(env.config(), tree)
        });
}
