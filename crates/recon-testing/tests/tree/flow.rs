//! The control-flow sub-reconcilers against the in-memory API server, as tables: `Advice`,
//! `IfThen`, `While`, `ForEach`, `TryCatch`, `OverrideSetup` and `WithConfig` (and the watches
//! each declares). `SuppressTransientErrors` has a file of its own.
//!
//! Steps publish a `Ran` event saying what ran, so a case's expected events are the log of the
//! steps that ran, in order; steps that write create ConfigMaps, so the expected creates are
//! the writes sent (an induced API failure makes one of them fail).

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use kube::{CustomResourceExt, Resource};
use recon_core::{
    Advice, BoxSubReconciler, Config, Context, Cursor, Error, Event, ForEach, IfThen, IntoBoxed,
    MaxIterationsExceeded, Outcome, OverrideSetup, Request, ResourceReconciler, Sequence, Setup,
    Stasher, SubReconciler, SuppressTransientErrors, SyncReconciler, Trigger, TryCatch,
    WHILE_ITERATION, While, WithConfig,
};
use recon_test_fixtures::*;
use recon_testing::{
    ErrorSpec, EventRef, ExpectConfig, Expectations, FailureSpec, PatchRef, ReactorSpec,
    ReconcilerTests, TestCase, TestEnv,
};
use serde_json::{Value, json};

use crate::support::*;

// ---- Shared helpers ----

/// Publishes that `what` ran, about `w`.
async fn ran(ctx: &Context, w: &Widget, what: impl Into<String>) {
    ctx.publish(&w.object_ref(&()), Event::normal("Ran", "Test", what))
        .await;
}

/// The live widget `w` of `size`, in `default`.
fn sized(size: i32) -> Widget {
    let mut w = widget("w", size);
    w.metadata.namespace = Some("default".to_owned());
    w
}

/// Creates the ConfigMap `name` in `default` with `config`'s client.
async fn create_configmap(config: &Config, name: &str) -> Result<(), Error> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    Api::<ConfigMap>::namespaced(config.client().clone(), "default")
        .create(&pp(), &cm)
        .await?;
    Ok(())
}

/// The ConfigMap [`create_configmap`] sends.
fn created(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

/// A step that publishes `what`, creates the ConfigMap `name`, and asks for `outcome`.
fn creates(what: &'static str, name: &'static str, outcome: Outcome) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new(what).sync_with(
        (what, name, outcome),
        async |ctx, &(what, name, outcome), w| {
            ran(ctx, w, what).await;
            create_configmap(ctx.config(), name).await?;
            Ok(outcome)
        },
    )
}

/// A step that publishes `what` and asks for `outcome`.
fn step(what: &'static str, outcome: Outcome) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new(what).sync_with(
        (what, outcome),
        async |ctx, &(what, outcome), w| {
            ran(ctx, w, what).await;
            Ok(outcome)
        },
    )
}

/// The message of an induced 500 with `cause`.
fn internal(cause: &str) -> String {
    format!("Internal error occurred: {cause}")
}

const ETCD_DOWN: &str = "etcd is down";

/// Every create of the ConfigMap `name` fails with a 500 caused by `cause`.
fn fail_create(name: &str, cause: &str) -> ReactorSpec {
    ReactorSpec {
        verb: "create".to_owned(),
        resource: "configmaps".to_owned(),
        group: None,
        subresource: None,
        namespace: None,
        name: Some(name.to_owned()),
        times: None,
        fail: FailureSpec::Internal(cause.to_owned()),
    }
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// The case's `variant` metadata (which reconciler the factory builds).
fn variant(env: &TestEnv) -> &str {
    env.metadata("variant")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Fails unless the reconcile left nothing under `key` in the stash.
fn left_nothing_under(key: &'static str) -> impl Fn(&TestEnv, &Expectations) -> Result<(), String> {
    move |_, seen| match seen.stashed.get(key) {
        None => Ok(()),
        Some(v) => Err(format!("{key} still stashed: {v}")),
    }
}

/// A counter kept in an annotation of the widget (visible in the expected resource).
fn count(w: &Widget, key: &str) -> usize {
    w.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn set_count(w: &mut Widget, key: &str, n: usize) {
    w.metadata
        .annotations
        .get_or_insert_default()
        .insert(key.to_owned(), n.to_string());
}

/// `w` with these annotation counters.
fn counted(mut w: Widget, counts: &[(&str, usize)]) -> Widget {
    for (key, n) in counts {
        set_count(&mut w, key, *n);
    }
    w
}

// ---- Advice ----

/// The step advised: publishes `nested`, creates `advised`, asks to come back in 10s.
fn advised() -> SyncReconciler<Widget> {
    creates("nested", "advised", Outcome::requeue_after(secs(10)))
}

fn advice_for(variant: &str) -> Advice<Widget> {
    let advice = Advice::new("Advice", advised());
    match variant {
        "bare" => advice,
        "failing before" => advice
            .before(async |ctx, w| {
                ran(ctx, w, "before").await;
                Err::<(), _>(Error::msg("not ready"))
            })
            .after(async |ctx, w, result| {
                ran(ctx, w, "after").await;
                result
            }),
        "twice" => advice.around(async |ctx, w, nested| {
            let first = nested.reconcile(ctx, w).await?;
            let second = nested.reconcile(ctx, w).await?;
            Ok(first.merge(second))
        }),
        "forgiving after" => advice.after(async |ctx, w, result| {
            ran(ctx, w, format!("after: {}", result.is_ok())).await;
            Ok(result.unwrap_or_else(|_| Outcome::requeue_after(secs(60))))
        }),
        _ => advice
            .before(async |ctx, w| {
                ran(ctx, w, "before").await;
                Ok(Outcome::requeue())
            })
            .around(async |ctx, w, nested| {
                ran(ctx, w, "around: in").await;
                let outcome = nested.reconcile(ctx, w).await?;
                ran(ctx, w, "around: out").await;
                Ok(outcome)
            })
            .after(async |ctx, w, result| {
                let note = match &result {
                    Ok(_) => "after: ok".to_owned(),
                    Err(e) => format!("after: {e}"),
                };
                ran(ctx, w, note).await;
                result
            }),
    }
}

#[test]
fn advice() {
    let requeue_and_10s = Outcome::requeue().merge(Outcome::requeue_after(secs(10)));
    sub_tests()
        .case(
            "before, around and after run in order and the outcomes merge",
            TestCase::sub_reconcile(&sized(1))
                .expect_event(ran_event("before"))
                .expect_event(ran_event("around: in"))
                .expect_event(ran_event("nested"))
                .expect_event(ran_event("around: out"))
                .expect_event(ran_event("after: ok"))
                .expect_create(&created("advised"))
                .expect_result(requeue_and_10s),
        )
        .case(
            "an API failure of the nested reconciler reaches after, with before's outcome",
            TestCase::sub_reconcile(&sized(1))
                .reactor(fail_create("advised", ETCD_DOWN))
                .expect_event(ran_event("before"))
                .expect_event(ran_event("around: in"))
                .expect_event(ran_event("nested"))
                .expect_event(ran_event(&format!("after: {}", internal(ETCD_DOWN))))
                .expect_create(&created("advised"))
                .expect_error(internal(ETCD_DOWN))
                .expect_result(Outcome::requeue()),
        )
        .case(
            "a failing before ends the reconcile at once",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"failing before")
                .expect_event(ran_event("before"))
                .expect_error("not ready"),
        )
        .case(
            "after turns a failure into a later requeue",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"forgiving after")
                .reactor(fail_create("advised", ETCD_DOWN))
                .expect_event(ran_event("nested"))
                .expect_event(ran_event("after: false"))
                .expect_create(&created("advised"))
                .expect_result(Outcome::requeue_after(secs(60))),
        )
        .case(
            "around may run the nested reconciler twice",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"twice")
                .expect_event(ran_event("nested"))
                .expect_event(ran_event("nested"))
                .expect_create(&created("advised"))
                .expect_create(&created("advised"))
                // The second create finds the first one's ConfigMap.
                .expect_error("already exists"),
        )
        .case(
            "without hooks the nested reconciler runs once",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"bare")
                .expect_event(ran_event("nested"))
                .expect_create(&created("advised"))
                .expect_result(Outcome::requeue_after(secs(10))),
        )
        .run(|env| advice_for(variant(env)));
}

// ---- IfThen ----

#[test]
fn if_then() {
    sub_tests()
        .case(
            "a resource meeting the condition gets then",
            TestCase::sub_reconcile(&sized(2))
                .expect_event(ran_event("then"))
                .expect_create(&created("big")),
        )
        .case(
            "a resource not meeting it gets otherwise",
            TestCase::sub_reconcile(&sized(1))
                .expect_event(ran_event("otherwise"))
                .expect_create(&created("small")),
        )
        .case(
            "without otherwise a resource not meeting the condition gets nothing",
            TestCase::sub_reconcile(&sized(1)).metadata("variant", &"no otherwise"),
        )
        .case(
            "an API failure in the branch taken is returned",
            TestCase::sub_reconcile(&sized(2))
                .reactor(fail_create("big", ETCD_DOWN))
                .expect_event(ran_event("then"))
                .expect_create(&created("big"))
                .expect_error(internal(ETCD_DOWN)),
        )
        .run(|env| {
            let branch = IfThen::new(
                "BigOrSmall",
                |_, w: &Widget| w.spec.size > 1,
                creates("then", "big", Outcome::done()),
            );
            match variant(env) {
                "no otherwise" => branch,
                _ => branch.otherwise(creates("otherwise", "small", Outcome::done())),
            }
        });
}

// ---- While ----

const COUNT: &str = "example.com/count";
const ITERATIONS_SEEN: Stasher<Vec<usize>> = Stasher::new("iterations-seen");

/// One iteration: records its index (event and stash), creates `w-<index>`, bumps the count,
/// and asks for a requeue sooner each time (60s, 50s, ...).
fn bump() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Bump").sync(async |ctx, w| {
        let i = While::<Widget>::iteration(ctx).ok_or_else(|| Error::msg("no iteration"))?;
        ran(ctx, w, format!("iteration {i}")).await;
        let mut seen = ITERATIONS_SEEN.retrieve_opt(ctx).unwrap_or_default();
        seen.push(i);
        ITERATIONS_SEEN.store(ctx, seen);
        create_configmap(ctx.config(), &format!("w-{i}")).await?;
        set_count(w, COUNT, count(w, COUNT) + 1);
        Ok(Outcome::requeue_after(secs(60 - 10 * i as u64)))
    })
}

#[test]
fn while_loop() {
    sub_tests()
        .stash_type(ITERATIONS_SEEN)
        .stash_type(WHILE_ITERATION)
        .case(
            "the nested reconciler runs while the condition holds, with the iteration stashed",
            TestCase::sub_reconcile(&sized(3))
                .expect_event(ran_event("iteration 0"))
                .expect_event(ran_event("iteration 1"))
                .expect_event(ran_event("iteration 2"))
                .expect_create(&created("w-0"))
                .expect_create(&created("w-1"))
                .expect_create(&created("w-2"))
                .expect_resource(&counted(sized(3), &[(COUNT, 3)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0, 1, 2])
                .expect_result(Outcome::requeue_after(secs(40)))
                .verify(left_nothing_under(WHILE_ITERATION.key())),
        )
        .case(
            "a condition false at once runs nothing",
            TestCase::sub_reconcile(&sized(0)),
        )
        .case(
            "the index of an enclosing loop is back after the loop",
            TestCase::sub_reconcile(&sized(1))
                .stash(WHILE_ITERATION.key(), &7)
                .expect_event(ran_event("iteration 0"))
                .expect_create(&created("w-0"))
                .expect_resource(&counted(sized(1), &[(COUNT, 1)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0])
                .expect_stashed(WHILE_ITERATION.key(), &7)
                .expect_result(Outcome::requeue_after(secs(60))),
        )
        .case(
            "an API failure stops the loop with the outcome gathered so far",
            TestCase::sub_reconcile(&sized(3))
                .reactor(fail_create("w-1", ETCD_DOWN))
                .expect_event(ran_event("iteration 0"))
                .expect_event(ran_event("iteration 1"))
                .expect_create(&created("w-0"))
                .expect_create(&created("w-1"))
                .expect_resource(&counted(sized(3), &[(COUNT, 1)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0, 1])
                .expect_error(internal(ETCD_DOWN))
                .expect_result(Outcome::requeue_after(secs(60)))
                .verify(left_nothing_under(WHILE_ITERATION.key())),
        )
        .case(
            "a condition still true after the limit fails the loop",
            TestCase::sub_reconcile(&sized(3))
                .metadata("variant", &"limit 2")
                .expect_event(ran_event("iteration 0"))
                .expect_event(ran_event("iteration 1"))
                .expect_create(&created("w-0"))
                .expect_create(&created("w-1"))
                .expect_resource(&counted(sized(3), &[(COUNT, 2)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0, 1])
                .expect_error("exceeded max iterations: 2")
                .expect_result(Outcome::requeue_after(secs(50))),
        )
        .case(
            // reconciler.io checks the limit before the condition (flow.go).
            "a loop reaching the limit fails even if its condition would end it",
            TestCase::sub_reconcile(&sized(2))
                .metadata("variant", &"limit 2")
                .expect_event(ran_event("iteration 0"))
                .expect_event(ran_event("iteration 1"))
                .expect_create(&created("w-0"))
                .expect_create(&created("w-1"))
                .expect_resource(&counted(sized(2), &[(COUNT, 2)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0, 1])
                .expect_error("exceeded max iterations: 2")
                .expect_result(Outcome::requeue_after(secs(50))),
        )
        .case(
            "the condition sees the index of the iteration about to run",
            TestCase::sub_reconcile(&sized(4))
                .metadata("variant", &"index below 2")
                .expect_event(ran_event("iteration 0"))
                .expect_event(ran_event("iteration 1"))
                .expect_create(&created("w-0"))
                .expect_create(&created("w-1"))
                .expect_resource(&counted(sized(4), &[(COUNT, 2)]))
                .expect_stashed(ITERATIONS_SEEN.key(), &[0, 1])
                .expect_result(Outcome::requeue_after(secs(50))),
        )
        .run(|env| {
            let below_size =
                |_: &Context, w: &Widget| count(w, COUNT) < w.spec.size.max(0) as usize;
            match variant(env) {
                "limit 2" => While::new("Repeat", below_size, bump()).max_iterations(Some(2)),
                // As reconciler.io's own While tests: the condition reads the index.
                "index below 2" => While::new(
                    "Repeat",
                    |ctx: &Context, _: &Widget| While::<Widget>::iteration(ctx) != Some(2),
                    bump(),
                ),
                _ => While::new("Repeat", below_size, bump()),
            }
        });
}

const OUTER: &str = "example.com/outer";
const INNER: &str = "example.com/inner";

/// Records the index of the innermost loop, then bumps `counter`.
fn record_and_bump(label: &'static str, counter: &'static str) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new(label).sync_with(
        (label, counter),
        async |ctx, &(label, counter), w| {
            let i = While::<Widget>::iteration(ctx).ok_or_else(|| Error::msg("no iteration"))?;
            ran(ctx, w, format!("{label} {i}")).await;
            set_count(w, counter, count(w, counter) + 1);
            Ok(())
        },
    )
}

#[test]
fn nested_while_loops() {
    sub_tests()
        .case(
            "the inner loop sees its own index and the outer index is back after it",
            TestCase::sub_reconcile(&sized(1))
                .expect_event(ran_event("inner 0"))
                .expect_event(ran_event("inner 1"))
                .expect_event(ran_event("outer 0"))
                .expect_event(ran_event("inner 0"))
                .expect_event(ran_event("inner 1"))
                .expect_event(ran_event("outer 1"))
                .expect_resource(&counted(sized(1), &[(INNER, 2), (OUTER, 2)])),
        )
        .run(|_| {
            let reset_inner = SyncReconciler::<Widget>::new("ResetInner").sync(async |_, w| {
                set_count(w, INNER, 0);
                Ok(())
            });
            let inner = While::new(
                "Inner",
                |_, w: &Widget| count(w, INNER) < 2,
                record_and_bump("inner", INNER),
            );
            let body = Sequence::new([
                reset_inner.boxed(),
                inner.boxed(),
                record_and_bump("outer", OUTER).boxed(),
            ]);
            While::new("Outer", |_, w: &Widget| count(w, OUTER) < 2, body)
        });
}

/// The limit error is a typed one, reachable through the error's cause.
#[tokio::test]
async fn exceeding_the_limit_is_a_max_iterations_exceeded_error() {
    let server = server().await;
    let ctx = Context::new(
        Config::new(server.client(), "test"),
        Request::namespaced("default", "w"),
    );
    let forever = While::new(
        "Forever",
        |_, _: &Widget| true,
        step("again", Outcome::done()),
    )
    .max_iterations(Some(4));
    let mut w = sized(1);

    let err = forever.reconcile(&ctx, &mut w).await.unwrap_err();

    let exceeded = err
        .cause()
        .and_then(|c| c.downcast_ref::<MaxIterationsExceeded>());
    assert_eq!(exceeded, Some(&MaxIterationsExceeded { iterations: 4 }));
    assert_eq!(While::<Widget>::iteration(&ctx), None, "index cleared");
}

/// `None` (or 0) lifts the limit: a loop longer than the default limit of 100 runs to its end,
/// while the same loop with the default limit fails.
#[tokio::test]
async fn an_unlimited_loop_runs_past_the_default_limit() {
    let server = server().await;
    let ctx = Context::new(
        Config::new(server.client(), "test"),
        Request::namespaced("default", "w"),
    );
    let long = || {
        let counter = SyncReconciler::<Widget>::new("Count").sync(async |_, w| {
            set_count(w, COUNT, count(w, COUNT) + 1);
            Ok(())
        });
        While::new("Long", |_, w: &Widget| count(w, COUNT) < 150, counter)
    };
    for limit in [None, Some(0)] {
        let mut w = sized(1);
        long()
            .max_iterations(limit)
            .reconcile(&ctx, &mut w)
            .await
            .unwrap();
        assert_eq!(count(&w, COUNT), 150, "limit {limit:?}");
    }
    let mut w = sized(1);
    let err = long().reconcile(&ctx, &mut w).await.unwrap_err();
    assert_eq!(err.to_string(), "exceeded max iterations: 100");
    assert_eq!(count(&w, COUNT), 100);
}

// ---- ForEach ----

const CURSORS_SEEN: Stasher<Vec<Cursor<String>>> = Stasher::new("cursors-seen");

/// For each item: records the cursor (event and stash), creates the ConfigMap named by the
/// item, and asks for a requeue later each time (10s, 20s, ...).
fn per_item() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("PerItem").sync(async |ctx, w| {
        let cursor =
            ForEach::<Widget, String>::cursor(ctx).ok_or_else(|| Error::msg("no cursor"))?;
        ran(
            ctx,
            w,
            format!("{}/{} {}", cursor.index + 1, cursor.length, cursor.item),
        )
        .await;
        let mut seen = CURSORS_SEEN.retrieve_opt(ctx).unwrap_or_default();
        seen.push(cursor.clone());
        CURSORS_SEEN.store(ctx, seen);
        create_configmap(ctx.config(), &cursor.item).await?;
        Ok(Outcome::requeue_after(secs(10 * (cursor.index as u64 + 1))))
    })
}

/// `item-0`, `item-1`, ... up to the widget's size; a negative size is an error.
fn items(_: &Context, w: &Widget) -> Result<Vec<String>, Error> {
    if w.spec.size < 0 {
        return Err(Error::msg("negative size"));
    }
    Ok((0..w.spec.size).map(|i| format!("item-{i}")).collect())
}

fn cursor(index: usize, length: usize, item: &str) -> Cursor<String> {
    Cursor {
        index,
        length,
        item: item.to_owned(),
    }
}

#[test]
fn for_each() {
    let cursor_key = Cursor::<String>::stasher().key();
    sub_tests()
        .stash_type(CURSORS_SEEN)
        .stash_type(Cursor::<String>::stasher())
        .case(
            "each item runs in order with its cursor stashed",
            TestCase::sub_reconcile(&sized(3))
                .expect_event(ran_event("1/3 item-0"))
                .expect_event(ran_event("2/3 item-1"))
                .expect_event(ran_event("3/3 item-2"))
                .expect_create(&created("item-0"))
                .expect_create(&created("item-1"))
                .expect_create(&created("item-2"))
                .expect_stashed(
                    CURSORS_SEEN.key(),
                    &[
                        cursor(0, 3, "item-0"),
                        cursor(1, 3, "item-1"),
                        cursor(2, 3, "item-2"),
                    ],
                )
                .expect_result(Outcome::requeue_after(secs(10)))
                .verify(left_nothing_under(cursor_key)),
        )
        .case("no items runs nothing", TestCase::sub_reconcile(&sized(0)))
        .case(
            "a failing items hook stops before any item",
            TestCase::sub_reconcile(&sized(-1)).expect_error("negative size"),
        )
        .case(
            "an API failure stops the loop at that item",
            TestCase::sub_reconcile(&sized(3))
                .reactor(fail_create("item-1", ETCD_DOWN))
                .expect_event(ran_event("1/3 item-0"))
                .expect_event(ran_event("2/3 item-1"))
                .expect_create(&created("item-0"))
                .expect_create(&created("item-1"))
                .expect_stashed(
                    CURSORS_SEEN.key(),
                    &[cursor(0, 3, "item-0"), cursor(1, 3, "item-1")],
                )
                .expect_error(internal(ETCD_DOWN))
                .expect_result(Outcome::requeue_after(secs(10)))
                .verify(left_nothing_under(cursor_key)),
        )
        .case(
            "the cursor of an enclosing loop over the same type is back after the loop",
            TestCase::sub_reconcile(&sized(1))
                .stash(cursor_key, &cursor(5, 9, "outer"))
                .expect_event(ran_event("1/1 item-0"))
                .expect_create(&created("item-0"))
                .expect_stashed(CURSORS_SEEN.key(), &[cursor(0, 1, "item-0")])
                .expect_stashed(cursor_key, &cursor(5, 9, "outer"))
                .expect_result(Outcome::requeue_after(secs(10))),
        )
        .run(|_| ForEach::new("EachItem", items, per_item()));
}

#[test]
fn nested_for_each_over_distinct_item_types() {
    sub_tests()
        .case(
            "the inner loop sees both cursors",
            TestCase::sub_reconcile(&sized(2))
                .expect_event(ran_event("a 0/2"))
                .expect_event(ran_event("a 1/2"))
                .expect_event(ran_event("b 0/2"))
                .expect_event(ran_event("b 1/2")),
        )
        .run(|_| {
            let both = SyncReconciler::<Widget>::new("Both").sync(async |ctx, w| {
                let outer = Cursor::<&'static str>::current(ctx)
                    .ok_or_else(|| Error::msg("no outer cursor"))?;
                let inner =
                    Cursor::<i32>::current(ctx).ok_or_else(|| Error::msg("no inner cursor"))?;
                ran(
                    ctx,
                    w,
                    format!("{} {}/{}", outer.item, inner.item, inner.length),
                )
                .await;
                Ok(())
            });
            let inner = ForEach::new(
                "Inner",
                |_, w: &Widget| Ok((0..w.spec.size).collect()),
                both,
            );
            ForEach::new("Outer", |_, _: &Widget| Ok(vec!["a", "b"]), inner)
        });
}

// ---- TryCatch ----

const DISK_FULL: &str = "disk full";

/// `try`: asks for a requeue in 30s, then creates `attempt`.
fn attempt() -> Sequence<Widget> {
    Sequence::new([
        step("try", Outcome::requeue_after(secs(30))).boxed(),
        creates("attempt", "attempt", Outcome::done()).boxed(),
    ])
}

fn try_catch_for(variant: &str) -> TryCatch<Widget> {
    let guarded = TryCatch::new("Guarded", attempt()).finally(creates(
        "finally",
        "cleanup",
        Outcome::requeue(),
    ));
    match variant {
        "swallow" => guarded.catch(async |ctx, w, result| match result {
            Ok(outcome) => {
                ran(ctx, w, "catch: ok").await;
                Ok(outcome)
            }
            Err(err) => {
                ran(ctx, w, format!("catch: {err}")).await;
                Ok(err.outcome().merge(Outcome::requeue_after(secs(5))))
            }
        }),
        "replace" => guarded.catch(async |_, _, result| {
            result.map_err(|err| {
                let gathered = err.outcome();
                Error::msg(format!("replaced: {err}")).with_outcome(gathered)
            })
        }),
        // reconciler.io's Catch may fail a successful Try, or ask for more.
        "fail success" => guarded.catch(async |_, _, result| {
            let outcome = result?;
            Err(Error::msg("caught a success").with_outcome(outcome))
        }),
        _ => guarded,
    }
}

#[test]
fn try_catch() {
    let requeue_and = |delay| Outcome::requeue().merge(Outcome::requeue_after(delay));
    sub_tests()
        .case(
            "catch sees a successful try too, then finally runs and the outcomes merge",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"swallow")
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("catch: ok"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_result(requeue_and(secs(30))),
        )
        .case(
            "catch swallows an API failure and finally still runs",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"swallow")
                .reactor(fail_create("attempt", ETCD_DOWN))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event(&format!("catch: {}", internal(ETCD_DOWN))))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_result(requeue_and(secs(5))),
        )
        .case(
            "catch replaces the error, which keeps the outcome try gathered",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"replace")
                .reactor(fail_create("attempt", ETCD_DOWN))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_error(format!("replaced: {}", internal(ETCD_DOWN)))
                .expect_result(requeue_and(secs(30))),
        )
        .case(
            "without catch the error of try is returned after finally",
            TestCase::sub_reconcile(&sized(1))
                .reactor(fail_create("attempt", ETCD_DOWN))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_error(internal(ETCD_DOWN))
                .expect_result(requeue_and(secs(30))),
        )
        .case(
            "the error of finally replaces the error of try",
            TestCase::sub_reconcile(&sized(1))
                .reactor(fail_create("attempt", ETCD_DOWN))
                .reactor(fail_create("cleanup", DISK_FULL))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                // Exactly: not a join of several errors.
                .expect_error(ErrorSpec::exactly(&internal(DISK_FULL)))
                .expect_result(Outcome::requeue_after(secs(30))),
        )
        .case(
            "catch may turn a successful try into a failure",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"fail success")
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_error("caught a success")
                .expect_result(requeue_and(secs(30))),
        )
        .case(
            "the error of finally fails a successful try",
            TestCase::sub_reconcile(&sized(1))
                .metadata("variant", &"swallow")
                .reactor(fail_create("cleanup", DISK_FULL))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event("catch: ok"))
                .expect_event(ran_event("finally"))
                .expect_create(&created("attempt"))
                .expect_create(&created("cleanup"))
                .expect_error(internal(DISK_FULL))
                .expect_result(Outcome::requeue_after(secs(30))),
        )
        .run(|env| try_catch_for(variant(env)));
}

#[test]
fn try_catch_without_finally() {
    sub_tests()
        .case(
            "catch alone handles the failure",
            TestCase::sub_reconcile(&sized(1))
                .reactor(fail_create("attempt", ETCD_DOWN))
                .expect_event(ran_event("try"))
                .expect_event(ran_event("attempt"))
                .expect_event(ran_event(&format!("catch: {}", internal(ETCD_DOWN))))
                .expect_create(&created("attempt"))
                .expect_result(Outcome::requeue_after(secs(5))),
        )
        .run(|_| {
            TryCatch::new("Guarded", attempt()).catch(async |ctx, w, result| {
                let err = result.err().ok_or_else(|| Error::msg("try succeeded"))?;
                ran(ctx, w, format!("catch: {err}")).await;
                Ok(err.outcome().merge(Outcome::requeue_after(secs(5))))
            })
        });
}

// ---- OverrideSetup ----

#[test]
fn override_setup() {
    sub_tests()
        .case(
            "the nested reconciler reconciles",
            TestCase::sub_reconcile(&sized(1))
                .expect_event(ran_event("nested"))
                .expect_create(&created("inner"))
                .expect_result(Outcome::requeue()),
        )
        .case(
            "an API failure of the nested reconciler is returned",
            TestCase::sub_reconcile(&sized(1))
                .reactor(fail_create("inner", ETCD_DOWN))
                .expect_event(ran_event("nested"))
                .expect_create(&created("inner"))
                .expect_error(internal(ETCD_DOWN)),
        )
        .case(
            "without a nested reconciler nothing happens",
            TestCase::sub_reconcile(&sized(1)).metadata("variant", &"setup only"),
        )
        .run(|env| {
            let only_secrets =
                OverrideSetup::new("OnlySecrets").setup_with(|s| s.tracks::<Secret>());
            match variant(env) {
                "setup only" => only_secrets,
                _ => only_secrets.reconciler(creates("nested", "inner", Outcome::requeue())),
            }
        });
}

// ---- WithConfig ----

/// Creates `mirror` with the config in effect and `home` with the original one, then marks the
/// widget ready (status the root writes with the original config).
fn mirror() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Mirror").sync(async |ctx, w| {
        create_configmap(ctx.config(), "mirror").await?;
        create_configmap(ctx.original_config(), "home").await?;
        ran(ctx, w, "mirrored").await;
        w.status.get_or_insert_default().ready = Some(true);
        Ok(())
    })
}

fn remote_expecting(creates: &[&str], reactors: Vec<ReactorSpec>) -> ExpectConfig {
    ExpectConfig {
        reactors,
        expect: Expectations {
            creates: creates.iter().map(|n| created(n)).collect(),
            ..Expectations::default()
        },
        ..ExpectConfig::default()
    }
}

#[test]
fn with_config() {
    let reconcile_w = || TestCase::reconcile(Request::namespaced("default", "w")).given(&sized(1));
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the nested reconciler writes to the other cluster and original_config stays home",
            reconcile_w()
                .additional_config("remote", remote_expecting(&["mirror"], vec![]))
                .expect_create(&created("home"))
                .expect_event(ran_event("mirrored"))
                .expect_status_patch(PatchRef::merge(
                    "Widget",
                    Some("default"),
                    "w",
                    json!({"status": {"ready": true}}),
                ))
                .expect_event(EventRef::normal("StatusPatched", "Patched status")),
        )
        .case(
            "an API failure in the other cluster is returned",
            reconcile_w()
                .additional_config(
                    "remote",
                    remote_expecting(&["mirror"], vec![fail_create("mirror", ETCD_DOWN)]),
                )
                .expect_error(internal(ETCD_DOWN)),
        )
        .case(
            "a failing config hook stops before the nested reconciler",
            reconcile_w().expect_error("no remote cluster"),
        )
        .run(|env| {
            let remote = env.config_named("remote");
            let tree = WithConfig::new(
                "Remote",
                move |_| {
                    remote
                        .clone()
                        .ok_or_else(|| Error::msg("no remote cluster"))
                },
                mirror(),
            );
            ResourceReconciler::new(env.config(), tree)
        });
}

// ---- Setup ----

/// A step declaring that it owns ConfigMaps.
struct OwnsConfigMaps;

/// A step declaring that it tracks Secrets.
struct TracksSecrets;

impl SubReconciler<Widget> for OwnsConfigMaps {
    fn name(&self) -> &str {
        "OwnsConfigMaps"
    }

    async fn reconcile(&self, _: &Context, _: &mut Widget) -> Result<Outcome, Error> {
        Ok(Outcome::done())
    }

    fn setup(&self, setup: &mut Setup) {
        setup.owns::<ConfigMap>();
    }
}

impl SubReconciler<Widget> for TracksSecrets {
    fn name(&self) -> &str {
        "TracksSecrets"
    }

    async fn reconcile(&self, _: &Context, _: &mut Widget) -> Result<Outcome, Error> {
        Ok(Outcome::done())
    }

    fn setup(&self, setup: &mut Setup) {
        setup.tracks::<Secret>();
    }
}

/// Watches as `(kind, trigger)`.
type Declared = Vec<(String, Trigger)>;

/// The watches `tree` declares.
fn watches(tree: &impl SubReconciler<Widget>) -> Declared {
    let mut setup = Setup::default();
    tree.setup(&mut setup);
    setup
        .watches()
        .iter()
        .map(|w| (w.resource.kind.clone(), w.trigger))
        .collect()
}

#[test]
fn each_combinator_declares_the_watches_of_what_it_holds() {
    let owns = || ("ConfigMap".to_owned(), Trigger::Owner);
    let tracks = || ("Secret".to_owned(), Trigger::Tracked);
    let cases: Vec<(&str, BoxSubReconciler<Widget>, Declared)> = vec![
        (
            "Advice, with hooks",
            Advice::new("A", OwnsConfigMaps)
                .before(async |_, _| Ok(Outcome::done()))
                .boxed(),
            vec![owns()],
        ),
        (
            "Advice, bare",
            Advice::new("A", OwnsConfigMaps).boxed(),
            vec![owns()],
        ),
        (
            "IfThen, both branches",
            IfThen::new("I", |_, _: &Widget| true, OwnsConfigMaps)
                .otherwise(TracksSecrets)
                .boxed(),
            vec![owns(), tracks()],
        ),
        (
            "While",
            While::new("W", |_, _: &Widget| false, OwnsConfigMaps).boxed(),
            vec![owns()],
        ),
        (
            "ForEach",
            ForEach::new("F", |_, _: &Widget| Ok(Vec::<u8>::new()), OwnsConfigMaps).boxed(),
            vec![owns()],
        ),
        (
            "TryCatch, try and finally",
            TryCatch::new("T", OwnsConfigMaps)
                .finally(TracksSecrets)
                .boxed(),
            vec![owns(), tracks()],
        ),
        (
            "WithConfig",
            WithConfig::new("C", |_| Err(Error::msg("unused")), OwnsConfigMaps).boxed(),
            vec![owns()],
        ),
        (
            "SuppressTransientErrors",
            SuppressTransientErrors::new("S", OwnsConfigMaps).boxed(),
            vec![owns()],
        ),
        (
            "OverrideSetup replaces the nested watches",
            OverrideSetup::new("O")
                .reconciler(OwnsConfigMaps)
                .setup_with(|s| s.tracks::<Secret>())
                .boxed(),
            vec![tracks()],
        ),
        (
            "OverrideSetup without a closure declares nothing",
            OverrideSetup::new("O").reconciler(OwnsConfigMaps).boxed(),
            vec![],
        ),
    ];
    let mut failures = Vec::new();
    for (what, tree, expected) in &cases {
        let declared = watches(tree);
        if declared != *expected {
            failures.push(format!(
                "{what}: declared {declared:?}, expected {expected:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn combinators_keep_their_names() {
    let names = [
        Advice::new("Advice", noop()).name().to_owned(),
        IfThen::new("IfThen", |_, _: &Widget| true, noop())
            .name()
            .to_owned(),
        While::new("While", |_, _: &Widget| true, noop())
            .name()
            .to_owned(),
        ForEach::new("ForEach", |_, _: &Widget| Ok(vec![1]), noop())
            .name()
            .to_owned(),
        TryCatch::new("TryCatch", noop()).name().to_owned(),
        OverrideSetup::<Widget>::new("OverrideSetup")
            .name()
            .to_owned(),
        WithConfig::new("WithConfig", |ctx| Ok(ctx.config().clone()), noop())
            .name()
            .to_owned(),
        SuppressTransientErrors::new("Suppress", noop())
            .name()
            .to_owned(),
    ];
    assert_eq!(
        names,
        [
            "Advice",
            "IfThen",
            "While",
            "ForEach",
            "TryCatch",
            "OverrideSetup",
            "WithConfig",
            "Suppress"
        ]
    );
}
