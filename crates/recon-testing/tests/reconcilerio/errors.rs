//! `reconcilers/errors_test.go`: `SuppressTransientErrors` (its default threshold, 3) around a
//! `SyncReconciler` that fails. The counts live in the instance, so a Go case's
//! `AdditionalReconciles` are [`TestCase::additional_reconcile`]s here, run by the instance
//! the case built.
//!
//! Go's `Verify` checks `errors.Is(err, ErrSkipStatusUpdate)`; here the sub-reconciler under
//! test is wrapped ([`Recorded`]) to stash that answer under `SkipStatusUpdate`, and each
//! reconcile expects it stashed (`true` below the threshold, `false` from it on). Go's
//! `ErrQuiet` and `ErrDurable` are `ErrorKind::Quiet` and `ErrorKind::Durable` signals.
//!
//! Go's "purge stale counters" cases reconcile at `now - 25h` and then at `now`, when Go's
//! `SuppressTransientErrors` lists the resources to drop the counts of those gone (the second
//! case makes that list fail). recon lists nothing: it forgets counts not touched for 24 hours
//! (`forget_after`), so the induced list failure never fires. The cases assert only that the
//! reconciles fail, which recon's do, and pass. Go's failing steps there return `ErrQuiet`,
//! which Go counts and recon does not (a quiet error has nothing to hide); neither case
//! observes the count.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestSuppressTransientErrors_Validate` (4 cases): `Validate` refuses a
//!   `SuppressTransientErrors` without a reconciler, or (recursively) with an invalid one.
//!   recon's constructor takes the reconciler, and nothing is checked at setup (see
//!   `sync.rs`).

use jiff::{SignedDuration, Timestamp};
use kube::CustomResourceExt;
use recon_core::{
    Context, Error, ErrorKind, Outcome, SubReconciler, SuppressTransientErrors, SyncReconciler,
};
use recon_testing::{DEFAULT_NOW, FailureSpec, ReactorSpec, SubReconcilerTests, TestCase, TestEnv};
use serde_json::{Value, json};

use crate::test_resource::*;

const BLUE_UID: &str = "11111111-1111-1111-1111-111111111111";
const GREEN_UID: &str = "22222222-2222-2222-2222-222222222222";

/// The stash key of Go's `errors.Is(err, ErrSkipStatusUpdate)`.
const SKIP_STATUS_UPDATE: &str = "SkipStatusUpdate";

/// `SuppressTransientErrors` recording, in the stash, whether its error skips the status
/// update.
struct Recorded(SuppressTransientErrors<TestResource>);

impl SubReconciler<TestResource> for Recorded {
    fn name(&self) -> &str {
        self.0.name()
    }

    async fn reconcile(
        &self,
        ctx: &Context,
        resource: &mut TestResource,
    ) -> Result<Outcome, Error> {
        let result = self.0.reconcile(ctx, resource).await;
        if let Err(err) = &result {
            ctx.stash()
                .store(SKIP_STATUS_UPDATE, json!(err.is_skip_status_update()));
        }
        result
    }
}

/// Go's `resourceBlue` (`blue`) or `resourceGreen` (`green`) at `generation`.
fn resource(name: &str, generation: i64) -> TestResource {
    let mut r = test_resource();
    r.metadata.name = Some(name.to_owned());
    r.metadata.generation = Some(generation);
    r.metadata.uid = Some(if name == "blue" { BLUE_UID } else { GREEN_UID }.to_owned());
    r.status = Some(ready_unknown_status());
    r
}

fn blue() -> TestResource {
    resource("blue", 1)
}

fn green() -> TestResource {
    resource("green", 1)
}

/// A reconcile of `r` failing with `an error`, its status update skipped (`true`) or not.
fn fails(r: &TestResource, skipped: bool) -> TestCase {
    TestCase::sub_reconcile(r)
        .expect_error("an error")
        .expect_stashed(SKIP_STATUS_UPDATE, &skipped)
}

/// An additional reconcile named `name` of [`fails`].
fn then(name: &str, r: &TestResource, skipped: bool) -> TestCase {
    fails(r, skipped).named(name)
}

/// Go's `now.Time.Add(-25 * time.Hour)`.
fn a_day_ago() -> Timestamp {
    let now: Timestamp = DEFAULT_NOW.parse().expect("a timestamp");
    now - SignedDuration::from_hours(25)
}

/// Go's `InduceFailure("list", "TestResourceList")`.
fn induce_list_failure() -> ReactorSpec {
    ReactorSpec::new(
        "list",
        "testresources",
        FailureSpec::Status {
            code: 500,
            reason: "InternalError".to_owned(),
            message: "inducing failure for list TestResourceList".to_owned(),
        },
    )
}

fn meta_str<'a>(env: &'a TestEnv, key: &str) -> Option<&'a str> {
    env.metadata(key).and_then(Value::as_str)
}

// ---- TestSuppressTransientErrors ----

#[test]
fn suppress_transient_errors() {
    let step = |name: &str| TestCase::sub_reconcile(&blue()).metadata("Sync", &name);
    // A reconcile a day before the case's `now`, failing quietly.
    let quiet = |r: &TestResource| TestCase::sub_reconcile(r).at(a_day_ago()).expect_error("");
    SubReconcilerTests::new()
        .crd(&TestResource::crd())
        .case("no error continues", step("succeeds"))
        .case(
            "transient error suppressed",
            fails(&blue(), true).metadata("Sync", &"fails"),
        )
        .case(
            "transient error suppressed until threshold",
            fails(&blue(), true)
                .metadata("Sync", &"fails")
                .additional_reconcile(then("still below threshold", &blue(), true))
                .additional_reconcile(then("at threshold", &blue(), false))
                .additional_reconcile(then("above threshold", &blue(), false)),
        )
        .case(
            "transient error suppressed until threshold, per resource",
            fails(&blue(), true)
                .metadata("Sync", &"fails")
                .additional_reconcile(then("start green", &green(), true))
                .additional_reconcile(then("blue still below threshold", &blue(), true))
                .additional_reconcile(then("green still below threshold", &green(), true))
                .additional_reconcile(then("blue at threshold", &blue(), false))
                .additional_reconcile(then("green at threshold", &green(), false))
                .additional_reconcile(then("blue above threshold", &blue(), false))
                .additional_reconcile(then("green above threshold", &green(), false)),
        )
        .case(
            "updated generation resets threshold",
            fails(&blue(), true)
                .metadata("Sync", &"fails")
                .additional_reconcile(then("still below threshold", &blue(), true))
                .additional_reconcile(then(
                    "bumped generation, counter reset",
                    &resource("blue", 2),
                    true,
                ))
                .additional_reconcile(then("still below threshold", &resource("blue", 2), true))
                .additional_reconcile(then(
                    "bumped generation again, counter reset",
                    &resource("blue", 3),
                    true,
                )),
        )
        .case(
            "durable error not suppressed",
            step("durable")
                .expect_error("")
                .expect_stashed(SKIP_STATUS_UPDATE, &false),
        )
        .case(
            "purge stale counters",
            quiet(&blue())
                .metadata("Sync", &"quiet")
                .additional_reconcile(quiet(&green()).named("other resource"))
                .additional_reconcile(
                    quiet(&green())
                        .named("purge")
                        .at(DEFAULT_NOW.parse().expect("a timestamp")),
                ),
        )
        .case(
            "purge stale counters fails",
            quiet(&blue())
                .metadata("Sync", &"quiet")
                .additional_reconcile(quiet(&green()).named("other resource"))
                .additional_reconcile(
                    quiet(&green())
                        .named("purge")
                        .at(DEFAULT_NOW.parse().expect("a timestamp"))
                        .reactor(induce_list_failure()),
                ),
        )
        .run(|env| {
            let sync = SyncReconciler::<TestResource>::new("SyncReconciler");
            let sync = match meta_str(env, "Sync") {
                Some("succeeds") => sync.sync(async |_, _| Ok(())),
                Some("fails") => sync.sync(async |_, _| Err::<(), _>(Error::msg("an error"))),
                Some("durable") => {
                    sync.sync(async |_, _| Err::<(), _>(Error::signal(ErrorKind::Durable)))
                }
                Some("quiet") => {
                    sync.sync(async |_, _| Err::<(), _>(Error::signal(ErrorKind::Quiet)))
                }
                other => panic!("no sync {other:?}"),
            };
            Recorded(SuppressTransientErrors::new(
                "SuppressTransientErrors",
                sync,
            ))
        });
}
