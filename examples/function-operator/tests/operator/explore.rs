//! The Function operator under perturbation: the controller built as the crate docs build it,
//! through a user's day (create a Function, then change its image, env, configs, replicas and
//! port), once as the reference run and once per schedule
//! `recon_testing::explore` derives from it (restarts at each write, stale caches, lost and
//! late watch events, another writer, transient failures). Every run must end in the reference
//! run's world, quiet, with nothing leaked.

use std::sync::Arc;

use function_operator::{crd, reconciler};
use kube::api::Api;
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::{Scenario, helpers};

fn scenario() -> Scenario {
    Scenario::new("function")
        .crd(crd())
        .controller(|client| {
            let reconciler = reconciler(Config::new(client.clone(), "function-operator"));
            reconciler
                .controller(Api::all(client), watcher::Config::default())
                .run(
                    ResourceReconciler::reconcile_object,
                    ResourceReconciler::error_policy,
                    Arc::new(reconciler),
                )
        })
        .helper("deployment controller", helpers::roll_out_deployments)
        // The change swaps the config `nginx` for `app` (the operator deletes a ConfigMap it no
        // longer wants) and rolls the Deployment; the deletion checks nothing is left behind.
        .actions_yaml(
            r#"
- create:
    apiVersion: operators.example.com/v1
    kind: Function
    metadata: {name: hello, namespace: default}
    spec:
      image: hello
      env: {GREETING: hi}
      configs: {nginx: {nginx.conf: "worker_processes 1;"}}
- patch:
    apiVersion: operators.example.com/v1
    kind: Function
    metadata: {name: hello, namespace: default}
    spec:
      image: hello:2
      env: {GREETING: hello}
      configs: {nginx: null, app: {app.yaml: "debug: false"}}
      replicas: 2
      port: 9090
- delete:
    apiVersion: operators.example.com/v1
    kind: Function
    metadata: {name: hello, namespace: default}
"#,
        )
        .unwrap()
}

#[test]
fn the_function_operator_survives_restarts_lost_events_and_failures() {
    let report = scenario().explore();
    // The summary (schedules explored, requests of the reference run), shown with --nocapture.
    eprintln!("{report}");
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}
