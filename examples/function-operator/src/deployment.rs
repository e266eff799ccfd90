//! The Function's Deployment: its pods running the image, and its readiness reflected on the
//! Function.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMapEnvSource, ConfigMapVolumeSource, Container, ContainerPort, EnvFromSource, EnvVar,
    PodSpec, PodTemplateSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use recon_core::{
    ChildReconciler, Context, Error, OnlyReconcileChildStatus, UpdatingObjectManager,
};

use crate::function::Function;
use crate::image::pull_policy;
use crate::naming::{
    child_meta, config_keys, config_map_name, config_volume_name, env_config_map_name, failure,
    labels, merge_labels, name_of, port_of, selector_labels, status_of,
};
use crate::{CONDITIONS, CONFIG_MOUNT_ROOT, CONTAINER_NAME, DEFAULT_REPLICAS};

pub(crate) fn desired_deployment(function: &Function, image: &str) -> Deployment {
    let port = port_of(function);
    let keys: Vec<&String> = config_keys(function).collect();
    let mounts: Vec<VolumeMount> = keys
        .iter()
        .map(|key| VolumeMount {
            name: config_volume_name(key),
            mount_path: format!("{CONFIG_MOUNT_ROOT}/{key}"),
            read_only: Some(true),
            ..VolumeMount::default()
        })
        .collect();
    let volumes: Vec<Volume> = keys
        .iter()
        .map(|key| Volume {
            name: config_volume_name(key),
            config_map: Some(ConfigMapVolumeSource {
                name: config_map_name(function, key),
                // The API server's default (0644), written out so it is not drift.
                default_mode: Some(0o644),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        })
        .collect();
    let container = Container {
        name: CONTAINER_NAME.to_owned(),
        image: Some(image.to_owned()),
        image_pull_policy: Some(pull_policy(image).to_owned()),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_owned()),
            container_port: port,
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        env: Some(vec![EnvVar {
            name: "PORT".to_owned(),
            value: Some(port.to_string()),
            ..EnvVar::default()
        }]),
        env_from: Some(vec![EnvFromSource {
            config_map_ref: Some(ConfigMapEnvSource {
                name: env_config_map_name(function),
                ..ConfigMapEnvSource::default()
            }),
            ..EnvFromSource::default()
        }]),
        volume_mounts: Some(mounts).filter(|m| !m.is_empty()),
        ..Container::default()
    };
    let mut deployment = Deployment {
        metadata: child_meta(name_of(function), labels(function)),
        ..Deployment::default()
    };
    *compat::spec_mut(&mut deployment) = DeploymentSpec {
        replicas: Some(function.spec.replicas.unwrap_or(DEFAULT_REPLICAS)),
        selector: LabelSelector {
            match_labels: Some(selector_labels(function)),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels(function)),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![container],
                volumes: Some(volumes).filter(|v| !v.is_empty()),
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    };
    deployment
}

/// Copies what the operator owns of a Deployment: its labels, replicas, the pod labels and
/// volumes, and the image, pull policy, ports, env and mounts of the `function` container. The selector is
/// immutable and stays as created; everything else stays as stored.
pub(crate) fn merge_deployment(current: &mut Deployment, desired: &Deployment) {
    merge_labels(&mut current.metadata, &desired.metadata);
    let Some(want) = compat::spec(desired) else {
        return;
    };
    let spec = compat::spec_mut(current);
    if spec.selector == LabelSelector::default() {
        spec.selector = want.selector.clone();
    }
    spec.replicas = want.replicas;
    if let Some(want_meta) = &want.template.metadata {
        merge_labels(spec.template.metadata.get_or_insert_default(), want_meta);
    }
    let Some(want_pod) = want.template.spec.as_ref() else {
        return;
    };
    let pod = spec.template.spec.get_or_insert_default();
    pod.volumes = want_pod.volumes.clone();
    for wanted in &want_pod.containers {
        match pod.containers.iter_mut().find(|c| c.name == wanted.name) {
            Some(container) => {
                container.image = wanted.image.clone();
                container.image_pull_policy = wanted.image_pull_policy.clone();
                container.ports = wanted.ports.clone();
                container.env = wanted.env.clone();
                container.env_from = wanted.env_from.clone();
                container.volume_mounts = wanted.volume_mounts.clone();
            }
            None => pod.containers.push(wanted.clone()),
        }
    }
}

pub(crate) fn deployment() -> ChildReconciler<Function, Deployment> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_deployment),
        |_ctx, function: &Function| {
            let image = function
                .status
                .as_ref()
                .and_then(|s| s.resolved_image.as_deref());
            match image {
                Some(image) => Ok(Some(desired_deployment(function, image))),
                // Nothing to run yet: leave an existing Deployment as it is.
                None => Err(OnlyReconcileChildStatus.into()),
            }
        },
        reflect_deployment,
    )
    .named("Deployment")
}

/// How ready a Deployment is: `Some(true)` available, `Some(false)` failed (with the reason
/// and message), `None` still progressing.
pub(crate) fn deployment_readiness(deployment: &Deployment) -> (Option<bool>, String, String) {
    let progressing = |message: String| (None, "DeploymentProgressing".to_owned(), message);
    let name = deployment.metadata.name.as_deref().unwrap_or_default();
    let waiting = format!("waiting for Deployment {name:?} to become available");
    let Some(status) = deployment.status.as_ref() else {
        return progressing(waiting);
    };
    // A status older than the spec says nothing about the spec.
    if status.observed_generation < deployment.metadata.generation {
        return progressing(waiting);
    }
    let conditions = status.conditions.as_deref().unwrap_or_default();
    let condition = |type_: &str| {
        conditions
            .iter()
            .find(|c| compat::condition_type(c) == type_)
    };
    let failed = condition("ReplicaFailure")
        .filter(|c| compat::condition_status(c) == "True")
        .or_else(|| condition("Progressing").filter(|c| compat::condition_status(c) == "False"));
    if let Some(failed) = failed {
        let reason = failed
            .reason
            .clone()
            .unwrap_or_else(|| "DeploymentFailed".to_owned());
        return (
            Some(false),
            reason,
            failed.message.clone().unwrap_or_default(),
        );
    }
    match condition("Available") {
        Some(available) if compat::condition_status(available) == "True" => {
            (Some(true), "DeploymentAvailable".to_owned(), String::new())
        }
        Some(available) => progressing(available.message.clone().unwrap_or(waiting)),
        None => progressing(waiting),
    }
}

pub(crate) fn reflect_deployment(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&Deployment>, Error>,
) -> Result<(), Error> {
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(deployment)) => {
            match deployment_readiness(deployment) {
                (Some(true), reason, message) => {
                    conditions.mark_true("DeploymentReady", &reason, &message);
                }
                (Some(false), reason, message) => {
                    conditions.mark_false("DeploymentReady", &reason, &message);
                }
                (None, reason, message) => {
                    conditions.mark_unknown("DeploymentReady", &reason, &message);
                }
            }
            status.deployment_name = deployment.metadata.name.clone();
            status.available_replicas = deployment
                .status
                .as_ref()
                .and_then(|s| s.available_replicas);
        }
        Ok(None) => {
            conditions.mark_unknown(
                "DeploymentReady",
                "NoDeployment",
                "the Deployment waits for a resolved image",
            );
            status.deployment_name = None;
            status.available_replicas = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("DeploymentReady", &reason, &message);
            status.deployment_name = None;
            status.available_replicas = None;
        }
    }
    Ok(())
}

/// The Deployment fields whose Rust types differ between the Kubernetes versions k8s-openapi
/// supports: from 1.37 on, `Deployment::spec` is required and a `DeploymentCondition`'s `type`
/// and `status` are optional. The library compiles for whichever version the binary picks.
mod compat {
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentSpec};

    k8s_openapi::k8s_if_le_1_36! {
        pub(crate) fn spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
            deployment.spec.as_ref()
        }

        pub(crate) fn spec_mut(deployment: &mut Deployment) -> &mut DeploymentSpec {
            deployment.spec.get_or_insert_default()
        }

        pub(crate) fn condition_type(condition: &DeploymentCondition) -> &str {
            &condition.type_
        }

        pub(crate) fn condition_status(condition: &DeploymentCondition) -> &str {
            &condition.status
        }
    }

    k8s_openapi::k8s_if_ge_1_37! {
        pub(crate) fn spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
            Some(&deployment.spec)
        }

        pub(crate) fn spec_mut(deployment: &mut Deployment) -> &mut DeploymentSpec {
            &mut deployment.spec
        }

        pub(crate) fn condition_type(condition: &DeploymentCondition) -> &str {
            condition.type_.as_deref().unwrap_or_default()
        }

        pub(crate) fn condition_status(condition: &DeploymentCondition) -> &str {
            condition.status.as_deref().unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment_with(generation: i64, status: serde_json::Value) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "hello", "generation": generation},
            "spec": {"selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    }

    fn condition(type_: &str, status: &str, reason: &str) -> serde_json::Value {
        serde_json::json!({"type": type_, "status": status, "reason": reason, "message": reason})
    }

    #[test]
    fn a_deployment_is_ready_when_available_and_failed_when_stuck() {
        let waiting = "waiting for Deployment \"hello\" to become available".to_owned();
        let readiness =
            |generation, status| deployment_readiness(&deployment_with(generation, status));
        assert_eq!(
            readiness(1, serde_json::Value::Null),
            (None, "DeploymentProgressing".to_owned(), waiting.clone())
        );
        let available = serde_json::json!({"observedGeneration": 1,
            "conditions": [condition("Available", "True", "MinimumReplicasAvailable")]});
        assert_eq!(
            readiness(1, available.clone()),
            (Some(true), "DeploymentAvailable".to_owned(), String::new())
        );
        assert_eq!(
            readiness(2, available),
            (None, "DeploymentProgressing".to_owned(), waiting),
            "a status of an older generation"
        );
        let stuck = serde_json::json!({"observedGeneration": 1, "conditions": [
            condition("Available", "True", "MinimumReplicasAvailable"),
            condition("Progressing", "False", "ProgressDeadlineExceeded")]});
        assert_eq!(
            readiness(1, stuck),
            (
                Some(false),
                "ProgressDeadlineExceeded".to_owned(),
                "ProgressDeadlineExceeded".to_owned()
            )
        );
        let quota = serde_json::json!({"observedGeneration": 1, "conditions": [
            condition("ReplicaFailure", "True", "FailedCreate")]});
        assert_eq!(
            readiness(1, quota),
            (
                Some(false),
                "FailedCreate".to_owned(),
                "FailedCreate".to_owned()
            )
        );
    }
}
