//! `SuppressTransientErrors` keeps failure counts across reconciles, so its table is an ordered
//! suite whose cases share one instance: each case is one reconcile of the same widget (the
//! same uid) under a `ResourceReconciler`, against a fresh cluster.
//!
//! The nested step marks the widget ready, then creates a ConfigMap: a case that makes the
//! create fail shows whether the failure was suppressed (no status write, a quiet requeue) or
//! surfaced (the error, and the status written as usual).

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::Api;
use recon_core::{
    Config, Context, Error, ErrorKind, Outcome, Request, ResourceReconciler, SubReconciler,
    SuppressTransientErrors, SyncReconciler,
};
use recon_test_fixtures::*;
use recon_testing::{EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTestSuite, TestCase};
use serde_json::json;

const UID: &str = "0f0e0d0c-0000-4000-8000-000000000001";
const CAUSE: &str = "etcd is down";

/// Marks the widget ready, then creates the ConfigMap `w-child`. A negative size is a durable
/// error (reported before anything changes).
fn ready_and_child() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("ReadyAndChild").sync(async |ctx, w| {
        if w.spec.size < 0 {
            return Err(Error::msg("negative size").with(ErrorKind::Durable));
        }
        w.status.get_or_insert_default().ready = Some(true);
        let mut child = ConfigMap::default();
        child.metadata.name = Some("w-child".to_owned());
        Api::<ConfigMap>::namespaced(ctx.config().client().clone(), "default")
            .create(&pp(), &child)
            .await?;
        Ok(())
    })
}

/// The widget `w` (always the same uid) at `generation`.
fn widget_at(generation: i64, size: i32) -> Widget {
    let mut w = widget("w", size);
    w.metadata.namespace = Some("default".to_owned());
    w.metadata.uid = Some(UID.to_owned());
    w.metadata.generation = Some(generation);
    w
}

fn child_created() -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w-child"}})
}

fn failing_create() -> ReactorSpec {
    ReactorSpec {
        verb: "create".to_owned(),
        resource: "configmaps".to_owned(),
        group: None,
        subresource: None,
        namespace: None,
        name: None,
        times: None,
        fail: FailureSpec::Internal(CAUSE.to_owned()),
    }
}

fn reconcile(name: &str, generation: i64) -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "w"))
        .named(name)
        .given(&widget_at(generation, 1))
}

/// A failure hidden: the create was sent and refused, no status write, a quiet requeue.
fn suppressed(name: &str, generation: i64) -> TestCase {
    reconcile(name, generation)
        .reactor(failing_create())
        .expect_create(&child_created())
        .expect_result(Outcome::requeue())
}

/// A failure surfaced: the error, and status written as for any failed reconcile.
fn surfaced(name: &str, generation: i64) -> TestCase {
    reconcile(name, generation)
        .reactor(failing_create())
        .expect_create(&child_created())
        .expect_status_patch(ready_patch())
        .expect_event(EventRef::normal("StatusPatched", "Patched status"))
        .expect_error(format!("Internal error occurred: {CAUSE}"))
}

fn succeeded(name: &str, generation: i64) -> TestCase {
    reconcile(name, generation)
        .expect_create(&child_created())
        .expect_status_patch(ready_patch())
        .expect_event(EventRef::normal("StatusPatched", "Patched status"))
}

fn ready_patch() -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"status": {"ready": true}}),
    )
}

#[test]
fn suppress_transient_errors_across_reconciles() {
    let shared = Arc::new(SuppressTransientErrors::new("Suppress", ready_and_child()));
    let a_day_later = "2024-01-02T01:00:00Z".parse().unwrap();
    ReconcilerTestSuite::new()
        .crd(&Widget::crd())
        .case(suppressed("a first failure is suppressed", 1))
        .case(suppressed("a second failure is suppressed", 1))
        .case(surfaced("the third consecutive failure surfaces", 1))
        .case(surfaced("later failures keep surfacing", 1))
        .case(succeeded("a success", 1))
        .case(suppressed("after a success the count starts again", 1))
        .case(suppressed("second failure since the success", 1))
        .case(suppressed(
            "a new generation starts a fresh count (a third failure otherwise)",
            2,
        ))
        .case(suppressed("second failure of the new generation", 2))
        .case(
            suppressed(
                "a day without failure starts a fresh count (a third failure otherwise)",
                2,
            )
            .at(a_day_later),
        )
        .case(suppressed("second failure since the day passed", 2).at(a_day_later))
        .case(
            TestCase::reconcile(Request::namespaced("default", "w"))
                .named("a durable error passes through, quietly, and resets the count")
                .given(&widget_at(2, -1))
                .at(a_day_later)
                // Quiet, so the root requeues, as reconciler.io's does for ErrDurable.
                .expect_result(Outcome::requeue()),
        )
        .case(
            suppressed(
                "after a durable error the count starts again (a third failure otherwise)",
                2,
            )
            .at(a_day_later),
        )
        .run(|env| ResourceReconciler::new(env.config(), shared.clone()));
    assert_eq!(shared.tracked_resources(), 1, "one widget failing");
}

// ---- The counts themselves, without a table ----

fn context(config: &Config, at: &str) -> Context {
    Context::new(config.clone(), Request::namespaced("default", "w")).at(at.parse().unwrap())
}

fn always_failing() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Fails").sync(async |_, _| Err::<(), _>(Error::msg("blip")))
}

fn with_uid(uid: &str, generation: i64) -> Widget {
    let mut w = widget("w", 1);
    w.metadata.uid = Some(uid.to_owned());
    w.metadata.generation = Some(generation);
    w
}

/// Whether the error was marked to be hidden.
fn hidden(err: &Error) -> bool {
    err.is_quiet() && err.is_skip_status_update()
}

#[tokio::test]
async fn errors_are_marked_quiet_and_skip_status_below_the_threshold_only() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = SuppressTransientErrors::new("S", always_failing()).threshold(2);
    let ctx = context(&config, "2024-01-01T00:00:00Z");
    let mut w = with_uid("a", 1);

    let first = suppress.reconcile(&ctx, &mut w).await.unwrap_err();
    let second = suppress.reconcile(&ctx, &mut w).await.unwrap_err();

    assert!(hidden(&first), "{first:?}");
    assert!(
        !second.is_quiet() && !second.is_skip_status_update(),
        "{second:?}"
    );
    assert_eq!(second.to_string(), "blip");
}

#[tokio::test]
async fn a_threshold_of_one_suppresses_nothing() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = SuppressTransientErrors::new("S", always_failing()).threshold(1);
    let ctx = context(&config, "2024-01-01T00:00:00Z");

    let err = suppress
        .reconcile(&ctx, &mut with_uid("a", 1))
        .await
        .unwrap_err();

    assert!(!hidden(&err), "{err:?}");
}

#[tokio::test]
async fn counts_of_resources_not_failing_for_a_day_are_forgotten() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = SuppressTransientErrors::new("S", always_failing());

    let t0 = context(&config, "2024-01-01T00:00:00Z");
    let t2h = context(&config, "2024-01-01T02:00:00Z");
    let t25h = context(&config, "2024-01-02T01:00:00Z");
    suppress
        .reconcile(&t0, &mut with_uid("a", 1))
        .await
        .unwrap_err();
    suppress
        .reconcile(&t2h, &mut with_uid("b", 1))
        .await
        .unwrap_err();
    assert_eq!(suppress.tracked_resources(), 2);

    // a has not failed for 25h: swept. b failed 23h ago: kept.
    suppress
        .reconcile(&t25h, &mut with_uid("c", 1))
        .await
        .unwrap_err();
    assert_eq!(suppress.tracked_resources(), 2);
    let b = suppress
        .reconcile(&t25h, &mut with_uid("b", 1))
        .await
        .unwrap_err();
    assert!(hidden(&b), "b's second failure: {b:?}");
    let b = suppress
        .reconcile(&t25h, &mut with_uid("b", 1))
        .await
        .unwrap_err();
    assert!(!hidden(&b), "b's third failure: {b:?}");
}

/// Sweeps run at most hourly; a count that went stale since the last sweep still starts again.
#[tokio::test]
async fn a_stale_count_starts_again_between_sweeps() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = SuppressTransientErrors::new("S", always_failing()).threshold(2);

    let t0 = context(&config, "2024-01-01T00:00:00Z");
    suppress
        .reconcile(&t0, &mut with_uid("a", 1))
        .await
        .unwrap_err();
    // A sweep at 23h30m: a's count is not stale yet.
    let swept = context(&config, "2024-01-01T23:30:00Z");
    suppress
        .reconcile(&swept, &mut with_uid("b", 1))
        .await
        .unwrap_err();
    // 40 minutes later (no sweep due), a's count is 24h10m old.
    let later = context(&config, "2024-01-02T00:10:00Z");
    let a = suppress
        .reconcile(&later, &mut with_uid("a", 1))
        .await
        .unwrap_err();

    assert!(hidden(&a), "a counts from 1 again: {a:?}");
}

#[tokio::test]
async fn only_the_latest_generation_of_a_resource_is_kept() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = SuppressTransientErrors::new("S", always_failing());
    let ctx = context(&config, "2024-01-01T00:00:00Z");

    for generation in 1..=5 {
        suppress
            .reconcile(&ctx, &mut with_uid("a", generation))
            .await
            .unwrap_err();
    }

    assert_eq!(suppress.tracked_resources(), 1);
}

#[tokio::test]
async fn a_success_forgets_the_resource() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let flaky = SyncReconciler::<Widget>::new("Flaky").sync(async |_, w| {
        if w.spec.size == 0 {
            Err(Error::msg("blip"))
        } else {
            Ok(())
        }
    });
    let suppress = SuppressTransientErrors::new("S", flaky);
    let ctx = context(&config, "2024-01-01T00:00:00Z");
    let mut failing = with_uid("a", 1);
    failing.spec.size = 0;

    suppress.reconcile(&ctx, &mut failing).await.unwrap_err();
    assert_eq!(suppress.tracked_resources(), 1);
    suppress
        .reconcile(&ctx, &mut with_uid("a", 1))
        .await
        .unwrap();

    assert_eq!(suppress.tracked_resources(), 0);
}

/// Concurrent failures of one resource are all counted (Go's version updates its map without
/// the lock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_failures_are_all_counted() {
    let server = server().await;
    let config = Config::new(server.client(), "test");
    let suppress = Arc::new(SuppressTransientErrors::new("S", always_failing()).threshold(201));

    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let suppress = Arc::clone(&suppress);
            let ctx = context(&config, "2024-01-01T00:00:00Z");
            tokio::spawn(async move {
                let err = suppress
                    .reconcile(&ctx, &mut with_uid("a", 1))
                    .await
                    .unwrap_err();
                hidden(&err)
            })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap(), "the first 200 failures are hidden");
    }

    let ctx = context(&config, "2024-01-01T00:00:00Z");
    let err = suppress
        .reconcile(&ctx, &mut with_uid("a", 1))
        .await
        .unwrap_err();
    assert!(!hidden(&err), "the 201st failure surfaces: {err:?}");
}
