//! core/v1 kinds other than pods: `SetDefaults_Service`, `_Secret`, `_PersistentVolumeClaim`
//! and its spec, `_PersistentVolume`, `_Endpoints`, `_ReplicationController`, `_LimitRangeItem`,
//! `_NodeSpec` and `_NodeStatus`.

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{
    default_nil, default_zero, field, field_or_new, is_empty_map, is_nil, is_zero, items,
    label_if_unlabelled, pod, str_of, template_labels,
};
use crate::wire::object::Object;

pub(super) fn service(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_zero(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    default_zero(spec, "type", "ClusterIP");
    for port in items(spec, "ports") {
        default_zero(port, "protocol", "TCP");
        let unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if unset && let Some(number) = port.get("port").cloned() {
            port.insert("targetPort".into(), number);
        }
    }
    let service_type = str_of(spec, "type").to_owned();
    // `service.ExternallyAccessible`: a load balancer, a node port, or external IPs on a
    // cluster IP.
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    let externally_accessible = service_type == "LoadBalancer"
        || service_type == "NodePort"
        || (service_type == "ClusterIP" && external_ips);
    if externally_accessible {
        default_zero(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(
        service_type.as_str(),
        "NodePort" | "LoadBalancer" | "ClusterIP"
    ) {
        default_nil(spec, "internalTrafficPolicy", "Cluster");
    }
    if service_type == "LoadBalancer" {
        default_nil(spec, "allocateLoadBalancerNodePorts", true);
        let ingress = field(obj, "status")
            .and_then(|s| field(s, "loadBalancer"))
            .map(|lb| items(lb, "ingress").collect::<Vec<_>>())
            .unwrap_or_default();
        for entry in ingress {
            if !is_zero(entry, "ip") {
                default_nil(entry, "ipMode", "VIP");
            }
        }
    }
}

/// `SetDefaults_Secret`, and the conversion that writes `stringData` into `data` (base64; a key
/// in both takes the `stringData` value) and keeps no `stringData`.
pub(super) fn secret(obj: &mut Object) {
    default_zero(obj, "type", "Opaque");
    let Some(Value::Object(string_data)) = obj.remove("stringData") else {
        return;
    };
    if let Some(data) = field_or_new(obj, "data") {
        for (key, value) in string_data {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, Value::String(BASE64_STANDARD.encode(text)));
        }
    }
}

pub(super) fn persistent_volume_claim(obj: &mut Object) {
    if let Some(status) = field_or_new(obj, "status") {
        default_zero(status, "phase", "Pending");
    }
    if let Some(spec) = field_or_new(obj, "spec") {
        persistent_volume_claim_spec(spec);
    }
}

pub(super) fn persistent_volume_claim_spec(spec: &mut Object) {
    default_nil(spec, "volumeMode", "Filesystem");
}

pub(super) fn persistent_volume(obj: &mut Object) {
    if let Some(status) = field_or_new(obj, "status") {
        default_zero(status, "phase", "Pending");
    }
    if let Some(spec) = field_or_new(obj, "spec") {
        default_zero(spec, "persistentVolumeReclaimPolicy", "Retain");
        default_nil(spec, "volumeMode", "Filesystem");
        if let Some(host_path) = field(spec, "hostPath") {
            default_nil(host_path, "type", "");
        }
    }
}

/// `SetDefaults_LimitRangeItem`: a container's default limit is its maximum, its default
/// request its default limit, else its minimum.
pub(super) fn limit_range(obj: &mut Object) {
    let Some(spec) = field(obj, "spec") else {
        return;
    };
    for item in items(spec, "limits") {
        if str_of(item, "type") != "Container" {
            continue;
        }
        let copy_missing = |item: &mut Object, from: &str, to: &str| {
            let Some(source) = item.get(from).and_then(Value::as_object).cloned() else {
                return;
            };
            if let Some(target) = field_or_new(item, to) {
                for (resource, quantity) in source {
                    target.entry(resource).or_insert(quantity);
                }
            }
        };
        copy_missing(item, "max", "default");
        copy_missing(item, "default", "defaultRequest");
        copy_missing(item, "min", "defaultRequest");
    }
}

/// `SetDefaults_NodeSpec` (the CIDR list from the single CIDR) and `SetDefaults_NodeStatus`
/// (allocatable is the capacity when not given).
pub(super) fn node(obj: &mut Object) {
    if let Some(spec) = field(obj, "spec") {
        let cidr = str_of(spec, "podCIDR").to_owned();
        let no_list = spec
            .get("podCIDRs")
            .and_then(Value::as_array)
            .is_none_or(|l| l.is_empty());
        if !cidr.is_empty() && no_list {
            spec.insert(
                "podCIDRs".into(),
                Value::Array(vec![Value::String(cidr)].into()),
            );
        }
    }
    if let Some(status) = field(obj, "status")
        && is_nil(status, "allocatable")
        && let Some(capacity) = status.get("capacity").filter(|c| !c.is_null()).cloned()
    {
        status.insert("allocatable".into(), capacity);
    }
}

pub(super) fn endpoints(obj: &mut Object) {
    for subset in items(obj, "subsets") {
        for port in items(subset, "ports") {
            default_zero(port, "protocol", "TCP");
        }
    }
}

/// `SetDefaults_EndpointPort` of discovery/v1: a slice's port without a name is named `""`,
/// one without a protocol is TCP.
pub(super) fn endpoint_slice(obj: &mut Object) {
    for port in items(obj, "ports") {
        default_nil(port, "name", "");
        default_nil(port, "protocol", "TCP");
    }
}

/// `SetDefaults_Namespace`: a named namespace carries its name as the
/// `kubernetes.io/metadata.name` label (so its writer owns the label; the strategy's
/// `Canonicalize` labels one named from `generateName` later).
pub(super) fn namespace(obj: &mut Object) {
    let name = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if name.is_empty() {
        return;
    }
    let Some(metadata) = field_or_new(obj, "metadata") else {
        return;
    };
    let Some(labels) = field_or_new(metadata, "labels") else {
        return;
    };
    labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
}

/// A ReplicationController selects, and is labelled with, its template's labels when it names
/// none of its own.
pub(super) fn replication_controller(obj: &mut Object) {
    if let Some(labels) = template_labels(obj) {
        if let Some(spec) = field(obj, "spec")
            && is_empty_map(spec.get("selector"))
        {
            spec.insert("selector".into(), labels.clone());
        }
        label_if_unlabelled(obj, labels);
    }
    if let Some(spec) = field_or_new(obj, "spec") {
        default_nil(spec, "replicas", 1);
        if let Some(template) = field(spec, "template") {
            pod::template(template);
        }
    }
}
