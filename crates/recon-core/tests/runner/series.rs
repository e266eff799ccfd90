//! The series a runner exports, as controller-runtime exports them: every counter at zero from
//! the start (Prometheus's `rate()` sees no increase in a series' first sample), panics caught
//! and counted, the workqueue's work figures, retries, and the election's slow path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;
use recon_core::runner::{Metrics, Runner};
use recon_core::{Config, IntoBoxed, ResourceReconciler, Sequence, SyncReconciler};
use recon_fake::{ApiServer, Failure, Verb};

use recon_test_fixtures::{Widget, widget};

use crate::support::*;

/// The value of the sample whose line starts with `series` (its name and labels).
fn sample(metrics: &Metrics, series: &str) -> Option<f64> {
    let text = metrics.encode_prometheus();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn value(metrics: &Metrics, series: &str) -> f64 {
    sample(metrics, series)
        .unwrap_or_else(|| panic!("no {series} in\n{}", metrics.encode_prometheus()))
}

fn of_controller(name: &str) -> String {
    format!("{name}{{controller=\"{CONTROLLER}\"}}")
}

fn of_queue(name: &str) -> String {
    format!("{name}{{controller=\"{CONTROLLER}\",name=\"{CONTROLLER}\"}}")
}

/// Waits until the controller created the widget's child.
async fn until_the_child_exists(server: &ApiServer) {
    let children: Api<ConfigMap> = Api::default_namespaced(server.setup_client());
    let created = async {
        while children.get_opt("w-child").await.unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), created)
        .await
        .expect("the controller never created the child");
}

#[tokio::test(start_paused = true)]
async fn a_standby_exports_every_series_at_zero_before_any_reconcile() {
    let server = server_with_a_widget().await;
    let a = replica(&server, "replica-a", &Cut::default(), Duration::ZERO).await;
    until_leading(&a, true).await;
    let b = replica(&server, "replica-b", &Cut::default(), Duration::ZERO).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!b.leadership().borrow().leading);

    let metrics = b.metrics();
    for result in ["success", "error", "requeue", "requeue_after"] {
        let series = format!(
            "controller_runtime_reconcile_total{{controller=\"{CONTROLLER}\",result=\"{result}\"}}"
        );
        assert_eq!(value(metrics, &series), 0.0, "{series}");
    }
    for series in [
        of_controller("controller_runtime_reconcile_errors_total"),
        of_controller("controller_runtime_terminal_reconcile_errors_total"),
        of_controller("controller_runtime_reconcile_panics_total"),
        of_controller("controller_runtime_max_concurrent_reconciles"),
        of_controller("controller_runtime_active_workers"),
        of_queue("workqueue_retries_total"),
        of_queue("workqueue_unfinished_work_seconds"),
        of_queue("workqueue_longest_running_processor_seconds"),
        of_queue("workqueue_work_duration_seconds_count"),
        format!("leader_election_slowpath_total{{name=\"{LEASE}\"}}"),
        format!("leader_election_master_status{{name=\"{LEASE}\"}}"),
    ] {
        assert_eq!(value(metrics, &series), 0.0, "{series}");
    }
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_reconcile_limit_is_exported_and_applied() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let running = Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO).max_concurrent_reconciles(3),
            Api::all(client),
            watcher::Config::default(),
        )
        .start()
        .await
        .unwrap();
    assert_eq!(
        value(
            running.metrics(),
            &of_controller("controller_runtime_max_concurrent_reconciles")
        ),
        3.0
    );
    running.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_panicking_reconcile_is_counted_retried_and_the_controller_goes_on() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let panicked = Arc::new(AtomicBool::new(false));
    let cursed =
        SyncReconciler::new("Cursed").sync_with(Arc::clone(&panicked), async |_, panicked, _| {
            let first = !panicked.swap(true, Ordering::SeqCst);
            assert!(!first, "the widget is cursed");
            Ok(())
        });
    let mut steps = vec![cursed.boxed()];
    steps.extend(widget_steps(Duration::ZERO, None));
    let reconciler = ResourceReconciler::new(
        Config::new(client.clone(), CONTROLLER),
        Sequence::new(steps),
    )
    .named(CONTROLLER)
    .delays(RESYNC, Duration::from_millis(50));
    let running = Runner::new(client.clone())
        .controller(reconciler, Api::all(client), watcher::Config::default())
        .start()
        .await
        .unwrap();
    until_the_child_exists(&server).await;

    let metrics = running.metrics();
    assert_eq!(
        value(
            metrics,
            &of_controller("controller_runtime_reconcile_panics_total")
        ),
        1.0
    );
    assert_eq!(
        value(
            metrics,
            &of_controller("controller_runtime_reconcile_errors_total")
        ),
        1.0
    );
    assert_eq!(
        value(
            metrics,
            &format!(
                "controller_runtime_reconcile_total{{controller=\"{CONTROLLER}\",result=\"error\"}}"
            )
        ),
        1.0
    );
    assert_eq!(value(metrics, &of_queue("workqueue_retries_total")), 1.0);
    assert_eq!(
        value(metrics, &of_controller("controller_runtime_active_workers")),
        0.0
    );
    running.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn unfinished_work_counts_the_reconciles_under_way_and_work_duration_the_finished() {
    let server = server_with_a_widget().await;
    let a = replica(
        &server,
        "replica-a",
        &Cut::default(),
        Duration::from_secs(28),
    )
    .await;
    until_leading(&a, true).await;
    let metrics = a.metrics();
    let reconciling = async {
        while value(metrics, &of_controller("controller_runtime_active_workers")) < 1.0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), reconciling)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let unfinished = value(metrics, &of_queue("workqueue_unfinished_work_seconds"));
    let longest = value(
        metrics,
        &of_queue("workqueue_longest_running_processor_seconds"),
    );
    assert!((10.0..10.01).contains(&unfinished), "{unfinished}");
    assert_eq!(unfinished, longest, "one reconcile under way");
    assert_eq!(
        value(metrics, &of_queue("workqueue_work_duration_seconds_count")),
        0.0
    );

    tokio::time::sleep(Duration::from_secs(20)).await;
    assert!(value(metrics, &of_queue("workqueue_work_duration_seconds_count")) >= 1.0);
    // client-go's buckets: 28 s lands between 10 s and 100 s.
    let bucket = |le: &str| {
        value(
            metrics,
            &format!(
                "workqueue_work_duration_seconds_bucket{{controller=\"{CONTROLLER}\",name=\"{CONTROLLER}\",le=\"{le}\"}}"
            ),
        )
    };
    assert_eq!(bucket("10"), 0.0);
    assert!(bucket("100") >= 1.0);
    a.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_read_is_a_retry() {
    let server = server_with_a_widget().await;
    server
        .on(Verb::Get, "widgets")
        .once()
        .fail(Failure::Forbidden("not yet".to_owned()));
    let running = serving_endpoints(&server).await;
    until_the_child_exists(&server).await;
    assert_eq!(
        value(running.metrics(), &of_queue("workqueue_retries_total")),
        1.0
    );
    running.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_renewal_refused_by_a_stale_lease_takes_the_slow_path() {
    let server = server_with_a_widget().await;
    let a = replica(&server, "replica-a", &Cut::default(), Duration::ZERO).await;
    until_leading(&a, true).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let slowpath = format!("leader_election_slowpath_total{{name=\"{LEASE}\"}}");
    assert_eq!(value(a.metrics(), &slowpath), 0.0);

    // Someone labels the Lease: the leader's next update, guarded by the resourceVersion it
    // wrote, is refused, and it reads the Lease to renew.
    let leases: Api<Lease> = Api::default_namespaced(server.setup_client());
    let label = Patch::Merge(serde_json::json!({"metadata": {"labels": {"seen": "yes"}}}));
    leases
        .patch(LEASE, &PatchParams::default(), &label)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(value(a.metrics(), &slowpath), 1.0);
    assert!(a.leadership().borrow().leading);
    a.shutdown().await;
}

/// A runner reconciling one widget at a time, each reconcile 10 s, asking for no requeue and
/// writing nothing: the queue holds only what the watches and the test put in it.
async fn one_at_a_time(server: &ApiServer) -> recon_core::runner::RunningRunner {
    let client = server.client();
    let slow = SyncReconciler::<Widget>::new("Slow").sync(async |_, _| {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(())
    });
    let reconciler = ResourceReconciler::new(Config::new(client.clone(), CONTROLLER), slow)
        .named(CONTROLLER)
        .max_concurrent_reconciles(1);
    Runner::new(client.clone())
        .controller(reconciler, Api::all(client), watcher::Config::default())
        .start()
        .await
        .unwrap()
}

/// Depth, adds, and the queue durations' count and sum.
fn queue(metrics: &Metrics) -> (f64, f64, f64, f64) {
    let depth = value(
        metrics,
        &format!(
            "workqueue_depth{{controller=\"{CONTROLLER}\",name=\"{CONTROLLER}\",priority=\"\"}}"
        ),
    );
    let adds = value(metrics, &of_queue("workqueue_adds_total"));
    let count = value(metrics, &of_queue("workqueue_queue_duration_seconds_count"));
    let sum = value(metrics, &of_queue("workqueue_queue_duration_seconds_sum"));
    (depth, adds, count, (sum * 10.0).round() / 10.0)
}

#[tokio::test(start_paused = true)]
async fn the_queue_counts_objects_due_once_and_how_long_each_waited() {
    let server = server_with_a_widget().await;
    let widgets: Api<Widget> = Api::default_namespaced(server.setup_client());
    for name in ["w2", "w3"] {
        widgets
            .create(&Default::default(), &widget(name, 1))
            .await
            .unwrap();
    }
    let started = tokio::time::Instant::now();
    let running = one_at_a_time(&server).await;
    let metrics = running.metrics();
    let at = |seconds: u64| tokio::time::sleep_until(started + Duration::from_secs(seconds));

    // Listed: three due, one taken at once, two waiting.
    at(5).await;
    assert_eq!(queue(metrics), (2.0, 3.0, 1.0, 0.0));
    // The second waited 10 s, the third 20 s.
    at(15).await;
    assert_eq!(queue(metrics), (1.0, 3.0, 2.0, 10.0));
    at(35).await;
    assert_eq!(queue(metrics), (0.0, 3.0, 3.0, 30.0));

    // A resize makes `w` due once more, and it is taken at once.
    resize(&server, 2).await;
    at(40).await;
    assert_eq!(queue(metrics), (0.0, 4.0, 4.0, 30.0));
    // While `w` is reconciled (until 45 s), `w2` changes, then is deleted while it waits: when
    // its turn comes at 45 s it leaves the queue without a reconcile, after 4 s.
    let label = Patch::Merge(serde_json::json!({"metadata": {"labels": {"hot": "yes"}}}));
    at(41).await;
    widgets
        .patch("w2", &PatchParams::default(), &label)
        .await
        .unwrap();
    at(42).await;
    assert_eq!(queue(metrics), (1.0, 5.0, 4.0, 30.0));
    widgets.delete("w2", &Default::default()).await.unwrap();
    at(50).await;
    assert_eq!(queue(metrics), (0.0, 5.0, 5.0, 34.0));
    running.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_requeue_is_added_when_its_delay_has_passed() {
    let server = server_with_a_widget().await;
    // Each reconcile asks for the next a second later (`RESYNC`), and takes no time.
    let running = serving_endpoints(&server).await;
    let metrics = running.metrics();
    until_the_child_exists(&server).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (depth, adds, taken, waited) = queue(metrics);
    assert!(adds >= 10.0, "{adds} adds in 10 s of requeues every second");
    assert_eq!(adds - depth, taken, "every add but those due is taken");
    assert!(waited < 0.1, "a requeue is taken when due: {waited}");
    running.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_controller_the_runner_does_not_build_has_no_queue_series() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let running = Runner::new(client.clone())
        .controller_with(reconciler(client.clone(), Duration::ZERO), move |r| {
            r.controller(Api::all(client.clone()), watcher::Config::default())
        })
        .start()
        .await
        .unwrap();
    until_the_child_exists(&server).await;
    let text = running.metrics().encode_prometheus();
    for series in [
        "workqueue_depth{",
        "workqueue_adds_total{",
        "workqueue_queue_duration_seconds_count{",
    ] {
        assert!(!text.contains(series), "{series} in\n{text}");
    }
    assert_eq!(
        value(running.metrics(), &of_queue("workqueue_retries_total")),
        0.0
    );
    running.shutdown().await;
}
