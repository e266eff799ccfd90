//! coordination.k8s.io: Leases (`pkg/apis/coordination/validation`).

use recon_apimachinery::json::Value;

use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::Object;

/// `ValidateLeaseSpec`.
pub(super) fn validate(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let int = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_i64);
    if let Some(duration) = int("leaseDurationSeconds").filter(|d| *d <= 0) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.leaseDurationSeconds",
            BadValue::int(duration),
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = int("leaseTransitions").filter(|t| *t < 0) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.leaseTransitions",
            BadValue::int(transitions),
            "must be greater than or equal to 0",
        ));
    }
    // `preferredHolder` and `strategy` belong to the CoordinatedLeaderElection feature, off in
    // 1.36: the strategy drops them before validation, so their rule never fires.
    errors
}
