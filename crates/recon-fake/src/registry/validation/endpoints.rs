//! Endpoints (`ValidateEndpoints` of `pkg/apis/core/validation/validation.go`) and
//! EndpointSlices (`pkg/apis/discovery/validation/validation.go`), as their strategies run them
//! on create and update (`pkg/registry/core/endpoint/strategy.go`,
//! `pkg/registry/discovery/endpointslice/strategy.go`). On update, a list that did not change
//! keeps the errors older servers let in to themselves.
//!
//! Not checked: an EndpointSlice's `deprecatedTopology` (its labels reach validation already
//! converted, and kube-apiserver 1.36 reports nothing for an invalid key).

use std::net::IpAddr;

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, label_value_errors,
};

use super::pod::invalid_int;
use super::ports::port_num_errors;
use super::read::{list_at, str_at};
use super::service_addresses::{endpoint_ip_errors, legacy_ip_errors, sloppy_ip};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::{Object, list_items};

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_HINTS: usize = 8;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Endpoints") | ("discovery.k8s.io", "EndpointSlice")
    )
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    if kind == "Endpoints" {
        endpoints(obj, None)
    } else {
        endpoint_slice(obj, None)
    }
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "Endpoints" {
        return endpoints(new, Some(old));
    }
    let mut errors = endpoint_slice(new, Some(old));
    let address_type = |obj: &Object| {
        obj.get("addressType")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (now, before) = (address_type(new), address_type(old));
    if now != before {
        errors.push(FieldError::invalid(
            "addressType",
            &now,
            "field is immutable",
        ));
    }
    errors
}

/// `ValidateEndpoints`: each subset's addresses and ports.
fn endpoints(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let subsets = obj.get("subsets");
    let mut errors = Vec::new();
    let at = Path::new("subsets");
    for (i, subset) in list_items(subsets).iter().enumerate() {
        let here = at.index(i);
        let s = Some(subset);
        let (ready, not_ready) = (list_at(s, "addresses"), list_at(s, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            errors.push(FieldError::required(
                &here,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (key, addresses) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, address) in addresses.iter().enumerate() {
                errors.extend(endpoint_address(address, &here.child(key).index(j)));
            }
        }
        let ports = list_at(s, "ports");
        for (j, port) in ports.iter().enumerate() {
            errors.extend(endpoint_port(
                port,
                ports.len() > 1,
                &here.child("ports").index(j),
            ));
        }
    }
    if !errors.is_empty() && old.is_some_and(|old| old.get("subsets") == subsets) {
        return Vec::new();
    }
    errors
}

/// `validateEndpointAddress`.
fn endpoint_address(address: &Value, at: &Path) -> Vec<FieldError> {
    let a = Some(address);
    let ip = str_at(a, "ip");
    let (_, mut errors) = legacy_ip_errors(ip, &at.child("ip"), &[]);
    let hostname = str_at(a, "hostname");
    if !hostname.is_empty() {
        for message in dns1123_label_errors(hostname) {
            errors.push(FieldError::invalid(at.child("hostname"), hostname, message));
        }
    }
    if let Some(node) = address.get("nodeName").and_then(Value::as_str) {
        for message in dns1123_subdomain_name_errors(node) {
            errors.push(FieldError::invalid(at.child("nodeName"), node, message));
        }
    }
    errors.extend(endpoint_ip_errors(ip, &at.child("ip")));
    errors
}

/// `validateEndpointPort`.
fn endpoint_port(port: &Value, name_required: bool, at: &Path) -> Vec<FieldError> {
    let p = Some(port);
    let mut errors = Vec::new();
    let name = str_at(p, "name");
    if name_required && name.is_empty() {
        errors.push(FieldError::required(at.child("name"), ""));
    } else if !name.is_empty() {
        for message in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(at.child("name"), name, message));
        }
    }
    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
    for message in port_num_errors(number) {
        errors.push(invalid_int(&at.child("port"), number, &message));
    }
    errors.extend(protocol_errors(port, at));
    errors.extend(app_protocol_errors(port, at));
    errors
}

fn protocol_errors(port: &Value, at: &Path) -> Option<FieldError> {
    match port.get("protocol").and_then(Value::as_str) {
        None | Some("") => Some(FieldError::required(at.child("protocol"), "")),
        Some(protocol) if !PROTOCOLS.contains(&protocol) => Some(FieldError::not_supported(
            at.child("protocol"),
            protocol,
            PROTOCOLS,
        )),
        Some(_) => None,
    }
}

/// `ValidateQualifiedName` of a port's `appProtocol`.
fn app_protocol_errors(port: &Value, at: &Path) -> Vec<FieldError> {
    let Some(app) = port.get("appProtocol").and_then(Value::as_str) else {
        return Vec::new();
    };
    label_key_errors(app)
        .into_iter()
        .map(|message| FieldError::invalid(at.child("appProtocol"), app, message))
        .collect()
}

/// `ValidateEndpointSlice`: the address type, the ports, then the endpoints.
fn endpoint_slice(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let address_type = obj.get("addressType").and_then(Value::as_str).unwrap_or("");
    if address_type.is_empty() {
        errors.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errors.push(FieldError::not_supported(
            "addressType",
            address_type,
            ADDRESS_TYPES,
        ));
    }
    errors.extend(slice_ports(obj.get("ports")));
    let endpoints = obj.get("endpoints");
    let endpoint_errors = slice_endpoints(endpoints, address_type);
    if endpoint_errors.is_empty() || !old.is_some_and(|old| old.get("endpoints") == endpoints) {
        errors.extend(endpoint_errors);
    }
    errors
}

fn too_many(at: &Path, actual: usize, max: usize) -> FieldError {
    FieldError::too_many(at, actual as i64, max as i64)
}

fn duplicate(at: &Path, value: &str) -> FieldError {
    FieldError::new(
        ErrorType::Duplicate,
        at,
        BadValue::Str(value.to_owned()),
        "",
    )
}

/// `validatePorts` of a slice: names unique (the defaulted empty one too).
fn slice_ports(ports: Option<&Value>) -> Vec<FieldError> {
    let ports = list_items(ports);
    let at = Path::new("ports");
    if ports.len() > MAX_PORTS {
        return vec![too_many(&at, ports.len(), MAX_PORTS)];
    }
    let mut errors = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let here = at.index(i);
        let name = str_at(Some(port), "name");
        if !name.is_empty() {
            for message in dns1123_label_errors(name) {
                errors.push(FieldError::invalid(here.child("name"), name, message));
            }
        }
        if names.contains(&name) {
            errors.push(duplicate(&here.child("name"), name));
        } else {
            names.push(name);
        }
        errors.extend(protocol_errors(port, &here));
        errors.extend(app_protocol_errors(port, &here));
    }
    errors
}

/// `validateEndpoints` of a slice.
fn slice_endpoints(endpoints: Option<&Value>, address_type: &str) -> Vec<FieldError> {
    let endpoints = list_items(endpoints);
    let at = Path::new("endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![too_many(&at, endpoints.len(), MAX_ENDPOINTS)];
    }
    let mut errors = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let here = at.index(i);
        let e = Some(endpoint);
        let addresses_at = here.child("addresses");
        let addresses = list_at(e, "addresses");
        if addresses.is_empty() {
            errors.push(FieldError::required(
                &addresses_at,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errors.push(too_many(&addresses_at, addresses.len(), MAX_ADDRESSES));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            errors.extend(slice_address(address, address_type, &addresses_at, j));
        }
        if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
            for message in dns1123_subdomain_name_errors(node) {
                errors.push(FieldError::invalid(here.child("nodeName"), node, message));
            }
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            for message in dns1123_label_errors(hostname) {
                errors.push(FieldError::invalid(
                    here.child("hostname"),
                    hostname,
                    message,
                ));
            }
        }
        if let Some(hints) = endpoint.get("hints").filter(|h| h.is_object()) {
            errors.extend(hint_errors(hints, &here.child("hints")));
        }
    }
    errors
}

/// One address of a slice, checked as its address type says.
fn slice_address(address: &str, address_type: &str, at: &Path, index: usize) -> Vec<FieldError> {
    let here = at.index(index);
    match address_type {
        "IPv4" | "IPv6" => {
            let v4 = address_type == "IPv4";
            let errors = if v4 {
                legacy_ip_errors(address, &here, &[]).1
            } else if sloppy_ip(address).is_none() {
                vec![FieldError::invalid(
                    &here,
                    address,
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                )]
            } else {
                Vec::new()
            };
            if !errors.is_empty() {
                return errors;
            }
            let mut errors = Vec::new();
            let family_matches = match sloppy_ip(address) {
                Some(IpAddr::V4(_)) => v4,
                Some(IpAddr::V6(_)) => !v4,
                None => false,
            };
            if !family_matches {
                let family = if v4 { "IPv4" } else { "IPv6" };
                // The error names the list, not the address (validation.go's `addressPath`).
                errors.push(FieldError::invalid(
                    at,
                    address,
                    format!("must be an {family} address"),
                ));
            }
            errors.extend(endpoint_ip_errors(address, &here));
            errors
        }
        "FQDN" => fully_qualified_domain_name_errors(address, &here),
        _ => Vec::new(),
    }
}

/// `validation.IsFullyQualifiedDomainName`: a subdomain of at least two labels, a trailing dot
/// allowed; the first problem only.
fn fully_qualified_domain_name_errors(name: &str, at: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(at, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errors = dns1123_subdomain_name_errors(name);
    if !errors.is_empty() {
        return vec![FieldError::invalid(at, name, errors.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            at,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let errors = dns1123_label_errors(label);
        if !errors.is_empty() {
            return vec![FieldError::invalid(at, label, errors.join(","))];
        }
    }
    Vec::new()
}

/// What a hint's name must be: its errors.
type NameCheck = fn(&str) -> Vec<String>;

/// `validateHints`: zone names unique label values, node names unique node names.
fn hint_errors(hints: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let zones: NameCheck = label_value_errors;
    let nodes: NameCheck = dns1123_subdomain_name_errors;
    for (key, check) in [("forZones", zones), ("forNodes", nodes)] {
        let list = list_at(Some(hints), key);
        let list_at_path = at.child(key);
        if list.len() > MAX_HINTS {
            errors.push(too_many(&list_at_path, list.len(), MAX_HINTS));
            return errors;
        }
        let mut seen: Vec<&str> = Vec::new();
        for (i, hint) in list.iter().enumerate() {
            let name_at = list_at_path.index(i).child("name");
            let name = str_at(Some(hint), "name");
            if seen.contains(&name) {
                errors.push(duplicate(&name_at, name));
            } else {
                seen.push(name);
            }
            for message in check(name) {
                errors.push(FieldError::invalid(&name_at, name, message));
            }
        }
    }
    errors
}
