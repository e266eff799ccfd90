//! Tables run as the operator's service account under its RBAC manifest: a verb the manifest
//! lacks fails the case naming the rule, and the report says what the cases needed.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use recon_core::Request;
use recon_testing::{
    CaseStatus, OperatorRbac, PatchRef, ReconcilerTests, Report, TestCase, TestEnv, kube_controller,
};
use serde_json::json;

use crate::support::bare_config_map;

struct Data {
    client: kube::Client,
}

/// Labels the config map `seen: yes`.
async fn reconcile(cm: Arc<ConfigMap>, data: Arc<Data>) -> Result<Action, kube::Error> {
    let namespace = cm.metadata.namespace.as_deref().unwrap_or("default");
    let api: Api<ConfigMap> = Api::namespaced(data.client.clone(), namespace);
    let name = cm.metadata.name.as_deref().unwrap_or_default();
    let label = json!({"metadata": {"labels": {"seen": "yes"}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&label))
        .await?;
    Ok(Action::await_change())
}

fn controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    let data = Arc::new(Data {
        client: env.client(),
    });
    kube_controller(env, reconcile, |_, _, _| Action::await_change(), data)
}

/// The operator's manifest: a ClusterRole with `verbs` on config maps, bound to
/// `ops/operator`.
fn rbac(verbs: &[&str]) -> OperatorRbac {
    let manifest = format!(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: operator}}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: {verbs:?}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: operator}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator}}
subjects:
- {{kind: ServiceAccount, name: operator, namespace: ops}}
"#
    );
    OperatorRbac::service_account("ops", "operator")
        .manifest_yaml(&manifest, "rbac.yaml")
        .unwrap()
}

fn case() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "c"))
        .given(&bare_config_map())
        .expect_patch(PatchRef::merge(
            "ConfigMap",
            Some("default"),
            "c",
            json!({"metadata": {"labels": {"seen": "yes"}}}),
        ))
}

async fn run(rbac: OperatorRbac, case: TestCase) -> Report {
    ReconcilerTests::new()
        .run_as(rbac)
        .case("labels the config map", case)
        .check(controller)
        .await
}

#[tokio::test]
async fn a_manifest_granting_what_the_controller_does_passes() {
    let report = run(rbac(&["patch"]), case()).await;
    assert!(report.passed(), "{}", report.render(false));
}

#[tokio::test]
async fn a_missing_verb_fails_the_case_naming_the_rule() {
    let report = run(
        rbac(&["get", "list", "watch"]),
        case().expect_error("forbidden"),
    )
    .await;
    let CaseStatus::Failed(mismatches) = &report.cases[0].status else {
        panic!("the case passed without `patch`");
    };
    let rbac_mismatch = mismatches
        .iter()
        .find(|m| m.expectation == "rbac")
        .expect("an rbac mismatch");
    assert_eq!(
        rbac_mismatch.detail,
        "PATCH /api/v1/namespaces/default/configmaps/c was forbidden to \
         system:serviceaccount:ops:operator in namespace \"default\": the manifest needs the \
         rule {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"patch\"]}"
    );
}

#[tokio::test]
async fn the_report_says_what_was_needed_and_checks_a_manifest_against_it() {
    let report = ReconcilerTests::new()
        .case("labels the config map", case())
        .check(controller)
        .await;
    assert!(report.passed(), "{}", report.render(false));
    assert_eq!(
        report.needed.to_cluster_role_yaml("operator"),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: \
         \"operator\"\nrules:\n# namespaces: default\n- apiGroups: [\"\"]\n  resources: \
         [\"configmaps\"]\n  verbs: [\"patch\"]\n"
    );
    let short = rbac(&["get"])
        .check_grants(&report.needed, false)
        .unwrap_err();
    assert!(
        short.contains("lacks rules the tests needed:\n  {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"patch\"]}\n"),
        "{short}"
    );
    rbac(&["patch", "get"])
        .check_grants(&report.needed, false)
        .unwrap();
    let wide = rbac(&["patch", "get"])
        .check_grants(&report.needed, true)
        .unwrap_err();
    assert!(
        wide.contains("grants rules no test needed:\n  {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"get\"]}\n"),
        "{wide}"
    );
}

#[test]
fn a_manifest_of_another_kind_is_refused_naming_the_document() {
    let err = OperatorRbac::service_account("ops", "operator")
        .manifest_yaml(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            "rbac.yaml",
        )
        .unwrap_err();
    assert_eq!(
        err,
        "rbac.yaml: document 1: an RBAC manifest holds Role, ClusterRole, RoleBinding, \
         ClusterRoleBinding, ServiceAccount, not \"ConfigMap\""
    );
}

#[tokio::test]
async fn one_case_may_run_under_a_manifest_of_its_own() {
    let report = ReconcilerTests::new()
        .case("as the administrator", case())
        .case(
            "as an account that may only read",
            case()
                .run_as(rbac(&["get", "list", "watch"]))
                .expect_error("forbidden"),
        )
        .case(
            "as an account that may patch",
            case().run_as(rbac(&["patch"])),
        )
        .check(controller)
        .await;
    let statuses: Vec<bool> = report
        .cases
        .iter()
        .map(|c| c.status == CaseStatus::Passed)
        .collect();
    assert_eq!(statuses, [true, false, true], "{}", report.render(false));
    let CaseStatus::Failed(mismatches) = &report.cases[1].status else {
        unreachable!("checked above");
    };
    assert!(
        mismatches
            .iter()
            .any(|m| m.expectation == "rbac" && m.detail.contains(r#"Verbs:["patch"]"#)),
        "{mismatches:?}"
    );
}
