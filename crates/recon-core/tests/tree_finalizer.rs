//! Finalizers on the reconciled resource against the in-memory API server: `add_finalizer` and
//! `clear_finalizer` (a JSON merge patch carrying the resourceVersion read, the answer copied
//! back, an event each time), and `WithFinalizer` under a `ResourceReconciler`.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use recon_core::fake::{ApiServer, RecordedRequest, Verb};
use recon_core::{
    Config, Context, Event, EventLog, EventType, Request, ResourceReconciler, SyncReconciler,
    WithFinalizer, add_finalizer, clear_finalizer,
};
use serde_json::json;

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

fn configmaps(server: &ApiServer) -> Api<ConfigMap> {
    Api::namespaced(server.client(), "default")
}

/// The requests served, as `verb resource/name -> code`.
fn summary(server: &ApiServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| {
            // A create names its object in the body, not in the URL.
            let name = r.name.clone().or_else(|| {
                let body = r.body_json()?;
                body["metadata"]["name"].as_str().map(str::to_owned)
            });
            format!(
                "{} {}/{} -> {}",
                r.verb.as_str(),
                r.resource,
                name.unwrap_or_default(),
                r.status
            )
        })
        .collect()
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

/// Inner reconciler: on a live widget it records the finalizers it sees and creates a
/// ConfigMap; on a terminating one it records that and deletes the ConfigMap.
fn inner(seen: &Arc<Mutex<Vec<String>>>) -> SyncReconciler<Widget> {
    let (sync_seen, finalize_seen) = (seen.clone(), seen.clone());
    SyncReconciler::<Widget>::new("Child")
        .sync(move |ctx, w| {
            let seen = sync_seen.clone();
            Box::pin(async move {
                seen.lock()
                    .unwrap()
                    .push(format!("sync saw {:?}", w.metadata.finalizers));
                let api: Api<ConfigMap> = Api::namespaced(ctx.config().client().clone(), "default");
                let mut child = ConfigMap::default();
                child.metadata.name = Some("w-child".to_owned());
                api.create(&PostParams::default(), &child).await?;
                Ok(())
            })
        })
        .finalize(move |ctx, w| {
            let seen = finalize_seen.clone();
            Box::pin(async move {
                seen.lock()
                    .unwrap()
                    .push(format!("finalize saw {:?}", w.metadata.finalizers));
                let api: Api<ConfigMap> = Api::namespaced(ctx.config().client().clone(), "default");
                api.delete("w-child", &DeleteParams::default()).await?;
                Ok(())
            })
        })
}

fn entries(seen: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn with_finalizer_adds_the_finalizer_before_the_inner_reconciler_runs() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let seen = Arc::default();
    let reconciler = ResourceReconciler::new(config, WithFinalizer::new(FINALIZER, inner(&seen)));
    server.clear_requests();

    reconciler
        .reconcile(&Request::namespaced("default", "w"))
        .await
        .unwrap();

    assert_eq!(
        summary(&server),
        [
            "get widgets/w -> 200",
            "patch widgets/w -> 200",
            "create configmaps/w-child -> 201",
        ]
    );
    assert_eq!(entries(&seen), ["sync saw Some([\"example.com/f\"])"]);
    let stored = widgets(&server).get("w").await.unwrap();
    assert_eq!(finalizers(&stored), Some(vec![FINALIZER.to_owned()]));
}

#[tokio::test]
async fn with_finalizer_after_delete_runs_inner_then_clears_the_finalizer_and_the_resource_is_gone()
{
    let (server, events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let seen = Arc::default();
    let reconciler = ResourceReconciler::new(config, WithFinalizer::new(FINALIZER, inner(&seen)));
    let request = Request::namespaced("default", "w");
    reconciler.reconcile(&request).await.unwrap();
    widgets(&server)
        .delete("w", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        widgets(&server)
            .get("w")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some(),
        "the finalizer keeps it, terminating"
    );
    server.clear_requests();

    reconciler.reconcile(&request).await.unwrap();

    assert_eq!(
        summary(&server),
        [
            "get widgets/w -> 200",
            "delete configmaps/w-child -> 200",
            "patch widgets/w -> 200",
        ]
    );
    let patch = last_request(&server);
    assert_eq!(
        patch.body_json().unwrap()["metadata"]["finalizers"],
        json!(null)
    );
    assert_eq!(
        entries(&seen),
        [
            "sync saw Some([\"example.com/f\"])",
            "finalize saw Some([\"example.com/f\"])",
        ]
    );
    assert_eq!(status(widgets(&server).get("w").await).code, 404);
    assert_eq!(status(configmaps(&server).get("w-child").await).code, 404);
    let reasons: Vec<String> = events
        .events()
        .into_iter()
        .map(|e| e.event.reason)
        .collect();
    assert_eq!(reasons, ["FinalizerPatched", "FinalizerPatched"]);
}

#[tokio::test]
async fn with_finalizer_not_ready_to_clear_keeps_the_finalizer() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let seen = Arc::default();
    let tree = WithFinalizer::new(FINALIZER, inner(&seen)).ready_to_clear(|_, _| false);
    let reconciler = ResourceReconciler::new(config, tree);
    let request = Request::namespaced("default", "w");
    reconciler.reconcile(&request).await.unwrap();
    widgets(&server)
        .delete("w", &DeleteParams::default())
        .await
        .unwrap();
    server.clear_requests();

    reconciler.reconcile(&request).await.unwrap();

    assert_eq!(
        summary(&server),
        ["get widgets/w -> 200", "delete configmaps/w-child -> 200"],
        "the finalize hook ran, and no finalizer patch was sent"
    );
    let stored = widgets(&server).get("w").await.unwrap();
    assert!(stored.metadata.deletion_timestamp.is_some());
    assert_eq!(finalizers(&stored), Some(vec![FINALIZER.to_owned()]));
}
