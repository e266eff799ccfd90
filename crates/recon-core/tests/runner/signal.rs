//! SIGTERM, as the kubelet sends a pod it stops, shuts a runner down gracefully.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::runtime::watcher;
use recon_core::runner::{LeaderElection, Runner};
use recon_test_fixtures::eventually_within;

use crate::support::*;

async fn holder(server: &recon_fake::ApiServer) -> Option<(Option<String>, Option<i32>)> {
    let leases: Api<Lease> = Api::default_namespaced(server.setup_client());
    let spec = leases.get_opt(LEASE).await.unwrap()?.spec?;
    Some((spec.holder_identity, spec.lease_duration_seconds))
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_shuts_the_runner_down_and_hands_the_lease_back() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let runner = Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO),
            Api::all(client),
            watcher::Config::default(),
        )
        .leader_election(LeaderElection::new(LEASE, "default", "replica-a"));
    let running = tokio::spawn(runner.run_until_signalled());
    eventually_within(RUNNER_WAIT, "the runner leads", || async {
        holder(&server).await == Some((Some("replica-a".to_owned()), Some(15)))
    })
    .await;
    // The runner listens for signals from the moment it started; the Lease came after.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .expect("no kill command");
    assert!(sent.success());
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the runner did not stop on SIGTERM")
        .unwrap()
        .unwrap();
    assert_eq!(
        holder(&server).await,
        Some((None, Some(1))),
        "the Lease was not released"
    );
}
