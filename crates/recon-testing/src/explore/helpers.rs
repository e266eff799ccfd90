//! Stand-ins for the cluster's built-in controllers that a scenario's operator waits on, for
//! [`Scenario::helper`](super::Scenario::helper). (The garbage collector is built in:
//! [`Scenario::garbage_collector`](super::Scenario::garbage_collector).)

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

/// Plays kube-controller-manager's Deployment controller and the kubelets behind it: every
/// Deployment whose status is behind its generation (and is not being deleted) is reported
/// rolled out, every replica updated, ready and available, with the `Available` and
/// `Progressing` conditions a finished rollout has.
///
/// ```
/// # use recon_testing::explore::{Scenario, helpers};
/// let scenario = Scenario::new("web").helper("deployment controller", helpers::roll_out_deployments);
/// # let _ = scenario;
/// ```
pub async fn roll_out_deployments(client: kube::Client) {
    // As dynamic objects: the Rust shape of a Deployment differs between Kubernetes versions.
    let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "deployments");
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let Ok(list) = all.list(&ListParams::default()).await else {
        return;
    };
    for deployment in list.items {
        let meta = &deployment.metadata;
        let generation = meta.generation.unwrap_or_default();
        let status = &deployment.data["status"];
        if status["observedGeneration"].as_i64() == Some(generation)
            || meta.deletion_timestamp.is_some()
        {
            continue;
        }
        let (Some(namespace), Some(name)) = (&meta.namespace, &meta.name) else {
            continue;
        };
        let replicas = deployment.data["spec"]["replicas"].as_i64().unwrap_or(1);
        let status = json!({"status": {
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}});
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
        // Deleted or changed meanwhile: the next round sees it again.
        let _ = api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await;
    }
}
