//! Sets of field paths and their `fieldsV1` encoding (structured-merge-diff
//! `fieldpath/set.go`, `serialize.go`).

use std::collections::{BTreeMap, BTreeSet};

use crate::json::{Map, Value};

use super::{Path, PathElement};

/// The empty set, for [`FieldSet::entry`] and [`FieldSet::entries`] to lend.
static EMPTY: FieldSet = FieldSet::new();

/// A set of field paths, stored as a trie: `members` are paths ending at this node, `children`
/// lead to longer paths. A path is in the set only if it was inserted: inserting `a.b` does not
/// insert `a`. Child nodes are never empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    #[inline]
    pub const fn new() -> Self {
        FieldSet {
            members: BTreeSet::new(),
            children: BTreeMap::new(),
        }
    }

    /// A set holding `paths`.
    pub fn from_paths<I: IntoIterator<Item = Path>>(paths: I) -> Self {
        let mut s = FieldSet::new();
        for p in paths {
            s.insert(&p.0);
        }
        s
    }

    /// Adds a path; the empty path (the whole object) is never tracked. Walks down a loop, not
    /// by recursion: a path is as long as the object is deep.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut node = self;
        for pe in parents {
            node = node.children.entry(pe.clone()).or_default();
        }
        node.members.insert(last.clone());
    }

    /// Adds the path made of `pe` alone.
    #[inline]
    pub fn add_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    /// Adds the paths of `child` under `pe`; an empty `child` adds nothing.
    pub fn adopt(&mut self, pe: PathElement, child: FieldSet) {
        if child.is_empty() {
            return;
        }
        match self.children.get_mut(&pe) {
            Some(mine) => mine.union_with(&child),
            None => {
                self.children.insert(pe, child);
            }
        }
    }

    /// Whether `path` was inserted (a prefix of an inserted path is not in the set).
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether the set holds no path.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The paths under `pe`, relative to it (`Set.WithPrefix`).
    #[inline]
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Elements that end a path at this node.
    #[inline]
    pub fn members(&self) -> &BTreeSet<PathElement> {
        &self.members
    }

    /// Child nodes by element.
    #[inline]
    pub fn children(&self) -> &BTreeMap<PathElement, FieldSet> {
        &self.children
    }

    /// The paths under `pe`, relative to it, when some path of the set starts with `pe`: empty
    /// when `pe` alone is in the set. Unlike [`FieldSet::with_prefix`], `Some` whenever `pe`
    /// itself is in the set.
    pub fn entry(&self, pe: &PathElement) -> Option<&FieldSet> {
        match self.children.get(pe) {
            Some(under) => Some(under),
            None => self.members.contains(pe).then_some(&EMPTY),
        }
    }

    /// The elements of paths that start at this node, each with the paths under it, relative
    /// to it (empty for an element that ends its only paths here), in element order.
    pub fn entries(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        std::iter::from_fn(move || match (members.peek(), children.peek()) {
            (None, None) => None,
            (Some(m), Some((c, _))) if m < c => members.next().map(|m| (m, &EMPTY)),
            (Some(m), None) => {
                let m = *m;
                members.next();
                Some((m, &EMPTY))
            }
            (Some(m), Some((c, _))) if m == c => {
                members.next();
                children.next()
            }
            _ => children.next(),
        })
    }

    /// The set of `members` and of the paths of `children` under their elements; empty
    /// children are dropped.
    pub fn from_parts(
        members: BTreeSet<PathElement>,
        children: BTreeMap<PathElement, FieldSet>,
    ) -> Self {
        let children = children
            .into_iter()
            .filter(|(_, c)| !c.is_empty())
            .collect();
        FieldSet { members, children }
    }

    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// Adds the paths of `other`, in place.
    pub fn union_with(&mut self, other: &FieldSet) {
        for m in &other.members {
            if !self.members.contains(m) {
                self.members.insert(m.clone());
            }
        }
        for (pe, c) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_with(c),
                None => {
                    self.children.insert(pe.clone(), c.clone());
                }
            }
        }
    }

    /// Removes the paths of `other`, in place (exactly: removing `a` keeps `a.b`).
    pub fn remove(&mut self, other: &FieldSet) {
        if self.is_empty() || other.is_empty() {
            return;
        }
        for m in &other.members {
            self.members.remove(m);
        }
        for (pe, c) in &other.children {
            if let Some(mine) = self.children.get_mut(pe) {
                mine.remove(c);
                if mine.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// Removes the paths of `other` and everything under them, in place.
    pub fn remove_recursive(&mut self, other: &FieldSet) {
        if self.is_empty() || other.is_empty() {
            return;
        }
        for m in &other.members {
            self.members.remove(m);
            self.children.remove(m);
        }
        for (pe, c) in &other.children {
            if let Some(mine) = self.children.get_mut(pe) {
                mine.remove_recursive(c);
                if mine.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        if self.is_empty() || other.is_empty() {
            return FieldSet::new();
        }
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                other
                    .children
                    .get(pe)
                    .map(|o| (pe.clone(), c.intersection(o)))
            })
            .collect();
        FieldSet::from_parts(members, children)
    }

    /// Paths in `self` but not in `other`. Paths are compared exactly: removing `a` keeps
    /// `a.b` (upstream `Set.Difference`).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.remove(other);
        out
    }

    /// Paths in `self` that neither are in `other` nor lie under a path of `other`: removing
    /// `a` also removes `a.b` (upstream `Set.RecursiveDifference`, used for reset fields).
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.remove_recursive(other);
        out
    }

    /// Every path, in upstream iteration order: at each node its members first, then each
    /// child's paths depth first. Conflict causes come out in this order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` JSON: `{"f:spec":{".":{},"f:x":{}}}` where `"."` marks a node that is
    /// itself in the set and also has children.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode(false))
    }

    fn encode(&self, include_self: bool) -> Map {
        let mut out = Map::new();
        if include_self {
            out.insert(".".to_owned(), Value::Object(Map::new()));
        }
        for m in &self.members {
            if !self.children.contains_key(m) {
                out.insert(m.serialize(), Value::Object(Map::new()));
            }
        }
        for (pe, c) in &self.children {
            let node = c.encode(self.members.contains(pe));
            out.insert(pe.serialize(), Value::Object(node));
        }
        out
    }

    /// Parses `fieldsV1` JSON (`Set.FromJSON`). Unknown element kinds are dropped, as upstream
    /// does; a malformed key or a non-object node is an error.
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, String> {
        match v {
            Value::Object(m) => Ok(Self::decode(m)?.0),
            Value::Null => Ok(FieldSet::new()),
            other => Err(format!("expected an object, found {other}")),
        }
    }

    /// Returns the node's children and whether the node itself is a member.
    fn decode(m: &Map) -> Result<(FieldSet, bool), String> {
        let mut set = FieldSet::new();
        let mut is_member = false;
        for (key, child) in m {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::deserialize(key)? else {
                continue;
            };
            let (grandchildren, child_is_member) = match child {
                Value::Object(cm) => Self::decode(cm)?,
                // jsoniter reads `null` as an empty object.
                Value::Null => (FieldSet::new(), true),
                other => {
                    return Err(format!(
                        "parsing {key:?}: expected an object, found {other}"
                    ));
                }
            };
            if child_is_member {
                set.members.insert(pe.clone());
            }
            if !grandchildren.is_empty() {
                set.children.insert(pe, grandchildren);
            }
        }
        // A node with no children at all (`{}`) is a member: `"f:x":{}`.
        if set.is_empty() {
            is_member = true;
        }
        Ok((set, is_member))
    }
}

#[cfg(test)]
mod tests {
    use crate::json;

    use super::*;

    fn p(s: &str) -> Path {
        Path::fields(&s.split('.').collect::<Vec<_>>())
    }

    /// The paths that have no longer path in the set below them (`Set.Leaves`).
    fn leaves(s: &FieldSet) -> FieldSet {
        let members = s
            .members
            .iter()
            .filter(|m| !s.children.contains_key(*m))
            .cloned()
            .collect();
        let children = s
            .children
            .iter()
            .map(|(pe, c)| (pe.clone(), leaves(c)))
            .collect();
        FieldSet::from_parts(members, children)
    }

    #[test]
    fn insert_has_and_prefixes() {
        let s = FieldSet::from_paths([p("spec.a.b")]);
        assert!(s.has(&p("spec.a.b").0));
        assert!(!s.has(&p("spec.a").0));
        assert!(!s.has(&[]));
        assert!(FieldSet::from_paths([Path::default()]).is_empty());
    }

    #[test]
    fn set_algebra_follows_upstream() {
        let a = FieldSet::from_paths([p("a"), p("a.b"), p("c.d")]);
        let b = FieldSet::from_paths([p("a"), p("c")]);
        // Exact difference: `a.b` and `c.d` survive removing `a` and `c`.
        assert_eq!(a.difference(&b), FieldSet::from_paths([p("a.b"), p("c.d")]));
        // Recursive difference removes whole subtrees.
        assert_eq!(a.recursive_difference(&b), FieldSet::new());
        assert_eq!(a.intersection(&b), FieldSet::from_paths([p("a")]));
        assert_eq!(
            b.union(&a),
            FieldSet::from_paths([p("a"), p("a.b"), p("c"), p("c.d")])
        );
        assert_eq!(leaves(&a), FieldSet::from_paths([p("a.b"), p("c.d")]));
        let empty_child = a.intersection(&FieldSet::from_paths([p("c.e")]));
        assert!(empty_child.is_empty());
        assert_eq!(empty_child, FieldSet::new());
    }

    #[test]
    fn paths_iterate_members_before_children() {
        let s = FieldSet::from_paths([p("spec.z"), p("spec.a.b"), p("spec.c"), p("meta")]);
        let got: Vec<String> = s.paths().iter().map(|p| p.to_string()).collect();
        assert_eq!(got, [".meta", ".spec.c", ".spec.z", ".spec.a.b"]);
    }

    #[test]
    fn entries_merge_members_and_children_in_order() {
        let s = FieldSet::from_paths([p("b"), p("b.x"), p("a.y"), p("c")]);
        let got: Vec<(String, usize)> = s
            .entries()
            .map(|(pe, under)| (pe.to_string(), under.paths().len()))
            .collect();
        let want = [(".a", 1), (".b", 1), (".c", 0)].map(|(e, n)| (e.to_owned(), n));
        assert_eq!(got, want);
        assert_eq!(FieldSet::new().entries().count(), 0);
        let b = PathElement::field("b");
        assert_eq!(s.entry(&b), Some(&FieldSet::from_paths([p("x")])));
        assert_eq!(s.entry(&PathElement::field("c")), Some(&FieldSet::new()));
        assert_eq!(s.entry(&PathElement::field("z")), None);
    }

    #[test]
    fn fields_v1_round_trip() {
        let v = json!({
            "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:spec": {
                ".": {},
                "f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:v": {}}},
                "f:set": {"v:10": {}, "v:9": {}},
                "f:x": {}
            }
        });
        let s = FieldSet::from_fields_v1(&v).unwrap();
        assert!(s.has(&p("spec").0));
        assert!(!s.has(&p("metadata").0));
        assert!(s.has(&p("metadata.labels").0));
        assert_eq!(s.to_fields_v1(), v);
        // An unknown element kind is dropped, `null` reads as `{}`.
        let odd = FieldSet::from_fields_v1(&json!({"f:a": null, "x:q": {}})).unwrap();
        assert_eq!(odd, FieldSet::from_paths([p("a")]));
        assert!(FieldSet::from_fields_v1(&json!({"k:nope": {}})).is_err());
        assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(FieldSet::from_fields_v1(&json!("x")).is_err());
        assert_eq!(FieldSet::new().to_fields_v1(), json!({}));
    }
}
