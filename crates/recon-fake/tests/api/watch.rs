//! Watch through `kube::Api::watch`, `kube::runtime::watcher` and `reflector`: start points
//! (WA2), event types and the DELETED object (WA1), selector transitions (WA3), the in-stream
//! 410 (WA4), bookmarks and streaming lists (WA5, WA6), timeouts and scope (WA7). Messages and
//! event shapes were checked against a real apiextensions-apiserver 1.36.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use serde_json::json;

type Events = std::pin::Pin<Box<dyn Stream<Item = Result<WatchEvent<Widget>, kube::Error>> + Send>>;

async fn open(api: &Api<Widget>, params: &WatchParams, rv: &str) -> Events {
    api.watch(params, rv).await.expect("watch opens").boxed()
}

/// The next event, as `(type, name, resourceVersion)`; fails after a second of silence.
async fn next(events: &mut Events) -> (String, String, String) {
    let event = tokio::time::timeout(Duration::from_secs(1), events.next())
        .await
        .expect("an event within a second")
        .expect("the stream is open")
        .expect("the event decodes");
    let describe = |kind: &str, w: Widget| {
        (
            kind.to_owned(),
            w.metadata.name.unwrap_or_default(),
            w.metadata.resource_version.unwrap_or_default(),
        )
    };
    match event {
        WatchEvent::Added(w) => describe("ADDED", w),
        WatchEvent::Modified(w) => describe("MODIFIED", w),
        WatchEvent::Deleted(w) => describe("DELETED", w),
        WatchEvent::Bookmark(b) => (
            "BOOKMARK".into(),
            String::new(),
            b.metadata.resource_version,
        ),
        WatchEvent::Error(e) => ("ERROR".into(), e.reason, e.message),
    }
}

/// No event arrives within a short while.
async fn quiet(events: &mut Events) {
    let got = tokio::time::timeout(Duration::from_millis(50), events.next()).await;
    assert!(got.is_err(), "expected no event, got {got:?}");
}

fn event(kind: &str, name: &str, rv: u64) -> (String, String, String) {
    (kind.into(), name.into(), rv.to_string())
}

async fn create(api: &Api<Widget>, name: &str, labels: &[(&str, &str)]) -> u64 {
    let mut w = widget(name, 1);
    w.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    let created = api.create(&PostParams::default(), &w).await.unwrap();
    created.metadata.resource_version.unwrap().parse().unwrap()
}

async fn merge(api: &Api<Widget>, name: &str, patch: serde_json::Value) -> u64 {
    let patched = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    patched.metadata.resource_version.unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_watch_from_a_resource_version_sends_every_later_change_and_nothing_before() {
    let server = server().await;
    let api = widgets(&server);
    create(&api, "before", &[]).await;
    let from = server.resource_version();
    let mut events = open(&api, &WatchParams::default(), &from.to_string()).await;
    let added = create(&api, "a", &[]).await;
    let modified = merge(&api, "a", json!({"spec": {"size": 2}})).await;
    let status = merge_status(&api, "a").await;
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let deleted = server.resource_version();
    assert_eq!(next(&mut events).await, event("ADDED", "a", added));
    assert_eq!(next(&mut events).await, event("MODIFIED", "a", modified));
    assert_eq!(next(&mut events).await, event("MODIFIED", "a", status));
    // WA1: the DELETED event carries the last state at the deletion's revision.
    assert_eq!(next(&mut events).await, event("DELETED", "a", deleted));
    quiet(&mut events).await;
}

/// WA2 for objects that never went through a request: a seeded object is older than a watch
/// opened after it, so the next write does not send it to that watch.
#[tokio::test]
async fn a_watch_opened_after_a_seed_is_not_sent_the_seeded_object() {
    let server = server().await;
    let api = widgets(&server);
    server
        .seed(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
                      "metadata": {"name": "seeded", "namespace": "default"},
                      "spec": {"size": 1}}))
        .unwrap();
    let from = server.resource_version();
    let mut events = open(&api, &WatchParams::default(), &from.to_string()).await;
    let added = create(&api, "a", &[]).await;
    assert_eq!(next(&mut events).await, event("ADDED", "a", added));
    quiet(&mut events).await;
}

async fn merge_status(api: &Api<Widget>, name: &str) -> u64 {
    let patched = api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": true}})),
        )
        .await
        .unwrap();
    patched.metadata.resource_version.unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_watch_without_a_resource_version_starts_with_what_exists() {
    let server = server().await;
    let api = widgets(&server);
    let a = create(&api, "a", &[]).await;
    let b = create(&api, "b", &[]).await;
    for rv in ["", "0"] {
        let mut events = open(&api, &WatchParams::default(), rv).await;
        assert_eq!(next(&mut events).await, event("ADDED", "a", a));
        assert_eq!(next(&mut events).await, event("ADDED", "b", b));
        quiet(&mut events).await;
    }
}

#[tokio::test]
async fn no_op_writes_send_no_event() {
    let server = server().await;
    let api = widgets(&server);
    create(&api, "a", &[]).await;
    let mut events = open(
        &api,
        &WatchParams::default(),
        &server.resource_version().to_string(),
    )
    .await;
    merge(&api, "a", json!({"spec": {"size": 1}})).await;
    quiet(&mut events).await;
}

#[tokio::test]
async fn objects_entering_and_leaving_a_label_selection_arrive_as_added_and_deleted() {
    let server = server().await;
    let api = widgets(&server);
    create(&api, "a", &[("env", "dev")]).await;
    let from = server.resource_version();
    let mut events = open(
        &api,
        &WatchParams::default().labels("env=prod"),
        &from.to_string(),
    )
    .await;
    let entered = merge(&api, "a", json!({"metadata": {"labels": {"env": "prod"}}})).await;
    let changed = merge(&api, "a", json!({"spec": {"size": 5}})).await;
    let left = merge(&api, "a", json!({"metadata": {"labels": {"env": "test"}}})).await;
    merge(&api, "a", json!({"spec": {"size": 6}})).await;
    assert_eq!(next(&mut events).await, event("ADDED", "a", entered));
    assert_eq!(next(&mut events).await, event("MODIFIED", "a", changed));
    let deleted = api
        .watch(
            &WatchParams::default().labels("env=prod"),
            &changed.to_string(),
        )
        .await
        .unwrap()
        .boxed()
        .next()
        .await;
    // The DELETED object is the previous state (still labelled prod) at the leaving revision.
    let Some(Ok(WatchEvent::Deleted(w))) = deleted else {
        panic!("expected DELETED, got {deleted:?}")
    };
    assert_eq!(w.metadata.resource_version, Some(left.to_string()));
    assert_eq!(w.labels().get("env").map(String::as_str), Some("prod"));
    assert_eq!(w.spec.size, 5);
    assert_eq!(next(&mut events).await, event("DELETED", "a", left));
    quiet(&mut events).await;
}

#[tokio::test]
async fn a_field_selector_on_the_name_watches_one_object() {
    let server = server().await;
    let api = widgets(&server);
    let from = server.resource_version();
    let mut events = open(
        &api,
        &WatchParams::default().fields("metadata.name=b"),
        &from.to_string(),
    )
    .await;
    create(&api, "a", &[]).await;
    let b = create(&api, "b", &[]).await;
    assert_eq!(next(&mut events).await, event("ADDED", "b", b));
    quiet(&mut events).await;
}

#[tokio::test]
async fn namespaced_watches_see_their_namespace_and_cluster_wide_watches_see_all() {
    let server = server().await;
    let from = server.resource_version().to_string();
    let in_default = widgets(&server);
    let in_other: Api<Widget> = Api::namespaced(server.client(), "other");
    let everywhere: Api<Widget> = Api::all(server.client());
    let mut only_default = open(&in_default, &WatchParams::default(), &from).await;
    let mut all = open(&everywhere, &WatchParams::default(), &from).await;
    let a = create(&in_default, "a", &[]).await;
    let b = create(&in_other, "b", &[]).await;
    assert_eq!(next(&mut only_default).await, event("ADDED", "a", a));
    quiet(&mut only_default).await;
    assert_eq!(next(&mut all).await, event("ADDED", "a", a));
    assert_eq!(next(&mut all).await, event("ADDED", "b", b));
}

#[tokio::test]
async fn a_resource_version_before_the_retained_history_gets_an_in_stream_410() {
    let server = server().await;
    let api = widgets(&server);
    let old = server.resource_version();
    create(&api, "a", &[]).await;
    server.compact_history();
    let now = server.resource_version();
    let mut events = open(&api, &WatchParams::default(), &old.to_string()).await;
    assert_eq!(
        next(&mut events).await,
        (
            "ERROR".into(),
            "Expired".into(),
            format!("too old resource version: {old} ({now})")
        )
    );
    // The stream then ends.
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn a_bounded_history_expires_old_resource_versions_by_itself() {
    let server = ApiServer::builder().watch_history(2).build();
    let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    let from = server.resource_version();
    for name in ["a", "b", "c"] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
    let mut events = api
        .watch(&WatchParams::default(), &from.to_string())
        .await
        .unwrap()
        .boxed();
    let Some(Ok(WatchEvent::Error(status))) = events.next().await else {
        panic!("expected an ERROR event");
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
}

#[tokio::test]
async fn a_watch_created_before_its_crd_was_established_is_too_old_for_it() {
    // A real server fills a custom resource's watch cache when its CRD is established.
    let server = ApiServer::new();
    let before = server.resource_version();
    server
        .install_crd(&<Widget as kube::CustomResourceExt>::crd())
        .await
        .unwrap();
    let established = server.resource_version();
    let api = widgets(&server);
    let mut events = open(&api, &WatchParams::default(), &before.to_string()).await;
    assert_eq!(
        next(&mut events).await,
        (
            "ERROR".into(),
            "Expired".into(),
            format!("too old resource version: {before} ({established})")
        )
    );
    let mut events = open(&api, &WatchParams::default(), &established.to_string()).await;
    quiet(&mut events).await;
}

#[tokio::test]
async fn bookmarks_come_only_when_allowed() {
    let server = server().await;
    let api = widgets(&server);
    let from = server.resource_version().to_string();
    let mut with = open(&api, &WatchParams::default(), &from).await;
    let mut without = open(&api, &WatchParams::default().disable_bookmarks(), &from).await;
    server.send_bookmarks();
    assert_eq!(
        next(&mut with).await,
        ("BOOKMARK".into(), String::new(), from)
    );
    quiet(&mut without).await;
}

#[tokio::test]
async fn a_streaming_list_ends_its_initial_events_with_an_annotated_bookmark() {
    let server = server().await;
    let api = widgets(&server);
    let a = create(&api, "a", &[]).await;
    let mut events = open(&api, &WatchParams::default().initial_events(), "").await;
    assert_eq!(next(&mut events).await, event("ADDED", "a", a));
    let end = events.next().await;
    let Some(Ok(WatchEvent::Bookmark(bookmark))) = end else {
        panic!("expected the initial-events-end bookmark, got {end:?}")
    };
    assert_eq!(
        bookmark.metadata.resource_version,
        server.resource_version().to_string()
    );
    assert_eq!(
        bookmark
            .metadata
            .annotations
            .get("k8s.io/initial-events-end")
            .map(String::as_str),
        Some("true")
    );
}

#[tokio::test]
async fn invalid_watch_options_are_rejected_with_the_real_message() {
    let server = server().await;
    let response = server
        .client()
        .request_text(
            http::Request::get(
                "/apis/example.com/v1/namespaces/default/widgets?watch=true&resourceVersionMatch=NotOlderThan",
            )
            .body(Vec::new())
            .unwrap(),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = response else {
        panic!("expected an API error, got {response:?}")
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    );
}

#[tokio::test(start_paused = true)]
async fn the_stream_ends_after_timeout_seconds() {
    let server = server().await;
    let api = widgets(&server);
    let mut events = open(&api, &WatchParams::default().timeout(30), "").await;
    // Paused time jumps to the deadline once everything is idle.
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn closed_watches_end_and_the_watcher_resumes_from_its_last_version() {
    let server = server().await;
    let api = widgets(&server);
    let mut stream = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    create(&api, "a", &[]).await;
    let first = tokio::time::timeout(Duration::from_secs(1), stream.try_next()).await;
    assert_eq!(
        first.unwrap().unwrap().unwrap().metadata.name.as_deref(),
        Some("a")
    );
    server.close_watches();
    create(&api, "b", &[]).await;
    let second = tokio::time::timeout(Duration::from_secs(1), stream.try_next()).await;
    assert_eq!(
        second.unwrap().unwrap().unwrap().metadata.name.as_deref(),
        Some("b")
    );
}

#[tokio::test]
async fn a_reflector_store_follows_creates_updates_and_deletes() {
    let server = server().await;
    let api = widgets(&server);
    create(&api, "kept", &[]).await;
    let (reader, writer) = reflector::store::<Widget>();
    let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()))
        .applied_objects()
        .for_each(|_| async {});
    let task = tokio::spawn(stream);
    reader.wait_until_ready().await.unwrap();
    create(&api, "gone", &[]).await;
    merge(&api, "kept", json!({"spec": {"size": 9}})).await;
    api.delete("gone", &DeleteParams::default()).await.unwrap();
    let settled = async {
        loop {
            let names: Vec<String> = reader.state().iter().map(|w| w.name_any()).collect();
            let kept = reader
                .state()
                .iter()
                .find(|w| w.name_any() == "kept")
                .map(|w| w.spec.size);
            if names == ["kept"] && kept == Some(9) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(2), settled)
        .await
        .expect("the store converges");
    task.abort();
}

#[tokio::test]
async fn the_watcher_relists_after_a_410_and_sees_objects_created_meanwhile() {
    let server = ApiServer::builder().watch_history(1).build();
    server
        .install_crd(&<Widget as kube::CustomResourceExt>::crd())
        .await
        .unwrap();
    let api = widgets(&server);
    let mut stream = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    create(&api, "a", &[]).await;
    let first = tokio::time::timeout(Duration::from_secs(1), stream.try_next()).await;
    assert_eq!(first.unwrap().unwrap().unwrap().name_any(), "a");
    // Drop the watch, then let history move on: resuming from the old version gets a 410.
    server.close_watches();
    create(&api, "b", &[]).await;
    create(&api, "c", &[]).await;
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let next = tokio::time::timeout(Duration::from_secs(1), stream.try_next()).await;
        match next {
            Ok(Ok(Some(w))) => seen.push(w.name_any()),
            // The watcher reports the 410 as an error, then lists again.
            Ok(Err(_)) => continue,
            other => panic!("the watcher stopped: {other:?}"),
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["a", "b", "c"]);
}
