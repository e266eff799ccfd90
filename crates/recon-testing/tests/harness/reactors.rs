//! Reactors injecting failures into the fake API server.

use recon_testing::{FailureSpec, ReactorSpec, TestCase};

use crate::support::*;

fn conflict_on_configmap_patch() -> ReactorSpec {
    ReactorSpec {
        verb: "patch".into(),
        resource: "configmaps".into(),
        group: None,
        subresource: None,
        namespace: None,
        name: Some("w-config".into()),
        times: Some(1),
        fail: FailureSpec::Conflict,
    }
}

#[tokio::test]
async fn a_reactor_fails_the_write_and_the_case_can_expect_the_error() {
    let report = check(
        "conflict",
        with_config_map_at_1(2)
            .reactor(conflict_on_configmap_patch())
            // The refused patch was still sent: it is observed.
            .expect_patch(size_patch("2"))
            .expect_error("the object has been modified"),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_reactor_failure_not_expected_is_reported() {
    let report = check(
        "conflict",
        with_config_map_at_1(2)
            .reactor(conflict_on_configmap_patch())
            .expect_patch(size_patch("2")),
        with(patch_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.error: the reconcile failed: ",
            "the object has been modified",
        ],
    );
    assert_eq!(mismatches(&report, "conflict"), ["expect.error"]);
}

#[tokio::test]
async fn an_invalid_reactor_fails_the_case_setup() {
    let mut reactor = conflict_on_configmap_patch();
    reactor.verb = "frobnicate".into();
    let report = check(
        "bad reactor",
        TestCase::reconcile(request())
            .given(&sprocket(2))
            .reactor(reactor),
        with(patch_config_map),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["case setup: reactors[0]: \"frobnicate\" is not a verb"],
    );
}
