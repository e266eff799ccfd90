//! `reconcile` unchanged in recon-testing tables, with its error policy and its context built
//! by its own `async fn`, as `Controller::run` would run it.

use std::time::Duration;

use bulletin_controller::{Bulletin, Context, RETRY, error_policy, reconcile};
use kube::CustomResourceExt;
use prometheus_client::registry::Registry;
use recon_core::{Outcome, Request};
use recon_testing::{
    ErrorSpec, EventRef, FailureSpec, OperatorRbac, PatchRef, ReactorSpec, ReconcilerTests,
    TestCase, kube_controller_async,
};
use serde_json::{Value, json};

const UID: &str = "0b7c7d2e-4a5f-4bb4-9c1e-2f9d8a1c3e55";

/// The `Bulletin` `news` as stored, its finalizer already on.
fn stored(spec: Value, status: Value) -> Value {
    let mut bulletin = json!({"apiVersion": "examples.recon.dev/v1", "kind": "Bulletin",
        "metadata": {"name": "news", "namespace": "default", "uid": UID,
                     "finalizers": ["bulletins.examples.recon.dev/withdraw"]},
        "spec": spec});
    if !status.is_null() {
        bulletin["status"] = status;
    }
    bulletin
}

/// The ConfigMap the controller applies, holding `data`.
fn applied_config_map(data: Value) -> Value {
    let mut config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "news-bulletin", "namespace": "default",
                     "ownerReferences": [{"apiVersion": "examples.recon.dev/v1",
                                          "kind": "Bulletin", "name": "news", "uid": UID,
                                          "controller": true}]}});
    if !data.is_null() {
        config_map["data"] = data;
    }
    config_map
}

/// A server-side apply by the controller, without force.
fn applied(kind: &str, namespace: Option<&str>, name: &str, body: Value) -> PatchRef {
    PatchRef {
        force: Some(false),
        ..PatchRef::apply(kind, namespace, name, body).field_manager("bulletin-controller")
    }
}

/// The status the controller applies.
fn applied_status(status: Value) -> Value {
    json!({"apiVersion": "examples.recon.dev/v1", "kind": "Bulletin", "status": status})
}

fn defaults() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "bulletin-defaults", "namespace": "default"},
           "data": {"audience": "staff"}})
}

/// The controller's service account and RBAC manifest (`rbac.yaml`, applied as is on a
/// cluster).
fn rbac() -> OperatorRbac {
    OperatorRbac::service_account("default", "bulletin-controller")
        .manifest_yaml_file(concat!(env!("CARGO_MANIFEST_DIR"), "/rbac.yaml"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn news() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "news")).given(&defaults())
}

/// The table runs as the controller's service account under `rbac.yaml`; the manifest grants
/// exactly what its cases needed, and the list and watch of what `main.rs` watches (the
/// Bulletins, and the ConfigMaps they own): a verb taken away fails this test, naming it.
#[tokio::test]
async fn bulletin_reconcile() {
    let posted = json!({"posted": true, "audience": "staff"});
    let report = ReconcilerTests::new()
        .crd(&Bulletin::crd())
        .run_as(rbac())
        .case(
            "a new bulletin is applied without force for the default audience, then recorded",
            news()
                .given(&stored(json!({"message": "lunch at noon"}), Value::Null))
                .expect_apply(applied(
                    "ConfigMap",
                    Some("default"),
                    "news-bulletin",
                    applied_config_map(json!({"message": "lunch at noon", "audience": "staff"})),
                ))
                .expect_status_apply(applied(
                    "Bulletin",
                    Some("default"),
                    "news",
                    applied_status(posted.clone()),
                ))
                .expect_event(
                    EventRef::normal("Posted", "Posted \"lunch at noon\"")
                        .action("Posting")
                        .reporting_controller("bulletin-controller"),
                ),
        )
        .case(
            "a posted bulletin as recorded sends its ConfigMap only",
            news()
                .given(&stored(json!({"message": "lunch at noon"}), posted.clone()))
                .expect_apply(applied(
                    "ConfigMap",
                    Some("default"),
                    "news-bulletin",
                    applied_config_map(json!({"message": "lunch at noon", "audience": "staff"})),
                )),
        )
        .case(
            "an archived bulletin empties its ConfigMap and records the archiving",
            news()
                // Its status as the controller applied it last: owned by the controller, so
                // applying it again without force meets no conflict.
                .given_applied(
                    &stored(
                        json!({"message": "lunch at noon", "archived": true}),
                        posted.clone(),
                    ),
                    "bulletin-controller",
                )
                .expect_apply(applied(
                    "ConfigMap",
                    Some("default"),
                    "news-bulletin",
                    applied_config_map(Value::Null),
                ))
                .expect_status_apply(applied(
                    "Bulletin",
                    Some("default"),
                    "news",
                    applied_status(json!({"posted": false})),
                ))
                .expect_event(EventRef::normal("Archived", "Archived").action("Archiving")),
        )
        .case(
            "a ConfigMap message another manager applied is a conflict, not taken by force",
            news()
                .given(&stored(json!({"message": "lunch at noon"}), Value::Null))
                .given_applied(
                    &json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "news-bulletin", "namespace": "default"},
                            "data": {"message": "lunch at one"}}),
                    "kubectl",
                )
                .expect_apply(applied(
                    "ConfigMap",
                    Some("default"),
                    "news-bulletin",
                    applied_config_map(json!({"message": "lunch at noon", "audience": "staff"})),
                ))
                .expect_error(ErrorSpec::api(409, "Conflict").message("conflict with \"kubectl\""))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .case(
            "a 500 on the status apply is an API error the policy retries in five minutes",
            news()
                .given(&stored(json!({"message": "lunch at noon"}), Value::Null))
                .reactor(
                    ReactorSpec::new(
                        "patch",
                        "bulletins",
                        FailureSpec::Internal("etcd is away".into()),
                    )
                    .subresource("status"),
                )
                .expect_apply(applied(
                    "ConfigMap",
                    Some("default"),
                    "news-bulletin",
                    applied_config_map(json!({"message": "lunch at noon", "audience": "staff"})),
                ))
                .expect_status_apply(applied(
                    "Bulletin",
                    Some("default"),
                    "news",
                    applied_status(posted.clone()),
                ))
                .expect_error(ErrorSpec::api(500, "InternalError").message("etcd is away"))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .case(
            "an empty message is the controller's own error, retried too",
            news()
                .given(&stored(json!({"message": "  "}), Value::Null))
                .expect_error(ErrorSpec::exactly("Bulletin news has an empty message"))
                .expect_result(Outcome::requeue_after(Duration::from_secs(300))),
        )
        .case(
            "a deleted bulletin is withdrawn, then its finalizer goes",
            news()
                .given(&{
                    let mut deleting = stored(json!({"message": "lunch at noon"}), posted);
                    deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
                    deleting
                })
                .expect_event(EventRef::normal("Withdrawn", "Withdrew news").action("Withdrawing"))
                .expect_patch(PatchRef::json(
                    "Bulletin",
                    Some("default"),
                    "news",
                    json!([{"op": "test", "path": "/metadata/finalizers/0",
                            "value": "bulletins.examples.recon.dev/withdraw"},
                           {"op": "remove", "path": "/metadata/finalizers/0"}]),
                )),
        )
        .check(|env| {
            let client = env.client();
            kube_controller_async(env, reconcile, error_policy, async move {
                let mut registry = Registry::default();
                std::sync::Arc::new(
                    Context::new(client, "default", &mut registry)
                        .await
                        .expect("the defaults are readable"),
                )
            })
        })
        .await;
    report.assert_passed();
    let mut needed = report.needed;
    needed.watch("examples.recon.dev", "bulletins");
    needed.watch("", "configmaps");
    rbac()
        .check_grants(&needed, true)
        .unwrap_or_else(|e| panic!("{e}"));
}
