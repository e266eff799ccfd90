//! From HTTP to an admission decision and back: what a webhook server does with each request,
//! whatever the resource type of the adapter behind it.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use jiff::Timestamp;
use serde_json::Value;

use super::denied::AdmissionDenied;
use super::exchange::Admission;
use super::review::{ADMISSION_API_VERSION, AdmissionRequest, AdmissionResponse, AdmissionReview};
use crate::webhook_http::{failure, json_response, refuse_unless_json_post};

/// Something that decides admission requests, such as an
/// [`AdmissionWebhookAdapter`](crate::AdmissionWebhookAdapter) of any resource type.
/// Implement it with an `async fn`; a server holding several boxes each one's future once per
/// request.
///
/// ```
/// use jiff::Timestamp;
/// use recon_core::admission::{Admission, AdmissionHandler, AdmissionRequest, AdmissionResponse};
///
/// /// Allows everything, and says so in a warning.
/// struct AllowAll;
///
/// impl AdmissionHandler for AllowAll {
///     fn name(&self) -> &str {
///         "allow-all"
///     }
///
///     fn is_mutating(&self) -> bool {
///         false
///     }
///
///     async fn handle_at(&self, admission: Admission, _now: Timestamp) -> AdmissionResponse {
///         AdmissionResponse::allow(admission.request().uid.clone())
///             .with_warning("everything is allowed")
///     }
/// }
/// # let request: AdmissionRequest = serde_json::from_value(serde_json::json!({
/// #     "uid": "u1", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
/// #     "resource": {"group": "", "version": "v1", "resource": "configmaps"},
/// #     "operation": "CREATE", "userInfo": {}})).unwrap();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let response = AllowAll.handle_at(Admission::new(request), Timestamp::now()).await;
/// assert!(response.allowed);
/// # });
/// ```
pub trait AdmissionHandler: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &str;

    /// Whether it may answer with a patch (kube-apiserver refuses a patch from a validating
    /// webhook).
    fn is_mutating(&self) -> bool;

    /// Decides the exchange `admission` with the request time fixed at `now`.
    fn handle_at(
        &self,
        admission: Admission,
        now: Timestamp,
    ) -> impl Future<Output = AdmissionResponse> + Send;
}

/// An [`AdmissionHandler`] with its future boxed, so that a server can hold handlers of
/// different types side by side.
pub(crate) trait BoxedAdmissionHandler: Send + Sync {
    fn name(&self) -> &str;

    fn handle_boxed(
        &self,
        admission: Admission,
        now: Timestamp,
    ) -> BoxFuture<'_, AdmissionResponse>;
}

impl<H: AdmissionHandler> BoxedAdmissionHandler for H {
    fn name(&self) -> &str {
        AdmissionHandler::name(self)
    }

    fn handle_boxed(
        &self,
        admission: Admission,
        now: Timestamp,
    ) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(self.handle_at(admission, now))
    }
}

/// Answers one HTTP request to a webhook: `handler` decides the `AdmissionReview` in its body.
///
/// - A review is answered `200 OK` with a review carrying the response, as kube-apiserver
///   expects. A review whose request cannot be read but has a `uid` is answered with a refusal
///   (400 `BadRequest`) naming what is wrong; a handler that panics, with a refusal (500).
/// - Anything else is answered with an HTTP error and a `Status` body: a method other than
///   `POST` (405), a body that is not `application/json` (415), not JSON, not an
///   `admission.k8s.io/v1` `AdmissionReview`, or without a request (400).
///
/// ```
/// use bytes::Bytes;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::admission::respond;
/// use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let server = recon_fake::ApiServer::new();
/// let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
/// let webhook = AdmissionWebhookAdapter::new(Config::new(server.client(), "demo"), noop);
/// let request = http::Request::post("/validate")
///     .header("content-type", "application/json")
///     .body(Bytes::from_static(b"not json"))
///     .unwrap();
/// let response = respond(&webhook, request).await;
/// assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
/// # });
/// ```
pub async fn respond(
    handler: &impl AdmissionHandler,
    request: http::Request<Bytes>,
) -> http::Response<Bytes> {
    respond_boxed(handler, request).await
}

/// [`respond`] for a handler a server holds boxed.
pub(crate) async fn respond_boxed(
    handler: &dyn BoxedAdmissionHandler,
    request: http::Request<Bytes>,
) -> http::Response<Bytes> {
    let (parts, body) = request.into_parts();
    if let Some(refused) = refuse_unless_json_post(&parts) {
        return refused;
    }
    let request = match read_request(&body) {
        Ok(request) => request,
        Err(Unreadable::Refuse { uid, why }) => {
            let refusal = AdmissionResponse::deny(uid, AdmissionDenied::bad_request(why).status());
            return ok(refusal);
        }
        Err(Unreadable::Reject(why)) => {
            return failure(http::StatusCode::BAD_REQUEST, "BadRequest", why);
        }
    };
    let uid = request.uid.clone();
    let admission = Admission::with_http_request(request, http::Request::from_parts(parts, ()));
    let decided = AssertUnwindSafe(handler.handle_boxed(admission, Timestamp::now()))
        .catch_unwind()
        .await;
    let response = decided.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        tracing::error!(webhook = handler.name(), %message, "the webhook panicked");
        let why = format!("the webhook {} panicked: {message}", handler.name());
        AdmissionResponse::deny(uid, AdmissionDenied::internal(why).status())
    });
    ok(response)
}

/// Why a body is not a request to decide.
enum Unreadable {
    /// It names a request (a uid) that cannot be read: refuse that request.
    Refuse { uid: String, why: String },
    /// It is not a review at all.
    Reject(String),
}

fn read_request(body: &[u8]) -> Result<AdmissionRequest, Unreadable> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Unreadable::Reject(format!("the body is not JSON: {e}")))?;
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    if api_version != Some(ADMISSION_API_VERSION) || kind != Some("AdmissionReview") {
        return Err(Unreadable::Reject(format!(
            "the body is not an {ADMISSION_API_VERSION} AdmissionReview (apiVersion {}, kind {})",
            api_version.unwrap_or("missing"),
            kind.unwrap_or("missing")
        )));
    }
    let Some(request) = value.get("request").filter(|r| !r.is_null()) else {
        return Err(Unreadable::Reject(
            "the AdmissionReview has no request".to_owned(),
        ));
    };
    serde_json::from_value::<AdmissionRequest>(request.clone()).map_err(|e| {
        let why = format!("the AdmissionReview's request is malformed: {e}");
        match request.get("uid").and_then(Value::as_str) {
            Some(uid) if !uid.is_empty() => Unreadable::Refuse {
                uid: uid.to_owned(),
                why,
            },
            _ => Unreadable::Reject(why),
        }
    })
}

/// `200 OK` with `response` in a review.
fn ok(response: AdmissionResponse) -> http::Response<Bytes> {
    let body = serde_json::to_vec(&AdmissionReview::of_response(response)).unwrap_or_else(|e| {
        // An AdmissionResponse always serialises; say so if it ever does not.
        format!(r#"{{"error":"cannot serialise the response: {e}"}}"#).into_bytes()
    });
    json_response(http::StatusCode::OK, body)
}
