//! Pods, PodTemplates and the pod specs and templates other kinds embed
//! (`pkg/apis/core/validation/validation.go`: `ValidatePodCreate`, `ValidatePodSpec`,
//! `ValidatePodTemplateSpec`, ...).

use crate::wire::field_error::FieldError;
use crate::wire::object::Object;

pub(super) fn validate_create(_kind: &str, _obj: &Object) -> Vec<FieldError> {
    Vec::new()
}

pub(super) fn validate_update(_kind: &str, _new: &Object, _old: &Object) -> Vec<FieldError> {
    Vec::new()
}

pub(super) fn validate_status_update(_kind: &str, _new: &Object, _old: &Object) -> Vec<FieldError> {
    Vec::new()
}
