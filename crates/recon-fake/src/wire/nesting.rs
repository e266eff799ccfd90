//! How deep an object may nest and still be stored.
//!
//! The in-memory server reads its stored bytes back with serde_json, which stops at 128
//! nested arrays and objects; Go's `encoding/json`, kube-apiserver's decoder, stops at 10000.
//! A request body cannot get past serde_json's limit, but a JSON patch can build a deeper
//! object out of a shallow body (a deep `path`, a deep `value`). Such a write is refused with
//! [`too_deep`] before anything is stored: storing it would leave bytes the server could not
//! read back.

use serde_json::{Map, Value};

use super::error::ApiError;

/// The deepest nesting of arrays and objects serde_json reads: it refuses the 128th.
pub(crate) const MAX_NESTING: usize = 127;

/// Whether an object (one level already) nests no deeper than [`MAX_NESTING`].
pub(crate) fn object_within_limit(obj: &Map<String, Value>) -> bool {
    walk(obj.values().map(|child| (child, 1)).collect())
}

/// Walks without recursion, so that no input can overflow the stack here; `pending` holds
/// values with the depth of the container they are in.
fn walk(mut pending: Vec<(&Value, usize)>) -> bool {
    while let Some((value, depth)) = pending.pop() {
        let depth = depth + 1;
        match value {
            Value::Array(items) if depth <= MAX_NESTING => {
                pending.extend(items.iter().map(|child| (child, depth)));
            }
            Value::Object(fields) if depth <= MAX_NESTING => {
                pending.extend(fields.values().map(|child| (child, depth)));
            }
            Value::Array(_) | Value::Object(_) => return false,
            _ => {}
        }
    }
    true
}

/// The 500 a write too deep to store is answered with.
pub(crate) fn too_deep() -> ApiError {
    ApiError::internal(&format!(
        "the object nests arrays and objects deeper than {MAX_NESTING} levels, more than the in-memory server can store (kube-apiserver's decoder allows 10000)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within_limit(value: &Value) -> bool {
        walk(vec![(value, 0)])
    }

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    // The limit is serde_json's, exactly: what passes here, serde_json reads back.
    #[test]
    fn the_limit_is_where_serde_json_stops_reading() {
        for depth in [1, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 300] {
            let text = nested(depth);
            let readable = serde_json::from_str::<Value>(&text).is_ok();
            assert_eq!(readable, depth <= MAX_NESTING, "depth {depth}");
            if readable {
                let value: Value = serde_json::from_str(&text).unwrap();
                assert!(within_limit(&value), "depth {depth}");
            }
        }
    }

    #[test]
    fn depth_counts_objects_and_arrays_along_any_branch() {
        let mut deep = Value::Null;
        for i in 0..MAX_NESTING + 1 {
            deep = if i % 2 == 0 {
                serde_json::json!({"a": deep})
            } else {
                serde_json::json!([deep])
            };
        }
        assert!(!within_limit(&deep));
        let wide = serde_json::json!({"x": 1, "y": [[{"z": {}}]], "w": deep});
        assert!(!within_limit(&wide));
        assert!(within_limit(&serde_json::json!({"x": [1, {"y": []}]})));
        assert!(within_limit(&Value::from("scalar")));
        let Value::Object(top) = serde_json::json!({"a": deep}) else {
            unreachable!()
        };
        assert!(!object_within_limit(&top));
        let Value::Object(top) = serde_json::json!({"a": [[]]}) else {
            unreachable!()
        };
        assert!(object_within_limit(&top));
    }
}
