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

#[test]
fn a_cluster_run_is_compared_by_steps_state_webhooks_and_the_embedded_events() {
    use recon_demo::{StepReport, Summary};
    let embedded = Summary {
        target: "the in-memory API server".into(),
        steps: vec![StepReport {
            name: "create".into(),
            writes: Some(Default::default()),
        }],
        state: vec!["Function hello: Ready=True".into()],
        webhooks: vec!["/validate: refused".into()],
        events: ["Normal Created".to_owned()].into(),
    };
    let mut cluster = Summary {
        target: "a cluster".into(),
        steps: vec![StepReport {
            name: "create".into(),
            writes: None,
        }],
        events: [
            "Normal Created".to_owned(),
            "Normal ScalingReplicaSet".to_owned(),
        ]
        .into(),
        ..embedded.clone()
    };
    assert!(
        cluster.differences_from(&embedded).is_empty(),
        "a cluster's own events are fine"
    );
    cluster.state = vec!["Function hello: Ready=False".into()];
    cluster.events = ["Normal ScalingReplicaSet".to_owned()].into();
    assert_eq!(
        cluster.differences_from(&embedded),
        [
            "final state: missing `Function hello: Ready=True`",
            "final state: unexpected `Function hello: Ready=False`",
            "events: `Normal Created` was not published",
        ]
    );
}
