//! JSON for status writes: the RFC 7396 merge patch that turns one document into another, and
//! the three-way merge that re-applies a reconcile's own changes onto an object another writer
//! changed in the meantime.

use serde_json::{Map, Value};

/// The JSON merge patch (RFC 7396) that turns `from` into `to`: changed keys with their new
/// values, removed keys as `null`, arrays and scalars whole. `None` when they are equal.
pub(crate) fn merge_diff(from: &Value, to: &Value) -> Option<Value> {
    if from == to {
        return None;
    }
    let (Value::Object(from), Value::Object(to)) = (from, to) else {
        return Some(to.clone());
    };
    let mut patch = Map::new();
    for (key, old) in from {
        match to.get(key) {
            None => {
                patch.insert(key.clone(), Value::Null);
            }
            Some(new) => {
                if let Some(d) = merge_diff(old, new) {
                    patch.insert(key.clone(), d);
                }
            }
        }
    }
    for (key, new) in to {
        if !from.contains_key(key) {
            patch.insert(key.clone(), new.clone());
        }
    }
    Some(Value::Object(patch))
}

/// Where two writers changed the same part differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Collision {
    /// A JSON path such as `status.plan` or `status.conditions[Ready]`.
    pub(crate) path: String,
}

/// Merges `ours` (changed from `base` by this reconcile) with `theirs` (changed from `base` by
/// someone else): what only one side changed is taken from it; maps merge key by key;
/// `conditions` lists merge by condition `type`; anything else both changed differently is a
/// [`Collision`].
pub(crate) fn three_way(
    base: &Value,
    ours: &Value,
    theirs: &Value,
    path: &str,
) -> Result<Value, Collision> {
    if ours == base || ours == theirs {
        return Ok(theirs.clone());
    }
    if theirs == base {
        return Ok(ours.clone());
    }
    let empty = Map::new();
    let as_map = |v: &Value| -> Option<Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m.clone()),
            Value::Null => Some(empty.clone()),
            _ => None,
        }
    };
    if let (Some(b), Some(o), Some(t)) = (as_map(base), as_map(ours), as_map(theirs)) {
        let mut keys: Vec<&String> = o.keys().chain(t.keys()).collect();
        keys.sort();
        keys.dedup();
        let mut merged = Map::new();
        for key in keys {
            let field = |m: &Map<String, Value>| m.get(key).cloned().unwrap_or(Value::Null);
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let value = if key == "conditions" {
                merge_conditions(&field(&b), &field(&o), &field(&t), &child)?
            } else {
                three_way(&field(&b), &field(&o), &field(&t), &child)?
            };
            if !value.is_null() {
                merged.insert(key.clone(), value);
            }
        }
        return Ok(Value::Object(merged));
    }
    Err(Collision {
        path: path.to_owned(),
    })
}

/// `conditions` merged by `type`: each writer's changes to its own condition types survive.
fn merge_conditions(
    base: &Value,
    ours: &Value,
    theirs: &Value,
    path: &str,
) -> Result<Value, Collision> {
    let by_type = |v: &Value| -> Option<Vec<(String, Value)>> {
        match v {
            Value::Null => Some(Vec::new()),
            Value::Array(items) => items
                .iter()
                .map(|c| Some((c.get("type")?.as_str()?.to_owned(), c.clone())))
                .collect(),
            _ => None,
        }
    };
    let (Some(b), Some(o), Some(t)) = (by_type(base), by_type(ours), by_type(theirs)) else {
        return three_way(base, ours, theirs, path);
    };
    let get = |list: &[(String, Value)], ty: &str| {
        list.iter()
            .find(|(t, _)| t == ty)
            .map(|(_, c)| c.clone())
            .unwrap_or(Value::Null)
    };
    let mut types: Vec<&String> = o.iter().chain(t.iter()).map(|(ty, _)| ty).collect();
    types.sort();
    types.dedup();
    let mut merged = Vec::new();
    for ty in types {
        let child = format!("{path}[{ty}]");
        let (bc, oc, tc) = (get(&b, ty), get(&o, ty), get(&t, ty));
        let condition = if oc == bc || oc == tc {
            tc
        } else if tc == bc {
            oc
        } else {
            return Err(Collision { path: child });
        };
        if !condition.is_null() {
            merged.push(condition);
        }
    }
    Ok(Value::Array(merged))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_diff_lists_changes_removals_and_whole_arrays() {
        let from = json!({"a": 1, "b": {"c": 1, "d": 2}, "e": [1, 2], "gone": true});
        let to = json!({"a": 1, "b": {"c": 1, "d": 3}, "e": [1], "new": "x"});
        assert_eq!(
            merge_diff(&from, &to),
            Some(json!({"b": {"d": 3}, "e": [1], "gone": null, "new": "x"}))
        );
        assert_eq!(merge_diff(&to, &to), None);
    }

    #[test]
    fn applying_the_diff_gives_the_target() {
        let from = json!({"phase": "A", "x": {"y": 1}});
        let to = json!({"phase": "B", "x": {"z": 2}});
        let mut doc = from.clone();
        json_patch::merge(&mut doc, &merge_diff(&from, &to).unwrap());
        assert_eq!(doc, to);
    }

    #[test]
    fn changes_on_different_fields_both_survive() {
        let base = json!({"a": 1, "b": 1});
        let ours = json!({"a": 2, "b": 1});
        let theirs = json!({"a": 1, "b": 3, "c": 4});
        assert_eq!(
            three_way(&base, &ours, &theirs, "status"),
            Ok(json!({"a": 2, "b": 3, "c": 4}))
        );
    }

    #[test]
    fn the_same_field_changed_differently_collides() {
        let base = json!({"plan": null});
        let ours = json!({"plan": "mine"});
        let theirs = json!({"plan": "theirs"});
        assert_eq!(
            three_way(&base, &ours, &theirs, "status"),
            Err(Collision {
                path: "status.plan".into()
            })
        );
    }

    #[test]
    fn conditions_merge_by_type() {
        let ready = |s: &str| json!({"type": "Ready", "status": s});
        let synced = json!({"type": "Synced", "status": "True"});
        let base = json!({"conditions": [ready("Unknown")]});
        let ours = json!({"conditions": [ready("True")]});
        let theirs = json!({"conditions": [ready("Unknown"), synced]});
        assert_eq!(
            three_way(&base, &ours, &theirs, "status"),
            Ok(json!({"conditions": [ready("True"), synced]}))
        );
        let theirs_ready = json!({"conditions": [ready("False")]});
        assert_eq!(
            three_way(&base, &ours, &theirs_ready, "status"),
            Err(Collision {
                path: "status.conditions[Ready]".into()
            })
        );
    }
}
