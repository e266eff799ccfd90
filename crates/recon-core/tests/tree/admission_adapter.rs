//! `AdmissionWebhookAdapter`: a reconciler tree run on the object of an admission request,
//! answering allowed, refused, or allowed with a JSON Patch against the object as it was sent;
//! and `respond`, the HTTP side, which never panics and never answers ill-formed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use bytes::Bytes;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResource;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use recon_core::admission::{
    Admission, AdmissionDenied, AdmissionRequest, AdmissionResponse, Operation, respond,
};
use recon_core::{
    AdmissionWebhookAdapter, Always, Config, Error, IntoBoxed, Sequence, Stasher, SyncReconciler,
};
use recon_fake::ApiServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A valve: unlike the shared `Widget`, its size may be absent and it may be paused.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Valve",
    namespaced,
    status = "ValveStatus"
)]
struct ValveSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<i32>,
    /// A default the objects sent may lack: it must not appear in a patch by itself.
    #[serde(default)]
    paused: bool,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
struct ValveStatus {
    #[serde(default)]
    ready: bool,
}

fn config() -> Config {
    Config::new(ApiServer::new().client(), "webhook")
}

/// A valve as a client sends it: with a field `Valve` does not know (`spec.color`), without
/// `spec.paused`, and without a status.
fn sent_valve() -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Valve",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"color": "blue"},
    })
}

fn create_request(object: Value) -> AdmissionRequest {
    let valve: Valve = serde_json::from_value(object.clone()).unwrap();
    let mut request = AdmissionRequest::create(&valve).with_uid("uid-1");
    request.object = Some(object);
    request
}

/// Defaults `spec.size` to 3.
fn default_size() -> SyncReconciler<Valve> {
    SyncReconciler::<Valve>::new("DefaultSize").sync(async |_ctx, w| {
        w.spec.size.get_or_insert(3);
        Ok(())
    })
}

/// Refuses valves larger than 10.
fn at_most_ten() -> SyncReconciler<Valve> {
    SyncReconciler::<Valve>::new("AtMostTen").sync(async |_ctx, w| match w.spec.size {
        Some(size) if size > 10 => {
            Err(AdmissionDenied::invalid(format!("spec.size: {size} is more than 10")).into())
        }
        _ => Ok(()),
    })
}

fn ops(response: &AdmissionResponse) -> Value {
    serde_json::to_value(response.patch.as_ref().expect("a patch")).unwrap()
}

#[tokio::test]
async fn a_mutation_is_patched_against_the_object_as_sent() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let response = webhook.handle(create_request(sent_valve())).await;
    assert!(response.allowed);
    assert_eq!(response.uid, "uid-1");
    // Neither `paused: false` nor an empty status (defaults of the Rust type), and `color`
    // (unknown to it) is not removed.
    assert_eq!(
        ops(&response),
        json!([{"op": "add", "path": "/spec/size", "value": 3}])
    );
    let mut patched = sent_valve();
    json_patch::patch(&mut patched, &response.patch.unwrap()).unwrap();
    assert_eq!(patched["spec"], json!({"color": "blue", "size": 3}));
}

#[tokio::test]
async fn an_unchanged_object_is_allowed_without_a_patch() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let mut sent = sent_valve();
    sent["spec"]["size"] = json!(5);
    let response = webhook.handle(create_request(sent)).await;
    assert_eq!(response, AdmissionResponse::allow("uid-1"));
    let wire = serde_json::to_value(&response).unwrap();
    assert_eq!(
        wire,
        json!({"uid": "uid-1", "allowed": true}),
        "no patchType"
    );
}

#[tokio::test]
async fn a_change_to_a_default_the_object_lacks_is_patched_with_its_parents() {
    let resume = SyncReconciler::<Valve>::new("Ready").sync(async |_ctx, w| {
        w.status.get_or_insert_default().ready = true;
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), resume);
    let response = webhook.handle(create_request(sent_valve())).await;
    let mut patched = sent_valve();
    json_patch::patch(&mut patched, &response.patch.unwrap()).unwrap();
    assert_eq!(patched["status"], json!({"ready": true}));
    assert_eq!(patched["spec"], json!({"color": "blue"}));
}

#[tokio::test]
async fn an_update_is_patched_against_the_new_object() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let old: Valve = serde_json::from_value(sent_valve()).unwrap();
    let mut request = AdmissionRequest::update(&old, &old).with_uid("uid-2");
    let mut new = sent_valve();
    new["metadata"]["labels"] = json!({"a": "b"});
    request.object = Some(new.clone());
    let response = webhook.handle(request).await;
    let mut patched = new;
    json_patch::patch(&mut patched, &response.patch.unwrap()).unwrap();
    assert_eq!(patched["spec"]["size"], 3);
    assert_eq!(patched["metadata"]["labels"], json!({"a": "b"}));
}

#[tokio::test]
async fn a_step_that_refuses_gives_its_code_reason_and_message() {
    let webhook = AdmissionWebhookAdapter::new(config(), at_most_ten());
    let mut sent = sent_valve();
    sent["spec"]["size"] = json!(11);
    let response = webhook.handle(create_request(sent)).await;
    assert!(!response.allowed);
    assert_eq!(response.patch, None);
    let wire = serde_json::to_value(&response).unwrap();
    assert_eq!(
        wire,
        json!({"uid": "uid-1", "allowed": false, "status": {
            "code": 422, "reason": "Invalid", "status": "Failure",
            "message": "spec.size: 11 is more than 10",
        }})
    );
}

#[tokio::test]
async fn any_other_error_refuses_as_an_internal_error_and_nothing_is_patched() {
    let fails = SyncReconciler::<Valve>::new("Fails").sync(async |_ctx, w| {
        w.spec.size = Some(1);
        Err::<(), _>(Error::msg("the registry is unreachable"))
    });
    let webhook = AdmissionWebhookAdapter::new(config(), fails);
    let response = webhook.handle(create_request(sent_valve())).await;
    assert!(!response.allowed);
    assert_eq!(response.patch, None, "a refused request is not patched");
    let status = response.status.unwrap();
    assert_eq!(status.code, Some(500));
    assert_eq!(status.reason.as_deref(), Some("InternalError"));
    assert_eq!(
        status.message.as_deref(),
        Some("the registry is unreachable")
    );
}

#[tokio::test]
async fn a_refusal_inside_a_join_keeps_its_status() {
    let fails = SyncReconciler::<Valve>::new("Fails")
        .sync(async |_ctx, _w| Err::<(), _>(Error::msg("other")));
    let tree = Always::new([fails.boxed(), at_most_ten().boxed()]);
    let webhook = AdmissionWebhookAdapter::new(config(), tree);
    let mut sent = sent_valve();
    sent["spec"]["size"] = json!(20);
    let status = webhook.handle(create_request(sent)).await.status.unwrap();
    assert_eq!(status.code, Some(422));
}

#[tokio::test]
async fn a_status_a_step_set_is_kept_when_the_tree_fails() {
    let sets = SyncReconciler::<Valve>::new("Sets").sync(async |ctx, _w| {
        let admission = ctx.admission().expect("in a webhook");
        admission.update_response(|r| {
            r.status = Some(recon_core::admission::AdmissionStatus {
                code: Some(409),
                message: Some("taken".into()),
                ..Default::default()
            })
        });
        Err::<(), _>(Error::msg("stop"))
    });
    let webhook = AdmissionWebhookAdapter::new(config(), sets);
    let response = webhook.handle(create_request(sent_valve())).await;
    assert!(!response.allowed);
    assert_eq!(response.status.unwrap().code, Some(409));
}

#[tokio::test]
async fn a_validating_webhook_never_patches() {
    let tree = Sequence::new([default_size().boxed(), at_most_ten().boxed()]);
    let webhook = AdmissionWebhookAdapter::new(config(), tree).validating();
    assert!(!webhook.is_mutating());
    let response = webhook.handle(create_request(sent_valve())).await;
    assert_eq!(response, AdmissionResponse::allow("uid-1"));
}

#[tokio::test]
async fn a_validating_webhook_drops_a_patch_a_step_set() {
    let own = SyncReconciler::<Valve>::new("Own").sync(async |ctx, _w| {
        let patch = serde_json::from_value(json!([{"op": "remove", "path": "/spec"}]))?;
        ctx.admission()
            .expect("in a webhook")
            .update_response(|r| r.patch = Some(patch));
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), own).validating();
    let response = webhook.handle(create_request(sent_valve())).await;
    assert_eq!(response, AdmissionResponse::allow("uid-1"));
}

#[tokio::test]
async fn a_delete_judges_the_old_object_and_is_never_patched() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let record = SyncReconciler::<Valve>::new("Record").sync_with(
        Arc::clone(&seen),
        async |_ctx, seen, w| {
            *seen.lock().unwrap() = w.metadata.name.clone();
            w.spec.size = Some(1);
            Ok(())
        },
    );
    let webhook = AdmissionWebhookAdapter::new(config(), record);
    let old: Valve = serde_json::from_value(sent_valve()).unwrap();
    let response = webhook
        .handle(AdmissionRequest::delete(&old).with_uid("d"))
        .await;
    assert_eq!(response, AdmissionResponse::allow("d"));
    assert_eq!(seen.lock().unwrap().as_deref(), Some("w"));
}

#[tokio::test]
async fn an_object_of_another_kind_is_refused_before_the_tree_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = SyncReconciler::<Valve>::new("Count").sync_with(
        Arc::clone(&runs),
        async |_ctx, runs, _w| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(())
        },
    );
    let webhook = AdmissionWebhookAdapter::new(config(), counted);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap();
    let response = webhook.handle(AdmissionRequest::create(&cm)).await;
    assert!(!response.allowed);
    let status = response.status.unwrap();
    assert_eq!(status.code, Some(400));
    assert_eq!(
        status.message.as_deref(),
        Some("ValveAdmissionWebhookAdapter admits example.com/v1 Valve, not v1 ConfigMap")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_object_that_does_not_read_as_the_type_is_a_bad_request() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let mut request = create_request(sent_valve());
    request.object = Some(json!({"apiVersion": "example.com/v1", "kind": "Valve",
                                 "metadata": {"name": "w"}, "spec": {"size": "large"}}));
    let status = webhook.handle(request).await.status.unwrap();
    assert_eq!(status.code, Some(400));
    let message = status.message.unwrap();
    assert!(
        message.starts_with("the object is not a valid example.com/v1 Valve: "),
        "{message}"
    );
}

#[tokio::test]
async fn a_request_without_its_object_is_a_bad_request() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let mut request = create_request(sent_valve());
    request.object = None;
    let status = webhook.handle(request).await.status.unwrap();
    assert_eq!(status.code, Some(400));
    assert_eq!(
        status.message.as_deref(),
        Some("the Create request has no object")
    );
}

#[tokio::test]
async fn steps_read_the_request_and_shape_the_response_through_the_context() {
    const TEAM: Stasher<String> = Stasher::new("team");
    let warn = SyncReconciler::<Valve>::new("Warn").sync(async |ctx, _w| {
        let admission = ctx.admission().expect("in a webhook");
        let request = admission.request();
        if request.is_dry_run() {
            return Err(AdmissionDenied::forbidden("no dry runs here").into());
        }
        let user = request.user_info.username.clone().unwrap_or_default();
        let team = TEAM.retrieve(ctx)?;
        admission.update_response(|r| r.warnings.push(format!("{user} of {team}")));
        assert_eq!(admission.http_request().uri().path(), "/");
        assert_eq!(ctx.request().name, "w");
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), warn)
        .before_handle(|ctx, admission| {
            assert_eq!(admission.request().operation, Operation::Create);
            TEAM.store(ctx, "platform".to_owned());
        })
        .after_handle(|_ctx, admission| {
            admission.update_response(|r| {
                let decision = if r.allowed { "allowed" } else { "denied" };
                r.audit_annotations
                    .insert("decision".into(), decision.into());
            });
        });
    let response = webhook
        .handle(create_request(sent_valve()).by_user("alice"))
        .await;
    assert!(response.allowed);
    assert_eq!(response.warnings, ["alice of platform"]);
    assert_eq!(response.audit_annotations["decision"], "allowed");

    let dry = webhook.handle(create_request(sent_valve()).dry_run()).await;
    assert_eq!(dry.status.unwrap().code, Some(403));
    assert_eq!(dry.audit_annotations["decision"], "denied");
}

#[tokio::test]
async fn a_patch_a_step_set_is_kept() {
    let own = SyncReconciler::<Valve>::new("Own").sync(async |ctx, w| {
        w.spec.size = Some(9);
        let patch = serde_json::from_value(json!([
            {"op": "add", "path": "/metadata/labels", "value": {"own": "yes"}}
        ]))?;
        ctx.admission()
            .expect("in a webhook")
            .update_response(|r| r.patch = Some(patch));
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), own);
    let response = webhook.handle(create_request(sent_valve())).await;
    assert_eq!(
        ops(&response),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"own": "yes"}}])
    );
}

#[tokio::test]
async fn a_dynamic_object_webhook_checks_the_kind_of_its_api_resource() {
    let valves = ApiResource::from_gvk(&GroupVersionKind::gvk("example.com", "v1", "Valve"));
    let label = SyncReconciler::<DynamicObject>::new("Label").sync(async |_ctx, obj| {
        obj.metadata
            .labels
            .get_or_insert_default()
            .insert("seen".into(), "yes".into());
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new_with(config(), valves, label);
    assert_eq!(webhook.name(), "ValveAdmissionWebhookAdapter");
    let response = webhook.handle(create_request(sent_valve())).await;
    assert_eq!(
        ops(&response),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"seen": "yes"}}])
    );
}

#[tokio::test]
async fn handle_at_pins_the_request_time() {
    let at = "2024-05-01T10:00:00Z".parse().unwrap();
    let check = SyncReconciler::<Valve>::new("Time").sync(async |ctx, _w| {
        assert_eq!(ctx.now().to_string(), "2024-05-01T10:00:00Z");
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), check);
    let response = webhook
        .handle_at(Admission::new(create_request(sent_valve())), at)
        .await;
    assert!(response.allowed);
}

// --- the HTTP side ---

fn post(path: &str, content_type: &str, body: impl Into<Bytes>) -> http::Request<Bytes> {
    http::Request::post(path)
        .header("content-type", content_type)
        .body(body.into())
        .unwrap()
}

fn body_json(response: &http::Response<Bytes>) -> Value {
    serde_json::from_slice(response.body()).unwrap()
}

fn review_body(request: &AdmissionRequest) -> Vec<u8> {
    serde_json::to_vec(&recon_core::admission::AdmissionReview::of_request(
        request.clone(),
    ))
    .unwrap()
}

#[tokio::test]
async fn a_review_is_answered_ok_with_a_base64_patch_on_the_wire() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let request = create_request(sent_valve());
    let response = respond(
        &webhook,
        post(
            "/mutate",
            "application/json; charset=utf-8",
            review_body(&request),
        ),
    )
    .await;
    assert_eq!(response.status(), http::StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let review = body_json(&response);
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], "uid-1");
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(review["response"]["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/spec/size", "value": 3}])
    );
}

#[tokio::test]
async fn the_http_request_reaches_the_tree() {
    let path = SyncReconciler::<Valve>::new("Path").sync(async |ctx, _w| {
        let path = ctx
            .admission()
            .map(|a| a.http_request().uri().path().to_owned());
        assert_eq!(path.as_deref(), Some("/valves/mutate"));
        Ok(())
    });
    let webhook = AdmissionWebhookAdapter::new(config(), path);
    let request = create_request(sent_valve());
    let response = respond(
        &webhook,
        post("/valves/mutate", "application/json", review_body(&request)),
    )
    .await;
    assert_eq!(body_json(&response)["response"]["allowed"], true);
}

#[tokio::test]
async fn what_is_not_a_review_is_answered_with_an_http_error_and_a_status() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let cases: [(http::Request<Bytes>, u16, &str); 6] = [
        (
            http::Request::get("/mutate").body(Bytes::new()).unwrap(),
            405,
            "/mutate takes POST, not GET",
        ),
        (
            post("/mutate", "text/plain", "{}"),
            415,
            "the body must be application/json, not text/plain",
        ),
        (
            post("/mutate", "application/json", "{not json"),
            400,
            "the body is not JSON: key must be a string at line 1 column 2",
        ),
        (
            post(
                "/mutate",
                "application/json",
                r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}"#,
            ),
            400,
            "the body is not an admission.k8s.io/v1 AdmissionReview (apiVersion admission.k8s.io/v1beta1, kind AdmissionReview)",
        ),
        (
            post(
                "/mutate",
                "application/json",
                r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
            ),
            400,
            "the AdmissionReview has no request",
        ),
        (
            post(
                "/mutate",
                "application/json",
                r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}"#,
            ),
            400,
            "the AdmissionReview's request is malformed: missing field `uid`",
        ),
    ];
    for (request, code, message) in cases {
        let response = respond(&webhook, request).await;
        assert_eq!(response.status().as_u16(), code, "{message}");
        assert_eq!(
            body_json(&response),
            json!({
                "apiVersion": "v1", "kind": "Status", "status": "Failure",
                "code": code, "reason": body_json(&response)["reason"], "message": message,
            })
        );
    }
}

#[tokio::test]
async fn a_malformed_request_with_a_uid_is_refused_in_a_well_formed_review() {
    let webhook = AdmissionWebhookAdapter::new(config(), default_size());
    let body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-9", "operation": "EXPLODE", "kind": {}, "resource": {}},
    });
    let response = respond(
        &webhook,
        post("/mutate", "application/json", body.to_string()),
    )
    .await;
    assert_eq!(response.status(), http::StatusCode::OK);
    let review = body_json(&response);
    assert_eq!(review["response"]["uid"], "u-9");
    assert_eq!(review["response"]["allowed"], false);
    assert_eq!(review["response"]["status"]["code"], 400);
    let message = review["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the AdmissionReview's request is malformed: "),
        "{message}"
    );
}

#[tokio::test]
async fn a_panicking_tree_is_refused_as_an_internal_error() {
    let panics = SyncReconciler::<Valve>::new("Panics")
        .sync(async |_ctx, _w| -> Result<(), Error> { panic!("a bug in a step") });
    let webhook = AdmissionWebhookAdapter::new(config(), panics);
    let request = create_request(sent_valve());
    let response = respond(
        &webhook,
        post("/", "application/json", review_body(&request)),
    )
    .await;
    assert_eq!(response.status(), http::StatusCode::OK);
    let review = body_json(&response);
    assert_eq!(review["response"]["allowed"], false);
    assert_eq!(review["response"]["status"]["code"], 500);
    assert_eq!(
        review["response"]["status"]["message"],
        "the webhook ValveAdmissionWebhookAdapter panicked: a bug in a step"
    );
}
