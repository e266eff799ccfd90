//! resource.k8s.io's ResourceSlices (`ValidateResourceSlice`, `ValidateResourceSliceUpdate` of
//! `pkg/apis/resource/validation/validation.go`), as `pkg/registry/resource/resourceslice/
//! strategy.go` runs them: the driver is a CSI driver name, the pool named (DNS subdomains
//! separated by `/`) with a positive slice count; exactly one of `nodeName`, `nodeSelector`
//! (one term), `allNodes` and `perDeviceNodeSelection`; shared counters or devices, not both;
//! at most 128 devices (64 with taints or counter consumption), uniquely named by DNS labels,
//! each with at most 32 attributes and capacities under qualified names, an attribute holding
//! exactly one value (strings at most 64 bytes, versions semantic), taints with a label key
//! and an effect, at most two counter consumptions, node selection of its own only under
//! `perDeviceNodeSelection`, and binding conditions; at most 8 counter sets. The pool name,
//! driver and node name do not change.
//!
//! A consumable capacity (of a device allowing multiple allocations) has one kind of request
//! policy: valid values (sorted, unique, the default among them) or a valid range (minimum,
//! maximum and step fitting the capacity and the default). The alpha fields (list-typed attributes, node allocatable
//! resource mappings) are dropped before, as the strategy drops them.

use std::cmp::Ordering;
use std::sync::LazyLock;

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::dns1123_subdomain_name_errors;
use regex::Regex;

use super::cluster::csi_driver_name;
use super::pod::invalid_int;
use super::read::{int_at, is_set, list_at, str_at};
use super::resource_claims::{
    TAINT_EFFECTS, binding_parameters, dns_label, label_name, label_value, pool_name,
    qualified_name, set_errors, slice_errors,
};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal::{self, Source};
use crate::gotype::quantity;
use crate::wire::object::Object;

/// `ResourceSliceMaxDevices`.
const MAX_DEVICES: usize = 128;
/// `ResourceSliceMaxDevicesWithAdvancedFeatures`.
const MAX_DEVICES_ADVANCED: usize = 64;
/// `ResourceSliceMaxCounterSets`.
const MAX_COUNTER_SETS: usize = 8;
/// `ResourceSliceMaxCountersPerCounterSet`, also per device counter consumption.
const MAX_COUNTERS: usize = 32;
/// `ResourceSliceMaxDeviceCounterConsumptionsPerDevice`.
const MAX_CONSUMPTIONS: usize = 2;
/// `ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
/// `ResourceSliceMaxAttributeValuesPerDevice`.
const MAX_ATTRIBUTE_VALUES: usize = 48;
/// `DeviceAttributeMaxValueLength`.
const MAX_VALUE_LENGTH: usize = 64;
/// `CapacityRequestPolicyDiscreteMaxOptions`.
const MAX_VALID_VALUES: usize = 10;
/// `DeviceTaintsMaxLength`.
const MAX_TAINTS: usize = 16;
/// `attributeAndCapacityMaxKeyLength`: a domain, a slash and an ID.
const MAX_KEY_LENGTH: usize = 63 + 1 + 32;

/// `semverRe`: semver.org 2.0.0 (Go's `\d`: ASCII digits only).
static SEMVER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let numeric = r"(0|[1-9]\d*)";
    let pre = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)";
    let build = r"[0-9a-zA-Z-]+";
    crate::schema::go_regexp::compile(&format!(
        r"^{numeric}\.{numeric}\.{numeric}(-{pre}(\.{pre})*)?(\+{build}(\.{build})*)?$"
    ))
    .ok()
});

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("resource.k8s.io", "ResourceSlice"))
}

/// `ValidateResourceSlice` after the metadata.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    spec_errors(obj.get("spec"), None)
}

/// `ValidateResourceSliceUpdate` after the metadata.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    spec_errors(new.get("spec"), Some(old.get("spec")))
}

/// The strategy's warnings on create and update: a driver name with upper-case letters.
pub(crate) fn warnings(obj: &Object) -> Vec<String> {
    let driver = str_at(obj.get("spec"), "driver");
    if driver == driver.to_lowercase() {
        return Vec::new();
    }
    vec![format!(
        "spec.driver: driver names should be lowercase; {} contains uppercase characters",
        go_json_string(driver)
    )]
}

/// `validateResourceSliceSpec`; `old` on update.
fn spec_errors(spec: Option<&Value>, old: Option<Option<&Value>>) -> Vec<FieldError> {
    let at = Path::new("spec");
    let driver = str_at(spec, "driver");
    let mut errors = csi_driver_name(driver, &at.child("driver"));
    // validateResourcePool
    let pool = spec.and_then(|s| s.get("pool"));
    let pool_at = at.child("pool");
    errors.extend(pool_name(str_at(pool, "name"), &pool_at.child("name")));
    let count = int_at(pool, "resourceSliceCount").unwrap_or(0);
    if count <= 0 {
        errors.push(invalid_int(
            &pool_at.child("resourceSliceCount"),
            count,
            "must be greater than zero",
        ));
    }
    let generation = int_at(pool, "generation").unwrap_or(0);
    if generation < 0 {
        errors.push(invalid_int(
            &pool_at.child("generation"),
            generation,
            "must be greater than or equal to zero",
        ));
    }
    let node_name = spec.and_then(|s| s.get("nodeName")).and_then(Value::as_str);
    if let Some(old) = old {
        let old_pool = str_at(old.and_then(|s| s.get("pool")), "name");
        let new_pool = str_at(pool, "name");
        if new_pool != old_pool {
            errors.push(FieldError::invalid(
                pool_at.child("name"),
                new_pool,
                "field is immutable",
            ));
        }
        if driver != str_at(old, "driver") {
            errors.push(FieldError::invalid(
                at.child("driver"),
                driver,
                "field is immutable",
            ));
        }
        let old_node = old.and_then(|s| s.get("nodeName")).and_then(Value::as_str);
        if node_name != old_node {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                at.child("nodeName"),
                BadValue::Raw(node_name.map_or_else(|| "null".to_owned(), go_json_string)),
                "field is immutable",
            ));
        }
    }
    let mut set_fields = Vec::new();
    if let Some(name) = node_name {
        if name.is_empty() {
            errors.push(FieldError::invalid(
                at.child("nodeName"),
                "",
                "must be either unset or set to a non-empty string",
            ));
        } else {
            set_fields.push("`nodeName`");
            errors.extend(node_name_errors(name, &at.child("nodeName")));
        }
    }
    if let Some(selector) = spec
        .and_then(|s| s.get("nodeSelector"))
        .filter(|s| !s.is_null())
    {
        set_fields.push("`nodeSelector`");
        let selector_at = at.child("nodeSelector");
        errors.extend(super::pod::node_selector(selector, &selector_at));
        let terms = selector.get("nodeSelectorTerms");
        if list_at(Some(selector), "nodeSelectorTerms").len() != 1 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                selector_at.child("nodeSelectorTerms"),
                BadValue::Raw(internal::marshal(
                    "[]core.NodeSelectorTerm",
                    terms,
                    Source::Decoded,
                )),
                "must have exactly one node selector term",
            ));
        }
    }
    for (key, name) in [
        ("allNodes", "`allNodes`"),
        ("perDeviceNodeSelection", "`perDeviceNodeSelection`"),
    ] {
        match spec.and_then(|s| s.get(key)).and_then(Value::as_bool) {
            Some(true) => set_fields.push(name),
            Some(false) => errors.push(FieldError::new(
                ErrorType::Invalid,
                at.child(key),
                BadValue::Raw("false".into()),
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set_fields.len() {
        0 => errors.push(FieldError::required(&at, ONE_OF)),
        1 => {}
        _ => errors.push(FieldError::invalid(
            &at,
            &format!("{{{}}}", set_fields.join(", ")),
            format!("{ONE_OF}, but multiple fields are set"),
        )),
    }
    if is_set(spec, "sharedCounters") && is_set(spec, "devices") {
        errors.push(FieldError::invalid(
            &at,
            "",
            "only one of `sharedCounters` or `devices` is allowed",
        ));
    }
    let devices = list_at(spec, "devices");
    let advanced = devices.iter().any(|d| {
        !list_at(Some(d), "taints").is_empty() || !list_at(Some(d), "consumesCounters").is_empty()
    });
    let per_device = spec
        .and_then(|s| s.get("perDeviceNodeSelection"))
        .and_then(Value::as_bool)
        == Some(true);
    let old_devices = old.map(|o| list_at(o, "devices")).unwrap_or_default();
    errors.extend(set_errors(
        devices,
        if advanced {
            MAX_DEVICES_ADVANCED
        } else {
            MAX_DEVICES
        },
        &at.child("devices"),
        |device, here| {
            let name = str_at(Some(device), "name");
            let old_device = old_devices.iter().find(|d| str_at(Some(d), "name") == name);
            device_errors(device, old_device, here, per_device)
        },
        |device| str_at(Some(device), "name").to_owned(),
    ));
    errors.extend(set_errors(
        list_at(spec, "sharedCounters"),
        MAX_COUNTER_SETS,
        &at.child("sharedCounters"),
        |set, here| {
            let name = str_at(Some(set), "name");
            let mut errors = if name.is_empty() {
                vec![FieldError::required(here.child("name"), "")]
            } else {
                dns_label(name, &here.child("name"))
            };
            errors.extend(counters(set.get("counters"), &here.child("counters")));
            errors
        },
        |set| str_at(Some(set), "name").to_owned(),
    ));
    errors
}

/// `corevalidation.ValidateNodeName` as `validateNodeName` reports it.
fn node_name_errors(name: &str, at: &Path) -> Vec<FieldError> {
    dns1123_subdomain_name_errors(name)
        .into_iter()
        .map(|m| FieldError::invalid(at, name, m))
        .collect()
}

/// Counters by name: required, at most 32, each named by a DNS label (reported at the map).
fn counters(map: Option<&Value>, at: &Path) -> Vec<FieldError> {
    let map = map.and_then(Value::as_object);
    match map {
        None => vec![FieldError::required(at, "")],
        Some(m) if m.is_empty() => vec![FieldError::required(at, "")],
        Some(m) if m.len() > MAX_COUNTERS => {
            vec![FieldError::too_many(
                at,
                m.len() as i64,
                MAX_COUNTERS as i64,
            )]
        }
        Some(m) => m.keys().flat_map(|k| dns_label(k, at)).collect(),
    }
}

/// `truncateIfTooLong`: a key longer than `max` has its middle replaced by `...`.
fn truncated(key: &str, max: usize) -> String {
    let max = max.max(16);
    if key.len() <= max {
        return key.to_owned();
    }
    let remaining = max - 3;
    let head = key.get(..remaining.div_ceil(2)).unwrap_or(key);
    let tail = key.get(key.len() - remaining / 2..).unwrap_or("");
    format!("{head}...{tail}")
}

/// `validateMap` of attributes or capacities: each key a qualified name (reported at the map),
/// then the value at its (truncated) key.
fn qualified_map(
    map: Option<&Map>,
    at: &Path,
    item: impl Fn(&Value, &Path) -> Vec<FieldError>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in map.into_iter().flatten() {
        errors.extend(qualified_name(key, at));
        errors.extend(item(value, &at.key(&truncated(key, MAX_KEY_LENGTH))));
    }
    errors
}

/// `validateDevice`.
fn device_errors(
    device: &Value,
    old_device: Option<&Value>,
    at: &Path,
    per_device: bool,
) -> Vec<FieldError> {
    let mut errors = dns_label(str_at(Some(device), "name"), &at.child("name"));
    let attributes = device.get("attributes").and_then(Value::as_object);
    let capacity = device.get("capacity").and_then(Value::as_object);
    let total = attributes.map_or(0, Map::len) + capacity.map_or(0, Map::len);
    if total > MAX_ATTRIBUTES_AND_CAPACITIES {
        errors.push(invalid_int(
            at,
            total as i64,
            &format!(
                "the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"
            ),
        ));
    }
    // Without list-typed attributes (alpha), each attribute is one value.
    let values = attributes.map_or(0, Map::len);
    if values > MAX_ATTRIBUTE_VALUES {
        errors.push(invalid_int(
            at,
            values as i64,
            &format!("the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"),
        ));
    }
    errors.extend(qualified_map(
        attributes,
        &at.child("attributes"),
        device_attribute,
    ));
    let multiple = device
        .get("allowMultipleAllocations")
        .and_then(Value::as_bool)
        == Some(true);
    errors.extend(qualified_map(capacity, &at.child("capacity"), |c, here| {
        let Some(policy) = c.get("requestPolicy").filter(|p| !p.is_null()) else {
            return Vec::new();
        };
        let policy_at = here.child("requestPolicy");
        if !multiple {
            return vec![FieldError::forbidden(
                policy_at,
                "allowMultipleAllocations must be true",
            )];
        }
        request_policy(str_at(Some(c), "value"), policy, &policy_at)
    }));
    let taints = list_at(Some(device), "taints");
    if old_device.is_none_or(|old| list_at(Some(old), "taints") != taints) {
        errors.extend(slice_errors(
            taints,
            MAX_TAINTS,
            &at.child("taints"),
            device_taint,
        ));
    }
    errors.extend(set_errors(
        list_at(Some(device), "consumesCounters"),
        MAX_CONSUMPTIONS,
        &at.child("consumesCounters"),
        |consumption, here| {
            let set = str_at(Some(consumption), "counterSet");
            let mut errors = if set.is_empty() {
                vec![FieldError::required(here.child("counterSet"), "")]
            } else {
                dns_label(set, &here.child("counterSet"))
            };
            errors.extend(counters(
                consumption.get("counters"),
                &here.child("counters"),
            ));
            errors
        },
        |consumption| str_at(Some(consumption), "counterSet").to_owned(),
    ));
    let node_name = device.get("nodeName").and_then(Value::as_str);
    let node_selector = device.get("nodeSelector").filter(|s| !s.is_null());
    let all_nodes = device.get("allNodes").and_then(Value::as_bool);
    if per_device {
        let mut set_fields = Vec::new();
        if let Some(name) = node_name {
            if name.is_empty() {
                errors.push(FieldError::invalid(
                    at.child("nodeName"),
                    "",
                    "must not be empty",
                ));
            } else {
                set_fields.push("`nodeName`");
                errors.extend(node_name_errors(name, &at.child("nodeName")));
            }
        }
        if let Some(selector) = node_selector {
            set_fields.push("`nodeSelector`");
            errors.extend(super::pod::node_selector(
                selector,
                &at.child("nodeSelector"),
            ));
        }
        match all_nodes {
            Some(true) => set_fields.push("`allNodes`"),
            Some(false) => errors.push(FieldError::new(
                ErrorType::Invalid,
                at.child("allNodes"),
                BadValue::Raw("false".into()),
                "must be either unset or set to true",
            )),
            None => {}
        }
        const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
        match set_fields.len() {
            0 => errors.push(FieldError::required(at, ONE_OF)),
            1 => {}
            _ => errors.push(FieldError::invalid(
                at,
                &format!("{{{}}}", set_fields.join(", ")),
                ONE_OF,
            )),
        }
    } else if node_name.is_some() || node_selector.is_some() || all_nodes.is_some() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw("null".into()),
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        ));
    }
    errors.extend(binding_parameters(device, at));
    errors
}

/// `validateRequestPolicy` of a consumable capacity of `capacity`: one kind of policy; with
/// valid values, a default among them, sorted, at most 10, unique, none above the capacity;
/// with a valid range, a default, a minimum, and a minimum, maximum, step and default that fit
/// the capacity and each other.
fn request_policy(capacity: &str, policy: &Value, at: &Path) -> Vec<FieldError> {
    let values = list_at(Some(policy), "validValues");
    let range = policy.get("validRange").filter(|r| !r.is_null());
    let default = policy.get("default").and_then(Value::as_str);
    if !values.is_empty() && range.is_some() {
        return vec![FieldError::forbidden(
            at,
            r#"exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time"#,
        )];
    }
    if !values.is_empty() {
        let Some(default) = default else {
            return vec![FieldError::required(
                at.child("default"),
                "required when validValues is defined",
            )];
        };
        return valid_values(default, capacity, values, &at.child("validValues"));
    }
    if let Some(range) = range {
        let Some(default) = default else {
            return vec![FieldError::required(
                at.child("default"),
                "required when validRange is defined",
            )];
        };
        return valid_range(default, capacity, range, &at.child("validRange"));
    }
    Vec::new()
}

/// Whether the quantity `a` is greater than `b` (`Cmp > 0`).
fn greater(a: &str, b: &str) -> bool {
    quantity::compare(a, b) == Some(Ordering::Greater)
}

/// `validateRequestPolicyValidValues`.
fn valid_values(default: &str, capacity: &str, values: &[Value], at: &Path) -> Vec<FieldError> {
    let text = |v: &Value| v.as_str().unwrap_or("0").to_owned();
    let mut errors = Vec::new();
    for (i, pair) in values.windows(2).enumerate() {
        let (a, b) = (text(&pair[0]), text(&pair[1]));
        if greater(&a, &b) {
            errors.push(FieldError::invalid(
                at.index(i + 1),
                &b,
                "values must be sorted in ascending order",
            ));
        }
    }
    let found_default = values.len() <= MAX_VALID_VALUES
        && values
            .iter()
            .any(|v| quantity::compare(&text(v), default) == Some(Ordering::Equal));
    errors.extend(set_errors(
        values,
        MAX_VALID_VALUES,
        at,
        |option, here| {
            let option = text(option);
            if greater(&option, capacity) {
                return vec![FieldError::invalid(
                    here,
                    &option,
                    format!("option is larger than capacity value: {capacity}"),
                )];
            }
            Vec::new()
        },
        // `quantityKey`: the whole value.
        |option| {
            quantity::whole_value(&text(option))
                .unwrap_or(0)
                .to_string()
        },
    ));
    if !found_default {
        errors.push(FieldError::invalid(
            at,
            default,
            "default value is not valid according to the requestPolicy",
        ));
    }
    errors
}

/// `validateRequestPolicyRange`.
fn valid_range(default: &str, capacity: &str, range: &Value, at: &Path) -> Vec<FieldError> {
    let Some(min) = range.get("min").and_then(Value::as_str) else {
        return vec![FieldError::required(
            at.child("min"),
            "required when validRange is defined",
        )];
    };
    let mut errors = Vec::new();
    if greater(min, capacity) {
        errors.push(FieldError::invalid(
            at.child("min"),
            min,
            format!("min is larger than capacity value: {capacity}"),
        ));
    }
    if quantity::compare(default, min) == Some(Ordering::Less) {
        errors.push(FieldError::invalid(
            at.child("min"),
            default,
            format!("default is less than min: {min}"),
        ));
    }
    let max = range.get("max").and_then(Value::as_str);
    if let Some(max) = max {
        if greater(min, max) {
            errors.push(FieldError::invalid(
                at.child("max"),
                min,
                format!("min is larger than max: {max}"),
            ));
        }
        if greater(max, capacity) {
            errors.push(FieldError::invalid(
                at.child("max"),
                max,
                format!("max is larger than capacity value: {capacity}"),
            ));
        }
        if greater(default, max) {
            errors.push(FieldError::invalid(
                at.child("max"),
                default,
                format!("default is more than max: {max}"),
            ));
        }
    }
    if let Some(step) = range.get("step").and_then(Value::as_str) {
        let step_at = at.child("step");
        if let Some(added) = quantity::sum(min, step)
            && greater(&added, capacity)
        {
            errors.push(FieldError::invalid(
                &step_at,
                step,
                format!("one step {added} is larger than capacity value: {capacity}"),
            ));
        }
        for value in std::iter::once(default).chain(max) {
            // `validateRequestPolicyRangeStep` on whole values (a zero step is not divided by).
            let whole = |q: &str| quantity::whole_value(q).unwrap_or(0);
            let step_value = whole(step);
            if step_value != 0 && (whole(value) - whole(min)) % step_value != 0 {
                errors.push(FieldError::invalid(
                    &step_at,
                    value,
                    format!("value is not a multiple of a given step ({step}) from ({min})"),
                ));
            }
        }
    }
    errors
}

/// `validateDeviceAttribute`: exactly one value; strings and versions at most 64 bytes,
/// versions semantic.
fn device_attribute(attribute: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut fields = 0;
    for key in ["bool", "int"] {
        if is_set(Some(attribute), key) {
            fields += 1;
        }
    }
    if let Some(value) = attribute.get("string").and_then(Value::as_str) {
        fields += 1;
        if value.len() > MAX_VALUE_LENGTH {
            errors.push(FieldError::too_long(
                at.child("string"),
                MAX_VALUE_LENGTH as i64,
            ));
        }
    }
    if let Some(value) = attribute.get("version").and_then(Value::as_str) {
        fields += 1;
        let semantic = SEMVER.as_ref().is_some_and(|re| re.is_match(value));
        if !semantic {
            errors.push(FieldError::invalid(
                at.child("version"),
                value,
                "must be a string compatible with semver.org spec 2.0.0",
            ));
        }
        if value.len() > MAX_VALUE_LENGTH {
            errors.push(FieldError::too_long(
                at.child("version"),
                MAX_VALUE_LENGTH as i64,
            ));
        }
    }
    match fields {
        0 => errors.push(FieldError::invalid(
            at,
            "",
            "exactly one value must be specified",
        )),
        1 => {}
        _ => errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(internal::marshal(
                "dra.DeviceAttribute",
                Some(attribute),
                Source::Decoded,
            )),
            "exactly one value must be specified",
        )),
    }
    errors
}

/// `validateDeviceTaint` of a new taint: a label key, a label value, an effect.
fn device_taint(taint: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = label_name(str_at(Some(taint), "key"), &at.child("key"));
    let value = str_at(Some(taint), "value");
    if !value.is_empty() {
        errors.extend(label_value(value, &at.child("value")));
    }
    match str_at(Some(taint), "effect") {
        "" => errors.push(FieldError::required(at.child("effect"), "")),
        effect if !TAINT_EFFECTS.contains(&effect) => {
            errors.push(FieldError::not_supported_named(
                at.child("effect"),
                effect,
                &TAINT_EFFECTS,
            ));
        }
        _ => {}
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn long_keys_are_truncated_in_the_middle() {
        assert_eq!(truncated("short", 96), "short");
        let long = "a".repeat(50) + &"b".repeat(50);
        let t = truncated(&long, 96);
        assert_eq!(t.len(), 96);
        assert!(t.starts_with("aaaa") && t.ends_with("bbbb") && t.contains("..."));
    }

    #[test]
    fn versions_are_semantic() {
        let errors = device_attribute(&json!({"version": "1.0"}), &Path::new("a"));
        assert_eq!(errors.len(), 1);
        assert!(
            device_attribute(&json!({"version": "1.0.0-rc.1+b.2"}), &Path::new("a")).is_empty()
        );
    }

    #[test]
    fn a_slice_selects_nodes_exactly_one_way() {
        let obj = json!({"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": true, "nodeName": "n"}});
        let errors = validate_create(obj.as_object().unwrap_or(&Map::new()));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .cause()
                .message
                .contains("{`nodeName`, `allNodes`}")
        );
    }
}
