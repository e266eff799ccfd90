//! Two replicas, one leader; the leader's Lease stops renewing and the other takes over, never
//! while the first still reconciles.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use recon_fake::Verb;

use crate::support::*;

/// controller-runtime's (and so the runner's) defaults.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY: Duration = Duration::from_secs(2);

#[tokio::test(start_paused = true)]
async fn the_standby_takes_over_within_the_lease_duration_once_the_leader_stops_renewing() {
    let server = server_with_a_widget().await;
    let (lease_a, lease_b) = (Cut::default(), Cut::default());
    let a = replica(&server, "replica-a", &lease_a, Duration::ZERO).await;
    until_leading(&a, true).await;
    let b = replica(&server, "replica-b", &lease_b, Duration::ZERO).await;

    // A minute on: a still leads, b waits and knows who leads.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(a.leadership().borrow().leading);
    let seen_by_b = b.leadership().borrow().clone();
    assert!(!seen_by_b.leading);
    assert_eq!(seen_by_b.holder.as_deref(), Some("replica-a"));
    assert!(
        sent_by(&server, "replica-b").is_empty(),
        "the standby reconciled"
    );
    let gets_of_w = |agent: &str| {
        server
            .requests()
            .iter()
            .filter(|r| {
                r.user_agent == agent && r.verb == Verb::Get && r.name.as_deref() == Some("w")
            })
            .count()
    };
    assert!(
        gets_of_w("replica-a") >= 30,
        "the leader resyncs w every second"
    );
    assert!(a.metrics().encode_prometheus().contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 1"
    )));
    assert!(b.metrics().encode_prometheus().contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 0"
    )));

    // The leader's Lease requests fail from now on; its controllers still reach the server.
    let cut_at = tokio::time::Instant::now();
    lease_a.cut();
    let a_stopped = until_leading(&a, false).await;
    let b_leads = until_leading(&b, true).await;

    // a stops within its renew deadline of its last renewal (at most a retry period before
    // the cut), and before anyone may take over: client-go's `renew`.
    assert!(
        a_stopped - cut_at <= RENEW_DEADLINE,
        "a stopped after {:?}",
        a_stopped - cut_at
    );
    assert!(a_stopped < b_leads);
    // b takes over once the Lease it saw last change is older than its duration: at most a
    // jittered retry (2.2 periods) after the last renewal it saw, and one more after expiry.
    let took_over = b_leads - cut_at;
    assert!(
        took_over >= LEASE_DURATION - RETRY,
        "b took over after {took_over:?}, before the lease expired"
    );
    assert!(
        took_over <= LEASE_DURATION + RETRY.mul_f64(4.4),
        "b took over after {took_over:?}"
    );

    // The request log: every request a's controller sent precedes every request b's sent.
    tokio::time::sleep(Duration::from_secs(30)).await;
    let (sent_a, sent_b) = (sent_by(&server, "replica-a"), sent_by(&server, "replica-b"));
    assert!(
        !sent_b.is_empty() && gets_of_w("replica-b") >= 20,
        "b does not reconcile"
    );
    assert!(
        sent_a.last() < sent_b.first(),
        "a sent request {:?} after b's first, {:?}",
        sent_a.last(),
        sent_b.first()
    );
    let lease: Lease = Api::default_namespaced(server.setup_client())
        .get(LEASE)
        .await
        .unwrap();
    let spec = lease.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("replica-b"));
    assert_eq!(
        spec.lease_transitions,
        Some(1),
        "a created it, b took it over"
    );
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert!(b.metrics().encode_prometheus().contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 1"
    )));
    assert!(a.metrics().encode_prometheus().contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 0"
    )));

    b.shutdown().await;
    a.shutdown().await;
}

/// `controller_runtime_active_workers` of the widget controller.
fn active_workers(replica: &recon_core::runner::RunningRunner) -> String {
    let text = replica.metrics().encode_prometheus();
    let prefix = format!("controller_runtime_active_workers{{controller=\"{CONTROLLER}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_leader_whose_lease_is_taken_cancels_its_reconcile_and_waits_its_turn() {
    let server = server_with_a_widget().await;
    let lease_a = Cut::default();
    // Each reconcile takes 30 s: a is always in the middle of one.
    let a = replica(&server, "replica-a", &lease_a, Duration::from_secs(30)).await;
    until_leading(&a, true).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(active_workers(&a), "1");
    // Someone else writes itself in as holder (a forced takeover, `kubectl edit`).
    let leases: Api<Lease> = Api::default_namespaced(server.setup_client());
    let mut lease = leases.get(LEASE).await.unwrap();
    lease.spec.as_mut().unwrap().holder_identity = Some("intruder".to_owned());
    leases
        .replace(LEASE, &Default::default(), &lease)
        .await
        .unwrap();
    let taken_at = tokio::time::Instant::now();
    let stopped = until_leading(&a, false).await;
    assert!(
        stopped - taken_at <= RETRY,
        "a noticed after {:?}",
        stopped - taken_at
    );
    assert_eq!(a.leadership().borrow().holder.as_deref(), Some("intruder"));
    // The reconcile under way was cancelled, not drained: the intruder may start any time.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(active_workers(&a), "0");
    // The intruder never renews: a takes the Lease back once it expired.
    let back = until_leading(&a, true).await;
    assert!(
        back - taken_at >= LEASE_DURATION - RETRY,
        "a took it back after {:?}",
        back - taken_at
    );
    a.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_dropped_leader_stops_at_once_and_its_lease_expires_as_after_a_crash() {
    let server = server_with_a_widget().await;
    let (lease_a, lease_b) = (Cut::default(), Cut::default());
    let a = replica(&server, "replica-a", &lease_a, Duration::ZERO).await;
    until_leading(&a, true).await;
    let b = replica(&server, "replica-b", &lease_b, Duration::ZERO).await;
    tokio::time::sleep(Duration::from_secs(5)).await;

    drop(a);
    let dropped_at = tokio::time::Instant::now();
    let after_drop = server.requests().len();
    let b_leads = until_leading(&b, true).await;
    // Nobody handed the Lease over: b waited for it to expire.
    assert!(
        b_leads - dropped_at >= LEASE_DURATION - RETRY.mul_f64(2.2),
        "b took over after {:?}",
        b_leads - dropped_at
    );
    let sent_after_drop = |agent: &str| {
        server.requests()[after_drop..]
            .iter()
            .filter(|r| r.user_agent == agent)
            .count()
    };
    assert_eq!(sent_after_drop("replica-a-lease"), 0, "a kept renewing");
    // A reconcile whose turn came at the very instant of the drop may have sent a request or
    // two before its cancellation was seen; none came once b started.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (sent_a, sent_b) = (sent_by(&server, "replica-a"), sent_by(&server, "replica-b"));
    assert!(sent_a.last() < sent_b.first(), "a reconciled after b began");
    assert!(sent_after_drop("replica-a") <= 2, "a kept reconciling");
    b.shutdown().await;
}
