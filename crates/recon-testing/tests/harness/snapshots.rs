//! Snapshots of observed expectations.

use std::sync::Arc;

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_testing::{ReconcilerTests, SnapshotSink, TestCase};
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test]
async fn a_snapshot_case_hands_what_it_observed_to_the_sink() {
    let (sink, got) = recording_sink();
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .snapshots(sink)
        .case(
            "Snapshot: ready sprocket",
            // `expect` is not compared in a snapshot case.
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .expect_status_patch(ready_patch(false))
                .snapshot(),
        )
        .check(with(set_ready))
        .await;
    passes(&report);
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    let (name, value) = &got[0];
    assert_eq!(name, "snapshot__ready_sprocket");
    let patch = &value["statusPatches"][0];
    assert_eq!(patch["kind"], "Sprocket");
    assert_eq!(patch["type"], "merge");
    assert_eq!(patch["patch"]["status"], json!({"ready": true}));
    assert!(
        patch.get("exact").is_none(),
        "exact bodies are left out of snapshots: {value}"
    );
    assert_eq!(value["events"][0]["reason"], "StatusPatched");
}

#[tokio::test]
async fn a_rejected_snapshot_fails_the_case() {
    let sink: SnapshotSink = Arc::new(|_: &str, _: &Value| panic!("snapshot assertion failed"));
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .snapshots(sink)
        .case(
            "ready sprocket",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .snapshot(),
        )
        .check(with(set_ready))
        .await;
    assert_contains(
        &failure(&report),
        &[
            "snapshot: \"ready_sprocket\" is new or does not match; accept it with `cargo insta review` (after `cargo install cargo-insta`) or by running the test again with `INSTA_UPDATE=always`",
        ],
    );
}

#[tokio::test]
async fn a_snapshot_case_without_a_sink_fails() {
    let report = check(
        "ready sprocket",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .snapshot(),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "snapshot: the case asks for a snapshot but the table has no snapshot sink: add `.snapshots(recon_testing::snapshot!())`",
        ],
    );
}
