//! `reconcilers/sync_test.go`: `SyncReconciler`.
//!
//! Go's hooks fail the test with `t.Errorf` where they must not run; here they return an error,
//! which fails the case. A Go hook returning a result and an error returns the error carrying
//! the outcome here (`Error::with_outcome`), and recon's sub-reconciler tables compare that
//! outcome too (reconciler.io's compare the result only when there is no error; where a Go case
//! expects both, the result is the one its `SyncReconciler` returns).
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestSyncReconciler`, "context can be augmented in Prepare and accessed in Cleanup": Go's
//!   `context.Context` values added by the case; a recon case's hooks do not reach the
//!   reconcile's `Context`.
//! - `TestSyncReconciler_Validate` (8 cases): `Validate` refuses a reconciler with no `Sync`
//!   hook, or with both `Sync` and `SyncWithResult` (or `Finalize` and `FinalizeWithResult`).
//!   recon's builder has one slot for each hook, so setting both is setting the last; a
//!   `SyncReconciler` without a sync hook is accepted and does nothing (nothing is checked at
//!   setup).

use std::time::Duration;

use kube::CustomResourceExt;
use recon_core::{Error, ErrorKind, Outcome, SyncReconciler};
use recon_testing::{ErrorSignal, SubReconcilerTests, TestCase, TestEnv};

use crate::test_resource::*;

fn hours(h: u64) -> Duration {
    Duration::from_secs(h * 3600)
}

fn sub_reconciler(env: &TestEnv) -> &str {
    env.metadata("SubReconciler")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// A hook that must not run.
fn must_not_run(why: &'static str) -> Result<Outcome, Error> {
    Err(Error::msg(why))
}

/// The sub-reconcilers of `TestSyncReconciler`, by name.
fn sync_reconciler(name: &str) -> SyncReconciler<TestResource> {
    let sync = SyncReconciler::<TestResource>::new("SyncReconciler");
    match name {
        "noop" => sync.sync(async |_, _| Ok(())),
        "halts with a requeue" => sync.sync(async |_, _| {
            Err::<(), _>(
                Error::signal(ErrorKind::HaltSubReconcilers).with_outcome(Outcome::requeue()),
            )
        }),
        "fails" => sync.sync(async |_, _| Err::<(), _>(Error::msg("syncreconciler error"))),
        "syncs in 2h" => sync
            .sync(async |_, _| Ok(Outcome::requeue_after(hours(2))))
            .finalize(async |_, _| {
                must_not_run("reconciler should not call finalize for non-deleted resources")
            }),
        "finalizes in 3h" => sync
            .sync(async |_, _| {
                must_not_run("reconciler should not call sync for deleted resources")
            })
            .finalize(async |_, _| Ok(Outcome::requeue_after(hours(3)))),
        "finalize halts in 3h" => sync
            .sync(async |_, _| {
                must_not_run("reconciler should not call sync for deleted resources")
            })
            .finalize(async |_, _| {
                Err::<(), _>(
                    Error::signal(ErrorKind::HaltSubReconcilers)
                        .with_outcome(Outcome::requeue_after(hours(3))),
                )
            }),
        "syncs in 2h and finalizes in 3h" => sync
            .sync_during_finalization(true)
            .sync(async |_, _| Ok(Outcome::requeue_after(hours(2))))
            .finalize(async |_, _| Ok(Outcome::requeue_after(hours(3)))),
        "syncs in 3h and finalizes in 2h" => sync
            .sync_during_finalization(true)
            .sync(async |_, _| Ok(Outcome::requeue_after(hours(3))))
            .finalize(async |_, _| Ok(Outcome::requeue_after(hours(2)))),
        "finalize fails" => sync
            .sync(async |_, _| Ok(()))
            .finalize(async |_, _| Err::<(), _>(Error::msg("syncreconciler finalize error"))),
        other => panic!("no sub-reconciler {other:?}"),
    }
}

// ---- TestSyncReconciler ----

#[test]
fn sync_reconciler_cases() {
    let resource = || TestResource {
        status: Some(ready_unknown_status()),
        ..test_resource()
    };
    // Go's cases delete it at their `now`; when does not matter.
    let deleted = || TestResource {
        metadata: terminating(meta(NAME)),
        ..resource()
    };
    let case = |resource: TestResource, sub: &str| {
        TestCase::sub_reconcile(&resource).metadata("SubReconciler", &sub)
    };
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case("sync success", case(resource(), "noop"))
        .case(
            "sync with result halted",
            case(resource(), "halts with a requeue")
                .expect_result(Outcome::requeue())
                .expect_error("")
                .expect_error_signal(ErrorSignal::Halt),
        )
        .case(
            "sync error",
            case(resource(), "fails").expect_error("syncreconciler error"),
        )
        .case(
            "should not finalize non-deleted resources",
            case(resource(), "syncs in 2h").expect_result(Outcome::requeue_after(hours(2))),
        )
        .case(
            "should finalize deleted resources",
            case(deleted(), "finalizes in 3h").expect_result(Outcome::requeue_after(hours(3))),
        )
        .case(
            "finalize can halt subreconcilers",
            case(deleted(), "finalize halts in 3h")
                .expect_result(Outcome::requeue_after(hours(3)))
                .expect_error("")
                .expect_error_signal(ErrorSignal::Halt),
        )
        .case(
            "should finalize and sync deleted resources when asked to",
            case(deleted(), "syncs in 2h and finalizes in 3h")
                .expect_result(Outcome::requeue_after(hours(2))),
        )
        .case(
            "should finalize and sync deleted resources when asked to, shorter resync wins",
            case(deleted(), "syncs in 3h and finalizes in 2h")
                .expect_result(Outcome::requeue_after(hours(2))),
        )
        .case("finalize is optional", case(deleted(), "noop"))
        .case(
            "finalize error",
            case(deleted(), "finalize fails").expect_error("syncreconciler finalize error"),
        )
        .run(|env| sync_reconciler(sub_reconciler(env)));
}

// ---- TestSyncReconcilerDuck ----

#[test]
fn sync_reconciler_duck() {
    let resource = |mutation: &str| TestDuck {
        metadata: meta(NAME),
        spec: TestDuckSpec {
            fields: [("mutation".to_owned(), mutation.to_owned())].into(),
            ..TestDuckSpec::default()
        },
        status: Some(ready_unknown_status()),
    };
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "sync no mutation",
            TestCase::sub_reconcile(&resource("false")).metadata("SubReconciler", &"noop"),
        )
        .case(
            "sync with mutation",
            TestCase::sub_reconcile(&resource("false"))
                .metadata("SubReconciler", &"mutates")
                .expect_resource(&resource("true")),
        )
        .run(|env| {
            let sync = SyncReconciler::<TestDuck>::new("SyncReconciler");
            match sub_reconciler(env) {
                "noop" => sync.sync(async |_, _| Ok(())),
                "mutates" => sync.sync(async |_, duck| {
                    duck.spec
                        .fields
                        .insert("mutation".to_owned(), "true".to_owned());
                    Ok(())
                }),
                other => panic!("no sub-reconciler {other:?}"),
            }
        });
}
