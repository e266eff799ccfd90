//! resource.k8s.io's ResourceClaims and ResourceClaimTemplates (`ValidateResourceClaim`,
//! `ValidateResourceClaimUpdate`, `ValidateResourceClaimStatusUpdate`,
//! `ValidateResourceClaimTemplate` and `ValidateResourceClaimTemplateUpdate` of
//! `pkg/apis/resource/validation/validation.go`), as `pkg/registry/resource/resourceclaim` and
//! `resourceclaimtemplate`'s `strategy.go` run them, and the parts of a device claim DeviceClasses
//! share (selectors, opaque configuration):
//!
//! - a request is named by a DNS label, unique in the claim; it is exactly one of `exactly` and
//!   `firstAvailable` (at most 8 sub-requests, uniquely named); each names a device class (a
//!   DNS subdomain), has at most 32 selectors, each a CEL expression that compiles in the
//!   device environment ([`crate::schema::device_selector_error`]), an allocation mode
//!   (`ExactCount` with a positive count, or `All` with none) and tolerations;
//! - constraints and configurations refer to requests (`request` or `request/subRequest`); a
//!   constraint has a fully qualified `matchAttribute` or `distinctAttribute`; a
//!   configuration is opaque: a driver name and parameters that are a JSON object;
//! - a claim's spec does not change after create, nor does a template's;
//! - through `/status`: what the claim is reserved for (at most 256 consumers, unique by UID,
//!   each with a resource, a name and a UID; only once allocated, none added while deleted),
//!   the status of allocated devices (names, conditions, data that is a JSON object, network
//!   data: short names, canonical interface addresses), a new allocation's results and
//!   configuration, and its node selector; an allocation does not change.
//!
//! Not checked: the cost limit of selector expressions. The admin-access namespace label
//! (`AuthorizedForAdmin`) is checked by the handlers, which read the namespace
//! (`handlers::admin_access`).

use std::net::IpAddr;

use recon_apimachinery::go_json::{go_json, go_json_string};
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, label_value_errors,
};

use super::cluster::csi_driver_name;
use super::pod::invalid_int;
use super::read::{int_at, is_set, list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal::{self, Source};
use crate::schema::SelectorError;
use crate::wire::object::Object;

/// `DeviceRequestsMaxSize`, also `AllocationResultsMaxSize`.
const MAX_REQUESTS: usize = 32;
/// `DeviceConstraintsMaxSize`.
const MAX_CONSTRAINTS: usize = 32;
/// `DeviceConfigMaxSize`.
pub(super) const MAX_CONFIGS: usize = 32;
/// `FirstAvailableDeviceRequestMaxSize`.
const MAX_SUB_REQUESTS: usize = 8;
/// `DeviceSelectorsMaxSize`.
pub(super) const MAX_SELECTORS: usize = 32;
/// `CELSelectorExpressionMaxLength`.
const MAX_EXPRESSION_LENGTH: usize = 10 * 1024;
/// `OpaqueParametersMaxLength`.
const MAX_PARAMETERS_LENGTH: usize = 10 * 1024;
/// `ResourceClaimReservedForMaxSize`.
const MAX_RESERVED_FOR: usize = 256;
/// `PoolNameMaxLength`.
const MAX_POOL_NAME: usize = 253;
/// `BindingConditionsMaxSize`, also `BindingFailureConditionsMaxSize`.
const MAX_BINDING_CONDITIONS: usize = 4;
/// `DeviceMaxIDLength`.
const MAX_ID_LENGTH: usize = 32;
/// `AllocatedDeviceStatusMaxConditions`.
const MAX_DEVICE_CONDITIONS: usize = 8;
/// `AllocatedDeviceStatusDataMaxLength`.
const MAX_DEVICE_DATA: usize = 10 * 1024;
/// `NetworkDeviceDataInterfaceNameMaxLength`.
const MAX_INTERFACE_NAME: usize = 256;
/// `NetworkDeviceDataHardwareAddressMaxLength`.
const MAX_HARDWARE_ADDRESS: usize = 128;
/// `NetworkDeviceDataMaxIPs`.
const MAX_IPS: usize = 16;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("resource.k8s.io", "ResourceClaim" | "ResourceClaimTemplate")
    )
}

/// `ValidateResourceClaim` and `ValidateResourceClaimTemplate` after the metadata.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    if kind == "ResourceClaimTemplate" {
        let at = Path::new("spec");
        let mut errors = super::volume_sources::template_object_meta(
            spec.and_then(|s| s.get("metadata")),
            &at.child("metadata"),
        );
        errors.extend(claim_spec(
            spec.and_then(|s| s.get("spec")),
            &at.child("spec"),
        ));
        return errors;
    }
    claim_spec(spec, &Path::new("spec"))
}

/// `ValidateResourceClaimUpdate` (the spec as before) and the template strategy's update (the
/// template validated again, then its spec as before; the handler places the metadata errors
/// among these through `validate_update_placing_meta`).
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "ResourceClaimTemplate" {
        let mut errors = validate_create(kind, new);
        errors.extend(immutable_template_spec(new, old));
        return errors;
    }
    immutable(
        "dra.ResourceClaimSpec",
        new.get("spec"),
        old.get("spec"),
        "spec",
    )
    .into_iter()
    .collect()
}

/// A template's spec as before (`ValidateResourceClaimTemplateUpdate` after the metadata).
pub(super) fn immutable_template_spec(new: &Object, old: &Object) -> Option<FieldError> {
    immutable(
        "dra.ResourceClaimTemplateSpec",
        new.get("spec"),
        old.get("spec"),
        "spec",
    )
}

/// `ValidateImmutableField` of a value of the internal type `root`: the new value quoted as
/// `json.Marshal` writes the internal struct.
fn immutable(root: &str, new: Option<&Value>, old: Option<&Value>, at: &str) -> Option<FieldError> {
    (!internal::semantic_eq(root, new, old)).then(|| {
        FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(internal::marshal(root, new, Source::Decoded)),
            "field is immutable",
        )
    })
}

/// `ValidateResourceClaimStatusUpdate` after the metadata.
pub(super) fn validate_status_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let at = Path::new("status");
    let status = new.get("status");
    let old_status = old.get("status");
    let names = RequestNames::of(new.get("spec").and_then(|s| s.get("devices")));
    let reserved_at = at.child("reservedFor");
    let reserved = list_at(status, "reservedFor");
    let mut errors = set_errors(
        reserved,
        MAX_RESERVED_FOR,
        &reserved_at,
        |consumer, here| {
            let mut errors = Vec::new();
            for key in ["resource", "name", "uid"] {
                if str_at(Some(consumer), key).is_empty() {
                    errors.push(FieldError::required(here.child(key), ""));
                }
            }
            errors
        },
        |consumer| str_at(Some(consumer), "uid").to_owned(),
    );
    let allocation = status
        .and_then(|s| s.get("allocation"))
        .filter(|a| !a.is_null());
    let old_allocation = old_status
        .and_then(|s| s.get("allocation"))
        .filter(|a| !a.is_null());
    errors.extend(device_statuses(
        list_at(status, "devices"),
        allocation,
        &at.child("devices"),
    ));
    if !reserved.is_empty() {
        if allocation.is_none() {
            errors.push(FieldError::forbidden(
                &reserved_at,
                "may not be specified when `allocated` is not set",
            ));
        } else if is_set(new.get("metadata"), "deletionTimestamp") {
            let before = list_at(old_status, "reservedFor");
            if reserved.iter().any(|r| !before.contains(r)) {
                errors.push(FieldError::forbidden(
                    &reserved_at,
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                ));
            }
        }
    }
    match (allocation, old_allocation) {
        (Some(new_allocation), Some(old_allocation)) => {
            errors.extend(immutable(
                "dra.AllocationResult",
                Some(new_allocation),
                Some(old_allocation),
                "status.allocation",
            ));
        }
        (Some(allocation), None) => {
            errors.extend(allocation_result(
                allocation,
                &at.child("allocation"),
                &names,
            ));
        }
        _ => {}
    }
    errors
}

/// A device as `structured.SharedDeviceID` is written by `json.Marshal` (a nil share ID as
/// an empty one), which a device status is quoted as.
fn shared_device_id(item: &Value) -> String {
    format!(
        r#"{{"Driver":{},"Pool":{},"Device":{},"ShareID":{}}}"#,
        go_json_string(str_at(Some(item), "driver")),
        go_json_string(str_at(Some(item), "pool")),
        go_json_string(str_at(Some(item), "device")),
        go_json_string(str_at(Some(item), "shareID")),
    )
}

/// `dropDeallocatedStatusDevices` (the status strategy's `PrepareForUpdate`): the status of a
/// device the old allocation held and the new one does not is dropped.
pub(crate) fn drop_deallocated_devices(new: &mut Object, old: &Object) {
    let results = |obj: &Object| -> Vec<String> {
        let allocation = obj.get("status").and_then(|s| s.get("allocation"));
        list_at(allocation.and_then(|a| a.get("devices")), "results")
            .iter()
            .map(shared_device_id)
            .collect()
    };
    let kept = results(new);
    let deallocated: Vec<String> = results(old)
        .into_iter()
        .filter(|id| !kept.contains(id))
        .collect();
    let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(devices) = status.get_mut("devices").and_then(Value::as_array_mut) else {
        return;
    };
    devices.retain(|d| !deallocated.contains(&shared_device_id(d)));
    if devices.is_empty() {
        status.remove("devices");
    }
}

/// The `devices` of a claim's status: each validated (`validateDeviceStatus`), then each
/// device (and share) reported after its first.
fn device_statuses(devices: &[Value], allocation: Option<&Value>, at: &Path) -> Vec<FieldError> {
    let allocated: Vec<String> = list_at(allocation.and_then(|a| a.get("devices")), "results")
        .iter()
        .map(shared_device_id)
        .collect();
    let mut errors: Vec<FieldError> = devices
        .iter()
        .enumerate()
        .flat_map(|(i, device)| device_status(device, &allocated, &at.index(i)))
        .collect();
    let mut seen = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        let id = shared_device_id(device);
        if seen.contains(&id) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                at.index(i),
                BadValue::Raw(id),
                "",
            ));
        } else {
            seen.push(id);
        }
    }
    errors
}

/// `validateDeviceStatus`.
fn device_status(device: &Value, allocated: &[String], at: &Path) -> Vec<FieldError> {
    let mut errors = csi_driver_name(str_at(Some(device), "driver"), &at.child("driver"));
    errors.extend(pool_name(str_at(Some(device), "pool"), &at.child("pool")));
    errors.extend(dns_label(
        str_at(Some(device), "device"),
        &at.child("device"),
    ));
    if let Some(share) = device.get("shareID").and_then(Value::as_str) {
        errors.extend(uid(share, &at.child("shareID")));
    }
    let id = shared_device_id(device);
    if !allocated.contains(&id) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(id),
            "must be an allocated device in the claim",
        ));
    }
    let conditions = list_at(Some(device), "conditions");
    if conditions.len() > MAX_DEVICE_CONDITIONS {
        errors.push(FieldError::too_many(
            at.child("conditions"),
            conditions.len() as i64,
            MAX_DEVICE_CONDITIONS as i64,
        ));
    }
    errors.extend(super::conditions::conditions(
        conditions,
        &at.child("conditions"),
    ));
    if let Some(data) = device.get("data").filter(|d| !d.is_null()) {
        errors.extend(raw_extension(
            Some(data),
            &at.child("data"),
            false,
            MAX_DEVICE_DATA,
        ));
    }
    if let Some(network) = device.get("networkData").filter(|n| !n.is_null()) {
        let network_at = at.child("networkData");
        if str_at(Some(network), "interfaceName").len() > MAX_INTERFACE_NAME {
            errors.push(FieldError::too_long(
                network_at.child("interfaceName"),
                MAX_INTERFACE_NAME as i64,
            ));
        }
        if str_at(Some(network), "hardwareAddress").len() > MAX_HARDWARE_ADDRESS {
            errors.push(FieldError::too_long(
                network_at.child("hardwareAddress"),
                MAX_HARDWARE_ADDRESS as i64,
            ));
        }
        errors.extend(set_errors(
            list_at(Some(network), "ips"),
            MAX_IPS,
            &network_at.child("ips"),
            |ip, here| interface_address(ip.as_str().unwrap_or(""), here),
            |ip| ip.as_str().unwrap_or("").to_owned(),
        ));
    }
    errors
}

/// `validation.IsValidInterfaceAddress`: an address with a prefix length, in canonical form.
fn interface_address(value: &str, at: &Path) -> Vec<FieldError> {
    let Some((ip, mut bits)) = super::service_addresses::sloppy_cidr(value) else {
        return vec![FieldError::invalid(
            at,
            value,
            "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)",
        )];
    };
    // Go prints an IPv4-mapped address as IPv4, its prefix counted in IPv4 bits.
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => {
                if bits > 32 {
                    bits -= 96;
                }
                IpAddr::V4(v4)
            }
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    let canonical = format!("{ip}/{bits}");
    if value == canonical {
        return Vec::new();
    }
    vec![FieldError::invalid(
        at,
        value,
        format!("must be in canonical form ({})", go_json_string(&canonical)),
    )]
}

/// The names of a claim's requests, each with its sub-requests' (`gatherRequestNames`).
struct RequestNames(Vec<(String, Option<Vec<String>>)>);

impl RequestNames {
    fn of(devices: Option<&Value>) -> RequestNames {
        RequestNames(
            list_at(devices, "requests")
                .iter()
                .map(|r| {
                    let subs = list_at(Some(r), "firstAvailable");
                    let subs = (!subs.is_empty()).then(|| {
                        subs.iter()
                            .map(|s| str_at(Some(s), "name").to_owned())
                            .collect()
                    });
                    (str_at(Some(r), "name").to_owned(), subs)
                })
                .collect(),
        )
    }

    /// `requestNames.Has`: a request, or a request and one of its sub-requests.
    fn has(&self, reference: &str) -> bool {
        let segments: Vec<&str> = reference.split('/').collect();
        if segments.len() > 2 {
            return false;
        }
        // A later request of the same name replaces an earlier one, as in Go's map.
        let Some((_, subs)) = self.0.iter().rev().find(|(n, _)| n == segments[0]) else {
            return false;
        };
        match segments.get(1) {
            None => true,
            Some(sub) => subs.as_ref().is_some_and(|s| s.iter().any(|n| n == sub)),
        }
    }
}

/// `validateResourceClaimSpec`.
fn claim_spec(spec: Option<&Value>, at: &Path) -> Vec<FieldError> {
    let devices = spec.and_then(|s| s.get("devices"));
    let at = at.child("devices");
    let names = RequestNames::of(devices);
    let mut errors = set_errors(
        list_at(devices, "requests"),
        MAX_REQUESTS,
        &at.child("requests"),
        device_request,
        |r| str_at(Some(r), "name").to_owned(),
    );
    errors.extend(slice_errors(
        list_at(devices, "constraints"),
        MAX_CONSTRAINTS,
        &at.child("constraints"),
        |c, here| constraint(c, here, &names),
    ));
    errors.extend(slice_errors(
        list_at(devices, "config"),
        MAX_CONFIGS,
        &at.child("config"),
        |c, here| {
            let mut errors = request_refs(c, here, &names);
            errors.extend(device_configuration(c, here, false));
            errors
        },
    ));
    errors
}

/// `validateSlice`: at most `max` items (the only error then), each validated.
pub(super) fn slice_errors(
    items: &[Value],
    max: usize,
    at: &Path,
    item: impl Fn(&Value, &Path) -> Vec<FieldError>,
) -> Vec<FieldError> {
    if items.len() > max {
        return vec![FieldError::too_many(at, items.len() as i64, max as i64)];
    }
    items
        .iter()
        .enumerate()
        .flat_map(|(i, v)| item(v, &at.index(i)))
        .collect()
}

/// `validateSet`: [`slice_errors`], then a `Duplicate` of each item whose key came before.
pub(super) fn set_errors(
    items: &[Value],
    max: usize,
    at: &Path,
    item: impl Fn(&Value, &Path) -> Vec<FieldError>,
    key: impl Fn(&Value) -> String,
) -> Vec<FieldError> {
    if items.len() > max {
        return vec![FieldError::too_many(at, items.len() as i64, max as i64)];
    }
    let mut errors = slice_errors(items, max, at, item);
    let mut seen = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let k = key(v);
        if seen.contains(&k) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                at.index(i),
                BadValue::Str(k),
                "",
            ));
        } else {
            seen.push(k);
        }
    }
    errors
}

/// `corevalidation.ValidateDNS1123Label` (request names, device names, counter names).
pub(super) fn dns_label(value: &str, at: &Path) -> Vec<FieldError> {
    dns1123_label_errors(value)
        .into_iter()
        .map(|m| FieldError::invalid(at, value, m))
        .collect()
}

/// `validateDeviceRequest`.
fn device_request(request: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = dns_label(str_at(Some(request), "name"), &at.child("name"));
    let first_available = list_at(Some(request), "firstAvailable");
    let exactly = request.get("exactly").filter(|e| !e.is_null());
    match (first_available.is_empty(), exactly) {
        (true, None) => errors.push(FieldError::required(
            at,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (false, Some(_)) => errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw("null".into()),
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (false, None) => errors.extend(set_errors(
            first_available,
            MAX_SUB_REQUESTS,
            &at.child("firstAvailable"),
            |sub, here| {
                let mut errors = dns_label(str_at(Some(sub), "name"), &here.child("name"));
                errors.extend(exact_request(sub, here));
                errors
            },
            |sub| str_at(Some(sub), "name").to_owned(),
        )),
        (true, Some(exactly)) => errors.extend(exact_request(exactly, &at.child("exactly"))),
    }
    errors
}

/// `validateExactDeviceRequest`, also what `validateDeviceSubRequest` checks after the name.
fn exact_request(request: &Value, at: &Path) -> Vec<FieldError> {
    let class = str_at(Some(request), "deviceClassName");
    let class_at = at.child("deviceClassName");
    let mut errors = if class.is_empty() {
        vec![FieldError::required(&class_at, "")]
    } else {
        dns1123_subdomain_name_errors(class)
            .into_iter()
            .map(|m| FieldError::invalid(&class_at, class, m))
            .collect()
    };
    errors.extend(selectors(
        list_at(Some(request), "selectors"),
        &at.child("selectors"),
    ));
    // validateDeviceAllocationMode
    let count = int_at(Some(request), "count").unwrap_or(0);
    match str_at(Some(request), "allocationMode") {
        "All" => {
            if count != 0 {
                errors.push(invalid_int(
                    &at.child("count"),
                    count,
                    "must not be specified when allocationMode is 'All'",
                ));
            }
        }
        "ExactCount" => {
            if count <= 0 {
                errors.push(invalid_int(
                    &at.child("count"),
                    count,
                    "must be greater than zero",
                ));
            }
        }
        mode => errors.push(FieldError::not_supported_named(
            at.child("allocationMode"),
            mode,
            &["All", "ExactCount"],
        )),
    }
    for (i, toleration) in list_at(Some(request), "tolerations").iter().enumerate() {
        errors.extend(device_toleration(
            toleration,
            &at.child("tolerations").index(i),
        ));
    }
    errors
}

/// `validateSelectorSlice`: at most 32 selectors, each a CEL expression.
pub(super) fn selectors(list: &[Value], at: &Path) -> Vec<FieldError> {
    slice_errors(list, MAX_SELECTORS, at, |selector, here| {
        let Some(cel) = selector.get("cel").filter(|c| !c.is_null()) else {
            return vec![FieldError::required(here.child("cel"), "")];
        };
        // validateCELSelector
        let expression = str_at(Some(cel), "expression");
        let expression_at = here.child("cel").child("expression");
        if expression.len() > MAX_EXPRESSION_LENGTH {
            return vec![FieldError::too_long(
                expression_at,
                MAX_EXPRESSION_LENGTH as i64,
            )];
        }
        match crate::schema::device_selector_error(expression) {
            None => Vec::new(),
            Some(SelectorError::Invalid(detail)) => {
                vec![FieldError::invalid(&expression_at, expression, detail)]
            }
            Some(SelectorError::TooComplex) => vec![FieldError::forbidden(
                expression_at,
                SelectorError::TOO_COMPLEX,
            )],
        }
    })
}

/// The effects of a device taint (`validDeviceTaintEffects`, sorted).
pub(super) const TAINT_EFFECTS: [&str; 3] = ["NoExecute", "NoSchedule", "None"];

/// `validateDeviceToleration`.
fn device_toleration(toleration: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let key = str_at(Some(toleration), "key");
    if !key.is_empty() {
        errors.extend(label_name(key, &at.child("key")));
    }
    let value = str_at(Some(toleration), "value");
    match str_at(Some(toleration), "operator") {
        "Exists" => {
            if !value.is_empty() {
                errors.push(FieldError::invalid(
                    at.child("value"),
                    value,
                    "must be empty for operator `Exists`",
                ));
            }
        }
        "Equal" => errors.extend(label_value(value, &at.child("value"))),
        "" => errors.push(FieldError::required(at.child("operator"), "")),
        operator => errors.push(FieldError::not_supported_named(
            at.child("operator"),
            operator,
            &["Equal", "Exists"],
        )),
    }
    let effect = str_at(Some(toleration), "effect");
    if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect) {
        errors.push(FieldError::not_supported_named(
            at.child("effect"),
            effect,
            &TAINT_EFFECTS,
        ));
    }
    errors
}

/// `metav1validation.ValidateLabelName`.
pub(super) fn label_name(name: &str, at: &Path) -> Vec<FieldError> {
    label_key_errors(name)
        .into_iter()
        .map(|m| FieldError::invalid(at, name, m))
        .collect()
}

/// `validateLabelValue`.
pub(super) fn label_value(value: &str, at: &Path) -> Vec<FieldError> {
    label_value_errors(value)
        .into_iter()
        .map(|m| FieldError::invalid(at, value, m))
        .collect()
}

/// `validateDeviceConstraint`.
fn constraint(constraint: &Value, at: &Path, names: &RequestNames) -> Vec<FieldError> {
    let mut errors = request_refs(constraint, at, names);
    if let Some(name) = constraint.get("matchAttribute").and_then(Value::as_str) {
        errors.extend(fully_qualified_name(name, &at.child("matchAttribute")));
    } else if let Some(name) = constraint.get("distinctAttribute").and_then(Value::as_str) {
        errors.extend(fully_qualified_name(name, &at.child("distinctAttribute")));
    } else {
        // With DRAConsumableCapacity (on by default).
        errors.push(FieldError::required(
            at,
            r#"exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set"#,
        ));
    }
    errors
}

/// The `requests` of a constraint or configuration: at most 32, unique, each naming a request.
fn request_refs(item: &Value, at: &Path, names: &RequestNames) -> Vec<FieldError> {
    set_errors(
        list_at(Some(item), "requests"),
        MAX_REQUESTS,
        &at.child("requests"),
        |name, here| request_ref(name.as_str().unwrap_or(""), here, names),
        |name| name.as_str().unwrap_or("").to_owned(),
    )
}

/// `validateRequestNameRef`.
fn request_ref(name: &str, at: &Path, names: &RequestNames) -> Vec<FieldError> {
    const NOT_A_REQUEST: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        return vec![FieldError::invalid(at, name, NOT_A_REQUEST)];
    }
    let mut errors: Vec<FieldError> = segments.iter().flat_map(|s| dns_label(s, at)).collect();
    if !names.has(name) {
        errors.push(FieldError::invalid(at, name, NOT_A_REQUEST));
    }
    errors
}

/// `validateFullyQualifiedName`: a qualified name that has a domain.
pub(super) fn fully_qualified_name(name: &str, at: &Path) -> Vec<FieldError> {
    let mut errors = qualified_name(name, at);
    if !name.contains('/') {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(recon_apimachinery::go_json::go_json_string(name)),
            "a fully qualified name must be a domain and a name separated by a slash",
        ));
    }
    errors
}

/// `validateQualifiedName`: a C identifier, or a driver name and a C identifier separated by a
/// slash (more slashes are not checked, as upstream).
pub(super) fn qualified_name(name: &str, at: &Path) -> Vec<FieldError> {
    let parts: Vec<&str> = name.split('/').collect();
    let mut errors = Vec::new();
    match parts.as_slice() {
        [id] => errors.extend(c_identifier(id, at)),
        [domain, id] => {
            if domain.is_empty() {
                errors.push(FieldError::invalid(at, "", "the domain must not be empty"));
            } else {
                errors.extend(csi_driver_name(domain, at));
            }
            if id.is_empty() {
                errors.push(FieldError::invalid(at, "", "the name must not be empty"));
            } else {
                errors.extend(c_identifier(id, at));
            }
        }
        _ => {}
    }
    errors
}

/// `validateCIdentifier`: at most 32 bytes, and `content.IsCIdentifier`.
fn c_identifier(id: &str, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if id.len() > MAX_ID_LENGTH {
        errors.push(FieldError::too_long(at, MAX_ID_LENGTH as i64));
    }
    let mut chars = id.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        errors.push(FieldError::invalid(
            at,
            id,
            "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ));
    }
    errors
}

/// `validateDeviceConfiguration`: the `opaque` configuration, required. `stored`: the
/// parameters were accepted before, so their size is not checked.
pub(super) fn device_configuration(config: &Value, at: &Path, stored: bool) -> Vec<FieldError> {
    let Some(opaque) = config.get("opaque").filter(|o| !o.is_null()) else {
        return vec![FieldError::required(at.child("opaque"), "")];
    };
    let at = at.child("opaque");
    let mut errors = csi_driver_name(str_at(Some(opaque), "driver"), &at.child("driver"));
    errors.extend(raw_extension(
        opaque.get("parameters"),
        &at.child("parameters"),
        stored,
        MAX_PARAMETERS_LENGTH,
    ));
    errors
}

/// `validateRawExtension`: set, at most `max` bytes (unless `stored`), a JSON object.
fn raw_extension(value: Option<&Value>, at: &Path, stored: bool, max: usize) -> Vec<FieldError> {
    let value = match value {
        None | Some(Value::Null) => return vec![FieldError::required(at, "")],
        Some(v) => v,
    };
    // The raw bytes as sent; recon-fake holds the parsed value and measures it compacted.
    if !stored && go_json(value).len() > max {
        return vec![FieldError::too_long(at, max as i64)];
    }
    if !value.is_object() {
        return vec![FieldError::invalid(
            at,
            "<value omitted>",
            "must be a valid JSON object",
        )];
    }
    Vec::new()
}

/// `validatePoolName`: required; at most 253 bytes; each `/`-separated part a DNS subdomain.
pub(super) fn pool_name(name: &str, at: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(at, "")];
    }
    let mut errors = Vec::new();
    if name.len() > MAX_POOL_NAME {
        errors.push(FieldError::too_long(at, MAX_POOL_NAME as i64));
    }
    for part in name.split('/') {
        for message in dns1123_subdomain_name_errors(part) {
            errors.push(FieldError::invalid(at, part, message));
        }
    }
    errors
}

/// `validateAllocationResult` of a new allocation.
fn allocation_result(allocation: &Value, at: &Path, names: &RequestNames) -> Vec<FieldError> {
    let devices = allocation.get("devices");
    let devices_at = at.child("devices");
    let mut errors = slice_errors(
        list_at(devices, "results"),
        MAX_REQUESTS,
        &devices_at.child("results"),
        |result, here| {
            let mut errors = request_ref(
                str_at(Some(result), "request"),
                &here.child("request"),
                names,
            );
            errors.extend(csi_driver_name(
                str_at(Some(result), "driver"),
                &here.child("driver"),
            ));
            errors.extend(pool_name(str_at(Some(result), "pool"), &here.child("pool")));
            errors.extend(dns_label(
                str_at(Some(result), "device"),
                &here.child("device"),
            ));
            errors.extend(binding_parameters(result, here));
            if let Some(share) = result.get("shareID").and_then(Value::as_str) {
                errors.extend(uid(share, &here.child("shareID")));
            }
            errors
        },
    );
    errors.extend(slice_errors(
        list_at(devices, "config"),
        2 * MAX_CONFIGS,
        &devices_at.child("config"),
        |config, here| {
            let source_at = here.child("source");
            let mut errors = match str_at(Some(config), "source") {
                "" => vec![FieldError::required(&source_at, "")],
                "FromClaim" | "FromClass" => Vec::new(),
                source => vec![FieldError::not_supported_named(
                    &source_at,
                    source,
                    &["FromClaim", "FromClass"],
                )],
            };
            errors.extend(request_refs(config, here, names));
            errors.extend(device_configuration(config, here, false));
            errors
        },
    ));
    if let Some(selector) = allocation.get("nodeSelector").filter(|s| !s.is_null()) {
        errors.extend(super::pod::node_selector(
            selector,
            &at.child("nodeSelector"),
        ));
    }
    errors
}

/// `validateDeviceBindingParameters` of a device or an allocation result at `at`.
pub(super) fn binding_parameters(item: &Value, at: &Path) -> Vec<FieldError> {
    let conditions = list_at(Some(item), "bindingConditions");
    let failures = list_at(Some(item), "bindingFailureConditions");
    let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let conditions_at = at.child("bindingConditions");
    let failures_at = at.child("bindingFailureConditions");
    let mut errors = slice_errors(
        conditions,
        MAX_BINDING_CONDITIONS,
        &conditions_at,
        |c, h| label_name(&text(c), h),
    );
    errors.extend(slice_errors(
        failures,
        MAX_BINDING_CONDITIONS,
        &failures_at,
        |c, h| label_name(&text(c), h),
    ));
    let condition_names: Vec<String> = conditions.iter().map(text).collect();
    for (i, c) in condition_names.iter().enumerate() {
        if condition_names[..i].contains(c) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                conditions_at.index(i),
                BadValue::Str(c.clone()),
                "",
            ));
        }
    }
    let failure_names: Vec<String> = failures.iter().map(text).collect();
    for (i, c) in failure_names.iter().enumerate() {
        if failure_names[..i].contains(c) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                failures_at.index(i),
                BadValue::Str(c.clone()),
                "",
            ));
        }
        if condition_names.contains(c) {
            errors.push(FieldError::invalid(
                failures_at.index(i),
                c,
                "bindingFailureConditions must not overlap with bindingConditions",
            ));
        }
    }
    if conditions.is_empty() && !failures.is_empty() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            conditions_at,
            BadValue::Raw(go_string_list(&condition_names, conditions)),
            "bindingConditions are required to use bindingFailureConditions",
        ));
    }
    if failures.is_empty() && !conditions.is_empty() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            failures_at,
            BadValue::Raw(go_string_list(&failure_names, failures)),
            "bindingFailureConditions are required to use bindingConditions",
        ));
    }
    errors
}

/// A `[]string` as `json.Marshal` writes it: `null` when nil (empty is nil once stored).
fn go_string_list(names: &[String], items: &[Value]) -> String {
    if items.is_empty() {
        return "null".to_owned();
    }
    go_json(&Value::from(names.to_vec()))
}

/// `validateUID`: a UUID in its normalized form (lower-case, with dashes).
fn uid(value: &str, at: &Path) -> Vec<FieldError> {
    let hex_groups: Vec<&str> = value.split('-').collect();
    let normalized = hex_groups.len() == 5
        && hex_groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if normalized && value == value.to_lowercase() {
        return Vec::new();
    }
    let detail = if normalized {
        "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters".to_owned()
    } else {
        format!("error validating uid: invalid UUID length: {}", value.len())
    };
    vec![FieldError::invalid(at, value, detail)]
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn claim(spec: Value) -> Object {
        json!({"spec": spec})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    fn bodies(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(|e| e.cause().message).collect()
    }

    #[test]
    fn a_request_is_exactly_one_of_exactly_and_first_available() {
        let errors = validate_create(
            "ResourceClaim",
            &claim(json!({"devices": {"requests": [{"name": "a"}]}})),
        );
        assert_eq!(
            bodies(&errors),
            ["Required value: exactly one of `exactly` or `firstAvailable` is required"]
        );
    }

    #[test]
    fn references_name_requests_and_sub_requests() {
        let names = RequestNames::of(Some(&json!({"requests": [
            {"name": "a"},
            {"name": "b", "firstAvailable": [{"name": "x"}]},
        ]})));
        assert!(names.has("a"));
        assert!(names.has("b/x"));
        assert!(!names.has("a/x"));
        assert!(!names.has("b/y"));
        assert!(!names.has("b/x/z"));
    }

    #[test]
    fn selectors_are_compiled() {
        let errors = selectors(&[json!({"cel": {"expression": "nope"}})], &Path::new("s"));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .cause()
                .message
                .contains("undeclared reference to 'nope'")
        );
    }
}
