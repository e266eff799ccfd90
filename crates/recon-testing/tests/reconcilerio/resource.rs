//! `reconcilers/resource_test.go`: the root `ResourceReconciler`.
//!
//! Each Go test function is a table here, each Go case a case of the same name. Go's cases put
//! the sub-reconciler (and the hooks) in their `Metadata` as closures; here `metadata` names
//! them and the table's factory builds them. The roots are built as reconciler.io's are for
//! each type: they default the resource as read (every test type has a `Default`), manage its
//! conditions and `observedGeneration`, and write status with a `PUT /status` for a typed
//! resource (`StatusStrategy::Update`) and a merge patch for a duck (`StatusStrategy::MergePatch`,
//! Go's `client.MergeFrom`, without a lock).
//!
//! The Go fake leaves a created resource's `generation` at 0, so a given resource whose status
//! omits `observedGeneration` is in sync; the in-memory API server gives a custom resource
//! generation 1, so the same given resource states `observedGeneration: 1` here (a managed root
//! would otherwise record it and write the status, which the Go case does not expect).
//!
//! Go's induced failures are plain errors ("inducing failure for update TestResource"); here
//! they are a 500 with that message, which recon reports as Go does.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestResourceReconciler_Duck` and `TestResourceReconciler`, "context has resource type":
//!   Go stashes the resource's type in the context for reflection; in Rust it is the type
//!   parameter, and nothing is stashed.
//! - `TestResourceReconciler_Duck` and `TestResourceReconciler`, "context can be augmented in
//!   Prepare and accessed in Cleanup": Go's `context.Context` values added by the case; a recon
//!   case's hooks do not reach the reconcile's `Context` (what a step shares is the stash, which
//!   "context is stashable" and "before reconcile can replace the context" cover).
//! - `TestResourceReconciler_LegacyDefault` and `TestResourceReconciler_ObjectDefault` (2 cases
//!   each): Go's three defaulter interfaces (`Default(ctx)`, `Default()`,
//!   `Default(ctx, runtime.Object)`); Rust has the one `default_resource` hook, which
//!   `TestResourceReconciler_Default` covers with the same two cases.
//! - `TestResourceReconciler_Validate_TestResource` (5), `..._TestResourceNoStatus`,
//!   `..._TestResourceEmptyStatus` and `..._TestResourceNilableStatus` (1 each): `Validate`
//!   checks a required `Reconciler` (the Rust constructor takes it) and logs what the type's
//!   status lacks, found by reflection (in Rust, `manage_status` only compiles for a status that
//!   is a `ConditionedStatus`).
//!
//! Kept out, a listed difference (recon_core::guide::reconciler_io):
//! - `TestResourceReconciler`, "status update conflicts are silenced": a status write conflict
//!   is retried or requeued by the `ConflictPolicy`; reconciler.io returns an empty result.
//!
//! Differing (kept, skipped, `// differs:` says what recon does):
//! - `TestResourceReconciler_NilableStatus`, "nil status".
//! - `TestResourceReconciler_Duck`, "status conditions are initialized", "reconciler mutated
//!   status", "sub reconciler halted" and "status patch failed": the body of the status patch.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::{CustomResourceExt, Resource};
use recon_core::{
    BoxSubReconciler, Context, Error, ErrorKind, Event, EventLog, IntoBoxed, Outcome, Request,
    ResourceReconciler, Sequence, Stasher, StatusStrategy, SubReconciler, SyncReconciler,
};
use recon_testing::{
    ErrorSignal, EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests, TestCase, TestEnv,
};
use serde_json::json;

use crate::test_resource::*;

// ---- Shared ----

/// A reconcile of `name` in [`NAMESPACE`].
fn request_for(name: &str) -> TestCase {
    TestCase::reconcile(Request::namespaced(NAMESPACE, name))
}

/// A reconcile of [`NAME`].
fn request() -> TestCase {
    request_for(NAME)
}

/// The case's `metadata[key]` as a string (`""` when absent).
fn meta_str<'a>(env: &'a TestEnv, key: &str) -> &'a str {
    env.metadata(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// The case's `metadata[key]` as a flag.
fn meta_flag(env: &TestEnv, key: &str) -> bool {
    env.metadata(key)
        .and_then(|v| v.as_bool())
        .unwrap_or_default()
}

/// Go's `InduceFailure(verb, kind, ...)` without an error of its own: a 500 saying so.
fn induce(verb: &str, plural: &str, what: &str) -> ReactorSpec {
    ReactorSpec::new(
        verb,
        plural,
        FailureSpec::Status {
            code: 500,
            reason: "InternalError".to_owned(),
            message: format!("inducing failure for {verb} {what}"),
        },
    )
}

fn status_updated() -> EventRef {
    EventRef::normal("StatusUpdated", "Updated status")
}

fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

/// `status` with `observedGeneration` 1: in sync with the in-memory server's generation (see
/// the module docs).
fn in_sync(status: TestResourceStatus) -> Option<TestResourceStatus> {
    Some(TestResourceStatus {
        observed_generation: Some(1),
        ..status
    })
}

/// `givenResource` of the Go tests: the `Ready` condition the dies give, in sync.
fn given_resource() -> TestResource {
    TestResource {
        status: in_sync(ready_unknown_status()),
        ..test_resource()
    }
}

/// `resource` with `status.fields[key] = value` (the dies' `AddField`).
fn with_status_field(mut resource: TestResource, key: &str, value: &str) -> TestResource {
    resource
        .status
        .get_or_insert_default()
        .fields
        .insert(key.to_owned(), value.to_owned());
    resource
}

/// `resource` with the status conditions the dies' `ConditionsDie()` leave: none.
fn without_conditions(mut resource: TestResource) -> TestResource {
    resource.status.get_or_insert_default().conditions.clear();
    resource
}

/// `resource` deleted, kept by a finalizer.
fn deleted(mut resource: TestResource) -> TestResource {
    resource.metadata = terminating(resource.metadata);
    resource
}

/// The status fields a sub-reconciler writes.
fn status_fields(resource: &mut TestResource) -> &mut std::collections::BTreeMap<String, String> {
    &mut resource.status.get_or_insert_default().fields
}

/// Publishes an event about `resource` (reconciler.io's `c.Recorder.Eventf`).
async fn publish(ctx: &Context, resource: &impl Resource<DynamicType = ()>, reason: &str) {
    ctx.publish(&resource.object_ref(&()), Event::normal(reason, reason, ""))
        .await;
}

/// Checks that the sub-reconciler sees the resource defaulted (`t.Errorf` in Go).
fn check_defaulted(fields: &std::collections::BTreeMap<String, String>) -> Result<(), Error> {
    match fields.get("Defaulter").map(String::as_str) {
        Some("ran") => Ok(()),
        actual => Err(Error::msg(format!(
            "unexpected default value, actually = {actual:?}, expected = ran"
        ))),
    }
}

/// Checks that the sub-reconciler sees the conditions initialized (transition times aside).
fn check_initialized(conditions: &[recon_core::Condition]) -> Result<(), Error> {
    let seen: Vec<_> = conditions
        .iter()
        .map(|c| (&c.type_, &c.status, &c.reason, &c.message))
        .collect();
    let ready = ready_unknown();
    let expected = vec![(&ready.type_, &ready.status, &ready.reason, &ready.message)];
    if seen == expected {
        Ok(())
    } else {
        Err(Error::msg(format!("unexpected conditions: {seen:?}")))
    }
}

/// A step checking that the context's config and original config are the config the
/// reconciler was built with: each publishes a probe into the case's event log (which is then
/// emptied again, so the probes are not expected events).
pub(crate) fn checks_config<R>(log: EventLog) -> SyncReconciler<R>
where
    R: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    SyncReconciler::<R>::new("ChecksConfig").sync_with(log, async |ctx, log, resource| {
        let regarding = resource.object_ref(&());
        for (which, config) in [
            ("config", ctx.config()),
            ("original config", ctx.original_config()),
        ] {
            let probe = Event::normal("Probe", "Probe", which);
            config.recorder().publish(&probe, &regarding).await?;
            let seen = log.events();
            if seen.len() != 1 || seen[0].event != probe {
                return Err(Error::msg(format!(
                    "expected the reconciler's {which} in the context"
                )));
            }
            log.clear();
        }
        Ok(())
    })
}

/// A step storing a value in the stash (Go's `stash.StoreValue` panics without a stash).
fn stashes<R: Resource + Send + Sync + 'static>() -> SyncReconciler<R> {
    SyncReconciler::<R>::new("Stashes").sync(async |ctx, _| {
        ctx.stash().store("foo", "bar".to_owned());
        Ok(())
    })
}

/// A step that must not run: it fails with `why`.
fn not_called<R: Resource + Send + Sync + 'static>(why: &str) -> SyncReconciler<R> {
    let why = why.to_owned();
    SyncReconciler::<R>::new("NotCalled")
        .sync_with(why, async |_, why, _| Err::<(), _>(Error::msg(why)))
}

/// A step that does nothing.
fn noop<R: Resource + Send + Sync + 'static>() -> SyncReconciler<R> {
    SyncReconciler::<R>::new("Noop").sync(async |_, _| Ok(()))
}

// ---- TestResourceReconciler_NoStatus ----

#[test]
fn resource_reconciler_no_status() {
    let mut resource = TestResourceNoStatus {
        metadata: meta("test-resource-no-status"),
        spec: TestResourceNoStatusSpec::default(),
    };
    resource.metadata.annotations = Some([("blah".to_owned(), "blah".to_owned())].into());
    ReconcilerTests::new()
        .crd(&TestResourceNoStatus::crd())
        .case(
            "resource exists",
            request_for("test-resource-no-status")
                .given(&resource)
                .metadata("SubReconciler", &"noop"),
        )
        .run(|env| {
            let sub = match meta_str(env, "SubReconciler") {
                "noop" => noop::<TestResourceNoStatus>(),
                other => panic!("no sub-reconciler {other:?}"),
            };
            ResourceReconciler::new(env.config(), sub)
                .default_resource(default_fields)
                .status_strategy(StatusStrategy::Update)
        });
}

// ---- TestResourceReconciler_EmptyStatus ----

#[test]
fn resource_reconciler_empty_status() {
    let mut resource = TestResourceEmptyStatus {
        metadata: meta("test-resource-empty-status"),
        spec: TestResourceEmptyStatusSpec::default(),
        status: None,
    };
    resource.metadata.annotations = Some([("blah".to_owned(), "blah".to_owned())].into());
    ReconcilerTests::new()
        .crd(&TestResourceEmptyStatus::crd())
        .case(
            "resource exists",
            request_for("test-resource-empty-status")
                .given(&resource)
                .metadata("SubReconciler", &"noop"),
        )
        .run(|env| {
            let sub = match meta_str(env, "SubReconciler") {
                "noop" => noop::<TestResourceEmptyStatus>(),
                other => panic!("no sub-reconciler {other:?}"),
            };
            ResourceReconciler::new(env.config(), sub)
                .default_resource(default_fields)
                .status_strategy(StatusStrategy::Update)
        });
}

// ---- TestResourceReconciler_NilableStatus ----

/// The nilable status of Go is Rust's `Option`: `TestResource` itself.
#[test]
fn resource_reconciler_nilable_status() {
    let resource = || TestResource {
        status: in_sync(ready_unknown_status()),
        ..test_resource()
    };
    let status_update_failure =
        || induce("update", "testresources", "TestResourceNilableStatus").subresource("status");
    ReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "nil status",
            // differs: `manage_status` gives the resource a status before the tree runs (the
            // sub-reconciler sees `Ready` initialized, and the new status is written with a
            // StatusUpdated event); reconciler.io leaves a nil status pointer alone.
            request()
                .given(&TestResource {
                    status: None,
                    ..resource()
                })
                .metadata("SubReconciler", &"expects a nil status")
                .skip(),
        )
        .case(
            "status conditions are initialized",
            request()
                .given(&without_conditions(resource()))
                .metadata("SubReconciler", &"expects initialized conditions")
                .expect_event(status_updated())
                .expect_status_update(&resource()),
        )
        .case(
            "reconciler mutated status",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(status_updated())
                .expect_status_update(&with_status_field(resource(), "Reconciler", "ran")),
        )
        .case(
            "status update failed",
            request()
                .given(&resource())
                .reactor(status_update_failure())
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(EventRef::warning(
                    "StatusUpdateFailed",
                    "Failed to update status: inducing failure for update TestResourceNilableStatus",
                ))
                .expect_status_update(&with_status_field(resource(), "Reconciler", "ran"))
                .expect_error(""),
        )
        .run(|env| {
            let sub = match meta_str(env, "SubReconciler") {
                "expects a nil status" => {
                    SyncReconciler::<TestResource>::new("ExpectsNilStatus").sync(async |_, r| {
                        match &r.status {
                            None => Ok(()),
                            Some(_) => Err(Error::msg("status expected to be nil")),
                        }
                    })
                }
                "expects initialized conditions" => expects_initialized(),
                "marks Reconciler ran" => marks_reconciler_ran(),
                other => panic!("no sub-reconciler {other:?}"),
            };
            typed_root(env, sub)
        });
}

/// The root reconciler.io builds for a typed resource: defaulting it, managing its status, and
/// writing status with a `PUT`.
fn typed_root(
    env: &TestEnv,
    sub: impl SubReconciler<TestResource> + 'static,
) -> ResourceReconciler<TestResource> {
    ResourceReconciler::new(env.config(), sub)
        .default_resource(default_fields)
        .manage_status()
        .status_strategy(StatusStrategy::Update)
}

fn expects_initialized() -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("ExpectsInitializedConditions")
        .sync(async |_, r| check_initialized(r.status.as_ref().map_or(&[][..], |s| &s.conditions)))
}

fn marks_reconciler_ran() -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new("MarksReconcilerRan").sync(async |_, r| {
        status_fields(r).insert("Reconciler".to_owned(), "ran".to_owned());
        Ok(())
    })
}

// ---- TestResourceReconciler_Unstructured ----

#[test]
fn resource_reconciler_unstructured() {
    // Go's resource has generation 1, which the in-memory server gives it too; the root of an
    // unstructured resource manages no status, so no observedGeneration is recorded.
    let resource = || TestResource {
        status: Some(ready_unknown_status()),
        ..test_resource()
    };
    ReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "in sync status",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"noop"),
        )
        .case(
            "status update",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"sets status fields")
                .expect_event(status_updated())
                .expect_status_update(&with_status_field(resource(), "Reconciler", "ran")),
        )
        .run(|env| {
            let sub = match meta_str(env, "SubReconciler") {
                "noop" => SyncReconciler::<DynamicObject>::new("Noop").sync(async |_, _| Ok(())),
                "sets status fields" => SyncReconciler::<DynamicObject>::new("SetsStatusFields")
                    .sync(async |_, r| {
                        r.data["status"]["fields"] = json!({"Reconciler": "ran"});
                        Ok(())
                    }),
                other => panic!("no sub-reconciler {other:?}"),
            };
            let api_resource = ApiResource::erase::<TestResource>(&());
            ResourceReconciler::new_with(env.config(), api_resource, sub)
                .status_strategy(StatusStrategy::Update)
        });
}

// ---- TestResourceReconciler_Duck ----

fn duck_status_fields(resource: &mut TestDuck) -> &mut std::collections::BTreeMap<String, String> {
    &mut resource.status.get_or_insert_default().fields
}

/// The status patch of the duck, as reconciler.io sends it: a merge patch of the whole object
/// from the resource as read, which carries the defaulted spec besides the status.
fn duck_status_patch(status: serde_json::Value) -> PatchRef {
    PatchRef {
        group: Some("testing.reconciler.runtime".to_owned()),
        ..PatchRef::merge(
            "TestResource",
            Some(NAMESPACE),
            NAME,
            json!({"spec": {"fields": {"Defaulter": "ran"}}, "status": status}),
        )
    }
}

#[test]
fn resource_reconciler_duck() {
    // The Go resource's condition changed at the test's `now`; here at the case's clock.
    let resource = || TestDuck {
        metadata: meta(NAME),
        spec: TestDuckSpec::default(),
        status: in_sync(ready_unknown_status()),
    };
    let deleted_duck = || TestDuck {
        metadata: terminating(meta(NAME)),
        ..resource()
    };
    let conditions_initialized = || {
        let mut duck = resource();
        duck.status.get_or_insert_default().conditions.clear();
        duck
    };
    let ready = serde_json::to_value(ready_unknown()).expect("a condition serialises");
    ReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "resource does not exist",
            request()
                .expect_missing()
                .metadata("SubReconciler", &"should not be called"),
        )
        .case(
            "ignore deleted resource",
            request()
                .given(&deleted_duck())
                .metadata("SubReconciler", &"should not be called"),
        )
        .case(
            "error fetching resource",
            request()
                .given(&resource())
                .reactor(induce("get", "testresources", "TestResource"))
                .metadata("SubReconciler", &"should not be called")
                .expect_error("inducing failure for get TestResource"),
        )
        .case(
            "resource is defaulted",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"expects defaulted"),
        )
        .case(
            "status conditions are initialized",
            // differs: recon's status patch holds only the status
            // (`{"status":{"conditions":[...]}}`); reconciler.io's patch, a merge patch of the
            // whole object from the resource as read, also carries the defaulted
            // `spec.fields.Defaulter`, which the status subresource ignores.
            request()
                .given(&conditions_initialized())
                .metadata("SubReconciler", &"expects initialized conditions")
                .expect_event(status_patched())
                .expect_status_patch(duck_status_patch(json!({"conditions": [ready]})))
                .skip(),
        )
        .case(
            "reconciler mutated status",
            // differs: recon's status patch is `{"status":{"fields":{"Reconciler":"ran"}}}`,
            // without reconciler.io's defaulted spec.
            request()
                .given(&resource())
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(status_patched())
                .expect_status_patch(duck_status_patch(json!({"fields": {"Reconciler": "ran"}})))
                .skip(),
        )
        .case(
            "skip status updates",
            request()
                .given(&resource())
                .metadata("SkipStatusUpdate", &true)
                .metadata("SubReconciler", &"marks Reconciler ran"),
        )
        .case(
            "sub reconciler erred",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"fails")
                .expect_error("reconciler error"),
        )
        .case(
            "sub reconciler halted",
            // differs: recon's status patch is `{"status":{"fields":{"want":"this to run"}}}`,
            // without reconciler.io's defaulted spec.
            request()
                .given(&resource())
                .metadata("SubReconciler", &"halts after setting fields")
                .expect_event(status_patched())
                .expect_status_patch(duck_status_patch(
                    json!({"fields": {"want": "this to run"}}),
                ))
                .skip(),
        )
        .case(
            "status patch failed",
            // differs: recon's status patch is `{"status":{"fields":{"Reconciler":"ran"}}}`,
            // without reconciler.io's defaulted spec (the event and the error are as here).
            request()
                .given(&resource())
                .reactor(induce("patch", "testresources", "TestResource").subresource("status"))
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(EventRef::warning(
                    "StatusPatchFailed",
                    "Failed to patch status: inducing failure for patch TestResource",
                ))
                .expect_status_patch(duck_status_patch(json!({"fields": {"Reconciler": "ran"}})))
                .expect_error("")
                .skip(),
        )
        .case(
            "context is stashable",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"stashes"),
        )
        .case(
            "context has config",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"checks config"),
        )
        .run(|env| {
            let sub = match meta_str(env, "SubReconciler") {
                "should not be called" => not_called::<TestDuck>("should not be called").boxed(),
                "expects defaulted" => SyncReconciler::<TestDuck>::new("ExpectsDefaulted")
                    .sync(async |_, r| check_defaulted(&r.spec.fields))
                    .boxed(),
                "expects initialized conditions" => {
                    SyncReconciler::<TestDuck>::new("ExpectsInitializedConditions")
                        .sync(async |ctx, r| {
                            let conditions = r.status.as_ref().map_or(&[][..], |s| &s.conditions);
                            check_initialized(conditions)?;
                            // Go compares the transition time too: the request time.
                            match conditions.first() {
                                Some(c) if c.last_transition_time.0 == ctx.now() => Ok(()),
                                other => Err(Error::msg(format!(
                                    "unexpected transition time: {other:?}"
                                ))),
                            }
                        })
                        .boxed()
                }
                "marks Reconciler ran" => SyncReconciler::<TestDuck>::new("MarksReconcilerRan")
                    .sync(async |_, r| {
                        duck_status_fields(r).insert("Reconciler".to_owned(), "ran".to_owned());
                        Ok(())
                    })
                    .boxed(),
                "fails" => SyncReconciler::<TestDuck>::new("Fails")
                    .sync(async |_, _| Err::<(), _>(Error::msg("reconciler error")))
                    .boxed(),
                "halts after setting fields" => Sequence::new([
                    SyncReconciler::<TestDuck>::new("Halts")
                        .sync(async |_, r| {
                            r.status.get_or_insert_default().fields =
                                [("want".to_owned(), "this to run".to_owned())].into();
                            Err::<(), _>(Error::signal(ErrorKind::HaltSubReconcilers))
                        })
                        .boxed(),
                    SyncReconciler::<TestDuck>::new("NotReached")
                        .sync(async |_, r| {
                            r.status.get_or_insert_default().fields =
                                [("don't want".to_owned(), "this to run".to_owned())].into();
                            Err::<(), _>(Error::msg("reconciler error"))
                        })
                        .boxed(),
                ])
                .boxed(),
                "stashes" => stashes::<TestDuck>().boxed(),
                "checks config" => checks_config::<TestDuck>(env.events().clone()).boxed(),
                other => panic!("no sub-reconciler {other:?}"),
            };
            ResourceReconciler::new(env.config(), sub)
                .default_resource(default_fields)
                .manage_status()
                .status_strategy(StatusStrategy::MergePatch)
                .skip_status_update(meta_flag(env, "SkipStatusUpdate"))
        });
}

// ---- TestResourceReconciler ----

/// What "before reconcile can replace the context" hands the tree: Go adds a context value,
/// here `before_reconcile` stashes it.
const MESSAGE: Stasher<String> = Stasher::new("message");

#[test]
fn resource_reconciler() {
    let status_update_failure =
        || induce("update", "testresources", "TestResource").subresource("status");
    ReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "resource does not exist",
            request()
                .expect_missing()
                .metadata("SubReconciler", &"should not be called"),
        )
        .case(
            "ignore deleted resource",
            request()
                .given(&deleted(given_resource()))
                .metadata("SubReconciler", &"should not be called"),
        )
        .case(
            "error fetching resource",
            request()
                .given(&given_resource())
                .reactor(induce("get", "testresources", "TestResource"))
                .metadata("SubReconciler", &"should not be called")
                .expect_error("inducing failure for get TestResource"),
        )
        .case(
            "resource is defaulted",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"expects defaulted"),
        )
        .case(
            "status conditions are initialized",
            request()
                .given(&without_conditions(given_resource()))
                .metadata("SubReconciler", &"expects initialized conditions")
                .expect_event(status_updated())
                .expect_status_update(&given_resource()),
        )
        .case(
            "reconciler mutated status",
            // The step asks for a requeue after 10ns, which the status write suppresses.
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"marks Reconciler ran with a result")
                .expect_event(status_updated())
                .expect_status_update(&with_status_field(given_resource(), "Reconciler", "ran")),
        )
        .case(
            "status does not update for deleted resource",
            request()
                .given(&deleted(given_resource()))
                .metadata("SubReconciler", &"marks Reconciler ran"),
        )
        .case(
            "status updates for deleting resource when allowed",
            request()
                .given(&deleted(given_resource()))
                .metadata("SyncStatusDuringFinalization", &true)
                .metadata("SubReconciler", &"marks Reconciler ran during finalization")
                .expect_event(status_updated())
                .expect_status_update(&with_status_field(
                    deleted(given_resource()),
                    "Reconciler",
                    "ran",
                )),
        )
        .case(
            "skip status updates",
            request()
                .given(&given_resource())
                .metadata("SkipStatusUpdate", &true)
                .metadata("SubReconciler", &"marks Reconciler ran"),
        )
        .case(
            "sub reconciler erred",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"fails")
                .expect_error("reconciler error"),
        )
        .case(
            "sub reconciler halted",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"halts after an event")
                .expect_event(EventRef::normal("Want", ""))
                .expect_result(Outcome::requeue()),
        )
        .case(
            "skip status update",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"skips status update")
                .expect_error("")
                .expect_error_signal(ErrorSignal::SkipStatusUpdate),
        )
        .case(
            "skip status update quietly, auto requeues",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"skips status update quietly")
                .expect_result(Outcome::requeue()),
        )
        .case(
            "status update failed",
            request()
                .given(&given_resource())
                .reactor(status_update_failure())
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(EventRef::warning(
                    "StatusUpdateFailed",
                    "Failed to update status: inducing failure for update TestResource",
                ))
                .expect_status_update(&with_status_field(given_resource(), "Reconciler", "ran"))
                .expect_error(""),
        )
        .case(
            "context is stashable",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"stashes"),
        )
        .case(
            "context has config",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"checks config"),
        )
        .case(
            "before reconcile is called before reconcile and after the context is populated",
            // The hook creates the resource, with the request time as its creation time.
            request()
                .expect_missing()
                .metadata("BeforeReconcile", &"creates the resource")
                .metadata("SubReconciler", &"marks Reconciler ran")
                .expect_event(status_updated())
                .expect_create(&test_resource())
                .expect_status_update(&with_status_field(given_resource(), "Reconciler", "ran")),
        )
        .case(
            "before reconcile can influence the result",
            request()
                .given(&given_resource())
                .metadata("BeforeReconcile", &"requeues")
                .metadata("SubReconciler", &"noop")
                .expect_result(Outcome::requeue()),
        )
        .case(
            "before reconcile can replace the context",
            request()
                .given(&given_resource())
                .metadata("BeforeReconcile", &"stashes the message")
                .metadata("SubReconciler", &"writes the message")
                .expect_event(status_updated())
                .expect_status_update(&with_status_field(
                    given_resource(),
                    "message",
                    "hello world",
                )),
        )
        .case(
            "before reconcile errors shortcut execution",
            request()
                .expect_missing()
                .metadata("BeforeReconcile", &"fails")
                .metadata("SubReconciler", &"should not be called")
                .expect_error("test"),
        )
        .case(
            "after reconcile can overwrite the result",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"fails with test")
                .metadata("AfterReconcile", &"suppresses the error"),
        )
        .case(
            "skip request",
            request()
                .given(&given_resource())
                .metadata("SkipRequest", &true)
                .metadata("SubReconciler", &"reconcile should have been skipped"),
        )
        .case(
            "skip resource",
            request()
                .given(&given_resource())
                .metadata("SkipResource", &true)
                .metadata("SubReconciler", &"reconcile should have been skipped"),
        )
        .run(resource_reconciler_for);
}

/// The sub-reconcilers of the `TestResourceReconciler` tables, by name.
fn test_resource_sub(name: &str, env: &TestEnv) -> BoxSubReconciler<TestResource> {
    let sync = |n: &str| SyncReconciler::<TestResource>::new(n);
    match name {
        "should not be called" | "reconcile should have been skipped" => {
            not_called::<TestResource>(name).boxed()
        }
        "noop" => noop::<TestResource>().boxed(),
        "expects defaulted" => sync("ExpectsDefaulted")
            .sync(async |_, r| check_defaulted(&r.spec.fields))
            .boxed(),
        "expects initialized conditions" => expects_initialized().boxed(),
        "marks Reconciler ran" => marks_reconciler_ran().boxed(),
        "marks Reconciler ran with a result" => sync("MarksReconcilerRan")
            .sync(async |_, r| {
                status_fields(r).insert("Reconciler".to_owned(), "ran".to_owned());
                // Go's `RequeueAfter: 10`: nanoseconds.
                Ok(Outcome::requeue_after(Duration::from_nanos(10)))
            })
            .boxed(),
        "marks Reconciler ran during finalization" => marks_reconciler_ran()
            .sync_during_finalization(true)
            .boxed(),
        "fails" => sync("Fails")
            .sync(async |_, _| Err::<(), _>(Error::msg("reconciler error")))
            .boxed(),
        "fails with test" => sync("Fails")
            .sync(async |_, _| Err::<(), _>(Error::msg("test")))
            .boxed(),
        "halts after an event" => Sequence::new([
            sync("Halts")
                .sync(async |ctx, r| {
                    publish(ctx, r, "Want").await;
                    Err::<(), _>(Error::signal(ErrorKind::HaltSubReconcilers))
                })
                .boxed(),
            sync("NotReached")
                .sync(async |ctx, r| {
                    publish(ctx, r, "DontWant").await;
                    Err::<(), _>(Error::msg("reconciler error"))
                })
                .boxed(),
        ])
        .boxed(),
        "skips status update" => Sequence::new([sync("SkipsStatusUpdate")
            .sync(async |_, r| {
                r.status.get_or_insert_default().fields =
                    [("want".to_owned(), "this to run".to_owned())].into();
                Err::<(), _>(Error::signal(ErrorKind::SkipStatusUpdate))
            })
            .boxed()])
        .boxed(),
        "skips status update quietly" => Sequence::new([sync("SkipsStatusUpdateQuietly")
            .sync(async |_, r| {
                r.status.get_or_insert_default().fields =
                    [("want".to_owned(), "this to run".to_owned())].into();
                Err::<(), _>(Error::signal(ErrorKind::SkipStatusUpdate).with(ErrorKind::Quiet))
            })
            .boxed()])
        .boxed(),
        "stashes" => stashes::<TestResource>().boxed(),
        "checks config" => checks_config::<TestResource>(env.events().clone()).boxed(),
        "writes the message" => sync("WritesTheMessage")
            .sync(async |ctx, r| {
                let message = MESSAGE.retrieve(ctx)?;
                status_fields(r).insert("message".to_owned(), message);
                Ok(())
            })
            .boxed(),
        other => panic!("no sub-reconciler {other:?}"),
    }
}

/// The factory of the `TestResourceReconciler` tables: the typed root with the case's
/// sub-reconciler and hooks.
fn resource_reconciler_for(env: &TestEnv) -> ResourceReconciler<TestResource> {
    let sub = test_resource_sub(meta_str(env, "SubReconciler"), env);
    let mut root = typed_root(env, sub)
        .skip_status_update(meta_flag(env, "SkipStatusUpdate"))
        .sync_status_during_finalization(meta_flag(env, "SyncStatusDuringFinalization"));
    root = match meta_str(env, "BeforeReconcile") {
        "" => root,
        "creates the resource" => root.before_reconcile(async |ctx| {
            // Created by hand rather than given.
            let mut resource = test_resource();
            resource.metadata.creation_timestamp = Some(Time(ctx.now()));
            Api::<TestResource>::namespaced(ctx.config().client().clone(), NAMESPACE)
                .create(&PostParams::default(), &resource)
                .await?;
            Ok(Outcome::done())
        }),
        "requeues" => root.before_reconcile(async |_| Ok(Outcome::requeue())),
        "stashes the message" => root.before_reconcile(async |ctx| {
            MESSAGE.store(ctx, "hello world".to_owned());
            Ok(Outcome::done())
        }),
        "fails" => root.before_reconcile(async |_| Err::<(), _>(Error::msg("test"))),
        other => panic!("no before hook {other:?}"),
    };
    root = match meta_str(env, "AfterReconcile") {
        "" => root,
        // Suppresses the error.
        "suppresses the error" => root.after_reconcile(async |_, _| Ok(Outcome::done())),
        other => panic!("no after hook {other:?}"),
    };
    if meta_flag(env, "SkipRequest") {
        root = root.skip_request(|ctx| {
            let request = ctx.request();
            request.name == NAME && request.namespace.as_deref() == Some(NAMESPACE)
        });
    }
    if meta_flag(env, "SkipResource") {
        root = root.skip_resource(|_, r: &TestResource| {
            r.metadata.name.as_deref() == Some(NAME)
                && r.metadata.namespace.as_deref() == Some(NAMESPACE)
        });
    }
    root
}

// ---- TestResourceReconciler_UnexportedFields ----

#[test]
fn resource_reconciler_unexported_fields() {
    let resource = || TestResourceUnexportedFields {
        metadata: meta(NAME),
        spec: TestResourceUnexportedFieldsSpec::default(),
        status: Some(TestResourceUnexportedFieldsStatus {
            conditions: vec![ready_unknown()],
            observed_generation: Some(1),
            ..TestResourceUnexportedFieldsStatus::default()
        }),
    };
    let mutated = || {
        let mut r = resource();
        let status = r.status.get_or_insert_default();
        status
            .fields
            .insert("Reconciler".to_owned(), "ran".to_owned());
        status
            .unexported_fields
            .insert("Reconciler".to_owned(), "ran".to_owned());
        r
    };
    let with_unexported = || {
        let mut r = resource();
        let status = r.status.get_or_insert_default();
        for key in ["Test", "Reconciler"] {
            status
                .unexported_fields
                .insert(key.to_owned(), "ran".to_owned());
        }
        r
    };
    ReconcilerTests::new()
        .crd(&TestResourceUnexportedFields::crd())
        .case(
            "mutated exported and unexported status",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"mutates exported and unexported status")
                .expect_event(status_updated())
                .expect_status_update(&mutated()),
        )
        .case(
            "mutated unexported status",
            request()
                .given(&resource())
                .metadata("SubReconciler", &"mutates unexported status"),
        )
        .case(
            "no mutated status",
            // The given unexported fields never reach the server.
            request()
                .given(&with_unexported())
                .metadata("SubReconciler", &"adds an unexported field"),
        )
        .run(|env| {
            let sync = |n: &str| SyncReconciler::<TestResourceUnexportedFields>::new(n);
            fn add_unexported(r: &mut TestResourceUnexportedFields) {
                r.status
                    .get_or_insert_default()
                    .unexported_fields
                    .insert("Reconciler".to_owned(), "ran".to_owned());
            }
            let sub = match meta_str(env, "SubReconciler") {
                "mutates exported and unexported status" => {
                    sync("MutatesBoth").sync(async |_, r| {
                        r.reflect_unexported_fields_to_status();
                        r.status
                            .get_or_insert_default()
                            .fields
                            .insert("Reconciler".to_owned(), "ran".to_owned());
                        add_unexported(r);
                        Ok(())
                    })
                }
                "mutates unexported status" => sync("MutatesUnexported").sync(async |_, r| {
                    r.reflect_unexported_fields_to_status();
                    add_unexported(r);
                    Ok(())
                }),
                "adds an unexported field" => sync("AddsUnexported").sync(async |_, r| {
                    add_unexported(r);
                    Ok(())
                }),
                other => panic!("no sub-reconciler {other:?}"),
            };
            ResourceReconciler::new(env.config(), sub)
                .default_resource(default_fields)
                .manage_status()
                .status_strategy(StatusStrategy::Update)
        });
}

// ---- TestResourceReconciler_Default ----

#[test]
fn resource_reconciler_default() {
    ReconcilerTests::new()
        .crd(&TestResource::crd())
        .case(
            "resource is defaulted",
            request()
                .given(&given_resource())
                .metadata("SubReconciler", &"expects defaulted"),
        )
        .case(
            "status conditions are initialized",
            request()
                .given(&without_conditions(given_resource()))
                .metadata("SubReconciler", &"expects initialized conditions")
                .expect_event(status_updated())
                .expect_status_update(&given_resource()),
        )
        .run(resource_reconciler_for);
}
