//! The demo, end to end on the in-memory API server: it finishes, and its summary (without
//! what varies from run to run) is the approved snapshot.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_end_to_end_on_the_in_memory_server() {
    let summary = recon_demo::run(&recon_demo::Target::in_memory())
        .await
        .unwrap_or_else(|e| panic!("the demo failed: {e}"));
    assert_eq!(summary.steps.len(), 9);
    assert!(
        summary
            .steps
            .iter()
            .any(|s| s.writes.as_ref().is_some_and(|w| !w.is_empty())),
        "the operators wrote something"
    );
    insta::assert_snapshot!(summary.redacted());
}
