//! `reconcilers/advice_test.go`: `Advice`.
//!
//! Go's `Before` may return a new `context.Context` whose values the advised reconciler reads;
//! recon's `before` hook shares values through the stash, which "before can replace the
//! context" uses instead.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestAdvice_Validate` (8 cases): `Validate` refuses an `Advice` without a `Reconciler`
//!   (`Advice::new` takes it) and checks the advised reconciler's required hooks recursively;
//!   recon checks nothing at setup (see `sync.rs`). An `Advice` with no hook of its own runs
//!   the advised reconciler.

use kube::{CustomResourceExt, Resource};
use recon_core::{Advice, Error, Event, Outcome, Stasher, SyncReconciler};
use recon_testing::{EventRef, SubReconcilerTests, TestCase};

use crate::sequence::resource;
use crate::test_resource::*;

/// What "before can replace the context" hands the advised reconciler: Go adds a context
/// value, here `before` stashes it.
const MESSAGE: Stasher<String> = Stasher::new("message");

/// `resource()` with `status.fields.message`.
fn with_message(message: &str) -> TestResource {
    let mut resource = resource();
    resource
        .status
        .get_or_insert_default()
        .fields
        .insert("message".to_owned(), message.to_owned());
    resource
}

/// The advised reconciler that publishes `Called` (Go's `c.Recorder.Event`).
fn publishes_called() -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("SyncReconciler").sync(async |ctx, resource| {
        let regarding = resource.object_ref(&());
        let called = Event::normal("Called", "Called", "reconciler called");
        ctx.publish(&regarding, called).await;
        Ok(())
    })
}

/// The advised reconciler that must not run.
fn unreachable() -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("SyncReconciler")
        .sync(async |_, _| Err::<(), _>(Error::msg("unreachable")))
}

/// The advised reconciler that writes `message` into the status.
fn writes_message(message: &'static str) -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("SyncReconciler").sync_with(
        message,
        async |_, &message, resource| {
            resource
                .status
                .get_or_insert_default()
                .fields
                .insert("message".to_owned(), message.to_owned());
            Ok(())
        },
    )
}

fn advice(variant: &str) -> Advice<TestResource> {
    match variant {
        "before stashes" => Advice::new(
            "Advice",
            SyncReconciler::<TestResource>::new("SyncReconciler").sync(async |ctx, resource| {
                let message = MESSAGE.retrieve(ctx)?;
                resource
                    .status
                    .get_or_insert_default()
                    .fields
                    .insert("message".to_owned(), message);
                Ok(())
            }),
        )
        .before(async |ctx, _| {
            MESSAGE.store(ctx, "hello world".to_owned());
            Ok(Outcome::done())
        }),
        "before requeues" => Advice::new("Advice", writes_message("reconciler called"))
            .before(async |_, _| Ok(Outcome::requeue())),
        "before fails" => Advice::new("Advice", unreachable())
            .before(async |_, _| Err::<(), _>(Error::msg("test"))),
        "before only" => {
            Advice::new("Advice", publishes_called()).before(async |_, _| Ok(Outcome::done()))
        }
        "around skips" => {
            Advice::new("Advice", unreachable()).around(async |_, _, _| Ok(Outcome::done()))
        }
        "around twice" => {
            Advice::new("Advice", publishes_called()).around(async |ctx, resource, nested| {
                let mut outcome = Outcome::done();
                for _ in 0..2 {
                    outcome = outcome.merge(nested.reconcile(ctx, resource).await?);
                }
                Ok(outcome)
            })
        }
        "after rewrites" => Advice::new(
            "Advice",
            SyncReconciler::<TestResource>::new("SyncReconciler")
                .sync(async |_, _| Err::<(), _>(Error::msg("test"))),
        )
        .after(async |_, _, result| match result {
            Err(_) => Ok(Outcome::requeue()),
            Ok(_) => Err(Error::msg("expected error")),
        }),
        other => panic!("no advice {other:?}"),
    }
}

// ---- TestAdvice ----

#[test]
fn advice_cases() {
    let case = |variant: &str| TestCase::sub_reconcile(&resource()).metadata("advice", &variant);
    let called = || EventRef::normal("Called", "reconciler called");
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "before can replace the context",
            case("before stashes").expect_resource(&with_message("hello world")),
        )
        .case(
            "before can augment the result",
            case("before requeues")
                .expect_result(Outcome::requeue())
                .expect_resource(&with_message("reconciler called")),
        )
        .case(
            "before errors return immediately",
            case("before fails").expect_error("test"),
        )
        .case(
            "around calls the reconciler by default",
            case("before only").expect_event(called()),
        )
        .case("around can skip the reconciler", case("around skips"))
        .case(
            "around can call into the reconciler multiple times",
            case("around twice")
                .expect_event(called())
                .expect_event(called()),
        )
        .case(
            "after can rewrite the result",
            case("after rewrites").expect_result(Outcome::requeue()),
        )
        .run(|env| {
            advice(
                env.metadata("advice")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default(),
            )
        });
}
