//! Shared by the table tests: the Function `hello` in `default` and its children, as the
//! operator sends them and as a real API server stores them (with the defaults it fills in).

use serde_json::{Map, Value, json};

/// The uid of the Function `hello` (its children's owner references name it).
pub const UID: &str = "5f0c1d2e-0000-4000-8000-000000000001";

/// The Function `hello` in `default` with `spec` and `status` (`null`: none).
pub fn function(spec: Value, status: Value) -> Value {
    let mut function = json!({
        "apiVersion": "operators.example.com/v1", "kind": "Function",
        "metadata": {"name": "hello", "namespace": "default", "uid": UID, "generation": 1},
        "spec": spec,
    });
    if !status.is_null() {
        function["status"] = status;
    }
    function
}

/// The same Function at another generation (its spec changed since the status was written).
pub fn at_generation(mut function: Value, generation: i64) -> Value {
    function["metadata"]["generation"] = generation.into();
    function
}

/// The spec most cases use: image `hello`, one env variable, one config `nginx`.
pub fn spec() -> Value {
    json!({
        "image": "hello",
        "env": {"GREETING": "hi"},
        "configs": {"nginx": {"nginx.conf": "worker_processes 1;"}},
    })
}

pub fn owner_reference() -> Value {
    json!({"apiVersion": "operators.example.com/v1", "kind": "Function", "name": "hello",
           "uid": UID, "controller": true, "blockOwnerDeletion": true})
}

/// The labels of every child, with `extra`.
pub fn labels(extra: &[(&str, &str)]) -> Value {
    let mut labels = Map::new();
    labels.insert(
        "app.kubernetes.io/managed-by".into(),
        "function-operator".into(),
    );
    labels.insert("operators.example.com/function".into(), "hello".into());
    for (k, v) in extra {
        labels.insert((*k).into(), (*v).into());
    }
    Value::Object(labels)
}

fn child_metadata(name: &str, labels: Value) -> Value {
    json!({"name": name, "namespace": "default", "labels": labels,
           "ownerReferences": [owner_reference()]})
}

/// The env ConfigMap as the operator sends it (`data` `null`: no env).
pub fn env_config_map(data: Value) -> Value {
    let mut cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": child_metadata("hello-env", labels(&[("operators.example.com/component", "env")])),
    });
    if !data.is_null() {
        cm["data"] = data;
    }
    cm
}

/// The config ConfigMap of `key` as the operator sends it.
pub fn config_map(key: &str, data: Value) -> Value {
    let labels = labels(&[
        ("operators.example.com/component", "config"),
        ("operators.example.com/config-key", key),
    ]);
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": child_metadata(&format!("hello-config-{key}"), labels),
        "data": data,
    })
}

/// The `nginx` config of [`spec`].
pub fn nginx() -> Value {
    config_map("nginx", json!({"nginx.conf": "worker_processes 1;"}))
}

/// The Deployment as the operator sends it: `image` (with the pull policy the server would
/// default it to), `replicas`, `port`, mounting the config ConfigMaps of `keys`.
pub fn deployment(image: &str, replicas: i32, port: i32, keys: &[&str]) -> Value {
    let pull = if image.ends_with(":latest") {
        "Always"
    } else {
        "IfNotPresent"
    };
    let mut container = json!({
        "name": "function",
        "image": image,
        "imagePullPolicy": pull,
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": [{"name": "PORT", "value": port.to_string()}],
        "envFrom": [{"configMapRef": {"name": "hello-env"}}],
    });
    let mut pod = json!({});
    if !keys.is_empty() {
        container["volumeMounts"] = keys
            .iter()
            .map(|k| json!({"name": format!("config-{k}"), "mountPath": format!("/etc/function/{k}"), "readOnly": true}))
            .collect();
        pod["volumes"] = keys
            .iter()
            .map(|k| {
                json!({"name": format!("config-{k}"),
                            "configMap": {"name": format!("hello-config-{k}"), "defaultMode": 420}})
            })
            .collect();
    }
    pod["containers"] = json!([container]);
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": child_metadata("hello", labels(&[])),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"operators.example.com/function": "hello"}},
            "template": {"metadata": {"labels": labels(&[])}, "spec": pod},
        },
    })
}

/// The Deployment of [`spec`].
pub fn hello_deployment() -> Value {
    deployment("docker.io/library/hello:latest", 1, 8080, &["nginx"])
}

/// A Deployment as kube-apiserver stores it: with the defaults it fills in (strategy, history
/// limit, progress deadline, pod and container defaults) and `status`.
pub fn stored_deployment(mut deployment: Value, status: Value) -> Value {
    deployment["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
    let spec = &mut deployment["spec"];
    spec["progressDeadlineSeconds"] = 600.into();
    spec["revisionHistoryLimit"] = 10.into();
    spec["strategy"] = json!({"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}});
    let pod = &mut spec["template"]["spec"];
    pod["dnsPolicy"] = "ClusterFirst".into();
    pod["restartPolicy"] = "Always".into();
    pod["schedulerName"] = "default-scheduler".into();
    pod["securityContext"] = json!({});
    pod["terminationGracePeriodSeconds"] = 30.into();
    if let Some(containers) = pod["containers"].as_array_mut() {
        for container in containers {
            container["resources"] = json!({});
            container["terminationMessagePath"] = "/dev/termination-log".into();
            container["terminationMessagePolicy"] = "File".into();
        }
    }
    if !status.is_null() {
        deployment["status"] = status;
    }
    deployment
}

/// The status of a Deployment whose one replica is available, as of `generation`.
pub fn available(generation: i64) -> Value {
    json!({
        "observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
        "readyReplicas": 1, "availableReplicas": 1,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.",
             "lastUpdateTime": "2024-01-01T00:00:00Z", "lastTransitionTime": "2024-01-01T00:00:00Z"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
             "message": "ReplicaSet \"hello-5d8f7c9b6\" has successfully progressed.",
             "lastUpdateTime": "2024-01-01T00:00:00Z", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        ],
    })
}

/// The status of a Deployment whose pods are not available yet, as of `generation`.
pub fn progressing(generation: i64) -> Value {
    json!({
        "observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
        "unavailableReplicas": 1,
        "conditions": [
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
             "message": "Deployment does not have minimum availability.",
             "lastUpdateTime": "2024-01-01T00:00:00Z", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        ],
    })
}

/// The Service as the operator sends it, forwarding port 80 to `port`.
pub fn service(port: i32) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": child_metadata("hello", labels(&[])),
        "spec": {
            "selector": {"operators.example.com/function": "hello"},
            "ports": [{"name": "http", "port": 80, "targetPort": port, "protocol": "TCP"}],
        },
    })
}

/// A Service as kube-apiserver stores it: with an allocated cluster IP and the defaults.
pub fn stored_service(mut service: Value) -> Value {
    let spec = &mut service["spec"];
    spec["type"] = "ClusterIP".into();
    spec["clusterIP"] = "10.96.14.7".into();
    spec["clusterIPs"] = json!(["10.96.14.7"]);
    spec["sessionAffinity"] = "None".into();
    spec["ipFamilies"] = json!(["IPv4"]);
    spec["ipFamilyPolicy"] = "SingleStack".into();
    spec["internalTrafficPolicy"] = "Cluster".into();
    service["status"] = json!({"loadBalancer": {}});
    service
}

/// A condition (its transition time is not compared).
pub fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": recon_testing::DEFAULT_NOW})
}

pub fn ready(type_: &str, reason: &str) -> Value {
    condition(type_, "True", reason, "")
}

pub const WAITING: &str = "waiting for Deployment \"hello\" to become available";

/// The conditions of a Function whose children are all there: ready, or with the
/// Deployment progressing.
pub fn conditions(deployment_available: bool) -> Value {
    let (deployment, happy) = if deployment_available {
        (
            ready("DeploymentReady", "DeploymentAvailable"),
            ready("Ready", "Ready"),
        )
    } else {
        (
            condition(
                "DeploymentReady",
                "Unknown",
                "DeploymentProgressing",
                WAITING,
            ),
            condition("Ready", "Unknown", "DeploymentProgressing", WAITING),
        )
    };
    json!([
        ready("ConfigReady", "ConfigMapsReady"),
        deployment,
        ready("EnvReady", "ConfigMapReady"),
        ready("ImageResolved", "Resolved"),
        happy,
        ready("ServiceReady", "ServiceReady"),
    ])
}

/// The status of the Function of [`spec`] with every child there.
pub fn hello_status(deployment_available: bool) -> Value {
    let mut status = json!({
        "observedGeneration": 1,
        "conditions": conditions(deployment_available),
        "resolvedImage": "docker.io/library/hello:latest",
        "envConfigMapName": "hello-env",
        "configMaps": {"nginx": "hello-config-nginx"},
        "deploymentName": "hello",
        "serviceName": "hello",
        "url": "http://hello.default.svc.cluster.local",
    });
    if deployment_available {
        status["availableReplicas"] = 1.into();
    }
    status
}

/// The operator's service account and RBAC manifest (`rbac.yaml`, applied as is on a cluster).
pub fn rbac() -> recon_testing::OperatorRbac {
    recon_testing::OperatorRbac::service_account("default", "function-operator")
        .manifest_yaml_file(concat!(env!("CARGO_MANIFEST_DIR"), "/rbac.yaml"))
        .unwrap_or_else(|e| panic!("{e}"))
}
