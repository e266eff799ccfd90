//! storage.k8s.io's CSIDrivers (`ValidateCSIDriver`, `ValidateCSIDriverUpdate`) and CSINodes
//! (`ValidateCSINode`, `ValidateCSINodeUpdate`) of `pkg/apis/storage/validation/validation.go`,
//! as `pkg/registry/storage/csidriver/strategy.go` and `pkg/registry/storage/csinode/strategy.go`
//! run them: a driver's spec fields are set (defaulting sets them) and in range, and
//! `attachRequired` and the lifecycle modes do not change; a CSINode's drivers are named as CSI
//! drivers, unique, with a node ID, a count not negative and unique qualified topology keys, and
//! an entry keeps all but its allocatable count.

use std::collections::HashSet;

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::label_key_errors;

use super::cluster::{csi_driver_name, string_list_json};
use super::read::{int_at, is_set, list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("storage.k8s.io", "CSIDriver" | "CSINode"))
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    if kind == "CSIDriver" {
        return driver_spec(obj.get("spec"));
    }
    csi_node(obj)
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "CSIDriver" {
        let (spec, old_spec) = (new.get("spec"), old.get("spec"));
        let mut errors = driver_spec(spec);
        let field = |s: Option<&Value>, key: &str| {
            s.and_then(|s| s.get(key)).filter(|v| !v.is_null()).cloned()
        };
        let attach = field(spec, "attachRequired");
        if attach != field(old_spec, "attachRequired") {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.attachedRequired",
                BadValue::Raw(attach.map_or_else(|| "null".to_owned(), |v| v.to_string())),
                "field is immutable",
            ));
        }
        let modes = field(spec, "volumeLifecycleModes");
        if modes != field(old_spec, "volumeLifecycleModes") {
            let printed = match &modes {
                Some(Value::Array(list)) => string_list_json(list),
                _ => "null".to_owned(),
            };
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.volumeLifecycleModes",
                BadValue::Raw(printed),
                "field is immutable",
            ));
        }
        return errors;
    }
    let mut errors = csi_node(new);
    let drivers = |obj: &Object| list_at(obj.get("spec"), "drivers").to_vec();
    for before in drivers(old) {
        for now in drivers(new) {
            if str_at(Some(&now), "name") == str_at(Some(&before), "name")
                && without_allocatable(&now) != without_allocatable(&before)
            {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "spec.drivers",
                    BadValue::Raw(internal_driver_json(&now)),
                    "field is immutable",
                ));
            }
        }
    }
    errors
}

/// A driver entry without its allocatable count, which may change
/// (`MutableCSINodeAllocatableCount`).
fn without_allocatable(driver: &Value) -> Value {
    let mut copy = driver.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("allocatable");
        if map.get("topologyKeys").is_some_and(Value::is_null) {
            map.remove("topologyKeys");
        }
    }
    copy
}

/// The internal `*CSINodeDriver` as `json.Marshal` writes it (no JSON names), its
/// allocatable count cleared as the comparison clears it.
fn internal_driver_json(driver: &Value) -> String {
    let d = Some(driver);
    let keys = match driver.get("topologyKeys") {
        Some(Value::Array(list)) => string_list_json(list),
        _ => "null".to_owned(),
    };
    format!(
        r#"{{"Name":{},"NodeID":{},"TopologyKeys":{keys},"Allocatable":null}}"#,
        go_json_string(str_at(d, "name")),
        go_json_string(str_at(d, "nodeID")),
    )
}

/// `validateCSIDriverSpec`.
fn driver_spec(spec: Option<&Value>) -> Vec<FieldError> {
    let at = Path::new("spec");
    let mut errors = Vec::new();
    for (key, path) in [
        ("attachRequired", "attachedRequired"),
        ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity"),
    ] {
        if !is_set(spec, key) {
            errors.push(FieldError::required(at.child(path), ""));
        }
    }
    if is_set(spec, "fsGroupPolicy") {
        let policy = str_at(spec, "fsGroupPolicy");
        const POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
        if !POLICIES.contains(&policy) {
            errors.push(FieldError::not_supported(
                at.child("fsGroupPolicy"),
                policy,
                &POLICIES,
            ));
        }
    }
    let tokens = list_at(spec, "tokenRequests");
    let mut audiences = HashSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let here = at.child("tokenRequests").index(i);
        let audience = str_at(Some(token), "audience");
        if !audiences.insert(audience) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                here.child("audience"),
                BadValue::Str(audience.to_owned()),
                "",
            ));
            continue;
        }
        let Some(seconds) = int_at(Some(token), "expirationSeconds") else {
            continue;
        };
        let expiration = |detail: &str| {
            FieldError::new(
                ErrorType::Invalid,
                here.child("expirationSeconds"),
                BadValue::Raw(seconds.to_string()),
                detail,
            )
        };
        if seconds < 600 {
            errors.push(expiration(
                "may not specify a duration less than 10 minutes",
            ));
        }
        if seconds > 1 << 32 {
            errors.push(expiration(
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    for mode in list_at(spec, "volumeLifecycleModes") {
        let mode = mode.as_str().unwrap_or("");
        if !["Persistent", "Ephemeral"].contains(&mode) {
            errors.push(FieldError::not_supported(
                at.child("volumeLifecycleModes"),
                mode,
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    if !is_set(spec, "seLinuxMount") {
        errors.push(FieldError::required(at.child("seLinuxMount"), ""));
    }
    if let Some(period) = int_at(spec, "nodeAllocatableUpdatePeriodSeconds")
        && period < 10
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at.child("nodeAllocatableUpdatePeriodSeconds"),
            BadValue::Raw(period.to_string()),
            "must be greater than or equal to 10 seconds",
        ));
    }
    if let Some(in_secrets) = spec
        .and_then(|s| s.get("serviceAccountTokenInSecrets"))
        .and_then(Value::as_bool)
        && tokens.is_empty()
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at.child("serviceAccountTokenInSecrets"),
            BadValue::Raw(in_secrets.to_string()),
            "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
        ));
    }
    errors
}

/// `validateCSINodeSpec`: each driver.
fn csi_node(obj: &Object) -> Vec<FieldError> {
    let at = Path::new("spec").child("drivers");
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, driver) in list_at(obj.get("spec"), "drivers").iter().enumerate() {
        let here = at.index(i);
        let d = Some(driver);
        let name = str_at(d, "name");
        errors.extend(csi_driver_name(name, &here.child("name")));
        let node_id = str_at(d, "nodeID");
        if node_id.is_empty() {
            errors.push(FieldError::required(here.child("nodeID"), ""));
        }
        if node_id.len() > 256 {
            errors.push(FieldError::invalid(
                here.child("nodeID"),
                node_id,
                "must be 256 characters or less",
            ));
        }
        if let Some(count) = int_at(driver.get("allocatable"), "count")
            && count < 0
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                here.child("allocatable").child("count"),
                BadValue::Raw(count.to_string()),
                "must be greater than or equal to 0",
            ));
        }
        if !names.insert(name) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                here.child("name"),
                BadValue::Str(name.to_owned()),
                "",
            ));
        }
        let mut keys = HashSet::new();
        for key in list_at(d, "topologyKeys") {
            let key = key.as_str().unwrap_or("");
            if key.is_empty() {
                errors.push(FieldError::required(&here, ""));
            }
            if !keys.insert(key) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    &here,
                    BadValue::Str(key.to_owned()),
                    "",
                ));
            }
            for message in label_key_errors(key) {
                errors.push(FieldError::invalid(&here, key, message));
            }
        }
    }
    errors
}
