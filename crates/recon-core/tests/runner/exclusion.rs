//! No split brain: whatever stops a leader (its handle dropped, its Lease lost while it runs
//! or while it drains for shutdown, Lease requests refused or hanging) and whatever timings
//! `LeaderElection::check` accepts, no two replicas are ever inside a reconcile at once. Every
//! reconcile here takes 28 s, longer than any lease.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use recon_core::runner::{Drained, Metrics, RunningRunner};
use recon_fake::{ApiServer, Verb};

use crate::support::*;

/// Longer than every lease duration below.
const LONG: Duration = Duration::from_secs(28);

/// `controller_runtime_active_workers` of the widget controller.
fn active_workers(metrics: &Metrics) -> String {
    let text = metrics.encode_prometheus();
    let prefix = format!("controller_runtime_active_workers{{controller=\"{CONTROLLER}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_default()
        .to_owned()
}

/// A replica whose reconciles take [`LONG`] and are watched by `exclusive`.
async fn slow_replica(
    server: &ApiServer,
    identity: &str,
    lease: &Cut,
    exclusive: &Exclusive,
    timings: Option<(Duration, Duration, Duration)>,
) -> RunningRunner {
    replica_with(
        server,
        identity,
        lease,
        Options {
            pause: LONG,
            drain: Duration::from_secs(60),
            timings,
            exclusive: Some(exclusive.clone()),
        },
    )
    .await
}

/// Waits until `replica` is inside a reconcile.
async fn until_reconciling(exclusive: &Exclusive, replica: &str) {
    let inside = async {
        while !exclusive.reconciling(replica) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), inside)
        .await
        .expect("the replica never reconciled");
}

/// Waits until `identity` has renewed the Lease once more (a 200 to its update), and says when.
async fn until_renewed(server: &ApiServer, identity: &str) -> tokio::time::Instant {
    let agent = format!("{identity}-lease");
    let renewals = || {
        server
            .requests()
            .iter()
            .filter(|r| r.user_agent == agent && r.verb == Verb::Update && r.status == 200)
            .count()
    };
    let before = renewals();
    let renewed = async {
        while renewals() == before {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), renewed)
        .await
        .expect("the leader never renewed");
    tokio::time::Instant::now()
}

/// A leader, `replica-a`, in the middle of a reconcile, and a standby, `replica-b`.
struct Pair {
    server: ApiServer,
    exclusive: Exclusive,
    lease_a: Cut,
    a: RunningRunner,
    b: RunningRunner,
}

async fn leader_and_standby() -> Pair {
    let server = server_with_a_widget().await;
    let exclusive = Exclusive::new();
    let lease_a = Cut::default();
    let a = slow_replica(&server, "replica-a", &lease_a, &exclusive, None).await;
    until_leading(&a, true).await;
    let b = slow_replica(&server, "replica-b", &Cut::default(), &exclusive, None).await;
    until_reconciling(&exclusive, "replica-a").await;
    Pair {
        server,
        exclusive,
        lease_a,
        a,
        b,
    }
}

fn assert_exclusive(exclusive: &Exclusive) {
    assert_eq!(exclusive.overlaps(), Vec::<String>::new(), "split brain");
}

#[tokio::test(start_paused = true)]
async fn a_dropped_leader_cancels_its_long_reconcile_at_once() {
    let Pair {
        server: _server,
        exclusive,
        lease_a: _lease_a,
        a,
        b,
    } = leader_and_standby().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let a_metrics = a.metrics().clone();
    assert_eq!(active_workers(&a_metrics), "1");

    drop(a);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        !exclusive.reconciling("replica-a"),
        "the dropped replica went on reconciling"
    );
    assert_eq!(active_workers(&a_metrics), "0");

    // b takes over once the Lease expired, and reconciles alone.
    until_leading(&b, true).await;
    until_reconciling(&exclusive, "replica-b").await;
    tokio::time::sleep(LONG * 2).await;
    assert!(exclusive.reconciles_of("replica-b") >= 2);
    assert_exclusive(&exclusive);
    b.shutdown().await;
}

/// A leader shutting down (its drain deadline a minute away) whose Lease requests fail, or
/// hang, from the start of the drain: it gives the Lease up within the renew deadline and
/// cancels the reconcile it was draining, before the standby can take over.
async fn lose_the_lease_while_draining(lose: impl FnOnce(&Cut)) {
    let Pair {
        server: _server,
        exclusive,
        lease_a,
        a,
        b,
    } = leader_and_standby().await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let began = tokio::time::Instant::now();
    let shutdown = tokio::spawn(a.shutdown());
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        exclusive.reconciling("replica-a"),
        "the drain waits for the reconcile under way"
    );
    lose(&lease_a);
    let drained = shutdown.await.unwrap();
    let stopped = tokio::time::Instant::now();
    assert_eq!(drained, Drained::Cancelled);
    assert!(
        stopped - began <= Duration::from_secs(10),
        "the drain went on {:?} after the Lease was lost",
        stopped - began
    );
    assert!(!exclusive.reconciling("replica-a"));

    let b_leads = until_leading(&b, true).await;
    assert!(stopped <= b_leads);
    until_reconciling(&exclusive, "replica-b").await;
    tokio::time::sleep(LONG * 2).await;
    assert_exclusive(&exclusive);
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_lease_refused_while_draining_cancels_the_drain() {
    lose_the_lease_while_draining(Cut::cut).await;
}

#[tokio::test(start_paused = true)]
async fn a_lease_hanging_while_draining_cancels_the_drain() {
    lose_the_lease_while_draining(Cut::hang).await;
}

/// A leader whose Lease requests fail (or hang) just after a renewal stops before
/// `leaseDuration` has passed since that renewal, however the timings leave room (client-go's
/// leader may go on for `renewDeadline + retryPeriod`), and nobody reconciles beside it.
async fn the_leader_stops_within_the_lease(
    (duration, deadline, retry): (Duration, Duration, Duration),
    lose: impl FnOnce(&Cut),
) {
    let server = server_with_a_widget().await;
    let exclusive = Exclusive::new();
    let timings = Some((duration, deadline, retry));
    let (lease_a, lease_b, lease_c) = (Cut::default(), Cut::default(), Cut::default());
    let a = slow_replica(&server, "replica-a", &lease_a, &exclusive, timings).await;
    until_leading(&a, true).await;
    let b = slow_replica(&server, "replica-b", &lease_b, &exclusive, timings).await;
    let c = slow_replica(&server, "replica-c", &lease_c, &exclusive, timings).await;
    until_reconciling(&exclusive, "replica-a").await;

    let renewed = until_renewed(&server, "replica-a").await;
    lose(&lease_a);
    let stopped = until_leading(&a, false).await;
    assert!(
        stopped - renewed <= deadline,
        "a led {:?} past its last renewal, with a renew deadline of {deadline:?}",
        stopped - renewed
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!exclusive.reconciling("replica-a"));

    // One of the standbys takes over, and the other waits.
    let next = async {
        loop {
            for (name, replica) in [("replica-b", &b), ("replica-c", &c)] {
                if replica.leadership().borrow().leading {
                    return (name, tokio::time::Instant::now());
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let (next, took_over) = tokio::time::timeout(Duration::from_secs(120), next)
        .await
        .expect("nobody took over");
    // `renewed` is seen up to a millisecond after the write it follows.
    assert!(
        took_over - renewed + Duration::from_millis(1) >= duration,
        "{next} took over {:?} after a's last renewal, within its lease",
        took_over - renewed
    );
    until_reconciling(&exclusive, next).await;
    tokio::time::sleep(LONG * 2).await;
    assert_exclusive(&exclusive);
    for replica in [a, b, c] {
        replica.shutdown().await;
    }
}

/// The tightest timings `check` accepts for a 3 s lease: 2 s + 1.5 s is longer than the lease.
const TIGHT: (Duration, Duration, Duration) = (
    Duration::from_secs(3),
    Duration::from_secs(2),
    Duration::from_millis(1500),
);

#[tokio::test(start_paused = true)]
async fn with_tight_timings_a_cut_off_leader_stops_within_its_lease() {
    the_leader_stops_within_the_lease(TIGHT, Cut::cut).await;
}

#[tokio::test(start_paused = true)]
async fn with_tight_timings_a_leader_whose_lease_requests_hang_stops_within_its_lease() {
    the_leader_stops_within_the_lease(TIGHT, Cut::hang).await;
}

#[tokio::test(start_paused = true)]
async fn with_controller_runtime_timings_a_cut_off_leader_stops_within_its_lease() {
    let defaults = (
        Duration::from_secs(15),
        Duration::from_secs(10),
        Duration::from_secs(2),
    );
    the_leader_stops_within_the_lease(defaults, Cut::cut).await;
}

#[tokio::test(start_paused = true)]
async fn a_new_lease_records_zero_transitions_as_client_go_writes_it() {
    let server = server_with_a_widget().await;
    let a = replica(&server, "replica-a", &Cut::default(), Duration::ZERO).await;
    until_leading(&a, true).await;
    let lease: Lease = Api::default_namespaced(server.setup_client())
        .get(LEASE)
        .await
        .unwrap();
    let create = server
        .requests()
        .into_iter()
        .find(|r| r.verb == Verb::Create && r.resource == "leases")
        .unwrap();
    assert_eq!(
        create.body_json().unwrap()["spec"]["leaseTransitions"],
        serde_json::json!(0)
    );
    assert_eq!(lease.spec.unwrap().lease_transitions, Some(0));
    a.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn across_accepted_timings_a_cut_off_leader_stops_within_its_lease() {
    // (lease, renew deadline, retry) in milliseconds: each passes `check`, and in each the
    // renew deadline plus a retry period reaches past the lease but the first two.
    let timings = [
        (15_000, 10_000, 2_000),
        (60_000, 40_000, 10_000),
        (2_000, 1_250, 1_000),
        (4_000, 3_000, 2_000),
        (10_000, 9_000, 5_000),
        (30_000, 25_000, 20_000),
    ];
    for (index, (lease, deadline, retry)) in timings.into_iter().enumerate() {
        let timings = (
            Duration::from_millis(lease),
            Duration::from_millis(deadline),
            Duration::from_millis(retry),
        );
        let lose = if index % 2 == 0 { Cut::cut } else { Cut::hang };
        the_leader_stops_within_the_lease(timings, lose).await;
    }
}

/// How a handover begins.
#[derive(Clone, Copy, Debug)]
enum Handover {
    /// The leader shuts down gracefully, draining its reconcile and handing the Lease back.
    Shutdown,
    /// The leader's Lease requests fail from now on.
    Refused,
    /// The leader's Lease requests never answer from now on.
    Hanging,
    /// The leader's handle is dropped, as a crash would stop it.
    Crash,
}

#[tokio::test(start_paused = true)]
async fn ten_handovers_of_every_kind_among_three_replicas_never_overlap() {
    let server = server_with_a_widget().await;
    let exclusive = Exclusive::new();
    // The live replicas, each with its Lease connection; the cut-off ones wait to be stopped.
    let mut live: Vec<(String, Cut, RunningRunner)> = Vec::new();
    let mut cut_off = Vec::new();
    let mut started = 0;
    let mut start_one = async |live: &mut Vec<(String, Cut, RunningRunner)>| {
        started += 1;
        let name = format!("replica-{started}");
        let lease = Cut::default();
        let replica = slow_replica(&server, &name, &lease, &exclusive, None).await;
        live.push((name, lease, replica));
    };
    for _ in 0..3 {
        start_one(&mut live).await;
    }
    let kinds = [
        Handover::Shutdown,
        Handover::Refused,
        Handover::Hanging,
        Handover::Crash,
    ];
    for round in 0..10 {
        let leading = async {
            loop {
                if let Some(at) = live
                    .iter()
                    .position(|(_, _, r)| r.leadership().borrow().leading)
                {
                    return at;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let at = tokio::time::timeout(Duration::from_secs(120), leading)
            .await
            .unwrap_or_else(|_| panic!("nobody leads in round {round}"));
        let (name, lease, leader) = live.remove(at);
        until_reconciling(&exclusive, &name).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        match kinds[round % kinds.len()] {
            Handover::Shutdown => {
                leader.shutdown().await;
            }
            Handover::Refused => {
                lease.cut();
                cut_off.push(leader);
            }
            Handover::Hanging => {
                lease.hang();
                cut_off.push(leader);
            }
            Handover::Crash => drop(leader),
        }
        start_one(&mut live).await;
        tokio::time::sleep(LONG).await;
    }
    assert_exclusive(&exclusive);
    let leaders = (1..=started)
        .filter(|n| exclusive.reconciles_of(&format!("replica-{n}")) > 0)
        .count();
    assert!(leaders >= 10, "only {leaders} replicas ever reconciled");
    for (_, _, replica) in live {
        replica.shutdown().await;
    }
    for replica in cut_off {
        replica.shutdown().await;
    }
}
