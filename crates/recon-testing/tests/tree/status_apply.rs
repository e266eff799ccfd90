//! `StatusStrategy::Apply` over several reconciles beside another status writer: the reconciler
//! owns only what it sets, so a second manager keeps changing its own condition without a
//! conflict; a field the reconciler stops setting is released; `force` takes over only what the
//! reconciler sets.

use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams};
use recon_core::{Request, ResourceReconciler, StatusStrategy, SubReconciler, SyncReconciler};
use recon_fake::ApiServer;
use serde_json::{Value, json};

use crate::task::{Task, set_message, set_phase};

const OPERATOR: &str = "task-controller";
const REPORTER: &str = "runtime-reporter";

/// The server with one task `t`, status empty.
async fn server() -> (ApiServer, Api<Task>) {
    let server = ApiServer::new();
    server.install_crd(&Task::crd()).await.unwrap();
    let api: Api<Task> = Api::namespaced(server.client(), "default");
    let task = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Task",
        "metadata": {"name": "t", "namespace": "default"}, "spec": {"size": 3},
    }))
    .unwrap();
    api.create(&Default::default(), &task).await.unwrap();
    (server, api)
}

fn operator(
    server: &ApiServer,
    force: bool,
    tree: impl SubReconciler<Task> + 'static,
) -> ResourceReconciler<Task> {
    ResourceReconciler::new(recon_core::Config::new(server.client(), OPERATOR), tree)
        .manage_status()
        .status_strategy(StatusStrategy::Apply {
            field_manager: OPERATOR.into(),
            force,
        })
}

async fn reconcile(reconciler: &ResourceReconciler<Task>, minute: u32) {
    let now = format!("2024-05-01T10:{minute:02}:00Z").parse().unwrap();
    reconciler
        .reconcile_at(&Request::namespaced("default", "t"), now)
        .await
        .expect("the reconcile succeeds");
}

/// The reporter's unforced apply of its own `Beta` condition and of `extra` status fields.
async fn reporter_applies(
    api: &Api<Task>,
    reason: &str,
    extra: Value,
) -> Result<Task, kube::Error> {
    let mut status = json!({"conditions": [{
        "type": "Beta", "status": "True", "reason": reason, "message": "",
        "lastTransitionTime": "2024-05-01T09:00:00Z",
    }]});
    if let (Some(status), Value::Object(extra)) = (status.as_object_mut(), extra) {
        status.extend(extra);
    }
    let body = json!({"apiVersion": "example.com/v1", "kind": "Task",
                      "metadata": {"name": "t"}, "status": status});
    api.patch_status("t", &PatchParams::apply(REPORTER), &Patch::Apply(&body))
        .await
}

/// The stored task as JSON.
async fn stored(api: &Api<Task>) -> Value {
    serde_json::to_value(api.get("t").await.unwrap()).unwrap()
}

/// The status field set of `manager`'s apply to `/status`.
fn owned(stored: &Value, manager: &str) -> Value {
    stored["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| {
            e["manager"] == manager && e["operation"] == "Apply" && e["subresource"] == "status"
        })
        .map(|e| e["fieldsV1"]["f:status"].clone())
        .unwrap_or(Value::Null)
}

fn owns_condition(fields: &Value, type_: &str) -> bool {
    fields["f:conditions"]
        .get(format!(r#"k:{{"type":"{type_}"}}"#))
        .is_some()
}

fn condition<'s>(stored: &'s Value, type_: &str) -> &'s Value {
    stored["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

/// Clears `status.message`.
fn clear_message() -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("ClearMessage").sync(async |_, task| {
        if let Some(status) = task.status.as_mut() {
            status.message = None;
        }
        Ok(())
    })
}

#[tokio::test]
async fn another_writer_keeps_changing_its_condition_unforced_across_reconciles() {
    let (server, api) = server().await;
    reporter_applies(&api, "Started", json!({})).await.unwrap();
    for (round, phase) in ["Pending", "Running", "Pending"].into_iter().enumerate() {
        let minute = u32::try_from(round).unwrap();
        reconcile(&operator(&server, false, set_phase(phase)), minute).await;
        let reason = format!("Step{round}");
        reporter_applies(&api, &reason, json!({}))
            .await
            .unwrap_or_else(|e| panic!("round {round}: the reporter's own apply conflicts: {e}"));

        let stored = stored(&api).await;
        assert_eq!(stored["status"]["phase"], phase, "round {round}");
        assert_eq!(
            condition(&stored, "Beta")["reason"],
            reason,
            "round {round}"
        );
        assert_eq!(
            condition(&stored, "Sized")["type"],
            "Sized",
            "round {round}"
        );
        let operator = owned(&stored, OPERATOR);
        assert!(
            !owns_condition(&operator, "Beta"),
            "round {round}: {operator}"
        );
        for type_ in ["Planned", "Ready", "Sized"] {
            assert!(
                owns_condition(&operator, type_),
                "round {round}, {type_}: {operator}"
            );
        }
        assert!(
            owns_condition(&owned(&stored, REPORTER), "Beta"),
            "round {round}"
        );
    }
}

#[tokio::test]
async fn a_field_the_reconciler_stops_setting_is_removed() {
    let (server, api) = server().await;
    reconcile(&operator(&server, false, set_message("hello")), 0).await;
    assert_eq!(stored(&api).await["status"]["message"], "hello");

    reconcile(&operator(&server, false, clear_message()), 1).await;
    let stored = stored(&api).await;
    assert!(stored["status"].get("message").is_none(), "{stored}");
    let operator = owned(&stored, OPERATOR);
    assert!(operator.get("f:message").is_none(), "released: {operator}");
    assert!(
        operator.get("f:observedGeneration").is_some(),
        "still set: {operator}"
    );
}

#[tokio::test]
async fn a_field_the_reconciler_stops_setting_stays_when_another_manager_owns_it_too() {
    let (server, api) = server().await;
    reconcile(&operator(&server, false, set_message("hello")), 0).await;
    // The same value: ownership is shared, no conflict.
    reporter_applies(&api, "Started", json!({"message": "hello"}))
        .await
        .unwrap();

    reconcile(&operator(&server, false, clear_message()), 1).await;
    let stored = stored(&api).await;
    assert_eq!(stored["status"]["message"], "hello", "{stored}");
    assert!(owned(&stored, OPERATOR).get("f:message").is_none());
    assert!(owned(&stored, REPORTER).get("f:message").is_some());
}

#[tokio::test]
async fn force_takes_over_only_what_the_reconciler_sets() {
    let (server, api) = server().await;
    reporter_applies(&api, "Started", json!({"message": "the reporter's"}))
        .await
        .unwrap();

    reconcile(&operator(&server, true, set_phase("Running")), 0).await;
    let after_phase = stored(&api).await;
    let reporter = owned(&after_phase, REPORTER);
    assert!(
        owns_condition(&reporter, "Beta") && reporter.get("f:message").is_some(),
        "{reporter}"
    );
    let operator_fields = owned(&after_phase, OPERATOR);
    assert!(
        !owns_condition(&operator_fields, "Beta"),
        "{operator_fields}"
    );
    assert!(
        operator_fields.get("f:message").is_none(),
        "{operator_fields}"
    );
    reporter_applies(&api, "StillMine", json!({"message": "the reporter's"}))
        .await
        .expect("the reporter's fields are still its own");

    reconcile(&operator(&server, true, set_message("the operator's")), 1).await;
    let after_message = stored(&api).await;
    assert_eq!(after_message["status"]["message"], "the operator's");
    let reporter = owned(&after_message, REPORTER);
    assert!(
        reporter.get("f:message").is_none(),
        "taken over: {reporter}"
    );
    assert!(
        owns_condition(&reporter, "Beta"),
        "Beta stays the reporter's: {reporter}"
    );
    assert_eq!(condition(&after_message, "Beta")["reason"], "StillMine");
}

#[tokio::test]
async fn without_force_changing_another_managers_field_is_a_conflict() {
    let (server, api) = server().await;
    reporter_applies(&api, "Started", json!({"message": "the reporter's"}))
        .await
        .unwrap();
    let err = operator(&server, false, set_message("the operator's"))
        .reconcile(&Request::namespaced("default", "t"))
        .await
        .expect_err("an unforced apply of another manager's field conflicts");
    assert!(err.to_string().contains("conflict"), "{err}");
    assert_eq!(stored(&api).await["status"]["message"], "the reporter's");
}

// ---- the scenario recorded from a real API server ---------------------------------------------

/// The scenario of `fixtures/conformance`, recorded from a real API server and replayed against
/// the in-memory one by recon-fake's conformance test. Its `reconcile` steps are what recon
/// sends; the others are the second writer's.
const SCENARIO: &str = "../../fixtures/conformance/apply/status-apply-beside-another-writer.yaml";
const REPORTS_CRD: &str = "../../fixtures/conformance/crds/reports.yaml";

/// A resource with a reconciler's status, as `fixtures/conformance/crds/reports.yaml` declares
/// it (the schema comes from that file).
#[derive(kube::CustomResource, serde::Deserialize, serde::Serialize, Clone, Debug)]
#[kube(
    group = "conformance.example.com",
    version = "v1",
    kind = "Report",
    namespaced,
    status = "ReportStatus",
    schema = "disabled"
)]
struct ReportSpec {
    size: i64,
}

#[derive(serde::Deserialize, serde::Serialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
struct ReportStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conditions: Vec<recon_core::Condition>,
}

const REPORT: recon_core::ConditionSet = recon_core::ConditionSet::living(&["Alpha"]);
recon_core::impl_conditioned_status!(ReportStatus, REPORT);

/// Sets the phase the test chose for this reconcile (`None`: stops setting it) and `Alpha`.
fn report_phase(
    phase: std::sync::Arc<std::sync::Mutex<Option<&'static str>>>,
) -> SyncReconciler<Report> {
    SyncReconciler::<Report>::new("Phase").sync_with(phase, async |ctx, phase, report| {
        let phase = *phase.lock().unwrap();
        let status = report.status.get_or_insert_default();
        let mut conditions = REPORT.manage(&mut status.conditions, ctx.now());
        match phase {
            Some("Running") => conditions.mark_true("Alpha", "Running", ""),
            Some(_) => conditions.mark_false("Alpha", "Waiting", "not started"),
            None => {}
        }
        status.phase = phase.map(str::to_owned);
        Ok(())
    })
}

/// `${api}` and `${ns}` of a scenario, here.
fn bind(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(
            s.replace("${api}", "/apis/conformance.example.com/v1")
                .replace("${ns}", "default"),
        ),
        Value::Array(items) => Value::Array(items.iter().map(bind).collect()),
        Value::Object(fields) => {
            Value::Object(fields.iter().map(|(k, v)| (k.clone(), bind(v))).collect())
        }
        other => other.clone(),
    }
}

#[tokio::test]
async fn the_recorded_scenario_holds_what_recon_sends() {
    let read = |path: &str| -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let scenario = bind(&read(SCENARIO));
    let server = ApiServer::new();
    server
        .install_crd(&serde_json::from_value(read(REPORTS_CRD)).unwrap())
        .await
        .unwrap();
    let api: Api<Report> = Api::namespaced(server.client(), "default");
    let phase = std::sync::Arc::new(std::sync::Mutex::new(None));
    let reconciler = ResourceReconciler::new(
        recon_core::Config::new(server.client(), "report-controller"),
        report_phase(phase.clone()),
    )
    .manage_status()
    .status_strategy(StatusStrategy::Apply {
        field_manager: "report-controller".into(),
        force: false,
    });

    let steps = scenario["steps"]
        .as_array()
        .expect("the scenario has steps");
    let mut reconciles = 0;
    for step in steps {
        let name = step["name"].as_str().unwrap_or_default();
        let body = &step["body"];
        if let Some(rest) = name.strip_prefix("reconcile: phase ") {
            *phase.lock().unwrap() = (rest != "unset").then(|| match rest {
                "Pending" => "Pending",
                "Running" => "Running",
                other => panic!("step {name:?}: no phase {other:?}"),
            });
            let before = server.requests().len();
            let now = format!("2024-05-01T10:{reconciles:02}:00Z")
                .parse()
                .unwrap();
            reconciles += 1;
            reconciler
                .reconcile_at(&Request::namespaced("default", "r1"), now)
                .await
                .unwrap_or_else(|e| panic!("step {name:?}: {e}"));
            let sent: Vec<_> = server.requests()[before..]
                .iter()
                .filter(|r| r.method == "PATCH" && r.subresource.as_deref() == Some("status"))
                .cloned()
                .collect();
            let [apply] = &sent[..] else {
                panic!(
                    "step {name:?}: recon sent {} status writes, not one",
                    sent.len()
                );
            };
            let actual = (
                apply.path.as_str(),
                apply.query_param("fieldManager"),
                apply.content_type.as_deref(),
                apply.body_json().unwrap_or_default(),
            );
            let recorded = (
                step["path"].as_str().unwrap_or_default(),
                step["query"]["fieldManager"].as_str().map(str::to_owned),
                step["contentType"].as_str(),
                body.clone(),
            );
            assert_eq!(
                actual,
                recorded,
                "step {name:?}: recon sent (left) what the scenario did not record (right); \
                 sent body:\n{}",
                serde_saphyr::to_string(&actual.3).unwrap_or_default()
            );
        } else if step["method"] == "POST" {
            let report: Report = serde_json::from_value(body.clone()).unwrap();
            api.create(&Default::default(), &report).await.unwrap();
        } else {
            let manager = step["query"]["fieldManager"].as_str().unwrap();
            api.patch_status("r1", &PatchParams::apply(manager), &Patch::Apply(body))
                .await
                .unwrap_or_else(|e| panic!("step {name:?}: {e}"));
        }
    }
    assert_eq!(reconciles, 3, "the scenario reconciles three times");
}
