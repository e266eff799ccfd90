//! Hooks as `async fn` items and async closures (`SyncReconciler::sync` and `finalize`), in a
//! sequence given as a tuple (`Sequence::of`), against the same tree with hooks given their
//! step's name as state (`SyncReconciler::sync_with` and `finalize_with`, `Sequence::new` of
//! boxed steps).
//!
//! Each table runs on both trees, so the two forms meet the same expectations: the hooks that
//! run and their order, the outcome, the error, its signals, and the outcome it carries. The
//! steps are scripted by the case, through an annotation of the widget they reconcile (see
//! `act`), and publish a `Ran` event first, so a case's expected events say which hooks ran.

use std::time::Duration;

use kube::{CustomResourceExt, Resource};
use recon_core::{Context, Error, ErrorKind, Event, IntoBoxed, Outcome, Sequence, SyncReconciler};
use recon_test_fixtures::*;
use recon_testing::{ErrorSignal, EventRef, SubReconcilerTests, TestCase};

use crate::support::*;

// ---- Scripted hooks ----

/// Publishes that `hook` of `step` ran, then does what the annotation `script_key(step)` of the
/// resource says: `requeue-after:<secs>`, `fail:<message>` or `fail-quietly:<message>`
/// (nothing, without it).
async fn act<R: Resource<DynamicType = ()>>(
    hook: &str,
    step: &str,
    ctx: &Context,
    resource: &mut R,
) -> Result<Outcome, Error> {
    let ran = format!("{hook} {step}");
    ctx.publish(&resource.object_ref(&()), Event::normal("Ran", "Test", ran))
        .await;
    let script = resource
        .meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(&script_key(step)))
        .cloned()
        .unwrap_or_default();
    match script.split_once(':') {
        Some(("requeue-after", secs)) => Ok(Outcome::requeue_after(Duration::from_secs(
            secs.parse().expect("a number of seconds"),
        ))),
        Some(("fail", message)) => Err(Error::msg(message)),
        Some(("fail-quietly", message)) => Err(Error::msg(message).with(ErrorKind::Quiet)),
        _ => Ok(Outcome::done()),
    }
}

// ---- The unboxed tree ----

/// A generic `async fn` item as a hook without an outcome.
async fn first_sync<R: Resource<DynamicType = ()>>(
    ctx: &Context,
    resource: &mut R,
) -> Result<(), Error> {
    act("sync", "first", ctx, resource).await.map(|_| ())
}

async fn first_finalize(ctx: &Context, w: &mut Widget) -> Result<(), Error> {
    act("finalize", "first", ctx, w).await.map(|_| ())
}

async fn second_sync(ctx: &Context, w: &mut Widget) -> Result<Outcome, Error> {
    act("sync", "second", ctx, w).await
}

async fn second_finalize(ctx: &Context, w: &mut Widget) -> Result<Outcome, Error> {
    act("finalize", "second", ctx, w).await
}

/// `first` with hooks returning nothing, `second` with `async fn` items returning an outcome,
/// `third` with async closures; in a tuple.
fn unboxed() -> Sequence<Widget> {
    Sequence::of((
        SyncReconciler::<Widget>::new("first")
            .sync(first_sync)
            .finalize(first_finalize),
        SyncReconciler::<Widget>::new("second")
            .sync(second_sync)
            .finalize(second_finalize),
        SyncReconciler::<Widget>::new("third")
            .sync(async |ctx, w| act("sync", "third", ctx, w).await)
            .finalize(async |ctx, w| act("finalize", "third", ctx, w).await),
    ))
}

// ---- The same tree, with state, boxed ----

/// The same steps, each hook given its step's name as state.
fn boxed() -> Sequence<Widget> {
    let step = |name: &'static str| {
        SyncReconciler::<Widget>::new(name)
            .sync_with(name, async |ctx, name, w| act("sync", name, ctx, w).await)
            .finalize_with(name, async |ctx, name, w| {
                act("finalize", name, ctx, w).await
            })
    };
    Sequence::new([
        SyncReconciler::<Widget>::new("first")
            .sync_with("first", async |ctx, name, w| {
                act("sync", name, ctx, w).await.map(|_| ())
            })
            .finalize_with("first", async |ctx, name, w| {
                act("finalize", name, ctx, w).await.map(|_| ())
            })
            .boxed(),
        step("second").boxed(),
        step("third").boxed(),
    ])
}

// ---- Given widgets ----

/// `w` with `step` scripted to do `does`.
fn doing(mut w: Widget, step: &str, does: &str) -> Widget {
    w.metadata
        .annotations
        .get_or_insert_default()
        .insert(script_key(step), does.to_owned());
    w
}

fn ran(hook: &str, step: &str) -> EventRef {
    EventRef::normal("Ran", &format!("{hook} {step}"))
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

// ---- The tables ----

fn table() -> SubReconcilerTests {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a live resource gets every sync hook, in order",
            TestCase::sub_reconcile(&live())
                .expect_event(ran("sync", "first"))
                .expect_event(ran("sync", "second"))
                .expect_event(ran("sync", "third"))
                .expect_result(Outcome::done()),
        )
        .case(
            "a terminating resource gets every finalize hook, in order",
            TestCase::sub_reconcile(&terminating())
                .expect_event(ran("finalize", "first"))
                .expect_event(ran("finalize", "second"))
                .expect_event(ran("finalize", "third"))
                .expect_result(Outcome::done()),
        )
        .case(
            "the outcomes of an async fn and an async closure merge: the smallest delay wins",
            TestCase::sub_reconcile(&doing(
                doing(live(), "second", "requeue-after:30"),
                "third",
                "requeue-after:10",
            ))
            .expect_event(ran("sync", "first"))
            .expect_event(ran("sync", "second"))
            .expect_event(ran("sync", "third"))
            .expect_result(Outcome::requeue_after(secs(10))),
        )
        .case(
            "an error of a hook without an outcome stops the sequence",
            TestCase::sub_reconcile(&doing(live(), "first", "fail:first failed"))
                .expect_event(ran("sync", "first"))
                .expect_error("first failed")
                .expect_result(Outcome::done()),
        )
        .case(
            "an async closure's error carries the outcome gathered before it",
            TestCase::sub_reconcile(&doing(
                doing(live(), "second", "requeue-after:30"),
                "third",
                "fail:third failed",
            ))
            .expect_event(ran("sync", "first"))
            .expect_event(ran("sync", "second"))
            .expect_event(ran("sync", "third"))
            .expect_error("third failed")
            .expect_result(Outcome::requeue_after(secs(30))),
        )
        .case(
            "an async fn's error keeps its signals",
            TestCase::sub_reconcile(&doing(live(), "second", "fail-quietly:not yet"))
                .expect_event(ran("sync", "first"))
                .expect_event(ran("sync", "second"))
                .expect_error("not yet")
                .expect_error_signal(ErrorSignal::Quiet),
        )
        .case(
            "a finalize hook's outcome is the step's",
            TestCase::sub_reconcile(&doing(terminating(), "second", "requeue-after:5"))
                .expect_event(ran("finalize", "first"))
                .expect_event(ran("finalize", "second"))
                .expect_event(ran("finalize", "third"))
                .expect_result(Outcome::requeue_after(secs(5))),
        )
        .case(
            "a finalize hook's error stops the sequence",
            TestCase::sub_reconcile(&doing(terminating(), "third", "fail:still in use"))
                .expect_event(ran("finalize", "first"))
                .expect_event(ran("finalize", "second"))
                .expect_event(ran("finalize", "third"))
                .expect_error("still in use"),
        )
}

#[test]
fn unboxed_hooks_in_a_tuple() {
    table().run(|_| unboxed());
}

#[test]
fn boxed_hooks_in_a_list() {
    table().run(|_| boxed());
}
