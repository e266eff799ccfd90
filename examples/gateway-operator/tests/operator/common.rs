//! What the gateway tests share: a Gateway `edge` in `default` reading the ConfigMap
//! `edge-settings`, two versions of its settings with their hashes, and the Deployment the
//! operator makes of them, as JSON.

use serde_json::{Value, json};

/// The Gateway's uid, which its Deployment's owner reference names.
pub const UID: &str = "6a1f3c2e-0000-4000-8000-00000000a001";

/// The first settings: `listen: ":8080"`, `upstream: "http://backend:9000"`.
pub fn settings_v1() -> Value {
    json!({"listen": ":8080", "upstream": "http://backend:9000"})
}

/// The hash of [`settings_v1`]: computed outside the operator, as
/// `printf 'listen=:8080\nupstream=http://backend:9000\n' | sha256sum`.
pub const HASH_V1: &str = "2f300acd5fe360f230fa92863736ba16eacf296bcc164feda5b94ffc0a0269a7";

/// The edited settings: another upstream and a timeout (and a key the gateway ignores).
pub fn settings_v2() -> Value {
    json!({"listen": ":8080\n", "upstream": "http://backend-v2:9000", "timeout": "5s",
           "comment": "moved to v2"})
}

/// The hash of [`settings_v2`]:
/// `printf 'listen=:8080\ntimeout=5s\nupstream=http://backend-v2:9000\n' | sha256sum`.
pub const HASH_V2: &str = "3b4a8f6051a1789931a5073844d23123d4959f1eddd89ed7d0eaf110f5303b0e";

/// The environment variables of [`settings_v1`].
pub fn env_v1() -> Value {
    json!([{"name": "GATEWAY_LISTEN", "value": ":8080"},
           {"name": "GATEWAY_UPSTREAM", "value": "http://backend:9000"}])
}

/// The environment variables of [`settings_v2`].
pub fn env_v2() -> Value {
    json!([{"name": "GATEWAY_LISTEN", "value": ":8080"},
           {"name": "GATEWAY_UPSTREAM", "value": "http://backend-v2:9000"},
           {"name": "GATEWAY_TIMEOUT", "value": "5s"}])
}

/// The Gateway `edge` (2 replicas, settings in `edge-settings`) with `status`.
pub fn gateway(status: Value) -> Value {
    json!({"apiVersion": "operators.example.com/v1", "kind": "Gateway",
           "metadata": {"name": "edge", "namespace": "default", "uid": UID},
           "spec": {"settings": "edge-settings", "replicas": 2},
           "status": status})
}

/// The settings ConfigMap holding `data`.
pub fn config_map(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "edge-settings", "namespace": "default"},
           "data": data})
}

/// The labels selecting the gateway's pods.
fn selector() -> Value {
    json!({"app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "edge"})
}

/// The Deployment the operator makes for `edge` with settings of `hash` and `env`.
pub fn deployment(hash: &str, env: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {
               "name": "edge", "namespace": "default",
               "labels": {"app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "edge",
                          "app.kubernetes.io/managed-by": "gateway-operator"},
               "ownerReferences": [{"apiVersion": "operators.example.com/v1", "kind": "Gateway",
                                    "name": "edge", "uid": UID,
                                    "controller": true, "blockOwnerDeletion": true}]},
           "spec": {
               "replicas": 2,
               "selector": {"matchLabels": selector()},
               "template": {
                   "metadata": {"labels": selector(),
                                "annotations": {"operators.example.com/settings-hash": hash}},
                   "spec": {"containers": [{
                       "name": "gateway", "image": "registry.example.com/gateway:1.0",
                       "env": env,
                       "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]}}}})
}

/// [`deployment`], rolled out: every replica of generation 1 updated and available.
pub fn rolled_out(mut deployment: Value) -> Value {
    deployment["status"] = json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                                  "readyReplicas": 2, "availableReplicas": 2});
    deployment
}

/// A condition, changed at the tables' clock (`lastTransitionTime` is a server field the
/// tables do not compare).
pub fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": recon_testing::DEFAULT_NOW})
}

/// The status of a ready gateway whose Deployment runs the settings of `hash`.
pub fn ready(hash: &str) -> Value {
    json!({"observedGeneration": 1, "deploymentName": "edge", "settingsHash": hash,
           "conditions": [
               condition("DeploymentReady", "True", "Available", ""),
               condition("Ready", "True", "Ready", ""),
               condition("SettingsResolved", "True", "Resolved", "")]})
}

/// The operator's service account and RBAC manifest (`rbac.yaml`, applied as is on a cluster).
pub fn rbac() -> recon_testing::OperatorRbac {
    recon_testing::OperatorRbac::service_account("default", "gateway-operator")
        .manifest_yaml_file(concat!(env!("CARGO_MANIFEST_DIR"), "/rbac.yaml"))
        .unwrap_or_else(|e| panic!("{e}"))
}
