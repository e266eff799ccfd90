//! A CRD's conversion webhook (`conversion.strategy: Webhook`), called in-process: the request is
//! the `ConversionReview` kube-apiserver would POST, the answer what the webhook would send back,
//! and what comes back is checked as kube-apiserver's webhook converter checks it, with its
//! messages (apiextensions-apiserver `webhook_converter.go`; recorded in the
//! `versions/webhook-*` scenarios).

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::Arc;

use recon_apimachinery::go_json::go_type;
use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

use crate::field::aggregate;
use crate::handlers::validation::{annotation_errors, label_errors};
use crate::wire::go_json_syntax;
use crate::wire::object::Object;

/// A conversion webhook the in-memory server calls in-process, in place of the URL or Service a
/// CRD names: it gets the body of the `ConversionReview` request and answers as the webhook
/// would over HTTP, or not at all. Any `Fn(&[u8]) -> http::Response<Vec<u8>>` is one;
/// recon-core's `Conversion::into_webhook` gives one.
pub trait ConversionWebhook: Send + Sync + 'static {
    /// Answers one `ConversionReview` (its JSON body); `Err` plays a webhook that does not.
    fn review(&self, request: &[u8]) -> Result<http::Response<Vec<u8>>, NoAnswer>;
}

impl<F> ConversionWebhook for F
where
    F: Fn(&[u8]) -> http::Response<Vec<u8>> + Send + Sync + 'static,
{
    fn review(&self, request: &[u8]) -> Result<http::Response<Vec<u8>>, NoAnswer> {
        Ok(self(request))
    }
}

/// Why a conversion webhook gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoAnswer {
    /// It did not answer within the 30 s kube-apiserver's webhook client waits.
    TimedOut,
}

impl fmt::Debug for dyn ConversionWebhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConversionWebhook")
    }
}

/// Where a CRD's conversions go: the webhook it names, and the one registered in-process.
#[derive(Clone)]
pub(crate) struct WebhookEndpoint {
    /// The CRD's `clientConfig`, as the connection error names it.
    pub(crate) target: String,
    pub(crate) handler: Option<Arc<dyn ConversionWebhook>>,
}

impl fmt::Debug for WebhookEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEndpoint")
            .field("target", &self.target)
            .field("registered", &self.handler.is_some())
            .finish()
    }
}

/// `obj` (with its `apiVersion` and `kind`) converted to `to` (`group/version`) by the
/// webhook; `Err` is kube-apiserver's message.
pub(crate) fn convert(endpoint: &WebhookEndpoint, obj: Object, to: &str) -> Result<Object, String> {
    let text = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    // An object with nothing but its type is converted without asking.
    if obj.keys().all(|k| k == "apiVersion" || k == "kind") || api_version == to {
        let mut obj = obj;
        obj.insert("apiVersion".into(), Value::String(to.to_owned()));
        return Ok(obj);
    }
    let gvk = gvk_string(&api_version, &kind);
    let failed = |why: String| format!("conversion webhook for {gvk} failed: {why}");
    let uid = request_uid();
    let review = json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {"uid": uid, "desiredAPIVersion": to, "objects": [Value::Object(obj.clone())]},
    });
    let Some(handler) = &endpoint.handler else {
        return Err(failed(format!(
            "Post {:?}: no conversion webhook is registered with the in-memory server (ApiServer::serve_conversion)",
            endpoint.target
        )));
    };
    let answer = match handler.review(review.to_string().as_bytes()) {
        Ok(answer) => answer,
        // Seen from kube-apiserver 1.36 against a webhook that never answered; which of its
        // two 30 s deadlines fires first varies, and the other run said only "context deadline
        // exceeded".
        Err(NoAnswer::TimedOut) => {
            return Err(failed(format!(
                "Post \"{}?timeout=30s\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                endpoint.target
            )));
        }
    };
    let objects = converted_objects(&uid, answer).map_err(failed)?;
    if objects.len() != 1 {
        return Err(format!(
            "conversion webhook for {gvk} returned {} objects, expected 1",
            objects.len()
        ));
    }
    let Some(Value::Object(mut converted)) = objects.into_iter().next() else {
        return Err(failed("unexpected type at index 0".to_owned()));
    };
    let got = |k: &str| {
        converted
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if got("apiVersion") != to {
        return Err(format!(
            "conversion webhook for {gvk} returned invalid object at index 0: invalid groupVersion (expected {}, received {})",
            to,
            got("apiVersion")
        ));
    }
    if got("kind") != kind {
        return Err(format!(
            "conversion webhook for {gvk} returned invalid object at index 0: invalid kind (expected {kind}, received {})",
            got("kind")
        ));
    }
    same_identity(&obj, &converted)
        .map_err(|why| format!("conversion webhook for {gvk} returned invalid object: {why}"))?;
    restore_metadata(&obj, &mut converted)
        .map_err(|why| format!("conversion webhook for {gvk} returned invalid metadata: {why}"))?;
    Ok(converted)
}

/// The objects of the webhook's answer (`getConvertedObjectsFromResponse`, after the REST
/// client's reading of the HTTP answer); `Err` is why not.
fn converted_objects(uid: &str, answer: http::Response<Vec<u8>>) -> Result<Vec<Value>, String> {
    let (parts, body) = answer.into_parts();
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let decoded: Result<Value, serde_json::Error> = serde_json::from_slice(&body);
    if !parts.status.is_success() {
        return Err(http_error(
            parts.status.as_u16(),
            content_type,
            &body,
            decoded.as_ref().ok(),
        ));
    }
    // The REST client's decoder reads a body that starts with `{` as JSON, anything else as
    // YAML (`IsJSONBuffer`).
    let review = if body.trim_ascii_start().starts_with(b"{") {
        decoded.map_err(|e| {
            format!(
                "couldn't get version/kind; json parse error: {}",
                go_json_syntax::worded(&body, &e)
            )
        })?
    } else {
        read_as_yaml(&body)?
    };
    let (api_version, kind) = (
        review
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or(""),
        review.get("kind").and_then(Value::as_str).unwrap_or(""),
    );
    if (api_version, kind) != ("apiextensions.k8s.io/v1", "ConversionReview") {
        return Err(format!(
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {}",
            gvk_string(api_version, kind)
        ));
    }
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".to_owned());
    };
    let got_uid = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let result = response.get("result");
    let status = result
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if status != "Success" {
        let message = result
            .and_then(|r| r.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(if message.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            message.to_owned()
        });
    }
    Ok(response
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// A body that is not JSON, read as client-go's serializer reads it: as YAML, converted to
/// JSON, whose type must be an object (recorded: a plain-text body is a YAML string).
fn read_as_yaml(body: &[u8]) -> Result<Value, String> {
    const TYPE_META: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;
    let text = String::from_utf8_lossy(body);
    let value: Value = serde_saphyr::from_str(&text).map_err(|e| {
        format!(
            "couldn't get version/kind; json parse error: error converting YAML to JSON: {}",
            crate::wire::go_yaml::go_yaml_error(&text, &e)
        )
    })?;
    let found = match &value {
        Value::Object(_) | Value::Null => return Ok(value),
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
    };
    Err(format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {found} into Go value of type {TYPE_META}"
    ))
}

/// What client-go makes of an answer that is not a success: the `Status` it carries, or
/// `NewGenericServerResponse` for the code.
fn http_error(code: u16, content_type: &str, body: &[u8], decoded: Option<&Value>) -> String {
    if let Some(status) =
        decoded.filter(|v| v.get("kind").and_then(Value::as_str) == Some("Status"))
    {
        return status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
    }
    let server = if content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim() == "text/plain")
    {
        String::from_utf8_lossy(body).trim().to_owned()
    } else {
        "unknown".to_owned()
    };
    match code {
        409 => "the server reported a conflict".to_owned(),
        404 => "the server could not find the requested resource".to_owned(),
        400 => "the server rejected our request for an unknown reason".to_owned(),
        401 => "the server has asked for the client to provide credentials".to_owned(),
        403 | 415 => server,
        406 if server.is_empty() || server == "unknown" => {
            "the server was unable to respond with a content type that the client supports".to_owned()
        }
        406 => server,
        405 => "the server does not allow this method on the requested resource".to_owned(),
        422 => "the server rejected our request due to an error in our request".to_owned(),
        503 => "the server is currently unable to handle the request".to_owned(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        429 => "the server has received too many requests and has asked us to try again later".to_owned(),
        500.. => format!("an error on the server ({server:?}) has prevented the request from succeeding"),
        _ => format!("the server responded with the status code {code} but did not return more information"),
    }
}

/// `validateConvertedObject`: the identity may not change.
fn same_identity(original: &Object, converted: &Object) -> Result<(), String> {
    let meta = |o: &Object, k: &str| {
        o.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    for (field, label) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (e, a) = (meta(original, field), meta(converted, field));
        if e != a {
            return Err(format!("must have the same {label}: {e} != {a}"));
        }
    }
    Ok(())
}

/// `restoreObjectMeta`: the original's metadata, with the labels and annotations the webhook
/// wrote, validated when they differ from the original's.
fn restore_metadata(original: &Object, converted: &mut Object) -> Result<(), String> {
    let mut written = match converted.remove("metadata") {
        None => return Err("missing metadata in converted object".to_owned()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(&other)
            ));
        }
    };
    let mut metadata: Map = original
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for field in ["labels", "annotations"] {
        let map = match written.remove(field) {
            None | Some(Value::Null) => {
                metadata.remove(field);
                continue;
            }
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(&other)
                ));
            }
        };
        let mut pairs = Vec::with_capacity(map.len());
        for (key, value) in &map {
            let Value::String(value) = value else {
                return Err(format!(
                    "metadata.{field}[{key}] must be a string, but is {} in converted object",
                    go_type(value)
                ));
            };
            pairs.push((key.as_str(), value.as_str()));
        }
        if metadata.get(field).and_then(Value::as_object) != Some(&map) {
            // Go ranges over the map in random order; sorted is one of the orders it can take.
            pairs.sort_unstable();
            let mut errors = Vec::new();
            if field == "labels" {
                label_errors(&pairs, "metadata.labels", &mut errors);
            } else {
                // The converter names the field `metadata.annotation`.
                annotation_errors(&pairs, "metadata.annotation", &mut errors);
            }
            if !errors.is_empty() {
                return Err(aggregate(&errors));
            }
        }
        metadata.insert(field.to_owned(), Value::Object(map));
    }
    converted.insert("metadata".into(), Value::Object(metadata));
    Ok(())
}

/// Go's `GroupVersionKind.String()`: `group/version, Kind=kind` (a custom resource always has
/// a group).
fn gvk_string(api_version: &str, kind: &str) -> String {
    format!("{api_version}, Kind={kind}")
}

/// A version 4 UUID for the review's `uid`.
fn request_uid() -> String {
    let a = RandomState::new().hash_one(0u8);
    let b = RandomState::new().hash_one(1u8);
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> Object {
        match json!({"apiVersion": "example.com/v1alpha1", "kind": "Shape",
            "metadata": {"name": "s", "namespace": "ns", "uid": "u"}, "spec": {"size": 1}})
        {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    fn endpoint(handler: impl ConversionWebhook) -> WebhookEndpoint {
        WebhookEndpoint {
            target: "https://hook.example.com/convert".to_owned(),
            handler: Some(Arc::new(handler)),
        }
    }

    /// Answers with `body` for the review's uid (`UID` in `body` is replaced), `code` and
    /// `content_type`.
    fn answering(
        code: u16,
        content_type: &'static str,
        body: &'static str,
    ) -> impl ConversionWebhook {
        move |request: &[u8]| {
            let review: Value = serde_json::from_slice(request).unwrap();
            let uid = review["request"]["uid"].as_str().unwrap().to_owned();
            let mut response = http::Response::new(body.replace("UID", &uid).into_bytes());
            *response.status_mut() = http::StatusCode::from_u16(code).unwrap();
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(content_type),
            );
            response
        }
    }

    const PREFIX: &str = "conversion webhook for example.com/v1alpha1, Kind=Shape failed: ";

    fn error(handler: impl ConversionWebhook) -> String {
        convert(&endpoint(handler), object(), "example.com/v1").unwrap_err()
    }

    #[test]
    fn a_webhook_that_times_out_is_reported_as_the_client_timeout() {
        struct Silent;
        impl ConversionWebhook for Silent {
            fn review(&self, _: &[u8]) -> Result<http::Response<Vec<u8>>, NoAnswer> {
                Err(NoAnswer::TimedOut)
            }
        }
        assert_eq!(
            error(Silent),
            format!(
                "{PREFIX}Post \"https://hook.example.com/convert?timeout=30s\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            )
        );
    }

    #[test]
    fn http_errors_read_as_client_go_reads_them() {
        assert_eq!(
            error(answering(500, "application/json", "not json")),
            format!(
                "{PREFIX}an error on the server (\"unknown\") has prevented the request from succeeding"
            )
        );
        assert_eq!(
            error(answering(503, "text/plain", " down for repairs\n")),
            format!("{PREFIX}the server is currently unable to handle the request")
        );
        assert_eq!(
            error(answering(502, "text/plain", " bad gateway\n")),
            format!(
                "{PREFIX}an error on the server (\"bad gateway\") has prevented the request from succeeding"
            )
        );
        assert_eq!(
            error(answering(
                403,
                "application/json",
                r#"{"kind": "Status", "message": "forbidden here"}"#
            )),
            format!("{PREFIX}forbidden here")
        );
    }

    #[test]
    fn malformed_reviews_are_refused_with_the_converter_s_words() {
        assert_eq!(
            error(answering(
                200,
                "application/json",
                r#"{"apiVersion": "v1", "kind": "Status"}"#
            )),
            format!(
                "{PREFIX}expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"
            )
        );
        assert_eq!(
            error(answering(
                200,
                "application/json",
                r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}"#
            )),
            format!("{PREFIX}no response provided")
        );
        let wrong_uid = error(answering(
            200,
            "application/json",
            r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {"uid": "other", "result": {"status": "Success"}}}"#,
        ));
        assert!(
            wrong_uid.starts_with(&format!("{PREFIX}expected response.uid=\""))
                && wrong_uid.ends_with("\", got \"other\""),
            "{wrong_uid}"
        );
        assert_eq!(
            error(answering(
                200,
                "application/json",
                r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {"uid": "UID", "result": {"status": "Failure"}}}"#
            )),
            format!("{PREFIX}response.result.status was 'Failure', not 'Success'")
        );
    }

    #[test]
    fn a_body_starting_with_a_brace_is_read_as_json_and_any_other_as_yaml() {
        // Recorded (versions/webhook-http-errors): `{{ not: [yaml` is a JSON syntax error.
        assert_eq!(
            error(answering(200, "application/json", "{{ not: [yaml")),
            format!(
                "{PREFIX}couldn't get version/kind; json parse error: invalid character '{{' looking for beginning of object key string"
            )
        );
        assert_eq!(
            error(answering(200, "application/json", " \n{\"kind\": ")),
            format!(
                "{PREFIX}couldn't get version/kind; json parse error: unexpected end of JSON input"
            )
        );
        // A JSON array is not a JSON buffer: the YAML reader reads it, and it is no review.
        assert!(
            error(answering(200, "application/json", "[1]")).starts_with(&format!(
                "{PREFIX}couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct {{"
            ))
        );
    }

    #[test]
    fn written_labels_and_annotations_are_checked_as_restore_object_meta_checks_them() {
        let restored = |metadata: Value| {
            let mut converted = object();
            converted.insert("metadata".into(), metadata);
            restore_metadata(&object(), &mut converted).map(|()| converted)
        };
        assert_eq!(
            restored(json!([])).unwrap_err(),
            "invalid metadata of type []interface {} in converted object"
        );
        assert_eq!(
            restored(json!({"labels": "a=b"})).unwrap_err(),
            "invalid metadata.labels of type string in converted object"
        );
        assert_eq!(
            restored(json!({"annotations": {"a": 1.5}})).unwrap_err(),
            "metadata.annotations[a] must be a string, but is float64 in converted object"
        );
        // Several errors are aggregated, a label's key errors before its value's.
        let many = restored(json!({"labels": {"b!": "-", "a": "ok"}})).unwrap_err();
        assert!(
            many.starts_with("[metadata.labels: Invalid value: \"b!\": "),
            "{many}"
        );
        assert!(
            many.contains(", metadata.labels: Invalid value: \"-\": "),
            "{many}"
        );
        // Annotations over 256 KiB in total are refused on the converter's singular field name.
        let big = "x".repeat(256 * 1024);
        assert_eq!(
            restored(json!({"annotations": {"a": big}})).unwrap_err(),
            "metadata.annotation: Too long: may not be more than 262144 bytes"
        );
        // Labels and annotations left out are removed; the rest of the metadata is the original's.
        let kept = restored(json!({"name": "other", "labels": {"a": "b"}})).unwrap();
        assert_eq!(
            kept["metadata"],
            json!({"name": "s", "namespace": "ns", "uid": "u", "labels": {"a": "b"}})
        );
    }

    #[test]
    fn without_a_registered_webhook_the_conversion_fails() {
        let unregistered = WebhookEndpoint {
            target: "https://hook.example.com/convert".to_owned(),
            handler: None,
        };
        let err = convert(&unregistered, object(), "example.com/v1").unwrap_err();
        assert!(
            err.starts_with(PREFIX) && err.contains("ApiServer::serve_conversion"),
            "{err}"
        );
    }

    #[test]
    fn metadata_comes_back_as_it_was_but_labels_and_annotations() {
        let converted = convert(
            &endpoint(answering(200, "application/json", r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "UID", "result": {"status": "Success"}, "convertedObjects": [
                    {"apiVersion": "example.com/v1", "kind": "Shape",
                     "metadata": {"name": "s", "namespace": "ns", "uid": "u", "generation": 9, "labels": {"a": "b"}},
                     "spec": {"size": 2}}]}}"#)),
            object(),
            "example.com/v1",
        )
        .unwrap();
        assert_eq!(
            Value::Object(converted),
            json!({"apiVersion": "example.com/v1", "kind": "Shape",
                "metadata": {"name": "s", "namespace": "ns", "uid": "u", "labels": {"a": "b"}},
                "spec": {"size": 2}})
        );
    }
}
