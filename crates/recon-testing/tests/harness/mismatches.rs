//! "Not observed" and "observed but not expected": every mismatch of every case is reported,
//! with or without colour.

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_testing::{EventRef, ReconcilerTestSuite, ReconcilerTests, TestCase, json_diff};
use serde_json::json;

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// "not observed" and "observed but not expected"; every mismatch, every case
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_expectation_that_was_not_observed_is_reported_with_what_was_expected() {
    let report = check(
        "deletes nothing",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_delete(delete_ref("w-config")),
        with(publish_size),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.deletes[0]: was not observed; expected:",
            "\"name\": \"w-config\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "deletes nothing"),
        ["expect.deletes[0]", "expect.events[0]"]
    );
}

#[tokio::test]
async fn an_observation_that_was_not_expected_is_reported_with_what_was_observed() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request()).given(&sprocket(4)),
        with(publish_size),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "events[0]: was observed but not expected:",
            "\"note\": \"size is 4\"",
            "\"reason\": \"Sized\"",
        ],
    );
}

#[tokio::test]
async fn every_mismatch_of_a_case_is_reported() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(EventRef::normal("StatusPatched", "Patched it")),
        with(set_ready),
    )
    .await;
    let text = failure(&report);
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.statusPatches[0]", "expect.events[0]"]
    );
    assert_contains(
        &text,
        &[
            "expect.statusPatches[0]: differs",
            "-      \"ready\": false",
            "+      \"ready\": true",
            "expect.events[0]: differs",
            "-  \"note\": \"Patched it\",",
            "+  \"note\": \"Patched status\",",
        ],
    );
    assert_eq!(
        text.matches("case \"patches its status\" failed:").count(),
        1
    );
}

#[tokio::test]
async fn every_failing_case_of_a_table_is_reported() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("a: wrong status", sets_ready(false))
        .case("b: passes", sets_ready(true))
        .case(
            "c: missing event",
            TestCase::reconcile(request())
                .given(&sprocket(0))
                .expect_status_patch(ready_patch(false)),
        )
        .check(with(set_ready))
        .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "2 of 3 cases failed, 0 skipped",
            "case \"a: wrong status\" failed:",
            "case \"c: missing event\" failed:",
            "events[0]: was observed but not expected:",
        ],
    );
    assert!(!text.contains("case \"b: passes\""), "{text}");
    let names: Vec<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a: wrong status", "b: passes", "c: missing event"]);
}

#[tokio::test]
async fn suites_run_their_cases_in_the_order_written() {
    let report = ReconcilerTestSuite::new()
        .crd(&Sprocket::crd())
        .case(
            TestCase::reconcile(request())
                .named("z first")
                .given(&sprocket(1)),
        )
        .case(
            TestCase::reconcile(request())
                .named("a second")
                .given(&sprocket(1)),
        )
        .check(with(reject_negative))
        .await;
    passes(&report);
    let names: Vec<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["z first", "a second"]);
}

// ---------------------------------------------------------------------------------------------
// colour
// ---------------------------------------------------------------------------------------------

#[test]
fn a_coloured_diff_has_ansi_codes() {
    let diff = json_diff(&json!({"ready": true}), &json!({"ready": false}), true).unwrap();
    assert_contains(
        &diff,
        &[
            "\x1b[31m--- expected\x1b[0m",
            "\x1b[32m+++ actual\x1b[0m",
            "\x1b[31m-  \"ready\": true\x1b[0m",
        ],
    );
    let plain = json_diff(&json!({"ready": true}), &json!({"ready": false}), false).unwrap();
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert_eq!(strip_ansi(&diff), plain);
}

#[test]
fn a_plain_render_has_no_ansi_codes_and_a_coloured_one_has() {
    // Whatever stderr is (a terminal or not), `render` colours only when asked.
    let report = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(check(
            "patches its status",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .expect_status_patch(ready_patch(false))
                .focus(),
            with(set_ready),
        ));
    let plain = report.render(false);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert_contains(
        &plain,
        &["-      \"ready\": false", "+      \"ready\": true"],
    );
    let coloured = report.render(true);
    assert_contains(
        &coloured,
        &[
            "\x1b[1;31mcase \"patches its status\" failed:\x1b[0m",
            "\x1b[1;31m1 of 1 cases are focused",
        ],
    );
    assert_eq!(strip_ansi(&coloured), plain);
}
