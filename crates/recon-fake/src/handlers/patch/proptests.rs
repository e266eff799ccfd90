//! Property tests of the JSON merge patch (RFC 7386) and JSON patch (RFC 6902) engines
//! (issue 22): no body, however generated or mangled, makes them panic; a merge patch is
//! idempotent and `{}` changes nothing; a JSON patch that fails leaves the document as it was.

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{FieldValidation, apply_json_patch, apply_merge_patch};
use crate::proptests::{config, json, mangled, mutated, word};

/// Valid merge patches to mutate.
fn valid_merge_patches() -> Vec<Value> {
    vec![
        json!({"metadata": {"labels": {"a": "b", "c": null}}}),
        json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}),
        json!({"a": {"b": {"c": [1, 2, {"d": null}]}}, "e": null}),
    ]
}

/// Valid JSON patches to mutate.
fn valid_json_patches() -> Vec<Value> {
    vec![
        json!([{"op": "add", "path": "/a", "value": {"b": [1]}},
               {"op": "add", "path": "/a/b/-", "value": 2},
               {"op": "test", "path": "/a/b/1", "value": 2}]),
        json!([{"op": "replace", "path": "/spec", "value": null},
               {"op": "remove", "path": "/spec"}]),
        json!([{"op": "copy", "from": "/metadata", "path": "/m"},
               {"op": "move", "from": "/m", "path": "/n"},
               {"op": "test", "path": "/metadata/missing", "value": null}]),
    ]
}

/// JSON pointers over the generators' vocabulary, including malformed ones.
fn pointer() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(
            prop_oneof![
                word(),
                "[0-9]{1,2}",
                Just("-".to_owned()),
                Just("~1".to_owned()),
                Just("~0".to_owned()),
                Just("~".to_owned())
            ],
            0..4
        )
        .prop_map(|segments| segments.iter().map(|s| format!("/{s}")).collect::<String>()),
        "[a-c/~01-]{0,6}",
    ]
}

/// One operation, mostly well formed, sometimes missing or mistyping a member.
fn operation() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["add", "remove", "replace", "move", "copy", "test", "bad"][..]),
        pointer(),
        prop::option::of(pointer()),
        prop::option::of(json(2)),
        json(1),
    )
        .prop_map(|(op, path, from, value, extra)| {
            let mut o = json!({"op": op, "path": path});
            if let Some(from) = from {
                o["from"] = json!(from);
            }
            if let Some(value) = value {
                o["value"] = value;
            }
            if let (Value::Object(extra), Some(map)) = (extra, o.as_object_mut()) {
                map.extend(extra);
            }
            o
        })
}

fn json_patch() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(operation(), 0..5).prop_map(Value::from),
        mutated(valid_json_patches()),
        json(3),
    ]
}

fn merge_patch() -> impl Strategy<Value = Value> {
    prop_oneof![json(4), mutated(valid_merge_patches())]
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn merge_patch_never_panics_and_is_idempotent(doc in json(4), patch in merge_patch()) {
        let body = patch.to_string();
        let mut once = doc.clone();
        if apply_merge_patch(&mut once, body.as_bytes()).is_ok() {
            // RFC 7386: a patch's members overwrite or delete, so a second application finds
            // everything already as the patch says.
            let mut twice = once.clone();
            prop_assert!(apply_merge_patch(&mut twice, body.as_bytes()).is_ok());
            prop_assert_eq!(&twice, &once);
        }
        if doc.is_object() {
            let mut same = doc.clone();
            let empty = apply_merge_patch(&mut same, b"{}");
            prop_assert!(empty.is_ok(), "{:?}", empty);
            prop_assert_eq!(same, doc);
        }
    }

    #[test]
    fn merge_patch_survives_mangled_bodies(doc in json(3), body in merge_patch()
        .prop_flat_map(|p| mangled(p.to_string()))) {
        let mut work = doc;
        let _ = apply_merge_patch(&mut work, &body);
    }

    #[test]
    fn json_patch_never_panics_and_fails_atomically(doc in json(4), patch in json_patch()) {
        let mut work = doc.clone();
        if apply_json_patch(&mut work, patch.to_string().as_bytes(), FieldValidation::Warn).is_err() {
            prop_assert_eq!(work, doc);
        }
    }

    #[test]
    fn json_patch_survives_mangled_bodies(doc in json(3), body in json_patch()
        .prop_flat_map(|p| mangled(p.to_string()))) {
        let mut work = doc.clone();
        if apply_json_patch(&mut work, &body, FieldValidation::Ignore).is_err() {
            prop_assert_eq!(work, doc);
        }
    }
}
