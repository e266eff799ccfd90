//! The gateway's Deployment: what it should be, which of its fields the operator owns, and
//! whether its rollout is done.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, EnvVar, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::settings::{LISTEN, Settings, TIMEOUT, UPSTREAM};
use crate::{DEFAULT_IMAGE, Gateway, SETTINGS_HASH_ANNOTATION};

/// The name of the gateway container in the pod template.
pub(crate) const CONTAINER: &str = "gateway";
/// The name of the container's listening port.
const PORT_NAME: &str = "http";
/// Each setting's environment variable, in the order they appear in the container.
const ENV: [(&str, &str); 3] = [
    (LISTEN, "GATEWAY_LISTEN"),
    (UPSTREAM, "GATEWAY_UPSTREAM"),
    (TIMEOUT, "GATEWAY_TIMEOUT"),
];

// k8s-openapi's Deployment and DeploymentCondition differ between Kubernetes versions (from
// 1.37, `Deployment.spec` is required and a condition's `type` and `status` optional); the
// binary using this library picks the version, so these accessors compile for any of them.

/// The Deployment's spec, if it has one.
pub(crate) fn spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
    k8s_openapi::k8s_if_le_1_36! { let spec = deployment.spec.as_ref(); }
    k8s_openapi::k8s_if_ge_1_37! { let spec = Some(&deployment.spec); }
    spec
}

/// The Deployment's spec, to change (created empty if it has none).
fn spec_mut(deployment: &mut Deployment) -> &mut DeploymentSpec {
    k8s_openapi::k8s_if_le_1_36! { let spec = deployment.spec.get_or_insert_default(); }
    k8s_openapi::k8s_if_ge_1_37! { let spec = &mut deployment.spec; }
    spec
}

/// A Deployment of `metadata` and `spec`, without status.
fn new_deployment(metadata: ObjectMeta, spec: DeploymentSpec) -> Deployment {
    k8s_openapi::k8s_if_le_1_36! { let spec = Some(spec); }
    Deployment {
        metadata,
        spec,
        status: None,
    }
}

/// A Deployment condition's type and status.
fn type_and_status(condition: &DeploymentCondition) -> (&str, &str) {
    k8s_openapi::k8s_if_le_1_36! {
        let parts = (condition.type_.as_str(), condition.status.as_str());
    }
    k8s_openapi::k8s_if_ge_1_37! {
        let parts = (
            condition.type_.as_deref().unwrap_or_default(),
            condition.status.as_deref().unwrap_or_default(),
        );
    }
    parts
}

/// The labels selecting a gateway's pods.
fn selector_labels(gateway: &str) -> BTreeMap<String, String> {
    [
        ("app.kubernetes.io/name", "gateway"),
        ("app.kubernetes.io/instance", gateway),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The Deployment `gateway` wants with `settings`: named after the gateway, its pod template
/// carrying the settings as environment variables and their hash as an annotation.
pub(crate) fn desired(gateway: &Gateway, settings: &Settings) -> Deployment {
    let name = gateway.metadata.name.clone().unwrap_or_default();
    let selector = selector_labels(&name);
    let mut labels = selector.clone();
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        "gateway-operator".to_owned(),
    );
    let values: BTreeMap<&str, &str> = settings.entries().into_iter().collect();
    let env = ENV
        .iter()
        .filter_map(|(key, var)| {
            values.get(key).map(|value| EnvVar {
                name: (*var).to_owned(),
                value: Some((*value).to_owned()),
                value_from: None,
            })
        })
        .collect();
    let container = Container {
        name: CONTAINER.to_owned(),
        image: Some(
            gateway
                .spec
                .image
                .clone()
                .unwrap_or_else(|| DEFAULT_IMAGE.to_owned()),
        ),
        env: Some(env),
        ports: Some(vec![ContainerPort {
            name: Some(PORT_NAME.to_owned()),
            container_port: settings.port,
            // What the server would default it to: written out, it never reads as drift.
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        ..Container::default()
    };
    // The user's pod labels go on top: one that changes a selector label is the server's to
    // refuse, and the refusal is reflected rather than second-guessed here.
    let mut pod_labels = selector.clone();
    pod_labels.extend(gateway.spec.pod_labels.clone().unwrap_or_default());
    new_deployment(
        ObjectMeta {
            name: Some(name),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        DeploymentSpec {
            replicas: Some(gateway.spec.replicas.unwrap_or(1)),
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: Some(
                        [(SETTINGS_HASH_ANNOTATION.to_owned(), settings.hash())].into(),
                    ),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
    )
}

/// Copies onto `current` (the Deployment as stored) the fields the operator owns in `desired`,
/// and nothing else: its labels, the replica count, the pod template's labels and hash
/// annotation, and in the gateway container the image, the settings' environment variables
/// (one no longer set is removed) and the listening port. Labels, annotations, variables,
/// containers and volumes others added stay; so do the fields the server defaults. The
/// selector is immutable and never changes for a gateway, so it is left as created.
pub(crate) fn merge_owned_fields(current: &mut Deployment, desired: &Deployment) {
    if let Some(labels) = &desired.metadata.labels {
        current
            .metadata
            .labels
            .get_or_insert_default()
            .extend(labels.clone());
    }
    let Some(want) = spec(desired) else {
        return;
    };
    let spec = spec_mut(current);
    spec.replicas = want.replicas;

    let want_meta = want.template.metadata.clone().unwrap_or_default();
    let meta = spec.template.metadata.get_or_insert_default();
    if let Some(labels) = want_meta.labels {
        meta.labels.get_or_insert_default().extend(labels);
    }
    if let Some(annotations) = want_meta.annotations {
        meta.annotations.get_or_insert_default().extend(annotations);
    }

    let Some(want_container) = want
        .template
        .spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER))
    else {
        return;
    };
    let pod = spec.template.spec.get_or_insert_default();
    let Some(container) = pod.containers.iter_mut().find(|c| c.name == CONTAINER) else {
        pod.containers.push(want_container.clone());
        return;
    };
    container.image.clone_from(&want_container.image);

    let want_env = want_container.env.as_deref().unwrap_or_default();
    let env = container.env.get_or_insert_default();
    for (_, var) in ENV {
        let wanted = want_env.iter().find(|v| v.name == var);
        let existing = env.iter().position(|v| v.name == var);
        match (wanted, existing) {
            (Some(wanted), Some(i)) => env[i] = wanted.clone(),
            (Some(wanted), None) => env.push(wanted.clone()),
            (None, Some(i)) => {
                env.remove(i);
            }
            (None, None) => {}
        }
    }

    if let Some(want_port) = want_container
        .ports
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|p| p.name.as_deref() == Some(PORT_NAME))
    {
        let ports = container.ports.get_or_insert_default();
        match ports
            .iter_mut()
            .find(|p| p.name.as_deref() == Some(PORT_NAME))
        {
            Some(port) => *port = want_port.clone(),
            None => ports.push(want_port.clone()),
        }
    }
}

/// Where a Deployment's rollout stands, as `kubectl rollout status` judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rollout {
    /// Every replica runs the current template and is available.
    Complete,
    /// The rollout goes on; why it is not done yet.
    InProgress(String),
    /// The rollout stalled: the reason and message of the Deployment's `Progressing` condition.
    Failed(String, String),
}

/// How far `deployment`'s rollout has got.
pub(crate) fn rollout(deployment: &Deployment) -> Rollout {
    let generation = deployment.metadata.generation.unwrap_or(0);
    let status = deployment.status.clone().unwrap_or_default();
    if status.observed_generation.unwrap_or(0) < generation {
        return Rollout::InProgress(format!(
            "waiting for the Deployment controller to observe generation {generation}"
        ));
    }
    if let Some(progressing) = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| type_and_status(c).0 == "Progressing")
        && type_and_status(progressing).1 == "False"
    {
        return Rollout::Failed(
            progressing
                .reason
                .clone()
                .unwrap_or_else(|| "ProgressDeadlineExceeded".to_owned()),
            progressing.message.clone().unwrap_or_default(),
        );
    }
    let wanted = spec(deployment).and_then(|s| s.replicas).unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let total = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if updated < wanted {
        Rollout::InProgress(format!("{updated} of {wanted} replicas updated"))
    } else if total > updated {
        Rollout::InProgress(format!(
            "{} old replicas pending termination",
            total - updated
        ))
    } else if available < updated {
        Rollout::InProgress(format!(
            "{available} of {updated} updated replicas available"
        ))
    } else {
        Rollout::Complete
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;
    use kube::Resource;

    use super::*;
    use crate::GatewaySpec;

    fn settings(timeout: Option<&str>) -> Settings {
        let mut data: BTreeMap<String, String> = [
            ("listen".to_owned(), ":8080".to_owned()),
            ("upstream".to_owned(), "http://backend".to_owned()),
        ]
        .into();
        if let Some(timeout) = timeout {
            data.insert("timeout".to_owned(), timeout.to_owned());
        }
        Settings::from_data(&data).unwrap()
    }

    fn gateway() -> Gateway {
        Gateway::new(
            "edge",
            GatewaySpec {
                settings: "edge-settings".into(),
                replicas: Some(2),
                image: None,
                pod_labels: None,
            },
        )
    }

    fn env(deployment: &Deployment) -> Vec<(String, String)> {
        spec(deployment)
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .env
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|v| (v.name.clone(), v.value.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn the_desired_deployment_carries_the_settings_and_their_hash() {
        let settings = settings(Some("5s"));
        let deployment = desired(&gateway(), &settings);
        assert_eq!(deployment.meta().name.as_deref(), Some("edge"));
        let spec = spec(&deployment).unwrap();
        assert_eq!(spec.replicas, Some(2));
        let annotations = spec.template.metadata.as_ref().unwrap().annotations.clone();
        assert_eq!(
            annotations.unwrap()[SETTINGS_HASH_ANNOTATION],
            settings.hash()
        );
        assert_eq!(
            env(&deployment),
            [
                ("GATEWAY_LISTEN".to_owned(), ":8080".to_owned()),
                ("GATEWAY_UPSTREAM".to_owned(), "http://backend".to_owned()),
                ("GATEWAY_TIMEOUT".to_owned(), "5s".to_owned()),
            ]
        );
        let container = &spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(container.image.as_deref(), Some(DEFAULT_IMAGE));
        assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 8080);
    }

    #[test]
    fn merging_copies_owned_fields_and_keeps_the_rest() {
        let old = desired(&gateway(), &settings(Some("5s")));
        let mut current = old.clone();
        {
            let template = &mut spec_mut(&mut current).template;
            template
                .metadata
                .as_mut()
                .unwrap()
                .annotations
                .as_mut()
                .unwrap()
                .insert("kubectl.kubernetes.io/restartedAt".into(), "now".into());
            let pod = template.spec.as_mut().unwrap();
            pod.containers[0].env.as_mut().unwrap().push(EnvVar {
                name: "EXTRA".into(),
                value: Some("kept".into()),
                value_from: None,
            });
            pod.containers[0].image_pull_policy = Some("IfNotPresent".into());
            pod.containers.push(Container {
                name: "sidecar".into(),
                ..Container::default()
            });
        }
        let new = desired(&gateway(), &settings(None));
        merge_owned_fields(&mut current, &new);

        assert_eq!(
            env(&current),
            [
                ("GATEWAY_LISTEN".to_owned(), ":8080".to_owned()),
                ("GATEWAY_UPSTREAM".to_owned(), "http://backend".to_owned()),
                ("EXTRA".to_owned(), "kept".to_owned()),
            ],
            "the timeout no longer set is removed, another variable kept"
        );
        let template = &spec(&current).unwrap().template;
        let annotations = template.metadata.as_ref().unwrap().annotations.as_ref();
        let annotations = annotations.unwrap();
        assert_eq!(annotations[SETTINGS_HASH_ANNOTATION], settings(None).hash());
        assert_eq!(annotations["kubectl.kubernetes.io/restartedAt"], "now");
        let pod = template.spec.as_ref().unwrap();
        assert_eq!(
            pod.containers[0].image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
        assert_eq!(pod.containers.len(), 2);

        let mut again = current.clone();
        merge_owned_fields(&mut again, &new);
        assert_eq!(again, current, "merging twice changes nothing more");
    }

    #[test]
    fn a_missing_gateway_container_is_added() {
        let want = desired(&gateway(), &settings(None));
        let mut current = want.clone();
        spec_mut(&mut current)
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers
            .clear();
        merge_owned_fields(&mut current, &want);
        assert_eq!(current, want);
    }

    fn with_status(generation: i64, replicas: i32, status: DeploymentStatus) -> Deployment {
        let mut d = desired(&gateway(), &settings(None));
        d.metadata.generation = Some(generation);
        spec_mut(&mut d).replicas = Some(replicas);
        d.status = Some(status);
        d
    }

    #[test]
    fn rollouts() {
        let status =
            |observed: i64, replicas: i32, updated: i32, available: i32| DeploymentStatus {
                observed_generation: Some(observed),
                replicas: Some(replicas),
                updated_replicas: Some(updated),
                available_replicas: Some(available),
                ready_replicas: Some(available),
                ..DeploymentStatus::default()
            };
        let in_progress = |why: &str| Rollout::InProgress(why.to_owned());
        assert_eq!(
            rollout(&with_status(2, 2, status(1, 2, 2, 2))),
            in_progress("waiting for the Deployment controller to observe generation 2")
        );
        assert_eq!(
            rollout(&with_status(2, 2, status(2, 2, 1, 1))),
            in_progress("1 of 2 replicas updated")
        );
        assert_eq!(
            rollout(&with_status(2, 2, status(2, 3, 2, 2))),
            in_progress("1 old replicas pending termination")
        );
        assert_eq!(
            rollout(&with_status(2, 2, status(2, 2, 2, 1))),
            in_progress("1 of 2 updated replicas available")
        );
        assert_eq!(
            rollout(&with_status(2, 2, status(2, 2, 2, 2))),
            Rollout::Complete
        );
        assert_eq!(
            rollout(&with_status(1, 0, status(1, 0, 0, 0))),
            Rollout::Complete,
            "scaled to zero"
        );
        let mut stalled = status(2, 2, 1, 1);
        stalled.conditions = Some(vec![
            serde_json::from_value(serde_json::json!({
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": "ReplicaSet \"edge-1\" has timed out progressing.",
            }))
            .unwrap(),
        ]);
        assert_eq!(
            rollout(&with_status(2, 2, stalled)),
            Rollout::Failed(
                "ProgressDeadlineExceeded".into(),
                "ReplicaSet \"edge-1\" has timed out progressing.".into()
            )
        );
        let mut unobserved = desired(&gateway(), &settings(None));
        unobserved.metadata.generation = Some(1);
        assert_eq!(
            rollout(&unobserved),
            in_progress("waiting for the Deployment controller to observe generation 1")
        );
    }
}
