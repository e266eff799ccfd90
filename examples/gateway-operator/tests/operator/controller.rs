//! The Gateway operator end to end: its reconciler under a real `kube::runtime::Controller`
//! (built by `ResourceReconciler::controller`, so with the watches its tree declares) against
//! the in-memory API server. The tests play the user (creating and editing the Gateway and
//! its ConfigMap) and the Deployment controller (reporting a rollout done), and wait for the
//! operator to catch up.
//!
//! Waits poll the cluster on a paused tokio clock: each round sleeps 10ms of virtual time, which
//! tokio skips as soon as every task is idle, and a wait gives up after a fixed number of
//! rounds. Nothing depends on how fast the machine is.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{HASH_V1, HASH_V2, rbac};
use futures::StreamExt;
use gateway_operator::{Gateway, GatewaySpec, SETTINGS_HASH_ANNOTATION, crd, reconciler};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use recon_core::{Config, EventLog, ResourceReconciler};
use recon_fake::ApiServer;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// How many 10ms rounds a wait lasts at most.
const ROUNDS: usize = 3_000;

/// Polls `check` until it returns `Some`, for at most [`ROUNDS`] rounds; panics naming `what`
/// otherwise, and what the operator's manifest refused it, if anything (a controller that may
/// not watch never acts).
async fn eventually<T, F, Fut>(server: &ApiServer, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..ROUNDS {
        if let Some(found) = check().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let refused = rbac()
        .check_requests(&server.requests())
        .err()
        .unwrap_or_default();
    panic!("gave up waiting until {what} after {ROUNDS} rounds. {refused}");
}

/// A cluster with the Gateway CRD and the operator running; the handle stops it.
struct Cluster {
    server: ApiServer,
    operator: JoinHandle<()>,
}

impl Cluster {
    async fn start() -> Cluster {
        let server = ApiServer::new();
        server.install_crd(&crd()).await.unwrap();
        // The operator runs as its service account, under the manifest a cluster install
        // applies; the test acts as the cluster's user.
        for object in rbac().objects() {
            server.seed(object).unwrap();
        }
        let client = server.client_as(rbac().identity());
        let reconciler = reconciler(
            Config::new(client.clone(), "gateway-operator").with_recorder(EventLog::default()),
        );
        let controller = reconciler
            .controller(Api::all(client), watcher::Config::default())
            .run(
                ResourceReconciler::reconcile_object,
                ResourceReconciler::error_policy,
                Arc::new(reconciler),
            )
            .for_each(|_| async {});
        Cluster {
            server,
            operator: tokio::spawn(controller),
        }
    }

    fn gateways(&self) -> Api<Gateway> {
        Api::namespaced(self.server.setup_client(), "default")
    }

    fn config_maps(&self) -> Api<ConfigMap> {
        Api::namespaced(self.server.setup_client(), "default")
    }

    fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.server.setup_client(), "default")
    }

    /// Nothing the operator sent was refused, and its manifest grants what it needed.
    fn check_rbac(&self) {
        rbac()
            .check_requests(&self.server.requests())
            .unwrap_or_else(|e| panic!("{e}"));
    }

    async fn create_gateway(&self) {
        let gateway = Gateway::new(
            "edge",
            GatewaySpec {
                settings: "edge-settings".into(),
                replicas: Some(2),
                image: None,
                pod_labels: None,
            },
        );
        self.gateways()
            .create(&PostParams::default(), &gateway)
            .await
            .unwrap();
    }

    async fn create_settings(&self, data: Value) {
        let config_map: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "edge-settings"}, "data": data}))
        .unwrap();
        self.config_maps()
            .create(&PostParams::default(), &config_map)
            .await
            .unwrap();
    }

    /// The Deployment `edge` as JSON, once it exists.
    async fn deployment(&self) -> Option<Value> {
        let deployment = self.deployments().get_opt("edge").await.ok()??;
        serde_json::to_value(deployment).ok()
    }

    /// Waits until the Deployment's template carries `hash`, and returns it.
    async fn deployment_with_hash(&self, hash: &str) -> Value {
        eventually(
            &self.server,
            &format!("the Deployment carries the hash {hash}"),
            || async {
                self.deployment()
                    .await
                    .filter(|d| template_hash(d).as_deref() == Some(hash))
            },
        )
        .await
    }

    /// Plays the Deployment controller: reports the current generation rolled out.
    async fn roll_out(&self) {
        let deployment = self.deployment().await.unwrap();
        let generation = deployment["metadata"]["generation"].as_i64().unwrap();
        let replicas = deployment["spec"]["replicas"].as_i64().unwrap();
        let status = json!({"status": {
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas}});
        self.deployments()
            .patch_status("edge", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }

    /// The Gateway's status as JSON.
    async fn gateway_status(&self) -> Value {
        let gateway = self.gateways().get("edge").await.unwrap();
        serde_json::to_value(gateway.status).unwrap()
    }

    /// Waits until the Gateway's condition `type_` has `status` (and `reason`, if given), and
    /// returns the Gateway's status.
    async fn condition(&self, type_: &str, status: &str, reason: Option<&str>) -> Value {
        let what = format!("the Gateway's {type_} condition is {status} ({reason:?})");
        eventually(&self.server, &what, || async {
            let gateway_status = self.gateway_status().await;
            let condition = condition(&gateway_status, type_)?;
            let matches = condition["status"] == status
                && reason.is_none_or(|reason| condition["reason"] == reason);
            matches.then_some(gateway_status)
        })
        .await
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.operator.abort();
    }
}

fn template_hash(deployment: &Value) -> Option<String> {
    deployment["spec"]["template"]["metadata"]["annotations"][SETTINGS_HASH_ANNOTATION]
        .as_str()
        .map(str::to_owned)
}

fn env(deployment: &Value) -> Value {
    deployment["spec"]["template"]["spec"]["containers"][0]["env"].clone()
}

fn condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

#[tokio::test(start_paused = true)]
async fn editing_the_settings_config_map_rolls_the_deployment() {
    let cluster = Cluster::start().await;
    cluster.create_settings(crate::common::settings_v1()).await;
    cluster.create_gateway().await;

    let first = cluster.deployment_with_hash(HASH_V1).await;
    assert_eq!(env(&first), crate::common::env_v1());
    cluster.roll_out().await;
    let status = cluster.condition("Ready", "True", None).await;
    assert_eq!(status["settingsHash"], HASH_V1);
    assert_eq!(status["deploymentName"], "edge");

    // Edit the ConfigMap: nothing about the Gateway changes, only the tracker links the two.
    cluster
        .config_maps()
        .patch(
            "edge-settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": crate::common::settings_v2()})),
        )
        .await
        .unwrap();
    let rolled = cluster.deployment_with_hash(HASH_V2).await;
    assert_eq!(env(&rolled), crate::common::env_v2());
    assert_eq!(
        rolled["metadata"]["generation"], 2,
        "one update of the Deployment rolled it"
    );
    let status = cluster
        .condition("Ready", "Unknown", Some("RolloutInProgress"))
        .await;
    assert_eq!(status["settingsHash"], HASH_V2);

    cluster.roll_out().await;
    cluster.condition("Ready", "True", None).await;
    let gateway = cluster.gateways().get("edge").await.unwrap();
    assert_eq!(
        gateway.status.and_then(|s| s.observed_generation),
        gateway.metadata.generation,
        "the ConfigMap edit did not touch the Gateway's spec"
    );
    cluster.check_rbac();
}

#[tokio::test(start_paused = true)]
async fn a_gateway_created_before_its_config_map_becomes_ready_once_it_exists() {
    let cluster = Cluster::start().await;
    cluster.create_gateway().await;

    let status = cluster
        .condition("SettingsResolved", "False", Some("SettingsNotFound"))
        .await;
    assert_eq!(
        condition(&status, "SettingsResolved").unwrap()["message"],
        "ConfigMap \"edge-settings\" not found"
    );
    assert_eq!(
        condition(&status, "Ready").unwrap()["status"],
        "False",
        "{status}"
    );
    assert!(
        cluster.deployment().await.is_none(),
        "no Deployment without settings"
    );

    // The ConfigMap appears: the Gateway tracked it although it was missing.
    cluster.create_settings(crate::common::settings_v1()).await;
    cluster.deployment_with_hash(HASH_V1).await;
    cluster.roll_out().await;
    cluster.condition("Ready", "True", None).await;

    // It goes away again: the Gateway says so, and its Deployment is left running as it is.
    let before = cluster.deployment().await.unwrap();
    cluster
        .config_maps()
        .delete("edge-settings", &DeleteParams::default())
        .await
        .unwrap();
    cluster
        .condition("Ready", "False", Some("SettingsNotFound"))
        .await;
    let after = cluster.deployment().await.unwrap();
    assert_eq!(
        after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
        "the Deployment was not written"
    );
    assert_eq!(template_hash(&after).as_deref(), Some(HASH_V1));
    cluster.check_rbac();
}
