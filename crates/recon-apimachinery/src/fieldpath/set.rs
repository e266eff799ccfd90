//! Sets of field paths and their `fieldsV1` encoding (structured-merge-diff
//! `fieldpath/set.go`, `serialize.go`).

use std::collections::{BTreeMap, BTreeSet, btree_map};

use crate::json::{Map, Value};

use super::{Path, PathElement};
use crate::depth;

/// The empty set, for [`FieldSet::entry`] and [`FieldSet::entries`] to lend.
static EMPTY: FieldSet = FieldSet::new();

/// A set of field paths, stored as a trie: `members` are paths ending at this node, `children`
/// lead to longer paths. A path is in the set only if it was inserted: inserting `a.b` does not
/// insert `a`. Child nodes are never empty.
///
/// A set is as deep as the object whose fields it lists, up to Go's 10,000 levels: its set
/// operations, listing and `fieldsV1` encoding keep their own stack of nodes, and its drop,
/// copy and comparison recurse only while shallow (64 levels) and keep their own stack
/// beyond, so no walk over a set takes more than a bounded part of the thread's stack.
#[derive(Default)]
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
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        let mut node = self;
        for pe in parents {
            match node.children.get(pe) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.members.contains(last)
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
        let mut pending = vec![(self, other)];
        while let Some((mine, theirs)) = pending.pop() {
            for m in &theirs.members {
                if !mine.members.contains(m) {
                    mine.members.insert(m.clone());
                }
            }
            let mut copied = Vec::new();
            for (pe, child) in &theirs.children {
                if !mine.children.contains_key(pe) {
                    mine.children.insert(pe.clone(), child.clone());
                    copied.push(pe);
                }
            }
            // All in element order: each child of `theirs` that `mine` had before, paired with
            // it (a child just copied holds all of it already).
            let mut shared = theirs.children.iter().peekable();
            let mut copied = copied.into_iter().peekable();
            for (pe, child) in mine.children.iter_mut() {
                if copied.next_if(|k| *k == pe).is_some() {
                    continue;
                }
                while shared.next_if(|(k, _)| *k < pe).is_some() {}
                if let Some((_, their_child)) = shared.next_if(|(k, _)| *k == pe) {
                    pending.push((child, their_child));
                }
            }
        }
    }

    /// Removes the paths of `other`, in place (exactly: removing `a` keeps `a.b`).
    pub fn remove(&mut self, other: &FieldSet) {
        self.subtract(other, false);
    }

    /// Removes the paths of `other` and everything under them, in place.
    pub fn remove_recursive(&mut self, other: &FieldSet) {
        self.subtract(other, true);
    }

    /// Removes the paths of `other` (with `under`, what lies under them too), dropping the
    /// nodes it empties. The nodes being worked on are taken out of their parents and put back
    /// unless emptied, so the walk needs no stack but its own.
    fn subtract(&mut self, other: &FieldSet, under: bool) {
        /// A node being subtracted from: the node, the children of `other` left to visit and
        /// the element it goes back under.
        struct Open<'o> {
            node: FieldSet,
            rest: std::collections::btree_map::Iter<'o, PathElement, FieldSet>,
            pe: Option<PathElement>,
        }
        let strip = |node: &mut FieldSet, other: &FieldSet| {
            for m in &other.members {
                node.members.remove(m);
                if under {
                    node.children.remove(m);
                }
            }
        };
        if self.is_empty() || other.is_empty() {
            return;
        }
        strip(self, other);
        let mut open = vec![Open {
            node: std::mem::take(self),
            rest: other.children.iter(),
            pe: None,
        }];
        while let Some(top) = open.last_mut() {
            if let Some((pe, theirs)) = top.rest.next() {
                if let Some(mut child) = top.node.children.remove(pe) {
                    strip(&mut child, theirs);
                    open.push(Open {
                        node: child,
                        rest: theirs.children.iter(),
                        pe: Some(pe.clone()),
                    });
                }
                continue;
            }
            let Some(done) = open.pop() else { break };
            match (done.pe, open.last_mut()) {
                (Some(pe), Some(parent)) => {
                    if !done.node.is_empty() {
                        parent.node.children.insert(pe, done.node);
                    }
                }
                // Only the root has no element to go back under.
                _ => *self = done.node,
            }
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        /// A node of the intersection being built: what is left of both sides' children, the
        /// node so far and the element it goes under.
        struct Open<'a> {
            mine: std::collections::btree_map::Iter<'a, PathElement, FieldSet>,
            theirs: &'a FieldSet,
            node: FieldSet,
            pe: Option<&'a PathElement>,
        }
        fn start<'a>(
            mine: &'a FieldSet,
            theirs: &'a FieldSet,
            pe: Option<&'a PathElement>,
        ) -> Open<'a> {
            Open {
                mine: mine.children.iter(),
                theirs,
                node: FieldSet {
                    members: mine
                        .members
                        .intersection(&theirs.members)
                        .cloned()
                        .collect(),
                    children: BTreeMap::new(),
                },
                pe,
            }
        }
        let mut open = vec![start(self, other, None)];
        loop {
            let Some(top) = open.last_mut() else {
                return FieldSet::new();
            };
            if let Some((pe, child)) = top.mine.next() {
                if let Some(their_child) = top.theirs.children.get(pe) {
                    open.push(start(child, their_child, Some(pe)));
                }
                continue;
            }
            let Some(done) = open.pop() else {
                return FieldSet::new();
            };
            match (done.pe, open.last_mut()) {
                (Some(pe), Some(parent)) => {
                    if !done.node.is_empty() {
                        parent.node.children.insert(pe.clone(), done.node);
                    }
                }
                // Only the root has no element to go under.
                _ => return done.node,
            }
        }
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
        // The elements leading to the node being listed, and what is left of each node's
        // children on the way.
        let mut prefix: Vec<PathElement> = Vec::new();
        let mut open = vec![self.children.iter()];
        let mut node = self;
        loop {
            for m in &node.members {
                let mut p = Vec::with_capacity(prefix.len() + 1);
                p.extend(prefix.iter().cloned());
                p.push(m.clone());
                out.push(Path(p));
            }
            // The next child to list: deeper if the node has one, else the next of an
            // ancestor's.
            let next = loop {
                let Some(children) = open.last_mut() else {
                    return out;
                };
                match children.next() {
                    Some(child) => break child,
                    None => {
                        open.pop();
                        prefix.pop();
                    }
                }
            };
            prefix.push(next.0.clone());
            open.push(next.1.children.iter());
            node = next.1;
        }
    }

    /// The `fieldsV1` JSON: `{"f:spec":{".":{},"f:x":{}}}` where `"."` marks a node that is
    /// itself in the set and also has children.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_map())
    }

    /// [`to_fields_v1`](Self::to_fields_v1)'s object.
    pub(super) fn fields_v1_map(&self) -> Map {
        /// A node being encoded: the node, its children left to encode, its JSON so far and
        /// the key it goes under.
        struct Open<'a> {
            node: &'a FieldSet,
            rest: btree_map::Iter<'a, PathElement, FieldSet>,
            out: Map,
            key: Option<String>,
        }
        fn start(node: &FieldSet, include_self: bool, key: Option<String>) -> Open<'_> {
            let mut out = Map::new();
            if include_self {
                out.insert(".".to_owned(), Value::Object(Map::new()));
            }
            for m in &node.members {
                if !node.children.contains_key(m) {
                    out.insert(m.serialize(), Value::Object(Map::new()));
                }
            }
            Open {
                node,
                rest: node.children.iter(),
                out,
                key,
            }
        }
        let mut open = vec![start(self, false, None)];
        loop {
            let Some(top) = open.last_mut() else {
                return Map::new();
            };
            if let Some((pe, child)) = top.rest.next() {
                let include_self = top.node.members.contains(pe);
                open.push(start(child, include_self, Some(pe.serialize())));
                continue;
            }
            let Some(done) = open.pop() else {
                return Map::new();
            };
            match (done.key, open.last_mut()) {
                (Some(key), Some(parent)) => {
                    parent.out.insert(key, Value::Object(done.out));
                }
                // Only the root has no key to go under.
                _ => return done.out,
            }
        }
    }

    /// Parses `fieldsV1` JSON (`Set.FromJSON`). Unknown element kinds are dropped, as upstream
    /// does; a malformed key or a non-object node is an error.
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, String> {
        match v {
            Value::Object(m) => Self::decode(m),
            Value::Null => Ok(FieldSet::new()),
            other => Err(format!("expected an object, found {other}")),
        }
    }

    /// The set a `fieldsV1` object lists.
    pub(super) fn decode(root: &Map) -> Result<FieldSet, String> {
        /// A node being decoded: its keys left to read, the set so far, whether the node is
        /// itself a member (`"."`), and the element it goes under.
        struct Open<'a> {
            rest: crate::json::map::Iter<'a>,
            set: FieldSet,
            is_member: bool,
            pe: Option<PathElement>,
        }
        fn start(m: &Map, pe: Option<PathElement>) -> Open<'_> {
            Open {
                rest: m.iter(),
                set: FieldSet::new(),
                is_member: false,
                pe,
            }
        }
        let mut open = vec![start(root, None)];
        loop {
            let Some(top) = open.last_mut() else {
                return Ok(FieldSet::new());
            };
            if let Some((key, child)) = top.rest.next() {
                if key == "." {
                    top.is_member = true;
                    continue;
                }
                let Some(pe) = PathElement::deserialize(key)? else {
                    continue;
                };
                match child {
                    Value::Object(cm) => open.push(start(cm, Some(pe))),
                    // jsoniter reads `null` as an empty object: a member.
                    Value::Null => {
                        top.set.members.insert(pe);
                    }
                    other => {
                        return Err(format!(
                            "parsing {key:?}: expected an object, found {other}"
                        ));
                    }
                }
                continue;
            }
            let Some(done) = open.pop() else {
                return Ok(FieldSet::new());
            };
            // A node with no children at all (`{}`) is a member: `"f:x":{}`.
            let is_member = done.is_member || done.set.is_empty();
            match (done.pe, open.last_mut()) {
                (Some(pe), Some(parent)) => {
                    if is_member {
                        parent.set.members.insert(pe.clone());
                    }
                    if !done.set.is_empty() {
                        parent.set.children.insert(pe, done.set);
                    }
                }
                // Only the root has no element to go under.
                _ => return Ok(done.set),
            }
        }
    }
}

thread_local! {
    /// How deep the drops of field sets on this thread have recursed.
    static DROPPING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// How deep the copies of field sets on this thread have recursed.
    static COPYING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// How deep the comparisons of field sets on this thread have recursed.
    static COMPARING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl Drop for FieldSet {
    fn drop(&mut self) {
        depth::recurse(
            &DROPPING,
            std::mem::take(&mut self.children),
            drop,
            |children| {
                // Taken apart a node at a time: each node's children are moved out before it
                // is dropped.
                let deeper = |set: &FieldSet| !set.children.is_empty();
                let mut pending: Vec<FieldSet> = children.into_values().filter(deeper).collect();
                while let Some(mut set) = pending.pop() {
                    pending.extend(
                        std::mem::take(&mut set.children)
                            .into_values()
                            .filter(deeper),
                    );
                }
            },
        );
    }
}

impl Clone for FieldSet {
    fn clone(&self) -> Self {
        depth::recurse(
            &COPYING,
            self,
            |set| FieldSet {
                members: set.members.clone(),
                children: set.children.clone(),
            },
            FieldSet::copy,
        )
    }
}

impl FieldSet {
    /// A copy of the set, made a node at a time.
    fn copy(&self) -> FieldSet {
        /// A node being copied: its children left to copy, its members and the copies of
        /// its children so far (in element order), and the element it goes under.
        struct Open<'a> {
            rest: btree_map::Iter<'a, PathElement, FieldSet>,
            members: BTreeSet<PathElement>,
            children: Vec<(PathElement, FieldSet)>,
            pe: Option<&'a PathElement>,
        }
        fn start<'a>(node: &'a FieldSet, pe: Option<&'a PathElement>) -> Open<'a> {
            Open {
                rest: node.children.iter(),
                members: node.members.clone(),
                children: Vec::with_capacity(node.children.len()),
                pe,
            }
        }
        let mut open = vec![start(self, None)];
        loop {
            let Some(top) = open.last_mut() else {
                return FieldSet::new();
            };
            if let Some((pe, child)) = top.rest.next() {
                if child.children.is_empty() {
                    top.children.push((pe.clone(), child.clone()));
                } else {
                    open.push(start(child, Some(pe)));
                }
                continue;
            }
            let Some(done) = open.pop() else {
                return FieldSet::new();
            };
            let copy = FieldSet {
                members: done.members,
                // Already in order: the map is built without sorting.
                children: done.children.into_iter().collect(),
            };
            match (done.pe, open.last_mut()) {
                (Some(pe), Some(parent)) => parent.children.push((pe.clone(), copy)),
                // Only the root has no element to go under.
                _ => return copy,
            }
        }
    }
}

impl PartialEq for FieldSet {
    fn eq(&self, other: &Self) -> bool {
        depth::recurse(
            &COMPARING,
            (self, other),
            |(a, b)| a.members == b.members && a.children == b.children,
            |(a, b)| a.equal(b),
        )
    }
}

impl FieldSet {
    /// Whether the sets are equal, compared a node at a time.
    fn equal(&self, other: &FieldSet) -> bool {
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            if a.members != b.members || a.children.len() != b.children.len() {
                return false;
            }
            for ((pa, ca), (pb, cb)) in a.children.iter().zip(&b.children) {
                if pa != pb {
                    return false;
                }
                pending.push((ca, cb));
            }
        }
        true
    }
}

impl Eq for FieldSet {}

/// The set's paths, as upstream prints them: `{.metadata.labels, .spec.replicas}`.
impl std::fmt::Debug for FieldSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("{")?;
        for (i, path) in self.paths().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{path}")?;
        }
        f.write_str("}")
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

    /// Paths of one to four fields named `a`, `b` or `c`.
    fn any_paths() -> impl proptest::strategy::Strategy<Value = Vec<Vec<&'static str>>> {
        use proptest::prelude::*;
        let path = prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 1..5);
        prop::collection::vec(path, 0..8)
    }

    fn set_of(paths: &BTreeSet<Vec<&str>>) -> FieldSet {
        FieldSet::from_paths(paths.iter().map(|p| Path::fields(p)))
    }

    proptest::proptest! {
        // The trie's algebra is the algebra of its paths.
        #[test]
        fn set_operations_are_those_of_path_sets(a in any_paths(), b in any_paths()) {
            let (pa, pb): (BTreeSet<_>, BTreeSet<_>) = (a.into_iter().collect(), b.into_iter().collect());
            let (sa, sb) = (set_of(&pa), set_of(&pb));
            proptest::prop_assert_eq!(sa.union(&sb), set_of(&pa.union(&pb).cloned().collect()));
            proptest::prop_assert_eq!(
                sa.intersection(&sb),
                set_of(&pa.intersection(&pb).cloned().collect())
            );
            proptest::prop_assert_eq!(sa.difference(&sb), set_of(&pa.difference(&pb).cloned().collect()));
            let under_b = |p: &Vec<&str>| pb.iter().any(|q| p.starts_with(q));
            proptest::prop_assert_eq!(
                sa.recursive_difference(&sb),
                set_of(&pa.iter().filter(|p| !under_b(p)).cloned().collect())
            );
            let listed: BTreeSet<String> = sa.paths().iter().map(|p| p.to_string()).collect();
            let want: BTreeSet<String> = pa.iter().map(|p| format!(".{}", p.join("."))).collect();
            proptest::prop_assert_eq!(listed, want);
            proptest::prop_assert_eq!(sa.clone(), sa.clone());
            proptest::prop_assert_eq!(sa == sb, pa == pb);
            proptest::prop_assert_eq!(FieldSet::from_fields_v1(&sa.to_fields_v1()).unwrap(), sa.clone());
            for p in &pa {
                proptest::prop_assert!(sa.has(&Path::fields(p).0));
            }
        }
    }

    // A set as deep as an object Go reads (and ten times deeper), on a test thread's stack.
    #[test]
    fn a_set_a_hundred_thousand_levels_deep_takes_no_stack() {
        let deep = |depth: usize, last: &str| {
            let mut names = vec!["a"; depth];
            names.push(last);
            Path::fields(&names)
        };
        let a = FieldSet::from_paths([deep(100_000, "x"), deep(100_000, "y"), deep(3, "z")]);
        let b = FieldSet::from_paths([deep(100_000, "y"), deep(50_000, "w")]);
        let copy = a.clone();
        assert!(copy == a);
        assert!(a.has(&deep(100_000, "x").0));
        assert!(a.union(&b).has(&deep(50_000, "w").0));
        assert!(a.intersection(&b) == FieldSet::from_paths([deep(100_000, "y")]));
        let mut smaller = a.clone();
        smaller.remove(&b);
        assert!(smaller == FieldSet::from_paths([deep(100_000, "x"), deep(3, "z")]));
        smaller.remove_recursive(&FieldSet::from_paths([deep(4, "a")]));
        assert!(smaller == FieldSet::from_paths([deep(3, "z")]));
        assert_eq!(a.paths().len(), 3);
        let encoded = a.to_fields_v1();
        assert!(FieldSet::from_fields_v1(&encoded).unwrap() == a);
    }
}
