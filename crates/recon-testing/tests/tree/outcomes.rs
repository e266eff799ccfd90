//! How a reconcile ends, as tables: the outcomes and errors `Sequence` and `Always` gather from
//! their steps, and what the root `ResourceReconciler` makes of them (a result, an error, a
//! status write or none). Then, as plain tests, the glue turning those into
//! `kube::runtime::Controller` actions.
//!
//! A table builds one reconciler for all its cases, so the steps here are scripted by the case:
//! each reads what to do from an annotation of the widget it reconciles (see `Scripted`), and
//! publishes a `Ran` event first, so a case's expected events say which steps ran, in order.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{CustomResourceExt, Resource};
use recon_core::{
    Always, Config, Context, Error, ErrorKind, Event, EventLog, IntoBoxed, Outcome,
    ReconcileFailed, Request, ResourceReconciler, Sequence, SyncReconciler,
};
use recon_fake::Verb;
use recon_test_fixtures::*;
use recon_testing::{ErrorSignal, EventRef, PatchRef, ReconcilerTests, TestCase, TestEnv};
use serde::{Deserialize, Serialize};

use crate::support::*;

// ---- Scripted steps ----

/// One thing a scripted step does.
#[derive(Debug, Serialize, Deserialize)]
enum Does {
    /// Sets `status.ready`, and goes on with the next action.
    MarkReady,
    /// Ends the step asking for a requeue.
    Requeue,
    /// Ends the step asking for a requeue after this many seconds.
    RequeueAfter(u64),
    /// Fails loudly with this message.
    Fail(String),
    /// Fails quietly, with this message or as a bare signal.
    FailQuietly(Option<String>),
    /// Fails durably (a bare signal).
    FailDurably,
    /// Fails with this message, asking the root not to write status.
    FailSkippingStatus(String),
}

/// Scripting the steps on a given widget.
trait Scripted {
    /// Makes the step `step` do `does` after what it was already scripted to do.
    fn doing(self, step: &str, does: Does) -> Self;
}

impl Scripted for Widget {
    fn doing(mut self, step: &str, does: Does) -> Self {
        let annotations = self.metadata.annotations.get_or_insert_default();
        let entry = annotations.entry(script_key(step)).or_insert("[]".into());
        let mut script: Vec<Does> = serde_json::from_str(entry).unwrap();
        script.push(does);
        *entry = serde_json::to_string(&script).unwrap();
        self
    }
}

/// Runs the script of `step` on `w`: its actions in order, until one ends the step (a step with
/// no script succeeds with nothing to do). `hook` says which hook runs it, for the `Ran` event.
async fn run_script(
    hook: &'static str,
    step: &'static str,
    ctx: &Context,
    w: &mut Widget,
) -> Result<Outcome, Error> {
    let what = match hook {
        "sync" => step.to_owned(),
        _ => format!("{hook} {step}"),
    };
    ctx.publish(&w.object_ref(&()), Event::normal("Ran", "Test", what))
        .await;
    let script: Vec<Does> = w
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&script_key(step)))
        .map(|json| serde_json::from_str(json).expect("a valid script"))
        .unwrap_or_default();
    for does in script {
        match does {
            Does::MarkReady => w.status.get_or_insert_default().ready = Some(true),
            Does::Requeue => return Ok(Outcome::requeue()),
            Does::RequeueAfter(secs) => {
                return Ok(Outcome::requeue_after(Duration::from_secs(secs)));
            }
            Does::Fail(message) => return Err(Error::msg(message)),
            Does::FailQuietly(Some(message)) => {
                return Err(Error::msg(message).with(ErrorKind::Quiet));
            }
            Does::FailQuietly(None) => return Err(Error::signal(ErrorKind::Quiet)),
            Does::FailDurably => return Err(Error::signal(ErrorKind::Durable)),
            Does::FailSkippingStatus(message) => {
                return Err(Error::msg(message).with(ErrorKind::SkipStatusUpdate));
            }
        }
    }
    Ok(Outcome::done())
}

/// The scripted step `name`: its sync hook runs the script on a live widget, its finalize hook
/// on a terminating one.
fn step(name: &'static str) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new(name)
        .sync_with(name, async |ctx, &name, w| {
            run_script("sync", name, ctx, w).await
        })
        .finalize_with(name, async |ctx, &name, w| {
            run_script("finalize", name, ctx, w).await
        })
}

/// The event a step publishes when its sync hook runs (`ran("finalize step")`: its finalize hook).
fn ran(step: &str) -> EventRef {
    EventRef::normal("Ran", step)
}

// ---- Given objects, requests, checks ----

fn reconcile(name: &str) -> TestCase {
    TestCase::reconcile(Request::namespaced("default", name))
}

fn widgets_table() -> ReconcilerTests {
    ReconcilerTests::new().crd(&Widget::crd())
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn ready_patch() -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        serde_json::json!({"status": {"ready": true}}),
    )
}

/// A check that the reconciler sent exactly `expected` (reads included, which the table's own
/// expectations leave out).
fn sent_only(
    expected: &'static [&'static str],
) -> impl Fn(&TestEnv, &recon_testing::Expectations) -> Result<(), String> + Send + Sync + 'static {
    move |env, _| {
        let sent = sent(env);
        if sent == expected {
            Ok(())
        } else {
            Err(format!("sent {sent:#?}"))
        }
    }
}

/// The stored widget `w`, read without a request.
fn stored(env: &TestEnv) -> Result<Widget, String> {
    env.server()
        .stored_as::<Widget>(Some("default"), "w")
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the widget is gone".to_owned())
}

/// Checks that the stored widget's `status.ready` is `expected`.
fn stored_ready(env: &TestEnv, expected: Option<bool>) -> Result<(), String> {
    let status = stored(env)?.status;
    if status.as_ref().and_then(|s| s.ready) == expected {
        Ok(())
    } else {
        Err(format!("stored status: {status:?}"))
    }
}

// ---- Sequence ----

#[test]
fn sequence() {
    widgets_table()
        .case(
            "steps run in order",
            reconcile("w")
                .given(&live())
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_event(ran("third")),
        )
        .case(
            "the first error stops the sequence and is returned",
            reconcile("w")
                .given(&live().doing("second", Does::Fail("second step failed".into())))
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_error("second step failed"),
        )
        .case(
            // reconciler.io's root turns any quiet error (ErrDurable is one) into a bare requeue
            // (resource.go), whatever the steps asked for before it.
            "a durable error stops the sequence and the root requeues",
            reconcile("w")
                .given(
                    &live()
                        .doing("first", Does::RequeueAfter(10))
                        .doing("second", Does::FailDurably),
                )
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_result(Outcome::requeue()),
        )
        .case(
            // As controller-runtime acts on it, a delay implies the requeue.
            "an outcome is compared as the controller acts on it",
            reconcile("w")
                .given(&live().doing("first", Does::RequeueAfter(10)))
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_event(ran("third"))
                .expect_result(Outcome {
                    requeue: true,
                    requeue_after: Some(secs(10)),
                }),
        )
        .case(
            "the smallest non-zero delay wins",
            reconcile("w")
                .given(
                    &live()
                        .doing("first", Does::RequeueAfter(30))
                        .doing("second", Does::RequeueAfter(0))
                        .doing("third", Does::RequeueAfter(10)),
                )
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_event(ran("third"))
                .expect_result(Outcome::requeue_after(secs(10))),
        )
        .case(
            "a requeue asked by one step survives another's delay and a later success",
            reconcile("w")
                .given(
                    &live()
                        .doing("first", Does::Requeue)
                        .doing("second", Does::RequeueAfter(30)),
                )
                .expect_event(ran("first"))
                .expect_event(ran("second"))
                .expect_event(ran("third"))
                .expect_result(Outcome {
                    requeue: true,
                    requeue_after: Some(secs(30)),
                }),
        )
        .run(|env| {
            let steps = [step("first"), step("second"), step("third")];
            ResourceReconciler::new(env.config(), Sequence::new(steps.map(IntoBoxed::boxed)))
        });
}

// ---- Always ----

#[test]
fn always() {
    let all_ran = |case: TestCase| {
        case.expect_event(ran("first"))
            .expect_event(ran("second"))
            .expect_event(ran("third"))
    };
    widgets_table()
        .case(
            "every step runs even after errors, and the errors are joined",
            all_ran(
                reconcile("w").given(
                    &live()
                        .doing("first", Does::Fail("loud failed".into()))
                        .doing("second", Does::FailQuietly(Some("quiet failed".into())))
                        .doing("third", Does::Requeue),
                ),
            )
            .expect_error("loud failed\nquiet failed"),
        )
        .case(
            "errors that are all quiet end the reconcile with a requeue",
            all_ran(
                reconcile("w").given(
                    &live()
                        .doing("first", Does::FailQuietly(None))
                        .doing("second", Does::FailQuietly(Some("q2".into()))),
                ),
            )
            .expect_result(Outcome::requeue()),
        )
        .case(
            "one loud error makes the joined error loud",
            all_ran(
                reconcile("w").given(
                    &live()
                        .doing("first", Does::FailQuietly(None))
                        .doing("second", Does::Fail("loud".into())),
                ),
            )
            .expect_error("quiet\nloud"),
        )
        .case(
            // The joined error carries the steps' outcome, but the root returns a bare requeue
            // for a quiet error, as reconciler.io does (resource.go).
            "a delay asked beside quiet errors gives way to the root's requeue",
            all_ran(
                reconcile("w").given(
                    &live()
                        .doing("first", Does::FailQuietly(None))
                        .doing("second", Does::FailQuietly(None))
                        .doing("third", Does::RequeueAfter(10)),
                ),
            )
            .expect_result(Outcome::requeue()),
        )
        .run(|env| {
            let steps = [step("first"), step("second"), step("third")];
            ResourceReconciler::new(env.config(), Always::new(steps.map(IntoBoxed::boxed)))
        });
}

// ---- ResourceReconciler ----

#[test]
fn resource_reconciler() {
    widgets_table()
        .case(
            "a missing resource ends done and sends only the GET",
            reconcile("absent").expect_missing().verify(sent_only(&[
                "GET /apis/example.com/v1/namespaces/default/widgets/absent -> 404",
            ])),
        )
        .case(
            "a quiet error ends the reconcile with a requeue",
            reconcile("w")
                .given(&live().doing("step", Does::FailQuietly(Some("not yet".into()))))
                .expect_event(ran("step"))
                .expect_result(Outcome::requeue()),
        )
        .case(
            // reconciler.io's ErrDurable is quiet, so its root requeues (resource.go).
            "a durable error without a status change ends the reconcile with a requeue",
            reconcile("w")
                .given(&live().doing("step", Does::FailDurably))
                .expect_event(ran("step"))
                .expect_result(Outcome::requeue()),
        )
        .case(
            "a skip-status-update error writes no status even though the status changed",
            reconcile("w")
                .given(
                    &live()
                        .doing("step", Does::MarkReady)
                        .doing("step", Does::FailSkippingStatus("do not write".into())),
                )
                .expect_event(ran("step"))
                .expect_error("do not write")
                .expect_error_signal(ErrorSignal::SkipStatusUpdate)
                .verify(sent_only(&[
                    "GET /apis/example.com/v1/namespaces/default/widgets/w -> 200",
                ])),
        )
        .case(
            // reconciler.io drops it after a status write; recon returns it (recon_core::guide::reconciler_io,
            // "Differences from reconciler.io").
            "a loud error is returned and the status change is still written",
            reconcile("w")
                .given(
                    &live()
                        .doing("step", Does::MarkReady)
                        .doing("step", Does::Fail("boom".into())),
                )
                .expect_event(ran("step"))
                .expect_status_patch(ready_patch())
                .expect_event(status_patched())
                .expect_error("boom")
                .verify(|env, _| {
                    // The write is locked on the resourceVersion read, and it landed.
                    let requests = env.server().requests();
                    let first = |verb| requests.iter().find(|r| r.verb == verb);
                    let read = first(Verb::Get).and_then(|r| r.response_json());
                    let patch = first(Verb::Patch).and_then(|r| r.body_json());
                    let (read, patch) = (read.unwrap_or_default(), patch.unwrap_or_default());
                    let (read, lock) = (
                        &read["metadata"]["resourceVersion"],
                        &patch["metadata"]["resourceVersion"],
                    );
                    if read.is_null() || read != lock {
                        return Err(format!("read {read}, locked on {lock}"));
                    }
                    stored_ready(env, Some(true))
                }),
        )
        .case(
            "a terminating resource gets no status write",
            reconcile("w")
                .given(&terminating().doing("step", Does::MarkReady))
                .expect_event(ran("finalize step"))
                .verify(sent_only(&[
                    "GET /apis/example.com/v1/namespaces/default/widgets/w -> 200",
                ])),
        )
        .run(|env| ResourceReconciler::new(env.config(), step("step")));
}

/// The hooks around the tree, as reconciler.io's `ResourceReconciler` has them
/// (`SkipRequest`, `SkipResource`, `Default`, `BeforeReconcile`, `AfterReconcile`).
#[test]
fn resource_reconciler_hooks() {
    const GET_W: &str = "GET /apis/example.com/v1/namespaces/default/widgets/w -> 200";
    widgets_table()
        .case(
            "a skipped request reads nothing",
            reconcile("w")
                .metadata("hooks", &"skip request")
                .given(&live().doing("step", Does::MarkReady))
                .verify(sent_only(&[])),
        )
        .case(
            "a skipped resource is read, and the tree does not run",
            reconcile("w")
                .metadata("hooks", &"skip resource")
                .given(&live().doing("step", Does::MarkReady))
                .verify(sent_only(&[GET_W])),
        )
        .case(
            "the tree sees the defaulted resource, and only its status is written",
            reconcile("w")
                .metadata("hooks", &"default")
                .given(&live())
                .expect_event(ran("step"))
                .expect_status_patch(ready_patch())
                .expect_event(status_patched())
                .verify(|env, _| {
                    let annotations = stored(env)?.metadata.annotations.unwrap_or_default();
                    match annotations.is_empty() {
                        true => Ok(()),
                        false => Err(format!("defaulted spec stored: {annotations:?}")),
                    }
                }),
        )
        .case(
            "before's outcome is merged with the tree's",
            reconcile("w")
                .metadata("hooks", &"before")
                .given(&live().doing("step", Does::RequeueAfter(30)))
                .expect_event(ran("step"))
                .expect_result(Outcome::requeue_after(secs(10))),
        )
        .case(
            "before's error ends the reconcile before anything is read",
            reconcile("w")
                .metadata("hooks", &"before fails")
                .given(&live())
                .expect_error("not now")
                .verify(sent_only(&[])),
        )
        .case(
            "after replaces what the reconcile returned",
            reconcile("w")
                .metadata("hooks", &"after")
                .given(&live().doing("step", Does::Fail("boom".into())))
                .expect_event(ran("step"))
                .expect_result(Outcome::requeue_after(secs(7))),
        )
        .case(
            "a quiet error after returns is still a requeue",
            reconcile("w")
                .metadata("hooks", &"after")
                .given(&live())
                .expect_event(ran("step"))
                .expect_result(Outcome::requeue()),
        )
        .run(|env| {
            let root = ResourceReconciler::new(env.config(), step("step"));
            let hooks = env.metadata("hooks").and_then(|h| h.as_str()).unwrap_or("");
            match hooks {
                "skip request" => root.skip_request(|ctx| ctx.request().name == "w"),
                "skip resource" => root.skip_resource(|_, w: &Widget| w.spec.size == 1),
                "default" => root.default_resource(|_, w| {
                    *w = w.clone().doing("step", Does::MarkReady);
                    Ok(())
                }),
                "before" => root.before_reconcile(async |_| Ok(Outcome::requeue_after(secs(10)))),
                "before fails" => {
                    root.before_reconcile(async |_| Err::<(), _>(Error::msg("not now")))
                }
                "after" => root.after_reconcile(async |_, result| match result {
                    Err(_) => Ok(Outcome::requeue_after(secs(7))),
                    Ok(_) => Err(Error::signal(ErrorKind::Quiet)),
                }),
                _ => root,
            }
        });
}

#[test]
fn resource_reconciler_syncing_status_during_finalization() {
    widgets_table()
        .case(
            "a terminating resource gets its status written",
            reconcile("w")
                .given(&terminating().doing("step", Does::MarkReady))
                .expect_event(ran("finalize step"))
                .expect_status_patch(ready_patch())
                .expect_event(status_patched())
                .verify(|env, _| stored_ready(env, Some(true))),
        )
        .run(|env| {
            ResourceReconciler::new(env.config(), step("step"))
                .sync_status_during_finalization(true)
        });
}

/// Kept out of the tables until they can say it: a case's `error` is compared by message only,
/// so the signals the returned error keeps and the outcome it carries are checked here.
#[tokio::test]
async fn the_error_a_reconcile_returns_keeps_its_signals_and_the_outcome_gathered_before_it() {
    let server = server().await;
    let scripted = live()
        .doing("first", Does::RequeueAfter(10))
        .doing("second", Does::Fail("boom".into()))
        .doing("third", Does::MarkReady)
        .doing("third", Does::FailSkippingStatus("do not write".into()));
    widgets(&server).create(&pp(), &scripted).await.unwrap();
    let config = Config::new(server.client(), "test").with_recorder(EventLog::default());
    let reconcile = |tree| async {
        ResourceReconciler::new(config.clone(), tree)
            .reconcile(&Request::namespaced("default", "w"))
            .await
            .unwrap_err()
    };

    let sequence =
        reconcile(Sequence::new([step("first").boxed(), step("second").boxed()]).boxed()).await;
    assert_eq!(sequence.to_string(), "boom");
    assert!(!sequence.is_quiet());
    assert_eq!(sequence.outcome(), Outcome::requeue_after(secs(10)));

    // The step that succeeds runs after the one that fails.
    let always =
        reconcile(Always::new([step("second").boxed(), step("first").boxed()]).boxed()).await;
    assert_eq!(always.to_string(), "boom");
    assert_eq!(always.outcome(), Outcome::requeue_after(secs(10)));

    let skipping = reconcile(step("third").boxed()).await;
    assert_eq!(skipping.to_string(), "do not write");
    assert!(skipping.is_skip_status_update());
}

// ---- Controller glue ----

#[tokio::test]
async fn action_maps_requeue_after_to_requeue_with_that_delay_requeue_to_the_requeue_delay_and_done_to_await_change()
 {
    let server = server().await;
    let reconciler = ResourceReconciler::new(Config::new(server.client(), "test"), noop())
        .delays(secs(2), secs(9));
    let both = Outcome {
        requeue: true,
        requeue_after: Some(secs(30)),
    };
    let requeue_with_zero_delay = Outcome {
        requeue: true,
        requeue_after: Some(Duration::ZERO),
    };

    assert_eq!(
        reconciler.action(Outcome::requeue_after(secs(30))),
        Action::requeue(secs(30))
    );
    assert_eq!(
        reconciler.action(Outcome::requeue()),
        Action::requeue(secs(2))
    );
    assert_eq!(reconciler.action(Outcome::done()), Action::await_change());
    assert_eq!(reconciler.action(both), Action::requeue(secs(30)));
    assert_eq!(
        reconciler.action(requeue_with_zero_delay),
        Action::requeue(secs(2))
    );
}

#[tokio::test]
async fn error_policy_awaits_change_on_a_durable_error_and_otherwise_requeues_after_the_error_delay()
 {
    let server = server().await;
    let object = Arc::new(create_widget(&server, "w", &[]).await);
    let reconciler = Arc::new(
        ResourceReconciler::new(Config::new(server.client(), "test"), noop())
            .delays(secs(2), secs(9)),
    );

    let durable = ReconcileFailed(Error::msg("bad spec").with(ErrorKind::Durable));
    let loud = ReconcileFailed(Error::msg("boom"));
    let quiet = ReconcileFailed(Error::signal(ErrorKind::Quiet));

    assert_eq!(
        ResourceReconciler::error_policy(object.clone(), &durable, reconciler.clone()),
        Action::await_change()
    );
    assert_eq!(
        ResourceReconciler::error_policy(object.clone(), &loud, reconciler.clone()),
        Action::requeue(secs(9))
    );
    assert_eq!(
        ResourceReconciler::error_policy(object, &quiet, reconciler),
        Action::requeue(secs(9))
    );
}

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn reconcile_object_future_is_send_and_reconciles_the_object_it_is_given() {
    let server = server().await;
    create_widget(&server, "a", &[]).await;
    let b = create_widget(&server, "b", &[]).await;
    let events = EventLog::default();
    let config = Config::new(server.client(), "test").with_recorder(events.clone());
    let tree = SyncReconciler::<Widget>::new("MarkReady").sync(async |ctx, w| {
        let name = w.metadata.name.clone().unwrap_or_default();
        ctx.publish(&w.object_ref(&()), Event::normal("Ran", "Test", name))
            .await;
        w.status.get_or_insert_default().ready = Some(true);
        Ok(())
    });
    let reconciler = Arc::new(ResourceReconciler::new(config, tree));
    server.clear_requests();

    let future = ResourceReconciler::reconcile_object(Arc::new(b), reconciler.clone());
    assert_send(&future);
    let action = future.await.unwrap();

    assert_eq!(action, Action::await_change());
    let ran_on: Vec<Option<String>> = events
        .events()
        .into_iter()
        .filter(|e| e.event.reason == "Ran")
        .map(|e| e.event.note)
        .collect();
    assert_eq!(ran_on, [Some("b".to_owned())]);
    let names: Vec<Option<String>> = server.requests().into_iter().map(|r| r.name).collect();
    assert_eq!(names, [Some("b".to_owned()), Some("b".to_owned())]);
    let ready = |w: Widget| w.status.and_then(|s| s.ready);
    assert_eq!(ready(widgets(&server).get("b").await.unwrap()), Some(true));
    assert_eq!(ready(widgets(&server).get("a").await.unwrap()), None);
}
