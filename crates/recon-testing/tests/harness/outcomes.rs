//! Expected events, results and errors, `shouldPanic`, and error signals.

use std::time::Duration;

use recon_core::Outcome;
use recon_testing::{ErrorSignal, EventRef, OutcomeSpec, TestCase};

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn events_pass_when_type_reason_and_note_match() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request())
            .given(&sprocket(4))
            .expect_event(EventRef::normal("Sized", "size is 4")),
        with(publish_size),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn events_fail_with_a_diff_of_type_and_note() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request())
            .given(&sprocket(4))
            .expect_event(EventRef::warning("Sized", "size is 5")),
        with(publish_size),
    )
    .await;
    assert_differs(
        &report,
        "publishes its size",
        "expect.events[0]",
        &[
            "-  \"note\": \"size is 5\",",
            "+  \"note\": \"size is 4\",",
            "-  \"type\": \"Warning\"",
            "+  \"type\": \"Normal\"",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// result and error
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn result_passes_when_the_outcome_matches() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_result(Outcome::requeue_after(Duration::from_secs(30))),
        with(requeue_later),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn result_fails_with_a_diff_of_the_outcome() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_result(Outcome::requeue_after(Duration::from_secs(90))),
        with(requeue_later),
    )
    .await;
    assert_differs(
        &report,
        "requeues later",
        "expect.result",
        &[
            "-  \"requeueAfter\": \"1m 30s\"",
            "+  \"requeueAfter\": \"30s\"",
        ],
    );
}

#[tokio::test]
async fn result_defaults_to_nothing_more_to_do() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request()).given(&sprocket(1)),
        with(requeue_later),
    )
    .await;
    assert_eq!(mismatches(&report, "requeues later"), ["expect.result"]);
    assert_contains(
        &failure(&report),
        &["-{}", "+{", "+  \"requeueAfter\": \"30s\""],
    );
}

#[tokio::test]
async fn an_unreadable_requeue_after_fails_the_case() {
    let mut case = TestCase::reconcile(request()).given(&sprocket(1));
    case.expect.result = OutcomeSpec {
        requeue: false,
        requeue_after: Some("soon".into()),
    };
    let report = check("requeues later", case, with(requeue_later)).await;
    assert_contains(
        &failure(&report),
        &["case: result.requeueAfter \"soon\" is not a duration"],
    );
}

#[tokio::test]
async fn error_passes_when_the_message_contains_the_text() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&sprocket(-1))
            .expect_error("must not be negative"),
        with(reject_negative),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn an_empty_error_text_accepts_any_error() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&sprocket(-1))
            .expect_error(""),
        with(reject_negative),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn error_fails_when_the_message_does_not_contain_the_text() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&sprocket(-1))
            .expect_error("must be positive"),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"rejects a negative size\" failed:",
            "expect.error: the error \"size must not be negative, got -1\" does not contain \"must be positive\"",
        ],
    );
}

#[tokio::test]
async fn error_fails_when_the_reconcile_succeeds() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_error("must not be negative"),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.error: the reconcile succeeded; expected an error containing \"must not be negative\"",
        ],
    );
}

#[tokio::test]
async fn an_unexpected_error_fails_the_case_with_its_message() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request()).given(&sprocket(-1)),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.error: the reconcile failed: size must not be negative, got -1"],
    );
    assert_eq!(
        mismatches(&report, "rejects a negative size"),
        ["expect.error"],
        "no result is compared when the reconcile failed"
    );
}

// ---------------------------------------------------------------------------------------------
// shouldPanic
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn should_panic_passes_when_the_reconcile_panics() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request())
            .given(&sprocket(0))
            .should_panic(),
        with(panic_on_zero),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn should_panic_fails_when_the_reconcile_does_not_panic() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .should_panic(),
        with(panic_on_zero),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"panics on zero\" failed:",
            "shouldPanic: the reconcile did not panic",
        ],
    );
    assert_eq!(mismatches(&report, "panics on zero"), ["shouldPanic"]);
}

#[tokio::test]
async fn an_unexpected_panic_fails_the_case_with_its_message() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request()).given(&sprocket(0)),
        with(panic_on_zero),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["shouldPanic: the reconcile panicked: size is zero"],
    );
}

// ---------------------------------------------------------------------------------------------
// error signals
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_error_signal_the_error_does_not_carry_fails_the_case() {
    let report = check_sub(
        "a negative size is refused",
        TestCase::sub_reconcile(&sprocket(-1))
            .expect_error("size must not be negative")
            .expect_error_signal(ErrorSignal::Quiet),
        reject_negative,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &["expect.errorSignals: the error does not carry [Quiet]; it carries []"],
    );
}
