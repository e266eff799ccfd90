//! Defaulting (apiextensions `structuraldefaulting`): nulls the schema does not allow are
//! dropped unless a default replaces them, then every missing field with a `default` gets it,
//! at every depth, including inside defaults just written (an object default `{}` whose own
//! properties have defaults is filled in).

use recon_apimachinery::json::Value;

use super::model::{Additional, Node};

/// `PruneNonNullableNullsWithoutDefaults`: removes each null whose schema is not `nullable` and
/// has no `default` (those with a default are left for [`apply`] to replace). Only where a
/// schema reaches: below it nothing is dropped. One container at a time, as the other walks
/// over values.
pub(crate) fn drop_disallowed_nulls(node: Option<&Node>, v: &mut Value) {
    let mut pending = vec![(node, v)];
    while let Some((node, v)) = pending.pop() {
        let Some(node) = node else { continue };
        match v {
            Value::Object(map) => {
                map.retain(|k, v| {
                    !(v.is_null()
                        && node
                            .child(k)
                            .is_some_and(|c| !c.nullable && c.default.is_none()))
                });
                pending.extend(map.iter_mut().map(|(k, v)| (node.child(k), v)));
            }
            Value::Array(items) => {
                let items_node = node.items.as_deref();
                pending.extend(items.iter_mut().map(|item| (items_node, item)));
            }
            _ => {}
        }
    }
}

/// `structuraldefaulting.Default`: fills in defaults below `node`. A missing property, or a
/// null one whose schema is not nullable, takes its default (a copy), and so does a null
/// array item or map value.
pub(crate) fn apply(node: &Node, v: &mut Value) {
    let mut pending = vec![(node, v)];
    while let Some((node, v)) = pending.pop() {
        match v {
            Value::Object(map) => {
                for (k, prop) in &node.properties {
                    let Some(default) = &prop.default else {
                        continue;
                    };
                    match map.get(k) {
                        Some(value) if !value.is_null() || prop.nullable => {}
                        _ => {
                            map.insert(k.clone(), default.clone());
                        }
                    }
                }
                for (k, value) in map.iter_mut() {
                    if let Some(prop) = node.properties.get(k) {
                        pending.push((prop, value));
                    } else if let Some(Additional::Schema(s)) = &node.additional_properties {
                        replace_null(s, value);
                        pending.push((s, value));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(items_node) = node.items.as_deref() {
                    for item in items {
                        replace_null(items_node, item);
                        pending.push((items_node, item));
                    }
                }
            }
            _ => {}
        }
    }
}

fn replace_null(node: &Node, v: &mut Value) {
    if let (Value::Null, false, Some(default)) = (&*v, node.nullable, &node.default) {
        *v = default.clone();
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn node(schema: Value) -> Node {
        Node::parse(&schema)
    }

    #[test]
    fn defaults_fill_missing_fields_and_the_insides_of_object_defaults() {
        let n = node(json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1},
            "strategy": {"type": "object", "default": {}, "properties": {
                "type": {"type": "string", "default": "Rolling"},
                "maxSurge": {"type": "integer", "default": 1}}},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "default": "TCP"}}}}}}));
        let mut v = json!({"replicas": 3, "ports": [{"name": "a"}, {"protocol": "UDP"}]});
        apply(&n, &mut v);
        assert_eq!(
            v,
            json!({"replicas": 3, "strategy": {"type": "Rolling", "maxSurge": 1},
                "ports": [{"name": "a", "protocol": "TCP"}, {"protocol": "UDP"}]})
        );
    }

    #[test]
    fn a_null_takes_the_default_unless_the_field_is_nullable() {
        let n = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "x"},
            "b": {"type": "string", "nullable": true, "default": "y"},
            "m": {"type": "object", "additionalProperties": {"type": "string", "default": "z"}},
            "l": {"type": "array", "items": {"type": "string", "default": "w"}}}}));
        let mut v = json!({"a": null, "b": null, "m": {"k": null}, "l": [null, "v"]});
        apply(&n, &mut v);
        assert_eq!(
            v,
            json!({"a": "x", "b": null, "m": {"k": "z"}, "l": ["w", "v"]})
        );
    }

    #[test]
    fn nulls_without_a_default_are_dropped_where_the_schema_does_not_allow_them() {
        let n = node(json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "nullable": true},
            "c": {"type": "string", "default": "x"},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "l": {"type": "array", "items": {"type": "object", "properties": {
                "d": {"type": "string"}}}}}}));
        let mut v = json!({"a": null, "b": null, "c": null, "m": {"k": null},
            "l": [{"d": null}], "unknown": null});
        drop_disallowed_nulls(Some(&n), &mut v);
        assert_eq!(
            v,
            json!({"b": null, "c": null, "m": {}, "l": [{}], "unknown": null})
        );
    }

    #[test]
    fn defaults_are_found_at_every_depth() {
        let has_defaults = |n: &Node| n.any(&|n| n.default.is_some());
        assert!(!has_defaults(&node(
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        )));
        assert!(has_defaults(&node(
            json!({"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "object", "properties": {
                "p": {"type": "string", "default": "x"}}}}}})
        )));
    }

    // Below a preserved field nothing is defaulted or dropped: a value as deep as Go reads
    // is walked on a test thread's stack as far as the schema reaches.
    #[test]
    fn a_value_as_deep_as_go_reads_is_defaulted_where_the_schema_reaches() {
        let n = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "x"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}));
        let deep = (0..10_000).fold(json!({"z": null}), |inner, _| {
            Value::Object(json::Map::from_iter([("a", inner)]))
        });
        let mut v = Value::Object(json::Map::from_iter([("free", deep.clone())]));
        drop_disallowed_nulls(Some(&n), &mut v);
        apply(&n, &mut v);
        assert!(v["free"] == deep);
        assert_eq!(v["a"], "x");
    }
}
