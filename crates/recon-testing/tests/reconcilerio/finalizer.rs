//! `reconcilers/finalizer_test.go`: `WithFinalizer` around a `SyncReconciler` whose hooks
//! publish `Sync` and `Finalize` events (Go's `c.Recorder.Event`).
//!
//! The finalizer is Go's `test-finalizer` (not the `test.finalizer` of
//! [`terminating`](crate::test_resource::terminating)). The expected patches keep Go's
//! `resourceVersion: "999"`, and no expected resource names one: the tables leave out the
//! fields the server sets unless a case asks for them. Go's `ReadyToClearFinalizer` hook is
//! synchronous and returns a bool; recon's (`ready_to_clear`) is async and may fail.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestWithFinalizer_Validate` (6 cases): `Validate` refuses a `WithFinalizer` without a
//!   finalizer or a reconciler, or (recursively) with an invalid one. recon's constructor
//!   takes both, so a missing one does not compile; an empty finalizer is accepted and
//!   neither added nor cleared; nothing is checked at setup (see `sync.rs`).

use kube::{CustomResourceExt, Resource};
use recon_core::{Context, Error, Event, SyncReconciler, WithFinalizer};
use recon_testing::{
    EventRef, FailureSpec, PatchRef, ReactorSpec, SubReconcilerTests, TestCase, TestEnv,
};
use serde_json::{Value, json};

use crate::test_resource::*;

/// Go's `testFinalizer`.
const TEST_FINALIZER: &str = "test-finalizer";

/// The test resource with `finalizers`, deleted (at [`deleted_at`]) when `deleted`.
fn resource(finalizers: &[&str], deleted: bool) -> TestResource {
    let mut r = test_resource();
    if !finalizers.is_empty() {
        r.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
    }
    if deleted {
        r.metadata.deletion_timestamp = Some(deleted_at());
    }
    r
}

/// Publishes `reason` with `note` about `resource`.
async fn publish(ctx: &Context, resource: &TestResource, reason: &str, note: &str) {
    ctx.publish(
        &resource.object_ref(&()),
        Event::normal(reason, reason, note),
    )
    .await;
}

/// Go's `InduceFailure("patch", "TestResource")`.
fn induce_patch_failure() -> ReactorSpec {
    ReactorSpec::new(
        "patch",
        "testresources",
        FailureSpec::Status {
            code: 500,
            reason: "InternalError".to_owned(),
            message: "inducing failure for patch TestResource".to_owned(),
        },
    )
}

/// The merge patch setting the finalizers to `finalizers` (`null`: none left).
fn finalizer_patch(finalizers: Value) -> PatchRef {
    PatchRef::merge(
        "TestResource",
        Some(NAMESPACE),
        NAME,
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": "999"}}),
    )
}

fn finalizer_patched() -> EventRef {
    EventRef::normal(
        "FinalizerPatched",
        &format!("Patched finalizer {TEST_FINALIZER:?}"),
    )
}

fn finalizer_patch_failed() -> EventRef {
    EventRef::warning(
        "FinalizerPatchFailed",
        &format!(
            "Failed to patch finalizer {TEST_FINALIZER:?}: inducing failure for patch TestResource"
        ),
    )
}

fn meta_str<'a>(env: &'a TestEnv, key: &str) -> Option<&'a str> {
    env.metadata(key).and_then(Value::as_str)
}

// ---- TestWithFinalizer ----

#[test]
fn with_finalizer() {
    let terminating = || resource(&[TEST_FINALIZER], true);
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "in sync",
            TestCase::sub_reconcile(&resource(&[TEST_FINALIZER], false))
                .expect_event(EventRef::normal("Sync", "")),
        )
        .case(
            "add finalizer",
            TestCase::sub_reconcile(&resource(&[], false))
                .expect_resource(&resource(&[TEST_FINALIZER], false))
                .expect_event(finalizer_patched())
                .expect_event(EventRef::normal("Sync", ""))
                .expect_patch(finalizer_patch(json!([TEST_FINALIZER]))),
        )
        .case(
            "error adding finalizer",
            TestCase::sub_reconcile(&resource(&[], false))
                .reactor(induce_patch_failure())
                .expect_error("inducing failure for patch TestResource")
                .expect_event(finalizer_patch_failed())
                .expect_patch(finalizer_patch(json!([TEST_FINALIZER]))),
        )
        .case(
            "keep finalizer until ready",
            TestCase::sub_reconcile(&terminating())
                .metadata("ReadyToClearFinalizer", &"not ready")
                .expect_resource(&terminating())
                .expect_event(EventRef::normal("Finalize", ""))
                .expect_event(EventRef::normal("ReadyToClearFinalizer", "not ready")),
        )
        .case(
            "clear finalizer",
            TestCase::sub_reconcile(&terminating())
                .expect_resource(&resource(&[], true))
                .expect_event(EventRef::normal("Finalize", ""))
                .expect_event(finalizer_patched())
                .expect_patch(finalizer_patch(Value::Null)),
        )
        .case(
            "error clearing finalizer",
            TestCase::sub_reconcile(&terminating())
                .reactor(induce_patch_failure())
                .expect_error("inducing failure for patch TestResource")
                .expect_event(EventRef::normal("Finalize", ""))
                .expect_event(finalizer_patch_failed())
                .expect_patch(finalizer_patch(Value::Null)),
        )
        .case(
            "keep finalizer on error",
            TestCase::sub_reconcile(&terminating())
                .metadata("FinalizerError", &"finalize error")
                .expect_error("finalize error")
                .expect_event(EventRef::normal("Finalize", "")),
        )
        .run(|env| {
            let sync_error = meta_str(env, "SyncError").map(str::to_owned);
            let finalize_error = meta_str(env, "FinalizerError").map(str::to_owned);
            let nested = SyncReconciler::<TestResource>::new("SyncReconciler")
                .sync_with(sync_error, async |ctx, error, resource| {
                    publish(ctx, resource, "Sync", "").await;
                    error.as_ref().map_or(Ok(()), |e| Err(Error::msg(e)))
                })
                .finalize_with(finalize_error, async |ctx, error, resource| {
                    publish(ctx, resource, "Finalize", "").await;
                    error.as_ref().map_or(Ok(()), |e| Err(Error::msg(e)))
                });
            let with_finalizer = WithFinalizer::new(TEST_FINALIZER, nested);
            match meta_str(env, "ReadyToClearFinalizer") {
                // The one note the cases give, so that the hook captures nothing.
                Some("not ready") => with_finalizer.ready_to_clear(async |ctx, resource| {
                    publish(ctx, resource, "ReadyToClearFinalizer", "not ready").await;
                    Ok(false)
                }),
                Some(other) => panic!("no ReadyToClearFinalizer note {other:?}"),
                None => with_finalizer,
            }
        });
}
