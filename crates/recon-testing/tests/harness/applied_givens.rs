//! Given objects as an earlier server-side apply by a field manager left them: a controller
//! that applies without force meets `"before-first-apply"` on a plain given object, and no
//! conflict on one given as applied by its own manager (its object and its status).

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use recon_core::Request;
use recon_testing::{
    ErrorSpec, PatchRef, PatchType, ReconcilerTestSuite, ReconcilerTests, TestCase, TestEnv,
    kube_reconcile,
};
use serde_json::{Value, json};

use crate::sprocket::Sprocket;

const MANAGER: &str = "child-controller";

/// Applies the config map's child, the kube-rs way: its own field manager, no force.
async fn apply_child(cm: Arc<ConfigMap>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
    let name = format!("{}-child", cm.metadata.name.as_deref().unwrap_or_default());
    let child = child(&name, "new");
    api.patch(&name, &PatchParams::apply(MANAGER), &Patch::Apply(&child))
        .await?;
    Ok(Action::await_change())
}

/// Applies the sprocket's status as `MANAGER`, without force.
async fn apply_status(w: Arc<Sprocket>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
    let api: Api<Sprocket> = Api::namespaced((*client).clone(), "default");
    let name = w.metadata.name.as_deref().unwrap_or_default();
    api.patch_status(
        name,
        &PatchParams::apply(MANAGER),
        &Patch::Apply(&ready_status(true)),
    )
    .await?;
    Ok(Action::await_change())
}

fn child_controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    kube_reconcile(env, apply_child, Arc::new(env.client()))
}

fn status_controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    kube_reconcile(env, apply_status, Arc::new(env.client()))
}

fn child(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

fn ready_status(ready: bool) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Sprocket",
        "metadata": {"name": "w", "namespace": "default"}, "status": {"ready": ready}})
}

fn sprocket(ready: bool) -> Value {
    let mut sprocket = ready_status(ready);
    sprocket["spec"] = json!({"size": 1});
    sprocket
}

fn child_apply() -> PatchRef {
    PatchRef {
        patch_type: PatchType::Apply,
        ..PatchRef::merge(
            "ConfigMap",
            Some("default"),
            "c-child",
            child("c-child", "new"),
        )
    }
}

fn status_apply() -> PatchRef {
    PatchRef {
        patch_type: PatchType::Apply,
        ..PatchRef::merge("Sprocket", Some("default"), "w", ready_status(true))
    }
}

fn conflict() -> ErrorSpec {
    ErrorSpec::api(409, "Conflict").message(r#"conflict with "before-first-apply""#)
}

fn parent_case() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "c"))
        .given(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default"}}))
}

/// The managedFields entries of the stored object `kind`/`name`, as (manager, operation,
/// subresource).
fn managers(env: &TestEnv, kind: &str, name: &str) -> Vec<(String, String, String)> {
    let object = env
        .server()
        .objects()
        .into_iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_default();
    let entries = object["metadata"]["managedFields"].as_array().cloned();
    entries
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (field("manager"), field("operation"), field("subresource"))
        })
        .collect()
}

#[test]
fn a_child_applied_without_force_conflicts_unless_given_as_applied_by_its_manager() {
    ReconcilerTests::new()
        .case(
            "a plain given child: its fields are before-first-apply's",
            parent_case()
                .given(&child("c-child", "old"))
                .prepare(
                    |env| match managers(env, "ConfigMap", "c-child").as_slice() {
                        [] => Ok(()),
                        other => Err(format!("a plain given object has managers: {other:?}")),
                    },
                )
                .expect_apply(child_apply())
                .expect_error(conflict()),
        )
        .case(
            "the child as applied by the controller last time",
            parent_case()
                .given_applied(&child("c-child", "old"), MANAGER)
                .prepare(|env| {
                    let found = managers(env, "ConfigMap", "c-child");
                    let applied = (MANAGER.to_owned(), "Apply".to_owned(), String::new());
                    match env.server().requests().as_slice() {
                        [] if found == [applied] => Ok(()),
                        [] => Err(format!("managedFields: {found:?}")),
                        setup => Err(format!("the setup's requests are left: {}", setup.len())),
                    }
                })
                .expect_apply(child_apply()),
        )
        .run(child_controller);
}

#[test]
fn a_status_applied_without_force_conflicts_unless_given_as_applied_by_its_manager() {
    ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "a plain given sprocket",
            TestCase::reconcile(Request::namespaced("default", "w"))
                .given(&sprocket(false))
                .expect_status_apply(status_apply())
                .expect_error(conflict()),
        )
        .case(
            "the sprocket and its status as applied by the controller",
            TestCase::reconcile(Request::namespaced("default", "w"))
                .given_applied(&sprocket(false), MANAGER)
                .prepare(|env| {
                    let found = managers(env, "Sprocket", "w");
                    let entry =
                        |sub: &str| (MANAGER.to_owned(), "Apply".to_owned(), sub.to_owned());
                    if found == [entry(""), entry("status")] {
                        Ok(())
                    } else {
                        Err(format!("managedFields: {found:?}"))
                    }
                })
                .expect_status_apply(status_apply()),
        )
        .run(status_controller);
}

#[test]
fn a_suite_gives_an_object_as_applied_by_a_manager() {
    ReconcilerTestSuite::from_yaml_str(
        "applied.yaml",
        r#"
cases:
- name: the child as applied by the controller last time
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  givenApplied:
  - manager: child-controller
    object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c-child, namespace: default}, data: {k: old}}
  expect:
    applies:
    - kind: ConfigMap
      namespace: default
      name: c-child
      type: apply
      patch: {apiVersion: v1, kind: ConfigMap, metadata: {name: c-child, namespace: default}, data: {k: new}}
"#,
    )
    .unwrap()
    .run(child_controller);
}
