//! The resource.k8s.io kinds served (pkg/printers/internalversion/printers.go:
//! `printDeviceClass`, `printResourceClaim` with `resourceClaimState`,
//! `printResourceClaimTemplate`, `printResourceSlice`).

use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{
    AGE, NAME, Printer, age_of, at, list_at, name, name_text_age, name_text_age_row, str_at, text,
};
use crate::wire::object::Object;

pub(super) const DEVICE_CLASS: Printer = Printer {
    group: "resource.k8s.io",
    kind: "DeviceClass",
    columns: &[NAME, AGE],
    row: |obj, now| Row::new(vec![name(obj), age_of(obj, now)]),
};

pub(super) const RESOURCE_CLAIM: Printer = Printer {
    group: "resource.k8s.io",
    kind: "ResourceClaim",
    columns: &name_text_age(
        "State",
        "A summary of the current state (allocated, pending, reserved, etc.).",
    ),
    row: |obj, now| name_text_age_row(obj, now, claim_state(obj)),
};

/// `resourceClaimState`: `deleted` once deletion began, then `pending` (not while deleted) or
/// `allocated` and, with consumers, `reserved`; comma-joined.
fn claim_state(obj: &Object) -> String {
    let set = |path: &[&str]| at(obj, path).is_some_and(|v| !v.is_null());
    let deleted = set(&["metadata", "deletionTimestamp"]);
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if !set(&["status", "allocation"]) {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if !list_at(obj, &["status", "reservedFor"]).is_empty() {
            states.push("reserved");
        }
    }
    states.join(",")
}

pub(super) const RESOURCE_CLAIM_TEMPLATE: Printer = Printer {
    group: "resource.k8s.io",
    kind: "ResourceClaimTemplate",
    columns: &[NAME, AGE],
    row: |obj, now| Row::new(vec![name(obj), age_of(obj, now)]),
};

pub(super) const RESOURCE_SLICE: Printer = Printer {
    group: "resource.k8s.io",
    kind: "ResourceSlice",
    columns: &[
        NAME,
        text(
            "Node",
            "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.",
        ),
        text(
            "Driver",
            "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. It should use only lower case characters. This field is immutable.",
        ),
        text(
            "Pool",
            "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.",
        ),
        AGE,
    ],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(
                at(obj, &["spec", "nodeName"])
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            Cell::text(str_at(obj, &["spec", "driver"])),
            Cell::text(str_at(obj, &["spec", "pool", "name"])),
            age_of(obj, now),
        ])
    },
};

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn state(v: Value) -> String {
        claim_state(v.as_object().unwrap_or(&Object::new()))
    }

    #[test]
    fn claim_states_follow_allocation_reservation_and_deletion() {
        assert_eq!(state(json!({"status": {}})), "pending");
        assert_eq!(
            state(json!({"status": {"allocation": {}, "reservedFor": [{"uid": "u"}]}})),
            "allocated,reserved"
        );
        assert_eq!(
            state(json!({"metadata": {"deletionTimestamp": "t"}, "status": {}})),
            "deleted"
        );
        assert_eq!(
            state(json!({"metadata": {"deletionTimestamp": "t"}, "status": {"allocation": {}}})),
            "deleted,allocated"
        );
    }
}
