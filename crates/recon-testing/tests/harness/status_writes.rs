//! Expected status writes: statusUpdates, statusPatches, statusApplies.

use crate::sprocket::Sprocket;
use recon_core::{ResourceReconciler, StatusStrategy};
use recon_testing::{EventRef, PatchRef, TestCase, TestEnv};
use serde_json::json;

use crate::support::*;

fn updating_status(env: &TestEnv) -> ResourceReconciler<Sprocket> {
    ResourceReconciler::new(env.config(), set_ready()).status_strategy(StatusStrategy::Update)
}

/// The sprocket's reconcile (size 1), expecting a status update to `status` of a sprocket of size
/// `size`, and its event.
fn updating_status_to(size: i32, status: serde_json::Value) -> TestCase {
    TestCase::reconcile(request())
        .given(&sprocket(1))
        .expect_status_update(&sprocket_with_status(size, status))
        .expect_event(EventRef::normal("StatusUpdated", "Updated status"))
}

#[tokio::test]
async fn status_updates_are_compared_by_their_status() {
    assert_compared(
        updating_status,
        updating_status_to(1, json!({"ready": true})),
        updating_status_to(1, json!({"ready": false})),
        "expect.statusUpdates[0]",
        &["-    \"ready\": false", "+    \"ready\": true"],
    )
    .await;
}

#[tokio::test]
async fn status_updates_compare_only_identity_and_status() {
    // The spec differs from what was sent, but only identity and status are compared.
    let report = check(
        "updates its status",
        updating_status_to(99, json!({"ready": true})),
        updating_status,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_patches_are_compared_as_json() {
    assert_compared(
        with(set_ready),
        sets_ready(true),
        sets_ready(false),
        "expect.statusPatches[0]",
        &["-      \"ready\": false", "+      \"ready\": true"],
    )
    .await;
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
    apply_of(
        "example.com/v1",
        "Sprocket",
        "w",
        json!({"status": {"ready": ready}}),
    )
}

#[tokio::test]
async fn status_applies_are_compared_by_the_applied_status() {
    let applying = |ready| {
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_apply(status_applied(ready))
    };
    assert_compared(
        with(apply_status),
        applying(true),
        applying(false),
        "expect.statusApplies[0]",
        &["-      \"ready\": false", "+      \"ready\": true"],
    )
    .await;
}
