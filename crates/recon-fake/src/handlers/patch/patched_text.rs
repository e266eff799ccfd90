//! The JSON text of a patched object as kube-apiserver quotes it in an error (`patch: Invalid
//! value: "<object>"`). Its patch library (`gopkg.in/evanphx/json-patch.v4`) decodes only what
//! a patch reaches, into Go maps that it writes back with their keys sorted; everything else
//! keeps the bytes the object was encoded with, which for a built-in kind are in Go struct
//! field order (`metadata` as `name, namespace, uid, ...`).
//!
//! Values a patch brings are written back as the patch wrote them; a parsed patch keeps no key
//! order, so they are written sorted here. A JSON patch's array indices name the elements as
//! each operation saw them; operations that shift elements before a later one reaches into
//! them mark the shifted index.

use std::collections::BTreeMap;

use recon_apimachinery::json::{Map, Value};

use crate::gotype::{GoType, child_type, write_value};
use recon_apimachinery::go_json::write_go_string;

/// What of a document a patch reached: a tree of nodes, kept in one list (so that building,
/// copying and dropping a deep one takes no stack); the first is the document's root.
#[derive(Debug)]
pub(crate) struct Reached {
    nodes: Vec<Node>,
}

/// One place a patch reached.
#[derive(Debug, Default, Clone)]
struct Node {
    /// Decoded throughout: a value the patch brought, or one it compared.
    whole: bool,
    /// The members decoded below this one (this one is decoded itself), by their index.
    children: BTreeMap<String, usize>,
    /// A value a `copy` or `move` brought from this path (its reference tokens): the library
    /// writes it as it held it there, in that place's Go field order unless it was decoded.
    from: Option<Vec<String>>,
    /// Of a copied or moved value: whether it was decoded where it came from.
    decoded: bool,
}

const ROOT: usize = 0;

impl Reached {
    fn new() -> Reached {
        Reached {
            nodes: vec![Node::default()],
        }
    }

    /// A new node below `parent` at `key`, in place of any there before (left unreachable).
    fn insert(&mut self, parent: usize, key: String, node: Node) -> usize {
        let at = self.nodes.len();
        self.nodes.push(node);
        self.nodes[parent].children.insert(key, at);
        at
    }

    /// What an RFC 7396 merge of `patch` into `current` decodes: each object both have under
    /// a key is merged member by member; any other value the patch gives replaces the current
    /// one (`mergeDocs`).
    pub(crate) fn by_merge_patch(current: &Map, patch: &Value) -> Reached {
        let mut reached = Reached::new();
        let mut pending = vec![(ROOT, current, patch)];
        while let Some((node, current, patch)) = pending.pop() {
            for (key, change) in patch.as_object().into_iter().flatten() {
                if change.is_null() {
                    continue;
                }
                match current.get(key) {
                    Some(Value::Object(now)) if change.is_object() => {
                        let child = reached.insert(node, key.clone(), Node::default());
                        pending.push((child, now, change));
                    }
                    _ => {
                        reached.insert(node, key.clone(), Node::whole());
                    }
                }
            }
        }
        reached
    }

    /// What the RFC 6902 operations `ops` decode: every container on each path (and `from`
    /// path), and the value an `add`, `replace` or `test` gives; a `copy` or `move` puts the
    /// value as it was at `from`.
    pub(crate) fn by_json_patch(ops: &[Value]) -> Reached {
        let mut reached = Reached::new();
        for op in ops {
            let text = |key: &str| op.get(key).and_then(Value::as_str);
            let kind = text("op");
            let mut brought = None;
            if let Some(from) = text("from") {
                reached.parent(from);
                if matches!(kind, Some("copy" | "move")) {
                    brought = tokens(from).map(|from| reached.as_at(from));
                }
            }
            let Some(path) = text("path") else { continue };
            let Some((parent, last)) = reached.parent(path) else {
                continue;
            };
            match (kind, brought) {
                (Some("add" | "replace" | "test"), _) => {
                    reached.insert(parent, last, Node::whole());
                }
                (Some("copy" | "move"), Some(brought)) => {
                    reached.nodes[parent].children.insert(last, brought);
                }
                _ => {}
            }
        }
        reached
    }

    /// The node at `tokens` below the root, if the patch reached it.
    fn at(&self, tokens: &[String]) -> Option<usize> {
        let mut node = ROOT;
        for token in tokens {
            node = *self.nodes[node].children.get(token)?;
        }
        Some(node)
    }

    /// The value at `tokens` as a `copy` takes it (a new node, unattached): decoded as far as
    /// the patch has reached it, and otherwise as the document held it there.
    fn as_at(&mut self, tokens: Vec<String>) -> usize {
        let Some(found) = self.at(&tokens) else {
            let at = self.nodes.len();
            self.nodes.push(Node {
                from: Some(tokens),
                ..Node::default()
            });
            return at;
        };
        let copy = self.copy(found);
        let node = &mut self.nodes[copy];
        node.decoded |= node.from.is_none();
        node.from.get_or_insert(tokens);
        copy
    }

    /// A copy of the subtree at `node`, unattached; returns its root.
    fn copy(&mut self, node: usize) -> usize {
        let top = self.nodes.len();
        self.nodes.push(self.nodes[node].clone());
        // Each copied node still lists its original's children, until replaced by copies.
        let mut pending = vec![top];
        while let Some(copied) = pending.pop() {
            let children = std::mem::take(&mut self.nodes[copied].children);
            let mut copies = BTreeMap::new();
            for (key, child) in children {
                let at = self.nodes.len();
                self.nodes.push(self.nodes[child].clone());
                copies.insert(key, at);
                pending.push(at);
            }
            self.nodes[copied].children = copies;
        }
        top
    }

    /// Marks the containers on JSON pointer `path` as decoded; returns the last one's node and
    /// the member of it the pointer names. As evanphx/json-patch v4 reads a path (`findObject`),
    /// its first segment is dropped whatever it holds, and a path without `/` names nothing.
    fn parent(&mut self, path: &str) -> Option<(usize, String)> {
        let mut tokens = tokens(path)?.into_iter();
        let mut last = tokens.next()?;
        let mut node = ROOT;
        for token in tokens {
            let key = std::mem::replace(&mut last, token);
            node = match self.nodes[node].children.get(&key) {
                Some(&child) => child,
                None => self.insert(node, key, Node::default()),
            };
        }
        Some((node, last))
    }
}

impl Node {
    fn whole() -> Node {
        Node {
            whole: true,
            ..Node::default()
        }
    }
}

/// The reference tokens of a JSON patch path as evanphx/json-patch v4 reads them
/// (`findObject`): split on `/`, the first segment dropped whatever it holds, `~1` and `~0`
/// unescaped; a path without `/` names nothing.
fn tokens(path: &str) -> Option<Vec<String>> {
    let (_, rest) = path.split_once('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// `patched`, of Go type `ty` (`None` for a custom resource, encoded unstructured), as the
/// patch library writes it after reaching `reached`.
pub(crate) fn patched_text(patched: &Value, ty: Option<&GoType>, reached: &Reached) -> String {
    let mut out = String::new();
    Writer {
        root: ty,
        reached,
        out: &mut out,
    }
    .write(patched, ty);
    out
}

/// Writes a patched document of type `root`, one reached container at a time: a patch can
/// reach as deep as Go decodes.
struct Writer<'a, 'o> {
    root: Option<&'a GoType>,
    reached: &'a Reached,
    out: &'o mut String,
}

/// A reached container being written: its members or items left, its type, its node, and
/// whether a member was written.
enum Open<'a> {
    Object(
        recon_apimachinery::json::map::Iter<'a>,
        Option<&'a GoType>,
        usize,
        bool,
    ),
    Array(
        std::iter::Enumerate<std::slice::Iter<'a, Value>>,
        Option<&'a GoType>,
        usize,
        bool,
    ),
}

impl<'a> Writer<'a, '_> {
    fn write(&mut self, value: &'a Value, ty: Option<&'a GoType>) {
        let mut open = Vec::new();
        if let Some(first) = self.reached_value(value, ty, ROOT) {
            open.push(first);
        }
        while let Some(innermost) = open.last_mut() {
            let (key, value, ty, node) = match innermost {
                Open::Object(members, ty, node, any) => match members.next() {
                    Some((key, value)) => {
                        if std::mem::replace(any, true) {
                            self.out.push(',');
                        }
                        write_go_string(self.out, key);
                        self.out.push(':');
                        (key.clone(), value, *ty, *node)
                    }
                    None => {
                        self.out.push('}');
                        open.pop();
                        continue;
                    }
                },
                Open::Array(items, ty, node, any) => match items.next() {
                    Some((i, item)) => {
                        if std::mem::replace(any, true) {
                            self.out.push(',');
                        }
                        (i.to_string(), item, *ty, *node)
                    }
                    None => {
                        self.out.push(']');
                        open.pop();
                        continue;
                    }
                },
            };
            let ty = child_type(ty, &key);
            match self.reached.nodes[node].children.get(&key) {
                Some(&below) => open.extend(self.reached_value(value, ty, below)),
                None => write_value(ty, value, self.out),
            }
        }
    }

    /// Writes `value`, of type `ty`, which the patch reached at `node`: whole, or opened to
    /// write its members.
    fn reached_value(
        &mut self,
        value: &'a Value,
        ty: Option<&'a GoType>,
        node: usize,
    ) -> Option<Open<'a>> {
        let reached = &self.reached.nodes[node];
        if reached.whole {
            write_value(None, value, self.out);
            return None;
        }
        // A copied or moved value has the type of the place it came from.
        let ty = match &reached.from {
            Some(from) => from.iter().fold(self.root, |t, token| child_type(t, token)),
            None => ty,
        };
        if reached.from.is_some() && !reached.decoded && reached.children.is_empty() {
            write_value(ty, value, self.out);
            return None;
        }
        match value {
            Value::Object(map) => {
                self.out.push('{');
                Some(Open::Object(map.iter(), ty, node, false))
            }
            Value::Array(items) => {
                self.out.push('[');
                Some(Open::Array(items.iter().enumerate(), ty, node, false))
            }
            scalar => {
                write_value(None, scalar, self.out);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    impl Reached {
        /// The node at `path`, which the patch must have reached.
        fn get(&self, path: &[&str]) -> &Node {
            let node = path
                .iter()
                .fold(ROOT, |node, key| self.nodes[node].children[*key]);
            &self.nodes[node]
        }
    }

    fn config_map() -> GoType {
        GoType::Struct("io.k8s.api.core.v1.ConfigMap".into())
    }

    #[test]
    fn what_a_merge_patch_reaches_is_sorted_and_the_rest_keeps_go_field_order() {
        let current = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                             "metadata": {"uid": "u", "name": "c", "labels": {"b": "1"}}});
        let patch = json!({"data": {"k": 5, "a": "x"}});
        let mut patched = current.clone();
        recon_apimachinery::json::merge_patch(&mut patched, &patch);
        let reached = Reached::by_merge_patch(current.as_object().unwrap(), &patch);
        assert_eq!(
            patched_text(&patched, Some(&config_map()), &reached),
            r#"{"apiVersion":"v1","data":{"a":"x","k":5},"kind":"ConfigMap","metadata":{"name":"c","uid":"u","labels":{"b":"1"}}}"#
        );
    }

    #[test]
    fn a_merge_patch_replacing_an_object_by_a_scalar_reaches_it_whole() {
        let current = json!({"spec": {"a": {"y": 1, "x": 2}}});
        let reached = Reached::by_merge_patch(
            current.as_object().unwrap(),
            &json!({"spec": {"a": 3, "b": null}}),
        );
        assert!(reached.get(&["spec", "a"]).whole);
        assert!(!reached.get(&["spec"]).children.contains_key("b"));
    }

    #[test]
    fn a_json_patch_reaches_the_containers_on_its_paths_and_the_values_it_gives() {
        let ops = [
            json!({"op": "replace", "path": "/data/k", "value": {"nested": true}}),
            json!({"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"}),
            json!({"op": "remove", "path": "/a~1b/0"}),
        ];
        let reached = Reached::by_json_patch(&ops);
        assert!(reached.get(&["data", "k"]).whole);
        assert!(!reached.get(&["data"]).whole);
        let copied = &reached.get(&["metadata", "annotations"]);
        assert!(
            !copied.decoded && copied.children.is_empty(),
            "a copied value is not decoded"
        );
        assert_eq!(
            copied.from.as_deref(),
            Some(&["metadata".to_owned(), "labels".to_owned()][..])
        );
        assert!(reached.get(&["a/b"]).children.is_empty());
        let patched = json!({"kind": "ConfigMap", "metadata": {"uid": "u", "name": "c"},
                             "data": {"k": {"nested": true}}});
        assert_eq!(
            patched_text(&patched, Some(&config_map()), &reached),
            r#"{"data":{"k":{"nested":true}},"kind":"ConfigMap","metadata":{"name":"c","uid":"u"}}"#
        );
    }

    #[test]
    fn a_copied_struct_keeps_the_field_order_of_the_place_it_came_from() {
        // Recorded from kube-apiserver (patch/json-patch-v4-generated-service): a Service port
        // copied into a label is written in ServicePort's field order, not sorted.
        let ops = [json!({"op": "copy", "from": "/spec/ports/0", "path": "/metadata/labels/l"})];
        let reached = Reached::by_json_patch(&ops);
        let patched = json!({"metadata": {"labels": {"l": {"targetPort": "http", "protocol": "TCP", "port": 80, "name": "h"}}},
                             "spec": {"ports": [{"targetPort": "http", "protocol": "TCP", "port": 80, "name": "h"}]}});
        let service = GoType::Struct("io.k8s.api.core.v1.Service".into());
        let text = patched_text(&patched, Some(&service), &reached);
        assert!(
            text.starts_with(r#"{"metadata":{"labels":{"l":{"name":"h","protocol":"TCP","port":80,"targetPort":"http"}}}"#),
            "{text}"
        );
    }

    #[test]
    fn a_path_s_first_segment_is_dropped_as_json_patch_v4_drops_it() {
        let reached = Reached::by_json_patch(&[
            json!({"op": "add", "path": "data/k", "value": "v"}),
            json!({"op": "add", "path": "nothing", "value": "v"}),
        ]);
        assert!(reached.get(&["k"]).whole);
        assert_eq!(reached.get(&[]).children.len(), 1);
    }

    #[test]
    fn an_unstructured_object_is_sorted_throughout() {
        let patched = json!({"spec": {"b": 1, "a": {"d": 1, "c": 2}}});
        let reached =
            Reached::by_merge_patch(patched.as_object().unwrap(), &json!({"spec": {"b": 1}}));
        assert_eq!(
            patched_text(&patched, None, &reached),
            r#"{"spec":{"a":{"c":2,"d":1},"b":1}}"#
        );
    }

    /// `{"a": {"a": ... leaf}}`, `levels` objects deep.
    fn nested(levels: usize, leaf: Value) -> Value {
        (0..levels).fold(leaf, |inner, _| {
            Value::Object(json::Map::from_iter([("a", inner)]))
        })
    }

    // A patch reaches as deep as Go decodes: what it reached is built, copied, written and
    // dropped on a test thread's stack.
    #[test]
    fn a_patch_reaching_ten_thousand_levels_takes_no_stack() {
        let current = nested(10_000, json!({"y": 1, "x": 2}));
        let patch = nested(10_000, json!({"z": 3}));
        let mut patched = current.clone();
        json::merge_patch(&mut patched, &patch);
        let reached = Reached::by_merge_patch(current.as_object().unwrap(), &patch);
        let expected = format!(
            r#"{}{{"x":2,"y":1,"z":3}}{}"#,
            r#"{"a":"#.repeat(10_000),
            "}".repeat(10_000)
        );
        assert_eq!(patched_text(&patched, None, &reached), expected);

        // Copies of a 10,000-level path: the second copies what the first brought.
        let deep_path = format!("/spec{}", "/a".repeat(10_000));
        let ops = [
            json!({"op": "test", "path": format!("{deep_path}/x"), "value": 2}),
            json!({"op": "copy", "from": "/spec", "path": "/status"}),
            json!({"op": "copy", "from": "/status", "path": "/copy"}),
        ];
        let reached = Reached::by_json_patch(&ops);
        let copied = reached.get(&["copy"]);
        // The value is the one the first copy took from the spec, which the test decoded.
        assert_eq!(copied.from.as_deref(), Some(&["spec".to_owned()][..]));
        assert!(copied.decoded);
        let mut below = reached.get(&["copy"]);
        for _ in 0..10_000 {
            below = &reached.nodes[below.children["a"]];
        }
        assert!(below.children["x"] > 0 && reached.nodes[below.children["x"]].whole);
        let doc = json!({"spec": nested(2, json!(1)), "status": nested(2, json!(1)), "copy": nested(2, json!(1))});
        assert_eq!(
            patched_text(&doc, None, &reached),
            r#"{"copy":{"a":{"a":1}},"spec":{"a":{"a":1}},"status":{"a":{"a":1}}}"#
        );
    }
}
