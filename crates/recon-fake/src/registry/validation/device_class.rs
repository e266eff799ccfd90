//! resource.k8s.io's DeviceClasses (`ValidateDeviceClass`, `ValidateDeviceClassUpdate` of
//! `pkg/apis/resource/validation/validation.go`), as `pkg/registry/resource/deviceclass/
//! strategy.go` runs them: at most 32 selectors, each a CEL expression that compiles; at most
//! 32 opaque configurations (a driver name, parameters that are a JSON object; their size not
//! checked again when unchanged); an extended resource name, if any, that is one.

use recon_apimachinery::json::Value;

use super::quota::is_extended_resource_name;
use super::read::list_at;
use super::resource_claims::{MAX_CONFIGS, device_configuration, selectors, slice_errors};
use crate::field::{FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("resource.k8s.io", "DeviceClass"))
}

/// `ValidateDeviceClass` after the metadata.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    spec_errors(obj.get("spec"), None)
}

/// `ValidateDeviceClassUpdate` after the metadata.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    spec_errors(new.get("spec"), Some(old.get("spec")))
}

/// `validateDeviceClassSpec`.
fn spec_errors(spec: Option<&Value>, old: Option<Option<&Value>>) -> Vec<FieldError> {
    let at = Path::new("spec");
    // Selectors as before compile in the stored expressions' environment, which is the same
    // here: only the configurations' size check depends on it.
    let mut errors = selectors(list_at(spec, "selectors"), &at.child("selectors"));
    let configs = list_at(spec, "config");
    let stored = old.is_some_and(|old| list_at(old, "config") == configs);
    errors.extend(slice_errors(
        configs,
        MAX_CONFIGS,
        &at.child("config"),
        |config, here| device_configuration(config, here, stored),
    ));
    if let Some(name) = spec
        .and_then(|s| s.get("extendedResourceName"))
        .and_then(Value::as_str)
        && !is_extended_resource_name(name)
    {
        errors.push(FieldError::invalid(
            at.child("extendedResourceName"),
            name,
            "must be a valid extended resource name",
        ));
    }
    errors
}
