//! Expected resource and stashed values of sub-reconciler cases.

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_testing::{CaseStatus, SubReconcilerTests, TestCase};
use serde_json::{Value, json};

use crate::support::*;

fn labelled_sprocket(size: i32, label: &str) -> Value {
    let mut w = sprocket(size);
    w["metadata"]["labels"] = json!({"size": label});
    w
}

#[tokio::test]
async fn resource_passes_when_the_sub_reconciler_leaves_it_as_expected() {
    let report = check_sub(
        "labels the sprocket",
        TestCase::sub_reconcile(&sprocket(3)).expect_resource(&labelled_sprocket(3, "3")),
        label_size,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn resource_fails_with_a_diff_of_the_resulting_resource() {
    let report = check_sub(
        "labels the sprocket",
        TestCase::sub_reconcile(&sprocket(3)).expect_resource(&labelled_sprocket(3, "4")),
        label_size,
    )
    .await;
    assert_differs(
        &report,
        "labels the sprocket",
        "expect.resource",
        &["-      \"size\": \"4\"", "+      \"size\": \"3\""],
    );
    assert_eq!(
        mismatches(&report, "labels the sprocket"),
        ["expect.resource"]
    );
}

#[tokio::test]
async fn without_an_expected_resource_it_must_be_unchanged() {
    // A sub-reconciler that only stashes leaves the resource as it was: that passes.
    let report = check_sub(
        "changes nothing",
        TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &3),
        stash_size_as_json,
    )
    .await;
    passes(&report);
    // One that labels it, with no `expect.resource`, fails with the change as the diff.
    let report = check_sub(
        "labels the sprocket",
        TestCase::sub_reconcile(&sprocket(3)),
        label_size,
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.resource: differs (-expected, +actual):",
            "+    \"labels\": {",
            "+      \"size\": \"3\"",
        ],
    );
}

#[tokio::test]
async fn stashed_json_values_pass_when_they_match() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &3),
        stash_size_as_json,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn stashed_json_values_fail_with_a_diff() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &4),
        stash_size_as_json,
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"stashes the size\" failed:",
            "expect.stashed.size: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-4",
            "+3",
        ],
    );
}

#[tokio::test]
async fn a_stash_key_nothing_was_stored_under_fails() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&sprocket(3)).expect_stashed("count", &3),
        stash_size_as_json,
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.stashed.count: nothing was stashed under this key"],
    );
}

fn typed_stash_table(case: TestCase) -> SubReconcilerTests {
    SubReconcilerTests::new()
        .crd(&Sprocket::crd())
        .stash_type(SIZE)
        .case("stashes the size", case)
}

#[tokio::test]
async fn stashed_typed_values_pass_when_they_match() {
    let report =
        typed_stash_table(TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &3))
            .check(|_| stash_size_typed())
            .await;
    passes(&report);
}

#[tokio::test]
async fn stashed_typed_values_fail_with_a_diff() {
    let report =
        typed_stash_table(TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &4))
            .check(|_| stash_size_typed())
            .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.stashed.size: differs (-expected, +actual):",
            "-4",
            "+3",
        ],
    );
}

#[tokio::test]
async fn a_typed_value_is_not_seen_without_its_stash_type() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&sprocket(3)).expect_stashed("size", &3),
        stash_size_typed,
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.stashed.size: nothing was stashed under this key"],
    );
}

#[tokio::test]
async fn given_stashed_values_reach_the_sub_reconciler_as_their_stash_type() {
    let report = SubReconcilerTests::new()
        .crd(&Sprocket::crd())
        .stash_type(SIZE)
        .case(
            "labels the stashed size",
            TestCase::sub_reconcile(&sprocket(3))
                .stash("size", &7)
                .expect_resource(&labelled_sprocket(3, "7"))
                .expect_stashed("size", &7),
        )
        .case(
            "a stashed value of the wrong type",
            TestCase::sub_reconcile(&sprocket(3)).stash("size", &"seven"),
        )
        .check(|_| label_stashed_size())
        .await;
    // Cases run in the order written: the stashed size first.
    assert_eq!(
        report.cases[0].status,
        CaseStatus::Passed,
        "{}",
        report.render(false)
    );
    assert_eq!(
        mismatches(&report, "a stashed value of the wrong type"),
        ["expect.error"]
    );
    assert_contains(
        &failure(&report),
        &["expect.error: the reconcile failed: stashed.size: not a i32"],
    );
}

#[tokio::test]
async fn sub_reconciler_cases_report_their_writes_too() {
    let report = SubReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "creates its config map",
            TestCase::sub_reconcile(&sprocket(3)).expect_create(&json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config", "labels": {"app": "w"}},
                "data": {"size": "2"},
            })),
        )
        .check(|_| create_config_map())
        .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.creates[0]: differs",
            "-    \"size\": \"2\"",
            "+    \"size\": \"3\"",
        ],
    );
}
