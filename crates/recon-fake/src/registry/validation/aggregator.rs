//! APIServices (`ValidateAPIService`, `ValidateAPIServiceUpdate`,
//! `ValidateAPIServiceStatusUpdate` of kube-aggregator's
//! `pkg/apis/apiregistration/validation/validation.go`, run by its
//! `pkg/registry/apiservice/strategy.go`): the name is `<version>.<group>`, the group a DNS
//! subdomain (empty only at `v1`), the version a DNS-1035 label, the priorities in range; a local
//! APIService carries no CA bundle and does not skip TLS verification; a service is named, in
//! a namespace, on a valid port, and does not skip verification while giving a CA bundle. An
//! update checks the new object again; `/status` checks the conditions' statuses.
//!
//! The name rule is part of the metadata validation there; here it follows the other metadata
//! errors rather than preceding them.

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1035_label_errors, dns1123_subdomain_name_errors, path_segment_errors,
};

use super::config_map_secret::decoded_len;
use super::ports::port_num_errors;
use super::read::{int_at, list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("apiregistration.k8s.io", "APIService"))
}

/// The type-specific errors of creating `obj`, and of updating to it.
pub(super) fn validate(obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    let at = Path::new("spec");
    let group = str_at(spec, "group");
    let version = str_at(spec, "version");
    let mut errors = Vec::new();
    let name = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let required = format!("{version}.{group}");
    if !name.is_empty() && path_segment_errors(name, false).is_empty() && name != required {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!(
                "must be `spec.version+\".\"+spec.group`: {}",
                recon_apimachinery::go_quote(&required)
            ),
        ));
    }
    if group.is_empty() && version != "v1" {
        errors.push(FieldError::required(
            at.child("group"),
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for message in dns1123_subdomain_name_errors(group) {
            errors.push(FieldError::invalid(at.child("group"), group, message));
        }
    }
    for message in dns1035_label_errors(version) {
        errors.push(FieldError::invalid(at.child("version"), version, message));
    }
    let int = |key: &str| int_at(spec, key).unwrap_or(0);
    let priority = int("groupPriorityMinimum");
    if priority <= 0 || priority > 20000 {
        errors.push(invalid_int(
            at.child("groupPriorityMinimum"),
            priority,
            "must be positive and less than 20000",
        ));
    }
    let priority = int("versionPriority");
    if priority <= 0 || priority > 1000 {
        errors.push(invalid_int(
            at.child("versionPriority"),
            priority,
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = decoded_len(str_at(spec, "caBundle"));
    let insecure = spec
        .and_then(|s| s.get("insecureSkipTLSVerify"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let insecure_error = |detail: &str| {
        FieldError::new(
            ErrorType::Invalid,
            at.child("insecureSkipTLSVerify"),
            BadValue::Raw("true".to_owned()),
            detail,
        )
    };
    let Some(service) = spec.and_then(|s| s.get("service")).filter(|s| !s.is_null()) else {
        if ca_bundle != 0 {
            errors.push(FieldError::invalid(
                at.child("caBundle"),
                &format!("{ca_bundle} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errors.push(insecure_error(
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errors;
    };
    let s = Some(service);
    let service_at = at.child("service");
    for key in ["namespace", "name"] {
        if str_at(s, key).is_empty() {
            errors.push(FieldError::required(service_at.child(key), ""));
        }
    }
    let port = int_at(s, "port").unwrap_or(0);
    let problems = port_num_errors(port);
    if !problems.is_empty() {
        errors.push(invalid_int(
            service_at.child("port"),
            port,
            &format!("port is not valid: {}", problems.join(", ")),
        ));
    }
    if insecure && ca_bundle > 0 {
        errors.push(insecure_error("may not be true if caBundle is present"));
    }
    errors
}

/// `ValidateAPIServiceStatus`: each condition's status is True, False or Unknown.
pub(super) fn validate_status(obj: &Object) -> Vec<FieldError> {
    let at = Path::new("status").child("conditions");
    let mut errors = Vec::new();
    for (i, condition) in list_at(obj.get("status"), "conditions").iter().enumerate() {
        let status = str_at(Some(condition), "status");
        if !["True", "False", "Unknown"].contains(&status) {
            errors.push(FieldError::not_supported(
                at.index(i).child("status"),
                status,
                &["True", "False", "Unknown"],
            ));
        }
    }
    errors
}

fn invalid_int(at: Path, n: i64, detail: &str) -> FieldError {
    FieldError::new(ErrorType::Invalid, at, BadValue::Raw(n.to_string()), detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recon_apimachinery::json;

    fn object(v: Value) -> Object {
        match v {
            Value::Object(map) => map,
            _ => Object::new(),
        }
    }

    #[test]
    fn the_name_is_version_dot_group() {
        let obj = object(json!({"metadata": {"name": "v1.x"}, "spec": {"group": "y",
            "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1}}));
        let bodies: Vec<String> = validate(&obj).iter().map(FieldError::body).collect();
        assert_eq!(
            bodies,
            ["Invalid value: \"v1.x\": must be `spec.version+\".\"+spec.group`: \"v1.y\""]
        );
    }

    #[test]
    fn a_local_apiservice_has_no_ca_bundle() {
        let obj = object(json!({"metadata": {"name": "v1.y"}, "spec": {"group": "y",
            "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAAA"}}));
        let bodies: Vec<String> = validate(&obj).iter().map(FieldError::body).collect();
        assert_eq!(
            bodies,
            ["Invalid value: \"3 bytes\": local APIServices may not have a caBundle"]
        );
    }
}
