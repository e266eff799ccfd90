//! Tables of a plain kube-rs controller (`kube_controller`): its `reconcile`, its error policy
//! and its context, as `Controller::run` takes them.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use recon_core::{Outcome, Request};
use recon_testing::{
    CaseStatus, ErrorSpec, FailureSpec, PatchRef, ReactorSpec, ReconcilerTestSuite,
    ReconcilerTests, Report, TestCase, TestEnv, kube_controller, kube_controller_async,
    kube_reconcile,
};
use serde_json::json;

use crate::support::bare_config_map;

/// The controller's error, as a kube-rs controller declares one: the API error underneath.
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("cannot label the config map: {0}")]
    Label(#[source] kube::Error),
}

struct Data {
    client: kube::Client,
}

const RETRY: Duration = Duration::from_secs(300);

/// Labels the config map `seen: yes`, then waits for a change.
async fn reconcile(cm: Arc<ConfigMap>, data: Arc<Data>) -> Result<Action, Error> {
    let namespace = cm.metadata.namespace.as_deref().unwrap_or("default");
    let api: Api<ConfigMap> = Api::namespaced(data.client.clone(), namespace);
    let name = cm.metadata.name.as_deref().unwrap_or_default();
    let label = json!({"metadata": {"labels": {"seen": "yes"}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .map_err(Error::Label)?;
    Ok(Action::await_change())
}

/// Every error is retried in five minutes.
fn error_policy(_cm: Arc<ConfigMap>, _error: &Error, _data: Arc<Data>) -> Action {
    Action::requeue(RETRY)
}

fn controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    let data = Arc::new(Data {
        client: env.client(),
    });
    kube_controller(env, reconcile, error_policy, data)
}

fn labelled() -> PatchRef {
    PatchRef::merge(
        "ConfigMap",
        Some("default"),
        "c",
        json!({"metadata": {"labels": {"seen": "yes"}}}),
    )
}

fn failing_patch() -> ReactorSpec {
    ReactorSpec::new(
        "patch",
        "configmaps",
        FailureSpec::Internal("etcd is unavailable".into()),
    )
}

fn case() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "c")).given(&bare_config_map())
}

/// The labels of the mismatches of the only case of `report`.
fn mismatches(report: &Report) -> Vec<String> {
    match &report.cases[0].status {
        CaseStatus::Failed(m) => m.iter().map(|m| m.expectation.clone()).collect(),
        other => panic!("the case did not fail: {other:?}"),
    }
}

#[test]
fn a_failed_patch_is_the_error_and_the_policys_requeue() {
    ReconcilerTests::new()
        .case(
            "a 500 on the patch is retried in 5 minutes",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error("etcd is unavailable")
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .case(
            "a labelled config map waits for a change",
            case().expect_patch(labelled()),
        )
        .run(controller);
}

#[tokio::test]
async fn an_error_expecting_another_requeue_fails_on_the_result() {
    let report = ReconcilerTests::new()
        .case(
            "retried in a minute",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error("etcd")
                .expect_result(Outcome::requeue_after(Duration::from_secs(60))),
        )
        .check(controller)
        .await;
    assert_eq!(mismatches(&report), ["expect.result"]);
    let text = report.render(false);
    assert!(text.contains("\"requeueAfter\": \"5m\""), "{text}");
}

#[tokio::test]
async fn an_error_without_the_requeue_fails_when_the_policy_requeues() {
    let report = ReconcilerTests::new()
        .case(
            "only the error",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error("etcd"),
        )
        .check(controller)
        .await;
    assert_eq!(mismatches(&report), ["expect.result"]);
}

#[tokio::test]
async fn without_an_error_policy_a_result_after_an_error_is_refused() {
    let report = ReconcilerTests::new()
        .case(
            "a requeue no policy decides",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error("etcd")
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .check(|env| {
            let data = Arc::new(Data {
                client: env.client(),
            });
            kube_reconcile(env, reconcile, data)
        })
        .await;
    assert_eq!(mismatches(&report), ["case"]);
    assert!(report.render(false).contains("without an error policy"));
}

#[test]
fn a_suite_expects_the_error_and_the_requeue() {
    ReconcilerTestSuite::from_yaml_str(
        "policy.yaml",
        r#"
cases:
- name: a 500 on the patch is retried in 5 minutes
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  reactors:
  - {verb: patch, resource: configmaps, fail: {internal: etcd is unavailable}}
  expect:
    patches:
    - {kind: ConfigMap, namespace: default, name: c, type: merge, patch: {metadata: {labels: {seen: "yes"}}}}
    error: etcd is unavailable
    result: {requeueAfter: 5m}
"#,
    )
    .unwrap()
    .run(controller);
}

#[test]
fn an_api_error_is_expected_by_code_reason_and_message_through_the_controllers_error() {
    ReconcilerTests::new()
        .case(
            "code and reason",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error(ErrorSpec::api(500, "InternalError").message("etcd"))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .case(
            "the Status message, whole",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error(ErrorSpec::exactly(
                    "Internal error occurred: etcd is unavailable",
                ))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .run(controller);
}

#[tokio::test]
async fn another_code_or_reason_fails_naming_both() {
    let report = ReconcilerTests::new()
        .case(
            "a conflict expected",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error(ErrorSpec::api(409, "Conflict"))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .check(controller)
        .await;
    assert_eq!(mismatches(&report), ["expect.error"]);
    let text = report.render(false);
    assert!(
        text.contains(
            "the error's code is 500, not 409; the error's reason is \"InternalError\", not \"Conflict\""
        ),
        "{text}"
    );
}

#[test]
fn a_suite_expects_an_api_error_by_its_fields() {
    ReconcilerTestSuite::from_yaml_str(
        "status.yaml",
        r#"
cases:
- name: a 500 on the patch
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  reactors:
  - {verb: patch, resource: configmaps, fail: {internal: etcd is unavailable}}
  expect:
    patches:
    - {kind: ConfigMap, namespace: default, name: c, type: merge, patch: {metadata: {labels: {seen: "yes"}}}}
    error: {code: 500, reason: InternalError, exactMessage: "Internal error occurred: etcd is unavailable"}
    result: {requeueAfter: 5m}
"#,
    )
    .unwrap()
    .run(controller);
    let both = "cases:\n- name: x\n  request: {name: c}\n  expect:\n    error: {message: a, exactMessage: a}\n";
    let err = ReconcilerTestSuite::from_yaml_str("both.yaml", both)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("exclude each other"), "{err}");
}

#[tokio::test]
async fn overwrite_writes_an_api_errors_status_not_its_debug_dump() {
    let dir = std::env::temp_dir().join(format!("recon-kube-controller-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("errors.yaml");
    std::fs::write(
        &path,
        r#"cases:
- name: a 500 on the patch
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  reactors:
  - {verb: patch, resource: configmaps, fail: {internal: etcd is unavailable}}
  expect: {}
"#,
    )
    .unwrap();
    let suite = || ReconcilerTestSuite::from_yaml_file(&path).unwrap();
    let report = suite().overwrite_fixtures(true).check(controller).await;
    assert!(report.passed(), "{}", report.render(false));
    let text = std::fs::read_to_string(&path).unwrap();
    for part in [
        "code: 500",
        "reason: InternalError",
        "message: \"Internal error occurred: etcd is unavailable\"",
    ] {
        assert!(text.contains(part), "{part:?} is missing from:\n{text}");
    }
    assert!(
        !text.contains("ErrorResponse") && !text.contains("Status"),
        "{text}"
    );
    let again = suite().overwrite_fixtures(false).check(controller).await;
    assert!(again.passed(), "{}", again.render(false));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_request_naming_no_object_fails_unless_the_case_expects_it_missing() {
    let report = ReconcilerTests::new()
        .case(
            "a misspelt request",
            TestCase::reconcile(Request::namespaced("default", "cc")).given(&bare_config_map()),
        )
        .check(controller)
        .await;
    assert_eq!(mismatches(&report), ["request"]);
    let text = report.render(false);
    assert!(
        text.contains("the case \"a misspelt request\" requests default/cc, which names no object"),
        "{text}"
    );

    let report = ReconcilerTests::new()
        .case("said to be missing", case().expect_missing())
        .check(controller)
        .await;
    assert_eq!(mismatches(&report), ["request"]);
    assert!(
        report
            .render(false)
            .contains("expects default/c to be missing")
    );

    ReconcilerTestSuite::from_yaml_str(
        "missing.yaml",
        "cases:\n- name: a deleted config map is not reconciled\n  request: {namespace: default, name: c}\n  expectMissing: true\n",
    )
    .unwrap()
    .run_async(controller)
    .await;
}

/// A context built as a controller's `main` builds it: by an `async fn` that reads the cluster.
async fn context_reading(client: kube::Client) -> Arc<Data> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let found = api.get_opt("c").await.ok().flatten();
    assert!(
        found.is_some(),
        "the context is built after the given objects are stored"
    );
    Arc::new(Data { client })
}

#[test]
fn a_context_built_by_an_async_fn_runs_before_the_reconcile() {
    ReconcilerTests::new()
        .case(
            "a 500 on the patch is retried in 5 minutes",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error(ErrorSpec::api(500, "InternalError"))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .case("labelled", case().expect_patch(labelled()))
        .run(|env| {
            kube_controller_async(env, reconcile, error_policy, context_reading(env.client()))
        });
}

/// An error that wraps kube's transparently, as many kube-rs controllers declare theirs.
#[derive(Debug, thiserror::Error)]
enum Transparent {
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

#[test]
fn an_api_error_is_found_through_a_transparent_wrapper() {
    async fn reconcile(cm: Arc<ConfigMap>, data: Arc<Data>) -> Result<Action, Transparent> {
        let api: Api<ConfigMap> = Api::namespaced(data.client.clone(), "default");
        let label = json!({"metadata": {"labels": {"seen": "yes"}}});
        let name = cm.metadata.name.as_deref().unwrap_or_default();
        api.patch(name, &PatchParams::default(), &Patch::Merge(&label))
            .await?;
        Ok(Action::await_change())
    }
    ReconcilerTests::new()
        .case(
            "a 500 through a transparent error",
            case()
                .reactor(failing_patch())
                .expect_patch(labelled())
                .expect_error(ErrorSpec::api(500, "InternalError").message("etcd is unavailable"))
                .expect_result(Outcome::requeue_after(RETRY)),
        )
        .run(|env| {
            let data = Arc::new(Data {
                client: env.client(),
            });
            kube_controller(
                env,
                reconcile,
                |_, _: &Transparent, _| Action::requeue(RETRY),
                data,
            )
        });
}
