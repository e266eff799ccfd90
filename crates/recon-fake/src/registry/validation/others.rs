//! networking.k8s.io, policy, autoscaling, rbac.authorization.k8s.io and coordination.k8s.io
//! (`pkg/apis/<group>/validation`).

use crate::wire::field_error::FieldError;
use crate::wire::object::Object;

pub(super) fn validate_create(_group: &str, _kind: &str, _obj: &Object) -> Vec<FieldError> {
    Vec::new()
}

pub(super) fn validate_update(
    _group: &str,
    _kind: &str,
    _new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    Vec::new()
}

pub(super) fn validate_status_update(
    _group: &str,
    _kind: &str,
    _new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    Vec::new()
}
