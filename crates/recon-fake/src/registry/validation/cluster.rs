//! Cluster-scoped kinds an administrator writes: Nodes (`ValidateNode`, `ValidateNodeUpdate` of
//! `pkg/apis/core/validation/validation.go`), PersistentVolumes (`ValidatePersistentVolume`,
//! `ValidatePersistentVolumeUpdate` there, and `pkg/volume/validation/pv_validation.go`), PriorityClasses
//! (`pkg/apis/scheduling/validation/validation.go`), StorageClasses
//! (`pkg/apis/storage/validation/validation.go`) and the admission webhook configurations
//! (`pkg/apis/admissionregistration/validation/validation.go`, with
//! `k8s.io/apiserver/pkg/util/webhook/validation.go`), PriorityLevelConfigurations
//! and FlowSchemas (`pkg/apis/flowcontrol/validation/validation.go`), IngressClasses
//! (`pkg/apis/networking/validation/validation.go`), RuntimeClasses
//! (`pkg/apis/node/validation/validation.go`), with what each registry strategy runs on
//! create, update and `/status` (`pkg/registry/<group>/<kind>/strategy.go`).
//!
//! Not checked yet: a Node's taints and avoid-pods annotations (`ValidateNodeSpecificAnnotations`), its declared features, swap
//! status and config source; whether a capacity of an integer resource is whole; a
//! StorageClass's allowed topologies; what a PersistentVolume's source holds beyond `hostPath`,
//! `nfs`, `local` and `csi` (which source is set is checked for all); that its node affinity
//! does not change; the difference kube-apiserver prints after "spec.persistentvolumesource is
//! immutable after creation" (the update is refused, the diff is not written); a webhook's
//! CA bundle, and the errors `url.Parse` itself reports; that the
//! mandatory priority levels and flow schemas keep their fixed specs, and their status; a RuntimeClass's overhead and
//! scheduling.

use std::net::IpAddr;

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors,
    label_value_errors, path_segment_errors,
};

use super::admission_policy::webhook_match_conditions;
use super::job::domain_prefixed_path_errors;
use super::pod::node_selector;
use super::ports::port_num_errors;
use super::read::{list_at, str_at};
use super::service_addresses::{cidr_errors, sloppy_ip};
use super::workloads::label_selector;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::quantity;
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Node" | "PersistentVolume")
            | ("scheduling.k8s.io", "PriorityClass")
            | ("storage.k8s.io", "StorageClass")
            | (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
            )
            | (
                "flowcontrol.apiserver.k8s.io",
                "PriorityLevelConfiguration" | "FlowSchema"
            )
            | ("networking.k8s.io", "IngressClass")
            | ("node.k8s.io", "RuntimeClass")
    )
}

pub(super) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match (group, kind) {
        ("", "Node") => validate_node(obj),
        ("", "PersistentVolume") => {
            let mut errors = validate_persistent_volume(obj);
            errors.extend(mount_option_errors(obj));
            errors
        }
        ("scheduling.k8s.io", "PriorityClass") => validate_priority_class(obj),
        ("storage.k8s.io", "StorageClass") => validate_storage_class(obj),
        ("admissionregistration.k8s.io", _) => validate_webhook_configuration(
            obj,
            kind == "MutatingWebhookConfiguration",
            &webhook_update_options(obj, None),
        ),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            validate_priority_level(obj)
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => validate_flow_schema(obj),
        ("networking.k8s.io", "IngressClass") => validate_ingress_class(obj),
        ("node.k8s.io", "RuntimeClass") => validate_runtime_class(obj),
        _ => Vec::new(),
    }
}

pub(super) fn validate_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match (group, kind) {
        // The strategy runs ValidateNode, then ValidateNodeUpdate.
        ("", "Node") => {
            let mut errors = validate_node(new);
            errors.extend(validate_node_update(new, old));
            errors
        }
        // ValidatePersistentVolume and the mount options, then ValidatePersistentVolumeUpdate
        // (which validates the new one again).
        ("", "PersistentVolume") => {
            let mut errors = validate_persistent_volume(new);
            errors.extend(mount_option_errors(new));
            errors.extend(validate_persistent_volume(new));
            errors.extend(validate_persistent_volume_update(new, old));
            errors
        }
        // ValidatePriorityClassUpdate alone: the new object is not validated again.
        ("scheduling.k8s.io", "PriorityClass") => validate_priority_class_update(new, old),
        ("storage.k8s.io", "StorageClass") => {
            let mut errors = validate_storage_class(new);
            errors.extend(validate_storage_class_update(new, old));
            errors
        }
        // Validate{Validating,Mutating}WebhookConfigurationUpdate alone: the new one with what
        // the old one already broke allowed.
        ("admissionregistration.k8s.io", _) => validate_webhook_configuration(
            new,
            kind == "MutatingWebhookConfiguration",
            &webhook_update_options(new, Some(old)),
        ),
        // ValidatePriorityLevelConfiguration of the new one.
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            validate_priority_level(new)
        }
        // ValidateFlowSchemaUpdate: ValidateFlowSchema of the new one.
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => validate_flow_schema(new),
        ("networking.k8s.io", "IngressClass") => validate_ingress_class_update(new, old),
        ("node.k8s.io", "RuntimeClass") => validate_runtime_class_update(new, old),
        _ => Vec::new(),
    }
}

pub(super) fn validate_status_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match (group, kind) {
        // The status strategy runs ValidateNodeUpdate alone.
        ("", "Node") => validate_node_update(new, old),
        _ => Vec::new(),
    }
}

/// A field of `obj` as an optional JSON value.
fn field<'a>(obj: &'a Object, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// `field.Invalid(path, new, "field is immutable")` of a named string type behind a pointer:
/// `field.Error` prints it through `json.Marshal`.
fn immutable_named(path: &str, new: Option<&str>) -> FieldError {
    let value = new.map_or_else(|| "null".to_owned(), go_json_string);
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(value),
        "field is immutable",
    )
}

// ---------------------------------------------------------------------------------------------
// PriorityClass

const SYSTEM_PREFIX: &str = "system-";
const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// `SystemPriorityClasses`: name, value (global default is false for both).
const SYSTEM_PRIORITY_CLASSES: &[(&str, i64)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// `IsKnownSystemPriorityClass`: the error when `name` is not one, with its value and default.
fn unknown_system_priority_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some((known, known_value)) = SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name)
    else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if *known_value != value {
        return Some(format!(
            "value of {known} PriorityClass must be {known_value}"
        ));
    }
    if global_default {
        return Some(format!(
            "globalDefault of {known} PriorityClass must be false"
        ));
    }
    None
}

/// `ValidatePriorityClass`.
fn validate_priority_class(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(obj.get("metadata"), "name");
    let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
    let global_default = obj
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if name.starts_with(SYSTEM_PREFIX) {
        if let Some(error) = unknown_system_priority_class(name, value, global_default) {
            errors.push(FieldError::forbidden(
                "metadata.name",
                format!(
                    "priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {error}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errors.push(FieldError::forbidden(
            "value",
            format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = field(obj, "preemptionPolicy") {
        let policy = policy.as_str().unwrap_or("");
        match policy {
            "PreemptLowerPriority" | "Never" => {}
            "" => errors.push(FieldError::required("preemptionPolicy", "")),
            other => errors.push(FieldError::not_supported_named(
                "preemptionPolicy",
                other,
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    errors
}

/// The preemption policy of a PriorityClass, `None` when unset.
fn preemption_policy(obj: &Object) -> Option<&str> {
    field(obj, "preemptionPolicy").map(|v| v.as_str().unwrap_or(""))
}

/// `ValidatePriorityClassUpdate`: the value, then the preemption policy, may not change.
fn validate_priority_class_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let value = |o: &Object| o.get("value").and_then(Value::as_i64).unwrap_or(0);
    if value(new) != value(old) {
        errors.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let (new_policy, old_policy) = (preemption_policy(new), preemption_policy(old));
    if new_policy != old_policy {
        errors.push(immutable_named("preemptionPolicy", new_policy));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// StorageClass

const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// `validateProvisioner` of the driver name at `field`: required, a qualified name once
/// lower-cased.
pub(super) fn provisioner_errors(provisioner: &str, field: &str) -> Vec<FieldError> {
    if provisioner.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let lower = provisioner.to_lowercase();
    label_key_errors(&lower)
        .into_iter()
        .map(|message| FieldError::invalid(field, &lower, message))
        .collect()
}

/// `validateParameters` of `parameters`: not too many, keys not empty, not too large, and
/// unless `allow_empty` at least one.
pub(super) fn parameters_errors(parameters: Option<&Value>, allow_empty: bool) -> Vec<FieldError> {
    let params = parameters.and_then(Value::as_object);
    let count = params.map_or(0, recon_apimachinery::json::Map::len);
    if count > MAX_PARAMETERS {
        return vec![FieldError::too_long("parameters", MAX_PARAMETERS as i64)];
    }
    let mut errors = Vec::new();
    let mut size = 0usize;
    for (k, v) in params.into_iter().flatten() {
        if k.is_empty() {
            errors.push(FieldError::invalid(
                "parameters",
                k,
                "field can not be empty.",
            ));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > MAX_PARAMETERS_SIZE {
        errors.push(FieldError::too_long(
            "parameters",
            MAX_PARAMETERS_SIZE as i64,
        ));
    }
    if !allow_empty && count == 0 {
        errors.push(FieldError::required(
            "parameters",
            "must contain at least one key/value pair",
        ));
    }
    errors
}

/// `ValidateStorageClass`: provisioner, parameters, reclaim policy, volume binding mode.
fn validate_storage_class(obj: &Object) -> Vec<FieldError> {
    let provisioner = obj.get("provisioner").and_then(Value::as_str).unwrap_or("");
    let mut errors = provisioner_errors(provisioner, "provisioner");
    errors.extend(parameters_errors(obj.get("parameters"), true));
    // validateReclaimPolicy: empty allowed.
    let reclaim = obj
        .get("reclaimPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !reclaim.is_empty() && !matches!(reclaim, "Delete" | "Retain") {
        errors.push(FieldError::not_supported_named(
            "reclaimPolicy",
            reclaim,
            &["Delete", "Retain"],
        ));
    }
    // validateVolumeBindingMode: set (defaulting sets it), one of two.
    match field(obj, "volumeBindingMode") {
        None => errors.push(FieldError::required("volumeBindingMode", "")),
        Some(mode) => {
            let mode = mode.as_str().unwrap_or("");
            if !matches!(mode, "Immediate" | "WaitForFirstConsumer") {
                errors.push(FieldError::not_supported_named(
                    "volumeBindingMode",
                    mode,
                    &["Immediate", "WaitForFirstConsumer"],
                ));
            }
        }
    }
    errors
}

/// `ValidateStorageClassUpdate` as 1.36's declarative validation words it: parameters,
/// provisioner, reclaim policy and volume binding mode are immutable, each `Invalid` with its
/// new value.
fn validate_storage_class_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // reflect.DeepEqual of the maps: nil and empty differ.
    let params = |o: &Object| o.get("parameters").filter(|v| !v.is_null()).cloned();
    if params(new) != params(old) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "parameters",
            BadValue::Raw(string_map_json(new.get("parameters"))),
            "field is immutable",
        ));
    }
    let text = |o: &Object, key: &str| o.get(key).and_then(Value::as_str).map(str::to_owned);
    let provisioner = text(new, "provisioner").unwrap_or_default();
    if provisioner != text(old, "provisioner").unwrap_or_default() {
        errors.push(FieldError::invalid(
            "provisioner",
            &provisioner,
            "field is immutable",
        ));
    }
    let reclaim = text(new, "reclaimPolicy");
    if reclaim.clone().unwrap_or_default() != text(old, "reclaimPolicy").unwrap_or_default() {
        errors.push(immutable_named("reclaimPolicy", reclaim.as_deref()));
    }
    let mode_new = text(new, "volumeBindingMode");
    if mode_new != text(old, "volumeBindingMode") {
        errors.push(immutable_named("volumeBindingMode", mode_new.as_deref()));
    }
    errors
}

/// A `map[string]string` (or `core.ResourceList`) as `json.Marshal` writes it: keys sorted,
/// `null` when unset.
fn string_map_json(map: Option<&Value>) -> String {
    let Some(map) = map.and_then(Value::as_object) else {
        return "null".to_owned();
    };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .iter()
        .map(|(k, v)| {
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            format!("{}:{}", go_json_string(k), go_json_string(&text))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

// ---------------------------------------------------------------------------------------------
// Node

const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// The pod CIDRs of a Node's spec as `Convert_v1_NodeSpec_To_core_NodeSpec` makes them: the
/// single `podCIDR` wins when it is set and is not the first of `podCIDRs`.
fn pod_cidrs(obj: &Object) -> Vec<String> {
    let spec = obj.get("spec");
    let list: Vec<String> = list_at(spec, "podCIDRs")
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_owned())
        .collect();
    let single = str_at(spec, "podCIDR");
    if !single.is_empty() && list.first().is_none_or(|first| first != single) {
        return vec![single.to_owned()];
    }
    list
}

/// The internal `core.Taint` (no JSON tags) as `json.Marshal` writes it.
fn taint_json(taint: &Value) -> String {
    let taint = Some(taint);
    let added = taint
        .and_then(|t| t.get("timeAdded"))
        .and_then(Value::as_str)
        .map_or_else(|| "null".to_owned(), go_json_string);
    format!(
        "{{\"Key\":{},\"Value\":{},\"Effect\":{},\"TimeAdded\":{added}}}",
        go_json_string(str_at(taint, "key")),
        go_json_string(str_at(taint, "value")),
        go_json_string(str_at(taint, "effect")),
    )
}

/// `validateNodeTaints` (at `metadata.taints`, as kube-apiserver names them).
fn node_taints(taints: &[Value]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let base = Path::new("metadata").child("taints");
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, taint) in taints.iter().enumerate() {
        let at = base.index(i);
        let key = str_at(Some(taint), "key");
        for message in label_key_errors(key) {
            errors.push(FieldError::invalid(at.child("key"), key, message));
        }
        let value = str_at(Some(taint), "value");
        let value_errors = label_value_errors(value);
        if !value_errors.is_empty() {
            errors.push(FieldError::invalid(
                at.child("value"),
                value,
                value_errors.join(";"),
            ));
        }
        let effect = str_at(Some(taint), "effect");
        if effect.is_empty() {
            errors.push(FieldError::required(at.child("effect"), ""));
        } else if !TAINT_EFFECTS.contains(&effect) {
            errors.push(FieldError::not_supported_named(
                at.child("effect"),
                effect,
                TAINT_EFFECTS,
            ));
        }
        if seen.contains(&(effect, key)) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                &at,
                BadValue::Raw(taint_json(taint)),
                "taints must be unique by key and effect pair",
            ));
            continue;
        }
        seen.push((effect, key));
    }
    errors
}

/// `ValidateNodeResources`: capacity, then allocatable, quantities not negative.
fn node_resources(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let status = obj.get("status");
    for key in ["capacity", "allocatable"] {
        let map = status.and_then(|s| s.get(key)).and_then(Value::as_object);
        for (name, q) in map.into_iter().flatten() {
            let text = q.as_str().unwrap_or("0");
            if quantity::compare(text, "0") == Some(std::cmp::Ordering::Less) {
                errors.push(FieldError::invalid(
                    Path::new("status").child(key).child(name),
                    text,
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    errors
}

/// The address of `cidr` if `netutils.ParseCIDRSloppy` takes it.
fn parse_cidr(cidr: &str) -> Option<IpAddr> {
    let (address, bits) = cidr.split_once('/')?;
    let ip = sloppy_ip(address)?;
    let max = if address.contains(':') { 128 } else { 32 };
    let ok = !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|p| p <= max);
    ok.then_some(ip)
}

/// `ValidateNode`: taints, resources, then the pod CIDRs (valid, at most one per family).
fn validate_node(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let taints = list_at(obj.get("spec"), "taints");
    if !taints.is_empty() {
        errors.extend(node_taints(taints));
    }
    errors.extend(node_resources(obj));
    let cidrs = pod_cidrs(obj);
    if !cidrs.is_empty() {
        let path = Path::new("spec").child("podCIDRs");
        for (i, cidr) in cidrs.iter().enumerate() {
            errors.extend(cidr_errors(cidr, &path.index(i), &[]));
        }
        if cidrs.len() > 1 {
            // netutils.IsDualStackCIDRStrings: every one parses, one of each family.
            let mut dual = false;
            let parsed: Vec<Option<IpAddr>> = cidrs.iter().map(|c| parse_cidr(c)).collect();
            if let Some(bad) = parsed.iter().position(Option::is_none) {
                errors.push(FieldError::new(
                    ErrorType::Internal,
                    &path,
                    BadValue::Omit,
                    format!(
                        "invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[{bad}]: <nil> (invalid CIDR address: {})",
                        cidrs[bad]
                    ),
                ));
            } else {
                let v6 = parsed
                    .iter()
                    .flatten()
                    .filter(|ip| matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none()))
                    .count();
                dual = v6 > 0 && v6 < parsed.len();
            }
            if !dual || cidrs.len() > 2 {
                let list: Vec<String> = cidrs.iter().map(|c| go_json_string(c)).collect();
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &path,
                    BadValue::Raw(format!("[{}]", list.join(","))),
                    "may specify no more than one CIDR for each IP family",
                ));
            }
        }
    }
    errors
}

/// The internal `core.NodeAddress` (no JSON tags) as `json.Marshal` writes it.
fn address_json(address: &Value) -> String {
    let address = Some(address);
    format!(
        "{{\"Type\":{},\"Address\":{}}}",
        go_json_string(str_at(address, "type")),
        go_json_string(str_at(address, "address"))
    )
}

/// `ValidateNodeUpdate` (after the metadata): resources, duplicate addresses, pod CIDRs and
/// provider ID once set, taints, the external ID.
fn validate_node_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = node_resources(new);
    let addresses = list_at(new.get("status"), "addresses");
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, address) in addresses.iter().enumerate() {
        let pair = (
            str_at(Some(address), "type"),
            str_at(Some(address), "address"),
        );
        if seen.contains(&pair) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                Path::new("status").child("addresses").index(i),
                BadValue::Raw(address_json(address)),
                "",
            ));
        }
        seen.push(pair);
    }
    let old_cidrs = pod_cidrs(old);
    if !old_cidrs.is_empty() {
        let new_cidrs = pod_cidrs(new);
        let forbidden = || {
            FieldError::forbidden(
                "spec.podCIDRs",
                "node updates may not change podCIDR except from \"\" to valid",
            )
        };
        if old_cidrs.len() != new_cidrs.len() {
            errors.push(forbidden());
        } else {
            // One error for each that differs.
            for (old, new) in old_cidrs.iter().zip(&new_cidrs) {
                if old != new {
                    errors.push(forbidden());
                }
            }
        }
    }
    let old_provider = str_at(old.get("spec"), "providerID");
    if !old_provider.is_empty() && old_provider != str_at(new.get("spec"), "providerID") {
        errors.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    let taints = list_at(new.get("spec"), "taints");
    if !taints.is_empty() {
        errors.extend(node_taints(taints));
    }
    if str_at(new.get("spec"), "externalID") != str_at(old.get("spec"), "externalID") {
        errors.push(FieldError::forbidden(
            "spec.externalID",
            "may not be updated",
        ));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// PersistentVolume

/// `supportedAccessModes`, as `sets.List` sorts them.
const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const PV_RECLAIM_POLICIES: &[&str] = &["Delete", "Recycle", "Retain"];
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];
const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];
const MOUNT_OPTIONS_ANNOTATION: &str = "volume.beta.kubernetes.io/mount-options";

/// A source of `validatePersistentVolumeSpec`, in its order: the JSON key, the path a second
/// source is forbidden at, the path its own errors are reported at.
type PvSource = (&'static str, &'static str, &'static str);
const PV_SOURCES: &[PvSource] = &[
    ("hostPath", "hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk"),
    (
        "awsElasticBlockStore",
        "awsElasticBlockStore",
        "awsElasticBlockStore",
    ),
    ("glusterfs", "glusterfs", "glusterfs"),
    ("flocker", "flocker", "flocker"),
    ("nfs", "nfs", "nfs"),
    ("rbd", "rbd", "rbd"),
    ("quobyte", "quobyte", "quobyte"),
    ("cephfs", "cephFS", "cephfs"),
    ("iscsi", "iscsi", "iscsi"),
    ("cinder", "cinder", "cinder"),
    ("fc", "fc", "fc"),
    ("flexVolume", "flexVolume", "flexVolume"),
    ("azureFile", "azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume"),
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "photonPersistentDisk",
    ),
    ("portworxVolume", "portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO", "scaleIO"),
    ("local", "local", "local"),
    ("storageos", "storageos", "storageos"),
    ("csi", "csi", "csi"),
];

/// The sources whose mount options `checkMountOption` allows.
const MOUNT_OPTION_SOURCES: &[&str] = &[
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "iscsi",
    "cinder",
    "cephfs",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
];

/// `validatePathNoBacksteps`.
fn no_backsteps(target: &str, path: &Path) -> Option<FieldError> {
    target
        .split('/')
        .any(|part| part == "..")
        .then(|| FieldError::invalid(path, target, "must not contain '..'"))
}

/// What this file checks inside a source: `hostPath`, `nfs`, `local`, `csi`.
fn pv_source_errors(key: &str, source: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match key {
        // validateHostPathVolumeSource, validateLocalVolumeSource
        "hostPath" | "local" => {
            let target = str_at(source, "path");
            if target.is_empty() {
                errors.push(FieldError::required(path.child("path"), ""));
                return errors;
            }
            errors.extend(no_backsteps(target, &path.child("path")));
            if key == "hostPath"
                && let Some(kind) = source
                    .and_then(|s| s.get("type"))
                    .and_then(Value::as_str)
                    .filter(|kind| !HOST_PATH_TYPES.contains(kind))
            {
                errors.push(FieldError::not_supported(
                    path.child("type"),
                    kind,
                    HOST_PATH_TYPES,
                ));
            }
        }
        // validateNFSVolumeSource
        "nfs" => {
            for field in ["server", "path"] {
                if str_at(source, field).is_empty() {
                    errors.push(FieldError::required(path.child(field), ""));
                }
            }
            let export = str_at(source, "path");
            if !export.starts_with('/') {
                errors.push(FieldError::invalid(
                    path.child("path"),
                    export,
                    "must be an absolute path",
                ));
            }
        }
        // validateCSIPersistentVolumeSource
        "csi" => {
            errors.extend(csi_driver_name(
                str_at(source, "driver"),
                &path.child("driver"),
            ));
            if str_at(source, "volumeHandle").is_empty() {
                errors.push(FieldError::required(path.child("volumeHandle"), ""));
            }
            for secret in [
                "controllerPublishSecretRef",
                "controllerExpandSecretRef",
                "nodePublishSecretRef",
                "nodeExpandSecretRef",
            ] {
                if let Some(reference) = source.and_then(|s| s.get(secret)).filter(|r| !r.is_null())
                {
                    errors.extend(pv_secret_reference(reference, &path.child(secret)));
                }
            }
        }
        _ => {}
    }
    errors
}

/// `ValidateCSIDriverName`: required; at most 63 bytes; a DNS subdomain once lower-cased.
pub(super) fn csi_driver_name(driver: &str, path: &Path) -> Vec<FieldError> {
    if driver.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errors = Vec::new();
    if driver.len() > 63 {
        errors.push(FieldError::too_long(path, 63));
    }
    for message in dns1123_subdomain_name_errors(&driver.to_lowercase()) {
        errors.push(FieldError::invalid(path, driver, message));
    }
    errors
}

/// `validatePVSecretReference`: a name (a DNS subdomain) and a namespace (a DNS label).
fn pv_secret_reference(reference: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(Some(reference), "name");
    if name.is_empty() {
        errors.push(FieldError::required(path.child("name"), ""));
    } else {
        for message in dns1123_subdomain_name_errors(name) {
            errors.push(FieldError::invalid(path.child("name"), name, message));
        }
    }
    let namespace = str_at(Some(reference), "namespace");
    if namespace.is_empty() {
        errors.push(FieldError::required(path.child("namespace"), ""));
    } else {
        for message in dns1123_label_errors(namespace) {
            errors.push(FieldError::invalid(
                path.child("namespace"),
                namespace,
                message,
            ));
        }
    }
    errors
}

/// `ValidatePersistentVolumeSpec` (not inline), then `checkMountOption`.
fn validate_persistent_volume(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let path = Path::new("spec");
    let modes = list_at(spec, "accessModes");
    if modes.is_empty() {
        errors.push(FieldError::required(path.child("accessModes"), ""));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&mode) {
            errors.push(FieldError::not_supported_named(
                path.child("accessModes"),
                mode,
                ACCESS_MODES,
            ));
        }
        if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else if ACCESS_MODES.contains(&mode) {
            other = true;
        }
    }
    if once_pod && other {
        errors.push(FieldError::forbidden(
            path.child("accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let capacity = spec
        .and_then(|s| s.get("capacity"))
        .filter(|c| !c.is_null());
    let capacity_map = capacity.and_then(Value::as_object);
    let capacity_len = capacity_map.map_or(0, recon_apimachinery::json::Map::len);
    if capacity_len == 0 {
        errors.push(FieldError::required(path.child("capacity"), ""));
    }
    if !capacity_map.is_some_and(|m| m.contains_key("storage")) || capacity_len > 1 {
        errors.push(FieldError::new(
            ErrorType::NotSupported,
            path.child("capacity"),
            BadValue::Raw(string_map_json(capacity)),
            "supported values: \"storage\"",
        ));
    }
    for (name, q) in capacity_map.into_iter().flatten() {
        let at = path.child("capacity").key(name);
        let text = q.as_str().unwrap_or("0");
        // validateBasicResource, then ValidatePositiveQuantityValue.
        if let Some(whole) = quantity::whole_value(text)
            && whole < 0
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &at,
                BadValue::Raw(whole.to_string()),
                "must be a valid resource quantity",
            ));
        }
        if quantity::compare(text, "0") != Some(std::cmp::Ordering::Greater) {
            errors.push(FieldError::invalid(&at, text, "must be greater than zero"));
        }
    }
    let reclaim = str_at(spec, "persistentVolumeReclaimPolicy");
    if !reclaim.is_empty() && !PV_RECLAIM_POLICIES.contains(&reclaim) {
        errors.push(FieldError::not_supported_named(
            path.child("persistentVolumeReclaimPolicy"),
            reclaim,
            PV_RECLAIM_POLICIES,
        ));
    }
    let affinity = spec
        .and_then(|s| s.get("nodeAffinity"))
        .filter(|a| !a.is_null());
    if let Some(affinity) = affinity {
        match affinity.get("required").filter(|r| !r.is_null()) {
            Some(required) => errors.extend(node_selector(
                required,
                &path.child("nodeAffinity").child("required"),
            )),
            None => errors.push(FieldError::required(
                path.child("nodeAffinity").child("required"),
                "must specify required node constraints",
            )),
        }
    }
    let mut sources = 0;
    for (key, forbidden_at, errors_at) in PV_SOURCES {
        let Some(source) = spec.and_then(|s| s.get(*key)).filter(|v| !v.is_null()) else {
            continue;
        };
        // A flexVolume always counts, never forbidden.
        if sources > 0 && *key != "flexVolume" {
            errors.push(FieldError::forbidden(
                path.child(forbidden_at),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        sources += 1;
        errors.extend(pv_source_errors(key, Some(source), &path.child(errors_at)));
        if *key == "local" && affinity.is_none() {
            errors.push(FieldError::required(
                path.child("nodeAffinity"),
                "Local volume requires node affinity",
            ));
        }
    }
    if sources == 0 {
        errors.push(FieldError::required(&path, "must specify a volume type"));
    }
    let host_path = spec
        .and_then(|s| s.get("hostPath"))
        .filter(|v| !v.is_null());
    if host_path.is_some() && clean_is_root(str_at(host_path, "path")) && reclaim == "Recycle" {
        errors.push(FieldError::forbidden(
            path.child("persistentVolumeReclaimPolicy"),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = str_at(spec, "storageClassName");
    if !class.is_empty() {
        for message in dns1123_subdomain_name_errors(class) {
            errors.push(FieldError::invalid(
                path.child("storageClassName"),
                class,
                message,
            ));
        }
    }
    if let Some(mode) = spec
        .and_then(|s| s.get("volumeMode"))
        .filter(|v| !v.is_null())
    {
        let mode = mode.as_str().unwrap_or("");
        if !VOLUME_MODES.contains(&mode) {
            errors.push(FieldError::not_supported_named(
                path.child("volumeMode"),
                mode,
                VOLUME_MODES,
            ));
        }
    }
    if let Some(vac) = spec
        .and_then(|s| s.get("volumeAttributesClassName"))
        .filter(|v| !v.is_null())
    {
        let vac = vac.as_str().unwrap_or("");
        if vac.is_empty() {
            errors.push(FieldError::required(
                path.child("volumeAttributesClassName"),
                "an empty string is disallowed",
            ));
        } else {
            for message in dns1123_subdomain_name_errors(vac) {
                errors.push(FieldError::invalid(
                    path.child("volumeAttributesClassName"),
                    vac,
                    message,
                ));
            }
        }
        if spec.and_then(|s| s.get("csi")).is_none_or(Value::is_null) {
            errors.push(FieldError::required(
                path.child("csi"),
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
    errors
}

/// `checkMountOption` (`pkg/volume/validation`): the mount-options annotation only on the
/// sources that take mount options.
fn mount_option_errors(obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    if MOUNT_OPTION_SOURCES
        .iter()
        .any(|key| spec.and_then(|s| s.get(*key)).is_some_and(|v| !v.is_null()))
    {
        return Vec::new();
    }
    let annotated = obj
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(MOUNT_OPTIONS_ANNOTATION))
        .is_some();
    if annotated {
        return vec![FieldError::forbidden(
            Path::new("metadata")
                .child("annotations")
                .child(MOUNT_OPTIONS_ANNOTATION),
            "may not specify mount options for this volume type",
        )];
    }
    Vec::new()
}

/// Whether `path.Clean(p)` is `/`.
fn clean_is_root(p: &str) -> bool {
    p.starts_with('/')
        && p.split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .fold(0i64, |depth, part| {
                if part == ".." {
                    (depth - 1).max(0)
                } else {
                    depth + 1
                }
            })
            == 0
}

/// `ValidatePersistentVolumeUpdate` after its own `ValidatePersistentVolume`: the source may
/// not change (a controller-expand secret may be added), nor the volume mode, nor a volume
/// attributes class be removed.
fn validate_persistent_volume_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let source = |o: &Object, drop_expand: bool| -> Vec<(String, Value)> {
        let spec = o.get("spec");
        PV_SOURCES
            .iter()
            .filter_map(|(key, _, _)| {
                let mut v = spec?.get(*key).filter(|v| !v.is_null())?.clone();
                if drop_expand
                    && *key == "csi"
                    && let Some(map) = v.as_object_mut()
                {
                    map.remove("controllerExpandSecretRef");
                }
                Some(((*key).to_owned(), v))
            })
            .collect()
    };
    let old_csi = old.get("spec").and_then(|s| s.get("csi"));
    let expand_added = old_csi.is_some_and(|c| !c.is_null())
        && old_csi
            .and_then(|c| c.get("controllerExpandSecretRef"))
            .is_none_or(Value::is_null);
    if source(new, expand_added) != source(old, false) {
        errors.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            "spec.persistentvolumesource is immutable after creation",
        ));
    }
    let mode = |o: &Object| {
        o.get("spec")
            .and_then(|s| s.get("volumeMode"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if mode(new) != mode(old) {
        errors.push(immutable_named("volumeMode", mode(new).as_deref()));
    }
    let vac = |o: &Object| {
        o.get("spec")
            .and_then(|s| s.get("volumeAttributesClassName"))
            .filter(|v| !v.is_null())
            .cloned()
    };
    if vac(old).is_some() && vac(new).is_none() {
        errors.push(FieldError::forbidden(
            "spec.volumeAttributesClassName",
            "update from non-nil value to nil is forbidden",
        ));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// ValidatingWebhookConfiguration, MutatingWebhookConfiguration

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const URL_FORM: &str = "; desired format: https://host[/path]";

/// What an update relaxes when the old configuration already broke a rule.
struct WebhookOptions {
    /// No webhook's match conditions changed: they are not compiled again.
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
}

/// A list of strings as `json.Marshal` writes it.
pub(super) fn string_list_json(list: &[Value]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|v| go_json_string(v.as_str().unwrap_or("")))
        .collect();
    format!("[{}]", items.join(","))
}

fn strings(list: &[Value]) -> Vec<&str> {
    list.iter().map(|v| v.as_str().unwrap_or("")).collect()
}

/// `validateValidatingWebhookConfiguration` / `validateMutatingWebhookConfiguration` after the
/// metadata: each webhook, its review versions, names unique.
fn validate_webhook_configuration(
    obj: &Object,
    mutating: bool,
    opts: &WebhookOptions,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let hooks = obj.get("webhooks").and_then(Value::as_array);
    for (i, hook) in hooks.into_iter().flatten().enumerate() {
        let at = Path::new("webhooks").index(i);
        errors.extend(webhook_errors(hook, mutating, opts, &at));
        errors.extend(review_versions(
            list_at(Some(hook), "admissionReviewVersions"),
            opts.require_recognized_review_version,
            &at.child("admissionReviewVersions"),
        ));
        let name = str_at(Some(hook), "name");
        if opts.require_unique_names && !name.is_empty() {
            if names.contains(&name) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    at.child("name"),
                    BadValue::Str(name.to_owned()),
                    "",
                ));
            } else {
                names.push(name);
            }
        }
    }
    errors
}

/// `validateAdmissionReviewVersions`.
fn review_versions(versions: &[Value], require_recognized: bool, path: &Path) -> Vec<FieldError> {
    if versions.is_empty() {
        return vec![FieldError::required(
            path,
            format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        )];
    }
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in strings(versions).into_iter().enumerate() {
        if seen.contains(&v) {
            errors.push(FieldError::invalid(path.index(i), v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for message in dns1035_label_errors(v) {
            errors.push(FieldError::invalid(path.index(i), v, message));
        }
        accepted |= REVIEW_VERSIONS.contains(&v);
    }
    if require_recognized && !accepted {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path,
            BadValue::Raw(string_list_json(versions)),
            format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errors
}

/// An optional enum field: `NotSupported` (printed as a named type) when set and not listed.
fn enum_field(hook: &Value, key: &str, supported: &[&str], path: &Path) -> Option<FieldError> {
    let value = hook.get(key).filter(|v| !v.is_null())?;
    let value = value.as_str().unwrap_or("");
    (!supported.contains(&value))
        .then(|| FieldError::not_supported_named(path.child(key), value, supported))
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn webhook_errors(
    hook: &Value,
    mutating: bool,
    opts: &WebhookOptions,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // utilvalidation.IsFullyQualifiedName
    let name = str_at(Some(hook), "name");
    let name_path = path.child("name");
    if name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else {
        let messages = dns1123_subdomain_name_errors(name);
        if !messages.is_empty() {
            errors.push(FieldError::invalid(&name_path, name, messages.join(",")));
        } else if name.split('.').count() < 3 {
            errors.push(FieldError::invalid(
                &name_path,
                name,
                "should be a domain with at least three segments separated by dots",
            ));
        }
    }
    for (i, rule) in list_at(Some(hook), "rules").iter().enumerate() {
        errors.extend(rule_with_operations(rule, &path.child("rules").index(i)));
    }
    errors.extend(enum_field(hook, "failurePolicy", FAILURE_POLICIES, path));
    errors.extend(enum_field(hook, "matchPolicy", MATCH_POLICIES, path));
    let allowed = if opts.require_no_side_effects {
        NO_SIDE_EFFECTS
    } else {
        SIDE_EFFECTS
    };
    match hook.get("sideEffects").filter(|v| !v.is_null()) {
        None => errors.push(FieldError::required(
            path.child("sideEffects"),
            format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(_) => errors.extend(enum_field(hook, "sideEffects", allowed, path)),
    }
    if let Some(timeout) = hook.get("timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&timeout)
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("timeoutSeconds"),
            BadValue::Raw(timeout.to_string()),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if let Some(selector) = hook.get(key).filter(|v| !v.is_null()) {
            errors.extend(label_selector(selector, &path.child(key)));
        }
    }
    if mutating {
        errors.extend(enum_field(
            hook,
            "reinvocationPolicy",
            REINVOCATION_POLICIES,
            path,
        ));
    }
    let config = hook.get("clientConfig");
    let url = config.and_then(|c| c.get("url")).filter(|v| !v.is_null());
    let service = config
        .and_then(|c| c.get("service"))
        .filter(|v| !v.is_null());
    let config_path = path.child("clientConfig");
    match (url, service) {
        (Some(url), None) => {
            errors.extend(webhook_url(
                url.as_str().unwrap_or(""),
                &config_path.child("url"),
            ));
        }
        (None, Some(service)) => {
            errors.extend(webhook_service(service, &config_path.child("service")));
        }
        _ => errors.push(FieldError::required(
            config_path,
            "exactly one of url or service is required",
        )),
    }
    if !opts.ignore_match_conditions {
        errors.extend(webhook_match_conditions(
            list_at(Some(hook), "matchConditions"),
            &path.child("matchConditions"),
        ));
    }
    errors
}

/// `validateRuleWithOperations`, then `validateRule` with subresources allowed.
pub(super) fn rule_with_operations(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rule = Some(rule);
    let operations = list_at(rule, "operations");
    let ops_path = path.child("operations");
    if operations.is_empty() {
        errors.push(FieldError::required(&ops_path, ""));
    }
    let ops = strings(operations);
    if ops.len() > 1 && ops.contains(&"*") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &ops_path,
            BadValue::Raw(string_list_json(operations)),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            errors.push(FieldError::not_supported_named(
                ops_path.index(i),
                op,
                OPERATIONS,
            ));
        }
    }
    // validateRule
    let groups = list_at(rule, "apiGroups");
    if groups.is_empty() {
        errors.push(FieldError::required(path.child("apiGroups"), ""));
    }
    if groups.len() > 1 && strings(groups).contains(&"*") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("apiGroups"),
            BadValue::Raw(string_list_json(groups)),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = list_at(rule, "apiVersions");
    if versions.is_empty() {
        errors.push(FieldError::required(path.child("apiVersions"), ""));
    }
    if versions.len() > 1 && strings(versions).contains(&"*") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("apiVersions"),
            BadValue::Raw(string_list_json(versions)),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, version) in strings(versions).iter().enumerate() {
        if version.is_empty() {
            errors.push(FieldError::required(path.child("apiVersions").index(i), ""));
        }
    }
    errors.extend(rule_resources(
        list_at(rule, "resources"),
        &path.child("resources"),
    ));
    if let Some(scope) = rule.and_then(|r| r.get("scope")).filter(|v| !v.is_null()) {
        let scope = scope.as_str().unwrap_or("");
        if !SCOPES.contains(&scope) {
            errors.push(FieldError::not_supported_named(
                path.child("scope"),
                scope,
                SCOPES,
            ));
        }
    }
    errors
}

/// `validateResources`: resources and subresources with their wildcards.
fn rule_resources(resources: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if resources.is_empty() {
        errors.push(FieldError::required(path, ""));
    }
    let mut wildcard_sub: Vec<&str> = Vec::new();
    let mut wildcard_res: Vec<&str> = Vec::new();
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, res_sub) in strings(resources).into_iter().enumerate() {
        if res_sub.is_empty() {
            errors.push(FieldError::required(path.index(i), ""));
            continue;
        }
        double |= res_sub == "*/*";
        single |= res_sub == "*";
        let Some((res, sub)) = res_sub.split_once('/') else {
            plain = res_sub != "*";
            continue;
        };
        if wildcard_sub.contains(&res) {
            errors.push(FieldError::invalid(
                path.index(i),
                res_sub,
                format!("if '{res}/*' is present, must not specify {res_sub}"),
            ));
        }
        if wildcard_res.contains(&sub) {
            errors.push(FieldError::invalid(
                path.index(i),
                res_sub,
                format!("if '*/{sub}' is present, must not specify {res_sub}"),
            ));
        }
        if sub == "*" {
            wildcard_sub.push(res);
        }
        if res == "*" {
            wildcard_res.push(sub);
        }
    }
    if resources.len() > 1 && double {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path,
            BadValue::Raw(string_list_json(resources)),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path,
            BadValue::Raw(string_list_json(resources)),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errors
}

/// `webhook.ValidateWebhookURL` with https forced, for what `url.Parse` accepts: the scheme,
/// a host, no user information, fragment or query.
fn webhook_url(url: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    // getScheme: a letter, then letters, digits, '+', '-', '.', up to ':'.
    let (scheme, rest) = match rest.find(':') {
        Some(colon)
            if rest[..colon].starts_with(|c: char| c.is_ascii_alphabetic())
                && rest[..colon]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (&rest[..colon], &rest[colon + 1..])
        }
        _ => ("", rest),
    };
    let (user, host) = match rest.strip_prefix("//") {
        Some(authority) => {
            let authority = authority.split('/').next().unwrap_or("");
            match authority.rsplit_once('@') {
                Some((user, host)) => (Some(user), host),
                None => (None, authority),
            }
        }
        None => (None, ""),
    };
    if scheme.to_lowercase() != "https" {
        errors.push(FieldError::invalid(
            path,
            &scheme.to_lowercase(),
            format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if host.is_empty() {
        errors.push(FieldError::invalid(
            path,
            "",
            format!("host must be specified{URL_FORM}"),
        ));
    }
    if let Some(user) = user {
        errors.push(FieldError::invalid(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errors.push(FieldError::invalid(
            path,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errors.push(FieldError::invalid(
            path,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errors
}

/// `webhook.ValidateWebhookService`: name, namespace, port, then the path's segments.
fn webhook_service(service: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let service = Some(service);
    if str_at(service, "name").is_empty() {
        errors.push(FieldError::required(path.child("name"), ""));
    }
    if str_at(service, "namespace").is_empty() {
        errors.push(FieldError::required(path.child("namespace"), ""));
    }
    let port = service
        .and_then(|s| s.get("port"))
        .and_then(Value::as_i64)
        .unwrap_or(443);
    let port_errors = port_num_errors(port);
    if !port_errors.is_empty() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("port"),
            BadValue::Raw(port.to_string()),
            format!("port is not valid: {}", port_errors.join(", ")),
        ));
    }
    let Some(url_path) = service.and_then(|s| s.get("path")).and_then(Value::as_str) else {
        return errors;
    };
    if url_path == "/" || url_path.is_empty() {
        return errors;
    }
    let at = path.child("path");
    if url_path == "//" {
        errors.push(FieldError::invalid(
            &at,
            url_path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !url_path.starts_with('/') {
        errors.push(FieldError::invalid(&at, url_path, "must start with a '/'"));
    }
    // Go drops the first byte whatever it is.
    let check = url_path.get(1..).unwrap_or("");
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for message in dns1123_subdomain_name_errors(step) {
            errors.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{i}]: {message}"),
            ));
        }
    }
    errors
}

/// The options `ValidateValidatingWebhookConfigurationUpdate` and its mutating twin derive
/// from the old configuration (all strict on create); match conditions are not compiled again
/// when every webhook keeps its own (`ignoreValidatingWebhookMatchConditions`).
fn webhook_update_options(new: &Object, old: Option<&Object>) -> WebhookOptions {
    let Some(old) = old else {
        return WebhookOptions {
            ignore_match_conditions: false,
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
        };
    };
    let hooks: Vec<&Value> = old
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let mut names: Vec<&str> = Vec::new();
    let mut unique = true;
    for hook in &hooks {
        let name = str_at(Some(hook), "name");
        if names.contains(&name) {
            unique = false;
        }
        names.push(name);
    }
    let new_hooks: Vec<&Value> = new
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let conditions = |h: &Value| h.get("matchConditions").cloned();
    WebhookOptions {
        ignore_match_conditions: new_hooks.len() == hooks.len()
            && new_hooks
                .iter()
                .zip(&hooks)
                .all(|(n, o)| conditions(n) == conditions(o)),
        require_no_side_effects: hooks
            .iter()
            .all(|h| NO_SIDE_EFFECTS.contains(&str_at(Some(h), "sideEffects"))),
        require_recognized_review_version: hooks.iter().all(|h| {
            strings(list_at(Some(h), "admissionReviewVersions"))
                .iter()
                .any(|v| REVIEW_VERSIONS.contains(v))
        }),
        require_unique_names: unique,
    }
}

// ---------------------------------------------------------------------------------------------
// PriorityLevelConfiguration

const PLC_TYPES: &[&str] = &["Exempt", "Limited"];
const LIMIT_RESPONSE_TYPES: &[&str] = &["Queue", "Reject"];
const MAX_QUEUES: i64 = 10_000_000;
/// `shufflesharding.MaxHashBits`.
const MAX_HASH_BITS: i64 = 60;

fn invalid_int(path: &Path, n: i64, detail: impl Into<String>) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(n.to_string()),
        detail,
    )
}

/// `ValidatePriorityLevelConfigurationSpec` (the mandatory objects' fixed specs are not
/// compared).
fn validate_priority_level(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(obj.get("metadata"), "name");
    let spec = obj.get("spec");
    let path = Path::new("spec");
    let kind = str_at(spec, "type");
    if (name == "exempt") != (kind == "Exempt") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("type"),
            BadValue::Raw(go_json_string(kind)),
            "must be 'Exempt' if and only if `name` is 'exempt'",
        ));
    }
    let limited = spec.and_then(|s| s.get("limited")).filter(|v| !v.is_null());
    let exempt = spec.and_then(|s| s.get("exempt")).filter(|v| !v.is_null());
    match kind {
        "Exempt" => {
            if limited.is_some() {
                errors.push(FieldError::forbidden(
                    path.child("limited"),
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(exempt) = exempt {
                let at = path.child("exempt");
                if let Some(n) = exempt
                    .get("nominalConcurrencyShares")
                    .and_then(Value::as_i64)
                    && n < 0
                {
                    errors.push(invalid_int(
                        &at.child("nominalConcurrencyShares"),
                        n,
                        "must be a non-negative integer",
                    ));
                }
                if let Some(n) = exempt.get("lendablePercent").and_then(Value::as_i64)
                    && !(0..=100).contains(&n)
                {
                    errors.push(invalid_int(
                        &at.child("lendablePercent"),
                        n,
                        "must be between 0 and 100, inclusive",
                    ));
                }
            }
        }
        "Limited" => {
            if exempt.is_some() {
                errors.push(FieldError::forbidden(
                    path.child("exempt"),
                    "must be nil if the type is Limited",
                ));
            }
            match limited {
                None => errors.push(FieldError::required(
                    path.child("limited"),
                    "must not be empty when type is Limited",
                )),
                Some(limited) => errors.extend(limited_errors(limited, &path.child("limited"))),
            }
        }
        other => errors.push(FieldError::not_supported_named(
            path.child("type"),
            other,
            PLC_TYPES,
        )),
    }
    errors
}

/// `ValidateLimitedPriorityLevelConfiguration`.
fn limited_errors(limited: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let limited = Some(limited);
    let shares = limited
        .and_then(|l| l.get("nominalConcurrencyShares"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if shares < 0 {
        errors.push(invalid_int(
            &path.child("nominalConcurrencyShares"),
            shares,
            "must be a non-negative integer",
        ));
    }
    // ValidateLimitResponse
    let response = limited.and_then(|l| l.get("limitResponse"));
    let response_path = path.child("limitResponse");
    let queuing = response
        .and_then(|r| r.get("queuing"))
        .filter(|v| !v.is_null());
    match str_at(response, "type") {
        "Reject" => {
            if queuing.is_some() {
                errors.push(FieldError::forbidden(
                    response_path.child("queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => errors.push(FieldError::required(
                response_path.child("queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(queuing) => {
                errors.extend(queuing_errors(queuing, &response_path.child("queuing")))
            }
        },
        other => errors.push(FieldError::not_supported_named(
            response_path.child("type"),
            other,
            LIMIT_RESPONSE_TYPES,
        )),
    }
    if let Some(n) = limited
        .and_then(|l| l.get("lendablePercent"))
        .and_then(Value::as_i64)
        && !(0..=100).contains(&n)
    {
        errors.push(invalid_int(
            &path.child("lendablePercent"),
            n,
            "must be between 0 and 100, inclusive",
        ));
    }
    if let Some(n) = limited
        .and_then(|l| l.get("borrowingLimitPercent"))
        .and_then(Value::as_i64)
        && n < 0
    {
        errors.push(invalid_int(
            &path.child("borrowingLimitPercent"),
            n,
            "if specified, must be a non-negative integer",
        ));
    }
    errors
}

/// `ValidatePriorityLevelQueuingConfiguration`: queue length, queues, hand size (and the
/// shuffle sharding entropy).
fn queuing_errors(queuing: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let int = |key: &str| queuing.get(key).and_then(Value::as_i64).unwrap_or(0);
    let (length, queues, hand) = (int("queueLengthLimit"), int("queues"), int("handSize"));
    if length <= 0 {
        errors.push(invalid_int(
            &path.child("queueLengthLimit"),
            length,
            "must be positive",
        ));
    }
    if queues <= 0 {
        errors.push(invalid_int(
            &path.child("queues"),
            queues,
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errors.push(invalid_int(
            &path.child("queues"),
            queues,
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    if hand <= 0 {
        errors.push(invalid_int(
            &path.child("handSize"),
            hand,
            "must be positive",
        ));
    } else if hand > queues {
        errors.push(invalid_int(
            &path.child("handSize"),
            hand,
            format!("should not be greater than queues ({queues})"),
        ));
    } else {
        // shufflesharding.RequiredEntropyBits
        let entropy = ((queues as f64).log2() * hand as f64).ceil() as i64;
        if entropy > MAX_HASH_BITS {
            errors.push(invalid_int(
                &path.child("handSize"),
                hand,
                format!(
                    "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
                ),
            ));
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// FlowSchema

const MAX_MATCHING_PRECEDENCE: i64 = 10_000;
const DISTINGUISHER_METHODS: &[&str] = &["ByNamespace", "ByUser"];
const SUBJECT_KINDS: &[&str] = &["Group", "ServiceAccount", "User"];
const FLOW_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

/// `ValidateFlowSchemaSpec` (the mandatory schemas' fixed specs are not compared).
fn validate_flow_schema(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(obj.get("metadata"), "name");
    let spec = obj.get("spec");
    let path = Path::new("spec");
    let precedence = spec
        .and_then(|s| s.get("matchingPrecedence"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let precedence_path = path.child("matchingPrecedence");
    if precedence <= 0 {
        errors.push(invalid_int(
            &precedence_path,
            precedence,
            "must be a positive value",
        ));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errors.push(invalid_int(
            &precedence_path,
            precedence,
            format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != "exempt" {
        errors.push(invalid_int(
            &precedence_path,
            precedence,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = spec
        .and_then(|s| s.get("distinguisherMethod"))
        .filter(|v| !v.is_null())
    {
        let kind = str_at(Some(method), "type");
        if !DISTINGUISHER_METHODS.contains(&kind) {
            // The internal struct (no JSON tags) is printed.
            let list: Vec<String> = DISTINGUISHER_METHODS
                .iter()
                .map(|v| recon_apimachinery::go_quote(v))
                .collect();
            errors.push(FieldError::new(
                ErrorType::NotSupported,
                path.child("distinguisherMethod").child("type"),
                BadValue::Raw(format!("{{\"Type\":{}}}", go_json_string(kind))),
                format!("supported values: {}", list.join(", ")),
            ));
        }
    }
    let level = str_at(
        spec.and_then(|s| s.get("priorityLevelConfiguration")),
        "name",
    );
    let level_path = path.child("priorityLevelConfiguration").child("name");
    if level.is_empty() {
        errors.push(FieldError::required(
            level_path,
            "must reference a priority level",
        ));
    } else {
        for message in dns1123_subdomain_name_errors(level) {
            errors.push(FieldError::invalid(&level_path, level, message));
        }
    }
    for (i, rule) in list_at(spec, "rules").iter().enumerate() {
        errors.extend(flow_rule(rule, &path.child("rules").index(i)));
    }
    errors
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn flow_rule(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rule = Some(rule);
    let subjects = list_at(rule, "subjects");
    if subjects.is_empty() {
        errors.push(FieldError::required(
            path.child("subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (i, subject) in subjects.iter().enumerate() {
        errors.extend(flow_subject(subject, &path.child("subjects").index(i)));
    }
    let resource_rules = list_at(rule, "resourceRules");
    let non_resource_rules = list_at(rule, "nonResourceRules");
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errors.push(FieldError::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        errors.extend(flow_resource_rule(r, &path.child("resourceRules").index(i)));
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        errors.extend(flow_non_resource_rule(
            r,
            &path.child("nonResourceRules").index(i),
        ));
    }
    errors
}

/// `ValidateFlowSchemaSubject`: the member of its kind, the others forbidden.
fn flow_subject(subject: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let member = |key: &str| subject.get(key).filter(|v| !v.is_null());
    let forbid_user = |errors: &mut Vec<FieldError>| {
        if member("user").is_some() {
            errors.push(FieldError::forbidden(
                path.child("user"),
                "user is forbidden when subject kind is not 'User'",
            ));
        }
    };
    let forbid_group = |errors: &mut Vec<FieldError>| {
        if member("group").is_some() {
            errors.push(FieldError::forbidden(
                path.child("group"),
                "group is forbidden when subject kind is not 'Group'",
            ));
        }
    };
    let forbid_sa = |errors: &mut Vec<FieldError>| {
        if member("serviceAccount").is_some() {
            errors.push(FieldError::forbidden(
                path.child("serviceAccount"),
                "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
            ));
        }
    };
    match str_at(Some(subject), "kind") {
        "ServiceAccount" => {
            let at = path.child("serviceAccount");
            match member("serviceAccount") {
                None => errors.push(FieldError::required(
                    &at,
                    "serviceAccount is required when subject kind is 'ServiceAccount'",
                )),
                Some(sa) => {
                    let name = str_at(Some(sa), "name");
                    if name.is_empty() {
                        errors.push(FieldError::required(at.child("name"), ""));
                    } else if name != "*" {
                        for message in dns1123_subdomain_name_errors(name) {
                            errors.push(FieldError::invalid(at.child("name"), name, message));
                        }
                    }
                    let namespace = str_at(Some(sa), "namespace");
                    if namespace.is_empty() {
                        errors.push(FieldError::required(
                            at.child("namespace"),
                            "must specify namespace for service account",
                        ));
                    } else {
                        for message in dns1123_label_errors(namespace) {
                            errors.push(FieldError::invalid(
                                at.child("namespace"),
                                namespace,
                                message,
                            ));
                        }
                    }
                }
            }
            forbid_user(&mut errors);
            forbid_group(&mut errors);
        }
        "User" => {
            named_subject(member("user"), "user", "User", path, &mut errors);
            forbid_sa(&mut errors);
            forbid_group(&mut errors);
        }
        "Group" => {
            named_subject(member("group"), "group", "Group", path, &mut errors);
            forbid_sa(&mut errors);
            forbid_user(&mut errors);
        }
        other => errors.push(FieldError::not_supported_named(
            path.child("kind"),
            other,
            SUBJECT_KINDS,
        )),
    }
    errors
}

/// `ValidateUserSubject`, `ValidateGroupSubject`: set, with a name.
fn named_subject(
    member: Option<&Value>,
    key: &str,
    kind: &str,
    path: &Path,
    errors: &mut Vec<FieldError>,
) {
    let at = path.child(key);
    match member {
        None => errors.push(FieldError::required(
            at,
            format!("{key} is required when subject kind is '{kind}'"),
        )),
        Some(m) if str_at(Some(m), "name").is_empty() => {
            errors.push(FieldError::required(at.child("name"), ""));
        }
        Some(_) => {}
    }
}

/// The verbs of a flow schema's rule: required, `*` alone, else all supported.
fn flow_verbs(rule: Option<&Value>, path: &Path) -> Option<FieldError> {
    let verbs = list_at(rule, "verbs");
    let names = strings(verbs);
    let at = path.child("verbs");
    if verbs.is_empty() {
        return Some(FieldError::required(
            at,
            "verbs must contain at least one value",
        ));
    }
    if names.contains(&"*") {
        return (verbs.len() > 1).then(|| {
            FieldError::new(
                ErrorType::Invalid,
                &at,
                BadValue::Raw(string_list_json(verbs)),
                "if '*' is present, must not specify other verbs",
            )
        });
    }
    if names.iter().any(|v| !FLOW_VERBS.contains(v)) {
        let list: Vec<String> = FLOW_VERBS
            .iter()
            .map(|v| recon_apimachinery::go_quote(v))
            .collect();
        return Some(FieldError::new(
            ErrorType::NotSupported,
            at,
            BadValue::Raw(string_list_json(verbs)),
            format!("supported values: {}", list.join(", ")),
        ));
    }
    None
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn flow_resource_rule(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = flow_verbs(Some(rule), path).into_iter().collect();
    let rule = Some(rule);
    for (key, required, other) in [
        (
            "apiGroups",
            "resource rules must supply at least one api group",
            "if '*' is present, must not specify other api groups",
        ),
        (
            "resources",
            "resource rules must supply at least one resource",
            "if '*' is present, must not specify other resources",
        ),
    ] {
        let list = list_at(rule, key);
        if list.is_empty() {
            errors.push(FieldError::required(path.child(key), required));
        } else if list.len() > 1 && strings(list).contains(&"*") {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child(key),
                BadValue::Raw(string_list_json(list)),
                other,
            ));
        }
    }
    let namespaces = list_at(rule, "namespaces");
    let cluster_scope = rule
        .and_then(|r| r.get("clusterScope"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errors.push(FieldError::required(
            path.child("namespaces"),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if strings(namespaces).contains(&"*") {
        if namespaces.len() > 1 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("namespaces"),
                BadValue::Raw(string_list_json(namespaces)),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, ns) in strings(namespaces).into_iter().enumerate() {
            for message in dns1123_label_errors(ns) {
                errors.push(FieldError::invalid(
                    path.child("namespaces").index(i),
                    ns,
                    format!("{NS_ERR_INTRO}{message}"),
                ));
            }
        }
    }
    errors
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn flow_non_resource_rule(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = flow_verbs(Some(rule), path).into_iter().collect();
    let urls = list_at(Some(rule), "nonResourceURLs");
    let at = path.child("nonResourceURLs");
    if urls.is_empty() {
        errors.push(FieldError::required(
            at,
            "nonResourceURLs must contain at least one value",
        ));
    } else if strings(urls).contains(&"*") {
        if urls.len() > 1 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                at,
                BadValue::Raw(string_list_json(urls)),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, url) in strings(urls).into_iter().enumerate() {
            errors.extend(non_resource_url(url, &at.index(i)));
        }
    }
    errors
}

/// `ValidateNonResourceURLPath`.
fn non_resource_url(url: &str, path: &Path) -> Option<FieldError> {
    let message = if url.is_empty() {
        "must not be empty"
    } else if url == "/" {
        return None;
    } else if !url.starts_with('/') {
        "must start with slash"
    } else if url.contains(' ') {
        "must not contain white-space"
    } else if url.contains("//") {
        "must not contain double slash"
    } else {
        let wildcards = url.matches('*').count();
        if wildcards > 1 || (wildcards == 1 && !url.ends_with("/*")) {
            "wildcard can only do suffix matching"
        } else {
            return None;
        }
    };
    Some(FieldError::invalid(path, url, message))
}

// ---------------------------------------------------------------------------------------------
// IngressClass, RuntimeClass

const MAX_CONTROLLER_LEN: usize = 250;

/// `ValidateIngressClass` after the metadata: the controller, then the parameters reference.
fn validate_ingress_class(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let path = Path::new("spec");
    let controller = str_at(spec, "controller");
    if controller.len() > MAX_CONTROLLER_LEN {
        errors.push(FieldError::too_long(
            path.child("controller"),
            MAX_CONTROLLER_LEN as i64,
        ));
    }
    errors.extend(domain_prefixed_path_errors(
        controller,
        &path.child("controller"),
    ));
    let Some(params) = spec
        .and_then(|s| s.get("parameters"))
        .filter(|v| !v.is_null())
    else {
        return errors;
    };
    let at = path.child("parameters");
    if let Some(group) = params.get("apiGroup").and_then(Value::as_str) {
        for message in dns1123_subdomain_name_errors(group) {
            errors.push(FieldError::invalid(at.child("apiGroup"), group, message));
        }
    }
    for key in ["kind", "name"] {
        let value = str_at(Some(params), key);
        if value.is_empty() {
            errors.push(FieldError::required(at.child(key), ""));
        } else {
            for message in path_segment_errors(value, false) {
                errors.push(FieldError::invalid(at.child(key), value, message));
            }
        }
    }
    let Some(scope) = params.get("scope").filter(|v| !v.is_null()) else {
        errors.push(FieldError::required(at.child("scope"), ""));
        return errors;
    };
    let scope = scope.as_str().unwrap_or("");
    let namespace = params.get("namespace").filter(|v| !v.is_null());
    match scope {
        "Namespace" => match namespace {
            None => errors.push(FieldError::required(
                at.child("namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => {
                let ns = ns.as_str().unwrap_or("");
                for message in dns1123_label_errors(ns) {
                    errors.push(FieldError::invalid(at.child("namespace"), ns, message));
                }
            }
        },
        "Cluster" => {
            if namespace.is_some() {
                errors.push(FieldError::forbidden(
                    at.child("namespace"),
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            at.child("scope"),
            other,
            &["Cluster", "Namespace"],
        )),
    }
    errors
}

/// `ValidateIngressClassUpdate` after the metadata: the controller may not change, then the
/// new one is validated.
fn validate_ingress_class_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let controller = str_at(new.get("spec"), "controller");
    if controller != str_at(old.get("spec"), "controller") {
        errors.push(FieldError::invalid(
            "spec.controller",
            controller,
            "field is immutable",
        ));
    }
    errors.extend(validate_ingress_class(new));
    errors
}

/// `ValidateRuntimeClass` after the metadata: a handler that is a DNS label (the overhead and
/// scheduling are not checked).
fn validate_runtime_class(obj: &Object) -> Vec<FieldError> {
    let handler = obj.get("handler").and_then(Value::as_str).unwrap_or("");
    if handler.is_empty() {
        return vec![FieldError::required("handler", "")];
    }
    dns1123_label_errors(handler)
        .into_iter()
        .map(|message| FieldError::invalid("handler", handler, message))
        .collect()
}

/// `ValidateRuntimeClassUpdate` after the metadata: the handler may not change (nothing else
/// is validated again).
fn validate_runtime_class_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let handler = |o: &Object| {
        o.get("handler")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if handler(new) == handler(old) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "handler",
        &handler(new),
        "field is immutable",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Object {
        recon_apimachinery::json::from_value(v).unwrap_or_else(|e| panic!("not an object: {e}"))
    }

    #[test]
    fn a_system_name_needs_a_known_class() {
        let pc = object(recon_apimachinery::json!({"metadata": {"name": "system-x"}, "value": 1}));
        let errors = validate_priority_class(&pc);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("system-x is not a known"));
    }

    #[test]
    fn duplicate_taints_are_reported_once_each() {
        let node = object(recon_apimachinery::json!({"spec": {"taints": [
            {"key": "a", "effect": "NoSchedule"},
            {"key": "a", "effect": "NoSchedule"}
        ]}}));
        let errors = validate_node(&node);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            "metadata.taints[1]: Duplicate value: {\"Key\":\"a\",\"Value\":\"\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must be unique by key and effect pair"
        );
    }

    #[test]
    fn odd_values_do_not_panic() {
        for v in [
            recon_apimachinery::json!({"spec": {"podCIDRs": [1, null, "x/99"], "taints": [7]}}),
            recon_apimachinery::json!({"value": "x", "preemptionPolicy": 3, "parameters": {"": 1}}),
        ] {
            let o = object(v);
            let _ = validate_node(&o);
            let _ = validate_node_update(&o, &o);
            let _ = validate_priority_class(&o);
            let _ = validate_storage_class(&o);
            let _ = validate_storage_class_update(&o, &o);
        }
    }
}
