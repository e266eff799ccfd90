//! The JSON text of a merge-patched object as kube-apiserver writes it when it quotes the object
//! in an error (`patch: Invalid value: "<object>"`). Its merge patch library (evanphx/json-patch
//! v5) keeps the key order of the document it patches: the stored object's keys stay where they
//! were (sorted, as the object was encoded) and keys the patch adds go last.
//!
//! Keys a patch adds to one object come in the order of a Go map walk there, which varies; they
//! are written here in sorted order.

use serde_json::Value;

/// `current` merge-patched with `patch` (RFC 7396), as text in the patch library's key order.
pub(crate) fn merge_patched(current: &Value, patch: &Value) -> String {
    let mut out = String::new();
    write_merged(current, patch, &mut out);
    out
}

fn write_merged(current: &Value, patch: &Value, out: &mut String) {
    let (Value::Object(doc), Value::Object(changes)) = (current, patch) else {
        write_pruned(patch, out);
        return;
    };
    let mut fields = Vec::new();
    for (k, v) in doc {
        match changes.get(k) {
            Some(Value::Null) => {}
            Some(change) => fields.push((k, Merged::Both(v, change))),
            None => fields.push((k, Merged::Kept(v))),
        }
    }
    for (k, change) in changes {
        if !doc.contains_key(k) && !change.is_null() {
            fields.push((k, Merged::Added(change)));
        }
    }
    out.push('{');
    for (i, (k, merged)) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        match merged {
            Merged::Kept(v) => out.push_str(&v.to_string()),
            Merged::Both(v, change) => write_merged(v, change, out),
            Merged::Added(change) => write_pruned(change, out),
        }
    }
    out.push('}');
}

/// A field of the merged object.
enum Merged<'a> {
    Kept(&'a Value),
    Both(&'a Value, &'a Value),
    Added(&'a Value),
}

/// A value a patch brings where nothing was: its nulls are dropped (`pruneNulls`).
fn write_pruned(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            out.push('{');
            let kept = map.iter().filter(|(_, v)| !v.is_null());
            for (i, (k, v)) in kept.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_pruned(v, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn added_keys_go_last_and_nulls_remove_or_vanish() {
        let current = json!({"a": 1, "spec": {"b": 2, "c": {"d": 3}, "z": 0}});
        let patch =
            json!({"spec": {"c": {"e": 4}, "aa": {"n": null, "m": 5}, "z": null}, "0": [1]});
        assert_eq!(
            merge_patched(&current, &patch),
            r#"{"a":1,"spec":{"b":2,"c":{"d":3,"e":4},"aa":{"m":5}},"0":[1]}"#
        );
    }

    #[test]
    fn the_text_reads_as_the_merge_patched_value() {
        let current = json!({"k": "v", "l": [1, 2], "o": {"p": true}});
        let patch = json!({"l": [3], "o": "flat", "n": {"x": null}});
        let mut merged = current.clone();
        json_patch::merge(&mut merged, &patch);
        let text: Value = serde_json::from_str(&merge_patched(&current, &patch)).unwrap();
        assert_eq!(text, merged);
    }
}
