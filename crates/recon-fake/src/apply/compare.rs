//! Which fields differ between two versions of an object (structured-merge-diff
//! `typed/compare.go`).

use std::collections::BTreeMap;

use recon_apimachinery::json::{Map, Value};

use super::schema::{ListType, MapType, Schema, Type};
use super::typed::{Node, field_type, item_pe, resolve};
use recon_apimachinery::fieldpath::FieldSet;
use recon_apimachinery::fieldpath::PathElement;
use recon_apimachinery::value::equals;

/// The fields removed, modified and added going from one object to another. Every node of
/// an added or removed subtree is listed; atomic lists and maps, empty maps and lists, and
/// scalars are compared as whole values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Fields only the old object has.
    pub removed: FieldSet,
    /// Fields in both with different values.
    pub modified: FieldSet,
    /// Fields only the new object has.
    pub added: FieldSet,
}

impl Comparison {
    /// Drops reset fields and everything under them from all three sets.
    pub fn exclude(&mut self, reset: &FieldSet) {
        if reset.is_empty() {
            return;
        }
        self.removed.remove_recursive(reset);
        self.modified.remove_recursive(reset);
        self.added.remove_recursive(reset);
    }
}

/// Compares `old` with `new`. `metadata.managedFields` is left out: upstream compares the
/// objects with them removed (`RemoveObjectManagedFields`), and skipping them avoids a copy.
pub fn compare(old: &Value, new: &Value, schema: &Schema) -> Comparison {
    let mut w = Walker {
        out: Comparison::default(),
        path: Vec::new(),
        built: Vec::new(),
        open: Default::default(),
    };
    w.walk(&schema.root, Some(old), Some(new));
    w.close_to(0);
    w.out
}

/// One step of the path being walked: a map key is kept borrowed until a set needs it.
enum Step<'v> {
    Key(&'v str),
    Element(PathElement),
}

/// Which set of the comparison a path goes to.
#[derive(Clone, Copy)]
enum Change {
    Removed = 0,
    Modified = 1,
    Added = 2,
}

/// One step of a [`Walker::walk`].
enum Task<'v> {
    /// Compare two values of a type.
    Walk(&'v Type, Option<&'v Value>, Option<&'v Value>),
    /// Compare them in one of the shapes their type takes; whether this is the shape that
    /// decides if the walk compared them as a leaf.
    Handle(Node<'v>, Option<&'v Value>, Option<&'v Value>, bool),
    /// End a walk: record a value only one side has (whether it was added, or removed)
    /// unless it was compared as a leaf.
    Finish(bool, bool),
    Enter(Step<'v>),
    Leave,
    Record(Change),
}

struct Walker<'v> {
    out: Comparison,
    path: Vec<Step<'v>>,
    /// The first steps of `path` as elements: only as far as a path was recorded, so that
    /// walking what did not change allocates nothing for it.
    built: Vec<PathElement>,
    /// For each set (by [`Change`]), the nodes being filled along `built`: the one at `i` holds
    /// the paths under `built[..=i]` (with `built[i]`, which leads to it). A node goes into the
    /// one above when the walk leaves it, so a path is recorded at the cost of its last
    /// element, not of its length (as long as the object is deep).
    open: [Vec<(PathElement, FieldSet)>; 3],
}

impl<'v> Walker<'v> {
    /// Whether `key` of the map at the current path is `metadata.managedFields`.
    fn is_managed_fields(&self, key: &str) -> bool {
        key == "managedFields" && matches!(self.path.as_slice(), [Step::Key("metadata")])
    }

    fn push(&mut self, step: Step<'v>) {
        self.path.push(step);
    }

    fn pop(&mut self) {
        self.path.pop();
        self.built.truncate(self.path.len());
        self.close_to(self.built.len());
    }

    /// Puts the open nodes past the first `len` into those above them (the last into the set).
    fn close_to(&mut self, len: usize) {
        let sets = [
            &mut self.out.removed,
            &mut self.out.modified,
            &mut self.out.added,
        ];
        for (set, open) in sets.into_iter().zip(self.open.iter_mut()) {
            while open.len() > len {
                let Some((pe, node)) = open.pop() else { break };
                match open.last_mut() {
                    Some((_, parent)) => parent.adopt(pe, node),
                    None => set.adopt(pe, node),
                }
            }
        }
    }

    /// Records the current path in one of the sets.
    fn record(&mut self, change: Change) {
        for step in &self.path[self.built.len()..] {
            self.built.push(match step {
                Step::Key(key) => PathElement::field(key),
                Step::Element(pe) => pe.clone(),
            });
        }
        let Some((last, parents)) = self.built.split_last() else {
            return;
        };
        let open = &mut self.open[change as usize];
        for pe in &parents[open.len().min(parents.len())..] {
            open.push((pe.clone(), FieldSet::new()));
        }
        match parents.len().checked_sub(1) {
            Some(parent) => open[parent].1.add_member(last.clone()),
            None => {
                let set = match change {
                    Change::Removed => &mut self.out.removed,
                    Change::Modified => &mut self.out.modified,
                    Change::Added => &mut self.out.added,
                };
                set.add_member(last.clone());
            }
        }
    }

    /// Walks `lhs` and `rhs` with their type, recording what differs. Upstream recurses a
    /// level per level of the objects; this keeps its own list of what is left to do, so an
    /// object as deep as Go reads takes no more of the thread's stack than a shallow one.
    fn walk(&mut self, t: &'v Type, lhs: Option<&'v Value>, rhs: Option<&'v Value>) {
        // What is left to do, the next step last; and, for each walk under way, whether its
        // node was compared as a leaf (then the walk records nothing more).
        let mut todo = vec![Task::Walk(t, lhs, rhs)];
        let mut in_leaf: Vec<bool> = Vec::new();
        while let Some(task) = todo.pop() {
            match task {
                Task::Walk(t, lhs, rhs) => {
                    // The shape that decides, and the old one when it differs.
                    let (shape, old_shape) = match (lhs, rhs) {
                        (None, None) => continue,
                        (Some(l), None) => (resolve(t, Some(l)), None),
                        (None, Some(r)) => (resolve(t, Some(r)), None),
                        (Some(l), Some(r)) => {
                            let (ln, rn) = (resolve(t, Some(l)), resolve(t, Some(r)));
                            // Upstream walks the old shape on a copy of the walker (its leaf
                            // flag apart), then the new one.
                            if ln.same_shape(&rn) {
                                (rn, None)
                            } else {
                                (rn, Some(ln))
                            }
                        }
                    };
                    in_leaf.push(false);
                    todo.push(Task::Finish(lhs.is_none(), rhs.is_none()));
                    todo.push(Task::Handle(shape, lhs, rhs, true));
                    if let Some(old_shape) = old_shape {
                        todo.push(Task::Handle(old_shape, lhs, rhs, false));
                    }
                }
                Task::Handle(node, lhs, rhs, counts) => {
                    let mut scratch = false;
                    let flag = match in_leaf.last_mut() {
                        Some(flag) if counts => flag,
                        _ => &mut scratch,
                    };
                    let start = todo.len();
                    match node {
                        Node::Leaf(_) => self.leaf(lhs, rhs, flag),
                        Node::Map(m) => self.map(m, lhs, rhs, flag, &mut todo),
                        Node::List(l) => self.list(l, lhs, rhs, flag, &mut todo),
                    }
                    // The node's children were listed in order: the first is done first.
                    todo[start..].reverse();
                }
                Task::Finish(added, removed) => {
                    if !in_leaf.pop().unwrap_or(true) {
                        if added {
                            self.record(Change::Added);
                        } else if removed {
                            self.record(Change::Removed);
                        }
                    }
                }
                Task::Enter(step) => self.push(step),
                Task::Leave => self.pop(),
                Task::Record(change) => self.record(change),
            }
        }
    }

    fn leaf(&mut self, lhs: Option<&'v Value>, rhs: Option<&'v Value>, in_leaf: &mut bool) {
        if *in_leaf {
            return;
        }
        *in_leaf = true;
        match (lhs, rhs) {
            (None, _) => self.record(Change::Added),
            (_, None) => self.record(Change::Removed),
            (Some(l), Some(r)) if !equals(l, r) => self.record(Change::Modified),
            _ => {}
        }
    }

    /// Compares two maps as a leaf, or lists in `todo`, in order, the walks of their fields.
    fn map(
        &mut self,
        m: &'v MapType,
        lhs: Option<&'v Value>,
        rhs: Option<&'v Value>,
        in_leaf: &mut bool,
        todo: &mut Vec<Task<'v>>,
    ) {
        let lm = lhs.and_then(Value::as_object);
        let rm = rhs.and_then(Value::as_object);
        // Both sides empty or null: compare as values, keeping `{}` apart from `null`.
        let empty = lm.is_none_or(|m| m.is_empty()) && rm.is_none_or(|m| m.is_empty());
        if m.atomic || empty {
            return self.leaf(lhs, rhs, in_leaf);
        }
        // Both sides in key order, merged: each key of either comes once, in order.
        let mut left = in_key_order(lm).peekable();
        let mut right = in_key_order(rm).peekable();
        loop {
            let take_left = match (left.peek(), right.peek()) {
                (None, None) => break,
                (Some((lk, _)), Some((rk, _))) => lk <= rk,
                (left_key, _) => left_key.is_some(),
            };
            let (k, l, r) = if take_left {
                let Some((k, l)) = left.next() else { break };
                let r = right.next_if(|(rk, _)| *rk == k).map(|(_, r)| r);
                (k, Some(l), r)
            } else {
                let Some((k, r)) = right.next() else { break };
                (k, None, Some(r))
            };
            if self.is_managed_fields(k) {
                continue;
            }
            todo.push(Task::Enter(Step::Key(k)));
            todo.push(Task::Walk(field_type(m, k), l, r));
            todo.push(Task::Leave);
        }
    }

    /// Compares two lists as a leaf, or lists in `todo`, in order, what comparing their items
    /// takes.
    fn list(
        &mut self,
        l: &'v ListType,
        lhs: Option<&'v Value>,
        rhs: Option<&'v Value>,
        in_leaf: &mut bool,
        todo: &mut Vec<Task<'v>>,
    ) {
        let ll = lhs.and_then(Value::as_array);
        let rl = rhs.and_then(Value::as_array);
        let empty = ll.is_none_or(|v| v.is_empty()) && rl.is_none_or(|v| v.is_empty());
        if l.kind == super::schema::ListKind::Atomic || empty {
            return self.leaf(lhs, rhs, in_leaf);
        }
        // Items grouped by identity; duplicated items are compared as one atomic value.
        let mut groups: BTreeMap<PathElement, (Vec<&'v Value>, Vec<&'v Value>)> = BTreeMap::new();
        for item in ll.into_iter().flatten() {
            if let Ok(pe) = item_pe(l, item) {
                groups.entry(pe).or_default().0.push(item);
            }
        }
        for item in rl.into_iter().flatten() {
            if let Ok(pe) = item_pe(l, item) {
                groups.entry(pe).or_default().1.push(item);
            }
        }
        for (pe, (old, new)) in groups {
            todo.push(Task::Enter(Step::Element(pe)));
            match (old.len(), new.len()) {
                (0..=1, 0..=1) => todo.push(Task::Walk(
                    &l.elem,
                    old.first().copied(),
                    new.first().copied(),
                )),
                (2.., 2..) => {
                    let same =
                        old.len() == new.len() && old.iter().zip(&new).all(|(a, b)| equals(a, b));
                    if !same {
                        todo.push(Task::Record(Change::Modified));
                    }
                }
                (2.., _) => {
                    if let Some(r) = new.first() {
                        todo.push(Task::Walk(&l.elem, None, Some(r)));
                    }
                    todo.push(Task::Record(Change::Removed));
                }
                (_, _) => {
                    if let Some(o) = old.first() {
                        todo.push(Task::Walk(&l.elem, Some(o), None));
                    }
                    todo.push(Task::Record(Change::Added));
                }
            }
            todo.push(Task::Leave);
        }
    }
}

/// The entries of a map, if any, in key order (a [`Map`] keeps its keys in order).
fn in_key_order(map: Option<&Map>) -> impl Iterator<Item = (&String, &Value)> {
    map.into_iter().flat_map(|m| m.iter())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use recon_apimachinery::json;

    use super::*;

    /// Whether nothing changed.
    fn is_same(c: &Comparison) -> bool {
        c.removed.is_empty() && c.modified.is_empty() && c.added.is_empty()
    }

    #[test]
    fn managed_fields_are_not_compared() {
        let s = Schema::untyped();
        let c = compare(
            &json!({"metadata": {"managedFields": [{"manager": "a"}]}, "spec": {"managedFields": 1}}),
            &json!({"metadata": {"managedFields": [{"manager": "b"}]}, "spec": {"managedFields": 2}}),
            &s,
        );
        assert!(c.added.is_empty() && c.removed.is_empty());
        assert_eq!(
            c.modified.to_fields_v1(),
            json!({"f:spec": {"f:managedFields": {}}})
        );
    }

    #[test]
    fn added_subtrees_list_every_node() {
        let s = Schema::untyped();
        let c = compare(
            &json!({"spec": {"a": 1, "gone": {"x": 1}}}),
            &json!({"spec": {"a": 2, "m": {"k": "v"}, "e": {}, "n": null}}),
            &s,
        );
        assert_eq!(c.modified.to_fields_v1(), json!({"f:spec": {"f:a": {}}}));
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:spec": {"f:e": {}, "f:m": {".": {}, "f:k": {}}, "f:n": {}}})
        );
        assert_eq!(
            c.removed.to_fields_v1(),
            json!({"f:spec": {"f:gone": {".": {}, "f:x": {}}}})
        );
        assert!(is_same(&compare(
            &json!({"a": [1, 2]}),
            &json!({"a": [1.0, 2]}),
            &s
        )));
    }

    #[test]
    fn empty_and_null_are_different_values() {
        let s = Schema::untyped();
        let c = compare(&json!({"a": {}}), &json!({"a": null}), &s);
        assert_eq!(c.modified.to_fields_v1(), json!({"f:a": {}}));
    }

    // Objects as deep as Go reads them (10,000 levels), compared on a test thread's stack.
    #[test]
    fn objects_as_deep_as_go_reads_compare_without_recursion() {
        use recon_apimachinery::fieldpath::Path;
        use recon_apimachinery::json::Map;
        let nest = |leaf: Value| {
            let mut value = leaf;
            for _ in 0..10_000 {
                value = Value::Object(Map::from_iter([("a", value)]));
            }
            value
        };
        let path = |last: Option<&str>| {
            let mut names = vec!["a"; 10_000];
            names.extend(last);
            FieldSet::from_paths([Path::fields(&names)])
        };
        let s = Schema::untyped();
        let c = compare(&nest(json!(1)), &nest(json!(2)), &s);
        assert!(c.modified == path(None));
        assert!(c.added.is_empty() && c.removed.is_empty());
        let c = compare(&nest(json!({})), &nest(json!({"b": 1})), &s);
        assert!(c.added == path(Some("b")));
        assert!(c.modified.is_empty() && c.removed.is_empty());
    }
}
