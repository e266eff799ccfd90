//! Answering kube-apiserver's `ConversionReview`s: a [`ConversionHandler`] converts a request's
//! objects, and [`respond_conversion`] is the HTTP side, for any server (the `WebhookServer`
//! routes it with the `webhook-server` feature).

use bytes::Bytes;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::hub::Conversion;
use crate::webhook_http::{failure, json_response, refuse_unless_json_post};

/// The `ConversionReview` version kube-apiserver sends (`conversionReviewVersions: ["v1"]`).
pub const CONVERSION_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// Something that converts the objects of a `ConversionReview`: a [`Conversion`] of any hub
/// type, as a server holds several behind one type.
pub trait ConversionHandler: Send + Sync {
    /// The kind it converts, for logs.
    fn kind(&self) -> &str;

    /// Converts every object of `request` to its desired version. One failure fails the whole
    /// review, as kube-apiserver reads it: `result` says why and no object comes back.
    fn answer(&self, request: ConversionRequest) -> ConversionResponse;
}

impl<H> ConversionHandler for Conversion<H> {
    fn kind(&self) -> &str {
        Conversion::kind(self)
    }

    fn answer(&self, request: ConversionRequest) -> ConversionResponse {
        let desired = request.desired_api_version.clone();
        let objects = request.objects.clone();
        let response = ConversionResponse::for_request(request);
        let converted: Result<Vec<Value>, _> = objects
            .into_iter()
            .map(|object| self.convert(object, &desired))
            .collect();
        match converted {
            Ok(objects) => response.success(objects),
            Err(err) => {
                tracing::warn!(kind = %self.kind(), error = %err, "a conversion failed");
                response
                    .failure(Status::failure(&err.to_string(), "ConversionFailed").with_code(500))
            }
        }
    }
}

/// Answers one HTTP request to a conversion webhook: `handler` converts the objects of the
/// `ConversionReview` in its body.
///
/// - A review is answered `200 OK` with a review carrying the response (the request's `uid`,
///   the converted objects or the failure), as kube-apiserver expects.
/// - Anything else is answered with an HTTP error and a `Status` body: a method other than
///   `POST` (405), a body that is not `application/json` (415), not JSON, not an
///   `apiextensions.k8s.io/v1` `ConversionReview`, or without a request (400).
///
/// ```
/// use bytes::Bytes;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::conversion::{Conversion, respond_conversion};
///
/// let conversion = Conversion::<ConfigMap>::hub();
/// let review = serde_json::json!({
///     "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
///     "request": {"uid": "u1", "desiredAPIVersion": "v1", "objects": [
///         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]}
/// });
/// let request = http::Request::post("/convert")
///     .header("content-type", "application/json")
///     .body(Bytes::from(review.to_string()))
///     .unwrap();
/// let response = respond_conversion(&conversion, request);
/// assert_eq!(response.status(), http::StatusCode::OK);
/// let answer: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
/// assert_eq!(answer["response"]["uid"], "u1");
/// assert_eq!(answer["response"]["result"]["status"], "Success");
/// ```
pub fn respond_conversion(
    handler: &dyn ConversionHandler,
    request: http::Request<Bytes>,
) -> http::Response<Bytes> {
    let (parts, body) = request.into_parts();
    if let Some(refused) = refuse_unless_json_post(&parts) {
        return refused;
    }
    let request = match read_request(&body) {
        Ok(request) => request,
        Err(why) => return failure(http::StatusCode::BAD_REQUEST, "BadRequest", why),
    };
    let review: ConversionReview = handler.answer(request).into_review();
    match serde_json::to_vec(&review) {
        Ok(body) => json_response(http::StatusCode::OK, body),
        Err(e) => failure(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("cannot write the ConversionReview: {e}"),
        ),
    }
}

fn read_request(body: &[u8]) -> Result<ConversionRequest, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    if api_version != Some(CONVERSION_API_VERSION) || kind != Some("ConversionReview") {
        return Err(format!(
            "the body is not an {CONVERSION_API_VERSION} ConversionReview (apiVersion {}, kind {})",
            api_version.unwrap_or("missing"),
            kind.unwrap_or("missing")
        ));
    }
    let review: ConversionReview = serde_json::from_value(value)
        .map_err(|e| format!("the ConversionReview is malformed: {e}"))?;
    ConversionRequest::from_review(review)
        .map_err(|_| "the ConversionReview has no request".to_owned())
}

impl<H: 'static> Conversion<H> {
    /// This conversion as a conversion webhook called in-process: a function of the body of a
    /// `ConversionReview` POST that answers as the production webhook does over HTTP, through
    /// [`respond_conversion`]. The in-memory API server
    /// (`recon_fake::ApiServer::serve_conversion`) takes it for a CRD with `strategy: Webhook`,
    /// as it takes any such function, and every read and write through another version than
    /// the storage one goes through it.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::conversion::Conversion;
    ///
    /// let conversion = Conversion::<ConfigMap>::hub();
    /// let server = recon_fake::ApiServer::new();
    /// server.serve_conversion("shapes.example.com", conversion.into_webhook());
    /// ```
    pub fn into_webhook(self) -> impl Fn(&[u8]) -> http::Response<Vec<u8>> + Send + Sync + 'static {
        move |review: &[u8]| {
            let request = http::Request::post("/convert")
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Bytes::copy_from_slice(review))
                .unwrap_or_default();
            respond_conversion(&self, request).map(|body| body.to_vec())
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    fn post(body: Value, content_type: &str) -> http::Response<Bytes> {
        let request = http::Request::post("/convert")
            .header("content-type", content_type)
            .body(Bytes::from(body.to_string()))
            .unwrap();
        respond_conversion(&Conversion::<ConfigMap>::hub(), request)
    }

    fn review(objects: Value, desired: &str) -> Value {
        json!({"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview",
            "request": {"uid": "u-9", "desiredAPIVersion": desired, "objects": objects}})
    }

    fn body(response: &http::Response<Bytes>) -> Value {
        serde_json::from_slice(response.body()).unwrap()
    }

    #[test]
    fn a_review_is_answered_with_the_request_s_uid_and_the_objects() {
        let objects = json!([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]);
        let response = post(
            review(objects.clone(), "v1"),
            "application/json; charset=utf-8",
        );
        assert_eq!(response.status(), http::StatusCode::OK);
        let answer = body(&response);
        assert_eq!(answer["apiVersion"], CONVERSION_API_VERSION);
        assert_eq!(answer["kind"], "ConversionReview");
        assert_eq!(answer["response"]["uid"], "u-9");
        assert_eq!(answer["response"]["result"]["status"], "Success");
        assert_eq!(answer["response"]["convertedObjects"], objects);
    }

    #[test]
    fn one_failed_object_fails_the_review() {
        let objects = json!([
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "d"}}
        ]);
        let answer = body(&post(review(objects, "v1"), "application/json"));
        let response = &answer["response"];
        assert_eq!(response["result"]["status"], "Failure");
        assert_eq!(
            response["result"]["message"],
            "ConfigMap has no version v2 to convert from"
        );
        assert_eq!(response["convertedObjects"], json!([]));
    }

    #[test]
    fn what_is_not_a_v1_conversion_review_is_a_bad_request() {
        let cases = [
            (
                json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview"}),
                "the body is not an apiextensions.k8s.io/v1 ConversionReview (apiVersion apiextensions.k8s.io/v1beta1, kind ConversionReview)",
            ),
            (
                json!({"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview"}),
                "the ConversionReview has no request",
            ),
        ];
        for (review, message) in cases {
            let response = post(review, "application/json");
            assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
            assert_eq!(body(&response)["message"], message);
        }
        assert_eq!(
            post(json!({}), "text/plain").status(),
            http::StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        let get = http::Request::get("/convert").body(Bytes::new()).unwrap();
        let response = respond_conversion(&Conversion::<ConfigMap>::hub(), get);
        assert_eq!(response.status(), http::StatusCode::METHOD_NOT_ALLOWED);
    }
}
