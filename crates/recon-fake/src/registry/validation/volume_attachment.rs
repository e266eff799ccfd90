//! storage.k8s.io's VolumeAttachments (`ValidateVolumeAttachment`,
//! `ValidateVolumeAttachmentUpdate` of `pkg/apis/storage/validation/validation.go`), as
//! `pkg/registry/storage/volumeattachment/strategy.go` runs them on create, update and
//! `/status`: the attacher is a CSI driver name, the source exactly one of a persistent volume
//! name (a DNS subdomain) and an inline spec, the node name a DNS subdomain; the status's
//! metadata is small, its errors have a short message and a code not negative; the spec does
//! not change.
//!
//! Not checked: what an inline volume spec holds (`ValidatePersistentVolumeSpec` of it).

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::dns1123_subdomain_name_errors;

use super::cluster::csi_driver_name;
use super::read::{int_at, is_set, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// `maxAttachedVolumeMetadataSize`, also the limit printed for a long error message.
const MAX_METADATA_SIZE: i64 = 256 * 1024;
/// `maxVolumeErrorMessageSize`.
const MAX_ERROR_MESSAGE: usize = 1024;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("storage.k8s.io", "VolumeAttachment"))
}

/// `ValidateVolumeAttachment` after the metadata.
pub(super) fn validate(obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    let at = Path::new("spec");
    let mut errors = csi_driver_name(str_at(spec, "attacher"), &at.child("attacher"));
    let source = spec.and_then(|s| s.get("source"));
    let source_at = at.child("source");
    let pv_name = source
        .and_then(|s| s.get("persistentVolumeName"))
        .and_then(Value::as_str);
    match (pv_name, is_set(source, "inlineVolumeSpec")) {
        (None, false) => errors.push(FieldError::required(
            &source_at,
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (Some(_), true) => errors.push(FieldError::forbidden(
            &source_at,
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (Some(""), false) => errors.push(FieldError::required(
            source_at.child("persistentVolumeName"),
            "must specify non empty persistentVolumeName",
        )),
        _ => {}
    }
    let node = str_at(spec, "nodeName");
    for message in dns1123_subdomain_name_errors(node) {
        errors.push(FieldError::invalid(at.child("nodeName"), node, message));
    }
    errors.extend(status_errors(obj.get("status")));
    if let Some(name) = pv_name {
        for message in dns1123_subdomain_name_errors(name) {
            errors.push(FieldError::invalid(
                "spec.source.persistentVolumeName",
                name,
                message,
            ));
        }
    }
    errors
}

/// `ValidateVolumeAttachmentUpdate`: the attachment validated again, then the spec unchanged.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = validate(new);
    if new.get("spec") != old.get("spec") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec",
            BadValue::Raw(internal_spec_json(new.get("spec"))),
            "field is immutable",
        ));
    }
    errors
}

/// The internal `VolumeAttachmentSpec` as `json.Marshal` writes it (no JSON names); an inline
/// spec is printed as `{}` when set (its own fields are not written out here).
fn internal_spec_json(spec: Option<&Value>) -> String {
    let source = spec.and_then(|s| s.get("source"));
    let pv_name = match source
        .and_then(|s| s.get("persistentVolumeName"))
        .and_then(Value::as_str)
    {
        Some(name) => go_json_string(name),
        None => "null".to_owned(),
    };
    let inline = if is_set(source, "inlineVolumeSpec") {
        "{}"
    } else {
        "null"
    };
    format!(
        r#"{{"Attacher":{},"Source":{{"PersistentVolumeName":{pv_name},"InlineVolumeSpec":{inline}}},"NodeName":{}}}"#,
        go_json_string(str_at(spec, "attacher")),
        go_json_string(str_at(spec, "nodeName")),
    )
}

/// `validateVolumeAttachmentStatus`.
fn status_errors(status: Option<&Value>) -> Vec<FieldError> {
    let at = Path::new("status");
    let mut errors = Vec::new();
    let size: usize = status
        .and_then(|s| s.get("attachmentMetadata"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size as i64 > MAX_METADATA_SIZE {
        errors.push(FieldError::too_long(
            at.child("attachmentMetadata"),
            MAX_METADATA_SIZE,
        ));
    }
    for key in ["attachError", "detachError"] {
        let Some(error) = status.and_then(|s| s.get(key)).filter(|e| !e.is_null()) else {
            continue;
        };
        let here = at.child(key);
        if str_at(Some(error), "message").len() > MAX_ERROR_MESSAGE {
            errors.push(FieldError::too_long(
                here.child("message"),
                MAX_METADATA_SIZE,
            ));
        }
        if let Some(code) = int_at(Some(error), "errorCode")
            && code < 0
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                here.child("errorCode"),
                BadValue::Raw(code.to_string()),
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    errors
}
