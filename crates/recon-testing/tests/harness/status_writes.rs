//! Expected status writes: statusUpdates, statusPatches, statusApplies.

use crate::sprocket::Sprocket;
use recon_core::{ResourceReconciler, StatusStrategy};
use recon_testing::{EventRef, PatchRef, TestCase, TestEnv};
use serde_json::json;

use crate::support::*;

fn updating_status(env: &TestEnv) -> ResourceReconciler<Sprocket> {
    ResourceReconciler::new(env.config(), set_ready()).status_strategy(StatusStrategy::Update)
}

#[tokio::test]
async fn status_updates_pass_when_identity_and_status_match() {
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_update(&sprocket_with_status(1, json!({"ready": true})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_updates_compare_only_identity_and_status() {
    // The spec differs from what was sent, but only identity and status are compared.
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_update(&sprocket_with_status(99, json!({"ready": true})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_updates_fail_with_a_diff_of_the_status() {
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_update(&sprocket_with_status(1, json!({"ready": false})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    assert_differs(
        &report,
        "updates its status",
        "expect.statusUpdates[0]",
        &["-    \"ready\": false", "+    \"ready\": true"],
    );
    assert_eq!(
        mismatches(&report, "updates its status"),
        ["expect.statusUpdates[0]"]
    );
}

#[tokio::test]
async fn status_patches_pass_when_the_patch_matches() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_patch(ready_patch(true))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_patches_fail_with_a_diff_of_the_patch() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    assert_differs(
        &report,
        "patches its status",
        "expect.statusPatches[0]",
        &[
            "1 of 1 cases failed, 0 skipped",
            "-      \"ready\": false",
            "+      \"ready\": true",
        ],
    );
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.statusPatches[0]"]
    );
}

#[tokio::test]
async fn a_status_patch_is_not_a_patch_of_the_object() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_patch(ready_patch(true))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.patches[0]", "expect.statusPatches[0]"]
    );
}

fn status_applied(ready: bool) -> PatchRef {
    PatchRef::apply(
        "Sprocket",
        Some("default"),
        "w",
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Sprocket",
            "metadata": {"name": "w"},
            "status": {"ready": ready},
        }),
    )
}

#[tokio::test]
async fn status_applies_pass_when_the_applied_status_matches() {
    let report = check(
        "applies its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_apply(status_applied(true)),
        with(apply_status),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_applies_fail_with_a_diff_of_the_applied_status() {
    let report = check(
        "applies its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_apply(status_applied(false)),
        with(apply_status),
    )
    .await;
    assert_differs(
        &report,
        "applies its status",
        "expect.statusApplies[0]",
        &["-      \"ready\": false", "+      \"ready\": true"],
    );
    assert_eq!(
        mismatches(&report, "applies its status"),
        ["expect.statusApplies[0]"]
    );
}
