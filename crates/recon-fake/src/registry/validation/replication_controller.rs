//! ReplicationControllers (`ValidateReplicationController`, `...Update`, `...StatusUpdate`):
//! a non-empty selector that matches the template's labels, a template whose pods always
//! restart and have no active deadline, non-negative counters; on update also the
//! non-convertible fields an old object's annotations name (`rcStrategy.ValidateUpdate`).

use recon_apimachinery::json::Value;

use super::pod::{json_string_map, non_negative, template_spec};
use super::read::{is_set, str_at};
use super::workloads::{REPLICATION_CONTROLLER_STATUS, status_counters};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal;
use crate::wire::object::Object;

/// `helper.NonConvertibleFields`: the annotations naming fields an older API could not convert.
const NON_CONVERTIBLE_PREFIX: &str = "non-convertible.kubernetes.io";

/// `ValidateReplicationController` after the generic metadata rules.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    spec(obj.get("spec"))
}

/// `rcStrategy.ValidateUpdate`: the spec as on create, then what the old object's
/// non-convertible annotations forbid (walked in key order; Go walks a map).
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = spec(new.get("spec"));
    let annotations = old
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.starts_with(NON_CONVERTIBLE_PREFIX));
    for (key, value) in annotations {
        let parts: Vec<&str> = key.split('/').collect();
        let [_, broken] = parts.as_slice() else {
            continue;
        };
        if broken.contains("selector") {
            let (selector, old_selector) = (
                new.get("spec").and_then(|s| s.get("selector")),
                old.get("spec").and_then(|s| s.get("selector")),
            );
            if !internal::semantic_eq("map[string]string", selector, old_selector) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    Path::new("spec").child("selector"),
                    BadValue::Raw(json_string_map(selector)),
                    "cannot update non-convertible selector",
                ));
            }
        } else {
            errors.push(FieldError::new(
                ErrorType::NotFound,
                *broken,
                BadValue::Str(value.as_str().unwrap_or("").to_owned()),
                "unknown non-convertible field",
            ));
        }
    }
    errors
}

/// `ValidateReplicationControllerStatus`.
pub(super) fn validate_status_update(new: &Object) -> Vec<FieldError> {
    status_counters(
        new.get("status"),
        &Path::new("status"),
        &REPLICATION_CONTROLLER_STATUS,
    )
}

/// `ValidateReplicationControllerSpec`: min ready seconds, the selector, replicas, then the
/// template (`ValidatePodTemplateSpecForRC`).
fn spec(spec: Option<&Value>) -> Vec<FieldError> {
    let path = Path::new("spec");
    let mut errors: Vec<FieldError> = non_negative(spec, "minReadySeconds", &path)
        .into_iter()
        .collect();
    let selector = spec
        .and_then(|s| s.get("selector"))
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty());
    if selector.is_none() {
        errors.push(FieldError::required(path.child("selector"), ""));
    }
    if is_set(spec, "replicas") {
        errors.extend(non_negative(spec, "replicas", &path));
    } else {
        errors.push(FieldError::required(path.child("replicas"), ""));
    }
    let template_path = path.child("template");
    let Some(template) = spec
        .and_then(|s| s.get("template"))
        .filter(|t| !t.is_null())
    else {
        errors.push(FieldError::required(template_path, ""));
        return errors;
    };
    let labels = template.get("metadata").and_then(|m| m.get("labels"));
    if let Some(selector) = selector {
        let matches = selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !matches {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                template_path.child("metadata").child("labels"),
                BadValue::Raw(json_string_map(labels)),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errors.extend(template_spec(Some(template), &template_path));
    let pod = template.get("spec");
    let restart = str_at(pod, "restartPolicy");
    if restart != "Always" {
        errors.push(FieldError::not_supported(
            template_path.child("spec").child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if is_set(pod, "activeDeadlineSeconds") {
        errors.push(FieldError::forbidden(
            template_path.child("spec").child("activeDeadlineSeconds"),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errors
}
