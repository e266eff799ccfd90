//! The body of a POST to a subresource or to a resource that stores nothing (an `Eviction`, a
//! `Binding`, a `TokenRequest`, a `TokenReview`): read as kube-apiserver's create handler reads
//! it, into a kind that need not be the resource's own.

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use crate::request::call::Call;
use crate::wire::error::ApiError;
use crate::wire::media_type::{BODY_MEDIA_TYPES, body_media_type};
use crate::wire::object::{
    DecodeContext, Object, normalize_metadata, not_an_object, sniff_json_body,
};

/// The kind a body is read into: its group, the versions the endpoint accepts (the first is the
/// one a body without `apiVersion` is taken in), its name, and the Go package of its internal
/// type (which a conversion error names).
pub(crate) struct BodyKind {
    pub(crate) group: &'static str,
    pub(crate) versions: &'static [&'static str],
    pub(crate) kind: &'static str,
    pub(crate) internal_package: &'static str,
}

/// The scheme kube-apiserver's built-in types are registered in, as its errors name it.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

impl BodyKind {
    fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.group)
        }
    }
}

/// Reads the request's JSON body as a `kind`: a body that is not JSON, not an object, or of
/// another kind is refused with the decoder's 400 (a kind the server knows, `known`, cannot be
/// converted; any other is not registered). Returns the object with `apiVersion` and `kind`
/// filled in.
pub(crate) fn decode_as(
    call: &Call<'_>,
    kind: &BodyKind,
    known: &dyn Fn(&str, &str, &str) -> bool,
) -> Result<Object, ApiError> {
    let default_version = kind.versions.first().copied().unwrap_or("v1");
    let ctx = DecodeContext {
        kind: kind.kind,
        version: default_version,
    };
    match body_media_type(call.content_type).as_deref() {
        Some("application/json") => {}
        _ => return Err(ApiError::unsupported_media_type(&BODY_MEDIA_TYPES)),
    }
    let (obj, _) = sniff_json_body(call.body).map_err(|why| ctx.unrecognized(&why, call.body))?;
    let Some(mut obj) = obj else {
        return Err(ctx.unrecognized(&not_an_object("null"), call.body));
    };
    let text = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (api_version, body_kind) = (text("apiVersion"), text("kind"));
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), api_version.clone()),
    };
    let ours = kind.group == group && kind.versions.contains(&version.as_str());
    let body_kind = if body_kind.is_empty() {
        kind.kind.to_owned()
    } else {
        body_kind
    };
    let version = if api_version.is_empty() {
        default_version.to_owned()
    } else {
        version
    };
    if !(api_version.is_empty() || ours) || body_kind != kind.kind {
        if api_version.is_empty() || !known(&group, &version, &body_kind) {
            return Err(ApiError::bad_request(format!(
                "{body_kind} in version {} cannot be handled as a {}: no kind {} is registered for version {} in scheme {}",
                go_quote(&version),
                kind.kind,
                go_quote(&body_kind),
                go_quote(&api_version),
                go_quote(LEGACY_SCHEME)
            )));
        }
        return Err(ApiError::bad_request(format!(
            "{body_kind} in version {} cannot be handled as a {}: converting ({version}.{body_kind}) to ({}.{}): unknown conversion",
            go_quote(&version),
            kind.kind,
            kind.internal_package,
            kind.kind
        )));
    }
    normalize_metadata(&mut obj).map_err(|why| ctx.cannot_handle(&why))?;
    obj.insert(
        "apiVersion".into(),
        Value::String(kind.api_version(&version)),
    );
    obj.insert("kind".into(), Value::String(kind.kind.to_owned()));
    Ok(obj)
}

/// The `Status` a subresource's create answers when it succeeds: `metav1.Status{Status:
/// Success}`, 201.
pub(crate) fn success() -> Vec<u8> {
    br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}"#.to_vec()
}

/// A string at `path` (keys) in `value`.
pub(crate) fn str_at<'a>(value: Option<&'a Value>, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(value, |v, key| Some(v?.get(key)))
        .flatten()
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// An integer at `path` (keys) in `value`; 0 when missing.
pub(crate) fn int_at(value: Option<&Value>, path: &[&str]) -> i64 {
    path.iter()
        .try_fold(value, |v, key| Some(v?.get(key)))
        .flatten()
        .and_then(Value::as_i64)
        .unwrap_or(0)
}
