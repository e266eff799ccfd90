use std::path::PathBuf;
use std::sync::Arc;

use echo_controller::{Data, Echo, RESYNC, reconcile};
use kube::CustomResourceExt;
use recon_core::{Outcome, Request};
use recon_testing::{
    EventKind, EventRef, PatchRef, PatchType, ReconcilerTestSuite, ReconcilerTests, TestCase,
    TestEnv, kube_reconcile,
};
use serde_json::{Value, json};

const UID: &str = "6a3c0f4e-0000-4000-8000-00000000e001";

fn echo(message: &str, status: Option<Value>) -> Value {
    let mut echo = json!({"apiVersion": "examples.recon.dev/v1", "kind": "Echo",
        "metadata": {"name": "hello", "namespace": "default", "uid": UID},
        "spec": {"message": message}});
    if let Some(status) = status {
        echo["status"] = status;
    }
    echo
}

/// The table's reconciler: the function and its context, as `main.rs` builds them.
fn echo_controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    kube_reconcile(env, reconcile, Arc::new(Data::new(env.client())))
}

#[test]
fn echo_table() {
    let request = || Request::namespaced("default", "hello");
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "hello-echo", "namespace": "default",
            "ownerReferences": [{"apiVersion": "examples.recon.dev/v1", "kind": "Echo",
                "name": "hello", "uid": UID, "controller": true}]},
        "data": {"message": "hi"}});
    let apply = PatchRef {
        kind: "ConfigMap".to_owned(),
        group: None,
        namespace: Some("default".to_owned()),
        name: "hello-echo".to_owned(),
        patch_type: PatchType::Apply,
        patch: Some(config_map),
        exact: None,
        ..Default::default()
    };
    ReconcilerTests::new()
        .crd(&Echo::crd())
        .case(
            "a new echo gets its config map, its status and an event",
            TestCase::reconcile(request())
                .given(&echo("hi", None))
                .expect_apply(apply.clone())
                .expect_status_patch(PatchRef {
                    kind: "Echo".to_owned(),
                    group: Some("examples.recon.dev".to_owned()),
                    namespace: Some("default".to_owned()),
                    name: "hello".to_owned(),
                    patch_type: PatchType::Merge,
                    patch: Some(json!({"status": {"echoed": "hi"}})),
                    exact: Some(r#"{"status":{"echoed":"hi"}}"#.to_owned()),
                    ..Default::default()
                })
                .expect_event(EventRef {
                    type_: EventKind::Normal,
                    reason: "Echoed".to_owned(),
                    note: Some(r#"Echoed "hi" into ConfigMap hello-echo"#.to_owned()),
                    ..Default::default()
                })
                .expect_result(Outcome::requeue_after(RESYNC)),
        )
        .case(
            "an echo already echoed applies its config map again and nothing more",
            TestCase::reconcile(request())
                .given(&echo("hi", Some(json!({"echoed": "hi"}))))
                .expect_apply(apply)
                .expect_result(Outcome::requeue_after(RESYNC)),
        )
        .case(
            "an empty message is an error and a warning",
            TestCase::reconcile(request())
                .given(&echo("  ", None))
                .expect_event(EventRef {
                    type_: EventKind::Warning,
                    reason: "EmptyMessage".to_owned(),
                    note: Some("Nothing to echo".to_owned()),
                    ..Default::default()
                })
                .expect_error("Echo hello has an empty message"),
        )
        .case(
            "a missing echo is not reconciled",
            TestCase::reconcile(request()).expect_missing(),
        )
        .run(echo_controller);
}

/// The YAML suites, one test per file, with the CRD from the Rust type (no manifest file).
#[rstest::rstest]
fn echo_suites(#[files("tests/suites/*.yaml")] path: PathBuf) {
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .crd(&Echo::crd())
        .run(echo_controller);
}
