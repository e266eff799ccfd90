//! The cluster's own machinery: controller revisions, certificate signing requests, endpoint
//! slices, API priority and fairness, ingress classes, service CIDRs and IP addresses, runtime
//! classes and priority classes (`pkg/registry/<group>/<resource>/strategy.go`).

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

use super::{builtin, reset, with_status};
use crate::registry::resource::{
    FieldLabels, GenerationRule, ResourceType, SubresourceInfo, TypeHooks,
};
use crate::user::UserInfo;

/// `certificatesigningrequests/approval`: where approvers write the Approved or Denied
/// condition.
const CSR_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::own(
    "approval",
    "CertificateSigningRequest",
    &["get", "patch", "update"],
)];

pub(super) fn types() -> Vec<ResourceType> {
    vec![
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "apps",
                "v1",
                "ControllerRevision",
                "controllerrevisions",
                true,
            )
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            // `ValidateCertificateRequestName` accepts any name (a path segment still).
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::with(&[("spec.signerName", &["spec", "signerName"])]),
            hooks: TypeHooks {
                prepare_create: Some(prepare_csr_create),
                requester: Some(record_csr_requester),
                prepare_update: Some(keep_csr_spec_and_status),
                prepare_status_update: Some(keep_approval_conditions),
                stamp: Some(stamp_condition_times),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "certificates.k8s.io",
                "v1",
                "CertificateSigningRequest",
                "certificatesigningrequests",
                false,
            ))
            .short_names(&["csr"])
            .subresources(CSR_SUBRESOURCES)
        },
        ResourceType {
            create_on_update: true,
            // `endpointSliceStrategy`: generation 1, bumped when anything but metadata changes.
            generation: GenerationRule::AllButMetadata,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "discovery.k8s.io",
                "v1",
                "EndpointSlice",
                "endpointslices",
                true,
            )
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin(
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "FlowSchema",
                "flowschemas",
                false,
            ))
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin(
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "PriorityLevelConfiguration",
                "prioritylevelconfigurations",
                false,
            ))
        },
        ResourceType {
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "networking.k8s.io",
                "v1",
                "IngressClass",
                "ingressclasses",
                false,
            )
        },
        ResourceType {
            // `ValidateIPAddressName`: an IP, checked with the type (a path segment first).
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("networking.k8s.io", "v1", "IPAddress", "ipaddresses", false)
                .short_names(&["ip"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            // `serviceCIDRStrategy.PrepareForCreate` (`ServiceCIDRStatusFieldWiping`): the
            // status starts empty.
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), json!({}));
                }),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "networking.k8s.io",
                "v1",
                "ServiceCIDR",
                "servicecidrs",
                false,
            ))
        },
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            ..builtin("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false)
        },
        ResourceType {
            // `priorityClassStrategy.PrepareForCreate` sets generation 1; nothing bumps it.
            generation: GenerationRule::Spec { annotations: false },
            name_rule: NameRule::DnsSubdomain,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "scheduling.k8s.io",
                "v1",
                "PriorityClass",
                "priorityclasses",
                false,
            )
            .short_names(&["pc"])
        },
    ]
}

/// `csrStrategy.PrepareForCreate`: no requester given by the client, an empty status.
fn prepare_csr_create(obj: &mut Map) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        for key in ["username", "uid", "groups", "extra"] {
            spec.remove(key);
        }
    }
    obj.insert("status".into(), json!({}));
}

/// `csrStrategy.PrepareForCreate`'s requester: the user as authenticated.
fn record_csr_requester(obj: &mut Map, user: &UserInfo) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("username".into(), json!(user.username));
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        spec.insert("groups".into(), json!(user.groups));
        if let Some(extra) = user.extra_json() {
            spec.insert("extra".into(), extra);
        }
    }
}

/// `csrStatusStrategy.PrepareForUpdate` (`preserveConditionInstances`): when `/status` keeps
/// as many Approved (and Denied) conditions as there were, they stay as they were; added or
/// removed ones are left for validation to refuse.
fn keep_approval_conditions(new: &mut Map, old: &Map) {
    let conditions = |obj: &Map| -> Vec<Value> {
        obj.get("status")
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (mut now, before) = (conditions(new), conditions(old));
    for kind in ["Approved", "Denied"] {
        let at = |list: &[Value]| -> Vec<usize> {
            (0..list.len())
                .filter(|&i| list[i]["type"].as_str() == Some(kind))
                .collect()
        };
        let (new_at, old_at) = (at(&now), at(&before));
        if new_at.len() == old_at.len() {
            for (n, o) in new_at.into_iter().zip(old_at) {
                now[n] = before[o].clone();
            }
        }
    }
    if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut)
        && status.contains_key("conditions")
    {
        status.insert("conditions".into(), Value::Array(now.into()));
    }
}

/// `csrStrategy.PrepareForUpdate`: the main endpoint changes neither spec nor status.
fn keep_csr_spec_and_status(new: &mut Map, old: &Map) {
    for field in ["spec", "status"] {
        match old.get(field) {
            Some(v) => {
                new.insert(field.into(), v.clone());
            }
            None => {
                new.remove(field);
            }
        }
    }
}

/// `populateConditionTimestamps`: a condition without `lastUpdateTime` is stamped now; one
/// without `lastTransitionTime` keeps the stored condition's when its status did not change,
/// else is stamped now.
fn stamp_condition_times(new: &mut Map, old: Option<&Map>, now: &Value) {
    let stored: Vec<Value> = old
        .and_then(|o| o.get("status"))
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(conditions) = new
        .get_mut("status")
        .and_then(|s| s.get_mut("conditions"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
        let unset = |c: &Map, key: &str| c.get(key).is_none_or(Value::is_null);
        if unset(condition, "lastUpdateTime") {
            condition.insert("lastUpdateTime".into(), now.clone());
        }
        if unset(condition, "lastTransitionTime") {
            let same = stored
                .iter()
                .find(|c| c["type"] == condition["type"] && c["status"] == condition["status"]);
            let time = same
                .and_then(|c| c.get("lastTransitionTime"))
                .filter(|t| !t.is_null())
                .unwrap_or(now)
                .clone();
            condition.insert("lastTransitionTime".into(), time);
        }
    }
}
