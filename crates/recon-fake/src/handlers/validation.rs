//! `metadata` validation: apimachinery `pkg/api/validation/objectmeta.go`
//! (`ValidateObjectMetaAccessor`, `ValidateObjectMetaAccessorUpdate`) plus the core-group
//! finalizer-name rule, producing the same field errors in the same order as the real server.

use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;
use recon_apimachinery::names::{
    dns1123_label_errors, label_key_errors, label_value_errors, name_errors,
};

use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::{
    OWNER_REF_FIELDS, Object, finalizers, generation, meta, meta_str, meta_value,
};

/// `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;
/// Finalizers the core group accepts without a domain (`helper.IsStandardFinalizerName`).
pub(crate) const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// The part of [`validate_object_meta`] that depends on the name rule: `generateName` and
/// `name`. When the rest of it has passed once, running this alone under another rule gives
/// what the whole would.
pub(crate) fn validate_names(obj: &Object, name_rule: NameRule) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let generate_name = meta_str(obj, "generateName");
    if !generate_name.is_empty() {
        for msg in name_errors(name_rule, generate_name, true) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                msg,
            ));
        }
    }
    let name = meta_str(obj, "name");
    if name.is_empty() {
        errors.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in name_errors(name_rule, name, false) {
            errors.push(FieldError::invalid("metadata.name", name, msg));
        }
    }
    errors
}

/// `ValidateObjectMetaAccessor`: the checks every create (and every update, again) runs.
pub(crate) fn validate_object_meta(
    obj: &Object,
    namespaced: bool,
    name_rule: NameRule,
) -> Vec<FieldError> {
    validate_object_meta_checked(obj, namespaced, name_rule, &MapChecks::of(obj))
}

/// The checks of `metadata`'s labels, annotations and owner references, which
/// `ValidateObjectMeta` and `ValidateObjectMetaAccessorUpdate` both make (an update's strategy
/// runs each twice): made once per object, their errors repeated wherever Go repeats them.
pub(crate) struct MapChecks {
    labels_and_annotations: Vec<FieldError>,
    owner_references: Vec<FieldError>,
}

impl MapChecks {
    pub(crate) fn of(obj: &Object) -> MapChecks {
        let mut labels_and_annotations = Vec::new();
        validate_labels(obj, &mut labels_and_annotations);
        validate_annotations(obj, &mut labels_and_annotations);
        let mut owner_references = Vec::new();
        validate_owner_references(obj, &mut owner_references);
        MapChecks {
            labels_and_annotations,
            owner_references,
        }
    }

    fn extend(&self, errors: &mut Vec<FieldError>) {
        errors.extend(self.labels_and_annotations.iter().cloned());
        errors.extend(self.owner_references.iter().cloned());
    }
}

/// [`validate_object_meta`] with the map checks of `obj` made already.
pub(crate) fn validate_object_meta_checked(
    obj: &Object,
    namespaced: bool,
    name_rule: NameRule,
    maps: &MapChecks,
) -> Vec<FieldError> {
    let mut errors = validate_names(obj, name_rule);
    let namespace = meta_str(obj, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errors.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in dns1123_label_errors(namespace) {
                errors.push(FieldError::invalid("metadata.namespace", namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errors.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    let generation = meta_value(obj, "generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if generation < 0 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "metadata.generation",
            BadValue::Raw(generation.to_string()),
            "must be greater than or equal to 0",
        ));
    }
    maps.extend(&mut errors);
    validate_finalizers(obj, &mut errors);
    errors
}

/// `ValidateObjectMetaAccessorUpdate`: what may not change between `old` and `new`, then the
/// map-valued fields of `new` again (`maps`, made by [`MapChecks::of`] of `new`).
pub(crate) fn validate_object_meta_update(
    new: &Object,
    old: &Object,
    maps: &MapChecks,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if meta_value(old, "deletionTimestamp").is_some() {
        let before = finalizers(old);
        let mut added: Vec<String> = finalizers(new)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            let list: Vec<String> = added.iter().map(|f| go_quote(f)).collect();
            errors.push(FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    list.join(", ")
                ),
            ));
        }
    }
    let rv = meta_str(new, "resourceVersion");
    if rv.is_empty() {
        errors.push(FieldError::invalid(
            "metadata.resourceVersion",
            rv,
            "must be specified for an update",
        ));
    }
    let (new_gen, old_gen) = (generation(new), generation(old));
    if new_gen < old_gen {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "metadata.generation",
            BadValue::Raw(new_gen.to_string()),
            "must not be decremented",
        ));
    }
    for key in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        let (n, o) = (meta_value(new, key), meta_value(old, key));
        if n != o {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                format!("metadata.{key}"),
                json_value(n),
                "field is immutable",
            ));
        }
    }
    maps.extend(&mut errors);
    errors
}

/// `validateKubeFinalizerName` of the core API group: built-in kinds reject a finalizer without
/// a `/` unless it is a standard one (custom resources only get a warning).
pub(crate) fn validate_builtin_finalizer_names(obj: &Object) -> Vec<FieldError> {
    finalizers(obj)
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()))
        .map(|(i, f)| {
            FieldError::invalid(
                format!("metadata.finalizers[{i}]"),
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        })
        .collect()
}

/// `ValidateNamespaceFinalizeUpdate`'s finalizer-name rule on `spec.finalizers`.
pub(crate) fn validate_namespace_finalizer_names(obj: &Object) -> Vec<FieldError> {
    let names = obj
        .get("spec")
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    names
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.contains('/') && !STANDARD_FINALIZERS.contains(f))
        .map(|(i, f)| {
            FieldError::invalid(
                format!("spec.finalizers[{i}]"),
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        })
        .collect()
}

/// The `Warning` texts for finalizer names on custom resources (`validateKubeFinalizerName` in
/// apiextensions: advice, not an error).
pub(crate) fn custom_finalizer_warnings(obj: &Object) -> Vec<String> {
    finalizers(obj)
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()))
        .map(|(i, f)| {
            let advice = if f.contains('.') {
                "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
            } else {
                "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            };
            format!("metadata.finalizers[{i}]: {}: {advice}", go_quote(f))
        })
        .collect()
}

/// A metadata value as `field.Error` prints it (1.34+: JSON; a missing value is `null`).
fn json_value(v: Option<&Value>) -> BadValue {
    match v {
        None | Some(Value::Null) => BadValue::Raw("null".to_owned()),
        Some(Value::String(s)) => BadValue::Str(s.clone()),
        Some(other) => BadValue::Raw(other.to_string()),
    }
}

fn string_map<'a>(obj: &'a Object, key: &str) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = meta(obj)
        .and_then(|m| m.get(key))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    // Go ranges over maps in random order; sorted is one of the orders it can produce.
    pairs.sort_unstable();
    pairs
}

fn validate_labels(obj: &Object, errors: &mut Vec<FieldError>) {
    label_errors(&string_map(obj, "labels"), "metadata.labels", errors);
}

fn validate_annotations(obj: &Object, errors: &mut Vec<FieldError>) {
    annotation_errors(
        &string_map(obj, "annotations"),
        "metadata.annotations",
        errors,
    );
}

/// `ValidateLabels` of `labels` (sorted) on the field `path`: for each label, the key's errors,
/// then the value's.
pub(crate) fn label_errors(labels: &[(&str, &str)], path: &str, errors: &mut Vec<FieldError>) {
    for &(key, value) in labels {
        for msg in label_key_errors(key) {
            errors.push(FieldError::invalid(path, key, msg));
        }
        for msg in label_value_errors(value) {
            errors.push(FieldError::invalid(path, value, msg));
        }
    }
}

/// `ValidateAnnotations` of `annotations` (sorted) on the field `path`: keys are label keys
/// (compared lower-cased); 256 KiB in total.
pub(crate) fn annotation_errors(
    annotations: &[(&str, &str)],
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let mut total = 0;
    for &(key, value) in annotations {
        for msg in label_key_errors(&key.to_lowercase()) {
            errors.push(FieldError::invalid(path, key, msg));
        }
        total += key.len() + value.len();
    }
    if total > ANNOTATIONS_MAX_BYTES {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            path,
            BadValue::Omit,
            format!("may not be more than {ANNOTATIONS_MAX_BYTES} bytes"),
        ));
    }
}

/// `ValidateOwnerReferences`: each reference's fields, banned owners, and a single controller.
fn validate_owner_references(obj: &Object, errors: &mut Vec<FieldError>) {
    let refs: Vec<&Map> = meta_value(obj, "ownerReferences")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let field = |r: &Map, k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut controller: Option<String> = None;
    for r in &refs {
        let (api_version, kind, name, uid) = (
            field(r, "apiVersion"),
            field(r, "kind"),
            field(r, "name"),
            field(r, "uid"),
        );
        // schema.FromAPIVersionAndKind: "v1" or "group/version"; anything else has no version.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [v] => (*v).to_owned(),
            [_, v] => (*v).to_owned(),
            _ => String::new(),
        };
        if version.is_empty() {
            errors.push(FieldError::invalid(
                "metadata.ownerReferences.apiVersion",
                &api_version,
                "version must not be empty",
            ));
        }
        for (key, value) in [("kind", &kind), ("name", &name), ("uid", &uid)] {
            if value.is_empty() {
                errors.push(FieldError::invalid(
                    format!("metadata.ownerReferences.{key}"),
                    "",
                    "must not be empty",
                ));
            }
        }
        if api_version == "v1" && kind == "Event" {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "metadata.ownerReferences",
                BadValue::Raw(owner_ref_json(r)),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{name}");
            match &controller {
                Some(first) => errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "metadata.ownerReferences",
                    BadValue::Raw(format!(
                        "[{}]",
                        refs.iter().map(|r| owner_ref_json(r)).collect::<Vec<_>>().join(",")
                    )),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => controller = Some(current),
            }
        }
    }
}

/// An owner reference as Go's JSON encoder writes it: struct field order, optional fields last.
fn owner_ref_json(r: &Map) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for &(key, optional) in OWNER_REF_FIELDS {
        let value = match r.get(key) {
            Some(v) if !v.is_null() => v.clone(),
            _ if optional => continue,
            _ => Value::String(String::new()),
        };
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&format!("{}:{value}", Value::String(key.to_owned())));
    }
    out.push('}');
    out
}

/// `ValidateFinalizers`: qualified names, and not both GC finalizers.
fn validate_finalizers(obj: &Object, errors: &mut Vec<FieldError>) {
    let list = finalizers(obj);
    for f in &list {
        for msg in label_key_errors(f) {
            errors.push(FieldError::invalid("metadata.finalizers", f, msg));
        }
    }
    if list.iter().any(|f| f == "orphan") && list.iter().any(|f| f == "foregroundDeletion") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "metadata.finalizers",
            BadValue::Raw(Value::from(list.clone()).to_string()),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::field::aggregate;

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_missing_name_is_required() {
        let errors = validate_object_meta(
            &obj(json!({"metadata": {"namespace": "ns"}})),
            true,
            NameRule::DnsSubdomain,
        );
        assert_eq!(
            aggregate(&errors),
            "metadata.name: Required value: name or generateName is required"
        );
    }

    #[test]
    fn two_controller_references_are_rejected_with_the_whole_list() {
        let o = obj(json!({"metadata": {"name": "n", "ownerReferences": [
            {"apiVersion": "v1", "kind": "X", "name": "a", "uid": "1", "controller": true},
            {"apiVersion": "v1", "kind": "X", "name": "b", "uid": "2", "controller": true}]}}));
        let errors = validate_object_meta(&o, false, NameRule::DnsSubdomain);
        assert_eq!(
            aggregate(&errors),
            r#"metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"X","name":"a","uid":"1","controller":true},{"apiVersion":"v1","kind":"X","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for X/a and X/b"#
        );
    }

    #[test]
    fn both_gc_finalizers_together_are_rejected() {
        let o =
            obj(json!({"metadata": {"name": "n", "finalizers": ["orphan", "foregroundDeletion"]}}));
        assert_eq!(
            aggregate(&validate_object_meta(&o, false, NameRule::DnsSubdomain)),
            r#"metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set"#
        );
    }

    #[test]
    fn no_new_finalizers_on_a_terminating_object() {
        let old = obj(
            json!({"metadata": {"resourceVersion": "1", "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a/x"]}}),
        );
        let new = obj(
            json!({"metadata": {"resourceVersion": "1", "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a/x", "b/y"]}}),
        );
        assert_eq!(
            aggregate(&validate_object_meta_update(
                &new,
                &old,
                &MapChecks::of(&new)
            )),
            r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b/y"}"#
        );
    }

    #[test]
    fn setting_a_deletion_timestamp_is_an_immutable_field_change() {
        let old = obj(json!({"metadata": {"resourceVersion": "1"}}));
        let new = obj(
            json!({"metadata": {"resourceVersion": "1", "deletionTimestamp": "2030-01-01T00:00:00Z"}}),
        );
        assert_eq!(
            aggregate(&validate_object_meta_update(
                &new,
                &old,
                &MapChecks::of(&new)
            )),
            r#"metadata.deletionTimestamp: Invalid value: "2030-01-01T00:00:00Z": field is immutable"#
        );
    }

    #[test]
    fn builtins_reject_unqualified_finalizers_that_are_not_standard() {
        let o = obj(json!({"metadata": {"finalizers": ["kubernetes", "mine"]}}));
        assert_eq!(
            aggregate(&validate_builtin_finalizer_names(&o)),
            r#"metadata.finalizers[1]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified"#
        );
    }
}
