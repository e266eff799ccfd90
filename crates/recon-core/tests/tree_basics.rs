//! The reconciler tree against the in-memory API server: `SyncReconciler` hooks, `Sequence`,
//! `Always`, the stash, the request time, the root `ResourceReconciler` (how it ends a reconcile
//! and when it writes status), the `patch_status` helpers, and the glue for
//! `kube::runtime::Controller`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use recon_core::fake::{ApiServer, Verb};
use recon_core::{
    Always, Config, Context, Error, ErrorKind, EventLog, IntoBoxed, Outcome, ReconcileFailed,
    Request, ResourceReconciler, Sequence, Stasher, SubReconciler, SyncReconciler, patch_status,
    patch_status_locked,
};
use serde_json::json;

/// What the hooks of a test saw, in order.
type Log = Arc<Mutex<Vec<String>>>;

fn new_log() -> Log {
    Arc::default()
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A server with the test CRDs, an event log, and a config recording into it.
async fn setup() -> (ApiServer, EventLog, Config) {
    let server = server().await;
    let events = EventLog::default();
    let config = Config::new(server.client(), "test").with_recorder(events.clone());
    (server, events, config)
}

fn request(name: &str) -> Request {
    Request::namespaced("default", name)
}

/// Creates the Widget `name` with a finalizer and deletes it: it stays, terminating.
async fn terminating_widget(server: &ApiServer, name: &str) -> Widget {
    create_widget(server, name, &["example.com/keep"]).await;
    widgets(server)
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete widget");
    let w = widgets(server).get(name).await.expect("still stored");
    assert!(w.metadata.deletion_timestamp.is_some(), "terminating");
    w
}

/// A step that records `name`, then ends with `result()`.
fn step(
    name: &'static str,
    log: &Log,
    result: fn() -> Result<Outcome, Error>,
) -> SyncReconciler<Widget> {
    let log = log.clone();
    SyncReconciler::new(name).sync_with_outcome(move |_, _| {
        let log = log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(name.to_owned());
            result()
        })
    })
}

fn ok() -> Result<Outcome, Error> {
    Ok(Outcome::done())
}

/// A sync reconciler recording `sync:<name>` and `finalize:<name>`.
fn sync_and_finalize(log: &Log) -> SyncReconciler<Widget> {
    let (sync_log, finalize_log) = (log.clone(), log.clone());
    SyncReconciler::<Widget>::new("SyncAndFinalize")
        .sync(move |_, w| {
            let log = sync_log.clone();
            Box::pin(async move {
                log.lock()
                    .unwrap()
                    .push(format!("sync:{}", w.metadata.name.as_deref().unwrap()));
                Ok(())
            })
        })
        .finalize(move |_, w| {
            let log = finalize_log.clone();
            Box::pin(async move {
                log.lock()
                    .unwrap()
                    .push(format!("finalize:{}", w.metadata.name.as_deref().unwrap()));
                Ok(())
            })
        })
}

fn sets_ready(result: fn() -> Result<(), Error>) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("SetsReady").sync(move |_, w| {
        Box::pin(async move {
            w.status.get_or_insert_default().ready = Some(true);
            result()
        })
    })
}

fn status_writes(server: &ApiServer) -> Vec<recon_core::fake::RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.subresource.as_deref() == Some("status"))
        .collect()
}

fn ready(w: &Widget) -> Option<bool> {
    w.status.as_ref().and_then(|s| s.ready)
}

// ---- SyncReconciler ----

#[tokio::test]
async fn sync_runs_on_a_live_resource_and_not_on_a_terminating_one() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "live", &[]).await;
    terminating_widget(&server, "doomed").await;
    let log = new_log();
    let sync_log = log.clone();
    let tree = SyncReconciler::<Widget>::new("Sync").sync(move |_, w| {
        let log = sync_log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(w.metadata.name.clone().unwrap());
            Ok(())
        })
    });
    let reconciler = ResourceReconciler::new(config, tree);

    reconciler.reconcile(&request("live")).await.unwrap();
    reconciler.reconcile(&request("doomed")).await.unwrap();

    assert_eq!(entries(&log), ["live"]);
}

#[tokio::test]
async fn finalize_runs_only_on_a_terminating_resource() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "live", &[]).await;
    terminating_widget(&server, "doomed").await;
    let log = new_log();
    let reconciler = ResourceReconciler::new(config, sync_and_finalize(&log));

    reconciler.reconcile(&request("live")).await.unwrap();
    reconciler.reconcile(&request("doomed")).await.unwrap();

    assert_eq!(entries(&log), ["sync:live", "finalize:doomed"]);
}

#[tokio::test]
async fn sync_during_finalization_runs_sync_then_finalize() {
    let (server, _events, config) = setup().await;
    terminating_widget(&server, "doomed").await;
    let log = new_log();
    let tree = sync_and_finalize(&log).sync_during_finalization(true);
    let reconciler = ResourceReconciler::new(config, tree);

    reconciler.reconcile(&request("doomed")).await.unwrap();

    assert_eq!(entries(&log), ["sync:doomed", "finalize:doomed"]);
}

#[tokio::test]
async fn sync_with_outcome_returns_the_hook_outcome() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let tree = SyncReconciler::<Widget>::new("Later").sync_with_outcome(|_, _| {
        Box::pin(async { Ok(Outcome::requeue_after(Duration::from_secs(30))) })
    });
    let reconciler = ResourceReconciler::new(config, tree);

    let outcome = reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(outcome, Outcome::requeue_after(Duration::from_secs(30)));
}

// ---- Sequence ----

#[tokio::test]
async fn sequence_runs_steps_in_order() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = Sequence::new([
        step("first", &log, ok).boxed(),
        step("second", &log, ok).boxed(),
        step("third", &log, ok).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(entries(&log), ["first", "second", "third"]);
}

#[tokio::test]
async fn sequence_stops_at_the_first_error() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = Sequence::new([
        step("first", &log, ok).boxed(),
        step("failing", &log, || Err(Error::msg("second step failed"))).boxed(),
        step("never", &log, ok).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    let err = reconciler.reconcile(&request("w")).await.unwrap_err();

    assert_eq!(err.to_string(), "second step failed");
    assert_eq!(entries(&log), ["first", "failing"]);
}

#[tokio::test]
async fn sequence_error_carries_the_outcome_gathered_before_it() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = Sequence::new([
        step("later", &log, || {
            Ok(Outcome::requeue_after(Duration::from_secs(10)))
        })
        .boxed(),
        step("failing", &log, || Err(Error::msg("boom"))).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    let err = reconciler.reconcile(&request("w")).await.unwrap_err();

    assert_eq!(err.to_string(), "boom");
    assert_eq!(
        err.outcome(),
        Outcome::requeue_after(Duration::from_secs(10))
    );
}

#[tokio::test]
async fn sequence_outcomes_aggregate_requeue_ored_and_smallest_non_zero_delay() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = Sequence::new([
        step("thirty", &log, || {
            Ok(Outcome::requeue_after(Duration::from_secs(30)))
        })
        .boxed(),
        step("requeue", &log, || Ok(Outcome::requeue())).boxed(),
        step("zero", &log, || Ok(Outcome::requeue_after(Duration::ZERO))).boxed(),
        step("ten", &log, || {
            Ok(Outcome::requeue_after(Duration::from_secs(10)))
        })
        .boxed(),
        step("done", &log, ok).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    let outcome = reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(
        outcome,
        Outcome {
            requeue: true,
            requeue_after: Some(Duration::from_secs(10)),
        }
    );
}

// ---- Always ----

#[tokio::test]
async fn always_runs_every_step_even_after_errors() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = Always::new([
        step("loud", &log, || Err(Error::msg("loud failed"))).boxed(),
        step("quiet", &log, || {
            Err(Error::msg("quiet failed").with(ErrorKind::Quiet))
        })
        .boxed(),
        step("fine", &log, || Ok(Outcome::requeue())).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    let err = reconciler.reconcile(&request("w")).await.unwrap_err();

    assert_eq!(entries(&log), ["loud", "quiet", "fine"]);
    assert_eq!(err.to_string(), "loud failed\nquiet failed");
    assert_eq!(err.outcome(), Outcome::requeue());
}

#[tokio::test]
async fn always_joined_error_is_quiet_only_if_all_are_quiet() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let all_quiet = || {
        Always::new([
            step("q1", &log, || Err(Error::signal(ErrorKind::Quiet))).boxed(),
            step("q2", &log, || Err(Error::msg("q2").with(ErrorKind::Quiet))).boxed(),
        ])
    };
    let mixed = || {
        Always::new([
            step("q", &log, || Err(Error::signal(ErrorKind::Quiet))).boxed(),
            step("loud", &log, || Err(Error::msg("loud"))).boxed(),
        ])
    };

    // The joined errors themselves.
    let ctx = Context::new(config.clone(), request("w"));
    let mut w = widgets(&server).get("w").await.unwrap();
    let quiet = all_quiet().reconcile(&ctx, &mut w).await.unwrap_err();
    assert!(quiet.is_quiet(), "{quiet:?}");
    let loud = mixed().reconcile(&ctx, &mut w).await.unwrap_err();
    assert!(!loud.is_quiet(), "{loud:?}");

    // What the root makes of them: a quiet error is a requeue, a loud one is returned.
    let root = ResourceReconciler::new(config.clone(), all_quiet());
    assert_eq!(
        root.reconcile(&request("w")).await.unwrap(),
        Outcome::requeue()
    );
    let root = ResourceReconciler::new(config, mixed());
    let err = root.reconcile(&request("w")).await.unwrap_err();
    assert_eq!(err.to_string(), "quiet\nloud");
}

// ---- Stash ----

#[tokio::test]
async fn stash_value_stored_by_one_step_is_read_by_a_later_step_and_a_fresh_reconcile_starts_empty()
{
    const SIZE_SEEN: Stasher<String> = Stasher::new("size-seen");
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let (store_log, read_log) = (log.clone(), log.clone());
    let store = SyncReconciler::<Widget>::new("Store").sync(move |ctx, w| {
        let log = store_log.clone();
        Box::pin(async move {
            log.lock()
                .unwrap()
                .push(format!("keys at start: {:?}", ctx.stash().keys()));
            SIZE_SEEN.store(ctx, format!("size {}", w.spec.size));
            Ok(())
        })
    });
    let read = SyncReconciler::<Widget>::new("Read").sync(move |ctx, _| {
        let log = read_log.clone();
        Box::pin(async move {
            let seen = SIZE_SEEN.retrieve(ctx)?;
            log.lock().unwrap().push(format!("read: {seen}"));
            Ok(())
        })
    });
    let reconciler = ResourceReconciler::new(config, Sequence::new([store.boxed(), read.boxed()]));

    reconciler.reconcile(&request("w")).await.unwrap();
    reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(
        entries(&log),
        [
            "keys at start: []",
            "read: size 1",
            "keys at start: []",
            "read: size 1",
        ]
    );
}

// ---- Context time ----

#[tokio::test]
async fn reconcile_at_gives_every_hook_the_same_now() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
    let seen: Arc<Mutex<Vec<Timestamp>>> = Arc::default();
    let hook = |seen: &Arc<Mutex<Vec<Timestamp>>>| {
        let seen = seen.clone();
        SyncReconciler::<Widget>::new("Now").sync(move |ctx, _| {
            let seen = seen.clone();
            Box::pin(async move {
                seen.lock().unwrap().push(ctx.now());
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok(())
            })
        })
    };
    let tree = Sequence::new([
        hook(&seen).boxed(),
        hook(&seen).boxed(),
        Always::new([hook(&seen).boxed()]).boxed(),
    ]);
    let reconciler = ResourceReconciler::new(config, tree);

    reconciler.reconcile_at(&request("w"), now).await.unwrap();

    assert_eq!(*seen.lock().unwrap(), [now, now, now]);
}

// ---- ResourceReconciler ----

#[tokio::test]
async fn a_missing_resource_ends_done_and_sends_only_the_get() {
    let (server, events, config) = setup().await;
    server.clear_requests();
    let log = new_log();
    let reconciler = ResourceReconciler::new(config, step("never", &log, ok));

    let outcome = reconciler.reconcile(&request("absent")).await.unwrap();

    assert_eq!(outcome, Outcome::done());
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert_eq!(
        (
            requests[0].verb,
            requests[0].path.as_str(),
            requests[0].status
        ),
        (
            Verb::Get,
            "/apis/example.com/v1/namespaces/default/widgets/absent",
            404
        )
    );
    assert!(entries(&log).is_empty(), "the tree did not run");
    assert!(events.events().is_empty());
}

#[tokio::test]
async fn a_quiet_error_from_the_tree_becomes_ok_with_requeue() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = step("waiting", &log, || {
        Err(Error::msg("not yet").with(ErrorKind::Quiet))
    });
    let reconciler = ResourceReconciler::new(config, tree);

    let outcome = reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(outcome, Outcome::requeue());
}

#[tokio::test]
async fn a_durable_error_becomes_ok_without_requeue() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    let log = new_log();
    let tree = step("stuck", &log, || Err(Error::signal(ErrorKind::Durable)));
    let reconciler = ResourceReconciler::new(config, tree);

    let outcome = reconciler.reconcile(&request("w")).await.unwrap();

    assert_eq!(outcome, Outcome::done());
}

#[tokio::test]
async fn a_skip_status_update_error_writes_no_status_even_though_status_changed() {
    let (server, events, config) = setup().await;
    create_widget(&server, "w", &[]).await;
    server.clear_requests();
    let tree = sets_ready(|| Err(Error::msg("do not write").with(ErrorKind::SkipStatusUpdate)));
    let reconciler = ResourceReconciler::new(config, tree);

    let err = reconciler.reconcile(&request("w")).await.unwrap_err();

    assert_eq!(err.to_string(), "do not write");
    assert!(err.is_skip_status_update());
    let verbs: Vec<Verb> = server.requests().iter().map(|r| r.verb).collect();
    assert_eq!(verbs, [Verb::Get], "only the read");
    assert_eq!(ready(&widgets(&server).get("w").await.unwrap()), None);
    assert!(events.events().is_empty());
}

#[tokio::test]
async fn a_loud_error_is_returned_but_status_changes_are_still_written() {
    let (server, events, config) = setup().await;
    let created = create_widget(&server, "w", &[]).await;
    let rv_read = created.metadata.resource_version.clone().unwrap();
    server.clear_requests();
    let reconciler = ResourceReconciler::new(config, sets_ready(|| Err(Error::msg("boom"))));

    let err = reconciler.reconcile(&request("w")).await.unwrap_err();

    assert_eq!(err.to_string(), "boom");
    assert!(!err.is_quiet());
    let writes = status_writes(&server);
    assert_eq!(writes.len(), 1, "{writes:#?}");
    let write = &writes[0];
    assert_eq!(
        (write.verb, write.path.as_str(), write.status),
        (
            Verb::Patch,
            "/apis/example.com/v1/namespaces/default/widgets/w/status",
            200
        )
    );
    assert_eq!(
        write.body_json().unwrap(),
        json!({"metadata": {"resourceVersion": rv_read}, "status": {"ready": true}})
    );
    assert_eq!(ready(&widgets(&server).get("w").await.unwrap()), Some(true));
    let reasons: Vec<String> = events
        .events()
        .into_iter()
        .map(|e| e.event.reason)
        .collect();
    assert_eq!(reasons, ["StatusPatched"]);
}

#[tokio::test]
async fn a_terminating_resource_gets_no_status_write_unless_sync_status_during_finalization() {
    let (server, _events, config) = setup().await;
    terminating_widget(&server, "doomed").await;
    let finalize_sets_ready = || {
        SyncReconciler::<Widget>::new("FinalizeSetsReady").finalize(|_, w| {
            Box::pin(async move {
                w.status.get_or_insert_default().ready = Some(true);
                Ok(())
            })
        })
    };

    server.clear_requests();
    ResourceReconciler::new(config.clone(), finalize_sets_ready())
        .reconcile(&request("doomed"))
        .await
        .unwrap();
    assert!(status_writes(&server).is_empty(), "no status write");
    assert_eq!(ready(&widgets(&server).get("doomed").await.unwrap()), None);

    server.clear_requests();
    ResourceReconciler::new(config, finalize_sets_ready())
        .sync_status_during_finalization(true)
        .reconcile(&request("doomed"))
        .await
        .unwrap();
    let writes = status_writes(&server);
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].status, 200);
    assert_eq!(
        ready(&widgets(&server).get("doomed").await.unwrap()),
        Some(true)
    );
}

// ---- patch_status helpers ----

/// The Widget `w` whose stored status is `{ready: false}`, as read back.
async fn widget_not_ready(server: &ApiServer) -> Widget {
    create_widget(server, "w", &[]).await;
    widgets(server)
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": false}})),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn patch_status_sends_no_request_when_the_mutation_changes_nothing() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let api = widgets(&server);
    server.clear_requests();

    let same_value = patch_status(&api, &w, |w| {
        w.status.get_or_insert_default().ready = Some(false);
    })
    .await
    .unwrap();
    let no_change = patch_status(&api, &w, |_| {}).await.unwrap();
    let locked = patch_status_locked(&api, &w, |w| w.spec.size = 99)
        .await
        .unwrap();

    assert!(same_value.is_none() && no_change.is_none() && locked.is_none());
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
}

#[tokio::test]
async fn patch_status_body_is_exactly_the_changed_status_fields() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let api = widgets(&server);
    server.clear_requests();

    let patched = patch_status(&api, &w, |w| {
        w.spec.size = 7; // not status: not sent
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap()
    .expect("a patch was sent");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let patch = &requests[0];
    assert_eq!(
        (patch.verb, patch.path.as_str(), patch.status),
        (
            Verb::Patch,
            "/apis/example.com/v1/namespaces/default/widgets/w/status",
            200
        )
    );
    assert_eq!(
        patch.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(&patch.body[..], br#"{"status":{"ready":true}}"#);
    assert_eq!(ready(&patched), Some(true));
    assert_eq!(patched.spec.size, 1);
}

#[tokio::test]
async fn patch_status_locked_includes_the_resource_version() {
    let server = server().await;
    let w = widget_not_ready(&server).await;
    let rv_read = w.metadata.resource_version.clone().unwrap();
    let api = widgets(&server);
    server.clear_requests();

    let patched = patch_status_locked(&api, &w, |w| {
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap()
    .expect("a patch was sent");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert_eq!(
        requests[0].body_json().unwrap(),
        json!({"metadata": {"resourceVersion": rv_read}, "status": {"ready": true}})
    );
    assert_eq!(ready(&patched), Some(true));
}

#[tokio::test]
async fn patch_status_locked_with_a_stale_resource_is_a_409_conflict() {
    let server = server().await;
    let stale = widget_not_ready(&server).await;
    let api = widgets(&server);
    // Another writer changes the object after `stale` was read.
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"size": 2}})),
    )
    .await
    .unwrap();

    let err = status(
        patch_status_locked(&api, &stale, |w| {
            w.status.get_or_insert_default().ready = Some(true);
        })
        .await,
    );

    assert_status(
        &err,
        409,
        "Conflict",
        "Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again",
    );
    assert_eq!(ready(&api.get("w").await.unwrap()), Some(false));
    // Without the lock the same stale patch goes through.
    let unlocked = patch_status(&api, &stale, |w| {
        w.status.get_or_insert_default().ready = Some(true);
    })
    .await
    .unwrap();
    assert_eq!(unlocked.as_ref().and_then(ready), Some(true));
}

// ---- Controller glue ----

#[tokio::test]
async fn action_maps_requeue_after_to_requeue_with_that_delay_requeue_to_the_requeue_delay_and_done_to_await_change()
 {
    let (_server, _events, config) = setup().await;
    let log = new_log();
    let reconciler = ResourceReconciler::new(config, step("s", &log, ok))
        .delays(Duration::from_secs(2), Duration::from_secs(9));
    let both = Outcome {
        requeue: true,
        requeue_after: Some(Duration::from_secs(30)),
    };
    let requeue_with_zero_delay = Outcome {
        requeue: true,
        requeue_after: Some(Duration::ZERO),
    };

    assert_eq!(
        reconciler.action(Outcome::requeue_after(Duration::from_secs(30))),
        Action::requeue(Duration::from_secs(30))
    );
    assert_eq!(
        reconciler.action(Outcome::requeue()),
        Action::requeue(Duration::from_secs(2))
    );
    assert_eq!(reconciler.action(Outcome::done()), Action::await_change());
    assert_eq!(
        reconciler.action(both),
        Action::requeue(Duration::from_secs(30))
    );
    assert_eq!(
        reconciler.action(requeue_with_zero_delay),
        Action::requeue(Duration::from_secs(2))
    );
}

#[tokio::test]
async fn error_policy_awaits_change_on_a_durable_error_and_otherwise_requeues_after_the_error_delay()
 {
    let (server, _events, config) = setup().await;
    let object = Arc::new(create_widget(&server, "w", &[]).await);
    let log = new_log();
    let reconciler = Arc::new(
        ResourceReconciler::new(config, step("s", &log, ok))
            .delays(Duration::from_secs(2), Duration::from_secs(9)),
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
        Action::requeue(Duration::from_secs(9))
    );
    assert_eq!(
        ResourceReconciler::error_policy(object, &quiet, reconciler),
        Action::requeue(Duration::from_secs(9))
    );
}

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn reconcile_object_future_is_send_and_reconciles_the_object_it_is_given() {
    let (server, _events, config) = setup().await;
    create_widget(&server, "a", &[]).await;
    let b = create_widget(&server, "b", &[]).await;
    let log = new_log();
    let sync_log = log.clone();
    let tree = SyncReconciler::<Widget>::new("MarkReady").sync(move |_, w| {
        let log = sync_log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(w.metadata.name.clone().unwrap());
            w.status.get_or_insert_default().ready = Some(true);
            Ok(())
        })
    });
    let reconciler = Arc::new(ResourceReconciler::new(config, tree));
    server.clear_requests();

    let future = ResourceReconciler::reconcile_object(Arc::new(b), reconciler.clone());
    assert_send(&future);
    let action = future.await.unwrap();

    assert_eq!(action, Action::await_change());
    assert_eq!(entries(&log), ["b"]);
    let names: Vec<Option<String>> = server.requests().into_iter().map(|r| r.name).collect();
    assert_eq!(names, [Some("b".to_owned()), Some("b".to_owned())]);
    assert_eq!(ready(&widgets(&server).get("b").await.unwrap()), Some(true));
    assert_eq!(ready(&widgets(&server).get("a").await.unwrap()), None);
}
