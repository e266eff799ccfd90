//! The Gateway operator under perturbation: the controller built as the crate docs build it,
//! through a user's day (create a Gateway, edit its settings ConfigMap, scale it),
//! once as the reference run and once per schedule `recon_testing::explore` derives from it
//! (restarts at each write, stale caches, lost and late watch events, another writer, transient
//! failures). Every run must end in the reference run's world, quiet, with nothing leaked.

use std::sync::Arc;

use gateway_operator::{crd, reconciler};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::Scenario;
use serde_json::json;

use crate::common::{config_map, settings_v1};

/// Plays the Deployment controller: a Deployment whose status is behind its generation is
/// reported rolled out (every replica updated and available), as `roll_out` does in
/// `controller.rs`. The Gateway waits for that to turn ready.
async fn roll_out_deployments(client: kube::Client) {
    let deployments: Api<Deployment> = Api::all(client.clone());
    let Ok(list) = deployments.list(&Default::default()).await else {
        return;
    };
    for deployment in list.items {
        // As JSON: the Rust shape of a Deployment differs between Kubernetes versions.
        let Ok(deployment) = serde_json::to_value(deployment) else {
            continue;
        };
        let meta = &deployment["metadata"];
        let generation = meta["generation"].as_i64().unwrap_or_default();
        if deployment["status"]["observedGeneration"].as_i64() == Some(generation)
            || meta["deletionTimestamp"].is_string()
        {
            continue;
        }
        let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
        let status = json!({"status": {
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}});
        let (Some(namespace), Some(name)) = (meta["namespace"].as_str(), meta["name"].as_str())
        else {
            continue;
        };
        let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
        // Deleted or changed meanwhile: the next round sees it again.
        let _ = api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await;
    }
}

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
        .helper("deployment controller", roll_out_deployments)
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
