//! The fields Go's encoder writes even when unset: those without `omitempty` (`null` for a
//! pointer, slice or map, as a data source's `apiGroup`; `""`, `0`, `false`), and, since
//! `omitempty` never leaves out a struct, those of struct type that are neither pointers nor
//! `omitzero`: `{}` for most (a container status' `lastState`, a template's `metadata`), `null`
//! for a `metav1.Time` (a condition's `lastProbeTime`), `0` for an `IntOrString`. Stored objects
//! get them as the real server serves them. Which fields they are, and their zero values, are
//! read from the Go sources (`zero_fields` of `data/go-field-order.json`, written by
//! `xtask/record-go-field-order.py`).

use foldhash::{HashMap, HashSet};
use std::sync::LazyLock;

use recon_apimachinery::json::{Map, Value};

use super::{FIELD_ORDER, GoStruct, GoType, TYPES};

static ZERO_FIELDS: LazyLock<ZeroFields> = LazyLock::new(|| ZeroFields::read(FIELD_ORDER));

#[derive(Debug, Default)]
struct ZeroFields {
    /// Per struct schema name, its always-written fields and the zero value of each.
    fields: HashMap<String, Map>,
    /// The structs that have such fields or hold, at any depth, a struct that has: the only
    /// ones a walk enters.
    holders: HashSet<String>,
}

impl ZeroFields {
    fn read(document: &str) -> ZeroFields {
        let fields: HashMap<String, Map> = serde_json::from_str::<Value>(document)
            .ok()
            .and_then(|mut d| d.get_mut("zero_fields").map(Value::take))
            .and_then(|z| recon_apimachinery::json::from_value(z).ok())
            .unwrap_or_default();
        let mut holders: HashSet<String> = fields.keys().cloned().collect();
        // Grow to a fixed point: a struct with a field whose type reaches a holder holds too.
        loop {
            let before = holders.len();
            for (name, go_struct) in &TYPES.structs {
                if !holders.contains(name)
                    && go_struct.fields.values().any(|ty| reaches(ty, &holders))
                {
                    holders.insert(name.clone());
                }
            }
            if holders.len() == before {
                break;
            }
        }
        ZeroFields { fields, holders }
    }
}

/// Whether a value of type `ty` may hold a struct of `holders`.
fn reaches(ty: &GoType, holders: &HashSet<String>) -> bool {
    match ty {
        GoType::Struct(name) => holders.contains(name),
        GoType::Slice(item) | GoType::Map(item) => reaches(item, holders),
        _ => false,
    }
}

/// Writes the zero value of every unset (absent or `null`) always-written field of `obj`, a
/// `group` `kind` object, at any depth.
pub(crate) fn fill_zero_fields(group: &str, kind: &str, obj: &mut Map) {
    if let Some(name) = super::stored_struct(group, kind) {
        fill_zero_fields_of(name, obj);
    }
}

/// [`fill_zero_fields`] of an object of the recorded struct `name` (a kind at a version other
/// than the one it is stored at).
pub(crate) fn fill_zero_fields_of(name: &str, obj: &mut Map) {
    let zero = &*ZERO_FIELDS;
    let mut pending = Vec::new();
    if let Some(go_struct) = TYPES.get(name) {
        fill_struct(zero, name, go_struct, obj, &mut pending);
    }
    // One value at a time, not by recursion: a CRD's `JSONSchemaProps` nests as deep as Go reads.
    while let Some((ty, value)) = pending.pop() {
        match (ty, value) {
            (GoType::Struct(name), Value::Object(obj)) => {
                if let Some(go_struct) = TYPES.get(name) {
                    fill_struct(zero, name, go_struct, obj, &mut pending);
                }
            }
            (GoType::Slice(item), Value::Array(items)) => {
                pending.extend(items.iter_mut().map(|v| (&**item, v)));
            }
            (GoType::Map(item), Value::Object(map)) => {
                pending.extend(map.values_mut().map(|v| (&**item, v)));
            }
            _ => {}
        }
    }
}

/// Fills the unset always-written fields of `obj`, of struct `name`, and queues the fields
/// that may hold more.
fn fill_struct<'v>(
    zero: &ZeroFields,
    name: &str,
    go_struct: &'static GoStruct,
    obj: &'v mut Map,
    pending: &mut Vec<(&'static GoType, &'v mut Value)>,
) {
    if !zero.holders.contains(name) {
        return;
    }
    if let Some(fields) = zero.fields.get(name) {
        for (field, value) in fields {
            let slot = obj.entry(field.as_str()).or_insert(Value::Null);
            if slot.is_null() {
                *slot = value.clone();
            }
        }
    }
    for (key, value) in obj.iter_mut() {
        if let Some(ty) = go_struct.fields.get(key)
            && reaches(ty, &zero.holders)
        {
            pending.push((ty, value));
        }
    }
}

/// Drops the fields of `obj`, a `group` `kind` object, that a `null`, an empty list or an empty
/// map leaves unset, at any depth: Go decodes `null` as the zero value and protobuf storage
/// keeps no empty list or map, so none is written back unless the field is always written,
/// which [`fill_zero_fields`] then restores. An empty struct (`emptyDir: {}`) is a set pointer
/// and stays; a schemaless value ([`GoType::Any`]: a `RawExtension`, a CRD schema's `default`)
/// is kept as sent, since storage keeps its bytes.
pub(crate) fn drop_unset_fields(group: &str, kind: &str, obj: &mut Map) {
    if let Some(name) = super::stored_struct(group, kind) {
        drop_unset_fields_of(name, obj);
    }
}

/// [`drop_unset_fields`] of an object of the recorded struct `name`.
pub(crate) fn drop_unset_fields_of(name: &str, obj: &mut Map) {
    let mut pending = Vec::new();
    if let Some(go_struct) = TYPES.get(name) {
        drop_unset_struct(go_struct, obj, &mut pending);
    }
    // One value at a time, not by recursion: a CRD's `JSONSchemaProps` nests as deep as Go reads.
    while let Some((ty, value)) = pending.pop() {
        match (ty, value) {
            (GoType::Struct(name), Value::Object(obj)) => {
                if let Some(go_struct) = TYPES.get(name) {
                    drop_unset_struct(go_struct, obj, &mut pending);
                }
            }
            (GoType::Slice(item) | GoType::Map(item), Value::Array(_) | Value::Object(_))
                if !matches!(
                    **item,
                    GoType::Struct(_) | GoType::Slice(_) | GoType::Map(_)
                ) => {}
            (GoType::Slice(item), Value::Array(items)) => {
                pending.extend(items.iter_mut().map(|v| (&**item, v)));
            }
            (GoType::Map(item), Value::Object(map)) => {
                map.retain(|_, v| !is_empty_list(v));
                pending.extend(map.values_mut().map(|v| (&**item, v)));
            }
            _ => {}
        }
    }
}

/// Drops the unset fields of `obj`, of struct `go_struct`, and queues the others.
fn drop_unset_struct<'v>(
    go_struct: &'static GoStruct,
    obj: &'v mut Map,
    pending: &mut Vec<(&'static GoType, &'v mut Value)>,
) {
    obj.retain(|key, value| match (go_struct.fields.get(key), &*value) {
        (Some(GoType::Any) | None, _) => true,
        (Some(_), Value::Null) => false,
        (Some(GoType::Map(_)), Value::Object(map)) => !map.is_empty(),
        (Some(_), value) => !is_empty_list(value),
    });
    for (key, value) in obj.iter_mut() {
        if let Some(ty) = go_struct.fields.get(key) {
            pending.push((ty, value));
        }
    }
}

fn is_empty_list(value: &Value) -> bool {
    matches!(value, Value::Array(items) if items.is_empty())
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn the_recorded_list_has_condition_times_and_container_states() {
        let zero = ZeroFields::read(FIELD_ORDER);
        assert_eq!(
            zero.fields.get("io.k8s.api.core.v1.PodCondition"),
            json!({"type": "", "status": "", "lastProbeTime": null, "lastTransitionTime": null})
                .as_object()
        );
        assert!(zero.holders.contains("io.k8s.api.core.v1.Pod"));
        assert!(zero.holders.contains("io.k8s.api.core.v1.ContainerStatus"));
        assert!(
            !zero
                .holders
                .contains("io.k8s.api.core.v1.LocalObjectReference")
        );
    }

    #[test]
    fn null_fields_and_empty_maps_are_unset_and_empty_structs_stay() {
        let mut obj: Map = recon_apimachinery::json::from_value(json!({
            "metadata": {"name": "p", "annotations": {}},
            "spec": {"nodeSelector": {}, "hostname": null, "securityContext": null,
                "volumes": [{"name": "v", "emptyDir": {}, "hostPath": null}],
                "containers": [{"name": "a", "resources": {"limits": {}, "requests": {"cpu": "1"}}}]}
        }))
        .unwrap_or_default();
        drop_unset_fields("", "Pod", &mut obj);
        assert_eq!(
            Value::Object(obj),
            json!({"metadata": {"name": "p"}, "spec": {
                "volumes": [{"name": "v", "emptyDir": {}}],
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}})
        );
    }

    // A CRD schema nests `JSONSchemaProps` as deep as Go reads: its unset fields go at every
    // level, on a test thread's stack; a schemaless `default` keeps its empty list, as storage
    // keeps its bytes.
    #[test]
    fn a_schema_as_deep_as_go_reads_drops_unset_fields_at_the_bottom() {
        const CRD: &str =
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition";
        let crd = |leaf: &str| {
            let schema = crate::wire::nesting::deep_text::nested_schema(4_990, leaf);
            let text = format!(
                r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#
            );
            match crate::wire::nesting::deep_text::read(&text) {
                Value::Object(obj) => obj,
                other => panic!("not an object: {other:?}"),
            }
        };
        let mut obj = crd(r#"{"type":"string","enum":[],"format":null,"default":{"x":[]}}"#);
        drop_unset_fields_of(CRD, &mut obj);
        fill_zero_fields_of(CRD, &mut obj);
        let mut expected = crd(r#"{"type":"string","default":{"x":[]}}"#);
        fill_zero_fields_of(CRD, &mut expected);
        assert!(obj == expected);
    }

    #[test]
    fn unset_fields_of_nested_structs_get_zero_values_and_set_ones_stay() {
        let mut obj: Map = recon_apimachinery::json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a", "image": "x"}]},
            "status": {
                "conditions": [{"type": "Ready", "lastTransitionTime": "2024-01-01T00:00:00Z"}],
                "containerStatuses": [{"name": "a", "state": {"running": {}}}],
            }
        }))
        .unwrap_or_default();
        fill_zero_fields("", "Pod", &mut obj);
        assert_eq!(
            obj["status"]["conditions"][0],
            json!({"type": "Ready", "status": "", "lastProbeTime": null,
                   "lastTransitionTime": "2024-01-01T00:00:00Z"})
        );
        assert_eq!(
            obj["status"]["containerStatuses"][0],
            json!({"name": "a", "state": {"running": {"startedAt": null}}, "lastState": {},
                   "ready": false, "restartCount": 0, "image": "", "imageID": ""})
        );
        assert_eq!(obj["spec"]["containers"][0]["resources"], json!({}));
        assert_eq!(obj["metadata"], json!({"name": "p"}));
    }
}
