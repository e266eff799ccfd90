//! The echo controller under its own RBAC manifest (`rbac.yaml`, which a cluster install
//! applies as is): its suites run as its service account (`runAs` in `tests/suites/echo.yaml`),
//! the manifest grants exactly what they needed plus the controller's watches, and taking any
//! verb away fails a test naming it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use echo_controller::{Data, Echo, reconcile};
use kube::CustomResourceExt;
use recon_testing::{
    CaseStatus, NeededRules, OperatorRbac, ReconcilerTestSuite, Report, TestEnv, kube_reconcile,
};
use serde_json::Value;

fn echo_controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    kube_reconcile(env, reconcile, Arc::new(Data::new(env.client())))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn manifest() -> OperatorRbac {
    OperatorRbac::service_account("default", "echo-controller")
        .manifest_yaml_file(root().join("rbac.yaml"))
        .unwrap()
}

async fn suite_under(rbac: OperatorRbac) -> Report {
    ReconcilerTestSuite::from_yaml_file(root().join("tests/suites/echo.yaml"))
        .unwrap()
        .crd(&Echo::crd())
        .run_as(rbac)
        .check(echo_controller)
        .await
}

/// What the suite needed, with the watches `main.rs` starts: echoes, and the config maps it
/// owns.
fn with_watches(mut needed: NeededRules) -> NeededRules {
    needed.watch("examples.recon.dev", "echos");
    needed.watch("", "configmaps");
    needed
}

#[tokio::test]
async fn the_manifest_grants_exactly_what_the_controller_needs() {
    let report = suite_under(manifest()).await;
    assert!(report.passed(), "{}", report.render(false));
    manifest()
        .check_grants(&with_watches(report.needed), true)
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn taking_any_verb_away_fails_naming_it() {
    let objects = manifest().objects().to_vec();
    let role = objects
        .iter()
        .position(|o| o["kind"] == "ClusterRole")
        .unwrap();
    let rules = objects[role]["rules"].as_array().unwrap().clone();
    for (i, rule) in rules.iter().enumerate() {
        for verb in rule["verbs"].as_array().unwrap() {
            let mut reduced = objects.clone();
            let verbs = reduced[role]["rules"][i]["verbs"].as_array_mut().unwrap();
            verbs.retain(|v| v != verb);
            let rbac = reduced.iter().fold(
                OperatorRbac::service_account("default", "echo-controller"),
                |rbac, object| rbac.manifest(object),
            );
            let named = format!("Verbs:[{verb}]");
            let report = suite_under(rbac.clone()).await;
            let refused = report.cases.iter().any(|case| {
                matches!(&case.status, CaseStatus::Failed(mismatches)
                    if mismatches.iter().any(|m| m.expectation == "rbac" && m.detail.contains(&named)))
            });
            let short = rbac
                .check_grants(&with_watches(report.needed.clone()), false)
                .err()
                .is_some_and(|e| e.contains(&named));
            assert!(
                refused || short,
                "without {verb} on {}, no test failed naming it",
                resources(rule)
            );
        }
    }
}

fn resources(rule: &Value) -> String {
    rule["resources"].to_string()
}
