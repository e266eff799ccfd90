//! PATCH: the patch handler of kube-apiserver (`pkg/endpoints/handlers/patch.go`). The patch is
//! applied to the current object and the result goes through the ordinary update path, so a
//! `metadata.resourceVersion` inside the patch acts as an optimistic lock.
//!
//! JSON merge, JSON and strategic merge patches are applied here; [`apply`] serves
//! `application/apply-patch+yaml` (server-side apply), [`patched_text`] writes a patched object
//! as the real server quotes it in errors.

mod apply;
mod patched_text;
#[cfg(test)]
mod proptests;

pub(super) use apply::decode_apply_body;
use patched_text::{Reached, patched_text};

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::Value;

use super::check_body_size;
use super::decode::{check_name, check_write_options, decode_into_type, ensure_namespace};
use super::field_validation::FieldValidation;
use super::update::UpdateRequest;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::gotype::{self, GoType};
use crate::jsonpatch;
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::strategic;
use crate::wire::error::ApiError;
use crate::wire::go_json_syntax;
use crate::wire::group::GroupKind;
use crate::wire::media_type::{patch_media_type, routed_patch_type};
use crate::wire::nesting;
use crate::wire::object::{Object, json_type, normalize_metadata_of, read_json};
use crate::wire::status::Reason;

/// The patch formats, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PatchType {
    /// RFC 6902 (`application/json-patch+json`).
    Json,
    /// RFC 7396 (`application/merge-patch+json`).
    Merge,
    /// `application/strategic-merge-patch+json`, built-in kinds only.
    Strategic,
    /// Server-side apply (`application/apply-patch+yaml`).
    Apply,
}

const CUSTOM_PATCH_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];
const BUILTIN_PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];
/// The Go type the codec reads `apiVersion` and `kind` into, as its errors name it.
const TYPE_META: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;
/// `maxJSONPatchOperations` of the patch handler.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

impl State {
    pub(crate) fn patch(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let patch_type = patch_type(call)?;
        check_body_size(call.body)?;
        check_patch_options(call, patch_type)?;
        if patch_type == PatchType::Apply {
            return self.server_side_apply(call);
        }
        // The body is checked before the object is read (`validateAndTranscodePatch`).
        let strategic = match patch_type {
            PatchType::Strategic => {
                Some(strategic::parse_patch_body(call.body).map_err(|e| strategic_error(&e))?)
            }
            _ => None,
        };
        let Some((current, stored)) = self.load_typed(call)? else {
            return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
        };
        let validation = FieldValidation::of(call);
        let mut doc = Value::Object(current.clone());
        // What the patch reached, for quoting the patched object should it not decode.
        let mut reached = None;
        let mut strategic_patch = None;
        match (patch_type, strategic) {
            (PatchType::Merge, _) => {
                let patch = apply_merge_patch(&mut doc, call.body)?;
                reached = Some(Reached::by_merge_patch(&current, &patch));
            }
            (PatchType::Strategic, Some(patch)) => {
                let schema = strategic::schema_for(&call.rt.group, &call.rt.kind)
                    .unwrap_or_else(strategic::metadata_only);
                doc = strategic::apply(&doc, &patch, schema).map_err(|e| strategic_error(&e))?;
                strategic_patch = Some(patch);
            }
            _ => {
                reached = Some(Reached::by_json_patch(&apply_json_patch(
                    &mut doc, call.body, validation,
                )?))
            }
        }
        // A JSON patch can nest a deep value at the end of a deep path: an object one level past
        // what Go's decoder reads (each of its members within it, or the patch library could not
        // have written it) is refused when decoded, with the patched object quoted whole
        // (`jsonPatcher.applyPatchToCurrentObject`, `k8s.io/apiserver`
        // `pkg/endpoints/handlers/patch.go`). Go's scanner reads the whole text before anything
        // is decoded, so this comes before the type is looked for.
        if nesting::value_depth(&doc) > nesting::GO_MAX_DEPTH {
            let ty = go_struct_type(call);
            let text = match &reached {
                Some(reached) => patched_text(&doc, ty.as_ref(), reached),
                None => go_json(&doc),
            };
            let why = go_json_syntax::syntax_error(text.as_bytes())
                .unwrap_or_else(|| "exceeded max depth".to_owned());
            return Err(patched_object_invalid(
                &text,
                &format!("couldn't get version/kind; json parse error: {why}"),
            ));
        }
        // A JSON patch can make the object a list: the codec finds no type in it.
        let Value::Object(mut object) = doc else {
            return Err(patched_object_invalid(
                &go_json(&doc),
                &format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type {TYPE_META}",
                    json_type(&doc)
                ),
            ));
        };
        let go_struct = gotype::kind_struct(&call.rt.group, &call.path.version, &call.rt.kind);
        // A strategic merge patch's result goes back into the Go type through the unstructured
        // converter, whose error quotes the patch.
        if let Some(patch) = &strategic_patch
            && let Some(go_struct) = go_struct
            && let Err(why) = gotype::from_unstructured(go_struct, &object)
        {
            return Err(patched_object_invalid(
                &crate::strategic::gofmt::fmt_v(patch),
                &why,
            ));
        }
        if !call.rt.custom {
            check_builtin_type_meta(call, &object)?;
        }
        // The patched object is decoded as a body is, which consumes what it prunes and
        // normalises: without what the patch reached to patch it again, its metadata is kept
        // aside for quoting it in an error.
        let patched_metadata = match reached {
            Some(_) => None,
            None => object.get("metadata").cloned(),
        };
        // `applyPatchToCurrentObject`: the JSON patch's own strict errors come first.
        let patch_strict = match patch_type {
            PatchType::Json if validation != FieldValidation::Ignore => {
                jsonpatch::strict_field_errors(call.body)
            }
            _ => Vec::new(),
        };
        let go_struct_name = (!call.rt.custom).then_some(call.rt.kind.as_str());
        let decoded = normalize_metadata_of(&mut object, go_struct_name).and_then(|mut unknown| {
            unknown.extend(decode_into_type(call, &mut object)?);
            let messages = patch_strict
                .iter()
                .map(|m| format!("json patch {m}"))
                .chain(unknown.iter().map(|p| format!("unknown field \"{p}\"")))
                .collect();
            validation.messages(messages)
        });
        let warnings = match decoded {
            Ok(warnings) => warnings,
            Err(why) => {
                let text = match &reached {
                    // Patched again, rather than a copy of every patched object kept aside.
                    Some(reached) => {
                        let mut patched = Value::Object(current);
                        match patch_type {
                            PatchType::Merge => {
                                apply_merge_patch(&mut patched, call.body).map(|_| ())
                            }
                            _ => apply_json_patch(&mut patched, call.body, validation).map(|_| ()),
                        }?;
                        patched_text(&patched, go_struct_type(call).as_ref(), reached)
                    }
                    None => {
                        if let Some(metadata) = patched_metadata {
                            object.insert("metadata".to_owned(), metadata);
                        }
                        Value::Object(object).to_string()
                    }
                };
                return Err(patched_object_invalid(&text, &why));
            }
        };
        check_name(call, &object)?;
        ensure_namespace(call, &mut object)?;
        self.update(
            call,
            UpdateRequest {
                object,
                uid_precondition: false,
                warnings,
                current: Some((current, stored)),
                fields_managed: false,
            },
        )
    }
}

/// The Go struct of the patched kind, as [`patched_text`] takes it (`None` for a custom
/// resource).
fn go_struct_type(call: &Call<'_>) -> Option<GoType> {
    gotype::kind_struct(&call.rt.group, &call.path.version, &call.rt.kind)
        .map(|name| GoType::Struct(name.to_owned()))
}

pub(super) fn patch_type(call: &Call<'_>) -> Result<PatchType, ApiError> {
    // Custom resources are served by the apiextensions handler, which has no router check.
    if !call.rt.custom && !routed_patch_type(call.content_type, &BUILTIN_PATCH_TYPES) {
        return Err(ApiError::content_type_not_routed());
    }
    let patch_type = match patch_media_type(call.content_type) {
        "application/json-patch+json" => PatchType::Json,
        "application/merge-patch+json" => PatchType::Merge,
        "application/strategic-merge-patch+json" if !call.rt.custom => PatchType::Strategic,
        "application/apply-patch+yaml" => PatchType::Apply,
        _ if call.rt.custom => return Err(ApiError::unsupported_media_type(&CUSTOM_PATCH_TYPES)),
        _ => return Err(ApiError::unsupported_media_type(&BUILTIN_PATCH_TYPES)),
    };
    Ok(patch_type)
}

/// `ValidatePatchOptions`: a field manager for apply, `force` only with apply, `dryRun` values.
pub(super) fn check_patch_options(call: &Call<'_>, patch_type: PatchType) -> Result<(), ApiError> {
    check_write_options(call, "PatchOptions")?;
    let mut errors = Vec::new();
    let manager = call.query.get("fieldManager").unwrap_or("");
    if manager.len() > 128 {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            "fieldManager",
            BadValue::Omit,
            "may not be more than 128 bytes",
        ));
    }
    if patch_type == PatchType::Apply && manager.is_empty() {
        errors.push(FieldError::required(
            "fieldManager",
            "is required for apply patch",
        ));
    }
    if patch_type != PatchType::Apply && call.query.get("force").is_some() {
        errors.push(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &GroupKind::new("meta.k8s.io", "PatchOptions"),
        "",
        &errors,
    ))
}

/// RFC 7396, applied to the versioned object: maps merge, `null` deletes, arrays are replaced.
/// Returns the patch.
pub(super) fn apply_merge_patch(doc: &mut Value, body: &[u8]) -> Result<Value, ApiError> {
    let patch: Value = read_json(body).map_err(|e| decode_error(body, e))?;
    if !patch.is_object() {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(&patch)
        )));
    }
    recon_apimachinery::json::merge_patch(doc, &patch);
    Ok(patch)
}

/// RFC 6902 as kube-apiserver applies it (`applyJSPatch`): the body read as `[]jsonPatchOp`
/// unless `fieldValidation=Ignore`, then decoded and applied by evanphx/json-patch v4
/// ([`jsonpatch`]): all operations or none; any failure is a 422 whose detail the server drops.
/// Returns the operations.
pub(super) fn apply_json_patch(
    doc: &mut Value,
    body: &[u8],
    validation: FieldValidation,
) -> Result<Vec<Value>, ApiError> {
    let ops: Value = read_json(body).map_err(|e| decode_error(body, e))?;
    if validation != FieldValidation::Ignore {
        check_patch_ops(&ops)?;
    }
    let patch = jsonpatch::Patch::decode(body).map_err(ApiError::bad_request)?;
    if patch.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::new(
            413,
            Reason::RequestEntityTooLarge,
            format!(
                "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                patch.len()
            ),
        ));
    }
    // The patched object must be within Go's limit anyway; twice it leaves room for a deep
    // value to be moved where it fits. Past that the patch ends as the library's own `Apply`
    // fails when it writes the document out (below), unless a later operation would have
    // taken the depth back: not followed there.
    let patched = patch
        .apply(doc, 2 * nesting::GO_MAX_DEPTH)
        .map_err(|failure| match failure {
            jsonpatch::Failure::Failed(_) | jsonpatch::Failure::TooDeep => patch_rejected(),
            jsonpatch::Failure::Panic(_) => ApiError::new(500, Reason::Unknown, PANIC_BODY),
        })?;
    // `Patch.Apply` ends with `json.Marshal` of the document, whose encoder checks the text of
    // each member's `MarshalJSON` with Go's scanner (`encoding/json` `compact`): a member
    // nesting deeper than `maxNestingDepth` fails the patch, which the handler answers with
    // its generic 422 (`applyJSPatch`). The document itself is not checked there.
    if member_depth(&patched) > nesting::GO_MAX_DEPTH {
        return Err(patch_rejected());
    }
    *doc = patched;
    Ok(match ops {
        Value::Array(ops) => ops.into_vec(),
        _ => Vec::new(),
    })
}

/// How deep the deepest member (or element) of a patched document nests.
fn member_depth(doc: &Value) -> usize {
    match doc {
        Value::Object(map) => map.values().map(nesting::value_depth).max().unwrap_or(0),
        Value::Array(items) => items.iter().map(nesting::value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The body decoded into `[]handlers.jsonPatchOp` (`op`, `path` and `from` strings): Go's first
/// type error, as a 400.
fn check_patch_ops(ops: &Value) -> Result<(), ApiError> {
    let cannot = |what: &Value, into: &str| {
        ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go {into}",
            json_type(what)
        ))
    };
    let items = match ops {
        Value::Null => return Ok(()),
        Value::Array(items) => items,
        other => return Err(cannot(other, "value of type []handlers.jsonPatchOp")),
    };
    for item in items {
        match item {
            Value::Null => {}
            Value::Object(op) => {
                for field in ["op", "path", "from"] {
                    if let Some(v) = op.get(field).filter(|v| !(v.is_string() || v.is_null())) {
                        return Err(cannot(
                            v,
                            &format!("struct field jsonPatchOp.{field} of type string"),
                        ));
                    }
                }
            }
            other => return Err(cannot(other, "value of type handlers.jsonPatchOp")),
        }
    }
    Ok(())
}

/// What a request whose JSON patch panics the patch library is answered with: the text of
/// `WithPanicRecovery` (`k8s.io/apiserver` `pkg/server/filters/wrap.go`), as a 500, as this
/// server answers a strategic merge patch's panic. kube-apiserver 1.36.2 sends no answer at all
/// (an empty reply over HTTP/1.1, a stream reset over HTTP/2), which a client sees as a
/// transport error; an in-process server has no connection to drop.
const PANIC_BODY: &str = "This request caused apiserver to panic. Look in the logs for details.";

/// What every failing JSON patch gets: the generic 422 (`NewGenericServerResponse` drops the detail).
fn patch_rejected() -> ApiError {
    ApiError::new(
        422,
        Reason::Invalid,
        "the server rejected our request due to an error in our request",
    )
    .with_details(crate::wire::status::StatusDetails::default())
}

/// The Status a failed strategic merge patch is answered with. A panic upstream is a plain-text
/// 500 there; here it is a 500 carrying the same text.
pub(super) fn strategic_error(err: &strategic::StrategicError) -> ApiError {
    let reason = match err.reason {
        "BadRequest" => Reason::BadRequest,
        "Invalid" => Reason::Invalid,
        _ => Reason::Unknown,
    };
    let error = ApiError::new(err.code, reason, err.message.clone());
    if err.kind == strategic::StrategicErrorKind::Invalid {
        error.with_details(crate::wire::status::StatusDetails::default())
    } else {
        error
    }
}

/// A patch body that does not read as JSON, worded as Go's `json.Unmarshal` words it.
fn decode_error(body: &[u8], e: serde_json::Error) -> ApiError {
    let why = go_json_syntax::worded(body, &e);
    ApiError::bad_request(format!("error decoding patch: {why}"))
}

/// A patched object that does not decode: `"" is invalid: patch: Invalid value: "<object>": <why>`.
pub(super) fn patched_object_invalid(patched: &str, why: &str) -> ApiError {
    ApiError::invalid(
        &GroupKind::new("", ""),
        "",
        &[FieldError::invalid("patch", patched, why)],
    )
}

/// A patch may not turn a built-in object into another type.
fn check_builtin_type_meta(call: &Call<'_>, object: &Object) -> Result<(), ApiError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version == call.api_version() && kind == call.rt.kind {
        return Ok(());
    }
    Err(patched_object_invalid(
        &Value::Object(object.clone()).to_string(),
        &format!(
            "Object 'Kind' is not {} in version {}",
            call.rt.kind,
            call.api_version()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn merge_patch_replaces_arrays_and_null_deletes() {
        let mut doc = json!({"a": [1, 2], "b": {"c": 1, "d": 2}});
        apply_merge_patch(&mut doc, br#"{"a": [3], "b": {"c": null}}"#).unwrap();
        assert_eq!(doc, json!({"a": [3], "b": {"d": 2}}));
    }

    #[test]
    fn a_failed_test_operation_changes_nothing() {
        let mut doc = json!({"a": 1});
        let err = apply_json_patch(
            &mut doc,
            br#"[{"op":"add","path":"/b","value":2},{"op":"test","path":"/a","value":5}]"#,
            FieldValidation::Warn,
        )
        .unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(doc, json!({"a": 1}));
    }

    #[test]
    fn testing_a_missing_key_for_null_passes_as_in_evanphx_json_patch() {
        let mut doc = json!({"metadata": {"name": "x"}});
        apply_json_patch(
            &mut doc,
            br#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["f"]}]"#,
            FieldValidation::Warn,
        )
        .unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["f"]));
    }

    #[test]
    fn an_unknown_operation_fails_as_the_patch_does() {
        // evanphx/json-patch v4 `Apply`: `Unexpected kind`, a 422 like every failed operation.
        let err = apply_json_patch(
            &mut json!({}),
            br#"[{"op":"bogus","path":"/a"}]"#,
            FieldValidation::Warn,
        )
        .unwrap_err();
        assert_eq!(err.code(), 422);
    }

    #[test]
    fn operation_members_of_other_types_are_refused_unless_ignoring_fields() {
        // `applyJSPatch` decodes `[]jsonPatchOp` first under Warn and Strict.
        let body = br#"[{"op":"add","path":5,"value":1}]"#;
        let err = apply_json_patch(&mut json!({}), body, FieldValidation::Warn).unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (
                400,
                "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"
            )
        );
        let err = apply_json_patch(&mut json!({}), body, FieldValidation::Ignore).unwrap_err();
        assert_eq!(err.code(), 422);
        let err = apply_json_patch(&mut json!({}), b"[1]", FieldValidation::Ignore).unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (
                400,
                "json: cannot unmarshal number into Go value of type jsonpatch.Operation"
            )
        );
    }

    #[test]
    fn a_null_patch_changes_nothing() {
        let mut doc = json!({"a": 1});
        apply_json_patch(&mut doc, b"null", FieldValidation::Warn).unwrap();
        assert_eq!(doc, json!({"a": 1}));
    }

    #[test]
    fn a_panic_of_the_library_is_the_panic_filter_s_500() {
        let err = apply_json_patch(
            &mut json!({}),
            br#"[{"op":"test","path":""}]"#,
            FieldValidation::Warn,
        )
        .unwrap_err();
        assert_eq!((err.code(), err.message()), (500, PANIC_BODY));
    }
}
