//! The HTTP side every webhook shares, admission and conversion alike: a `POST` of JSON,
//! answered with JSON, and anything else refused with a `metav1.Status` body.

use bytes::Bytes;
use serde_json::json;

/// The answer to a request that is not a `POST` of `application/json` (405 with `Allow: POST`,
/// or 415); `None` for one that is.
pub(crate) fn refuse_unless_json_post(
    parts: &http::request::Parts,
) -> Option<http::Response<Bytes>> {
    if parts.method != http::Method::POST {
        let mut response = failure(
            http::StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{} takes POST, not {}", parts.uri.path(), parts.method),
        );
        response
            .headers_mut()
            .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
        return Some(response);
    }
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let json = content_type
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Some(failure(
            http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body must be application/json, not {}",
                content_type.unwrap_or("none")
            ),
        ));
    }
    None
}

/// An HTTP error with a `metav1.Status` body.
pub(crate) fn failure(
    code: http::StatusCode,
    reason: &str,
    message: String,
) -> http::Response<Bytes> {
    let status = json!({
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    json_response(code, status.to_string().into_bytes())
}

/// `body` as JSON with `code`.
pub(crate) fn json_response(code: http::StatusCode, body: Vec<u8>) -> http::Response<Bytes> {
    let mut response = http::Response::new(Bytes::from(body));
    *response.status_mut() = code;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
