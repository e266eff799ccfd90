//! Property tests of the strategic merge patch engine (issue 22): no original and no patch,
//! generated or mutated from valid ones, makes [`apply`] panic, under the schemas of the kinds
//! with the most patch tags and with none; and an empty patch changes nothing.

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{PatchSchema, apply, metadata_only, parse_patch_body, schema_for};
use crate::proptests::{config, json, mangled, mutated};

/// Stored objects to mutate: a Pod and a Deployment with the lists that have merge keys.
fn valid_objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"a": "b"},
            "finalizers": ["x", "y"]},
            "spec": {"containers": [{"name": "c", "image": "i",
                "ports": [{"containerPort": 80, "protocol": "TCP"}], "env": [{"name": "E", "value": "1"}]}],
                "volumes": [{"name": "v", "emptyDir": {}}]}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                "template": {"spec": {"containers": [{"name": "c"}, {"name": "d"}]}}}}),
    ]
}

/// Valid strategic patches to mutate, using each directive.
fn valid_patches() -> Vec<Value> {
    vec![
        json!({"metadata": {"finalizers": ["z"], "$deleteFromPrimitiveList/finalizers": ["x"],
            "$setElementOrder/finalizers": ["z", "y"]}}),
        json!({"spec": {"containers": [{"name": "c", "$patch": "delete"}, {"name": "n", "image": "j"}],
            "$setElementOrder/containers": [{"name": "n"}]}}),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"},
            "template": {"spec": {"containers": [{"name": "d", "ports": [{"containerPort": 1}]}]}}}}),
        json!({"spec": {"$patch": "replace", "volumes": [{"name": "v", "$patch": "merge"}]}}),
    ]
}

fn schema() -> impl Strategy<Value = &'static PatchSchema> {
    prop_oneof![
        Just(schema_for("", "Pod").unwrap_or_else(metadata_only)),
        Just(schema_for("apps", "Deployment").unwrap_or_else(metadata_only)),
        Just(metadata_only()),
    ]
}

fn original() -> impl Strategy<Value = Value> {
    prop_oneof![json(5), mutated(valid_objects())]
}

fn patch() -> impl Strategy<Value = Value> {
    prop_oneof![json(5), mutated(valid_patches())]
}

/// `doc` without its keys that start with `$`: [`apply`] strips directive keys from its result,
/// wherever they came from. Built this way rather than filtered: most generated documents have
/// one somewhere, and a filter would reject too many cases.
fn without_directives(doc: Value) -> Value {
    match doc {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k, without_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_directives).collect()),
        other => other,
    }
}

/// A stored object free of directive keys; a generated value that is not an object becomes
/// the object's `spec`.
fn plain_object() -> impl Strategy<Value = Value> {
    original().prop_map(|doc| match without_directives(doc) {
        object @ Value::Object(_) => object,
        other => json!({ "spec": other }),
    })
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn strategic_merge_never_panics(original in original(), patch in patch(), schema in schema()) {
        let _ = apply(&original, &patch, schema);
    }

    #[test]
    fn an_empty_strategic_patch_changes_nothing(
        original in plain_object(),
        schema in schema(),
    ) {
        prop_assert_eq!(apply(&original, &json!({}), schema).ok(), Some(original));
    }

    #[test]
    fn strategic_merge_survives_mangled_bodies(
        original in original(),
        body in patch().prop_flat_map(|p| mangled(p.to_string())),
        schema in schema(),
    ) {
        if let Ok(patch) = parse_patch_body(&body) {
            let _ = apply(&original, &patch, schema);
        }
    }
}
