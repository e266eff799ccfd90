//! The apply configuration of [`StatusStrategy::Apply`](super::StatusStrategy::Apply): the
//! status fields this reconcile changed and the fields its manager applied before, never
//! another manager's.
//!
//! Server-side apply makes the applier an owner of every field it sends. Sending the whole
//! status as read would make the reconciler co-owner of other managers' fields and list
//! entries, and their next unforced change of those would conflict with it. Sending what it
//! applied before, even unchanged, keeps those fields; a field it stops setting is left out and
//! the server releases it (removed unless another manager owns it too).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use recon_apimachinery::fieldpath::{FieldSet, PathElement};
use serde_json::{Map, Value};

use crate::json::{ListKind, Shape, apply_entry, entry_set, field, selects};

/// The `status` to apply for a reconcile that changed `before` into `desired`, as
/// `field_manager`, given the object's `managedFields`; `None` when there is nothing to apply
/// (the reconcile only removed fields this manager does not own).
///
/// What the manager owns and how the server merges each list come from `managedFields` alone.
/// A list is sent in part only where some manager's field set shows the server merges it item
/// by item (`k:` or `v:` members); any other list is sent whole when it changed or was owned,
/// as an atomic list must be. An object without managedFields (seeded in a test; a real server
/// records them on every write) owns nothing to anyone yet: only what changed is sent.
pub(crate) fn status_to_apply(
    before: &Value,
    desired: &Value,
    managed_fields: Option<&[ManagedFieldsEntry]>,
    field_manager: &str,
) -> Option<Value> {
    let entries = managed_fields.unwrap_or_default();
    let applied = apply_entry(Some(entries), field_manager, "status").and_then(entry_set);
    let owned = applied.as_ref().and_then(|set| field(set, "status"));
    let shape = Shape::of(entries);
    let before = (!before.is_null()).then_some(before);
    select(before, desired, owned, shape.field("status"))
}

/// The part of `desired` to apply: what differs from `before` and what `owned` lists.
fn select(
    before: Option<&Value>,
    desired: &Value,
    owned: Option<&FieldSet>,
    shape: Option<&Shape>,
) -> Option<Value> {
    let granular = shape.is_some_and(Shape::is_granular);
    if let Some(node) = owned
        && node.is_empty()
        && !granular
    {
        // Owned whole: a scalar, an atomic list or map.
        return Some(desired.clone());
    }
    match desired {
        Value::Object(fields) => select_fields(before, fields, owned, shape),
        Value::Array(items) => match shape.and_then(Shape::list) {
            Some(ListKind::Map(keys)) => select_keyed(before, items, keys, owned, shape),
            Some(ListKind::Set) => select_set(before, items, owned),
            None => changed_or_owned(before, desired, owned),
        },
        _ => changed_or_owned(before, desired, owned),
    }
}

fn changed_or_owned(
    before: Option<&Value>,
    desired: &Value,
    owned: Option<&FieldSet>,
) -> Option<Value> {
    (before != Some(desired) || owned.is_some()).then(|| desired.clone())
}

/// The container itself is sent, even empty, when it is new or this manager owns it; an
/// existing container with nothing to send is left out.
fn container(
    before: Option<&Value>,
    owned: Option<&FieldSet>,
    kind: fn(&Value) -> bool,
    out: Value,
) -> Option<Value> {
    let empty = match &out {
        Value::Object(fields) => fields.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    };
    let existed = before.is_some_and(kind);
    (!empty || !existed || owned.is_some()).then_some(out)
}

fn select_fields(
    before: Option<&Value>,
    fields: &Map<String, Value>,
    owned: Option<&FieldSet>,
    shape: Option<&Shape>,
) -> Option<Value> {
    let before_fields = before.and_then(Value::as_object);
    let mut out = Map::new();
    for (name, value) in fields {
        // A null is no value: leaving it out releases the field.
        if value.is_null() {
            continue;
        }
        let was = before_fields.and_then(|b| b.get(name));
        let owns = owned.and_then(|node| field(node, name));
        if was == Some(value) && owns.is_none() {
            continue;
        }
        if let Some(part) = select(was, value, owns, shape.and_then(|s| s.field(name))) {
            out.insert(name.clone(), part);
        }
    }
    container(before, owned, Value::is_object, Value::Object(out))
}

/// A list-map: the items that changed or that this manager owns, each with its key fields.
fn select_keyed(
    before: Option<&Value>,
    items: &[Value],
    keys: &[String],
    owned: Option<&FieldSet>,
    shape: Option<&Shape>,
) -> Option<Value> {
    let before_items = before.and_then(Value::as_array);
    let owned_items: Vec<(&PathElement, &FieldSet)> =
        owned.into_iter().flat_map(FieldSet::entries).collect();
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(key) = key_of(item, keys) else {
            // An item the server could not key: the list cannot be sent in part.
            return changed_or_owned(before, &Value::Array(items.to_vec()), owned);
        };
        let was =
            before_items.and_then(|b| b.iter().find(|i| key_of(i, keys).as_ref() == Some(&key)));
        let owns = owned_items
            .iter()
            .find(|(pe, _)| selects(pe, index, item))
            .map(|(_, node)| *node);
        if was == Some(item) && owns.is_none() {
            continue;
        }
        let part = select(was, item, owns, shape.and_then(Shape::items));
        let mut part = match part {
            Some(Value::Object(part)) => part,
            _ => Map::new(),
        };
        part.extend(key);
        out.push(Value::Object(part));
    }
    container(before, owned, Value::is_array, Value::Array(out))
}

/// A set: the values that are new or that this manager owns.
fn select_set(before: Option<&Value>, items: &[Value], owned: Option<&FieldSet>) -> Option<Value> {
    let before_items = before.and_then(Value::as_array);
    let owned_items: Vec<&PathElement> = owned
        .into_iter()
        .flat_map(FieldSet::entries)
        .map(|(pe, _)| pe)
        .collect();
    let out: Vec<Value> = items
        .iter()
        .enumerate()
        .filter(|(index, item)| {
            !before_items.is_some_and(|b| b.contains(item))
                || owned_items.iter().any(|pe| selects(pe, *index, item))
        })
        .map(|(_, item)| item.clone())
        .collect();
    container(before, owned, Value::is_array, Value::Array(out))
}

/// The key fields of a list-map item; `None` when one is missing.
fn key_of(item: &Value, keys: &[String]) -> Option<Map<String, Value>> {
    keys.iter()
        .map(|k| Some((k.clone(), item.get(k).filter(|v| !v.is_null())?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    use super::*;

    fn entry(manager: &str, operation: &str, fields: Value) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(operation.into()),
            subresource: Some("status".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(json!({ "f:status": fields }))),
            ..Default::default()
        }
    }

    fn condition(type_: &str, reason: &str) -> Value {
        json!({"type": type_, "status": "True", "reason": reason})
    }

    fn owns_condition(type_: &str) -> (String, Value) {
        (
            format!(r#"k:{{"type":"{type_}"}}"#),
            json!({".": {}, "f:type": {}, "f:status": {}, "f:reason": {}}),
        )
    }

    /// The operator owns `Alpha` and `observedGeneration`; the reporter owns `Beta`.
    fn two_writers() -> Vec<ManagedFieldsEntry> {
        let (alpha, alpha_fields) = owns_condition("Alpha");
        let (beta, beta_fields) = owns_condition("Beta");
        vec![
            entry(
                "operator",
                "Apply",
                json!({
                    "f:observedGeneration": {},
                    "f:conditions": { alpha: alpha_fields },
                }),
            ),
            entry(
                "reporter",
                "Apply",
                json!({"f:conditions": { beta: beta_fields }}),
            ),
        ]
    }

    #[test]
    fn another_managers_list_entries_are_never_sent() {
        let before = json!({"observedGeneration": 1,
                            "conditions": [condition("Alpha", "A"), condition("Beta", "B")]});
        let desired = json!({"observedGeneration": 2,
                             "conditions": [condition("Alpha", "A2"), condition("Beta", "B")]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "operator"),
            Some(json!({"observedGeneration": 2, "conditions": [condition("Alpha", "A2")]}))
        );
    }

    #[test]
    fn what_this_manager_applied_before_is_sent_again_unchanged() {
        let before = json!({"observedGeneration": 1, "message": "theirs",
                            "conditions": [condition("Alpha", "A"), condition("Beta", "B")]});
        let mut desired = before.clone();
        desired["phase"] = json!("Running");
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "operator"),
            Some(json!({"observedGeneration": 1, "phase": "Running",
                        "conditions": [condition("Alpha", "A")]}))
        );
    }

    #[test]
    fn a_field_this_manager_stops_setting_is_left_out() {
        let before = json!({"observedGeneration": 1,
                            "conditions": [condition("Alpha", "A"), condition("Beta", "B")]});
        let desired = json!({"conditions": [condition("Beta", "B")]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "operator"),
            Some(json!({"conditions": []})),
            "the emptied list-map stays this manager's; Alpha and observedGeneration are released"
        );
    }

    #[test]
    fn a_changed_item_of_another_manager_is_sent_with_its_keys_and_changed_fields_only() {
        let before = json!({"conditions": [condition("Beta", "B")]});
        let desired = json!({"conditions": [condition("Beta", "B2")]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "operator"),
            Some(json!({"conditions": [{"type": "Beta", "reason": "B2"}]}))
        );
    }

    #[test]
    fn lists_no_field_set_descends_into_are_sent_whole() {
        let entries = [entry(
            "reporter",
            "Update",
            json!({"f:ports": {}, "f:tags": {}}),
        )];
        let before = json!({"ports": [1, 2], "tags": ["a"]});
        let desired = json!({"ports": [1, 2, 3], "tags": ["a"]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&entries), "operator"),
            Some(json!({"ports": [1, 2, 3]}))
        );
    }

    #[test]
    fn sets_send_new_and_owned_values() {
        let entries = [
            entry("operator", "Apply", json!({"f:tags": {r#"v:"mine""#: {}}})),
            entry(
                "reporter",
                "Apply",
                json!({"f:tags": {r#"v:"theirs""#: {}}}),
            ),
        ];
        let before = json!({"tags": ["mine", "theirs"]});
        let desired = json!({"tags": ["mine", "theirs", "new"]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&entries), "operator"),
            Some(json!({"tags": ["mine", "new"]}))
        );
    }

    #[test]
    fn nested_maps_send_only_their_changed_and_owned_fields() {
        let entries = [
            entry(
                "operator",
                "Apply",
                json!({"f:endpoint": {".": {}, "f:host": {}}}),
            ),
            entry("reporter", "Update", json!({"f:endpoint": {"f:port": {}}})),
        ];
        let before = json!({"endpoint": {"host": "a", "port": 80}});
        let desired = json!({"endpoint": {"host": "a", "port": 80, "path": "/"}});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&entries), "operator"),
            Some(json!({"endpoint": {"host": "a", "path": "/"}}))
        );
    }

    #[test]
    fn without_managed_fields_what_changed_is_sent_and_lists_whole() {
        let before = json!({"phase": "Pending", "conditions": [condition("Beta", "B")]});
        let desired = json!({"phase": "Pending", "message": "hi",
                             "conditions": [condition("Alpha", "A"), condition("Beta", "B")]});
        let expected = json!({"message": "hi", "conditions": desired["conditions"]});
        assert_eq!(
            status_to_apply(&before, &desired, None, "operator"),
            Some(expected.clone())
        );
        assert_eq!(
            status_to_apply(&before, &desired, Some(&[]), "operator"),
            Some(expected)
        );
    }

    #[test]
    fn removing_only_fields_of_others_sends_nothing() {
        let before = json!({"conditions": [condition("Beta", "B")]});
        let desired = json!({"conditions": []});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "newcomer"),
            None
        );
    }

    #[test]
    fn an_item_without_its_key_makes_the_list_atomic() {
        let before = json!({"conditions": [condition("Beta", "B")]});
        let desired = json!({"conditions": [condition("Beta", "B"), {"status": "True"}]});
        assert_eq!(
            status_to_apply(&before, &desired, Some(&two_writers()), "operator"),
            Some(desired)
        );
    }
}
