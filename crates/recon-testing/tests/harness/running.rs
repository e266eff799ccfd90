//! Running tables: skip and focus, suites, malformed cases, metadata, factory panics and the
//! results of failed reconciles.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_core::{Error, IntoBoxed, Outcome, ResourceReconciler, Sequence, SyncReconciler};
use recon_testing::{CaseStatus, ReconcilerTests, SubReconcilerTests, TestCase};
use serde_json::{Value, json};

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// skip and focus
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_skipped_case_is_not_run() {
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "skipped",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .expect_status_patch(ready_patch(false))
                .prepare(move |_| {
                    *counter.lock().unwrap() += 1;
                    Ok(())
                })
                .skip(),
        )
        .case("runs", sets_ready(true))
        .check(with(set_ready))
        .await;
    passes(&report);
    assert_eq!(*ran.lock().unwrap(), 0);
    assert_eq!(report.cases[0].name, "skipped");
    assert_eq!(report.cases[0].status, CaseStatus::Skipped);
    assert!(
        report
            .render(false)
            .starts_with("0 of 2 cases failed, 1 skipped\n")
    );
}

#[tokio::test]
async fn a_focused_table_runs_only_focused_cases_and_never_passes() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("focused", sets_ready(true).focus())
        .case(
            "left out",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .expect_status_patch(ready_patch(false)),
        )
        .check(with(set_ready))
        .await;
    assert_eq!(report.focused, 1);
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_eq!(report.cases[1].status, CaseStatus::Skipped);
    assert!(!report.passed(), "a focused table must not pass");
    let text = report.render(false);
    assert_contains(
        &text,
        &[
            "0 of 2 cases failed, 1 skipped",
            "1 of 2 cases are focused: remove `focus` before committing",
        ],
    );
    assert!(!text.contains("case \"left out\""), "{text}");
}

// ---------------------------------------------------------------------------------------------
// running tables
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn assert_passed_panics_with_the_rendered_report() {
    let report = check("patches its status", sets_ready(false), with(set_ready)).await;
    let caught = std::panic::catch_unwind(|| report.assert_passed()).unwrap_err();
    let message = panic_message(caught);
    // The colour of the diffs depends on the terminal (see the colour tests); the text does not.
    assert_eq!(strip_ansi(&message), strip_ansi(&report.render(false)));
    assert_contains(&message, &["expect.statusPatches[0]"]);
}

#[tokio::test]
async fn assert_passed_does_not_panic_for_a_passing_report() {
    let report = check("patches its status", sets_ready(true), with(set_ready)).await;
    report.assert_passed();
}

#[test]
fn run_needs_no_runtime_and_passes_quietly() {
    ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("patches its status", sets_ready(true))
        .run(with(set_ready));
}

#[test]
fn run_panics_with_the_report_when_a_case_fails() {
    let table = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("patches its status", sets_ready(false));
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| table.run(with(set_ready)))).unwrap_err();
    assert_contains(
        &strip_ansi(&panic_message(caught)),
        &[
            "case \"patches its status\" failed:",
            "-      \"ready\": false",
        ],
    );
}

#[tokio::test]
async fn run_inside_a_runtime_points_to_run_async() {
    let table = ReconcilerTests::new().crd(&Sprocket::crd());
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| table.run(with(set_ready)))).unwrap_err();
    assert_contains(
        &panic_message(caught),
        &["call `run_async(..).await` instead"],
    );
}

#[tokio::test]
async fn run_async_passes_quietly() {
    ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("patches its status", sets_ready(true))
        .run_async(with(set_ready))
        .await;
}

// ---------------------------------------------------------------------------------------------
// malformed cases
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_reconciler_case_without_a_request_fails() {
    let mut case = TestCase::reconcile(request()).given(&sprocket(1));
    case.request = None;
    let report = check("no request", case, with(set_ready)).await;
    assert_contains(
        &failure(&report),
        &[
            "case \"no request\" failed:",
            "case: a reconciler case needs a `request`",
        ],
    );
}

#[tokio::test]
async fn sub_reconciler_fields_in_a_reconciler_case_fail() {
    let report = check(
        "sub fields",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_resource(&sprocket(1))
            .expect_stashed("size", &1),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case: `resource` belongs to sub-reconciler cases; give the object in `given`",
            "case: `stashed` belongs to sub-reconciler cases",
        ],
    );
}

#[tokio::test]
async fn a_sub_reconciler_case_without_a_resource_fails() {
    let report = check_sub("no resource", TestCase::reconcile(request()), label_size).await;
    assert_contains(
        &failure(&report),
        &[
            "case: a sub-reconciler case needs a `resource`",
            "case: `request` belongs to reconciler cases; the resource's name is the request",
        ],
    );
}

#[tokio::test]
async fn an_object_the_cluster_cannot_hold_fails_the_case_setup() {
    let report = check(
        "unknown kind",
        TestCase::reconcile(request()).given(&json!({
            "apiVersion": "example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": "g", "namespace": "default"},
        })),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case setup: given[0]: no served resource has apiVersion \"example.com/v1\" and kind \"Gizmo\"",
        ],
    );
}

#[tokio::test]
async fn a_duplicate_case_name_is_not_silently_dropped() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("patches its status", sets_ready(false))
        .case("patches its status", sets_ready(true))
        .check(with(set_ready))
        .await;
    assert!(
        report.cases.len() == 2 || !report.passed(),
        "the first case was dropped without a word: {report:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// metadata, factory panics, results of failed reconciles
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_factory_reads_each_cases_metadata_to_build_its_reconciler() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "ready",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .metadata("step", &"set_ready")
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "untouched",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .metadata("step", &"none"),
        )
        .check(|env| {
            let step = env.metadata("step").and_then(Value::as_str);
            let sub = match step {
                Some("set_ready") => set_ready(),
                _ => SyncReconciler::<Sprocket>::new("Noop").sync(async |_, _| Ok(())),
            };
            ResourceReconciler::new(env.config(), sub)
        })
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_factory_that_panics_fails_its_case_and_the_others_still_run() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "needs another config",
            TestCase::reconcile(request()).given(&sprocket(1)),
        )
        .case(
            "needs nothing",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .metadata("plain", &true)
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .check(|env| {
            let config = match env.metadata("plain") {
                Some(_) => env.config(),
                None => env.config_named("other").expect("a config named other"),
            };
            ResourceReconciler::new(config, set_ready())
        })
        .await;
    assert_eq!(mismatches(&report, "needs another config"), ["shouldPanic"]);
    assert_contains(
        &failure(&report),
        &["the factory panicked: a config named other"],
    );
    assert_eq!(report.cases[1].status, CaseStatus::Passed);
}

/// A sequence asking for a requeue in 10s, then failing: its error carries the requeue.
fn requeue_then_fail() -> Sequence<Sprocket> {
    let requeue = SyncReconciler::<Sprocket>::new("Requeue")
        .sync(async |_, _| Ok(Outcome::requeue_after(Duration::from_secs(10))));
    let fail =
        SyncReconciler::<Sprocket>::new("Fail").sync(async |_, _| Err::<(), _>(Error::msg("boom")));
    Sequence::new([requeue.boxed(), fail.boxed()])
}

#[tokio::test]
async fn a_sub_reconcilers_error_must_carry_the_expected_result() {
    let table = |result: Outcome| {
        SubReconcilerTests::new().crd(&Sprocket::crd()).case(
            "fails after asking for a requeue",
            TestCase::sub_reconcile(&sprocket(1))
                .expect_error("boom")
                .expect_result(result),
        )
    };
    passes(
        &table(Outcome::requeue_after(Duration::from_secs(10)))
            .check(|_| requeue_then_fail())
            .await,
    );
    let report = table(Outcome::done()).check(|_| requeue_then_fail()).await;
    assert_eq!(
        mismatches(&report, "fails after asking for a requeue"),
        ["expect.result"]
    );
    assert_contains(&failure(&report), &["+  \"requeueAfter\": \"10s\""]);
}

#[tokio::test]
async fn a_reconciler_case_cannot_expect_both_an_error_and_a_result() {
    let report = check(
        "fails",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_error("boom")
            .expect_result(Outcome::requeue()),
        |env| ResourceReconciler::new(env.config(), requeue_then_fail()),
    )
    .await;
    assert_eq!(mismatches(&report, "fails"), ["case"]);
    assert_contains(&failure(&report), &["expect only the error"]);
}
