//! The Function operator under perturbation: the controller built as the crate docs build it,
//! through a user's day (create a Function, then change its image, env, configs, replicas and
//! port), once as the reference run and once per schedule
//! `recon_testing::explore` derives from it (restarts at each write, stale caches, lost and
//! late watch events, another writer, transient failures). Every run must end in the reference
//! run's world, quiet, with nothing leaked.

use std::sync::Arc;

use function_operator::{crd, reconciler};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::Scenario;
use serde_json::json;

/// Plays the Deployment controller: a Deployment whose status is behind its generation is
/// reported rolled out and `Available`, as `controller.rs` does by hand. The Function waits
/// for that to turn ready.
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
        .helper("deployment controller", roll_out_deployments)
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
