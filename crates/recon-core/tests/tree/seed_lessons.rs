//! The status-write lessons of the seed PRs, shown on the in-memory server: a JSON merge patch
//! replaces `status.conditions` wholesale, so a writer patching from a stale snapshot erases
//! another writer's condition; `metadata.resourceVersion` in the patch turns that into a 409;
//! and a patch that changes nothing writes nothing.

use kube::api::{Patch, PatchParams, PostParams};
use recon_fake::{ApiServer, Verb};
use recon_test_fixtures::*;
use serde_json::{Value, json};

fn condition(kind: &str) -> Value {
    json!({"type": kind, "status": "True", "reason": kind, "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"})
}

fn condition_types(w: &Widget) -> Vec<String> {
    w.status
        .as_ref()
        .map(|s| {
            s.conditions
                .iter()
                .filter_map(|c| c["type"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A Widget whose status holds one condition, `Ready`.
async fn widget_with_ready(server: &ApiServer) -> Widget {
    let api = widgets(server);
    api.create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let status = json!({"status": {"conditions": [condition("Ready")]}});
    api.patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap()
}

/// Between the reconciler's GET and its PATCH of `/status`, another writer adds `Synced`.
fn concurrent_writer_adds_synced(server: &ApiServer) {
    server
        .on(Verb::Patch, "widgets")
        .subresource("status")
        .name("w")
        .once()
        .before(|client| async move {
            let api: kube::Api<Widget> = kube::Api::namespaced(client, "default");
            let fresh = api.get("w").await.unwrap();
            let mut conditions = fresh.status.unwrap_or_default().conditions;
            conditions.push(condition("Synced"));
            let body = json!({"status": {"conditions": conditions}});
            api.patch_status("w", &PatchParams::default(), &Patch::Merge(&body))
                .await
                .unwrap();
        });
}

#[tokio::test]
async fn a_stale_merge_patch_of_conditions_erases_another_writers_condition() {
    let server = server().await;
    let snapshot = widget_with_ready(&server).await;
    concurrent_writer_adds_synced(&server);

    // The reconciler recomputes `conditions` from its snapshot (Ready only) and merge-patches it.
    let mut conditions = snapshot.status.unwrap_or_default().conditions;
    conditions[0]["message"] = json!("all good");
    let body = json!({"status": {"conditions": conditions}});
    let api = widgets(&server);
    let after = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();

    assert_eq!(
        condition_types(&after),
        ["Ready"],
        "the array was replaced wholesale: Synced is gone"
    );
    let synced_was_written = server.requests().iter().any(|r| {
        r.origin == recon_fake::RequestOrigin::Reactor && r.verb == Verb::Patch && r.status == 200
    });
    assert!(
        synced_was_written,
        "the concurrent writer's patch landed first"
    );
}

#[tokio::test]
async fn a_merge_patch_carrying_the_snapshot_resource_version_gets_409_instead() {
    let server = server().await;
    let snapshot = widget_with_ready(&server).await;
    concurrent_writer_adds_synced(&server);

    let mut conditions = snapshot.status.clone().unwrap_or_default().conditions;
    conditions[0]["message"] = json!("all good");
    let body = json!({
        "metadata": {"resourceVersion": snapshot.metadata.resource_version},
        "status": {"conditions": conditions},
    });
    let api = widgets(&server);
    let err = status(
        api.patch_status("w", &PatchParams::default(), &Patch::Merge(&body))
            .await,
    );

    assert_eq!(err.code, 409);
    assert!(err.is_conflict());
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let stored = api.get("w").await.unwrap();
    assert_eq!(
        condition_types(&stored),
        ["Ready", "Synced"],
        "the other writer's condition survives"
    );
}

#[tokio::test]
async fn a_merge_patch_that_changes_nothing_writes_nothing() {
    let server = server().await;
    let before = widget_with_ready(&server).await;
    let revision = server.resource_version();

    let same =
        json!({"status": {"conditions": before.status.clone().unwrap_or_default().conditions}});
    let api = widgets(&server);
    let after = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&same))
        .await
        .unwrap();
    let empty = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&json!({})))
        .await
        .unwrap();

    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    assert_eq!(
        empty.metadata.resource_version,
        before.metadata.resource_version
    );
    assert_eq!(
        server.resource_version(),
        revision,
        "no revision was written"
    );
}
