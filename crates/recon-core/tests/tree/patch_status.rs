//! The `patch_status` and `patch_status_locked` helpers, outside a reconciler tree: copy, mutate,
//! diff, and send only the changed status fields (none at all when nothing changed), with or
//! without the resourceVersion read as a lock.

use kube::api::{Patch, PatchParams};
use recon_core::{patch_status, patch_status_locked};
use recon_fake::{ApiServer, Verb};
use recon_test_fixtures::*;
use serde_json::json;

fn ready(w: &Widget) -> Option<bool> {
    w.status.as_ref().and_then(|s| s.ready)
}

/// The Widget `w` whose stored status is `{ready: false}`, as read back.
async fn widget_not_ready(server: &ApiServer) -> Widget {
    create_widget(server, "w", &[]).await;
    widgets(server)
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": false}})),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn patch_status_sends_no_request_when_the_mutation_changes_nothing() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let api = widgets(&server);
    server.clear_requests();

    let same_value = patch_status(&api, &w, |w| {
        w.status.get_or_insert_default().ready = Some(false);
    })
    .await
    .unwrap();
    let no_change = patch_status(&api, &w, |_| {}).await.unwrap();
    let locked = patch_status_locked(&api, &w, |w| w.spec.size = 99)
        .await
        .unwrap();

    assert!(same_value.is_none() && no_change.is_none() && locked.is_none());
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
}

#[tokio::test]
async fn patch_status_body_is_exactly_the_changed_status_fields() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let api = widgets(&server);
    server.clear_requests();

    let patched = patch_status(&api, &w, |w| {
        w.spec.size = 7; // not status: not sent
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap()
    .expect("a patch was sent");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let patch = &requests[0];
    assert_eq!(
        (patch.verb, patch.path.as_str(), patch.status),
        (
            Verb::Patch,
            "/apis/example.com/v1/namespaces/default/widgets/w/status",
            200
        )
    );
    assert_eq!(
        patch.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(&patch.body[..], br#"{"status":{"ready":true}}"#);
    assert_eq!(ready(&patched), Some(true));
    assert_eq!(patched.spec.size, 1);
}

#[tokio::test]
async fn patch_status_locked_includes_the_resource_version() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let rv_read = w.metadata.resource_version.clone().unwrap();
    let api = widgets(&server);
    server.clear_requests();

    let patched = patch_status_locked(&api, &w, |w| {
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap()
    .expect("a patch was sent");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert_eq!(
        requests[0].body_json().unwrap(),
        json!({"metadata": {"resourceVersion": rv_read}, "status": {"ready": true}})
    );
    assert_eq!(ready(&patched), Some(true));
}

#[tokio::test]
async fn patch_status_locked_with_a_stale_resource_is_a_409_conflict() {
    let server = server().await;
    let stale = widget_not_ready(&server).await;
    let api = widgets(&server);
    // Another writer changes the object after `stale` was read.
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"size": 2}})),
    )
    .await
    .unwrap();

    let err = status(
        patch_status_locked(&api, &stale, |w| {
            w.status.get_or_insert_default().ready = Some(true);
        })
        .await,
    );

    assert_status(
        &err,
        409,
        "Conflict",
        "Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again",
    );
    assert_eq!(ready(&api.get("w").await.unwrap()), Some(false));
    // Without the lock the same stale patch goes through.
    let unlocked = patch_status(&api, &stale, |w| {
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap();
    assert_eq!(unlocked.as_ref().and_then(ready), Some(true));
}
