//! Namespaces: their finalizers, and a status phase that follows deletion
//! (`pkg/apis/core/validation/validation.go`).

use recon_apimachinery::json::Value;
use recon_apimachinery::names::label_key_errors;

use super::read::list_at;
use crate::field::{FieldError, Path};
use crate::handlers::validation::STANDARD_FINALIZERS;
use crate::wire::object::Object;

/// `ValidateNamespaceStatusUpdate`: the phase follows `deletionTimestamp` (the path is spelt
/// `status.Phase`, as the real one spells it).
pub(super) fn validate_status(obj: &Object) -> Vec<FieldError> {
    let phase = obj
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let deleting = obj
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null());
    let (expected, detail) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase == expected {
        return Vec::new();
    }
    vec![FieldError::invalid("status.Phase", phase, detail)]
}

/// `ValidateNamespace`: `spec.finalizers` are qualified names, and those without a `/`
/// standard ones (`validateFinalizerName`; the path has no index).
pub(super) fn validate(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = Path::new("spec").child("finalizers");
    for name in list_at(obj.get("spec"), "finalizers")
        .iter()
        .filter_map(Value::as_str)
    {
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(&path, name, message));
        }
        if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
            errors.push(FieldError::invalid(
                &path,
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn namespace_finalizers_without_a_slash_are_the_standard_ones() {
        let namespace = |finalizers: Value| {
            json!({"spec": {"finalizers": finalizers}})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        assert!(validate(&namespace(json!(["kubernetes", "orphan", "a.io/b"]))).is_empty());
        assert_eq!(validate(&namespace(json!(["mine"]))).len(), 1);
    }
}
