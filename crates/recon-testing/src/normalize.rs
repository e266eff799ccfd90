//! What comparisons leave out by default: the fields the API server sets, whose values a test
//! author cannot (and should not have to) predict.

use serde_json::Value;

/// `metadata` fields the server owns.
const SERVER_METADATA: [&str; 5] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
];

/// Removes server-set fields from an object or patch body: the server-owned `metadata` fields
/// (dropping `metadata` if nothing else is left) and the `lastTransitionTime` of
/// `status.conditions`.
pub(crate) fn strip_server_fields(value: &mut Value) {
    let Value::Object(map) = value else { return };
    if let Some(Value::Object(meta)) = map.get_mut("metadata") {
        for field in SERVER_METADATA {
            meta.remove(field);
        }
        if meta.is_empty() {
            map.remove("metadata");
        }
    }
    if let Some(Value::Array(conditions)) =
        map.get_mut("status").and_then(|s| s.get_mut("conditions"))
    {
        for c in conditions {
            if let Value::Object(c) = c {
                c.remove("lastTransitionTime");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn server_fields_and_transition_times_are_removed() {
        let mut v = json!({
            "metadata": {"name": "a", "uid": "u", "resourceVersion": "7", "generation": 2},
            "status": {"conditions": [{"type": "Ready", "lastTransitionTime": "t"}]},
        });
        strip_server_fields(&mut v);
        assert_eq!(
            v,
            json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready"}]}})
        );
    }

    #[test]
    fn a_lock_only_metadata_disappears_from_a_patch() {
        let mut v = json!({"metadata": {"resourceVersion": "7"}, "status": {"phase": "A"}});
        strip_server_fields(&mut v);
        assert_eq!(v, json!({"status": {"phase": "A"}}));
    }
}
