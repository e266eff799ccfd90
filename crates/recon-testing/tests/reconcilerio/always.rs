//! `reconcilers/always_test.go`: `Always`.
//!
//! The steps are scripted as in `sequence.rs`. Go's `Verify` hook, which receives the result and
//! the error, is [`Verified`] here: the sub-reconciler under test wrapped with a check of what it
//! returned, whose failure fails the case. As in `sequence.rs`, an error's outcome is compared
//! too (reconciler.io's harness compares the result only without an error).
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestAlways_Validate` (3 cases): `Validate` checks, recursively, that each step has its
//!   required hooks; recon checks nothing at setup (see `sync.rs`).

use std::time::Duration;

use kube::CustomResourceExt;
use recon_core::{Always, BoxSubReconciler, Context, Error, IntoBoxed, Outcome, SubReconciler};
use recon_testing::{ErrorSignal, SubReconcilerTests, TestEnv};

use crate::sequence::{bare, empty, minutes, resource, returns, running, running_bare, steps};
use crate::test_resource::*;

/// A check of what the sub-reconciler returned (Go's `Verify`).
type Check = fn(&Result<Outcome, Error>) -> Result<(), String>;

/// The sub-reconciler under test, with a check of what it returns: a failed check is the error
/// of the case.
struct Verified {
    inner: BoxSubReconciler<TestResource>,
    check: Check,
}

impl SubReconciler<TestResource> for Verified {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn reconcile(
        &self,
        ctx: &Context,
        resource: &mut TestResource,
    ) -> Result<Outcome, Error> {
        let result = self.inner.reconcile(ctx, resource).await;
        match (self.check)(&result) {
            Ok(()) => result,
            Err(why) => Err(Error::msg(format!("Verify: {why}"))),
        }
    }
}

/// Go's check that the returned error is not `ErrQuiet`.
fn not_quiet(result: &Result<Outcome, Error>) -> Result<(), String> {
    match result {
        Err(err) if err.is_quiet() => Err("expected returned error to not be ErrQuiet".into()),
        _ => Ok(()),
    }
}

/// The checks a case names in its `metadata.verify`.
fn check(env: &TestEnv) -> Option<Check> {
    match env.metadata("verify").and_then(|v| v.as_str()) {
        None => None,
        Some("not quiet") => Some(not_quiet),
        Some(other) => panic!("no check {other:?}"),
    }
}

// ---- TestAlways ----

#[test]
fn always() {
    let after = |d: Duration| returns(Outcome::requeue_after(d));
    let mut still_running = resource();
    still_running
        .status
        .get_or_insert_default()
        .fields
        .insert("still-running".to_owned(), "true".to_owned());
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "sub reconciler erred, keeps processing",
            running(&[
                empty().failing("reconciler error"),
                empty().setting_status_field("still-running"),
            ])
            .expect_error("reconciler error")
            .expect_resource(&still_running),
        )
        .case(
            "non-quiet errors remain non-quiet",
            running(&[empty().failing("not quiet"), empty()])
                .metadata("verify", &"not quiet")
                .expect_error("not quiet"),
        )
        .case(
            "mixed quiet and non-quiet errors are not quiet",
            running(&[empty().failing("not quiet"), empty().halting()])
                .metadata("verify", &"not quiet")
                .expect_error("not quiet"),
        )
        .case(
            "quiet errors remain quiet",
            // Go's `errors.Is(err, ErrQuiet)`.
            running(&[empty().halting(), after(minutes(1))])
                .expect_result(Outcome::requeue_after(minutes(1)))
                .expect_error("")
                .expect_error_signal(ErrorSignal::Quiet),
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
            // requeue the step asked for is returned with the error, by reconciler.io's Always
            // as by recon's.
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
            let inner = match bare(env) {
                true => steps.remove(0),
                false => Always::new(steps).boxed(),
            };
            match check(env) {
                Some(check) => Verified { inner, check }.boxed(),
                None => inner,
            }
        });
}
