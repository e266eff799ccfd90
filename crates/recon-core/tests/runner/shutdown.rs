//! Graceful shutdown: the reconcile under way finishes (or is cancelled at the drain deadline),
//! then the leader hands the Lease back and the standby takes over at once.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use recon_core::runner::Drained;
use recon_fake::{ApiServer, Verb};

use crate::support::*;

/// Resizes `w` to 2, then waits until `agent` has read it again: a reconcile of the new size
/// is under way.
async fn resize_and_wait_for_a_reconcile(server: &ApiServer, agent: &str) {
    resize(server, 2).await;
    let resized_at = server.requests().len();
    let reading = async {
        loop {
            let read = server.requests()[resized_at..].iter().any(|r| {
                r.user_agent == agent && r.verb == Verb::Get && r.name.as_deref() == Some("w")
            });
            if read {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), reading)
        .await
        .expect("no reconcile read the new size");
}

async fn child_size(server: &ApiServer) -> Option<String> {
    let children: Api<ConfigMap> = Api::default_namespaced(server.setup_client());
    children.get("w-child").await.ok()?.data?.remove("size")
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_the_reconcile_under_way_finish_then_hands_the_lease_over() {
    let server = server_with_a_widget().await;
    let (lease_a, lease_b) = (Cut::default(), Cut::default());
    let a = replica(&server, "replica-a", &lease_a, Duration::from_secs(5)).await;
    until_leading(&a, true).await;
    let b = replica(&server, "replica-b", &lease_b, Duration::ZERO).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(child_size(&server).await.as_deref(), Some("1"));

    resize_and_wait_for_a_reconcile(&server, "replica-a").await;
    let began = tokio::time::Instant::now();
    assert_eq!(a.shutdown().await, Drained::Finished);
    assert!(
        began.elapsed() <= Duration::from_secs(5),
        "the drain took {:?}",
        began.elapsed()
    );
    // The reconcile finished: it wrote the new size.
    assert_eq!(child_size(&server).await.as_deref(), Some("2"));

    // The Lease was handed back as client-go releases it, so b took over without waiting out
    // the 15 s lease.
    let released = until_leading(&b, true).await;
    assert!(
        released - began <= Duration::from_secs(5) + Duration::from_secs(5),
        "b waited {:?}",
        released - began
    );
    let lease: Lease = Api::default_namespaced(server.setup_client())
        .get(LEASE)
        .await
        .unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity.as_deref(),
        Some("replica-b")
    );
    let (sent_a, sent_b) = (sent_by(&server, "replica-a"), sent_by(&server, "replica-b"));
    assert!(sent_a.last() < sent_b.first(), "a and b reconciled at once");
    b.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_still_running_at_the_drain_deadline_is_cancelled() {
    let server = server_with_a_widget().await;
    let lease = Cut::default();
    let a = replica_draining(
        &server,
        "replica-a",
        &lease,
        Duration::from_secs(60),
        Duration::from_secs(5),
    )
    .await;
    until_leading(&a, true).await;
    // The first reconcile (size 1) takes a minute; then the resize starts another.
    tokio::time::sleep(Duration::from_secs(90)).await;
    assert_eq!(child_size(&server).await.as_deref(), Some("1"));
    resize_and_wait_for_a_reconcile(&server, "replica-a").await;
    let began = tokio::time::Instant::now();
    assert_eq!(a.shutdown().await, Drained::Cancelled);
    let took = began.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(10),
        "the drain took {took:?}"
    );
    assert_eq!(
        child_size(&server).await.as_deref(),
        Some("1"),
        "the cancelled reconcile wrote"
    );
    let lease: Lease = Api::default_namespaced(server.setup_client())
        .get(LEASE)
        .await
        .unwrap();
    let spec = lease.spec.unwrap();
    assert_eq!(
        (spec.holder_identity, spec.lease_duration_seconds),
        (None, Some(1))
    );
}
