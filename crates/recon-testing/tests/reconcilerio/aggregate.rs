//! `reconcilers/aggregate_test.go`: `AggregateReconciler` keeping the ConfigMap [`NAME`] in
//! [`NAMESPACE`] holding `foo: bar` through reconciler.io's testing `StubObjectManager`
//! ([`StubObjectManager`]). Go's cases put the reconciler in their `Metadata` as a closure;
//! here `metadata` names how the case changes the default one and the table's factory builds
//! it.
//!
//! Go's induced failures are plain errors; here they are a 500, which recon returns as Go does.
//! Adapted: the terminating ConfigMap's finalizer has a domain ([`QUALIFIED_FINALIZER`]).
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - "context has resource type": Go stashes the resource's type in the context for
//!   reflection; in Rust it is the type parameter, and nothing is stashed.
//! - "context can be augmented in Prepare and accessed in Cleanup": Go's `context.Context`
//!   values added by the case; a recon case's hooks do not reach the reconcile's `Context`.
//! - `TestAggregateReconciler_Validate` (9 cases): `Validate` refuses a reconciler without a
//!   `Request` or an `AggregateObjectManager` (recon's constructor takes both) or with an
//!   invalid nested `SyncReconciler` (recon_core::guide::reconciler_io: nothing is
//!   validated at setup).
//!
//! Adapted: Go's "before reconcile can replace the context" hands the reconcile a new
//! `context.Context` with a value; recon's hook cannot replace the context, so it stashes the
//! value, which is what the Go case uses the context for.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use recon_core::{
    AggregateReconciler, BoxSubReconciler, Error, ErrorKind, IntoBoxed, Outcome, Request, Sequence,
    Stasher, SyncReconciler,
};
use recon_testing::{DeleteRef, ReconcilerTests, StubObjectManager, TestCase, TestEnv};
use serde_json::{Value, json};

use crate::children_support::{config_map, induce};
use crate::resource::checks_config;
use crate::test_resource::{NAME, NAMESPACE, deleted_at};

/// The finalizer of the terminating ConfigMap: Go's `test.finalizer` with a domain, which the
/// API server asks of a built-in kind's finalizers (Go's fake client does not check).
const QUALIFIED_FINALIZER: &str = "testing.reconciler.runtime/finalizer";

/// The case's `variant` metadata (how the factory changes the default reconciler).
fn variant(env: &TestEnv) -> &str {
    env.metadata("variant")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The Go tests' `configMapGiven` / `configMapCreate` with `data`.
fn given(data: &[(&str, &str)]) -> Value {
    config_map(NAMESPACE, NAME, false, data)
}

fn foo_bar() -> Value {
    given(&[("foo", "bar")])
}

/// A reconcile of [`NAME`].
fn request() -> TestCase {
    TestCase::reconcile(Request::namespaced(NAMESPACE, NAME))
}

/// A sync step that does what `sync` does.
fn sync(
    sync: impl Fn() -> Result<Outcome, Error> + Send + Sync + 'static,
) -> SyncReconciler<ConfigMap> {
    SyncReconciler::<ConfigMap>::new("SyncReconciler").sync_with(sync, async |_, sync, _| sync())
}

/// The sub-reconciler the variant names (none: the default, an empty `Sequence`).
fn sub_reconciler(env: &TestEnv) -> Option<BoxSubReconciler<ConfigMap>> {
    let halt = || Err(Error::signal(ErrorKind::HaltSubReconcilers));
    let fail = || Err(Error::msg("test error"));
    Some(match variant(env) {
        "requeues in an hour" => {
            sync(|| Ok(Outcome::requeue_after(Duration::from_secs(3600)))).boxed()
        }
        "fails" => sync(fail).boxed(),
        "halts" => Sequence::new([sync(halt).boxed(), sync(fail).boxed()]).boxed(),
        "halts with a requeue" => Sequence::new([
            sync(|| {
                Err(Error::signal(ErrorKind::HaltSubReconcilers).with_outcome(Outcome::requeue()))
            })
            .boxed(),
            sync(fail).boxed(),
        ])
        .boxed(),
        "stashes" => SyncReconciler::<ConfigMap>::new("SyncReconciler")
            .sync(async |ctx, _| {
                ctx.stash().store("foo", "bar".to_owned());
                Ok(())
            })
            .boxed(),
        "checks config" => checks_config::<ConfigMap>(env.events().clone()).boxed(),
        _ => return None,
    })
}

/// What the "before reconcile can replace the context" case stashes for `desired_resource`.
const MESSAGE: Stasher<String> = Stasher::new("message");

/// The Go tests' `defaultAggregateReconciler`, changed as the case's variant says.
fn aggregate(env: &TestEnv) -> AggregateReconciler<ConfigMap> {
    let variant = variant(env).to_owned();
    let desires_nothing = variant == "desires nothing";
    let message = variant == "before stashes a message";
    let reconciler = AggregateReconciler::<ConfigMap>::new(
        env.config(),
        Request::namespaced(NAMESPACE, NAME),
        StubObjectManager::new(),
    )
    .desired_resource(move |ctx, mut resource| {
        if desires_nothing {
            return Ok(None);
        }
        let (key, value) = match message {
            true => ("message".to_owned(), MESSAGE.retrieve(ctx)?),
            false => ("foo".to_owned(), "bar".to_owned()),
        };
        resource.data = Some([(key, value)].into());
        Ok(Some(resource))
    });
    let reconciler = match variant.as_str() {
        "before creates it" => reconciler.before_reconcile(async |ctx| {
            let cm: ConfigMap = serde_json::from_value(given(&[])).map_err(Error::new)?;
            kube::Api::<ConfigMap>::namespaced(ctx.config().client().clone(), NAMESPACE)
                .create(&kube::api::PostParams::default(), &cm)
                .await?;
            Ok(Outcome::done())
        }),
        "before requeues" => reconciler.before_reconcile(async |_| Ok(Outcome::requeue())),
        "before stashes a message" => reconciler.before_reconcile(async |ctx| {
            MESSAGE.store(ctx, "hello world".to_owned());
            Ok(Outcome::done())
        }),
        "before fails" => reconciler.before_reconcile(async |_| Err::<(), _>(Error::msg("test"))),
        "after suppresses the error" => {
            reconciler.after_reconcile(async |_, _| Ok(Outcome::done()))
        }
        _ => reconciler,
    };
    match sub_reconciler(env) {
        Some(sub) => reconciler.reconciler(sub),
        None => reconciler,
    }
}

// ---- TestAggregateReconciler ----

#[test]
fn aggregate_reconciler() {
    let terminating = {
        let mut cm = given(&[]);
        cm["metadata"]["deletionTimestamp"] = json!(deleted_at());
        cm["metadata"]["finalizers"] = json!([QUALIFIED_FINALIZER]);
        cm
    };
    let delete = || DeleteRef::new("ConfigMap", Some(NAMESPACE), NAME);
    ReconcilerTests::new()
        .case("resource is in sync", request().given(&foo_bar()))
        .case(
            "ignore other resources",
            TestCase::reconcile(Request::namespaced(NAMESPACE, "not-it")),
        )
        .case(
            "ignore terminating resources",
            request().given(&terminating),
        )
        .case("create resource", request().expect_create(&foo_bar()))
        .case(
            "update resource",
            request().given(&given(&[])).expect_update(&foo_bar()),
        )
        .case(
            "delete resource",
            request()
                .given(&given(&[]))
                .metadata("variant", &"desires nothing")
                .expect_delete(delete()),
        )
        .case(
            "error getting resources",
            request()
                .reactor(induce("get", "configmaps"))
                .expect_error(""),
        )
        .case(
            "error creating resource",
            request()
                .reactor(induce("create", "configmaps"))
                .expect_create(&foo_bar())
                .expect_error(""),
        )
        .case(
            "error updating resource",
            request()
                .given(&given(&[]))
                .reactor(induce("update", "configmaps"))
                .expect_update(&foo_bar())
                .expect_error(""),
        )
        .case(
            "error deleting resource",
            request()
                .given(&given(&[]))
                .reactor(induce("delete", "configmaps"))
                .metadata("variant", &"desires nothing")
                .expect_delete(delete())
                .expect_error(""),
        )
        .case(
            "reconcile result",
            request()
                .given(&foo_bar())
                .metadata("variant", &"requeues in an hour")
                .expect_result(Outcome::requeue_after(Duration::from_secs(3600))),
        )
        .case(
            "reconcile error",
            request()
                .metadata("variant", &"fails")
                .expect_error("test error"),
        )
        .case(
            "reconcile halted",
            request()
                .metadata("variant", &"halts")
                .expect_create(&foo_bar()),
        )
        .case(
            "reconcile halted with result",
            request()
                .metadata("variant", &"halts with a requeue")
                .expect_create(&foo_bar())
                .expect_result(Outcome::requeue()),
        )
        .case(
            "context is stashable",
            request().given(&foo_bar()).metadata("variant", &"stashes"),
        )
        .case(
            "context has config",
            request()
                .given(&foo_bar())
                .metadata("variant", &"checks config"),
        )
        .case(
            "before reconcile is called before reconcile and after the context is populated",
            request()
                .metadata("variant", &"before creates it")
                .expect_create(&given(&[]))
                .expect_update(&foo_bar()),
        )
        .case(
            "before reconcile can influence the result",
            request()
                .given(&given(&[]))
                .metadata("variant", &"before requeues")
                .expect_update(&foo_bar())
                .expect_result(Outcome::requeue()),
        )
        .case(
            "before reconcile can replace the context",
            request()
                .given(&given(&[]))
                .metadata("variant", &"before stashes a message")
                .expect_update(&given(&[("message", "hello world")])),
        )
        .case(
            "before reconcile errors shortcut execution",
            request()
                .given(&given(&[]))
                .metadata("variant", &"before fails")
                .expect_error("test"),
        )
        .case(
            "after reconcile can overwrite the result",
            request()
                .given(&given(&[]))
                .reactor(induce("update", "configmaps"))
                .metadata("variant", &"after suppresses the error")
                .expect_update(&foo_bar()),
        )
        .run(aggregate);
}
