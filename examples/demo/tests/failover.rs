//! The demo's failover on the in-memory server: two replicas, a graceful handover, a lost Lease.

use recon_demo::Target;
use recon_demo::failover::{self, Handovers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_hand_over_twice_and_each_leader_rolls_the_function() {
    let target = Target::in_memory();
    let handovers = failover::run(&target).await.unwrap();
    // The replicas ran as the operator's service account: its manifest granted their Lease.
    assert_eq!(
        recon_demo::forbidden_requests(&target),
        Vec::<String>::new()
    );
    assert_eq!(
        handovers,
        Handovers {
            leaders: vec![
                "replica-a leads".into(),
                "replica-b leads".into(),
                "replica-a leads".into()
            ],
            rollouts: vec![
                "replica-a: docker.io/example/relay:1.0".into(),
                "replica-b: docker.io/example/relay:2.0".into(),
                "replica-a: docker.io/example/relay:3.0".into(),
            ],
        }
    );
}
