//! What the crate's property tests (issue 22) share: how many cases to run, and generators of
//! JSON documents and of mutations of valid ones.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Value};

/// `RECON_PROPTEST_CASES` cases per property (`cargo xtask fuzz` sets it high), else `default`,
/// chosen per property so that all of them take a few seconds of a debug build. No failure
/// persistence: a failure prints its minimal input, which belongs in a plain regression test,
/// and nothing is written into the source tree.
pub(crate) fn config(default: u32) -> Config {
    let cases = std::env::var("RECON_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Object keys and string values from a small vocabulary, so that a generated patch and a
/// generated document name the same fields, and the patch engines' special keys and values
/// (directives, merge keys, `$patch` values) come up often.
pub(crate) fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{0,2}",
        prop::sample::select(
            &[
                "name",
                "spec",
                "metadata",
                "labels",
                "finalizers",
                "containers",
                "ports",
                "containerPort",
                "protocol",
                "env",
                "volumes",
                "template",
                "$patch",
                "replace",
                "delete",
                "merge",
                "$retainKeys",
                "$setElementOrder/containers",
                "$setElementOrder/finalizers",
                "$deleteFromPrimitiveList/finalizers",
                "é",
                "\0",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

/// A JSON document at most `depth` levels deep with a bounded number of nodes.
pub(crate) fn json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..1000).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((word(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Replaces the node that `steps` leads to in `doc` (each step picks a child modulo the
/// number of children; the walk stops at a leaf or when the steps run out) with `by`.
pub(crate) fn replace_node(doc: &mut Value, steps: &[usize], by: Value) {
    let Some((&step, rest)) = steps.split_first() else {
        *doc = by;
        return;
    };
    match doc {
        Value::Array(items) if !items.is_empty() => {
            let i = step % items.len();
            replace_node(&mut items[i], rest, by);
        }
        Value::Object(map) if !map.is_empty() => {
            let i = step % map.len();
            if let Some(child) = map.values_mut().nth(i) {
                replace_node(child, rest, by);
            }
        }
        _ => *doc = by,
    }
}

/// A valid document from `valid` with one node replaced by a generated one: mutations reach
/// the engines' deeper paths, which arbitrary documents seldom do.
pub(crate) fn mutated(valid: Vec<Value>) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(valid),
        prop::collection::vec(any::<usize>(), 0..6),
        json(2),
    )
        .prop_map(|(mut doc, steps, by)| {
            replace_node(&mut doc, &steps, by);
            doc
        })
}

/// A JSON text with bytes inserted, deleted or replaced, to reach the decoders' error paths
/// (including invalid UTF-8, NUL and truncation).
pub(crate) fn mangled(text: String) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 0..4).prop_map(move |edits| {
        let mut bytes = text.clone().into_bytes();
        for (at, byte, kind) in edits {
            let at = at % (bytes.len() + 1);
            match kind {
                0 => bytes.insert(at, byte),
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ if at < bytes.len() => bytes[at] = byte,
                _ => bytes.push(byte),
            }
        }
        bytes
    })
}
