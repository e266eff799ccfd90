//! The Function reconciler as tables against the in-memory API server: what it sends for a
//! new Function, for one whose children are in sync (nothing), drifted, partly unwanted, in the
//! way of a foreign object, or failing, and for one being deleted.

use crate::common::*;
use function_operator::{Function, reconciler};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResourceExt;
use recon_core::Reference;
use recon_core::Request;
use recon_fake::{RequestOrigin, Verb};
use recon_testing::{
    DeleteRef, EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests, TestCase, TestEnv,
};
use serde_json::{Value, json};

fn hello() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "hello"))
}

fn status_patch(status: Value) -> PatchRef {
    PatchRef::merge(
        "Function",
        Some("default"),
        "hello",
        json!({"status": status}),
    )
}

fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

fn created(kind: &str, name: &str) -> EventRef {
    EventRef::normal("Created", &format!("Created {kind} \"{name}\""))
}

fn deleted(kind: &str, name: &str) -> EventRef {
    EventRef::normal("Deleted", &format!("Deleted {kind} \"{name}\""))
}

/// Every child of the Function of [`spec`], as the API server stores them, with the Deployment
/// reporting `deployment_status`.
fn stored_children(case: TestCase, deployment_status: Value) -> TestCase {
    case.given(&env_config_map(json!({"GREETING": "hi"})))
        .given(&nginx())
        .given(&stored_deployment(hello_deployment(), deployment_status))
        .given(&stored_service(service(8080)))
}

/// The writes (anything but GET and LIST) the reconciler sent.
fn writes(env: &TestEnv) -> Vec<String> {
    env.server()
        .requests()
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client)
        .filter(|r| !matches!(r.verb, Verb::Get | Verb::List))
        .map(ToString::to_string)
        .collect()
}

fn no_writes(env: &TestEnv) -> Result<(), String> {
    match writes(env) {
        w if w.is_empty() => Ok(()),
        w => Err(format!("expected no writes, sent {w:#?}")),
    }
}

fn terminating(spec: Value) -> Value {
    let mut function = function(spec, hello_status(true));
    function["metadata"]["finalizers"] = json!(["example.com/other"]);
    function["metadata"]["deletionTimestamp"] =
        serde_json::to_value(Time("2024-01-01T00:00:00Z".parse().unwrap())).unwrap();
    function
}

#[test]
fn function_reconciler() {
    ReconcilerTests::new()
        .crd(&Function::crd())
        .run_as(rbac())
        .snapshots(recon_testing::snapshot!())
        .case(
            "a new function creates its children and reports the deployment progressing",
            hello()
                .given(&function(spec(), Value::Null))
                .expect_create(&env_config_map(json!({"GREETING": "hi"})))
                .expect_event(created("ConfigMap", "hello-env"))
                .expect_create(&nginx())
                .expect_event(created("ConfigMap", "hello-config-nginx"))
                .expect_create(&hello_deployment())
                .expect_event(created("Deployment", "hello"))
                .expect_create(&service(8080))
                .expect_event(created("Service", "hello"))
                .expect_status_patch(status_patch(hello_status(false)))
                .expect_event(status_patched()),
        )
        .case(
            "a function with a private image, replicas, a port and two configs (snapshot)",
            hello()
                .given(&function(
                    json!({
                        "image": "registry.example.com:5000/team/hello:1.4.2",
                        "replicas": 3,
                        "port": 9000,
                        "env": {"GREETING": "hi", "LOG_LEVEL": "debug"},
                        "configs": {
                            "nginx": {"nginx.conf": "worker_processes 2;", "mime.types": "types {}"},
                            "app": {"settings.json": "{\"feature\": true}"},
                        },
                    }),
                    Value::Null,
                ))
                .snapshot(),
        )
        .case(
            "children in sync as the server stores them (with its defaults) get no write at all",
            stored_children(hello().given(&function(spec(), hello_status(true))), available(1))
                .verify(|env, _| no_writes(env)),
        )
        .case(
            "a drifted deployment is updated, keeping what others set and the server defaulted",
            hello()
                .given(&function(spec(), hello_status(true)))
                .given(&env_config_map(json!({"GREETING": "hi"})))
                .given(&nginx())
                .given(&{
                    let mut drifted = stored_deployment(
                        deployment("docker.io/library/hello:old", 5, 8080, &["nginx"]),
                        available(1),
                    );
                    drifted["metadata"]["labels"]["team"] = "blue".into();
                    drifted["spec"]["template"]["metadata"]["annotations"] =
                        json!({"kubectl.kubernetes.io/restartedAt": "2023-12-31T00:00:00Z"});
                    drifted
                })
                .given(&stored_service(service(8080)))
                .expect_update(&{
                    let mut fixed = stored_deployment(hello_deployment(), available(1));
                    fixed["metadata"]["labels"]["team"] = "blue".into();
                    fixed["spec"]["template"]["metadata"]["annotations"] =
                        json!({"kubectl.kubernetes.io/restartedAt": "2023-12-31T00:00:00Z"});
                    fixed
                })
                .expect_event(EventRef::normal("Updated", "Updated Deployment \"hello\""))
                // The new generation is not observed yet: the Deployment is progressing again.
                .expect_status_patch(status_patch(json!({"conditions": conditions(false)})))
                .expect_event(status_patched()),
        )
        .case(
            "a config key removed from the spec deletes its config map and unmounts it",
            hello()
                .given(&at_generation(
                    function(spec(), {
                        let mut status = hello_status(true);
                        status["configMaps"]["old"] = "hello-config-old".into();
                        status
                    }),
                    2,
                ))
                .given(&env_config_map(json!({"GREETING": "hi"})))
                .given(&nginx())
                .given(&config_map("old", json!({"old.conf": "x"})))
                .given(&stored_deployment(
                    deployment("docker.io/library/hello:latest", 1, 8080, &["nginx", "old"]),
                    available(1),
                ))
                .given(&stored_service(service(8080)))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "hello-config-old"))
                .expect_event(deleted("ConfigMap", "hello-config-old"))
                .expect_update(&stored_deployment(hello_deployment(), available(1)))
                .expect_event(EventRef::normal("Updated", "Updated Deployment \"hello\""))
                .expect_status_patch(status_patch(json!({
                    "observedGeneration": 2,
                    "conditions": conditions(false),
                    "configMaps": {"old": null},
                })))
                .expect_event(status_patched()),
        )
        .case(
            "an available deployment makes the function ready",
            stored_children(
                hello().given(&function(spec(), hello_status(false))),
                available(1),
            )
            .expect_status_patch(status_patch(json!({
                "conditions": conditions(true),
                "availableReplicas": 1,
            })))
            .expect_event(status_patched()),
        )
        .case(
            "a deployment whose new pods are not available yet keeps the function progressing",
            stored_children(
                hello().given(&function(spec(), hello_status(false))),
                progressing(1),
            )
            .expect_status_patch(status_patch(json!({
                "conditions": [
                    ready("ConfigReady", "ConfigMapsReady"),
                    condition("DeploymentReady", "Unknown", "DeploymentProgressing",
                              "Deployment does not have minimum availability."),
                    ready("EnvReady", "ConfigMapReady"),
                    ready("ImageResolved", "Resolved"),
                    condition("Ready", "Unknown", "DeploymentProgressing",
                              "Deployment does not have minimum availability."),
                    ready("ServiceReady", "ServiceReady"),
                ],
            })))
            .expect_event(status_patched()),
        )
        .case(
            "a foreign service with the child's name is tracked and reported, not taken over",
            hello()
                .given(&function(spec(), Value::Null))
                .given(&env_config_map(json!({"GREETING": "hi"})))
                .given(&nginx())
                .given(&stored_deployment(hello_deployment(), available(1)))
                .given(&{
                    let mut foreign = stored_service(service(8080));
                    foreign["metadata"] = json!({"name": "hello", "namespace": "default",
                                                  "labels": {"app": "someone-else"}});
                    foreign
                })
                .expect_create(&service(8080))
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create Service \"hello\": services \"hello\" already exists",
                ))
                .expect_track(
                    Request::namespaced("default", "hello"),
                    Reference::of::<Service>(Some("default"), "hello"),
                )
                .expect_status_patch(status_patch({
                    let message = "services \"hello\" already exists, and this Function does not own it";
                    let mut status = hello_status(true);
                    status["conditions"] = json!([
                        ready("ConfigReady", "ConfigMapsReady"),
                        ready("DeploymentReady", "DeploymentAvailable"),
                        ready("EnvReady", "ConfigMapReady"),
                        ready("ImageResolved", "Resolved"),
                        condition("Ready", "False", "NotOwned", message),
                        condition("ServiceReady", "False", "NotOwned", message),
                    ]);
                    if let Some(status) = status.as_object_mut() {
                        status.remove("serviceName");
                        status.remove("url");
                    }
                    status
                }))
                .expect_event(status_patched())
                .verify(|env, _| {
                    let kept = env
                        .server()
                        .stored_as::<Service>(Some("default"), "hello")
                        .map_err(|e| e.to_string())?
                        .ok_or("the foreign service is gone")?;
                    match kept.metadata.owner_references {
                        None => Ok(()),
                        Some(owners) => Err(format!("the foreign service was adopted: {owners:?}")),
                    }
                }),
        )
        .case(
            "a failing deployment create is an error, after writing the status gathered so far",
            hello()
                .given(&function(spec(), Value::Null))
                .reactor(ReactorSpec::new(
                    "create",
                    "deployments",
                    FailureSpec::Internal("etcd is unavailable".into()),
                ))
                .expect_create(&env_config_map(json!({"GREETING": "hi"})))
                .expect_event(created("ConfigMap", "hello-env"))
                .expect_create(&nginx())
                .expect_event(created("ConfigMap", "hello-config-nginx"))
                .expect_create(&hello_deployment())
                .expect_event(EventRef::warning(
                    "CreationFailed",
                    "Failed to create Deployment \"hello\": Internal error occurred: etcd is unavailable",
                ))
                // No observedGeneration: this generation was not fully reconciled.
                .expect_status_patch(status_patch(json!({
                    "conditions": [
                        ready("ConfigReady", "ConfigMapsReady"),
                        condition("DeploymentReady", "Unknown", "Initializing", ""),
                        ready("EnvReady", "ConfigMapReady"),
                        ready("ImageResolved", "Resolved"),
                        condition("Ready", "Unknown", "Initializing", ""),
                        condition("ServiceReady", "Unknown", "Initializing", ""),
                    ],
                    "resolvedImage": "docker.io/library/hello:latest",
                    "envConfigMapName": "hello-env",
                    "configMaps": {"nginx": "hello-config-nginx"},
                })))
                .expect_event(status_patched())
                .expect_error("etcd is unavailable"),
        )
        .case(
            "an image that cannot be resolved creates no deployment",
            hello()
                .given(&function(json!({"image": "Hello World"}), Value::Null))
                .expect_create(&env_config_map(Value::Null))
                .expect_event(created("ConfigMap", "hello-env"))
                .expect_create(&service(8080))
                .expect_event(created("Service", "hello"))
                .expect_status_patch(status_patch({
                    let invalid = "image \"Hello World\" is not a valid image reference: it contains whitespace";
                    json!({
                        "observedGeneration": 1,
                        "conditions": [
                            ready("ConfigReady", "ConfigMapsReady"),
                            condition("DeploymentReady", "Unknown", "NoDeployment",
                                      "the Deployment waits for a resolved image"),
                            ready("EnvReady", "ConfigMapReady"),
                            condition("ImageResolved", "False", "InvalidImage", invalid),
                            condition("Ready", "False", "InvalidImage", invalid),
                            ready("ServiceReady", "ServiceReady"),
                        ],
                        "envConfigMapName": "hello-env",
                        "serviceName": "hello",
                        "url": "http://hello.default.svc.cluster.local",
                    })
                }))
                .expect_event(status_patched()),
        )
        .case(
            "a function being deleted has its children deleted and its status left alone",
            hello()
                .given(&terminating(spec()))
                .given(&env_config_map(json!({"GREETING": "hi"})))
                .given(&nginx())
                .given(&stored_deployment(hello_deployment(), available(1)))
                .given(&stored_service(service(8080)))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "hello-env"))
                .expect_event(deleted("ConfigMap", "hello-env"))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "hello-config-nginx"))
                .expect_event(deleted("ConfigMap", "hello-config-nginx"))
                .expect_delete(DeleteRef::new("Deployment", Some("default"), "hello"))
                .expect_event(deleted("Deployment", "hello"))
                .expect_delete(DeleteRef::new("Service", Some("default"), "hello"))
                .expect_event(deleted("Service", "hello")),
        )
        .case(
            "a function that is gone is nothing to do",
            hello()
                .given(&env_config_map(json!({"GREETING": "hi"})))
                .expect_missing()
                .verify(|env, _| no_writes(env)),
        )
        .run(|env| reconciler(env.config()));
}
