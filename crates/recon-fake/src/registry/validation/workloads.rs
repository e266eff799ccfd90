//! apps/v1 and batch/v1: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob
//! (`pkg/apis/apps/validation`, `pkg/apis/batch/validation`).

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
