//! The Gateway reconciler as recon-testing tables: what it sends to the API server, the events
//! it publishes and the objects it tracks, for each state of the Gateway, its settings
//! ConfigMap and its Deployment.

use crate::common::*;
use gateway_operator::{Gateway, reconciler};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use recon_core::{Reference, Request};
use recon_testing::{EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests, TestCase};
use serde_json::{Value, json};

fn reconcile_edge() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "edge"))
}

/// The request tracks the settings ConfigMap.
fn settings_tracked(case: TestCase) -> TestCase {
    case.expect_track(
        Request::namespaced("default", "edge"),
        Reference::of::<ConfigMap>(Some("default"), "edge-settings"),
    )
}

fn status_patch(status: Value) -> PatchRef {
    PatchRef::merge(
        "Gateway",
        Some("default"),
        "edge",
        json!({ "status": status }),
    )
}

fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

/// The conditions of a gateway whose settings resolved and whose Deployment has not rolled out
/// `generation` yet.
fn rolling_out(generation: i64) -> Value {
    let why = format!("waiting for the Deployment controller to observe generation {generation}");
    json!([
        condition("DeploymentReady", "Unknown", "RolloutInProgress", &why),
        condition("Ready", "Unknown", "RolloutInProgress", &why),
        condition("SettingsResolved", "True", "Resolved", ""),
    ])
}

/// The conditions of a gateway whose settings do not resolve (`reason`, `message`), with the
/// `DeploymentReady` condition given.
fn unresolved(reason: &str, message: &str, deployment_ready: Value) -> Value {
    json!([
        deployment_ready,
        condition("Ready", "False", reason, message),
        condition("SettingsResolved", "False", reason, message),
    ])
}

fn no_deployment() -> Value {
    condition(
        "DeploymentReady",
        "Unknown",
        "DeploymentNotCreated",
        "the Deployment is created once the settings resolve",
    )
}

#[test]
fn gateway_reconciler() {
    let not_found = "ConfigMap \"edge-settings\" not found";
    ReconcilerTests::new()
        .crd(&Gateway::crd())
        .run_as(rbac())
        .case(
            "a new gateway with its settings gets its deployment, carrying the settings hash",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(Value::Null))
                    .given(&config_map(settings_v1())),
            )
            .expect_create(&deployment(HASH_V1, env_v1()))
            .expect_event(EventRef::normal("Created", "Created Deployment \"edge\""))
            .expect_status_patch(status_patch(json!({
                "observedGeneration": 1,
                "deploymentName": "edge",
                "settingsHash": HASH_V1,
                "conditions": rolling_out(1),
            })))
            .expect_event(status_patched()),
        )
        .case(
            "a rolled-out deployment makes the gateway ready",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(json!({
                        "observedGeneration": 1, "deploymentName": "edge", "settingsHash": HASH_V1,
                        "conditions": rolling_out(1)})))
                    .given(&config_map(settings_v1()))
                    .given(&rolled_out(deployment(HASH_V1, env_v1()))),
            )
            .expect_status_patch(status_patch(json!({
                "conditions": [
                    condition("DeploymentReady", "True", "Available", ""),
                    condition("Ready", "True", "Ready", ""),
                    condition("SettingsResolved", "True", "Resolved", ""),
                ],
            })))
            .expect_event(status_patched()),
        )
        .case(
            "in steady state nothing is written",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(ready(HASH_V1)))
                    .given(&config_map(settings_v1()))
                    .given(&rolled_out(deployment(HASH_V1, env_v1()))),
            ),
        )
        .case(
            "changed settings roll the deployment: a new hash in its template, new variables",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(ready(HASH_V1)))
                    .given(&config_map(settings_v2()))
                    .given(&rolled_out(deployment(HASH_V1, env_v1()))),
            )
            .expect_update(&rolled_out(deployment(HASH_V2, env_v2())))
            .expect_event(EventRef::normal("Updated", "Updated Deployment \"edge\""))
            .expect_status_patch(status_patch(json!({
                "settingsHash": HASH_V2,
                "conditions": rolling_out(2),
            })))
            .expect_event(status_patched()),
        )
        .case(
            "a missing settings ConfigMap is reported and tracked, and nothing is created",
            settings_tracked(reconcile_edge().given(&gateway(Value::Null)))
                .expect_status_patch(status_patch(json!({
                    "observedGeneration": 1,
                    "conditions": unresolved("SettingsNotFound", not_found, no_deployment()),
                })))
                .expect_event(status_patched()),
        )
        .case(
            "a deleted settings ConfigMap leaves the running deployment alone",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(ready(HASH_V1)))
                    .given(&rolled_out(deployment(HASH_V1, env_v1()))),
            )
            .expect_status_patch(status_patch(json!({
                "conditions": unresolved(
                    "SettingsNotFound",
                    not_found,
                    condition("DeploymentReady", "True", "Available", ""),
                ),
            })))
            .expect_event(status_patched()),
        )
        .case(
            "invalid settings are reported with every problem, and nothing is created",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(Value::Null))
                    .given(&config_map(json!({"listen": "http", "timeout": "30s"}))),
            )
            .expect_status_patch(status_patch(json!({
                "observedGeneration": 1,
                "conditions": unresolved(
                    "InvalidSettings",
                    "ConfigMap \"edge-settings\": \"listen\" must be a port or host:port with a \
                     port from 1 to 65535, got \"http\"; \"upstream\" is missing",
                    no_deployment(),
                ),
            })))
            .expect_event(status_patched()),
        )
        .case(
            "a settings name that cannot name a ConfigMap is invalid, and nothing is read",
            reconcile_edge()
                .given(&{
                    let mut g = gateway(Value::Null);
                    g["spec"]["settings"] = json!("Edge_Settings");
                    g
                })
                .expect_status_patch(status_patch(json!({
                    "observedGeneration": 1,
                    "conditions": unresolved(
                        "InvalidSettings",
                        "spec.settings: \"Edge_Settings\" is not a valid ConfigMap name",
                        no_deployment(),
                    ),
                })))
                .expect_event(status_patched()),
        )
        .case(
            "a failure to read the settings is an error, after tracking them; nothing is written",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(ready(HASH_V1)))
                    .given(&config_map(settings_v1()))
                    .given(&rolled_out(deployment(HASH_V1, env_v1())))
                    .reactor(ReactorSpec::new(
                        "get",
                        "configmaps",
                        FailureSpec::Internal("etcd is unavailable".into()),
                    )),
            )
            .expect_error("Internal error occurred: etcd is unavailable"),
        )
        .case(
            "a deployment of the same name the gateway does not own is reflected and tracked",
            settings_tracked(
                reconcile_edge()
                    .given(&gateway(Value::Null))
                    .given(&config_map(settings_v1()))
                    .given(&{
                        let mut foreign = deployment("other", env_v1());
                        foreign["metadata"]
                            .as_object_mut()
                            .map(|m| m.remove("ownerReferences"));
                        foreign
                    }),
            )
            .expect_create(&deployment(HASH_V1, env_v1()))
            .expect_event(EventRef::warning(
                "CreationFailed",
                "Failed to create Deployment \"edge\": deployments.apps \"edge\" already exists",
            ))
            .expect_track(
                Request::namespaced("default", "edge"),
                Reference::named("apps", "Deployment", Some("default"), "edge"),
            )
            .expect_status_patch(status_patch(json!({
                "observedGeneration": 1,
                "conditions": [
                    condition("DeploymentReady", "False", "AlreadyExists",
                              "deployments.apps \"edge\" already exists"),
                    condition("Ready", "False", "AlreadyExists",
                              "deployments.apps \"edge\" already exists"),
                    condition("SettingsResolved", "True", "Resolved", ""),
                ],
            })))
            .expect_event(status_patched()),
        )
        .run(|env| reconciler(env.config()));
}

/// Cases approved as insta snapshots (`tests/operator/snapshots/`) instead of listed expectations: every
/// setting and field of the spec in use, and Deployments the server refuses.
#[test]
fn snapshots() {
    let mut gateway = gateway(Value::Null);
    gateway["spec"] = json!({"settings": "edge-settings", "replicas": 3,
                             "image": "registry.example.com/gateway:2.0"});
    let long_name = format!("edge{}", "-edge".repeat(12)); // 64 characters
    let mut long_named = crate::common::gateway(Value::Null);
    long_named["metadata"]["name"] = json!(long_name);
    let mut relabelled = crate::common::gateway(Value::Null);
    relabelled["spec"]["podLabels"] =
        json!({"app.kubernetes.io/instance": "canary", "team": "edge"});
    ReconcilerTests::new()
        .crd(&Gateway::crd())
        .run_as(rbac())
        .snapshots(recon_testing::snapshot!())
        .case(
            "a gateway with every setting, its own image and three replicas",
            reconcile_edge()
                .given(&gateway)
                .given(&config_map(json!({
                    "listen": "0.0.0.0:9090",
                    "upstream": "https://api.internal/v1",
                    "timeout": "750ms",
                })))
                .snapshot(),
        )
        .case(
            "a gateway whose name is too long for a label value gets its refusal reflected",
            TestCase::reconcile(Request::namespaced("default", &long_name))
                .given(&long_named)
                .given(&config_map(settings_v1()))
                .snapshot(),
        )
        .case(
            "pod labels that change a selector label get the refusal of a deployment whose \
             selector does not match its template reflected",
            reconcile_edge()
                .given(&relabelled)
                .given(&config_map(settings_v1()))
                .snapshot(),
        )
        .run(|env| reconciler(env.config()));
}
