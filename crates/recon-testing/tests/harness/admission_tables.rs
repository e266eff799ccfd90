//! Admission webhook tables: a webhook built here (`sprocket_webhook`) decides creates, updates
//! and deletes of sprockets; the tables check its responses (patches, refusals, warnings), the
//! writes and tracks its tree makes, the request fields the runner fills in, the wire form of
//! the response, and report every way a case can be wrong with a message that says how.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::sprocket::{Sprocket, SprocketSpec};
use crate::support::{
    assert_contains, assert_names_the_line, failure, fixture, mismatches, passes, regenerating,
};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use recon_core::admission::{
    Admission, AdmissionDenied, AdmissionHandler, AdmissionRequest, AdmissionResponse, Operation,
};
use recon_core::{
    AdmissionWebhookAdapter, Error, IntoBoxed, Reference, Request, Sequence, SyncReconciler,
};
use recon_testing::{
    AdmissionWebhookTestSuite, AdmissionWebhookTests, CaseStatus, DEFAULT_ADMISSION_UID,
    ExpectConfig, Expectations, ReconcilerTests, ResponseSpec, TestCase, TestEnv,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The resource and the webhook under test.
// ---------------------------------------------------------------------------------------------

/// The annotation an update records the previous size in.
const PREVIOUS_SIZE: &str = "example.com/previous-size";

/// Reads the request through the context: refuses dry runs, and warns who was admitted.
fn gatekeeper() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Gatekeeper").sync(async |ctx, _w| {
        let admission = ctx
            .admission()
            .ok_or_else(|| Error::msg("not run by an admission webhook"))?;
        if admission.request().is_dry_run() {
            return Err(AdmissionDenied::forbidden("dry runs are not admitted").into());
        }
        if let Some(user) = admission.request().user_info.username.clone() {
            admission
                .update_response(|response| response.warnings.push(format!("admitted for {user}")));
        }
        Ok(())
    })
}

/// Defaults a size of 0 to 1; on an update, records the previous size (read from the request's
/// `oldObject`) in an annotation.
fn defaults() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Defaults").sync(async |ctx, w| {
        if w.spec.size == 0 {
            w.spec.size = 1;
        }
        let request = ctx.admission().map(Admission::request);
        if let Some(request) = request.filter(|r| r.operation == Operation::Update) {
            let previous = request
                .old_object
                .as_ref()
                .and_then(|old| old.pointer("/spec/size"))
                .map(Value::to_string)
                .unwrap_or_default();
            w.annotations_mut()
                .insert(PREVIOUS_SIZE.to_owned(), previous);
        }
        Ok(())
    })
}

/// Refuses a negative size (`AdmissionDenied::invalid`), fails on 13 (an error of another
/// type), and panics on 666.
fn validate() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Validate").sync(async |_ctx, w| {
        let size = w.spec.size;
        assert!(size != 666, "size 666 is not a size");
        if size < 0 {
            return Err(AdmissionDenied::invalid(format!(
                "spec.size: must not be negative, got {size}"
            ))
            .into());
        }
        if size == 13 {
            return Err(Error::msg("size 13 is unlucky"));
        }
        Ok(())
    })
}

/// With the label `limits: checked`, reads (and tracks) the config map `sprocket-limits` and
/// refuses a size above its `max`.
fn limits() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Limits").sync(async |ctx, w| {
        if w.labels().get("limits").is_none_or(|v| v != "checked") {
            return Ok(());
        }
        let namespace = w.namespace();
        let found: Option<ConfigMap> = ctx
            .track_and_get(namespace.as_deref(), "sprocket-limits")
            .await?;
        let max = found
            .and_then(|cm| cm.data?.get("max")?.parse::<i32>().ok())
            .unwrap_or(i32::MAX);
        if w.spec.size > max {
            return Err(AdmissionDenied::invalid(format!("spec.size: at most {max}")).into());
        }
        Ok(())
    })
}

/// On a create of a sprocket labelled `audit: "yes"`, creates the config map `<name>-admitted`
/// saying who created it.
fn audit_record() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("AuditRecord").sync(async |ctx, w| {
        let Some(request) = ctx.admission().map(Admission::request) else {
            return Ok(());
        };
        if request.operation != Operation::Create
            || w.labels().get("audit").is_none_or(|v| v != "yes")
        {
            return Ok(());
        }
        let by = request.user_info.username.clone().unwrap_or_default();
        let namespace = w.namespace().unwrap_or_default();
        let api: Api<ConfigMap> = Api::namespaced(ctx.config().client().clone(), &namespace);
        let record: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": format!("{}-admitted", w.name_any())},
            "data": {"by": by},
        }))?;
        api.create(&PostParams::default(), &record).await?;
        Ok(())
    })
}

/// Refuses to delete a sprocket labelled `protected: "true"`.
fn protect() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Protect").sync(async |ctx, w| {
        let deleting = ctx
            .admission()
            .is_some_and(|a| a.request().operation == Operation::Delete);
        if deleting && w.labels().get("protected").is_some_and(|v| v == "true") {
            return Err(
                AdmissionDenied::forbidden(format!("{} is protected", w.name_any())).into(),
            );
        }
        Ok(())
    })
}

fn sprocket_tree() -> Sequence<Sprocket> {
    Sequence::new([
        gatekeeper().boxed(),
        protect().boxed(),
        defaults().boxed(),
        validate().boxed(),
        limits().boxed(),
        audit_record().boxed(),
    ])
}

/// The mutating webhook.
fn sprocket_webhook(env: &TestEnv) -> AdmissionWebhookAdapter<Sprocket> {
    AdmissionWebhookAdapter::new(env.config(), sprocket_tree())
}

/// The same tree as a validating webhook.
fn validating_webhook(env: &TestEnv) -> AdmissionWebhookAdapter<Sprocket> {
    AdmissionWebhookAdapter::new(env.config(), sprocket_tree()).validating()
}

// ---------------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------------

fn sprocket_json(size: i32, labels: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Sprocket",
        "metadata": {"name": "w", "namespace": "default", "labels": labels},
        "spec": {"size": size},
    })
}

fn sprocket(size: i32) -> Sprocket {
    let mut w = Sprocket::new("w", SprocketSpec { size });
    w.metadata.namespace = Some("default".into());
    w
}

fn labelled(mut w: Sprocket, key: &str, value: &str) -> Sprocket {
    w.labels_mut().insert(key.to_owned(), value.to_owned());
    w
}

/// A table with the sprocket CRD installed.
fn table() -> AdmissionWebhookTests {
    AdmissionWebhookTests::new().crd(&Sprocket::crd())
}

/// A directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A handler that records each request it is asked to decide, then lets `inner` decide it.
struct Recording<H> {
    inner: H,
    seen: Arc<Mutex<Vec<AdmissionRequest>>>,
}

impl<H: AdmissionHandler> AdmissionHandler for Recording<H> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn is_mutating(&self) -> bool {
        self.inner.is_mutating()
    }

    async fn handle_at(&self, admission: Admission, now: Timestamp) -> AdmissionResponse {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(admission.request().clone());
        }
        self.inner.handle_at(admission, now).await
    }
}

/// A handler that answers every request with `response` as it is (its uid included); a
/// mutating one unless it says it validates.
struct Answers(AdmissionResponse, bool);

impl AdmissionHandler for Answers {
    fn name(&self) -> &str {
        "answers"
    }

    fn is_mutating(&self) -> bool {
        self.1
    }

    async fn handle_at(&self, _: Admission, _: Timestamp) -> AdmissionResponse {
        self.0.clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Creates, updates, deletes.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_mutating_create_answers_with_the_patch_of_what_the_tree_changed() {
    let report = table()
        .case(
            "size 0 is defaulted to 1",
            TestCase::admit(AdmissionRequest::create(&sprocket(0))).expect_response(
                ResponseSpec::allowed()
                    .patch(json!([{"op": "replace", "path": "/spec/size", "value": 1}])),
            ),
        )
        .case(
            "a sprocket in shape is allowed unchanged",
            TestCase::admit(AdmissionRequest::create(&sprocket(3)))
                .expect_response(ResponseSpec::allowed()),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn an_update_reads_the_old_object_and_is_patched_against_the_object_sent() {
    // A field `Sprocket` does not know is left alone: the patch is computed against the JSON the
    // request carried, not against the typed sprocket.
    let mut new = sprocket_json(0, json!({}));
    new["spec"]["colour"] = json!("red");
    let report = table()
        .case(
            "an update records the previous size and defaults the new one",
            TestCase::admit_json(json!({
                "operation": "UPDATE",
                "object": new,
                "oldObject": sprocket_json(4, json!({})),
            }))
            .expect_response(ResponseSpec::allowed().patch(json!([
                {"op": "add", "path": "/metadata/annotations",
                 "value": {"example.com/previous-size": "4"}},
                {"op": "replace", "path": "/spec/size", "value": 1},
            ]))),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_delete_judges_the_old_object_and_is_never_patched() {
    let report = table()
        .case(
            "a protected sprocket is not deleted",
            TestCase::admit(AdmissionRequest::delete(&labelled(
                sprocket(2),
                "protected",
                "true",
            )))
            .expect_response(ResponseSpec::denied(
                403,
                "Forbidden",
                "w is protected",
            )),
        )
        .case(
            // The tree defaults size 0 to 1, but a delete is never patched.
            "a sprocket of size 0 is deleted without a patch",
            TestCase::admit(AdmissionRequest::delete(&sprocket(0))),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_validating_webhook_refuses_with_admission_denied_and_never_patches() {
    let report = table()
        .case(
            "a negative size is invalid",
            TestCase::admit(AdmissionRequest::create(&sprocket(-1))).expect_response(
                ResponseSpec::denied_with(
                    AdmissionDenied::invalid("spec.size: must not be negative, got -1").status(),
                ),
            ),
        )
        .case(
            "what the tree changes is dropped",
            TestCase::admit(AdmissionRequest::create(&sprocket(0))),
        )
        .check(validating_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn an_error_of_another_type_is_a_500_refusal() {
    let report = table()
        .case(
            "size 13",
            TestCase::admit(AdmissionRequest::create(&sprocket(13))).expect_response(
                ResponseSpec::denied(500, "InternalError", "size 13 is unlucky"),
            ),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_step_reads_the_request_through_the_context() {
    let report = table()
        .case(
            "a dry run is refused",
            TestCase::admit(AdmissionRequest::create(&sprocket(2)).dry_run()).expect_response(
                ResponseSpec::denied(403, "Forbidden", "dry runs are not admitted"),
            ),
        )
        .case(
            "the user is named in a warning",
            TestCase::admit(AdmissionRequest::create(&sprocket(2)).by_user("alice"))
                .expect_response(ResponseSpec::allowed().warning("admitted for alice")),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn writes_and_tracks_of_the_tree_are_expected_as_in_reconciler_tables() {
    let limits = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "sprocket-limits", "namespace": "default"},
        "data": {"max": "5"},
    });
    let tracked = Reference::of::<ConfigMap>(Some("default"), "sprocket-limits");
    let report = table()
        .case(
            "an audited create records who made it",
            TestCase::admit(
                AdmissionRequest::create(&labelled(sprocket(2), "audit", "yes")).by_user("alice"),
            )
            .expect_response(ResponseSpec::allowed().warning("admitted for alice"))
            .expect_create(&json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "w-admitted"},
                "data": {"by": "alice"},
            })),
        )
        .case(
            "a size above the limits is refused",
            TestCase::admit(AdmissionRequest::create(&labelled(
                sprocket(7),
                "limits",
                "checked",
            )))
            .given(&limits)
            .expect_track(Request::namespaced("default", "w"), tracked.clone())
            .expect_response(ResponseSpec::denied(
                422,
                "Invalid",
                "spec.size: at most 5",
            )),
        )
        .case(
            "a size within the limits is allowed",
            TestCase::admit(AdmissionRequest::create(&labelled(
                sprocket(5),
                "limits",
                "checked",
            )))
            .given(&limits)
            .expect_track(Request::namespaced("default", "w"), tracked),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
}

#[tokio::test]
async fn writes_the_case_does_not_expect_fail_it() {
    let report = table()
        .case(
            "an audited create",
            TestCase::admit(AdmissionRequest::create(&labelled(
                sprocket(2),
                "audit",
                "yes",
            ))),
        )
        .check(sprocket_webhook)
        .await;
    assert_eq!(
        mismatches(&report, "an audited create"),
        ["expect.creates[0]"]
    );
    assert_contains(
        &failure(&report),
        &["was observed but not expected", "\"w-admitted\""],
    );
}

#[tokio::test]
async fn additional_configs_are_compared_as_in_reconciler_tables() {
    let report = table()
        .case(
            "no write in the other cluster",
            TestCase::admit(AdmissionRequest::create(&sprocket(2)))
                .additional_config("other", ExpectConfig::default()),
        )
        .case(
            "a write expected in the other cluster",
            TestCase::admit(AdmissionRequest::create(&sprocket(2))).additional_config(
                "other",
                ExpectConfig {
                    expect: Expectations {
                        creates: vec![json!({"apiVersion": "v1", "kind": "ConfigMap"})],
                        ..Expectations::default()
                    },
                    ..ExpectConfig::default()
                },
            ),
        )
        .check(sprocket_webhook)
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_eq!(
        mismatches(&report, "a write expected in the other cluster"),
        ["additionalConfigs.other.expect.creates[0]"]
    );
}

// ---------------------------------------------------------------------------------------------
// The request the runner completes.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn left_out_request_fields_are_filled_in_from_the_subject_and_discovery() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let report = table()
        .case(
            "1 create",
            TestCase::admit_json(
                json!({"operation": "CREATE", "object": sprocket_json(2, json!({}))}),
            ),
        )
        .case(
            "2 delete",
            TestCase::admit_json(json!({
                "operation": "DELETE",
                "oldObject": {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "settings", "namespace": "kube-system"}},
            }))
            .expect_response(ResponseSpec::denied(
                400,
                "BadRequest",
                "SprocketAdmissionWebhookAdapter admits example.com/v1 Sprocket, not v1 ConfigMap",
            )),
        )
        .case(
            "3 given fields are kept",
            TestCase::admit_json(json!({
                "uid": "u-7",
                "operation": "CREATE",
                "name": "other-name",
                "resource": {"group": "example.com", "version": "v1", "resource": "gadgets"},
                "object": sprocket_json(2, json!({})),
            })),
        )
        .check(move |env| Recording {
            inner: sprocket_webhook(env),
            seen: record.clone(),
        })
        .await;
    passes(&report);

    let seen = seen.lock().unwrap();
    let fields = |r: &AdmissionRequest| {
        json!({"uid": r.uid, "kind": r.kind, "resource": r.resource,
               "name": r.name, "namespace": r.namespace})
    };
    assert_eq!(
        fields(&seen[0]),
        json!({
            "uid": DEFAULT_ADMISSION_UID,
            "kind": {"group": "example.com", "version": "v1", "kind": "Sprocket"},
            "resource": {"group": "example.com", "version": "v1", "resource": "sprockets"},
            "name": "w", "namespace": "default",
        })
    );
    assert_eq!(
        fields(&seen[1]),
        json!({
            "uid": DEFAULT_ADMISSION_UID,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "settings", "namespace": "kube-system",
        }),
        "a delete's subject is its oldObject; a built-in kind is found too"
    );
    assert_eq!(
        fields(&seen[2]),
        json!({
            "uid": "u-7",
            "kind": {"group": "example.com", "version": "v1", "kind": "Sprocket"},
            "resource": {"group": "example.com", "version": "v1", "resource": "gadgets"},
            "name": "other-name", "namespace": "default",
        })
    );
}

#[tokio::test]
async fn a_case_without_an_operation_fails_before_the_webhook_runs() {
    let built = AtomicBool::new(false);
    let report = table()
        .case(
            "no operation",
            TestCase::admit_json(json!({"object": sprocket_json(2, json!({}))})),
        )
        .check(|env| {
            built.store(true, Ordering::SeqCst);
            sprocket_webhook(env)
        })
        .await;
    assert!(
        !built.load(Ordering::SeqCst),
        "the webhook is not built for a case that cannot run"
    );
    assert_eq!(mismatches(&report, "no operation"), ["case"]);
    assert_contains(
        &failure(&report),
        &["case: `admissionRequest.operation` is required: CREATE, UPDATE, DELETE or CONNECT"],
    );
}

#[tokio::test]
async fn a_malformed_operation_or_field_of_the_request_is_a_case_error() {
    let report = table()
        .case(
            "a misspelt operation",
            TestCase::admit_json(
                json!({"operation": "CRAETE", "object": sprocket_json(2, json!({}))}),
            ),
        )
        .case(
            "a misspelt field",
            TestCase::admit_json(
                json!({"operation": "DELETE", "oldobject": sprocket_json(2, json!({}))}),
            ),
        )
        .check(sprocket_webhook)
        .await;
    assert_eq!(
        mismatches(&report, "a misspelt operation"),
        ["admissionRequest"]
    );
    assert_eq!(mismatches(&report, "a misspelt field"), ["case"]);
    assert_contains(
        &failure(&report),
        &[
            "admissionRequest: unknown variant `CRAETE`",
            "case: `admissionRequest` has an unknown field `oldobject`",
        ],
    );
}

#[tokio::test]
async fn an_unknown_kind_fails_the_case_naming_it() {
    let gadget = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                        "metadata": {"name": "g", "namespace": "default"}});
    let report = table()
        .case(
            "a kind the cluster does not serve",
            TestCase::admit_json(json!({"operation": "CREATE", "object": gadget})),
        )
        .case(
            "a group the cluster does not serve",
            TestCase::admit_json(json!({"operation": "CREATE", "object": {
                "apiVersion": "nowhere.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}})),
        )
        .case(
            "no object to take the kind from",
            TestCase::admit_json(json!({"operation": "CREATE"})),
        )
        .check(sprocket_webhook)
        .await;
    for case in [
        "a kind the cluster does not serve",
        "a group the cluster does not serve",
    ] {
        assert_eq!(mismatches(&report, case), ["admissionRequest"], "{case}");
    }
    assert_contains(
        &failure(&report),
        &[
            "admissionRequest: the cluster serves no kind Gadget in example.com/v1 (it knows the built-in kinds and those of the table's CRDs), so `resource` cannot be filled in: install its CRD with `crd` (or the suite's `crds`), or give `resource`",
            "admissionRequest: the cluster serves no kind Gizmo in nowhere.example.com/v1",
            "admissionRequest: `kind` is left out and there is no `object` to take it from: give one or the other",
        ],
    );
}

#[tokio::test]
async fn without_the_crd_a_sprocket_request_cannot_be_completed() {
    let report = AdmissionWebhookTests::new()
        .case(
            "no CRD",
            TestCase::admit_json(
                json!({"operation": "CREATE", "object": sprocket_json(2, json!({}))}),
            ),
        )
        .check(sprocket_webhook)
        .await;
    assert_contains(
        &failure(&report),
        &["admissionRequest: the cluster serves no kind Sprocket in example.com/v1"],
    );
}

// ---------------------------------------------------------------------------------------------
// Cases that are not admission cases, and admission fields elsewhere.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn fields_of_other_tables_are_refused_in_an_admission_case() {
    let create = || TestCase::admit(AdmissionRequest::create(&sprocket(2)));
    let report = table()
        .case(
            "a plain admission case",
            create().expect(Expectations::default()).metadata("m", &1),
        )
        .case("with a request", {
            let mut case = create();
            case.request = Some(Request::namespaced("default", "w"));
            case
        })
        .case(
            "with a resource",
            create().expect_resource(&sprocket_json(2, json!({}))),
        )
        .case("with a stash", create().stash("k", &1))
        .case(
            "with a result",
            create().expect_result(recon_core::Outcome::requeue()),
        )
        .case("with an error", create().expect_error("boom"))
        .case("without a request", TestCase::default())
        .check(sprocket_webhook)
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"with a request\" failed:\n  case: `request` belongs to reconciler cases; an admission case's object is in `admissionRequest`",
            "case \"with a resource\" failed:\n  case: `resource` belongs to sub-reconciler cases",
            "case \"with a stash\" failed:\n  case: `stashed` belongs to sub-reconciler cases",
            "case \"with a result\" failed:\n  case: `result` belongs to reconciler cases; a webhook answers with a `response`",
            "case \"with an error\" failed:\n  case: `error`: a webhook answers every request, and an error is a refusal",
            "case \"without a request\" failed:\n  case: an admission webhook case needs an `admissionRequest`",
        ],
    );
}

#[tokio::test]
async fn admission_fields_are_refused_in_a_reconciler_case() {
    let reconciler = |env: &TestEnv| {
        recon_core::ResourceReconciler::new(
            env.config(),
            SyncReconciler::<Sprocket>::new("Noop").sync(async |_, _| Ok(())),
        )
    };
    let mut with_request = TestCase::reconcile(Request::namespaced("default", "w"));
    with_request.admission_request = Some(json!({"operation": "CREATE"}));
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("with an admission request", with_request)
        .case(
            "with a response",
            TestCase::reconcile(Request::namespaced("default", "w"))
                .expect_response(ResponseSpec::allowed()),
        )
        .check(reconciler)
        .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"with an admission request\" failed:\n  case: `admissionRequest` belongs to admission webhook cases",
            "case \"with a response\" failed:\n  case: `response` belongs to admission webhook cases",
        ],
    );
}

#[tokio::test]
async fn an_expected_response_must_be_written_as_a_case_writes_it() {
    let create = || TestCase::admit(AdmissionRequest::create(&sprocket(2)));
    let report = table()
        .case(
            "with a uid",
            create().expect_response(json!({"uid": "x", "allowed": true})),
        )
        .case(
            "without allowed",
            create().expect_response(json!({"warnings": []})),
        )
        .case(
            "with a patch that is not one",
            create().expect_response(
                json!({"allowed": true, "patch": [{"op": "merge", "path": "/a"}]}),
            ),
        )
        .case(
            "in an additional config",
            create().additional_config(
                "other",
                ExpectConfig {
                    expect: Expectations {
                        response: Some(json!({"allowed": true})),
                        ..Expectations::default()
                    },
                    ..ExpectConfig::default()
                },
            ),
        )
        .check(sprocket_webhook)
        .await;
    assert_contains(
        &failure(&report),
        &[
            "case: `expect.response.uid`: leave it out; the runner checks the response's uid against the request's",
            "case: `expect.response.allowed` is required: true or false",
            "case: `expect.response.patch`: [{\"op\":\"merge\",\"path\":\"/a\"}] is not a list of RFC 6902 operations: unknown variant `merge`",
            "case: `additionalConfigs.other.expect.response`: the response is the case's",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Responses that differ from the expected one, or that kube-apiserver would refuse.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_wrong_expected_patch_fails_with_a_diff_of_the_response() {
    let report = table()
        .case(
            "size 0 is defaulted",
            TestCase::admit(AdmissionRequest::create(&sprocket(0))).expect_response(
                ResponseSpec::allowed()
                    .patch(json!([{"op": "replace", "path": "/spec/size", "value": 2}])),
            ),
        )
        .check(sprocket_webhook)
        .await;
    assert_eq!(
        mismatches(&report, "size 0 is defaulted"),
        ["expect.response"]
    );
    assert_contains(
        &failure(&report),
        &[
            "expect.response: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"value\": 2",
            "+      \"value\": 1",
        ],
    );
}

#[tokio::test]
async fn a_case_without_a_response_expects_the_request_allowed_unchanged() {
    let report = table()
        .case(
            "size 0, no response expected",
            TestCase::admit(AdmissionRequest::create(&sprocket(0))),
        )
        .case(
            "size -1, no response expected",
            TestCase::admit(AdmissionRequest::create(&sprocket(-1))),
        )
        .check(sprocket_webhook)
        .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"size -1, no response expected\" failed:",
            "-  \"allowed\": true",
            "+  \"allowed\": false,",
            "+    \"reason\": \"Invalid\",",
            "case \"size 0, no response expected\" failed:",
            "+  \"patch\": [",
            "+      \"op\": \"replace\",",
        ],
    );
}

#[tokio::test]
async fn a_validating_handler_that_patches_is_a_wire_mismatch() {
    let patch = serde_json::from_value(json!([{"op": "remove", "path": "/spec"}])).unwrap();
    let answer = AdmissionResponse::allow(DEFAULT_ADMISSION_UID).with_patch(patch);
    let report = table()
        .case(
            "a validating patch",
            TestCase::admit(AdmissionRequest::create(&sprocket(2)).with_uid(DEFAULT_ADMISSION_UID))
                .expect_response(
                    ResponseSpec::allowed().patch(json!([{"op": "remove", "path": "/spec"}])),
                ),
        )
        .check(|_| Answers(answer.clone(), false))
        .await;
    assert_eq!(
        mismatches(&report, "a validating patch"),
        ["response.patch"]
    );
    assert_contains(
        &failure(&report),
        &["validating webhook may not return response.patch"],
    );
}

#[tokio::test]
async fn a_response_to_another_request_is_a_wire_mismatch() {
    let report = table()
        .case(
            "answers for another uid",
            TestCase::admit(AdmissionRequest::create(&sprocket(2)).with_uid("u-1")),
        )
        .check(|_| Answers(AdmissionResponse::allow("u-2"), true))
        .await;
    assert_eq!(
        mismatches(&report, "answers for another uid"),
        ["response.uid"]
    );
    assert_contains(
        &failure(&report),
        &[
            "response.uid: is \"u-2\", not the request's \"u-1\": kube-apiserver refuses a response to another request",
        ],
    );
}

#[tokio::test]
async fn a_panicking_webhook_fails_unless_the_case_expects_it() {
    let report = table()
        .case(
            "panics, not expected",
            TestCase::admit(AdmissionRequest::create(&sprocket(666))),
        )
        .case(
            "panics, expected",
            TestCase::admit(AdmissionRequest::create(&sprocket(666))).should_panic(),
        )
        .case(
            "does not panic, expected to",
            TestCase::admit(AdmissionRequest::create(&sprocket(1))).should_panic(),
        )
        .check(sprocket_webhook)
        .await;
    assert_eq!(report.cases[2].name, "does not panic, expected to");
    assert_eq!(report.cases[1].status, CaseStatus::Passed);
    assert_eq!(mismatches(&report, "panics, not expected"), ["shouldPanic"]);
    assert_contains(
        &failure(&report),
        &[
            "shouldPanic: the webhook panicked: size 666 is not a size",
            "shouldPanic: the webhook did not panic",
        ],
    );
}

#[tokio::test]
async fn a_snapshot_case_hands_the_response_to_the_sink() {
    let (sink, got) = crate::support::recording_sink();
    let report = table()
        .snapshots(sink)
        .case(
            "Snapshot: defaulted",
            TestCase::admit(AdmissionRequest::create(&sprocket(0)).by_user("bob")).snapshot(),
        )
        .check(sprocket_webhook)
        .await;
    passes(&report);
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "snapshot__defaulted");
    assert_eq!(
        got[0].1,
        json!({"response": {
            "allowed": true,
            "patch": [{"op": "replace", "path": "/spec/size", "value": 1}],
            "warnings": ["admitted for bob"],
        }})
    );
}

#[test]
fn run_needs_no_runtime_and_panics_with_the_report_when_a_case_fails() {
    let passing = table().case(
        "allowed",
        TestCase::admit(AdmissionRequest::create(&sprocket(2))),
    );
    passing.run(sprocket_webhook);
    let failing = table().case(
        "refused",
        TestCase::admit(AdmissionRequest::create(&sprocket(-2))),
    );
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        failing.run(sprocket_webhook);
    }))
    .expect_err("a failing table panics");
    let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("case \"refused\" failed:") && message.contains("expect.response"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------------
// YAML suites.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_sprocket_admission_suite_passes() {
    // Follows `RECON_FIXTURES`: `cargo xtask fixtures` regenerates this suite here.
    let report = AdmissionWebhookTestSuite::from_yaml_file(fixture("admission/sprockets.yaml"))
        .unwrap()
        .check(sprocket_webhook)
        .await;
    passes(&report);
    assert_eq!(report.cases.len(), 6);
}

#[tokio::test]
async fn a_yaml_suite_with_a_wrong_patch_fails_and_overwrite_rewrites_it() {
    if regenerating() {
        return; // the suite file is being rewritten by `the_sprocket_admission_suite_passes`
    }
    let guard = TempDir(std::env::temp_dir().join(format!(
        "recon-testing-admission-overwrite-{}",
        std::process::id()
    )));
    let dir = &guard.0;
    std::fs::create_dir_all(dir.join("admission")).unwrap();
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    std::fs::copy(
        fixture("crds/sprockets.example.com.yaml"),
        dir.join("crds/sprockets.example.com.yaml"),
    )
    .unwrap();
    let text = std::fs::read_to_string(fixture("admission/sprockets.yaml")).unwrap();
    let wrong = "      - op: replace\n        path: /spec/size\n        value: 1\n";
    assert_eq!(text.matches(wrong).count(), 1, "{text}");
    let text = text.replacen(wrong, &wrong.replace("value: 1", "value: 9"), 1);
    let path = dir.join("admission/sprockets.yaml");
    std::fs::write(&path, &text).unwrap();

    let report = AdmissionWebhookTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(sprocket_webhook)
        .await;
    assert_contains(
        &failure(&report),
        &[
            "1 of 6 cases failed",
            "expect.response: differs (-expected, +actual):",
            "-      \"value\": 9",
            "+      \"value\": 1",
        ],
    );

    let report = AdmissionWebhookTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(sprocket_webhook)
        .await;
    passes(&report);
    let rewritten = std::fs::read_to_string(&path).unwrap();
    assert!(
        rewritten.starts_with("# Admission webhook suite"),
        "{rewritten}"
    );
    let file: Value = serde_saphyr::from_str(&rewritten).unwrap();
    assert_eq!(
        file.pointer("/cases/0/expect/response/patch/0/value"),
        Some(&json!(1)),
        "{rewritten}"
    );
    let original: Value = serde_saphyr::from_str(&text).unwrap();
    for (i, case) in original["cases"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            case.pointer("/expect/response").is_some(),
            file["cases"][i].pointer("/expect/response").is_some(),
            "a response is written where the case had one, and only there: case {i}\n{rewritten}"
        );
    }
}

#[test]
fn a_malformed_admission_suite_names_the_file_the_line_and_the_field() {
    let path = fixture("invalid/admission-misspelt.yaml");
    let err = AdmissionWebhookTestSuite::from_yaml_file(&path)
        .err()
        .expect("a misspelt field is an error");
    assert_names_the_line(
        &err,
        &path,
        "line 5",
        &["unknown field `admisionRequest`", "admissionRequest"],
    );
}

#[test]
fn from_yaml_str_reads_an_admission_suite_with_an_inline_crd() {
    let text = format!(
        "crds:\n  - {}\n{}",
        serde_json::to_string(&Sprocket::crd()).unwrap(),
        r#"
cases:
  - name: defaulted
    admissionRequest:
      operation: CREATE
      object: {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 0}}
    expect:
      response:
        allowed: true
        patch:
          - {op: replace, path: /spec/size, value: 1}
"#
    );
    AdmissionWebhookTestSuite::from_yaml_str("inline.yaml", &text)
        .unwrap()
        .run(sprocket_webhook);
}
