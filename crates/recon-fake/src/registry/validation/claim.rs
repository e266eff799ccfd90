//! PersistentVolumeClaims: their spec (`ValidatePersistentVolumeClaimSpec`), what an update
//! may change (`ValidatePersistentVolumeClaimUpdate`: a bound claim's storage request and
//! volume attributes class, a first volume name, a storage class moved from the beta
//! annotation; anything else is refused with a unified diff of the internal spec) and what
//! `/status` may write (`ValidatePersistentVolumeClaimStatusUpdate`), with the options the 1.36
//! strategy sets (`ValidationOptionsForPersistentVolumeClaim`: recovery from expansion failure
//! and volume attributes classes on, as their locked GA gates are).

use std::cmp::Ordering;

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::{dns1123_subdomain_name_errors, label_key_errors};

use super::read::{list_at, str_at};
use super::workloads::label_selector;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal;
use crate::gotype::quantity;
use crate::wire::object::Object;

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const RESIZE_STATUSES: [&str; 5] = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];
const STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// `ValidatePersistentVolumeClaim` after the generic metadata rules.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    spec(obj.get("spec"), &Path::new("spec"), false)
}

/// `ValidatePersistentVolumeClaimUpdate`.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let (spec_new, spec_old) = (new.get("spec"), old.get("spec"));
    let spec_path = Path::new("spec");
    let mut errors = spec(spec_new, &spec_path, allow_invalid_group(spec_old));
    let mut new_clone = spec_new
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut old_clone = spec_old
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    // The volume name may be set once, by the volume controller.
    if str_at(spec_old, "volumeName").is_empty() {
        copy_field(&mut old_clone, &new_clone, "volumeName");
    }
    let (old_annotation, new_annotation) = (
        annotation(old, STORAGE_CLASS_ANNOTATION),
        annotation(new, STORAGE_CLASS_ANNOTATION),
    );
    let old_class = spec_old
        .and_then(|s| s.get("storageClassName"))
        .filter(|c| !c.is_null());
    let new_class = spec_new
        .and_then(|s| s.get("storageClassName"))
        .filter(|c| !c.is_null());
    // validateStorageClassUpgradeFromAnnotation: the beta annotation's class moved into the
    // field, which then is not compared.
    let upgraded_from_annotation = old_annotation.is_some()
        && old_class.is_none()
        && new_class.and_then(Value::as_str) == old_annotation
        && new_annotation.is_none_or(|a| Some(a) == old_annotation);
    if upgraded_from_annotation {
        if let Value::Object(m) = &mut new_clone {
            m.remove("storageClassName");
        }
    } else {
        let (new_text, old_text) = (new_annotation.unwrap_or(""), old_annotation.unwrap_or(""));
        if new_text != old_text {
            errors.push(FieldError::invalid(
                Path::new("metadata")
                    .child("annotations")
                    .child(STORAGE_CLASS_ANNOTATION),
                new_text,
                "field is immutable",
            ));
        }
        // validateStorageClassUpgradeFromNil: a class given to a claim that had none (and
        // whose annotation, if any, names it).
        if let Some(class) = new_class.and_then(Value::as_str)
            && old_class.is_none()
            && old_annotation.is_none_or(|a| a == class)
        {
            copy_field(&mut new_clone, &old_clone, "storageClassName");
        }
    }
    let bound = str_at(new.get("status"), "phase") == "Bound";
    if bound {
        // A bound claim may change its storage request and volume attributes class.
        let old_storage = spec_old
            .and_then(|s| s.get("resources"))
            .and_then(|r| r.get("requests"))
            .and_then(|r| r.get("storage"))
            .cloned();
        if let Some(Value::Object(requests)) = new_clone
            .get_mut("resources")
            .and_then(|r| r.get_mut("requests"))
        {
            requests.insert("storage".into(), old_storage.unwrap_or(Value::Null));
        }
        copy_field(&mut new_clone, &old_clone, "volumeAttributesClassName");
    }
    if !internal::semantic_eq(
        "core.PersistentVolumeClaimSpec",
        Some(&new_clone),
        Some(&old_clone),
    ) {
        let diff = internal::diff(
            "core.PersistentVolumeClaimSpec",
            Some(&old_clone),
            Some(&new_clone),
        );
        errors.push(FieldError::forbidden(
            &spec_path,
            format!(
                "spec is immutable after creation except resources.requests and \
                 volumeAttributesClassName for bound claims\n{diff}"
            ),
        ));
    }
    let storage_of = |spec: Option<&Value>| {
        spec.and_then(|s| s.get("resources"))
            .and_then(|r| r.get("requests"))
            .and_then(|r| r.get("storage"))
            .and_then(Value::as_str)
            .unwrap_or("0")
            .to_owned()
    };
    let (old_size, new_size) = (storage_of(spec_old), storage_of(spec_new));
    let capacity = old
        .get("status")
        .and_then(|s| s.get("capacity"))
        .and_then(|c| c.get("storage"))
        .and_then(Value::as_str)
        .unwrap_or("0");
    // With recovery from expansion failure on, a request may shrink down to just above the
    // capacity the status records.
    if quantity::compare(&new_size, &old_size) == Some(Ordering::Less)
        && quantity::compare(&new_size, capacity) != Some(Ordering::Greater)
    {
        errors.push(FieldError::forbidden(
            spec_path
                .child("resources")
                .child("requests")
                .child("storage"),
            "field can not be less than status.capacity",
        ));
    }
    let mode = |s: Option<&Value>| {
        s.and_then(|s| s.get("volumeMode"))
            .filter(|m| !m.is_null())
            .cloned()
    };
    if mode(spec_new) != mode(spec_old) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "volumeMode",
            BadValue::Raw(mode(spec_new).map_or_else(|| "null".into(), |m| go_json(&m))),
            "field is immutable",
        ));
    }
    fn class_of(s: Option<&Value>) -> Option<&str> {
        s.and_then(|s| s.get("volumeAttributesClassName"))
            .filter(|c| !c.is_null())
            .and_then(Value::as_str)
    }
    let current = old
        .get("status")
        .and_then(|s| s.get("currentVolumeAttributesClassName"))
        .is_some_and(|c| !c.is_null());
    if class_of(spec_new) != class_of(spec_old) && current {
        let vac_path = spec_path.child("volumeAttributesClassName");
        match class_of(spec_new) {
            None => errors.push(FieldError::forbidden(
                vac_path,
                "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil",
            )),
            Some("") => errors.push(FieldError::forbidden(
                vac_path,
                "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil",
            )),
            Some(_) => {}
        }
    }
    errors
}

/// `ValidatePersistentVolumeClaimStatusUpdate`: capacities and allocated resources are not
/// negative, resize statuses are known ones. (The spec and the resource version it also
/// checks are the stored ones by then.)
pub(super) fn validate_status_update(new: &Object) -> Vec<FieldError> {
    let status = new.get("status");
    let path = Path::new("status");
    let mut errors = Vec::new();
    let capacity_path = path.child("capacity");
    for (name, q) in map_at(status, "capacity") {
        errors.extend(basic_resource(q, &capacity_path.key(name)));
    }
    let resize_path = path.child("allocatedResourceStatuses");
    for (name, state) in map_at(status, "allocatedResourceStatuses") {
        errors.extend(resource_key(name, &resize_path));
        if !RESIZE_STATUSES.contains(&state.as_str().unwrap_or("")) {
            // Go names the key, not the value, as the unsupported one.
            errors.push(FieldError::not_supported(
                &resize_path,
                name,
                &RESIZE_STATUSES,
            ));
        }
    }
    let allocated_path = path.child("allocatedResources");
    for (name, q) in map_at(status, "allocatedResources") {
        let key_errors = resource_key(name, &allocated_path);
        if !key_errors.is_empty() {
            errors.extend(key_errors);
            continue;
        }
        let at = allocated_path.key(name);
        match basic_resource(q, &at) {
            Some(error) => errors.push(error),
            None => errors.extend(non_negative(q, &at)),
        }
    }
    errors
}

/// `ValidatePersistentVolumeClaimSpec`. `allow_invalid_group` keeps an old claim's invalid
/// data source API group acceptable.
pub(super) fn spec(
    spec: Option<&Value>,
    path: &Path,
    allow_invalid_group: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let modes = list_at(spec, "accessModes");
    if modes.is_empty() {
        errors.push(FieldError::required(
            path.child("accessModes"),
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null())
    {
        errors.extend(label_selector(selector, &path.child("selector")));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes.iter().map(|m| m.as_str().unwrap_or("")) {
        if !ACCESS_MODES.contains(&mode) {
            errors.push(FieldError::not_supported(
                path.child("accessModes"),
                mode,
                &ACCESS_MODES,
            ));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errors.push(FieldError::forbidden(
            path.child("accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_path = path.child("resources").key("storage");
    match spec
        .and_then(|s| s.get("resources"))
        .and_then(|r| r.get("requests"))
        .and_then(|r| r.get("storage"))
        .and_then(Value::as_str)
    {
        None => errors.push(FieldError::required(storage_path, "")),
        // ValidatePositiveQuantityValue (storage is not an integer resource, so nothing more).
        Some(q) if quantity::compare(q, "0") != Some(Ordering::Greater) => {
            errors.push(FieldError::invalid(
                storage_path,
                q,
                "must be greater than zero",
            ));
        }
        Some(_) => {}
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
        .and_then(Value::as_str)
        && !VOLUME_MODES.contains(&mode)
    {
        errors.push(FieldError::not_supported(
            path.child("volumeMode"),
            mode,
            &VOLUME_MODES,
        ));
    }
    let source = spec
        .and_then(|s| s.get("dataSource"))
        .filter(|s| !s.is_null());
    let source_ref = spec
        .and_then(|s| s.get("dataSourceRef"))
        .filter(|s| !s.is_null());
    if let Some(source) = source {
        errors.extend(data_source(
            source,
            &path.child("dataSource"),
            allow_invalid_group,
            false,
        ));
    }
    if let Some(source_ref) = source_ref {
        errors.extend(data_source(
            source_ref,
            &path.child("dataSourceRef"),
            allow_invalid_group,
            true,
        ));
    }
    let ref_namespace = str_at(source_ref, "namespace");
    if !ref_namespace.is_empty() {
        if source.is_some() {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path,
                // The value is a `*field.Path`, which JSON writes as an empty object.
                BadValue::Raw("{}".into()),
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if let (Some(source), Some(source_ref)) = (source, source_ref) {
        let same = ["apiGroup", "kind", "name"].iter().all(|k| {
            source.get(k).filter(|v| !v.is_null()) == source_ref.get(k).filter(|v| !v.is_null())
        });
        if !same {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path,
                BadValue::Raw("{}".into()),
                "must match dataSourceRef",
            ));
        }
    }
    let class = str_at(spec, "volumeAttributesClassName");
    if !class.is_empty() {
        for message in dns1123_subdomain_name_errors(class) {
            errors.push(FieldError::invalid(
                path.child("volumeAttributesClassName"),
                class,
                message,
            ));
        }
    }
    errors
}

/// `validateDataSource` / `validateDataSourceRef` (with its namespace).
fn data_source(
    source: &Value,
    path: &Path,
    allow_invalid_group: bool,
    is_ref: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let source = Some(source);
    if str_at(source, "name").is_empty() {
        errors.push(FieldError::required(path.child("name"), ""));
    }
    let kind = str_at(source, "kind");
    if kind.is_empty() {
        errors.push(FieldError::required(path.child("kind"), ""));
    }
    let group = str_at(source, "apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errors.push(FieldError::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() && !allow_invalid_group {
        for message in dns1123_subdomain_name_errors(group) {
            errors.push(FieldError::invalid(path.child("apiGroup"), group, message));
        }
    }
    let namespace = str_at(source, "namespace");
    if is_ref && !namespace.is_empty() {
        for message in recon_apimachinery::names::dns1123_label_errors(namespace) {
            errors.push(FieldError::invalid(
                path.child("namespace"),
                namespace,
                message,
            ));
        }
    }
    errors
}

/// `allowInvalidAPIGroupInDataSourceOrRef`: the old claim already had an invalid group.
fn allow_invalid_group(spec: Option<&Value>) -> bool {
    ["dataSource", "dataSourceRef"].iter().any(|key| {
        let group = str_at(spec.and_then(|s| s.get(*key)), "apiGroup");
        !group.is_empty() && !dns1123_subdomain_name_errors(group).is_empty()
    })
}

/// `validateBasicResource`: the quantity's whole value is not negative.
fn basic_resource(q: &Value, path: &Path) -> Option<FieldError> {
    let value = quantity::whole_value(q.as_str().unwrap_or("0"))?;
    (value < 0).then(|| {
        FieldError::new(
            ErrorType::Invalid,
            path,
            BadValue::Raw(value.to_string()),
            "must be a valid resource quantity",
        )
    })
}

/// `ValidateNonnegativeQuantity`.
pub(super) fn non_negative(q: &Value, path: &Path) -> Option<FieldError> {
    let text = q.as_str().unwrap_or("0");
    (quantity::compare(text, "0") == Some(Ordering::Less))
        .then(|| FieldError::invalid(path, text, "must be greater than or equal to 0"))
}

/// `validatePersistentVolumeClaimResourceKey`: a qualified name; a native one is `storage`.
fn resource_key(name: &str, path: &Path) -> Vec<FieldError> {
    let errors: Vec<FieldError> = label_key_errors(name)
        .into_iter()
        .map(|message| FieldError::invalid(path, name, message))
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native && name != "storage" {
        return vec![FieldError::not_supported(path, name, &["storage"])];
    }
    Vec::new()
}

fn map_at<'a>(v: Option<&'a Value>, key: &str) -> impl Iterator<Item = (&'a String, &'a Value)> {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

fn annotation<'a>(obj: &'a Object, key: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// Sets `key` of `to` to `from`'s (removing it where `from` has none).
fn copy_field(to: &mut Value, from: &Value, key: &str) {
    if let Value::Object(m) = to {
        match from.get(key).filter(|v| !v.is_null()) {
            Some(v) => m.insert(key.into(), v.clone()),
            None => m.remove(key),
        };
    }
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

    #[test]
    fn equal_specs_with_empty_lists_are_not_a_change() {
        let spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
        let mut with_empty = spec.clone();
        with_empty["selector"] = Value::Null;
        with_empty["volumeName"] = Value::from("");
        assert!(validate_update(&claim(with_empty), &claim(spec)).is_empty());
    }

    #[test]
    fn a_status_with_a_negative_capacity_and_an_unknown_resize_state_is_refused() {
        let pvc = json!({"status": {"capacity": {"storage": "-1500m"},
                                    "allocatedResourceStatuses": {"storage": "Resizing"}}});
        let errors = validate_status_update(pvc.as_object().unwrap_or(&Map::new()));
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].contains("Invalid value: -2: must be a valid resource quantity"));
        assert!(texts[1].contains("Unsupported value: \"storage\""));
    }
}
