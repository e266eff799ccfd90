//! What a hook of the reconciler tree gets and when it runs, as tables: `SyncReconciler`'s sync
//! and finalize hooks, its outcome, the stash shared between steps, and the request time.
//!
//! Hooks publish a `Ran` event saying what ran, so a case's expected events are the log of the
//! hooks that ran, in order (and a hook that must not run would show up as an unexpected event).

use std::time::Duration;

use kube::{CustomResourceExt, Resource};
use recon_core::{
    Always, Config, Context, Event, EventLog, IntoBoxed, Outcome, Request, ResourceReconciler,
    Sequence, Stasher, SyncReconciler,
};
use recon_test_fixtures::*;
use recon_testing::{ReconcilerTests, TestCase};

use crate::support::*;

const NOW: &str = "2024-05-01T10:00:00Z";

/// Publishes that `what` ran, about `w`.
async fn ran(ctx: &Context, w: &Widget, what: impl Into<String>) {
    ctx.publish(&w.object_ref(&()), Event::normal("Ran", "Test", what))
        .await;
}

// ---- SyncReconciler ----

fn sync_and_finalize() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("SyncAndFinalize")
        .sync(async |ctx, w| {
            ran(ctx, w, "sync").await;
            Ok(())
        })
        .finalize(async |ctx, w| {
            ran(ctx, w, "finalize").await;
            Ok(())
        })
}

#[test]
fn sync_reconciler() {
    sub_tests()
        .case(
            "a live resource gets the sync hook and not the finalize hook",
            TestCase::sub_reconcile(&live()).expect_event(ran_event("sync")),
        )
        .case(
            "a terminating resource gets the finalize hook and not the sync hook",
            TestCase::sub_reconcile(&terminating()).expect_event(ran_event("finalize")),
        )
        .run(|_| sync_and_finalize());
}

#[test]
fn sync_reconciler_syncing_during_finalization() {
    sub_tests()
        .case(
            "a terminating resource gets the sync hook, then the finalize hook",
            TestCase::sub_reconcile(&terminating())
                .expect_event(ran_event("sync"))
                .expect_event(ran_event("finalize")),
        )
        .case(
            "a live resource still gets only the sync hook",
            TestCase::sub_reconcile(&live()).expect_event(ran_event("sync")),
        )
        .run(|_| sync_and_finalize().sync_during_finalization(true));
}

#[test]
fn sync_reconciler_with_outcome() {
    sub_tests()
        .case(
            "the sync hook's outcome is the step's outcome",
            TestCase::sub_reconcile(&live())
                .expect_result(Outcome::requeue_after(Duration::from_secs(30))),
        )
        .run(|_| {
            SyncReconciler::<Widget>::new("Later")
                .sync(async |_, _| Ok(Outcome::requeue_after(Duration::from_secs(30))))
        });
}

// ---- Stash ----

const SIZE_SEEN: Stasher<String> = Stasher::new("size-seen");

/// A step that records the stash keys it finds and stashes the widget's size, then a step that
/// reads it back.
fn store_then_read() -> Sequence<Widget> {
    let store = SyncReconciler::<Widget>::new("Store").sync(async |ctx, w| {
        ran(ctx, w, format!("keys at start: {:?}", ctx.stash().keys())).await;
        SIZE_SEEN.store(ctx, format!("size {}", w.spec.size));
        Ok(())
    });
    let read = SyncReconciler::<Widget>::new("Read").sync(async |ctx, w| {
        let seen = SIZE_SEEN.retrieve(ctx)?;
        ran(ctx, w, format!("read: {seen}")).await;
        Ok(())
    });
    Sequence::new([store.boxed(), read.boxed()])
}

#[test]
fn stash() {
    sub_tests()
        .stash_type(SIZE_SEEN)
        .case(
            "a value one step stashes is read by a later step",
            TestCase::sub_reconcile(&live())
                .expect_event(ran_event("keys at start: []"))
                .expect_event(ran_event("read: size 1"))
                .expect_stashed("size-seen", &"size 1"),
        )
        .case(
            "a value stashed before the steps run is replaced by the step that stashes it",
            // Also shows that the first step's record of the keys would catch a leftover value.
            TestCase::sub_reconcile(&live())
                .stash("size-seen", &"stale")
                .expect_event(ran_event("keys at start: [\"size-seen\"]"))
                .expect_event(ran_event("read: size 1"))
                .expect_stashed("size-seen", &"size 1"),
        )
        .run(|_| store_then_read());
}

/// Kept out of the tables: a case runs one reconcile with a reconciler built for it, and what
/// this checks is that a second reconcile by the same reconciler does not see the first one's
/// stash.
#[tokio::test]
async fn a_second_reconcile_by_the_same_reconciler_starts_with_an_empty_stash() {
    let server = server().await;
    create_widget(&server, "w", &[]).await;
    let events = EventLog::default();
    let config = Config::new(server.client(), "test").with_recorder(events.clone());
    let reconciler = ResourceReconciler::new(config, store_then_read());
    let request = Request::namespaced("default", "w");

    reconciler.reconcile(&request).await.unwrap();
    reconciler.reconcile(&request).await.unwrap();

    let notes: Vec<Option<String>> = events.events().into_iter().map(|e| e.event.note).collect();
    let expected = [
        "keys at start: []",
        "read: size 1",
        "keys at start: []",
        "read: size 1",
    ];
    assert_eq!(notes, expected.map(|n| Some(n.to_owned())));
}

// ---- Request time ----

/// A hook recording the request time it sees, then taking a little while, so that a clock read
/// by a later hook would differ.
fn records_now() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Now").sync(async |ctx, w| {
        ran(ctx, w, format!("at {}", ctx.now())).await;
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok(())
    })
}

#[test]
fn request_time() {
    let at_now = format!("at {NOW}");
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "every hook, however nested, sees the time the reconcile was given",
            TestCase::reconcile(Request::namespaced("default", "w"))
                .at(NOW.parse().unwrap())
                .given(&live())
                .expect_event(ran_event(&at_now))
                .expect_event(ran_event(&at_now))
                .expect_event(ran_event(&at_now)),
        )
        .run(|env| {
            let tree = Sequence::new([
                records_now().boxed(),
                records_now().boxed(),
                Always::new([records_now().boxed()]).boxed(),
            ]);
            ResourceReconciler::new(env.config(), tree)
        });
}
