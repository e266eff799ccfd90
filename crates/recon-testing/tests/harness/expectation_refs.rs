//! The optional parts of expectations: an event's `action`, `reportingController` and
//! `related`; a request's `fieldManager`, `force` and `dryRun`. Each is compared only when the
//! expectation names it, and `RECON_FIXTURES=overwrite` writes it only where it was named.

use std::sync::Arc;

use crate::support::assert_contains;
use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Resource, ResourceExt};
use recon_core::Request;
use recon_testing::{
    CaseStatus, EventKind, EventRef, PatchRef, PatchType, ReconcilerTestSuite, ReconcilerTests,
    Report, TestCase, TestEnv, kube_controller,
};
use serde_json::{Value, json};

struct Data {
    client: kube::Client,
    recorder: Recorder,
}

/// Force-applies `<name>-child` as manager `hider`, then says so with an event whose related
/// object is the child.
async fn reconcile(cm: Arc<ConfigMap>, data: Arc<Data>) -> Result<Action, kube::Error> {
    let namespace = cm.namespace().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(data.client.clone(), &namespace);
    let child = format!("{}-child", cm.name_any());
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": child}, "data": {"hidden": "yes"}});
    api.patch(
        &child,
        &PatchParams::apply("hider").force(),
        &Patch::Apply(&body),
    )
    .await?;
    let event = Event {
        type_: EventType::Normal,
        reason: "Hidden".into(),
        note: Some("hid it".into()),
        action: "Hiding".into(),
        secondary: Some(ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            namespace: Some(namespace),
            name: Some(child),
            ..Default::default()
        }),
    };
    data.recorder.publish(&event, &cm.object_ref(&())).await?;
    Ok(Action::await_change())
}

fn controller(env: &TestEnv) -> impl recon_testing::RootReconciler + use<> {
    let reporter = Reporter {
        controller: "hider".into(),
        instance: None,
    };
    let data = Arc::new(Data {
        client: env.client(),
        recorder: Recorder::new(env.client(), reporter),
    });
    kube_controller(env, reconcile, |_, _, _| Action::await_change(), data)
}

fn case() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "c")).given(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"}}))
}

fn applied() -> PatchRef {
    PatchRef::apply(
        "ConfigMap",
        Some("default"),
        "c-child",
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c-child"}, "data": {"hidden": "yes"}}),
    )
}

fn hidden() -> EventRef {
    EventRef::normal("Hidden", "hid it")
}

/// The mismatches of the only case of `report`, as (expectation, detail).
fn mismatches(report: &Report) -> Vec<(String, String)> {
    match &report.cases[0].status {
        CaseStatus::Failed(m) => m
            .iter()
            .map(|m| (m.expectation.clone(), m.detail.clone()))
            .collect(),
        other => panic!("the case did not fail: {other:?}"),
    }
}

#[test]
fn named_query_and_event_fields_are_compared_and_unnamed_ones_ignored() {
    ReconcilerTests::new()
        .case(
            "the manager, the force, the action, the controller and the related object",
            case()
                .expect_apply(applied().group("").field_manager("hider").force())
                .expect_event(
                    hidden()
                        .action("Hiding")
                        .reporting_controller("hider")
                        .related("ConfigMap", Some("default"), "c-child"),
                ),
        )
        .case(
            "a related object's apiVersion, and a request that is no dry run",
            case()
                .expect_apply(PatchRef {
                    dry_run: Some(false),
                    ..applied()
                })
                .expect_event(EventRef {
                    related: Some(recon_testing::RelatedRef {
                        kind: "ConfigMap".into(),
                        api_version: Some("v1".into()),
                        namespace: Some("default".into()),
                        name: "c-child".into(),
                    }),
                    ..hidden()
                }),
        )
        .case(
            "none of them named: any matches",
            case().expect_apply(applied()).expect_event(hidden()),
        )
        .case(
            "the long form still reads",
            case()
                .expect_apply(PatchRef {
                    kind: "ConfigMap".into(),
                    group: None,
                    namespace: Some("default".into()),
                    name: "c-child".into(),
                    patch_type: PatchType::Apply,
                    field_manager: Some("hider".into()),
                    force: Some(true),
                    dry_run: None,
                    patch: applied().patch,
                    exact: None,
                })
                .expect_event(EventRef {
                    type_: EventKind::Normal,
                    reason: "Hidden".into(),
                    note: Some("hid it".into()),
                    action: Some("Hiding".into()),
                    reporting_controller: None,
                    related: None,
                }),
        )
        .run(controller);
}

#[tokio::test]
async fn a_wrong_action_names_the_field_and_both_values() {
    let report = ReconcilerTests::new()
        .case(
            "hide",
            case()
                .expect_apply(applied())
                .expect_event(hidden().action("Hide").reporting_controller("hider")),
        )
        .check(controller)
        .await;
    let found = mismatches(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "expect.events[0]");
    assert_contains(
        &found[0].1,
        &[r#"-  "action": "Hide","#, r#"+  "action": "Hiding","#],
    );
    let changed = |l: &&str| l.starts_with('-') || l.starts_with('+');
    assert!(
        !found[0]
            .1
            .lines()
            .filter(changed)
            .any(|l| l.contains("reportingController")),
        "the matching controller is no difference:\n{}",
        found[0].1
    );
}

#[tokio::test]
async fn a_wrong_field_manager_force_or_dry_run_names_each_with_both_values() {
    let report = ReconcilerTests::new()
        .case(
            "applied by another manager, unforced, as a dry run",
            case()
                .expect_apply(PatchRef {
                    force: Some(false),
                    ..applied().field_manager("other").dry_run()
                })
                .expect_event(hidden()),
        )
        .check(controller)
        .await;
    let found = mismatches(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "expect.applies[0]");
    assert_contains(
        &found[0].1,
        &[
            r#"-  "fieldManager": "other","#,
            r#"+  "fieldManager": "hider","#,
            r#"-  "force": false,"#,
            r#"+  "force": true,"#,
            r#"-  "dryRun": true,"#,
            r#"+  "dryRun": false,"#,
        ],
    );
}

#[tokio::test]
async fn a_wrong_related_object_fails_on_it() {
    let report = ReconcilerTests::new()
        .case(
            "related to a secret",
            case()
                .expect_apply(applied())
                .expect_event(hidden().related("Secret", Some("default"), "c-child")),
        )
        .check(controller)
        .await;
    let found = mismatches(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "expect.events[0]");
    assert_contains(
        &found[0].1,
        &[r#"-    "kind": "Secret","#, r#"+    "kind": "ConfigMap","#],
    );
}

const SUITE: &str = r#"cases:
- name: hidden
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  expect:
    applies:
    - kind: ConfigMap
      namespace: default
      name: c-child
      type: apply
      fieldManager: hider
      force: true
      dryRun: false
      patch: {apiVersion: v1, kind: ConfigMap, metadata: {name: c-child}, data: {hidden: "yes"}}
    events:
    - type: Normal
      reason: Hidden
      note: hid it
      action: Hiding
      reportingController: hider
      related: {kind: ConfigMap, apiVersion: v1, namespace: default, name: c-child}
"#;

#[test]
fn a_yaml_suite_names_the_query_and_the_events_action() {
    ReconcilerTestSuite::from_yaml_str("refs.yaml", SUITE)
        .unwrap()
        .run(controller);
}

#[tokio::test]
async fn a_yaml_suite_with_a_wrong_action_fails_on_it() {
    let text = SUITE.replace("action: Hiding", "action: Hide");
    let report = ReconcilerTestSuite::from_yaml_str("refs.yaml", &text)
        .unwrap()
        .overwrite_fixtures(false)
        .check(controller)
        .await;
    let found = mismatches(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "expect.events[0]");
    assert_contains(
        &found[0].1,
        &[r#"-  "action": "Hide","#, r#"+  "action": "Hiding","#],
    );
}

#[test]
fn a_yaml_query_field_of_the_wrong_type_is_an_error_naming_it() {
    let text = SUITE.replace("force: true", "force: always");
    let err = ReconcilerTestSuite::from_yaml_str("refs.yaml", &text)
        .err()
        .expect("refused");
    assert_contains(&err.to_string(), &["refs.yaml", "force"]);
}

#[tokio::test]
async fn overwrite_writes_the_optional_fields_only_where_they_were_named() {
    let dir = std::env::temp_dir().join(format!("recon-expectation-refs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("refs.yaml");
    std::fs::write(
        &path,
        r#"cases:
- name: hidden
  request: {namespace: default, name: c}
  given:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
  expect:
    applies:
    - {kind: ConfigMap, namespace: default, name: c-child, type: apply, fieldManager: someone}
    events:
    - {type: Normal, reason: Hidden, action: Hide}
"#,
    )
    .unwrap();
    let suite = || ReconcilerTestSuite::from_yaml_file(&path).unwrap();
    let report = suite().overwrite_fixtures(true).check(controller).await;
    assert!(report.passed(), "{}", report.render(false));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_contains(&text, &["fieldManager: hider", "action: Hiding"]);
    for absent in ["force", "dryRun", "reportingController", "related"] {
        assert!(!text.contains(absent), "{absent:?} was written:\n{text}");
    }
    let again = suite().overwrite_fixtures(false).check(controller).await;
    assert!(again.passed(), "{}", again.render(false));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unnamed_fields_read_back_absent() {
    let event: Value = serde_json::to_value(hidden()).unwrap();
    assert_eq!(
        event,
        json!({"type": "Normal", "reason": "Hidden", "note": "hid it"})
    );
}
