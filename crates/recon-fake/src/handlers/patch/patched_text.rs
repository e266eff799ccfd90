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

use crate::gotype::{GoType, child_type, write_array, write_object, write_value};

/// What of a document a patch reached.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reached {
    /// Decoded throughout: a value the patch brought, or one it compared.
    whole: bool,
    /// The members decoded below this one (this one is decoded itself).
    children: BTreeMap<String, Reached>,
    /// A value a `copy` or `move` brought from this path (its reference tokens): the library
    /// writes it as it held it there, in that place's Go field order unless it was decoded.
    from: Option<Vec<String>>,
    /// Of a copied or moved value: whether it was decoded where it came from.
    decoded: bool,
}

impl Reached {
    fn whole() -> Reached {
        Reached {
            whole: true,
            ..Reached::default()
        }
    }

    /// What an RFC 7396 merge of `patch` into `current` decodes: each object both have under
    /// a key is merged member by member; any other value the patch gives replaces the current
    /// one (`mergeDocs`).
    pub(crate) fn by_merge_patch(current: &Map, patch: &Value) -> Reached {
        let mut reached = Reached::default();
        for (key, change) in patch.as_object().into_iter().flatten() {
            if change.is_null() {
                continue;
            }
            let child = match current.get(key) {
                Some(Value::Object(now)) if change.is_object() => {
                    Reached::by_merge_patch(now, change)
                }
                _ => Reached::whole(),
            };
            reached.children.insert(key.clone(), child);
        }
        reached
    }

    /// What the RFC 6902 operations `ops` decode: every container on each path (and `from`
    /// path), and the value an `add`, `replace` or `test` gives; a `copy` or `move` puts the
    /// value as it was at `from`.
    pub(crate) fn by_json_patch(ops: &[Value]) -> Reached {
        let mut reached = Reached::default();
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
                    parent.children.insert(last, Reached::whole());
                }
                (Some("copy" | "move"), Some(brought)) => {
                    parent.children.insert(last, brought);
                }
                _ => {}
            }
        }
        reached
    }

    /// The value at `tokens` as a `copy` takes it: decoded as far as the patch has reached
    /// it, and otherwise as the document held it there.
    fn as_at(&self, tokens: Vec<String>) -> Reached {
        let mut node = Some(self);
        for token in &tokens {
            node = node.and_then(|n| n.children.get(token));
        }
        match node {
            Some(found) => Reached {
                from: found.from.clone().or(Some(tokens)),
                decoded: found.decoded || found.from.is_none(),
                ..found.clone()
            },
            None => Reached {
                from: Some(tokens),
                ..Reached::default()
            },
        }
    }

    /// Marks the containers on JSON pointer `path` as decoded; returns the last one's node and
    /// the member of it the pointer names. As evanphx/json-patch v4 reads a path (`findObject`),
    /// its first segment is dropped whatever it holds, and a path without `/` names nothing.
    fn parent(&mut self, path: &str) -> Option<(&mut Reached, String)> {
        let mut tokens = tokens(path)?.into_iter();
        let mut last = tokens.next()?;
        let mut node = self;
        for token in tokens {
            node = node
                .children
                .entry(std::mem::replace(&mut last, token))
                .or_default();
        }
        Some((node, last))
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
    write(patched, ty, ty, reached, &mut out);
    out
}

/// Writes `value`, of type `ty` in a document of type `root`.
fn write(
    value: &Value,
    ty: Option<&GoType>,
    root: Option<&GoType>,
    reached: &Reached,
    out: &mut String,
) {
    if reached.whole {
        return write_value(None, value, out);
    }
    // A copied or moved value has the type of the place it came from.
    let ty = match &reached.from {
        Some(from) => from.iter().fold(root, |t, token| child_type(t, token)),
        None => ty,
    };
    if reached.from.is_some() && !reached.decoded && reached.children.is_empty() {
        return write_value(ty, value, out);
    }
    let member = |key: &str, value: &Value, out: &mut String| {
        let ty = child_type(ty, key);
        match reached.children.get(key) {
            Some(below) => write(value, ty, root, below, out),
            None => write_value(ty, value, out),
        }
    };
    match value {
        Value::Object(map) => write_object(map, out, member),
        Value::Array(items) => write_array(items, out, |i, item, out| {
            member(&i.to_string(), item, out);
        }),
        scalar => write_value(None, scalar, out),
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

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
        assert!(reached.children["spec"].children["a"].whole);
        assert!(!reached.children["spec"].children.contains_key("b"));
    }

    #[test]
    fn a_json_patch_reaches_the_containers_on_its_paths_and_the_values_it_gives() {
        let ops = [
            json!({"op": "replace", "path": "/data/k", "value": {"nested": true}}),
            json!({"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"}),
            json!({"op": "remove", "path": "/a~1b/0"}),
        ];
        let reached = Reached::by_json_patch(&ops);
        assert!(reached.children["data"].children["k"].whole);
        assert!(!reached.children["data"].whole);
        let copied = &reached.children["metadata"].children["annotations"];
        assert!(
            !copied.decoded && copied.children.is_empty(),
            "a copied value is not decoded"
        );
        assert_eq!(
            copied.from.as_deref(),
            Some(&["metadata".to_owned(), "labels".to_owned()][..])
        );
        assert!(reached.children["a/b"].children.is_empty());
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
        assert!(reached.children["k"].whole);
        assert_eq!(reached.children.len(), 1);
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
}
