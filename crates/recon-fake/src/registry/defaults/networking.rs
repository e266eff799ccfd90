//! networking.k8s.io: `SetDefaults_NetworkPolicy`, and an IPAddress's parent reference as Go
//! writes it.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{default_nil, field_or_new, items};
use crate::wire::object::Object;

pub(super) fn network_policy(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    for key in ["ingress", "egress"] {
        for rule in items(spec, key) {
            for port in items(rule, "ports") {
                default_nil(port, "protocol", "TCP");
            }
        }
    }
    let has_types = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if !has_types {
        let mut types = vec![json!("Ingress")];
        if spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty())
        {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types.into()));
    }
}

/// An IPAddress's parent reference as `json.Marshal` writes it: its fields are `omitempty`, an
/// empty one (the core group of a Service) is left out.
pub(super) fn ip_address(obj: &mut Object) {
    let Some(reference) = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("parentRef"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    reference.retain(|key, value| {
        !(matches!(key.as_str(), "group" | "resource" | "namespace" | "name") && value == "")
    });
}
