//! `reconcilers/sequence_test.go`: `Sequence`.
//!
//! Go's cases build sequences of `SyncReconciler`s that each return a result and maybe an error;
//! here each case's `metadata` lists those returns ([`Returns`]) and the factory builds the
//! steps from them ([`scripted`]), as `always.rs` does too.
//!
//! reconciler.io's harness compares a sub-reconciler's result only when it returns no error;
//! recon's compares the outcome the error carries as well. Where a Go case expects an error
//! and a result, or an error only while its steps return a result beside the error, the case
//! here expects what reconciler.io's `Sequence` returns with that error, which is also what
//! recon's carries; the comments say where that is not the Go case's `ExpectedResult`.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestSequence_Validate` (3 cases): `Validate` checks, recursively, that each step has its
//!   required hooks; recon checks nothing at setup (see `sync.rs`).

use std::time::Duration;

use kube::CustomResourceExt;
use recon_core::{
    BoxSubReconciler, Error, ErrorKind, IntoBoxed, Outcome, Sequence, SyncReconciler,
};
use recon_testing::{ErrorSignal, OutcomeSpec, SubReconcilerTests, TestCase, TestEnv};
use serde::{Deserialize, Serialize};

use crate::test_resource::*;

/// What a scripted step returns: its result and maybe an error.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Returns {
    /// The step's result (with the error, what the error carries).
    result: OutcomeSpec,
    /// The step's error, if any.
    error: Option<Fails>,
    /// Before returning, the step sets `status.fields[key]` to `"true"`.
    sets_status_field: Option<String>,
}

/// A step's error.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Fails {
    /// A (loud) error with this message.
    Message(String),
    /// `ErrHaltSubReconcilers`.
    Halt,
}

/// A step returning `outcome`.
pub fn returns(outcome: Outcome) -> Returns {
    Returns {
        result: OutcomeSpec::of(outcome),
        error: None,
        sets_status_field: None,
    }
}

/// A step returning nothing (`Result{}`).
pub fn empty() -> Returns {
    returns(Outcome::done())
}

impl Returns {
    /// The same step, failing with `message`.
    pub fn failing(mut self, message: &str) -> Self {
        self.error = Some(Fails::Message(message.to_owned()));
        self
    }

    /// The same step, halting the sub-reconcilers.
    pub fn halting(mut self) -> Self {
        self.error = Some(Fails::Halt);
        self
    }

    /// The same step, setting `status.fields[key]` to `"true"` first.
    pub fn setting_status_field(mut self, key: &str) -> Self {
        self.sets_status_field = Some(key.to_owned());
        self
    }
}

/// The step that returns what `returns` says.
pub fn scripted(returns: Returns) -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("SyncReconciler").sync_with(
        returns,
        async |_, returns, resource| {
            if let Some(key) = returns.sets_status_field.clone() {
                resource
                    .status
                    .get_or_insert_default()
                    .fields
                    .insert(key, "true".to_owned());
            }
            let outcome = returns.result.outcome().map_err(Error::msg)?;
            match &returns.error {
                None => Ok(outcome),
                Some(Fails::Message(message)) => Err(Error::msg(message).with_outcome(outcome)),
                Some(Fails::Halt) => {
                    Err(Error::signal(ErrorKind::HaltSubReconcilers).with_outcome(outcome))
                }
            }
        },
    )
}

/// The steps a case lists in its `metadata.steps`.
pub fn steps(env: &TestEnv) -> Vec<BoxSubReconciler<TestResource>> {
    let listed: Vec<Returns> = env
        .metadata("steps")
        .map(|steps| serde_json::from_value(steps.clone()).expect("scripted steps"))
        .unwrap_or_default();
    listed
        .into_iter()
        .map(|returns| scripted(returns).boxed())
        .collect()
}

/// Whether the case's sub-reconciler is the one step itself, not a combinator of its steps.
pub fn bare(env: &TestEnv) -> bool {
    env.metadata("bare").is_some()
}

/// The resource of every case: the `Ready` condition the dies give.
pub fn resource() -> TestResource {
    TestResource {
        status: Some(ready_unknown_status()),
        ..test_resource()
    }
}

/// A case running `steps`.
pub fn running(steps: &[Returns]) -> TestCase {
    TestCase::sub_reconcile(&resource()).metadata("steps", &steps)
}

/// A case running the one step `step` by itself, outside a combinator.
pub fn running_bare(step: Returns) -> TestCase {
    running(&[step]).metadata("bare", &true)
}

pub fn minutes(m: u64) -> Duration {
    Duration::from_secs(m * 60)
}

// ---- TestSequence ----

#[test]
fn sequence() {
    let after = |d: Duration| returns(Outcome::requeue_after(d));
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "sub reconciler erred",
            running(&[empty().failing("reconciler error")]).expect_error("reconciler error"),
        )
        .case(
            "preserves result, sub reconciler halted",
            // reconciler.io's Sequence returns the halting step's result (1s) with its error,
            // and its harness does not compare it (the case's `ExpectedResult` of 1m is never
            // checked); recon's error carries the sequence's outcome, the smaller delay of 1m
            // and 1s.
            running(&[after(minutes(1)), after(Duration::from_secs(1)).halting()])
                .expect_error("")
                .expect_error_signal(ErrorSignal::Halt)
                .expect_result(Outcome::requeue_after(Duration::from_secs(1))),
        )
        .case(
            "preserves result, Requeue",
            running_bare(returns(Outcome::requeue())).expect_result(Outcome::requeue()),
        )
        .case(
            "preserves result, RequeueAfter",
            running(&[after(minutes(1))]).expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "ignores result on err",
            // The Go case's `ExpectedResult` (none) is not checked with an error; the
            // requeue the step asked for is returned with the error, by reconciler.io's
            // Sequence as by recon's.
            running(&[returns(Outcome::requeue()).failing("test error")])
                .expect_error("test error")
                .expect_result(Outcome::requeue()),
        )
        .case(
            "Requeue + empty => Requeue",
            running(&[returns(Outcome::requeue()), empty()]).expect_result(Outcome::requeue()),
        )
        .case(
            "empty + Requeue => Requeue",
            running(&[empty(), returns(Outcome::requeue())]).expect_result(Outcome::requeue()),
        )
        .case(
            "RequeueAfter + empty => RequeueAfter",
            running(&[after(minutes(1)), empty()])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "empty + RequeueAfter => RequeueAfter",
            running(&[empty(), after(minutes(1))])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "RequeueAfter + Requeue => RequeueAfter",
            running(&[after(minutes(1)), returns(Outcome::requeue())])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "Requeue + RequeueAfter => RequeueAfter",
            running(&[returns(Outcome::requeue()), after(minutes(1))])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "RequeueAfter(1m) + RequeueAfter(2m) => RequeueAfter(1m)",
            running(&[after(minutes(1)), after(minutes(2))])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .case(
            "RequeueAfter(2m) + RequeueAfter(1m) => RequeueAfter(1m)",
            running(&[after(minutes(2)), after(minutes(1))])
                .expect_result(Outcome::requeue_after(minutes(1))),
        )
        .run(|env| {
            let mut steps = steps(env);
            match bare(env) {
                true => steps.remove(0),
                false => Sequence::new(steps).boxed(),
            }
        });
}
