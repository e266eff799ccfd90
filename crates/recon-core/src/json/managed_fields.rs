//! Field sets as `metadata.managedFields` records them (`fieldsV1`, structured-merge-diff's
//! encoding): which values a manager owns, and what the server's schema makes of a list.
//!
//! The sets themselves, and their encoding, are [`recon_apimachinery::fieldpath`]'s; a path
//! that ends where a value has members owns that value whole.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use recon_apimachinery::fieldpath::{FieldSet, PathElement};
use serde_json::{Map, Value};

/// The entry of `manager`'s server-side apply to `subresource` (`""`: the main resource).
pub(crate) fn apply_entry<'m>(
    entries: Option<&'m [ManagedFieldsEntry]>,
    manager: &str,
    subresource: &str,
) -> Option<&'m ManagedFieldsEntry> {
    entries?.iter().find(|e| {
        e.manager.as_deref() == Some(manager)
            && e.operation.as_deref() == Some("Apply")
            && e.subresource.as_deref().unwrap_or_default() == subresource
    })
}

/// The paths an entry's `fieldsV1` lists; `None` when it has none or they do not parse.
pub(crate) fn entry_set(entry: &ManagedFieldsEntry) -> Option<FieldSet> {
    FieldSet::from_fields_v1(&entry.fields_v1.as_ref()?.0.clone().into()).ok()
}

/// The paths of `set` under the map field `name`, when `set` lists the field.
pub(crate) fn field<'s>(set: &'s FieldSet, name: &str) -> Option<&'s FieldSet> {
    set.entry(&PathElement::field(name))
}

/// Whether the list element `pe` names the item at `index`: by its key fields, its value or
/// its index.
pub(crate) fn selects(pe: &PathElement, index: usize, item: &Value) -> bool {
    // The element's values (a key's fields, a set item) are the apimachinery's JSON.
    let is = |v: &recon_apimachinery::json::Value, item: &Value| *item == Value::from(v.clone());
    match pe {
        PathElement::Key(fields) => fields
            .iter()
            .all(|(k, v)| item.get(k).is_some_and(|i| is(v, i))),
        PathElement::Value(v) => is(v, item),
        PathElement::Index(i) => usize::try_from(*i).is_ok_and(|i| i == index),
        PathElement::Field(_) => false,
    }
}

/// The parts of `value` that the `fieldsV1` `node` lists. List items come out in `value`'s
/// order. `None` when the node does not parse or does not fit the value (a field list over a
/// list): the caller then cannot tell.
pub(crate) fn extract(node: &Value, value: &Value) -> Option<Value> {
    extract_set(&FieldSet::from_fields_v1(&node.clone().into()).ok()?, value)
}

fn extract_set(set: &FieldSet, value: &Value) -> Option<Value> {
    let mut entries = set.entries().peekable();
    if entries.peek().is_none() {
        return Some(value.clone());
    }
    match value {
        Value::Object(fields) => {
            let mut out = Map::new();
            for (pe, under) in entries {
                let PathElement::Field(name) = pe else {
                    return None;
                };
                if let Some(field) = fields.get(&**name) {
                    out.insert(name.to_string(), extract_set(under, field)?);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => {
            let entries: Vec<_> = entries.collect();
            if entries
                .iter()
                .any(|(pe, _)| matches!(pe, PathElement::Field(_)))
            {
                return None;
            }
            let mut out = Vec::new();
            for (index, item) in items.iter().enumerate() {
                if let Some((_, under)) = entries.iter().find(|(pe, _)| selects(pe, index, item)) {
                    out.push(extract_set(under, item)?);
                }
            }
            Some(Value::Array(out))
        }
        _ => None,
    }
}

/// How the server merges a list, as its field sets show.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ListKind {
    /// `x-kubernetes-list-type: map`: items are owned one by one, named by these key fields.
    Map(Vec<String>),
    /// `x-kubernetes-list-type: set`: scalar items owned one by one.
    Set,
}

/// What the field sets of an object tell of its shape: which maps the server tracks field by
/// field and which lists item by item. A path no field set descends into is unknown, and
/// callers treat it as atomic.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    fields: BTreeMap<String, Shape>,
    list: Option<ListKind>,
    items: Option<Box<Shape>>,
}

impl Shape {
    /// The shape every entry of `entries` shows.
    pub(crate) fn of(entries: &[ManagedFieldsEntry]) -> Shape {
        let mut shape = Shape::default();
        for set in entries.iter().filter_map(entry_set) {
            shape.learn(&set);
        }
        shape
    }

    /// Adds what `set` shows.
    fn learn(&mut self, set: &FieldSet) {
        for (pe, under) in set.entries() {
            match pe {
                PathElement::Field(name) => {
                    self.fields
                        .entry(name.to_string())
                        .or_default()
                        .learn(under);
                }
                PathElement::Key(fields) => {
                    self.list = Some(ListKind::Map(
                        fields.iter().map(|(name, _)| name.clone()).collect(),
                    ));
                    self.items.get_or_insert_default().learn(under);
                }
                PathElement::Value(_) => self.list = Some(ListKind::Set),
                PathElement::Index(_) => {}
            }
        }
    }

    /// The shape of the map field `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&Shape> {
        self.fields.get(name)
    }

    /// The shape of this list's items.
    pub(crate) fn items(&self) -> Option<&Shape> {
        self.items.as_deref()
    }

    /// How this list merges, when a field set shows it.
    pub(crate) fn list(&self) -> Option<&ListKind> {
        self.list.as_ref()
    }

    /// Whether the server tracks this value's members one by one (a map whose fields some
    /// manager owns, a list-map or a set), so owning the value is not owning its members.
    pub(crate) fn is_granular(&self) -> bool {
        !self.fields.is_empty() || self.list.is_some()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(
        manager: &str,
        operation: &str,
        subresource: &str,
        fields: Value,
    ) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(operation.into()),
            subresource: (!subresource.is_empty()).then(|| subresource.into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                fields,
            )),
            ..Default::default()
        }
    }

    #[test]
    fn the_apply_entry_is_found_by_manager_operation_and_subresource() {
        let entries = [
            entry("a", "Update", "status", json!({"f:status": {}})),
            entry("a", "Apply", "", json!({"f:spec": {}})),
            entry("a", "Apply", "status", json!({"f:status": {"f:x": {}}})),
            entry("b", "Apply", "status", json!({})),
        ];
        let found = apply_entry(Some(&entries), "a", "status").unwrap();
        assert_eq!(
            found.fields_v1.as_ref().unwrap().0,
            json!({"f:status": {"f:x": {}}})
        );
        let main = apply_entry(Some(&entries), "a", "").unwrap();
        assert_eq!(main.fields_v1.as_ref().unwrap().0, json!({"f:spec": {}}));
        assert!(apply_entry(Some(&entries), "c", "status").is_none());
        assert!(apply_entry(None, "a", "").is_none());
    }

    #[test]
    fn fields_listed_are_extracted_and_the_rest_left_out() {
        let object = json!({
            "metadata": {"name": "c", "labels": {"mine": "1", "theirs": "2"}},
            "data": {"a": "1", "b": "2"},
            "spec": {"atomic": [3, 1], "whole": {"x": 1}},
        });
        let fields = json!({
            "f:metadata": {"f:labels": {".": {}, "f:mine": {}}},
            "f:data": {".": {}, "f:a": {}, "f:gone": {}},
            "f:spec": {"f:atomic": {}, "f:whole": null},
        });
        assert_eq!(
            extract(&fields, &object),
            Some(json!({
                "metadata": {"labels": {"mine": "1"}},
                "data": {"a": "1"},
                "spec": {"atomic": [3, 1], "whole": {"x": 1}},
            }))
        );
    }

    #[test]
    fn list_items_are_picked_by_key_value_and_index_in_the_objects_order() {
        let object = json!({"spec": {
            "containers": [
                {"name": "b", "image": "x", "defaulted": true},
                {"name": "a", "image": "y"},
                {"name": "c", "image": "z"},
            ],
            "set": ["p", "q", "r"],
            "indexed": [{"v": 0}, {"v": 1}],
        }});
        let fields = json!({"f:spec": {
            "f:containers": {
                r#"k:{"name":"a"}"#: {".": {}, "f:name": {}, "f:image": {}},
                r#"k:{"name":"b"}"#: {".": {}, "f:name": {}, "f:image": {}},
            },
            "f:set": {r#"v:"r""#: {}, r#"v:"p""#: {}},
            "f:indexed": {"i:1": {"f:v": {}}},
        }});
        assert_eq!(
            extract(&fields, &object),
            Some(json!({"spec": {
                "containers": [{"name": "b", "image": "x"}, {"name": "a", "image": "y"}],
                "set": ["p", "r"],
                "indexed": [{"v": 1}],
            }}))
        );
    }

    #[test]
    fn a_node_that_does_not_fit_the_value_cannot_be_extracted() {
        for fields in [
            json!({"f:data": {"k:{\"name\":\"a\"}": {}}}),
            json!({"f:list": {"f:name": {}}}),
            json!({"f:list": {"k:notjson": {}}}),
            json!({"f:list": {"i:x": {}}}),
            json!({"f:data": 1}),
        ] {
            let object = json!({"data": {"a": "1"}, "list": [{"name": "a"}]});
            assert_eq!(extract(&fields, &object), None, "{fields}");
        }
    }

    #[test]
    fn the_shape_gathers_what_every_manager_shows() {
        let entries = [
            entry(
                "a",
                "Apply",
                "status",
                json!({"f:status": {"f:conditions": {
                    r#"k:{"type":"A"}"#: {".": {}, "f:type": {}, "f:status": {}},
                }}}),
            ),
            entry(
                "b",
                "Update",
                "status",
                json!({"f:status": {
                    "f:conditions": {r#"k:{"type":"B"}"#: {"f:reason": {}}},
                    "f:tags": {r#"v:"x""#: {}},
                    "f:ports": {},
                }}),
            ),
        ];
        let shape = Shape::of(&entries);
        let status = shape.field("status").unwrap();
        let conditions = status.field("conditions").unwrap();
        assert_eq!(conditions.list(), Some(&ListKind::Map(vec!["type".into()])));
        let item = conditions.items().unwrap();
        for name in ["type", "status", "reason"] {
            assert!(item.field(name).is_some(), "{name}");
        }
        assert_eq!(status.field("tags").unwrap().list(), Some(&ListKind::Set));
        let ports = status.field("ports").unwrap();
        assert!(
            !ports.is_granular(),
            "a list no set descends into is unknown"
        );
        assert!(status.is_granular() && conditions.is_granular());
    }
}
