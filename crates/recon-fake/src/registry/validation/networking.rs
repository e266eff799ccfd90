//! networking.k8s.io: NetworkPolicies and Ingresses (`pkg/apis/networking/validation`).

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_label_errors, dns1123_subdomain_name_errors};

use super::ports::{port_name_errors, port_num_errors};
use super::read::{list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// The errors of creating `obj`, a `kind` of networking.k8s.io (IPAddresses and ServiceCIDRs
/// are [`super::networking_ips`]'s), and with `old` of updating it.
pub(super) fn validate(kind: &str, obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    match kind {
        "NetworkPolicy" => validate_network_policy(obj),
        "Ingress" => validate_ingress(obj, old),
        _ => Vec::new(),
    }
}

/// `ValidateNetworkPolicySpec`: ports, peers and policy types (the selectors' and IP blocks'
/// own rules are not checked here).
fn validate_network_policy(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let spec_path = Path::new("spec");
    for (direction, peers_key) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list_at(spec, direction).iter().enumerate() {
            let rule_path = spec_path.child(direction).index(i);
            for (j, port) in list_at(Some(rule), "ports").iter().enumerate() {
                errors.extend(network_policy_port_errors(
                    port,
                    &rule_path.child("ports").index(j),
                ));
            }
            for (j, peer) in list_at(Some(rule), peers_key).iter().enumerate() {
                errors.extend(network_policy_peer_errors(
                    peer,
                    &rule_path.child(peers_key).index(j),
                ));
            }
        }
    }
    let types = list_at(spec, "policyTypes");
    let types_path = spec_path.child("policyTypes");
    if types.len() > 2 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &types_path,
            BadValue::Raw(Value::Array(types.to_vec().into()).to_string()),
            "may not specify more than two policyTypes",
        ));
        return errors;
    }
    for (i, ty) in types.iter().enumerate() {
        let ty = ty.as_str().unwrap_or("");
        if ty != "Ingress" && ty != "Egress" {
            errors.push(FieldError::not_supported(
                types_path.index(i),
                ty,
                &["Ingress", "Egress"],
            ));
        }
    }
    errors
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port_errors(port: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str)
        && !["TCP", "UDP", "SCTP"].contains(&protocol)
    {
        errors.push(FieldError::not_supported_named(
            path.child("protocol"),
            protocol,
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    let end_path = path.child("endPort");
    match port.get("port").filter(|v| !v.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &end_path,
                    BadValue::int(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for message in port_name_errors(name) {
                errors.push(FieldError::invalid(path.child("port"), name, message));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            for message in port_num_errors(number) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path.child("port"),
                    BadValue::int(number),
                    message,
                ));
            }
            if let Some(end) = end {
                if end < number {
                    // The real one prints `port` as the value.
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &end_path,
                        BadValue::int(number),
                        "must be greater than or equal to `port`",
                    ));
                }
                for message in port_num_errors(end) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &end_path,
                        BadValue::int(end),
                        message,
                    ));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &end_path,
                    BadValue::int(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errors
}

/// `ValidateNetworkPolicyPeer`: one kind of peer, an IP block alone.
fn network_policy_peer_errors(peer: &Value, path: &Path) -> Vec<FieldError> {
    let set = |key: &str| peer.get(key).is_some_and(|v| !v.is_null());
    let count = ["podSelector", "namespaceSelector", "ipBlock"]
        .iter()
        .filter(|k| set(k))
        .count();
    if count == 0 {
        vec![FieldError::required(path, "must specify a peer")]
    } else if count > 1 && set("ipBlock") {
        vec![FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateIngressSpec`: rules or a default backend, hosts, paths, backends and TLS (wildcard
/// rule hosts are not checked here); `old` on update.
fn validate_ingress(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let spec_path = Path::new("spec");
    let rules = list_at(spec, "rules");
    let backend = spec
        .and_then(|s| s.get("defaultBackend"))
        .filter(|v| !v.is_null());
    if rules.is_empty() && backend.is_none() {
        let value = if spec.and_then(|s| s.get("rules")).is_some() {
            "[]"
        } else {
            "null"
        };
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec",
            BadValue::Raw(value.to_owned()),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = backend {
        errors.extend(ingress_backend_errors(
            backend,
            &spec_path.child("defaultBackend"),
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = spec_path.child("rules").index(i);
        let host = str_at(Some(rule), "host");
        if !host.is_empty() && !host.contains('*') {
            if host.parse::<std::net::IpAddr>().is_ok() {
                errors.push(FieldError::invalid(
                    rule_path.child("host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            for message in dns1123_subdomain_name_errors(host) {
                errors.push(FieldError::invalid(rule_path.child("host"), host, message));
            }
        }
        let Some(http) = rule.get("http").filter(|v| !v.is_null()) else {
            continue;
        };
        let http_path = rule_path.child("http");
        let paths = list_at(Some(http), "paths");
        if paths.is_empty() {
            errors.push(FieldError::required(http_path.child("paths"), ""));
        }
        for (j, path) in paths.iter().enumerate() {
            errors.extend(ingress_path_errors(
                path,
                &http_path.child("paths").index(j),
            ));
        }
    }
    errors.extend(ingress_tls_errors(spec, old));
    if let Some(class) = spec
        .and_then(|s| s.get("ingressClassName"))
        .and_then(Value::as_str)
    {
        for message in dns1123_subdomain_name_errors(class) {
            errors.push(FieldError::invalid(
                spec_path.child("ingressClassName"),
                class,
                message,
            ));
        }
    }
    errors
}

/// `validateTLSSecretName`: an empty name is not checked.
fn tls_secret_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return Vec::new();
    }
    dns1123_subdomain_name_errors(name)
}

/// `validation.IsWildcardDNS1123Subdomain`: `*.` then a DNS subdomain, 253 characters at most.
fn wildcard_subdomain_errors(host: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if host.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    // Only the form is checked here, the length was above.
    let valid = host.strip_prefix("*.").is_some_and(|rest| {
        !rest.is_empty()
            && dns1123_subdomain_name_errors(rest)
                .iter()
                .all(|m| m.starts_with("must be no more than"))
    });
    if !valid {
        errors.push(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS \
             subdomain, which must consist of lower case alphanumeric characters, '-' or '.' \
             and end with an alphanumeric character (e.g. '*.example.com', regex used for \
             validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned(),
        );
    }
    errors
}

/// `validateIngressTLS`: each host a DNS subdomain, or a wildcard when it has a `*`; each
/// secret name a DNS subdomain, unless the old Ingress already had an invalid one
/// (`allowInvalidSecretName`, for objects stored before the rule).
fn ingress_tls_errors(spec: Option<&Value>, old: Option<&Object>) -> Vec<FieldError> {
    let allow_invalid_secret = list_at(old.and_then(|o| o.get("spec")), "tls")
        .iter()
        .any(|tls| !tls_secret_name_errors(str_at(Some(tls), "secretName")).is_empty());
    let mut errors = Vec::new();
    let path = Path::new("spec").child("tls");
    for (i, tls) in list_at(spec, "tls").iter().enumerate() {
        for (j, host) in list_at(Some(tls), "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            let messages = if host.contains('*') {
                wildcard_subdomain_errors(host)
            } else {
                dns1123_subdomain_name_errors(host)
            };
            for message in messages {
                errors.push(FieldError::invalid(
                    path.index(i).child("hosts").index(j),
                    host,
                    message,
                ));
            }
        }
        if allow_invalid_secret {
            continue;
        }
        let secret = str_at(Some(tls), "secretName");
        for message in tls_secret_name_errors(secret) {
            errors.push(FieldError::invalid(
                path.index(i).child("secretName"),
                secret,
                message,
            ));
        }
    }
    errors
}

/// `validateHTTPIngressPath`.
fn ingress_path_errors(path: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(ty) = path.get("pathType").filter(|v| !v.is_null()) else {
        return vec![FieldError::required(
            at.child("pathType"),
            "pathType must be specified",
        )];
    };
    let value = str_at(Some(path), "path");
    let path_path = at.child("path");
    let absolute = || FieldError::invalid(&path_path, value, "must be an absolute path");
    match ty.as_str().unwrap_or("") {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errors.push(absolute());
            }
            if !value.is_empty() {
                for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(sequence) {
                        errors.push(FieldError::invalid(
                            &path_path,
                            value,
                            format!("must not contain '{sequence}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        errors.push(FieldError::invalid(
                            &path_path,
                            value,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.push(absolute());
            }
        }
        other => errors.push(FieldError::not_supported(
            at.child("pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    let backend = path.get("backend").unwrap_or(&Value::Null);
    errors.extend(ingress_backend_errors(backend, &at.child("backend")));
    errors
}

/// `validateIngressBackend`: a resource or a service, and a service's name and port.
fn ingress_backend_errors(backend: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let resource = backend.get("resource").filter(|v| !v.is_null());
    let service = backend.get("service").filter(|v| !v.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(_), None) => {}
        (None, Some(service)) => {
            let service_path = path.child("service");
            let name = str_at(Some(service), "name");
            if name.is_empty() {
                errors.push(FieldError::required(service_path.child("name"), ""));
            } else {
                // RelaxedServiceNameValidation is on in 1.36: a DNS-1123 label, as Services
                // are named (not DNS-1035 as before).
                for message in dns1123_label_errors(name) {
                    errors.push(FieldError::invalid(
                        service_path.child("name"),
                        name,
                        message,
                    ));
                }
            }
            let port = service.get("port");
            let port_name = str_at(port, "name");
            let number = port
                .and_then(|p| p.get("number"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let port_path = service_path.child("port");
            if !port_name.is_empty() && number != 0 {
                errors.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !port_name.is_empty() {
                for message in port_name_errors(port_name) {
                    errors.push(FieldError::invalid(
                        port_path.child("name"),
                        port_name,
                        message,
                    ));
                }
            } else if number != 0 {
                for message in port_num_errors(number) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        port_path.child("number"),
                        BadValue::int(number),
                        message,
                    ));
                }
            } else {
                errors.push(FieldError::required(
                    path,
                    "port name or number is required",
                ));
            }
        }
        (None, None) => errors.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_hosts_start_with_star_dot() {
        assert!(wildcard_subdomain_errors("*.example.com").is_empty());
        assert_eq!(wildcard_subdomain_errors("a.*.com").len(), 1);
        assert_eq!(wildcard_subdomain_errors("*.").len(), 1);
    }
}
