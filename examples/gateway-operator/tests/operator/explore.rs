//! The Gateway operator under perturbation: the controller built as the crate docs build it,
//! through a user's day (create a Gateway, edit its settings ConfigMap, scale it),
//! once as the reference run and once per schedule `recon_testing::explore` derives from it
//! (restarts at each write, stale caches, lost and late watch events, another writer, transient
//! failures). Every run must end in the reference run's world, quiet, with nothing leaked.

use std::sync::Arc;

use gateway_operator::{crd, reconciler};
use kube::api::Api;
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::{Scenario, helpers};

use crate::common::{config_map, settings_v1};

fn scenario() -> Scenario {
    Scenario::new("gateway")
        .crd(crd())
        .given(&config_map(settings_v1()))
        .controller(|client| {
            let reconciler = reconciler(Config::new(client.clone(), "gateway-operator"));
            reconciler
                .controller(Api::all(client), watcher::Config::default())
                .run(
                    ResourceReconciler::reconcile_object,
                    ResourceReconciler::error_policy,
                    Arc::new(reconciler),
                )
        })
        .helper("deployment controller", helpers::roll_out_deployments)
        .actions_yaml(
            r#"
- create:
    apiVersion: operators.example.com/v1
    kind: Gateway
    metadata: {name: edge, namespace: default}
    spec: {settings: edge-settings, replicas: 2}
- patch:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: edge-settings, namespace: default}
    data: {upstream: "http://backend-v2:9000", timeout: 5s}
- patch:
    apiVersion: operators.example.com/v1
    kind: Gateway
    metadata: {name: edge, namespace: default}
    spec: {replicas: 3}
"#,
        )
        .unwrap()
}

#[test]
fn the_gateway_operator_survives_restarts_lost_events_and_failures() {
    let report = scenario().explore();
    // The summary (schedules explored, requests of the reference run), shown with --nocapture.
    eprintln!("{report}");
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}
