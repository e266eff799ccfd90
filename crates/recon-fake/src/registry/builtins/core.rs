//! The core/v1 kinds beyond the everyday ones: endpoints, limits and quotas, nodes and
//! persistent volumes (`pkg/registry/core/<resource>/strategy.go`), and the two resources
//! that store nothing (`bindings`, `componentstatuses`).

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

use super::{builtin, reset, with_status};
use crate::registry::resource::{
    FieldLabels, GenerationRule, ResourceType, Serving, SubresourceInfo, TypeHooks,
};

/// `nodes/proxy`: the kubelet's API through the API server.
const NODE_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::own(
    "proxy",
    "NodeProxyOptions",
    super::PROXY_VERBS,
)];

pub(super) fn types() -> Vec<ResourceType> {
    vec![
        ResourceType {
            // `endpointsStrategy.AllowCreateOnUpdate`.
            create_on_update: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("", "v1", "Endpoints", "endpoints", true).short_names(&["ep"])
        },
        ResourceType {
            create_on_update: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("", "v1", "LimitRange", "limitranges", true).short_names(&["limits"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::with(&[("spec.unschedulable", &["spec", "unschedulable"])]),
            hooks: TypeHooks {
                prepare_create: Some(taint_not_ready),
                ..TypeHooks::default()
            },
            ..with_status(builtin("", "v1", "Node", "nodes", false))
                .short_names(&["no"])
                .subresources(NODE_SUBRESOURCES)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::with(&[("name", &["metadata", "name"])]),
            delete_returns_object: true,
            hooks: TypeHooks {
                // `PrepareForCreate` empties the status, defaulting makes it `Pending`; the
                // `StorageObjectInUseProtection` admission plugin's finalizer.
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), json!({"phase": "Pending"}));
                    super::add_finalizer(obj, "kubernetes.io/pv-protection");
                }),
                stamp: Some(stamp_phase_transition),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "",
                "v1",
                "PersistentVolume",
                "persistentvolumes",
                false,
            ))
            .short_names(&["pv"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            delete_returns_object: true,
            // `resourcequotaStrategy.PrepareForCreate`: the status starts empty.
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), json!({}));
                }),
                ..TypeHooks::default()
            },
            ..with_status(builtin("", "v1", "ResourceQuota", "resourcequotas", true))
                .short_names(&["quota"])
        },
        ResourceType {
            name_rule: NameRule::DnsSubdomain,
            generation: GenerationRule::None,
            ..builtin("", "v1", "Binding", "bindings", true)
                .serving(Serving::CreateOnly, &["create"])
        },
        ResourceType {
            ..builtin("", "v1", "ComponentStatus", "componentstatuses", false)
                .short_names(&["cs"])
                .serving(Serving::ReadOnly, &["get", "list"])
        },
    ]
}

/// The `TaintNodesByCondition` admission plugin: a new node is not ready until its kubelet
/// says so.
fn taint_not_ready(node: &mut Map) {
    let spec = node.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if let Some(taints) = taints.as_array_mut()
        && !taints
            .iter()
            .any(|t| t["key"] == "node.kubernetes.io/not-ready" && t["effect"] == "NoSchedule")
    {
        taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
    }
}

/// `lastPhaseTransitionTime`: stamped on create and whenever the phase changes.
fn stamp_phase_transition(pv: &mut Map, old: Option<&Map>, now: &Value) {
    let phase = |obj: &Map| obj.get("status").and_then(|s| s.get("phase")).cloned();
    let changed = old.is_none_or(|old| phase(old) != phase(pv));
    if changed && let Some(status) = pv.get_mut("status").and_then(Value::as_object_mut) {
        status.insert("lastPhaseTransitionTime".into(), now.clone());
    }
}
