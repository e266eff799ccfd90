//! `x-kubernetes-list-type` invariants (apiextensions `structurallisttype.ValidateListSetsAndMaps`):
//! a `set` holds no value twice, a `map` no two items with the same key fields. Checked after the
//! value validator, on every list the schema reaches through properties, additional properties
//! and items.

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

use super::model::{Additional, ListType, Node};
use super::steps::Step;
use super::validate::bad_value;
use crate::field::{ErrorType, FieldError};

/// The errors of `obj` (an object) against `node`, in the order a recursion would find them,
/// one value at a time (a value may nest as deep as Go reads).
pub(crate) fn validate(node: &Node, obj: &Map) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut path = String::new();
    let mut pending = Vec::new();
    members(node, obj, 0, &mut pending);
    while let Some((node, v, parent, step)) = pending.pop() {
        step.below(&mut path, parent);
        match v {
            Value::Array(items) => {
                array(node, &path, items, &mut out);
                if let Some(schema) = &node.items {
                    let items = items.iter().enumerate().rev();
                    pending.extend(
                        items.map(|(i, item)| (&**schema, item, path.len(), Step::Index(i))),
                    );
                }
            }
            Value::Object(map) => members(node, map, path.len(), &mut pending),
            _ => {}
        }
    }
    out
}

/// The members of `obj` to be checked next, in their order: every member against
/// `additionalProperties` when it is a schema, then the properties.
fn members<'a>(
    node: &'a Node,
    obj: &'a Map,
    at: usize,
    pending: &mut Vec<(&'a Node, &'a Value, usize, Step<'a>)>,
) {
    for (k, v) in obj.iter().rev() {
        if let Some(schema) = node.properties.get(k) {
            pending.push((schema, v, at, Step::Field(k)));
        }
    }
    if let Some(Additional::Schema(schema)) = &node.additional_properties {
        pending.extend(
            obj.iter()
                .rev()
                .map(|(k, v)| (&**schema, v, at, Step::Key(k))),
        );
    }
}

/// The set or map invariants of one list.
fn array(node: &Node, path: &str, items: &[Value], out: &mut Vec<FieldError>) {
    match &node.list_type {
        Some(ListType::Set) => {
            for i in repeated(items) {
                out.push(duplicate(path, i, &items[i]));
            }
        }
        Some(ListType::Map(keys)) => map_list(path, keys, items, out),
        _ => {}
    }
}

fn duplicate(path: &str, index: usize, v: &Value) -> FieldError {
    FieldError::new(
        ErrorType::Duplicate,
        format!("{path}[{index}]"),
        bad_value(v),
        "",
    )
}

/// `validateListSet`: the index of each value's second occurrence.
fn repeated<T: PartialEq>(items: &[T]) -> Vec<usize> {
    let mut seen: Vec<(&T, usize)> = Vec::new();
    let mut indices = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match seen.iter_mut().find(|(v, _)| *v == item) {
            Some((_, times)) => {
                if *times == 1 {
                    indices.push(i);
                }
                *times += 1;
            }
            None => seen.push((item, 1)),
        }
    }
    indices
}

/// `validateListMap`.
fn map_list(path: &str, keys: &[String], items: &[Value], out: &mut Vec<FieldError>) {
    if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        out.push(FieldError::new(
            ErrorType::Invalid,
            format!("{path}[{i}]"),
            bad_value(&items[i]),
            "must be an object for an array of list-type map",
        ));
        return;
    }
    if items.len() <= 1 {
        return;
    }
    if let [key] = keys {
        // A missing key is "unspecified": all of those are one value.
        let values: Vec<Option<&Value>> = items.iter().map(|x| x.get(key)).collect();
        for i in repeated(&values) {
            let shown = match values[i] {
                Some(v) => json!({ key: v }),
                None => json!({}),
            };
            out.push(duplicate(path, i, &shown));
        }
        return;
    }
    let values: Vec<Value> = items
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for k in keys {
                if let Some(v) = x.get(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in repeated(&values) {
        out.push(duplicate(path, i, &values[i]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(v: Value) -> Node {
        Node::parse(&v)
    }

    #[test]
    fn a_set_reports_each_value_once_at_its_second_occurrence() {
        let n = node(
            json!({"type": "object", "properties": {"s": {"type": "array",
            "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}),
        );
        let obj = json!({"s": ["a", "b", "a", "a", "b"]});
        let errors = validate(&n, obj.as_object().unwrap());
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                r#"s[2]: Duplicate value: "a""#,
                r#"s[4]: Duplicate value: "b""#
            ]
        );
    }

    #[test]
    fn a_map_list_compares_key_fields_only() {
        let n = node(
            json!({"type": "object", "properties": {"m": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object"}}}}),
        );
        let obj = json!({"m": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]});
        let errors = validate(&n, obj.as_object().unwrap());
        assert_eq!(
            errors[0].to_string(),
            r#"m[1]: Duplicate value: {"name":"a"}"#
        );
    }
}
