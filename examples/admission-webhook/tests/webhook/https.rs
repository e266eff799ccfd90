//! The acceptance test of the webhook server: the Widget webhooks served over HTTPS on
//! 127.0.0.1 with a freshly generated self-signed certificate, called over TLS with real
//! `AdmissionReview`s, and the answers read as raw JSON from the wire.

use std::sync::Arc;

use admission_webhook::{MUTATE_PATH, VALIDATE_PATH, WebhookClient, webhook_server, widget_review};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use futures::FutureExt as _;
use recon_core::admission::{
    Admission, AdmissionHandler, AdmissionResponse, RunningWebhookServer, SelfSignedCertificate,
    WebhookServer,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A server with both webhooks, and a client trusting its certificate.
struct Served {
    server: RunningWebhookServer,
    client: WebhookClient,
}

async fn serve_with(configure: impl FnOnce(WebhookServer) -> WebhookServer) -> Served {
    let cert = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap();
    let api = recon_fake::ApiServer::new();
    let server = configure(webhook_server(cert.tls_config().unwrap(), api.client()))
        .start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = WebhookClient::trusting(server.local_addr(), cert.cert_pem()).unwrap();
    Served { server, client }
}

async fn serve() -> Served {
    serve_with(|server| server).await
}

impl Served {
    /// Posts `review` to `path`: the HTTP status and the body as raw JSON.
    async fn post(&self, path: &str, review: &Value) -> (http::StatusCode, Value) {
        let response = self
            .client
            .post_json(path, review.to_string())
            .await
            .unwrap();
        let body = serde_json::from_slice(response.body()).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(response.body())
            )
        });
        (response.status(), body)
    }

    /// Shuts the server down gracefully, checking that the shutdown completes.
    async fn stop(self) {
        tokio::spawn(self.server.shutdown()).await.unwrap();
    }
}

fn widget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "uid": "6c6c1e6e-0000-4000-8000-000000000001"},
        "spec": spec,
    })
}

/// The response of a review answered 200, checked to be one.
fn response_of(status: http::StatusCode, body: &Value, uid: &str) -> Value {
    assert_eq!(status, http::StatusCode::OK, "{body}");
    assert_eq!(body["apiVersion"], "admission.k8s.io/v1", "{body}");
    assert_eq!(body["kind"], "AdmissionReview", "{body}");
    assert_eq!(body["response"]["uid"], uid, "{body}");
    body["response"].clone()
}

/// The operations of a response's base64 `patch`, decoded here from the wire JSON.
fn decoded_patch(response: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch", "{response}");
    let encoded = response["patch"]
        .as_str()
        .unwrap_or_else(|| panic!("the patch is not a string: {response}"));
    let bytes = BASE64.decode(encoded).expect("the patch is base64");
    serde_json::from_slice(&bytes).expect("the patch is JSON")
}

fn apply(object: &Value, ops: &Value) -> Value {
    let patch: json_patch::Patch = serde_json::from_value(ops.clone()).unwrap();
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    patched
}

fn keys(object: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn a_mutating_create_is_allowed_with_a_base64_json_patch() {
    let served = serve().await;
    let sent = widget("blue", json!({"team": "blue"}));
    let review = widget_review("uid-create", "CREATE", Some(sent.clone()), None);

    let (status, body) = served.post(MUTATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-create");
    assert_eq!(response["allowed"], true);
    assert!(response.get("status").is_none(), "{response}");
    let ops = decoded_patch(&response);
    assert_eq!(
        ops,
        json!([
            {"op": "add", "path": "/metadata/labels", "value": {"example.com/team": "blue"}},
            {"op": "add", "path": "/spec/size", "value": 1},
        ])
    );
    let mut expected = sent.clone();
    expected["metadata"]["labels"] = json!({"example.com/team": "blue"});
    expected["spec"]["size"] = json!(1);
    assert_eq!(apply(&sent, &ops), expected);

    // recon's reader agrees with the wire.
    let read: AdmissionResponse = serde_json::from_value(response).unwrap();
    assert_eq!(serde_json::to_value(read.patch.unwrap()).unwrap(), ops);
    served.stop().await;
}

#[tokio::test]
async fn a_mutating_update_adds_to_existing_labels_with_an_escaped_path() {
    let served = serve().await;
    let mut old = widget("green", json!({"size": 3}));
    old["metadata"]["labels"] = json!({"app": "shop"});
    let mut sent = old.clone();
    sent["spec"]["team"] = json!("green");
    let review = widget_review("uid-update", "UPDATE", Some(sent.clone()), Some(old));

    let (status, body) = served.post(MUTATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-update");
    assert_eq!(response["allowed"], true);
    let ops = decoded_patch(&response);
    assert_eq!(
        ops,
        json!([{"op": "add", "path": "/metadata/labels/example.com~1team", "value": "green"}])
    );
    let mut expected = sent.clone();
    expected["metadata"]["labels"]["example.com/team"] = json!("green");
    assert_eq!(apply(&sent, &ops), expected);
    served.stop().await;
}

#[tokio::test]
async fn a_mutation_that_changes_nothing_has_no_patch() {
    let served = serve().await;
    let mut sent = widget("done", json!({"size": 2, "team": "red"}));
    sent["metadata"]["labels"] = json!({"example.com/team": "red"});
    let review = widget_review("uid-same", "CREATE", Some(sent), None);
    let (status, body) = served.post(MUTATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-same");
    assert_eq!(keys(&response), ["allowed", "uid"], "{response}");
    served.stop().await;
}

#[tokio::test]
async fn a_refused_validation_carries_422_and_the_message() {
    let served = serve().await;
    let review = widget_review(
        "uid-huge",
        "CREATE",
        Some(widget("huge", json!({"size": 50}))),
        None,
    );
    let (status, body) = served.post(VALIDATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-huge");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 422);
    assert_eq!(response["status"]["reason"], "Invalid");
    assert_eq!(
        response["status"]["message"],
        "spec.size: Invalid value: 50: must be at most 10"
    );
    assert!(response.get("patch").is_none() && response.get("patchType").is_none());
    served.stop().await;
}

#[tokio::test]
async fn an_allowed_validation_has_no_patch_keys_at_all() {
    let served = serve().await;
    // No size: the validating tree sees the default filled in, and must not patch it.
    for (uid, spec) in [("uid-5", json!({"size": 5})), ("uid-none", json!({}))] {
        let review = widget_review(uid, "CREATE", Some(widget("ok", spec)), None);
        let (status, body) = served.post(VALIDATE_PATH, &review).await;
        let response = response_of(status, &body, uid);
        assert_eq!(response["allowed"], true);
        assert_eq!(keys(&response), ["allowed", "uid"], "{response}");
    }
    served.stop().await;
}

#[tokio::test]
async fn a_delete_carries_only_the_old_object() {
    let served = serve().await;
    let stored = widget("huge", json!({"size": 50, "team": "blue"}));
    let review = widget_review("uid-delete", "DELETE", None, Some(stored));
    assert_eq!(review["request"]["object"], Value::Null);

    // The validating webhook lets a widget too large to create be deleted.
    let (status, body) = served.post(VALIDATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-delete");
    assert_eq!(keys(&response), ["allowed", "uid"], "{response}");
    assert_eq!(response["allowed"], true);

    // The mutating webhook never patches a delete.
    let (status, body) = served.post(MUTATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-delete");
    assert_eq!(keys(&response), ["allowed", "uid"], "{response}");

    // A delete without the old object is refused.
    let bare = widget_review("uid-bare", "DELETE", None, None);
    let (status, body) = served.post(VALIDATE_PATH, &bare).await;
    let response = response_of(status, &body, "uid-bare");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 400);
    served.stop().await;
}

#[tokio::test]
async fn healthz_answers_ok() {
    let served = serve().await;
    let response = served.client.get("/healthz").await.unwrap();
    assert_eq!(response.status(), http::StatusCode::OK);
    assert_eq!(response.body(), "ok");
    served.stop().await;
}

#[tokio::test]
async fn an_unknown_path_is_404_with_a_status() {
    let served = serve().await;
    let review = widget_review("uid", "CREATE", Some(widget("w", json!({}))), None);
    let (status, body) = served.post("/mutate-everything", &review).await;
    assert_eq!(status, http::StatusCode::NOT_FOUND);
    assert_eq!(
        body,
        json!({
            "apiVersion": "v1", "kind": "Status", "status": "Failure",
            "message": "no webhook at /mutate-everything", "reason": "NotFound", "code": 404,
        })
    );
    served.stop().await;
}

#[tokio::test]
async fn a_get_on_a_webhook_is_405() {
    let served = serve().await;
    let response = served.client.get(MUTATE_PATH).await.unwrap();
    assert_eq!(response.status(), http::StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()[http::header::ALLOW], "POST");
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["code"], 405);
    served.stop().await;
}

#[tokio::test]
async fn a_body_that_is_not_json_is_400_and_not_json_content_is_415() {
    let served = serve().await;
    let response = served
        .client
        .post_json(VALIDATE_PATH, "this is not JSON")
        .await
        .unwrap();
    assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(
        (body["kind"].clone(), body["code"].clone()),
        (json!("Status"), json!(400))
    );

    let text = http::Request::post(VALIDATE_PATH)
        .header(http::header::CONTENT_TYPE, "text/plain")
        .body(Bytes::from_static(b"{}"))
        .unwrap();
    let response = served.client.send(text).await.unwrap();
    assert_eq!(response.status(), http::StatusCode::UNSUPPORTED_MEDIA_TYPE);
    served.stop().await;
}

#[tokio::test]
async fn a_review_with_a_uid_and_a_malformed_request_is_refused_in_a_200() {
    let served = serve().await;
    let mut review = widget_review("uid-bad", "CREATE", Some(widget("w", json!({}))), None);
    review["request"]["operation"] = json!("EXPLODE");
    let (status, body) = served.post(MUTATE_PATH, &review).await;
    let response = response_of(status, &body, "uid-bad");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 400);
    assert_eq!(response["status"]["reason"], "BadRequest");
    let message = response["status"]["message"].as_str().unwrap();
    assert!(message.contains("malformed"), "{message}");
    served.stop().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let served = serve_with(|server| server.max_body_size(1024)).await;
    let big = widget("big", json!({"team": "x".repeat(2048)}));
    let review = widget_review("uid-big", "CREATE", Some(big), None);
    let (status, body) = served.post(MUTATE_PATH, &review).await;
    assert_eq!(status, http::StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["code"], 413);
    // A small one still gets through.
    let small = widget_review("uid-small", "CREATE", Some(widget("s", json!({}))), None);
    let (status, _) = served.post(MUTATE_PATH, &small).await;
    assert_eq!(status, http::StatusCode::OK);
    served.stop().await;
}

#[tokio::test]
async fn an_untrusted_client_fails_the_handshake_and_the_server_carries_on() {
    let served = serve().await;
    let addr = served.server.local_addr();

    let stranger = WebhookClient::trusting_no_one(addr).unwrap();
    let err = stranger.get("/healthz").await.unwrap_err();
    assert!(err.to_string().contains("certificate"), "{err}");

    // Trusting another certificate is no better.
    let other = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap();
    let impostor_ca = WebhookClient::trusting(addr, other.cert_pem()).unwrap();
    assert!(impostor_ca.get("/healthz").await.is_err());

    // The server still serves the next request.
    assert_eq!(
        served.client.get("/healthz").await.unwrap().status(),
        http::StatusCode::OK
    );
    let review = widget_review("uid-after", "CREATE", Some(widget("w", json!({}))), None);
    let (status, body) = served.post(MUTATE_PATH, &review).await;
    assert_eq!(response_of(status, &body, "uid-after")["allowed"], true);
    served.stop().await;
}

/// A webhook that holds each request until released.
#[derive(Default)]
struct Gate {
    entered: Notify,
    release: Notify,
}

struct Gated(Arc<Gate>);

impl AdmissionHandler for Gated {
    fn name(&self) -> &str {
        "gated"
    }

    fn is_mutating(&self) -> bool {
        false
    }

    async fn handle_at(&self, admission: Admission, _now: jiff::Timestamp) -> AdmissionResponse {
        self.0.entered.notify_one();
        self.0.release.notified().await;
        AdmissionResponse::allow(admission.request().uid.clone())
    }
}

#[tokio::test]
async fn shutdown_lets_a_request_under_way_finish_then_returns() {
    let gate = Arc::new(Gate::default());
    let served = serve_with(|server| server.route("/slow", Gated(Arc::clone(&gate)))).await;
    let addr = served.server.local_addr();

    let client = served.client.clone();
    let review = widget_review("uid-slow", "CREATE", Some(widget("w", json!({}))), None);
    let in_flight =
        tokio::spawn(async move { client.post_json("/slow", review.to_string()).await });
    gate.entered.notified().await;

    // The first poll signals the stop; the request under way holds the shutdown.
    let mut shutdown = std::pin::pin!(served.server.shutdown());
    assert!(shutdown.as_mut().now_or_never().is_none());

    gate.release.notify_one();
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), http::StatusCode::OK);
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(body["response"]["uid"], "uid-slow");
    assert_eq!(body["response"]["allowed"], true);

    shutdown.await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
