//! API defaulting of built-in kinds: what kube-apiserver's scheme fills in when it decodes an
//! object (`SetObjectDefaults_<Kind>`: the hand-written `SetDefaults_*` of
//! `pkg/apis/<group>/<version>/defaults.go` and the `+default` markers its generated
//! `zz_generated.defaults.go` walks), on every create, update, patch and apply.
//!
//! Objects are JSON here, so a Go zero value (`""`, `0`, `nil`) reads as an absent or `null`
//! field, and a defaulted pointer is written as the value it points to.
//!
//! - [`pod`]: pod specs and everything in them (containers, probes, volumes), pod templates;
//! - [`core_v1`]: the other core/v1 kinds (Service, Secret, PersistentVolumeClaim, Namespace's
//!   name label, ...);
//! - [`workloads`]: apps/v1 and batch/v1;
//! - [`networking`]: NetworkPolicies and IPAddresses; [`autoscaling`]:
//!   HorizontalPodAutoscalers; [`rbac`]: role bindings' subjects;
//! - [`apiserver`]: admission webhooks and policies, API priority and fairness;
//! - [`storage`]: storage.k8s.io and resource.k8s.io.

mod apiserver;
mod autoscaling;
mod core_v1;
mod networking;
mod pod;
mod rbac;
mod storage;
mod workloads;

use recon_apimachinery::json::{Map, Value};

use crate::gotype;
use crate::wire::object::Object;

/// Fills in the defaults of a `group` `kind` object, as kube-apiserver decodes it.
pub(crate) fn apply(group: &str, kind: &str, obj: &mut Object) {
    if let Some(defaults) = defaulter(group, kind) {
        defaults(obj);
    }
}

/// What fills in the defaults of a `group` `kind` object; `None` for a kind without any.
pub(crate) fn defaulter(group: &str, kind: &str) -> Option<fn(&mut Object)> {
    Some(match (group, kind) {
        ("", "Pod") => pod::pod,
        ("", "PodTemplate") => |obj| {
            if let Some(template) = field(obj, "template") {
                pod::template(template);
            }
        },
        ("", "ReplicationController") => core_v1::replication_controller,
        ("", "Service") => core_v1::service,
        ("", "Secret") => core_v1::secret,
        ("", "PersistentVolumeClaim") => core_v1::persistent_volume_claim,
        ("", "PersistentVolume") => core_v1::persistent_volume,
        ("", "Endpoints") => core_v1::endpoints,
        ("", "Namespace") => core_v1::namespace,
        ("discovery.k8s.io", "EndpointSlice") => core_v1::endpoint_slice,
        ("apps", "Deployment") => workloads::deployment,
        ("apps", "StatefulSet") => workloads::stateful_set,
        ("apps", "DaemonSet") => workloads::daemon_set,
        ("apps", "ReplicaSet") => workloads::replica_set,
        ("batch", "Job") => workloads::job,
        ("batch", "CronJob") => workloads::cron_job,
        ("networking.k8s.io", "NetworkPolicy") => networking::network_policy,
        ("networking.k8s.io", "IPAddress") => networking::ip_address,
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => rbac::role_binding,
        ("", "LimitRange") => core_v1::limit_range,
        ("", "Node") => core_v1::node,
        ("admissionregistration.k8s.io", kind) => match kind {
            "ValidatingWebhookConfiguration" => |obj| apiserver::webhook_configuration(obj, false),
            "MutatingWebhookConfiguration" => |obj| apiserver::webhook_configuration(obj, true),
            "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy" => apiserver::admission_policy,
            _ => apiserver::admission_policy_binding,
        },
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => apiserver::flow_schema,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            apiserver::priority_level_configuration
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            crate::registry::crd::apply_defaults
        }
        ("scheduling.k8s.io", "PriorityClass") => |obj| {
            default_nil(obj, "preemptionPolicy", "PreemptLowerPriority");
        },
        ("storage.k8s.io", "StorageClass") => storage::storage_class,
        ("storage.k8s.io", "CSIDriver") => storage::csi_driver,
        ("resource.k8s.io", "ResourceClaim") => |obj| {
            if let Some(spec) = field(obj, "spec") {
                storage::resource_claim_spec(spec);
            }
            if let Some(status) = field(obj, "status") {
                storage::resource_claim_status(status);
            }
        },
        ("resource.k8s.io", "ResourceClaimTemplate") => |obj| {
            if let Some(spec) = field(obj, "spec").and_then(|s| field(s, "spec")) {
                storage::resource_claim_spec(spec);
            }
        },
        _ => return None,
    })
}

/// A built-in object as kube-apiserver's decoder leaves it: its defaults filled in, then as
/// read back from storage ([`as_stored`]), which is also what field management compares.
pub(crate) fn as_decoded(group: &str, kind: &str, obj: &mut Object) {
    apply(group, kind, obj);
    as_stored(group, kind, obj);
}

/// A built-in object decoded at `version`, which is not the version it is stored at (an
/// autoscaling/v1 HorizontalPodAutoscaler): that version's defaults, and its Go struct's
/// unset and always-written fields, as for [`as_decoded`].
pub(crate) fn as_decoded_at(group: &str, version: &str, kind: &str, obj: &mut Object) {
    if (group, version, kind) == ("autoscaling", "v1", "HorizontalPodAutoscaler") {
        autoscaling::horizontal_pod_autoscaler_v1(obj);
    }
    if let Some(name) = gotype::kind_struct(group, version, kind) {
        gotype::drop_unset_fields_of(name, obj);
        gotype::fill_zero_fields_of(name, obj);
    }
}

/// What storing a built-in object does to it: etcd holds built-ins as protobuf, which keeps no
/// difference between an empty list or map and none, so an empty list or map (or a `null`, which
/// decodes as unset) comes back absent, or `null` where the Go field is not `omitempty` (a
/// Role's `rules`); and the fields Go writes even when unset appear ([`gotype::fill_zero_fields`]: an Event's times, a condition's
/// `lastProbeTime`, a template's `metadata`).
pub(crate) fn as_stored(group: &str, kind: &str, obj: &mut Object) {
    if kind == "Event" && matches!(group, "" | "events.k8s.io") {
        // An unset series or related object is left out rather than written as `null`.
        for key in ["series", "related"] {
            if obj.get(key).is_some_and(Value::is_null) {
                obj.remove(key);
            }
        }
    }
    gotype::drop_unset_fields(group, kind, obj);
    gotype::fill_zero_fields(group, kind, obj);
}

/// The object at `key` of `obj`, when it is one.
pub(super) fn field<'a>(obj: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    obj.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `key`, created empty when absent or `null` (Go's zero struct, which the
/// decoder leaves in place and the defaulter then fills).
pub(super) fn field_or_new<'a>(obj: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    let slot = obj.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// Each object of the list at `key`.
pub(super) fn items<'a>(obj: &'a mut Object, key: &str) -> impl Iterator<Item = &'a mut Object> {
    obj.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The labels of the object's `spec.template`, when it has some.
pub(super) fn template_labels(obj: &Object) -> Option<Value> {
    obj.get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.is_object())
        .cloned()
}

/// Whether `value` is absent or an empty map (Go's `len(m) == 0`).
pub(super) fn is_empty_map(value: Option<&Value>) -> bool {
    value
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
}

/// Labels the object with `labels` when it has none.
pub(super) fn label_if_unlabelled(obj: &mut Object, labels: Value) {
    if let Some(meta) = field_or_new(obj, "metadata")
        && is_empty_map(meta.get("labels"))
    {
        meta.insert("labels".into(), labels);
    }
}

/// Whether `key` holds Go's zero value: absent, `null`, `""`, `0` or `false`.
pub(super) fn is_zero(obj: &Object, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Bool(b)) => !b,
        Some(_) => false,
    }
}

/// Whether `key` is absent or `null` (a nil pointer, slice or map).
pub(super) fn is_nil(obj: &Object, key: &str) -> bool {
    obj.get(key).is_none_or(Value::is_null)
}

/// Sets `key` to `value` when it holds the zero value.
pub(super) fn default_zero(obj: &mut Object, key: &str, value: impl Into<Value>) {
    if is_zero(obj, key) {
        obj.insert(key.to_owned(), value.into());
    }
}

/// Sets `key` to `value` when it is nil.
pub(super) fn default_nil(obj: &mut Object, key: &str, value: impl Into<Value>) {
    if is_nil(obj, key) {
        obj.insert(key.to_owned(), value.into());
    }
}

/// The string at `key`, `""` when absent.
pub(super) fn str_of<'a>(obj: &'a Object, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests;
