//! JSON merge patches (RFC 7396), applied one object at a time.

use super::{Map, Value};

/// Applies the merge patch `patch` to `doc` (RFC 7396): a patch that is not an object replaces
/// the document; an object's fields merge into the document's (made an object if it was not
/// one), `null` deleting a field; arrays are replaced whole. As `json_patch::merge` (and so
/// kube-apiserver's merge patches) applies it, but without recursion: a patch as deep as Go
/// decodes takes no more stack than a shallow one.
///
/// ```
/// use recon_apimachinery::json;
/// use recon_apimachinery::json::merge_patch;
///
/// let mut doc = json!({"spec": {"replicas": 1, "paused": true}, "items": [1, 2]});
/// merge_patch(&mut doc, &json!({"spec": {"replicas": 3, "paused": null}, "items": [3]}));
/// assert_eq!(doc, json!({"spec": {"replicas": 3}, "items": [3]}));
/// ```
pub fn merge_patch(doc: &mut Value, patch: &Value) {
    let mut pending = vec![(doc, patch)];
    while let Some((doc, patch)) = pending.pop() {
        let Value::Object(patch) = patch else {
            *doc = patch.clone();
            continue;
        };
        if !doc.is_object() {
            *doc = Value::Object(Map::new());
        }
        let Value::Object(fields) = doc else {
            continue;
        };
        for (key, value) in patch.iter() {
            if value.is_null() {
                fields.remove(key);
            } else if !fields.contains_key(key) {
                fields.insert(key.clone(), Value::Null);
            }
        }
        // Both in key order: each field the patch sets, with what it sets it to.
        let mut sets = patch.iter().filter(|(_, v)| !v.is_null()).peekable();
        for (key, field) in fields.iter_mut() {
            while sets.next_if(|(k, _)| *k < key).is_some() {}
            if let Some((_, value)) = sets.next_if(|(k, _)| *k == key) {
                pending.push((field, value));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    // The cases of RFC 7396's appendix A.
    #[test]
    fn the_rfc_examples_merge_as_written() {
        for (doc, patch, result) in [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": "b", "b": "c"}),
                json!({"a": null}),
                json!({"b": "c"}),
            ),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a": "b"}), json!(["c"]), json!(["c"])),
            (json!({"a": "foo"}), json!(null), json!(null)),
            (json!({"a": "foo"}), json!("bar"), json!("bar")),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!([1, 2]),
                json!({"a": "b", "c": null}),
                json!({"a": "b"}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ] {
            let mut merged = doc.clone();
            merge_patch(&mut merged, &patch);
            assert_eq!(merged, result, "{doc} patched with {patch}");
        }
    }

    // A patch 100,000 objects deep, onto a document as deep, on a test thread's stack.
    #[test]
    fn a_deep_patch_takes_no_stack() {
        let nest = |leaf: Value| {
            let mut value = leaf;
            for _ in 0..100_000 {
                value = Value::Object(Map::from_iter([("a", value)]));
            }
            value
        };
        let mut doc = nest(json!({"keep": 1, "drop": 2}));
        merge_patch(&mut doc, &nest(json!({"drop": null, "add": 3})));
        assert!(doc == nest(json!({"keep": 1, "add": 3})));
    }
}
