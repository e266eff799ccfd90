//! Structural pruning (apiextensions `structuralpruning.PruneWithOptions`): fields the schema
//! does not declare are dropped from a custom resource, silently unless the request asked for
//! `fieldValidation=Strict` or `Warn`, which is why the paths of what was dropped are returned.
//!
//! - A node with `x-kubernetes-preserve-unknown-fields` keeps its unknown fields, but fields it
//!   declares are still pruned inside.
//! - `additionalProperties` declares every key.
//! - The resource root and every `x-kubernetes-embedded-resource` keep `apiVersion`, `kind` and
//!   `metadata` (ObjectMeta has rules of its own, see [`super::embedded::coerce`]).

use std::fmt::Write as _;

use recon_apimachinery::json::{Map, Value};

use super::model::{Additional, Node};

const TYPE_AND_OBJECT_META: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prunes a whole resource; returns the paths of the dropped fields, sorted (the real server
/// sorts them too), as `spec.ports[0].bogus`.
pub(crate) fn prune_resource(root: &Node, obj: &mut Map) -> Vec<String> {
    let mut pruner = Pruner::default();
    if root.preserve_unknown_fields {
        pruner.keep_unknown_in_object(root, obj, true);
    } else {
        pruner.object(root, obj, true);
    }
    pruner.run();
    pruner.dropped.sort();
    pruner.dropped
}

/// A walk over a resource, one container at a time (its own list of what is left to do, not
/// the call stack: a preserved field may nest as deep as Go reads).
#[derive(Default)]
struct Pruner<'a> {
    /// The path of the value being visited, as the unknown-field paths print it.
    path: String,
    dropped: Vec<String>,
    todo: Vec<Task<'a>>,
}

/// What is left to do, the last first.
enum Task<'a> {
    /// `prune` of a value with its schema (none: everything inside it goes).
    Prune(Option<&'a Node>, &'a mut Value),
    /// `skipPrune` of a value.
    KeepUnknown(&'a Node, &'a mut Value),
    /// The path goes down to a member.
    Key(&'a str),
    /// The path goes down to a list item.
    Index(usize),
    /// The path goes back up to its first bytes.
    Leave(usize),
}

impl<'a> Pruner<'a> {
    fn run(&mut self) {
        while let Some(task) = self.todo.pop() {
            match task {
                Task::Prune(node, v) => self.value(node, v),
                Task::KeepUnknown(node, v) => self.keep_unknown(node, v),
                Task::Key(key) => {
                    if !self.path.is_empty() {
                        self.path.push('.');
                    }
                    self.path.push_str(key);
                }
                Task::Index(i) => {
                    let _ = write!(self.path, "[{i}]");
                }
                Task::Leave(len) => self.path.truncate(len),
            }
        }
    }

    fn value(&mut self, node: Option<&'a Node>, v: &'a mut Value) {
        match node {
            Some(n) if n.preserve_unknown_fields => self.keep_unknown(n, v),
            _ => match v {
                Value::Object(map) => match node {
                    Some(n) => self.object(n, map, n.embedded_resource),
                    None => {
                        for (k, _) in std::mem::take(map) {
                            self.record(&k);
                        }
                    }
                },
                Value::Array(items) => {
                    let items_node = node.and_then(|n| n.items.as_deref());
                    for (i, item) in items.iter_mut().enumerate() {
                        self.below(Task::Index(i), Task::Prune(items_node, item));
                    }
                }
                _ => {}
            },
        }
    }

    /// `prune` of an object with a schema: declared keys are pruned in turn, others go.
    fn object(&mut self, node: &'a Node, map: &'a mut Map, embedded: bool) {
        let kept = |k: &str| embedded && TYPE_AND_OBJECT_META.contains(&k);
        let unknown: Vec<String> = map
            .keys()
            .filter(|k| !kept(k) && child_schema(node, k).is_none())
            .cloned()
            .collect();
        for k in unknown {
            map.remove(&k);
            self.record(&k);
        }
        for (k, v) in map.iter_mut() {
            if let Some(child) = child_schema(node, k).filter(|_| !kept(k)) {
                self.below(Task::Key(k), Task::Prune(child, v));
            }
        }
    }

    /// `skipPrune`: nothing is dropped here, declared children are pruned as usual.
    fn keep_unknown(&mut self, node: &'a Node, v: &'a mut Value) {
        match v {
            Value::Object(map) => self.keep_unknown_in_object(node, map, node.embedded_resource),
            Value::Array(items) => {
                if let Some(items_node) = node.items.as_deref() {
                    for (i, item) in items.iter_mut().enumerate() {
                        self.below(Task::Index(i), Task::KeepUnknown(items_node, item));
                    }
                }
            }
            _ => {}
        }
    }

    fn keep_unknown_in_object(&mut self, node: &'a Node, map: &'a mut Map, embedded: bool) {
        for (k, v) in map.iter_mut() {
            if embedded && TYPE_AND_OBJECT_META.contains(&k.as_str()) {
                continue;
            }
            if let Some(child) = child_schema(node, k) {
                self.below(Task::Key(k), Task::Prune(child, v));
            }
        }
    }

    fn record(&mut self, key: &str) {
        self.dropped.push(if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        });
    }

    /// Does `task` with the path extended by `step`, then goes back up.
    fn below(&mut self, step: Task<'a>, task: Task<'a>) {
        self.todo.push(Task::Leave(self.path.len()));
        self.todo.push(task);
        self.todo.push(step);
    }
}

/// What a key's value is pruned with: `Some(schema)` for a declared key, `None` when it is
/// unknown. A boolean `additionalProperties` declares every key without a schema
/// (`Some(None)`), so the key stays and everything inside it goes; with `false` the validator
/// then reports the key as forbidden.
fn child_schema<'n>(node: &'n Node, key: &str) -> Option<Option<&'n Node>> {
    if let Some(child) = node.properties.get(key) {
        return Some(Some(child));
    }
    match &node.additional_properties {
        Some(Additional::Schema(s)) => Some(Some(s)),
        Some(Additional::Allows(_)) => Some(None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn prune(schema: Value, obj: Value) -> (Value, Vec<String>) {
        let node = Node::parse(&schema);
        let mut map = obj.as_object().cloned().unwrap_or_default();
        let dropped = prune_resource(&node, &mut map);
        (Value::Object(map), dropped)
    }

    #[test]
    fn unknown_fields_go_at_every_depth_and_their_paths_are_sorted() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"ports": {"type": "array", "items": {"type": "object",
                "properties": {"name": {"type": "string"}}}}}}}});
        let (obj, dropped) = prune(
            schema,
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "zed": 1,
                "spec": {"ports": [{"name": "a", "bogus": 1}], "extra": {"deep": 1}}}),
        );
        assert_eq!(
            obj,
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"},
                "spec": {"ports": [{"name": "a"}]}})
        );
        assert_eq!(dropped, ["spec.extra", "spec.ports[0].bogus", "zed"]);
    }

    #[test]
    fn preserved_subtrees_keep_unknown_fields_but_prune_declared_ones() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}}});
        let (obj, dropped) = prune(
            schema,
            json!({"spec": {"anything": {"x": 1}, "known": {"a": "y", "b": 2}}}),
        );
        assert_eq!(
            obj,
            json!({"spec": {"anything": {"x": 1}, "known": {"a": "y"}}})
        );
        assert_eq!(dropped, ["spec.known.b"]);
    }

    #[test]
    fn an_embedded_resource_keeps_its_type_and_object_meta() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object"}}}}}}});
        let (obj, dropped) = prune(
            schema,
            json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p"}, "spec": {"x": 1}, "status": {}}}}),
        );
        assert_eq!(
            obj,
            json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p"}, "spec": {}}}})
        );
        assert_eq!(dropped, ["spec.template.spec.x", "spec.template.status"]);
    }

    #[test]
    fn a_root_that_preserves_unknown_fields_keeps_them() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}});
        let (obj, dropped) = prune(
            schema,
            json!({"metadata": {"name": "x"}, "status": {"phase": "new"}, "spec": {"a": "1", "b": 2}}),
        );
        assert_eq!(
            obj,
            json!({"metadata": {"name": "x"}, "status": {"phase": "new"}, "spec": {"a": "1"}})
        );
        assert_eq!(dropped, ["spec.b"]);
    }

    #[test]
    fn additional_properties_declare_every_key() {
        let schema = json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"v": {"type": "string"}}}},
            "any": {"type": "object", "additionalProperties": true}}});
        let (obj, dropped) = prune(
            schema,
            json!({"labels": {"a": {"v": "1", "w": 2}}, "any": {"b": {"c": 3}}}),
        );
        assert_eq!(obj, json!({"labels": {"a": {"v": "1"}}, "any": {"b": {}}}));
        assert_eq!(dropped, ["any.b.c", "labels.a.w"]);
    }

    // A field without a schema below it keeps its lists and loses every member inside them,
    // at any depth: a value as deep as Go reads is pruned on a test thread's stack.
    #[test]
    fn a_value_as_deep_as_go_reads_is_pruned_one_container_at_a_time() {
        let schema = json!({"type": "object", "properties": {
            "any": {"type": "object", "additionalProperties": true}}});
        let lists =
            |leaf: Value| (0..10_000).fold(leaf, |inner, _| Value::Array(vec![inner].into()));
        let mut any = Map::new();
        any.insert("b".to_owned(), lists(json!({"c": 1})));
        let mut obj = Map::new();
        obj.insert("any".to_owned(), Value::Object(any));
        let (pruned, dropped) = prune(schema, Value::Object(obj));
        assert!(pruned["any"]["b"] == lists(json!({})));
        assert_eq!(dropped, [format!("any.b{}.c", "[0]".repeat(10_000))]);
    }
}
