//! Pods, PodTemplates and the pod specs and templates other kinds embed
//! (`pkg/apis/core/validation/validation.go`: `ValidatePodCreate`, `ValidatePodSpec`,
//! `ValidatePodTemplateSpec`, ...).
//!
//! What is checked is the part of `ValidatePodSpec` operators hit: containers (names, images,
//! ports, environment, volume mounts (the pod's volumes, paths, propagation), resources,
//! probes and lifecycle hooks ([`super::probe_handlers`]), host ports, security contexts),
//! volumes (names, one source each, what it holds: [`super::volume_sources`]), the restart and
//! DNS policies, node selector, the pod's security context ([`super::pod_security`]),
//! affinity, DNS config, readiness and scheduling gates, topology spread, names (node, host,
//! subdomain, priority and runtime class), tolerations, host aliases, preemption policy,
//! HostProcess containers ([`super::windows_options`]), `hostUsers: false`
//! ([`super::user_namespaces`]) and the OS ([`super::pod_os`]); a Pod's own rules (what an
//! update may change, its status) are [`super::pod_object`]'s. Not checked: image pull
//! secrets. The value is the decoded and defaulted object, so fields the defaulting always
//! fills (`terminationMessagePolicy`, `protocol`, ...) are only checked for their values.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, label_value_errors,
};

use super::pod_object;
use super::pod_os;
use super::pod_security;
use super::probe_handlers;
use super::read::{int_at, is_set, list_at, str_at};
use super::volume_sources;
use super::workloads::label_selector;
use super::{user_namespaces, windows_options};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::quantity;
use crate::wire::object::Object;

pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pod_object::validate_create(obj),
        // ValidatePodTemplate
        "PodTemplate" => template_spec(obj.get("template"), &Path::new("template")),
        _ => Vec::new(),
    }
}

pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pod_object::validate_update(new, old),
        // ValidatePodTemplateUpdate: the new template is validated as on create.
        "PodTemplate" => template_spec(new.get("template"), &Path::new("template")),
        _ => Vec::new(),
    }
}

pub(super) fn validate_status_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pod_object::validate_status_update(new, old),
        _ => Vec::new(),
    }
}

/// `field.Invalid` with a number as the value.
pub(super) fn invalid_int(path: &Path, value: i64, detail: &str) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(value.to_string()),
        detail,
    )
}

/// `ValidateNonnegativeField`.
pub(super) fn non_negative(v: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    int_at(v, key)
        .filter(|n| *n < 0)
        .map(|n| invalid_int(&path.child(key), n, "must be greater than or equal to 0"))
}

/// A `map[string]string` as `field.Invalid` prints it (as JSON, keys sorted as `encoding/json`
/// sorts them): `{"a":"b","c":"d"}`, `null` when there is none.
pub(super) fn json_string_map(map: Option<&Value>) -> String {
    let Some(map) = map.and_then(Value::as_object) else {
        return "null".to_owned();
    };
    // `json.Marshal`: keys sorted, `<`, `>` and `&` escaped.
    let strings: recon_apimachinery::json::Map = map
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str().unwrap_or(""))))
        .collect();
    recon_apimachinery::go_json::go_json(&Value::Object(strings))
}

/// `ValidatePodTemplateSpec`: the template's labels and annotations, then its pod spec.
pub(super) fn template_spec(template: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let meta = template.and_then(|t| t.get("metadata"));
    let mut errors = labels(meta.and_then(|m| m.get("labels")), &path.child("labels"));
    let spec_path = path.child("spec");
    errors.extend(pod_spec(
        template.and_then(|t| t.get("spec")),
        None,
        &spec_path,
    ));
    if !list_at(template.and_then(|t| t.get("spec")), "ephemeralContainers").is_empty() {
        errors.push(FieldError::forbidden(
            spec_path.child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errors
}

/// `unversionedvalidation.ValidateLabels`: each key, then its value, in key order.
pub(super) fn labels(labels: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(labels) = labels.and_then(Value::as_object) else {
        return errors;
    };
    for (key, value) in labels {
        for message in label_key_errors(key) {
            errors.push(FieldError::invalid(path, key, message));
        }
        let value = value.as_str().unwrap_or("");
        for message in label_value_errors(value) {
            errors.push(FieldError::invalid(path, value, message));
        }
    }
    errors
}

/// `ValidatePodSpec`, in its order: grace period, volumes, containers, init containers, the
/// restart and DNS policies, node selector, security context, affinity, DNS config, readiness
/// and scheduling gates, topology spread, service account and node names, active deadline,
/// host name and subdomain, tolerations, host aliases, priority and runtime class names,
/// preemption policy, OS. `pod` is the name of the Pod whose spec this is (`podMeta`,
/// `opts.ResourceIsPod`), `None` for a template.
pub(super) fn pod_spec(spec: Option<&Value>, pod: Option<&str>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !is_set(spec, "terminationGracePeriodSeconds") {
        errors.push(FieldError::required(
            path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let (volume_names, volume_errors) =
        volumes(list_at(spec, "volumes"), pod, &path.child("volumes"));
    errors.extend(volume_errors);
    let containers = list_at(spec, "containers");
    // Unless the pod says otherwise, containers share the host's user namespace
    // (`hostUsers` defaults to true), which forbids an unmasked /proc.
    let host_users = spec
        .and_then(|s| s.get("hostUsers"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let context = ContainerContext {
        volumes: &volume_names,
        host_users,
        grace_period: int_at(spec, "terminationGracePeriodSeconds"),
    };
    errors.extend(regular_containers(
        containers,
        &context,
        &path.child("containers"),
    ));
    errors.extend(init_containers(
        list_at(spec, "initContainers"),
        containers,
        &context,
        &path.child("initContainers"),
    ));
    errors.extend(host_network_ports(
        spec,
        pod.is_some(),
        &path.child("containers"),
    ));
    errors.extend(restart_policy(
        str_at(spec, "restartPolicy"),
        &path.child("restartPolicy"),
    ));
    // validateDNSPolicy
    let dns_path = path.child("dnsPolicy");
    match str_at(spec, "dnsPolicy") {
        "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        "" => errors.push(FieldError::required(dns_path, "")),
        other => errors.push(FieldError::not_supported(
            dns_path,
            other,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    errors.extend(labels(
        spec.and_then(|s| s.get("nodeSelector")),
        &path.child("nodeSelector"),
    ));
    errors.extend(pod_security::pod_security_context(
        spec,
        &path.child("securityContext"),
    ));
    errors.extend(affinity(
        spec.and_then(|s| s.get("affinity")),
        &path.child("affinity"),
    ));
    errors.extend(dns_config(spec, &path.child("dnsConfig")));
    // validateReadinessGates: condition types are qualified names.
    for (i, gate) in list_at(spec, "readinessGates").iter().enumerate() {
        let condition = str_at(Some(gate), "conditionType");
        let at = path.child("readinessGates").index(i).child("conditionType");
        for message in label_key_errors(condition) {
            errors.push(FieldError::invalid(&at, condition, message));
        }
    }
    // validateSchedulingGates: qualified names, none repeated.
    let mut gates = HashSet::new();
    for (i, gate) in list_at(spec, "schedulingGates").iter().enumerate() {
        let name = str_at(Some(gate), "name");
        let at = path.child("schedulingGates").index(i);
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(&at, name, message));
        }
        if !gates.insert(name) {
            errors.push(duplicate(&at, name));
        }
    }
    errors.extend(topology_spread_constraints(
        list_at(spec, "topologySpreadConstraints"),
        &path.child("topologySpreadConstraints"),
    ));
    errors.extend(windows_options::host_process_pod(spec, path));
    errors.extend(user_namespaces::host_users(spec, path));
    // ValidateServiceAccountName and ValidateNodeName: DNS subdomains.
    for key in ["serviceAccountName", "nodeName"] {
        let value = str_at(spec, key);
        if !value.is_empty() {
            for message in dns1123_subdomain_name_errors(value) {
                errors.push(FieldError::invalid(path.child(key), value, message));
            }
        }
    }
    if let Some(seconds) = int_at(spec, "activeDeadlineSeconds")
        && !(1..=i64::from(i32::MAX)).contains(&seconds)
    {
        errors.push(invalid_int(
            &path.child("activeDeadlineSeconds"),
            seconds,
            &format!("must be between 1 and {}, inclusive", i32::MAX),
        ));
    }
    for key in ["hostname", "subdomain"] {
        let value = str_at(spec, key);
        if !value.is_empty() {
            for message in dns1123_label_errors(value) {
                errors.push(FieldError::invalid(path.child(key), value, message));
            }
        }
    }
    errors.extend(tolerations(
        list_at(spec, "tolerations"),
        &path.child("tolerations"),
    ));
    // ValidateHostAliases: an IP each, host names DNS subdomains.
    for (i, alias) in list_at(spec, "hostAliases").iter().enumerate() {
        let at = path.child("hostAliases").index(i);
        let ip = str_at(Some(alias), "ip");
        if !is_legacy_ip(ip) {
            errors.push(FieldError::invalid(at.child("ip"), ip, IP_MESSAGE));
        }
        for (j, hostname) in list_at(Some(alias), "hostnames").iter().enumerate() {
            let hostname = hostname.as_str().unwrap_or("");
            for message in dns1123_subdomain_name_errors(hostname) {
                errors.push(FieldError::invalid(
                    at.child("hostnames").index(j),
                    hostname,
                    message,
                ));
            }
        }
    }
    // ValidatePriorityClassName: a DNS subdomain.
    let priority = str_at(spec, "priorityClassName");
    if !priority.is_empty() {
        for message in dns1123_subdomain_name_errors(priority) {
            errors.push(FieldError::invalid(
                path.child("priorityClassName"),
                priority,
                message,
            ));
        }
    }
    // ValidateRuntimeClassName: a DNS subdomain (even empty, when set).
    if is_set(spec, "runtimeClassName") {
        let class = str_at(spec, "runtimeClassName");
        for message in dns1123_subdomain_name_errors(class) {
            errors.push(FieldError::invalid(
                path.child("runtimeClassName"),
                class,
                message,
            ));
        }
    }
    // ValidatePreemptionPolicy
    if is_set(spec, "preemptionPolicy") {
        let policy_path = path.child("preemptionPolicy");
        match str_at(spec, "preemptionPolicy") {
            "PreemptLowerPriority" | "Never" => {}
            "" => errors.push(FieldError::required(policy_path, "")),
            other => errors.push(FieldError::not_supported(
                policy_path,
                other,
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    errors.extend(pod_os::validate(spec, path));
    errors
}

/// `validateAffinity`: node affinity, then pod affinity and anti-affinity.
fn affinity(affinity: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(affinity) = affinity.filter(|a| a.is_object()) else {
        return errors;
    };
    // validateNodeAffinity
    if let Some(node) = affinity.get("nodeAffinity").filter(|n| n.is_object()) {
        let node_path = path.child("nodeAffinity");
        let required_key = "requiredDuringSchedulingIgnoredDuringExecution";
        if let Some(required) = node.get(required_key).filter(|r| r.is_object()) {
            errors.extend(node_selector(required, &node_path.child(required_key)));
        }
        // ValidatePreferredSchedulingTerms
        let preferred_key = "preferredDuringSchedulingIgnoredDuringExecution";
        let preferred_path = node_path.child(preferred_key);
        for (i, term) in list_at(Some(node), preferred_key).iter().enumerate() {
            errors.extend(weight(term, &preferred_path.index(i)));
            errors.extend(node_selector_term(
                term.get("preference"),
                &preferred_path.index(i).child("preference"),
            ));
        }
    }
    // validatePodAffinity and validatePodAntiAffinity check the same terms.
    for key in ["podAffinity", "podAntiAffinity"] {
        let Some(pod) = affinity.get(key).filter(|p| p.is_object()) else {
            continue;
        };
        let pod_path = path.child(key);
        let required_key = "requiredDuringSchedulingIgnoredDuringExecution";
        for (i, term) in list_at(Some(pod), required_key).iter().enumerate() {
            errors.extend(pod_affinity_term(
                term,
                &pod_path.child(required_key).index(i),
            ));
        }
        // validateWeightedPodAffinityTerms
        let preferred_key = "preferredDuringSchedulingIgnoredDuringExecution";
        for (i, term) in list_at(Some(pod), preferred_key).iter().enumerate() {
            let at = pod_path.child(preferred_key).index(i);
            errors.extend(weight(term, &at));
            errors.extend(pod_affinity_term(
                term.get("podAffinityTerm").unwrap_or(&Value::Null),
                &at.child("podAffinityTerm"),
            ));
        }
    }
    errors
}

/// The weight of a preferred term: between 1 and 100.
fn weight(term: &Value, path: &Path) -> Option<FieldError> {
    let weight = int_at(Some(term), "weight").unwrap_or(0);
    (!(1..=100).contains(&weight))
        .then(|| invalid_int(&path.child("weight"), weight, "must be in the range 1-100"))
}

/// `ValidateNodeSelector`: at least one term, each checked.
pub(super) fn node_selector(selector: &Value, path: &Path) -> Vec<FieldError> {
    let terms_path = path.child("nodeSelectorTerms");
    let terms = list_at(Some(selector), "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![FieldError::required(
            terms_path,
            "must have at least one node selector term",
        )];
    }
    terms
        .iter()
        .enumerate()
        .flat_map(|(i, term)| node_selector_term(Some(term), &terms_path.index(i)))
        .collect()
}

/// `ValidateNodeSelectorTerm`: its label expressions, then its field expressions. (Label values
/// are checked as label values: `AllowInvalidLabelValueInRequiredNodeAffinity` is for updates
/// of objects that already hold invalid ones.)
fn node_selector_term(term: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let expressions_path = path.child("matchExpressions");
    for (j, requirement) in list_at(term, "matchExpressions").iter().enumerate() {
        // ValidateNodeSelectorRequirement
        let r = Some(requirement);
        let at = expressions_path.index(j);
        let values = list_at(r, "values");
        match str_at(r, "operator") {
            "In" | "NotIn" if values.is_empty() => errors.push(FieldError::required(
                at.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                errors.push(FieldError::forbidden(
                    at.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
            "Gt" | "Lt" if values.len() != 1 => errors.push(FieldError::required(
                at.child("values"),
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            other => errors.push(FieldError::invalid(
                at.child("operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = str_at(r, "key");
        for message in label_key_errors(key) {
            errors.push(FieldError::invalid(at.child("key"), key, message));
        }
        for (k, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            for message in label_value_errors(value) {
                errors.push(FieldError::invalid(
                    at.child("values").index(k),
                    value,
                    message,
                ));
            }
        }
    }
    let fields_path = path.child("matchFields");
    for (j, requirement) in list_at(term, "matchFields").iter().enumerate() {
        // ValidateNodeFieldSelectorRequirement: only metadata.name, with one value.
        let r = Some(requirement);
        let at = fields_path.index(j);
        let values = list_at(r, "values");
        match str_at(r, "operator") {
            "In" | "NotIn" if values.len() != 1 => errors.push(FieldError::required(
                at.child("values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            other => errors.push(FieldError::invalid(
                at.child("operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = str_at(r, "key");
        if key != "metadata.name" {
            errors.push(FieldError::invalid(
                at.child("key"),
                key,
                "not a valid field selector key",
            ));
            continue;
        }
        // ValidateNodeName: a DNS subdomain.
        for (k, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            for message in dns1123_subdomain_name_errors(value) {
                errors.push(FieldError::invalid(
                    at.child("values").index(k),
                    value,
                    message,
                ));
            }
        }
    }
    errors
}

/// `validatePodAffinityTerm`: the label and namespace selectors, the namespaces, then a
/// match and mismatch label keys, then a topology key that is a label name.
fn pod_affinity_term(term: &Value, path: &Path) -> Vec<FieldError> {
    let t = Some(term);
    let mut errors = Vec::new();
    // ValidatePodAffinityTermSelector
    for key in ["labelSelector", "namespaceSelector"] {
        if let Some(selector) = term.get(key).filter(|s| s.is_object()) {
            errors.extend(label_selector(selector, &path.child(key)));
        }
    }
    // ValidateNamespaceName: a DNS label, reported on `namespace`.
    for name in list_at(t, "namespaces") {
        let name = name.as_str().unwrap_or("");
        for message in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(path.child("namespace"), name, message));
        }
    }
    errors.extend(match_label_keys(term, true, path));
    let topology_key = str_at(t, "topologyKey");
    let key_path = path.child("topologyKey");
    if topology_key.is_empty() {
        errors.push(FieldError::required(&key_path, "can not be empty"));
    }
    for message in label_key_errors(topology_key) {
        errors.push(FieldError::invalid(&key_path, topology_key, message));
    }
    errors
}

/// `ValidateMatchLabelKeysAndMismatchLabelKeys` of the term or constraint `v` at `path` (its
/// `mismatchLabelKeys` only when `with_mismatch`): label names beside a label selector; no key
/// both in matchLabelKeys and matched twice by the selector (reported, as Go does, on
/// `path[i]`); no key in both lists.
fn match_label_keys(v: &Value, with_mismatch: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let selector = v.get("labelSelector").filter(|s| s.is_object());
    let keys = |key: &str| -> Vec<&str> {
        list_at(Some(v), key)
            .iter()
            .map(|k| k.as_str().unwrap_or(""))
            .collect()
    };
    let match_keys = keys("matchLabelKeys");
    let mismatch_keys = if with_mismatch {
        keys("mismatchLabelKeys")
    } else {
        Vec::new()
    };
    // validateLabelKeys, of each list
    for (field, list) in [
        ("matchLabelKeys", &match_keys),
        ("mismatchLabelKeys", &mismatch_keys),
    ] {
        if list.is_empty() {
            continue;
        }
        let at = path.child(field);
        if selector.is_none() {
            errors.push(FieldError::forbidden(
                at,
                "must not be specified when labelSelector is not set",
            ));
            continue;
        }
        for (i, key) in list.iter().enumerate() {
            for message in label_key_errors(key) {
                errors.push(FieldError::invalid(at.index(i), key, message));
            }
        }
    }
    if let Some(selector) = selector {
        let mut selector_keys: HashSet<&str> = selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .map(|labels| labels.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for expression in list_at(Some(selector), "matchExpressions") {
            let key = str_at(Some(expression), "key");
            // Go maps each key to its last index in matchLabelKeys.
            if let Some(i) = match_keys.iter().rposition(|k| *k == key)
                && selector_keys.contains(key)
            {
                errors.push(FieldError::invalid(
                    path.index(i),
                    key,
                    "exists in both matchLabelKeys and labelSelector",
                ));
            }
            selector_keys.insert(key);
        }
    }
    for (i, key) in match_keys.iter().enumerate() {
        if mismatch_keys.contains(key) {
            errors.push(FieldError::invalid(
                path.child("matchLabelKeys").index(i),
                key,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ));
        }
    }
    errors
}

/// `validatePodDNSConfig`: with dnsPolicy None a config with a nameserver is required; then at
/// most 3 nameservers, each an IP; at most 32 searches of 2048 characters together, each a
/// domain (`AllowRelaxedDNSSearchValidation`: '_' allowed, "." and a trailing dot too); options
/// named.
fn dns_config(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let config = spec
        .and_then(|s| s.get("dnsConfig"))
        .filter(|c| c.is_object());
    let nameservers = list_at(config, "nameservers");
    if str_at(spec, "dnsPolicy") == "None" {
        if config.is_none() {
            return vec![FieldError::required(
                path,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            )];
        }
        if nameservers.is_empty() {
            return vec![FieldError::required(
                path.child("nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )];
        }
    }
    let mut errors = Vec::new();
    if config.is_none() {
        return errors;
    }
    let nameservers_path = path.child("nameservers");
    if nameservers.len() > 3 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &nameservers_path,
            BadValue::Raw(Value::from(nameservers).to_string()),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, nameserver) in nameservers.iter().enumerate() {
        // IsValidIPForLegacyField
        let nameserver = nameserver.as_str().unwrap_or("");
        if !is_legacy_ip(nameserver) {
            errors.push(FieldError::invalid(
                nameservers_path.index(i),
                nameserver,
                IP_MESSAGE,
            ));
        }
    }
    let searches = list_at(config, "searches");
    let searches_path = path.child("searches");
    let all = || BadValue::Raw(Value::from(searches).to_string());
    if searches.len() > 32 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &searches_path,
            all(),
            "must not have more than 32 search paths",
        ));
    }
    let joined: usize = searches
        .iter()
        .map(|s| s.as_str().unwrap_or("").len())
        .sum::<usize>()
        + searches.len().saturating_sub(1);
    if joined > 2048 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &searches_path,
            all(),
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, search) in searches.iter().enumerate() {
        let search = search.as_str().unwrap_or("");
        if search == "." {
            continue;
        }
        let search = search.strip_suffix('.').unwrap_or(search);
        for message in dns1123_subdomain_with_underscore_errors(search) {
            errors.push(FieldError::invalid(searches_path.index(i), search, message));
        }
    }
    for (i, option) in list_at(config, "options").iter().enumerate() {
        if str_at(Some(option), "name").is_empty() {
            errors.push(FieldError::required(
                path.child("options").index(i),
                "must not be empty",
            ));
        }
    }
    errors
}

/// What `IsValidIPForLegacyField` says of a value that is no IP address.
const IP_MESSAGE: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// `netutils.ParseIPSloppy`: an IPv6 or IPv4 address, IPv4 parts allowed leading zeros.
fn is_legacy_ip(text: &str) -> bool {
    if text.contains(':') {
        return text.parse::<std::net::Ipv6Addr>().is_ok();
    }
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// `IsDNS1123SubdomainWithUnderscore`: at most 253 characters of labels that may start with
/// '_' and hold '_'.
fn dns1123_subdomain_with_underscore_errors(value: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters");
    }
    let label_ok = |label: &str| underscored_label(label.strip_prefix('_').unwrap_or(label));
    if !value.split('.').all(label_ok) {
        errors.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '_', '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')",
        );
    }
    errors
}

/// One `[a-z0-9]([-_a-z0-9]*[a-z0-9])?`: a DNS label that may also hold `_` (search domains,
/// sysctl names).
pub(super) fn underscored_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alnum(first)
                && alnum(last)
                && bytes.iter().all(|b| alnum(b) || *b == b'-' || *b == b'_')
        }
        _ => false,
    }
}

/// `validateTopologySpreadConstraints`: a positive maxSkew, a topology key, a supported
/// action, no later constraint of the same key and action, minDomains rules, node inclusion
/// policies, match label keys, then the label selector.
fn topology_spread_constraints(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, constraint) in list.iter().enumerate() {
        let c = Some(constraint);
        let at = path.index(i);
        // ValidatePositiveField
        let max_skew = int_at(c, "maxSkew").unwrap_or(0);
        if max_skew <= 0 {
            errors.push(invalid_int(
                &at.child("maxSkew"),
                max_skew,
                "must be greater than zero",
            ));
        }
        // ValidateTopologyKey
        let key = str_at(c, "topologyKey");
        if key.is_empty() {
            errors.push(FieldError::required(
                at.child("topologyKey"),
                "can not be empty",
            ));
        }
        // ValidateWhenUnsatisfiable
        let action = str_at(c, "whenUnsatisfiable");
        if !["DoNotSchedule", "ScheduleAnyway"].contains(&action) {
            errors.push(FieldError::not_supported(
                at.child("whenUnsatisfiable"),
                action,
                &["DoNotSchedule", "ScheduleAnyway"],
            ));
        }
        // ValidateSpreadConstraintNotRepeat: against the constraints after this one.
        let repeated = list[i + 1..].iter().any(|other| {
            str_at(Some(other), "topologyKey") == key
                && str_at(Some(other), "whenUnsatisfiable") == action
        });
        if repeated {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                at.child("{topologyKey, whenUnsatisfiable}"),
                BadValue::Str(format!("{{{key}, {action}}}")),
                "",
            ));
        }
        // validateMinDomains
        if let Some(min_domains) = int_at(c, "minDomains") {
            let min_path = at.child("minDomains");
            if min_domains <= 0 {
                errors.push(invalid_int(
                    &min_path,
                    min_domains,
                    "must be greater than zero",
                ));
            }
            if action != "DoNotSchedule" {
                errors.push(invalid_int(
                    &min_path,
                    min_domains,
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        // validateNodeInclusionPolicy, of both policies
        for key in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            let policy = str_at(c, key);
            if is_set(c, key) && !["Honor", "Ignore"].contains(&policy) {
                errors.push(FieldError::not_supported(
                    at.child(key),
                    policy,
                    &["Honor", "Ignore"],
                ));
            }
        }
        // With `MatchLabelKeysInPodTopologySpreadSelectorMerge`, the checks of affinity terms
        // (mismatch label keys aside).
        errors.extend(match_label_keys(constraint, false, &at));
        if let Some(selector) = constraint.get("labelSelector").filter(|s| s.is_object()) {
            errors.extend(label_selector(selector, &at.child("labelSelector")));
        }
    }
    errors
}

/// `ValidateTolerations`. (`Lt` and `Gt`, behind a feature gate, are let through unchecked.)
pub(super) fn tolerations(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, toleration) in list.iter().enumerate() {
        let t = Some(toleration);
        let at = path.index(i);
        let key = str_at(t, "key");
        let operator = str_at(t, "operator");
        let value = str_at(t, "value");
        let effect = str_at(t, "effect");
        for message in label_key_errors(key)
            .into_iter()
            .filter(|_| !key.is_empty())
        {
            errors.push(FieldError::invalid(at.child("key"), key, message));
        }
        if key.is_empty() && operator != "Exists" {
            errors.push(FieldError::invalid(
                at.child("operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if is_set(t, "tolerationSeconds") && effect != "NoExecute" {
            errors.push(FieldError::invalid(
                at.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let messages = label_value_errors(value);
                if !messages.is_empty() {
                    errors.push(FieldError::invalid(
                        at.child("operator"),
                        value,
                        messages.join(";"),
                    ));
                }
            }
            "Exists" if !value.is_empty() => errors.push(FieldError::invalid(
                at.child("operator"),
                value,
                "value must be empty when `operator` is 'Exists'",
            )),
            "Exists" | "Lt" | "Gt" => {}
            other => errors.push(FieldError::not_supported(
                at.child("operator"),
                other,
                &["Equal", "Exists"],
            )),
        }
        // validateTaintEffect, empty allowed
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errors.push(FieldError::not_supported(
                at.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errors
}

/// `validatePodHostNetworkDeps`: on the host network a container's host ports are its container
/// ports. A template may leave one 0 (the Pod's defaulting fills it in), a Pod may not.
fn host_network_ports(spec: Option<&Value>, is_pod: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if spec
        .and_then(|s| s.get("hostNetwork"))
        .and_then(Value::as_bool)
        != Some(true)
    {
        return errors;
    }
    for (i, container) in list_at(spec, "containers").iter().enumerate() {
        for (j, port) in list_at(Some(container), "ports").iter().enumerate() {
            let host = int_at(Some(port), "hostPort").unwrap_or(0);
            let container_port = int_at(Some(port), "containerPort").unwrap_or(0);
            if (is_pod || host != 0) && host != container_port {
                errors.push(invalid_int(
                    &path.index(i).child("ports").index(j).child("hostPort"),
                    host,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errors
}

/// `validateRestartPolicy`.
fn restart_policy(policy: &str, path: &Path) -> Vec<FieldError> {
    match policy {
        "Always" | "OnFailure" | "Never" => Vec::new(),
        "" => vec![FieldError::required(path, "")],
        other => vec![FieldError::not_supported(
            path,
            other,
            &["Always", "OnFailure", "Never"],
        )],
    }
}

/// What the checks of each container need to know of its pod.
struct ContainerContext<'a> {
    /// The pod's volumes that passed validation (what `ValidateVolumes` returns), by name:
    /// whether each is a claim or ephemeral volume, which volume devices need.
    volumes: &'a HashMap<String, bool>,
    /// `hostUsers`, true unless the pod sets it false.
    host_users: bool,
    /// The pod's `terminationGracePeriodSeconds`, which bounds a sleep hook.
    grace_period: Option<i64>,
}

/// `ValidateVolumes`: each volume's source and name; the name of a volume with errors is not
/// remembered (so a later volume of that name is no duplicate, and mounts of it are not found);
/// in a Pod (`pod` names it), no claim volume of a claim an ephemeral volume creates.
fn volumes(
    list: &[Value],
    pod: Option<&str>,
    path: &Path,
) -> (HashMap<String, bool>, Vec<FieldError>) {
    let mut names = HashMap::new();
    let mut errors = Vec::new();
    let created = volume_sources::created_claims(list, pod);
    for (i, volume) in list.iter().enumerate() {
        let at = path.index(i);
        let name = str_at(Some(volume), "name");
        let mut own = volume_sources::volume_source(volume, pod, &at);
        let name_path = at.child("name");
        if name.is_empty() {
            own.push(FieldError::required(&name_path, ""));
        } else {
            for message in dns1123_label_errors(name) {
                own.push(FieldError::invalid(&name_path, name, message));
            }
        }
        if names.contains_key(name) {
            own.push(FieldError::new(
                ErrorType::Duplicate,
                &name_path,
                BadValue::Str(name.to_owned()),
                "",
            ));
        }
        if own.is_empty() {
            let block =
                is_set(Some(volume), "persistentVolumeClaim") || is_set(Some(volume), "ephemeral");
            names.insert(name.to_owned(), block);
        } else {
            errors.extend(own);
        }
        errors.extend(volume_sources::claim_not_created(volume, &created, &at));
    }
    (names, errors)
}

/// `validateContainers`: the common checks, unique names, the lifecycle hooks and probes of
/// each container, then host ports across them.
fn regular_containers(list: &[Value], context: &ContainerContext, path: &Path) -> Vec<FieldError> {
    if list.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, container) in list.iter().enumerate() {
        let at = path.index(i);
        errors.extend(container_common(container, context, &at));
        let name = str_at(Some(container), "name");
        if !names.insert(name) {
            errors.push(duplicate(&at.child("name"), name));
        }
        errors.extend(probe_handlers::container_handlers(
            container,
            context.grace_period,
            &at,
        ));
    }
    // checkHostPortConflicts: a protocol, host IP and host port used twice across containers.
    let mut host_ports = HashSet::new();
    for (i, container) in list.iter().enumerate() {
        for (j, port) in list_at(Some(container), "ports").iter().enumerate() {
            let host_port = int_at(Some(port), "hostPort").unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{host_port}",
                str_at(Some(port), "protocol"),
                str_at(Some(port), "hostIP")
            );
            if !host_ports.insert(key.clone()) {
                errors.push(duplicate(
                    &path.index(i).child("ports").index(j).child("hostPort"),
                    &key,
                ));
            }
        }
    }
    errors
}

/// `validateInitContainers`: the common checks, names unique across init and regular
/// containers, then the hooks and probes only a restartable init container may have.
fn init_containers(
    list: &[Value],
    regular: &[Value],
    context: &ContainerContext,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names: HashSet<&str> = regular.iter().map(|c| str_at(Some(c), "name")).collect();
    for (i, container) in list.iter().enumerate() {
        let at = path.index(i);
        errors.extend(container_common(container, context, &at));
        let name = str_at(Some(container), "name");
        if !names.insert(name) {
            errors.push(duplicate(&at.child("name"), name));
        }
        // A restartable init container (a sidecar) may have hooks and probes.
        if str_at(Some(container), "restartPolicy") == "Always" {
            errors.extend(probe_handlers::container_handlers(
                container,
                context.grace_period,
                &at,
            ));
        } else {
            errors.extend(probe_handlers::forbidden_for_init_container(container, &at));
        }
    }
    errors
}

fn duplicate(path: &Path, value: &str) -> FieldError {
    FieldError::new(
        ErrorType::Duplicate,
        path,
        BadValue::Str(value.to_owned()),
        "",
    )
}

/// `validateContainerCommon`: name, image, termination message policy, ports, env, volume
/// mounts, pull policy, resources, security context.
fn container_common(container: &Value, context: &ContainerContext, path: &Path) -> Vec<FieldError> {
    let c = Some(container);
    let mut errors = Vec::new();
    let name = str_at(c, "name");
    let name_path = path.child("name");
    if name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else {
        for message in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(&name_path, name, message));
        }
    }
    if str_at(c, "image").is_empty() {
        errors.push(FieldError::required(path.child("image"), ""));
    }
    match str_at(c, "terminationMessagePolicy") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errors.push(FieldError::required(
            path.child("terminationMessagePolicy"),
            "",
        )),
        other => errors.push(FieldError::not_supported(
            path.child("terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errors.extend(ports(list_at(c, "ports"), &path.child("ports")));
    errors.extend(env(list_at(c, "env"), &path.child("env")));
    errors.extend(volume_mounts(
        container,
        context.volumes,
        &path.child("volumeMounts"),
    ));
    errors.extend(volume_devices(
        container,
        context.volumes,
        &path.child("volumeDevices"),
    ));
    // validatePullPolicy
    match str_at(c, "imagePullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errors.push(FieldError::required(path.child("imagePullPolicy"), "")),
        other => errors.push(FieldError::not_supported(
            path.child("imagePullPolicy"),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    errors.extend(resources(
        c.and_then(|c| c.get("resources")),
        &path.child("resources"),
    ));
    errors.extend(pod_security::container_security_context(
        c.and_then(|c| c.get("securityContext")),
        context.host_users,
        &path.child("securityContext"),
    ));
    errors
}

/// `validation.IsValidPortName` (IANA_SVC_NAME): its messages, in its order.
fn port_name_errors(name: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters");
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen");
    }
    errors
}

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// `validateContainerPorts`.
fn ports(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, port) in list.iter().enumerate() {
        let p = Some(port);
        let at = path.index(i);
        let name = str_at(p, "name");
        if !name.is_empty() {
            let messages = port_name_errors(name);
            if !messages.is_empty() {
                for message in messages {
                    errors.push(FieldError::invalid(at.child("name"), name, message));
                }
            } else if !names.insert(name) {
                errors.push(duplicate(&at.child("name"), name));
            }
        }
        match int_at(p, "containerPort").unwrap_or(0) {
            0 => errors.push(FieldError::required(at.child("containerPort"), "")),
            n if !(1..=65535).contains(&n) => {
                errors.push(invalid_int(&at.child("containerPort"), n, PORT_RANGE));
            }
            _ => {}
        }
        let host = int_at(p, "hostPort").unwrap_or(0);
        if host != 0 && !(1..=65535).contains(&host) {
            errors.push(invalid_int(&at.child("hostPort"), host, PORT_RANGE));
        }
        match str_at(p, "protocol") {
            "TCP" | "UDP" | "SCTP" => {}
            "" => errors.push(FieldError::required(at.child("protocol"), "")),
            other => errors.push(FieldError::not_supported_named(
                at.child("protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errors
}

/// `ValidateEnv` with `AllowRelaxedEnvironmentVariableValidation` (`IsRelaxedEnvVarName`):
/// printable ASCII other than '='; then each `valueFrom`.
fn env(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, var) in list.iter().enumerate() {
        let name = str_at(Some(var), "name");
        let name_path = path.index(i).child("name");
        if name.is_empty() {
            errors.push(FieldError::required(name_path, ""));
        } else if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
            errors.push(FieldError::invalid(
                name_path,
                name,
                "a valid environment variable name must consist only of printable ASCII \
                 characters other than '='",
            ));
        }
        errors.extend(env_value_from(var, &path.index(i).child("valueFrom")));
    }
    errors
}

/// The sources of an `EnvVarSource`, in the order `validateEnvVarValueFrom` counts them.
const ENV_SOURCES: &[&str] = &[
    "fieldRef",
    "resourceFieldRef",
    "configMapKeyRef",
    "secretKeyRef",
    "fileKeyRef",
];

/// `validateEnvVarValueFrom`, as far as counting its sources goes: exactly one, and no `value`
/// beside it. (What each source says is not checked.)
fn env_value_from(var: &Value, path: &Path) -> Option<FieldError> {
    let value_from = var.get("valueFrom").filter(|v| !v.is_null())?;
    let sources = ENV_SOURCES
        .iter()
        .filter(|key| is_set(Some(value_from), key))
        .count();
    let detail = if sources == 0 {
        "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, \
         `secretKeyRef` or `fileKeyRef`"
    } else if !str_at(Some(var), "value").is_empty() {
        "may not be specified when `value` is not empty"
    } else if sources > 1 {
        "may not have more than one field specified at a time"
    } else {
        return None;
    };
    Some(FieldError::invalid(path, "", detail))
}

/// `ValidateVolumeMounts` of `container`: a name that is one of the pod's (valid) volumes, a
/// unique mount path, descending sub paths, the propagation and recursive read-only modes.
/// Go reports the last four on `volumeMounts.<field>`, without the mount's index, except
/// `subPathExpr` beside `subPath`.
fn volume_mounts(
    container: &Value,
    volumes: &HashMap<String, bool>,
    path: &Path,
) -> Vec<FieldError> {
    let list = list_at(Some(container), "volumeMounts");
    // GetVolumeDeviceMap: device paths by name.
    let devices: HashMap<&str, &str> = list_at(Some(container), "volumeDevices")
        .iter()
        .map(|d| (str_at(Some(d), "name"), str_at(Some(d), "devicePath")))
        .collect();
    let privileged = container
        .get("securityContext")
        .and_then(|sc| sc.get("privileged"))
        .and_then(Value::as_bool)
        == Some(true);
    let mut errors = Vec::new();
    let mut mount_paths = HashSet::new();
    for (i, mount) in list.iter().enumerate() {
        let m = Some(mount);
        let at = path.index(i);
        let name = str_at(m, "name");
        if name.is_empty() {
            errors.push(FieldError::required(at.child("name"), ""));
        }
        // IsMatchedVolume: an empty name is both required and not found.
        if !volumes.contains_key(name) {
            errors.push(FieldError::not_found(at.child("name"), name));
        }
        let mount_path = str_at(m, "mountPath");
        if mount_path.is_empty() {
            errors.push(FieldError::required(at.child("mountPath"), ""));
        }
        if !mount_paths.insert(mount_path) {
            errors.push(FieldError::invalid(
                at.child("mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        // mountNameAlreadyExists, mountPathAlreadyExists: a device of the same name or path.
        if devices.contains_key(name) {
            errors.push(FieldError::invalid(
                at.child("name"),
                name,
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|p| *p == mount_path) {
            errors.push(FieldError::invalid(
                at.child("mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = str_at(m, "subPath");
        if !sub_path.is_empty() {
            errors.extend(pod_security::local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        let sub_path_expr = str_at(m, "subPathExpr");
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errors.push(FieldError::invalid(
                    at.child("subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errors.extend(pod_security::local_descending_path(
                sub_path_expr,
                &path.child("subPathExpr"),
            ));
        }
        // validateMountPropagation
        let propagation = m
            .and_then(|m| m.get("mountPropagation"))
            .and_then(Value::as_str);
        let propagation_path = path.child("mountPropagation");
        if let Some(mode) = propagation {
            const MODES: &[&str] = &["Bidirectional", "HostToContainer", "None"];
            if !MODES.contains(&mode) {
                errors.push(FieldError::not_supported(&propagation_path, mode, MODES));
            }
            if mode == "Bidirectional" && !privileged {
                errors.push(FieldError::forbidden(
                    &propagation_path,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        // validateMountRecursiveReadOnly
        let rro_path = path.child("recursiveReadOnly");
        match m
            .and_then(|m| m.get("recursiveReadOnly"))
            .and_then(Value::as_str)
        {
            None | Some("Disabled") => {}
            Some("Enabled" | "IfPossible") => {
                if m.and_then(|m| m.get("readOnly")).and_then(Value::as_bool) != Some(true) {
                    errors.push(FieldError::forbidden(
                        &rro_path,
                        "may only be specified when readOnly is true",
                    ));
                }
                if propagation.is_some_and(|mode| mode != "None") {
                    errors.push(FieldError::forbidden(
                        &rro_path,
                        "may only be specified when mountPropagation is None or not specified",
                    ));
                }
            }
            Some(other) => errors.push(FieldError::not_supported(
                &rro_path,
                other,
                &["Disabled", "Enabled", "IfPossible"],
            )),
        }
    }
    errors
}

/// `ValidateVolumeDevices` of `container`: a claim or ephemeral volume of the pod, unique
/// names, unique device paths without backsteps, none also a volume mount's name or path.
fn volume_devices(
    container: &Value,
    volumes: &HashMap<String, bool>,
    path: &Path,
) -> Vec<FieldError> {
    // GetVolumeMountMap: mount paths by name.
    let mounts: HashMap<&str, &str> = list_at(Some(container), "volumeMounts")
        .iter()
        .map(|m| (str_at(Some(m), "name"), str_at(Some(m), "mountPath")))
        .collect();
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    let mut device_paths = HashSet::new();
    for (i, device) in list_at(Some(container), "volumeDevices").iter().enumerate() {
        let d = Some(device);
        let at = path.index(i);
        let name = str_at(d, "name");
        let device_path = str_at(d, "devicePath");
        if name.is_empty() {
            errors.push(FieldError::required(at.child("name"), ""));
        }
        if names.contains(name) {
            errors.push(FieldError::invalid(
                at.child("name"),
                name,
                "must be unique",
            ));
        }
        // isMatchedDevice
        match volumes.get(name) {
            Some(false) => errors.push(FieldError::invalid(
                at.child("name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            Some(true) => {}
            None => errors.push(FieldError::not_found(at.child("name"), name)),
        }
        if device_path.is_empty() {
            errors.push(FieldError::required(at.child("devicePath"), ""));
        }
        if device_paths.contains(device_path) {
            errors.push(FieldError::invalid(
                at.child("devicePath"),
                device_path,
                "must be unique",
            ));
        }
        // validatePathNoBacksteps; a path with backsteps is not remembered.
        if !device_path.is_empty() && device_path.split('/').any(|part| part == "..") {
            errors.push(FieldError::invalid(
                at.child("devicePath"),
                device_path,
                "can not contain backsteps ('..')",
            ));
        } else {
            device_paths.insert(device_path);
        }
        // deviceNameAlreadyExists, devicePathAlreadyExists
        if mounts.contains_key(name) {
            errors.push(FieldError::invalid(
                at.child("name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|p| *p == device_path) {
            errors.push(FieldError::invalid(
                at.child("devicePath"),
                device_path,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
    errors
}

/// `validateResourceRequirements` for containers, as far as quantities go: none negative, and
/// each request at most its limit (equal to it for resources that cannot be overcommitted).
fn resources(resources: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let limits = resources
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_object);
    let requests = resources
        .and_then(|r| r.get("requests"))
        .and_then(Value::as_object);
    let limits_path = path.child("limits");
    let requests_path = path.child("requests");
    for (name, quantity) in limits.into_iter().flatten() {
        let text = quantity.as_str().unwrap_or("");
        if quantity::compare(text, "0") == Some(Ordering::Less) {
            errors.push(FieldError::invalid(
                limits_path.key(name),
                text,
                "must be greater than or equal to 0",
            ));
        }
    }
    for (name, quantity) in requests.into_iter().flatten() {
        let text = quantity.as_str().unwrap_or("");
        if quantity::compare(text, "0") == Some(Ordering::Less) {
            errors.push(FieldError::invalid(
                requests_path.key(name),
                text,
                "must be greater than or equal to 0",
            ));
        }
        let limit = limits.and_then(|l| l.get(name)).and_then(Value::as_str);
        match limit {
            Some(limit) => {
                let Some(order) = quantity::compare(text, limit) else {
                    continue;
                };
                if order != Ordering::Equal && !overcommit_allowed(name) {
                    errors.push(FieldError::invalid(
                        &requests_path,
                        text,
                        format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if order == Ordering::Greater {
                    errors.push(FieldError::invalid(
                        &requests_path,
                        text,
                        format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !overcommit_allowed(name) => errors.push(FieldError::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    errors
}

/// `helper.IsOvercommitAllowed`: native resources other than huge pages.
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_follow_iana_service_names() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("1234"),
            ["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name_errors("-a--b"),
            [
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
        assert_eq!(port_name_errors("averyveryverylongname").len(), 1);
    }

    #[test]
    fn string_maps_print_as_go_prints_them() {
        let map = recon_apimachinery::json!({"tier": "x", "app": "web"});
        assert_eq!(json_string_map(Some(&map)), r#"{"app":"web","tier":"x"}"#);
        assert_eq!(json_string_map(None), "null");
    }
}
