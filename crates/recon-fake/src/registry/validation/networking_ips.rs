//! IPAddresses (`ValidateIPAddress`, `ValidateIPAddressUpdate`) and ServiceCIDRs
//! (`ValidateServiceCIDR`, `ValidateServiceCIDRUpdate`) of
//! `pkg/apis/networking/validation/validation.go`, with `IsValidIP` and `IsValidCIDR` of
//! `k8s.io/apimachinery/pkg/util/validation/ip.go`, as
//! `pkg/registry/networking/ipaddress/strategy.go` and
//! `pkg/registry/networking/servicecidr/strategy.go` run them: an IPAddress is named by an IP in
//! canonical form and references its parent (a group, a resource, a name, maybe a namespace),
//! which does not change; a ServiceCIDR holds one or two valid canonical CIDRs of distinct
//! families, and an update may only add the second family. A ServiceCIDR's `/status` has no
//! rule of its own.
//!
//! The name rule of an IPAddress is part of the metadata validation there; here it follows the
//! other metadata errors rather than preceding them.

use std::net::IpAddr;

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_subdomain_name_errors, path_segment_errors};

use super::cluster::string_list_json;
use super::read::{list_at, str_at};
use super::service_addresses::{cidr_errors, legacy_ip_errors, sloppy_cidr};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("networking.k8s.io", "IPAddress" | "ServiceCIDR")
    )
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    if kind == "IPAddress" {
        return ip_address(obj);
    }
    service_cidr_spec(obj)
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "IPAddress" {
        // ValidateIPAddress, then the parent reference unchanged.
        let mut errors = ip_address(new);
        let reference = |obj: &Object| {
            obj.get("spec")
                .and_then(|s| s.get("parentRef"))
                .filter(|r| !r.is_null())
                .cloned()
        };
        let now = reference(new);
        if now != reference(old) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.parentRef",
                BadValue::Raw(parent_ref_json(now.as_ref())),
                "field is immutable",
            ));
        }
        return errors;
    }
    service_cidr_update(new, old)
}

/// A `*ParentReference` as `json.Marshal` writes the internal type (no JSON names).
fn parent_ref_json(reference: Option<&Value>) -> String {
    let Some(reference) = reference else {
        return "null".to_owned();
    };
    let r = Some(reference);
    format!(
        r#"{{"Group":{},"Resource":{},"Namespace":{},"Name":{}}}"#,
        go_json_string(str_at(r, "group")),
        go_json_string(str_at(r, "resource")),
        go_json_string(str_at(r, "namespace")),
        go_json_string(str_at(r, "name")),
    )
}

/// `validation.IsValidIP`: a strict IP in canonical form.
fn valid_ip_errors(value: &str, at: &Path) -> Vec<FieldError> {
    let (ip, errors) = legacy_ip_errors(value, at, &[]);
    if !errors.is_empty() {
        return errors;
    }
    match ip {
        Some(ip) if ip.to_string() != value => vec![FieldError::invalid(
            at,
            value,
            format!("must be in canonical form ({})", go_quote(&ip.to_string())),
        )],
        _ => Vec::new(),
    }
}

/// `validation.IsValidCIDR`: a strict CIDR in canonical form.
fn valid_cidr_errors(value: &str, at: &Path) -> Vec<FieldError> {
    let errors = cidr_errors(value, at, &[]);
    if !errors.is_empty() {
        return errors;
    }
    match sloppy_cidr(value) {
        Some((ip, prefix)) if format!("{ip}/{prefix}") != value => vec![FieldError::invalid(
            at,
            value,
            format!(
                "must be in canonical form ({})",
                go_quote(&format!("{ip}/{prefix}"))
            ),
        )],
        _ => Vec::new(),
    }
}

/// `ValidateIPAddress` after the metadata: the name an IP, the parent reference.
fn ip_address(obj: &Object) -> Vec<FieldError> {
    let name = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut errors = Vec::new();
    if !name.is_empty() {
        errors.extend(valid_ip_errors(name, &Path::new("metadata").child("name")));
    }
    let at = Path::new("spec").child("parentRef");
    let Some(reference) = obj
        .get("spec")
        .and_then(|s| s.get("parentRef"))
        .filter(|r| !r.is_null())
    else {
        errors.push(FieldError::required(at, ""));
        return errors;
    };
    let r = Some(reference);
    let group = str_at(r, "group");
    if !group.is_empty() {
        for message in dns1123_subdomain_name_errors(group) {
            errors.push(FieldError::invalid(at.child("group"), group, message));
        }
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let value = str_at(r, key);
        if value.is_empty() {
            if required {
                errors.push(FieldError::required(at.child(key), ""));
            }
            continue;
        }
        for message in path_segment_errors(value, false) {
            errors.push(FieldError::invalid(at.child(key), value, message));
        }
    }
    errors
}

fn cidrs(obj: &Object) -> Vec<&str> {
    list_at(obj.get("spec"), "cidrs")
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
        .collect()
}

/// `netutils.IPFamilyOfCIDRString`: whether the CIDR is IPv4 (an IPv4-mapped address is), or
/// `None` when it does not parse.
fn family(cidr: &str) -> Option<bool> {
    let (ip, _) = sloppy_cidr(cidr)?;
    Some(match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    })
}

/// `validateServiceCIDRSpec`.
fn service_cidr_spec(obj: &Object) -> Vec<FieldError> {
    let at = Path::new("spec").child("cidrs");
    let list = cidrs(obj);
    if list.is_empty() {
        return vec![FieldError::required(at, "at least one CIDR required")];
    }
    if list.len() > 2 {
        let spec = format!(
            r#"{{"CIDRs":{}}}"#,
            string_list_json(list_at(obj.get("spec"), "cidrs"))
        );
        return vec![FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(spec),
            "may only hold up to 2 values",
        )];
    }
    let mut errors = Vec::new();
    for (i, cidr) in list.iter().enumerate() {
        errors.extend(valid_cidr_errors(cidr, &at.index(i)));
    }
    if let [first, second] = list.as_slice()
        && family(first).is_some()
        && family(first) == family(second)
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(string_list_json(list_at(obj.get("spec"), "cidrs"))),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    errors
}

/// `ValidateServiceCIDRUpdate`: the CIDRs unchanged, or a second family added.
fn service_cidr_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let (now, before) = (cidrs(new), cidrs(old));
    let at = Path::new("spec").child("cidrs");
    let immutable =
        |i: usize, value: &str| FieldError::invalid(at.index(i), value, "field is immutable");
    if now.len() == before.len() {
        return (0..now.len())
            .filter(|&i| now[i] != before[i])
            .map(|i| immutable(i, now[i]))
            .collect();
    }
    if before.len() == 1 && now.len() == 2 {
        let mut errors = Vec::new();
        if now[0] != before[0] {
            errors.push(immutable(0, now[0]));
        }
        errors.extend(service_cidr_spec(new));
        return errors;
    }
    let list = match new.get("spec").and_then(|s| s.get("cidrs")) {
        Some(Value::Array(list)) => string_list_json(list),
        _ => "null".to_owned(),
    };
    vec![FieldError::new(
        ErrorType::Invalid,
        at,
        BadValue::Raw(list),
        "field is immutable",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_and_cidrs_must_be_canonical() {
        let at = Path::new("x");
        let bodies = |errors: Vec<FieldError>| -> Vec<String> {
            errors.iter().map(FieldError::body).collect()
        };
        assert_eq!(
            bodies(valid_ip_errors("2001:DB8::1", &at)),
            ["Invalid value: \"2001:DB8::1\": must be in canonical form (\"2001:db8::1\")"]
        );
        assert!(valid_ip_errors("192.0.2.1", &at).is_empty());
        assert_eq!(
            bodies(valid_cidr_errors("2001:DB8::/64", &at)),
            ["Invalid value: \"2001:DB8::/64\": must be in canonical form (\"2001:db8::/64\")"]
        );
    }

    #[test]
    fn cidr_families_are_read_sloppily() {
        assert_eq!(family("10.0.0.1/24"), Some(true));
        assert_eq!(family("2001:db8::/64"), Some(false));
        assert_eq!(family("bad"), None);
    }
}
