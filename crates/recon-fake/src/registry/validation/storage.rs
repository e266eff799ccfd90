//! storage.k8s.io's VolumeAttributesClasses (`ValidateVolumeAttributesClass`,
//! `ValidateVolumeAttributesClassUpdate`) and CSIStorageCapacities
//! (`ValidateCSIStorageCapacity`, `ValidateCSIStorageCapacityUpdate`) of
//! `pkg/apis/storage/validation/validation.go`, as
//! `pkg/registry/storage/volumeattributesclass/strategy.go` and
//! `pkg/registry/storage/csistoragecapacity/strategy.go` run them: a class's driver is a
//! qualified name once lower-cased, its parameters hold at least one entry with non-empty keys,
//! and neither changes; a capacity's node topology is a label selector, its class a DNS
//! subdomain, its capacity not negative, and topology and class do not change.
//!
//! Not modelled: an update keeping label values in a capacity's topology that an older server
//! let in (the strategy then allows invalid values; no stored object here has any).

use recon_apimachinery::json::Value;
use recon_apimachinery::names::dns1123_subdomain_name_errors;

use super::claim::non_negative;
use super::cluster::{parameters_errors, provisioner_errors};
use super::workloads::{json_label_selector, label_selector};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        (
            "storage.k8s.io",
            "VolumeAttributesClass" | "CSIStorageCapacity"
        )
    )
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    if kind == "VolumeAttributesClass" {
        return attributes_class(obj);
    }
    storage_capacity(obj)
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "VolumeAttributesClass" {
        // The driver and parameters unchanged, then the class validated again.
        let mut errors = Vec::new();
        if new.get("driverName") != old.get("driverName") {
            errors.push(FieldError::forbidden(
                "driverName",
                "updates to driverName are forbidden.",
            ));
        }
        let parameters = |obj: &Object| {
            obj.get("parameters")
                .filter(|p| p.as_object().is_some_and(|m| !m.is_empty()))
                .cloned()
        };
        if parameters(new) != parameters(old) {
            errors.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        errors.extend(attributes_class(new));
        return errors;
    }
    // The capacity validated again, then topology and class unchanged.
    let mut errors = storage_capacity(new);
    let topology = |obj: &Object| obj.get("nodeTopology").filter(|t| !t.is_null()).cloned();
    let now = topology(new);
    if now != topology(old) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "nodeTopology",
            BadValue::Raw(json_label_selector(now.as_ref())),
            "field is immutable",
        ));
    }
    let class = |obj: &Object| {
        obj.get("storageClassName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if class(new) != class(old) {
        errors.push(FieldError::invalid(
            "storageClassName",
            &class(new),
            "field is immutable",
        ));
    }
    errors
}

/// `ValidateVolumeAttributesClass` after the metadata.
fn attributes_class(obj: &Object) -> Vec<FieldError> {
    let driver = obj.get("driverName").and_then(Value::as_str).unwrap_or("");
    let mut errors = provisioner_errors(driver, "driverName");
    errors.extend(parameters_errors(obj.get("parameters"), false));
    errors
}

/// `ValidateCSIStorageCapacity` after the metadata.
fn storage_capacity(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(topology) = obj.get("nodeTopology").filter(|t| !t.is_null()) {
        errors.extend(label_selector(topology, &Path::new("nodeTopology")));
    }
    let class = obj
        .get("storageClassName")
        .and_then(Value::as_str)
        .unwrap_or("");
    for message in dns1123_subdomain_name_errors(class) {
        errors.push(FieldError::invalid("storageClassName", class, message));
    }
    if let Some(capacity) = obj.get("capacity").filter(|c| !c.is_null()) {
        errors.extend(non_negative(capacity, &Path::new("capacity")));
    }
    errors
}
