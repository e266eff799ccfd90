//! A field set kept in its `fieldsV1` encoding and changed in place, so that a write which
//! leaves an owner's fields alone neither decodes nor re-encodes them.

use std::collections::{BTreeSet, btree_map};

use crate::json::{Map, Value};

use super::{FieldSet, PathElement};

/// A [`FieldSet`] held as its canonical `fieldsV1` object: exactly what
/// [`FieldSet::to_fields_v1`] writes for it.
///
/// The set operations a write makes on the sets of `metadata.managedFields` (taking away what
/// changed, adding what the writer set, finding what is contested) walk only the paths of the
/// other, usually small, [`FieldSet`] through this object. Reading an entry already in
/// canonical form ([`FieldsV1::from_value`]) is a copy; writing it back is none.
///
/// Canonical means: every key is what [`PathElement::serialize`] writes for the element it
/// parses to; every node is an object; `"."` appears only beside other keys, below the root,
/// as `{}`. Two distinct canonical keys never stand for the same element, so lookups by key
/// find what a decoding would.
///
/// ```
/// use recon_apimachinery::fieldpath::{FieldSet, FieldsV1, Path};
/// use recon_apimachinery::json;
///
/// let mut owned = FieldsV1::from_value(&json!({"f:data": {"f:a": {}, "f:b": {}}})).unwrap();
/// owned.remove(&FieldSet::from_paths([Path::fields(&["data", "a"])]));
/// owned.union_with(&FieldSet::from_paths([Path::fields(&["data"])]));
/// assert_eq!(owned.to_value(), json!({"f:data": {".": {}, "f:b": {}}}));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldsV1(Map);

impl FieldsV1 {
    /// The empty set, `{}`.
    pub fn new() -> Self {
        FieldsV1(Map::new())
    }

    /// The encoding of `set`.
    pub fn from_set(set: &FieldSet) -> Self {
        FieldsV1(set.fields_v1_map())
    }

    /// Reads a `fieldsV1` value as [`FieldSet::from_fields_v1`] does, with its errors: copied
    /// when canonical, else decoded and encoded again.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Object(map) if is_canonical(map) => Ok(FieldsV1(map.clone())),
            _ => FieldSet::from_fields_v1(value).map(|set| Self::from_set(&set)),
        }
    }

    /// [`from_value`](Self::from_value), moving the value in when canonical.
    pub fn from_owned(value: Value) -> Result<Self, String> {
        match value {
            Value::Object(map) if is_canonical(&map) => Ok(FieldsV1(map)),
            other => Self::from_value(&other),
        }
    }

    /// The set, decoded.
    pub fn to_set(&self) -> FieldSet {
        // Canonical keys always parse: the error cannot happen.
        FieldSet::decode(&self.0).unwrap_or_default()
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `fieldsV1` value, copied.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// The `fieldsV1` value.
    pub fn into_value(self) -> Value {
        Value::Object(self.0)
    }

    /// The paths of `other` that are in this set ([`FieldSet::intersection`]).
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        /// A node being intersected: this side's node, the other's children left to visit,
        /// the result so far and the element it goes under.
        struct Open<'a> {
            mine: &'a Map,
            rest: btree_map::Iter<'a, PathElement, FieldSet>,
            out: FieldSet,
            pe: Option<&'a PathElement>,
        }
        fn start<'a>(
            mine: &'a Map,
            theirs: &'a FieldSet,
            pe: Option<&'a PathElement>,
            key: &mut String,
        ) -> Open<'a> {
            let mut out = FieldSet::new();
            for m in theirs.members() {
                if let Some(Value::Object(child)) = mine.get(key_of(m, key))
                    && is_member(child)
                {
                    out.add_member(m.clone());
                }
            }
            Open {
                mine,
                rest: theirs.children().iter(),
                out,
                pe,
            }
        }
        let mut key = String::new();
        let mut open = vec![start(&self.0, other, None, &mut key)];
        loop {
            let Some(top) = open.last_mut() else {
                return FieldSet::new();
            };
            if let Some((pe, theirs)) = top.rest.next() {
                if let Some(Value::Object(child)) = top.mine.get(key_of(pe, &mut key)) {
                    let child = start(child, theirs, Some(pe), &mut key);
                    open.push(child);
                }
                continue;
            }
            let Some(done) = open.pop() else {
                return FieldSet::new();
            };
            match (done.pe, open.last_mut()) {
                (Some(pe), Some(parent)) => parent.out.adopt(pe.clone(), done.out),
                // Only the root has no element to go under.
                _ => return done.out,
            }
        }
    }

    /// Removes the paths of `other`, exactly: removing `a` keeps `a.b`
    /// ([`FieldSet::remove`]).
    pub fn remove(&mut self, other: &FieldSet) {
        if self.is_empty() {
            return;
        }
        self.edit(other, false, |node, members, key| {
            for m in members {
                let k = key_of(m, key);
                let Some(Value::Object(child)) = node.get_mut(k) else {
                    continue;
                };
                if child.is_empty() {
                    node.remove(k);
                } else {
                    child.remove(".");
                }
            }
        });
    }

    /// Adds the paths of `other` ([`FieldSet::union_with`]).
    pub fn union_with(&mut self, other: &FieldSet) {
        self.edit(other, true, |node, members, key| {
            for m in members {
                match node.get_mut(key_of(m, key)) {
                    Some(Value::Object(child)) => {
                        if !is_member(child) {
                            child.insert(".".to_owned(), empty());
                        }
                    }
                    _ => {
                        node.insert(key.clone(), empty());
                    }
                }
            }
        });
    }

    /// Walks `other`'s trie through this object, calling `at_node` on each node with the
    /// members `other` has there, each node's entries in canonical form.
    ///
    /// A node `other` leads into is taken out of its parent while visited (so the walk keeps
    /// its own stack, not the thread's), with its membership spelt out: `"."` when it is a
    /// member, created empty when missing if `create` (else not visited). It goes back in canonical form: dropped when it
    /// neither is a member nor has children (a removal emptied it, or a union added nothing
    /// under a node it created), `{}` when it is a member with no children.
    fn edit(
        &mut self,
        other: &FieldSet,
        create: bool,
        mut at_node: impl FnMut(&mut Map, &BTreeSet<PathElement>, &mut String),
    ) {
        /// A node being edited: the node, the other's children left to visit and the key it
        /// goes back under.
        struct Open<'o> {
            node: Map,
            rest: btree_map::Iter<'o, PathElement, FieldSet>,
            key: Option<String>,
        }
        let mut key = String::new();
        let mut root = std::mem::take(&mut self.0);
        at_node(&mut root, other.members(), &mut key);
        let mut open = vec![Open {
            node: root,
            rest: other.children().iter(),
            key: None,
        }];
        while let Some(top) = open.last_mut() {
            if let Some((pe, theirs)) = top.rest.next() {
                let (k, mut child) = match top.node.remove_entry(key_of(pe, &mut key)) {
                    Some((k, Value::Object(mut child))) => {
                        // A member without children: `{}` becomes `{".":{}}`.
                        if child.is_empty() {
                            child.insert(".".to_owned(), empty());
                        }
                        (k, child)
                    }
                    _ if create => (key.clone(), Map::new()),
                    _ => continue,
                };
                at_node(&mut child, theirs.members(), &mut key);
                open.push(Open {
                    node: child,
                    rest: theirs.children().iter(),
                    key: Some(k),
                });
                continue;
            }
            let Some(done) = open.pop() else { break };
            match (done.key, open.last_mut()) {
                (Some(k), Some(parent)) => {
                    let member = done.node.contains_key(".");
                    if done.node.len() > usize::from(member) {
                        parent.node.insert(k, Value::Object(done.node));
                    } else if member {
                        parent.node.insert(k, empty());
                    }
                }
                // Only the root has no key to go back under.
                _ => self.0 = done.node,
            }
        }
    }
}

/// `{}`.
fn empty() -> Value {
    Value::Object(Map::new())
}

/// Whether a canonical node is itself in the set: `{}`, or marked `"."` beside children.
fn is_member(node: &Map) -> bool {
    node.is_empty() || node.contains_key(".")
}

/// `pe`'s key, written into a buffer the walk reuses.
fn key_of<'k>(pe: &PathElement, key: &'k mut String) -> &'k str {
    key.clear();
    pe.write_key(key);
    key
}

/// Whether `root` is the canonical encoding of the set it decodes to (see [`FieldsV1`]).
fn is_canonical(root: &Map) -> bool {
    if root.contains_key(".") {
        return false;
    }
    let mut pending = vec![root];
    while let Some(node) = pending.pop() {
        for (key, child) in node.iter() {
            let Value::Object(child) = child else {
                return false;
            };
            if key == "." {
                if node.len() == 1 || !child.is_empty() {
                    return false;
                }
                continue;
            }
            if !canonical_key(key) {
                return false;
            }
            if !child.is_empty() {
                pending.push(child);
            }
        }
    }
    true
}

/// Whether `key` is what [`PathElement::serialize`] writes for the element it parses to.
fn canonical_key(key: &str) -> bool {
    match key.as_bytes() {
        [b'f', b':', ..] => true,
        [b'k' | b'v' | b'i', b':', ..] => {
            matches!(PathElement::deserialize(key), Ok(Some(pe)) if pe.serialize() == key)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fieldpath::Path;
    use crate::json;

    /// Paths of one to four elements of every kind, few enough that two sets share some.
    fn any_set() -> impl Strategy<Value = FieldSet> {
        let element = prop_oneof![
            prop::sample::select(vec!["a", "b", "c"]).prop_map(PathElement::field),
            prop::sample::select(vec!["x", "y"])
                .prop_map(|n| PathElement::key([("name", json!(n))])),
            prop::sample::select(vec!["1", "2"]).prop_map(|v| PathElement::Value(json!(v))),
            (0i64..2).prop_map(PathElement::Index),
        ];
        let path = prop::collection::vec(element, 1..5).prop_map(Path);
        prop::collection::vec(path, 0..8).prop_map(FieldSet::from_paths)
    }

    proptest! {
        // Every operation edits the encoding into the encoding of the operation's result, and
        // reading an encoding back copies it unchanged.
        #[test]
        fn operations_on_the_encoding_are_those_of_the_set(a in any_set(), b in any_set()) {
            let encoded = FieldsV1::from_set(&a);
            prop_assert!(is_canonical(&encoded.0));
            prop_assert_eq!(FieldsV1::from_value(&a.to_fields_v1()).unwrap(), encoded.clone());
            prop_assert_eq!(encoded.to_set(), a.clone());
            prop_assert_eq!(encoded.is_empty(), a.is_empty());
            prop_assert_eq!(encoded.intersection(&b), a.intersection(&b));
            let mut union = encoded.clone();
            union.union_with(&b);
            prop_assert_eq!(union, FieldsV1::from_set(&a.union(&b)));
            let mut difference = encoded.clone();
            difference.remove(&b);
            prop_assert_eq!(difference, FieldsV1::from_set(&a.difference(&b)));
        }
    }

    // What the encoder would not write is decoded and written again, with the decoder's errors.
    #[test]
    fn a_value_not_in_canonical_form_is_encoded_again() {
        for value in [
            json!({".": {}, "f:a": {}}),
            json!({"f:a": null}),
            json!({"f:a": {".": {}}}),
            json!({"f:a": {".": {"f:b": {}}, "f:c": {}}}),
            json!({"k:{\"name\":\"x\",\"id\":1}": {}}),
            json!({"k:{\"name\": \"x\"}": {}}),
            json!({"i:+1": {}}),
            json!({"v:\"\\u0061\"": {}}),
            json!({"x:unknown": {}, "f:a": {}}),
            Value::Null,
        ] {
            let set = FieldSet::from_fields_v1(&value).unwrap();
            let read = FieldsV1::from_value(&value).unwrap();
            assert_eq!(read, FieldsV1::from_set(&set), "{value}");
            assert!(is_canonical(&read.0), "{value}");
        }
        for value in [
            json!({"f:a": 1}),
            json!({"zz": {}}),
            json!({"k:nope": {}}),
            json!("x"),
        ] {
            assert_eq!(
                FieldsV1::from_value(&value),
                FieldSet::from_fields_v1(&value).map(|s| FieldsV1::from_set(&s)),
                "{value}"
            );
            assert!(FieldsV1::from_value(&value).is_err(), "{value}");
        }
    }

    // A member's marks: `{}` alone, `"."` beside children, gone with its last path.
    #[test]
    fn a_node_keeps_the_form_the_encoder_gives_it() {
        let paths = |ps: &[&str]| {
            FieldSet::from_paths(
                ps.iter()
                    .map(|p| Path::fields(&p.split('.').collect::<Vec<_>>())),
            )
        };
        let mut owned = FieldsV1::from_set(&paths(&["spec"]));
        owned.union_with(&paths(&["spec.a"]));
        assert_eq!(owned.to_value(), json!({"f:spec": {".": {}, "f:a": {}}}));
        owned.remove(&paths(&["spec.a"]));
        assert_eq!(owned.to_value(), json!({"f:spec": {}}));
        owned.union_with(&paths(&["spec.a.b"]));
        owned.remove(&paths(&["spec", "nothing.here"]));
        assert_eq!(owned.to_value(), json!({"f:spec": {"f:a": {"f:b": {}}}}));
        owned.remove(&paths(&["spec.a.b"]));
        assert!(owned.is_empty());
        assert_eq!(owned.into_value(), json!({}));
    }

    // As deep as an object Go reads, on a test thread's stack.
    #[test]
    fn a_set_ten_thousand_levels_deep_takes_no_stack() {
        let deep = |depth: usize, last: &str| {
            let mut names = vec!["a"; depth];
            names.push(last);
            Path::fields(&names)
        };
        let a = FieldSet::from_paths([deep(10_000, "x"), deep(3, "z")]);
        let b = FieldSet::from_paths([deep(10_000, "y"), deep(10_000, "x")]);
        let mut owned = FieldsV1::from_value(&a.to_fields_v1()).unwrap();
        assert!(owned.intersection(&b) == FieldSet::from_paths([deep(10_000, "x")]));
        owned.union_with(&b);
        assert!(owned.to_set() == a.union(&b));
        owned.remove(&b);
        assert!(owned.to_set() == FieldSet::from_paths([deep(3, "z")]));
    }
}
