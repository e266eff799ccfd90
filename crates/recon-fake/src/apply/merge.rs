//! Merging an applied configuration into a live object, and removing fields from an object
//! (structured-merge-diff `typed/merge.go`, `typed/remove.go`).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use recon_apimachinery::json::{Map, Value};

use super::schema::{ListKind, ListType, MapType, Schema, Type};
use super::typed::{Node, field_type, item_pe, resolve};
use recon_apimachinery::fieldpath::FieldSet;
use recon_apimachinery::fieldpath::PathElement;

/// Merges `rhs` (the applied configuration) into `lhs` (the live object): scalars and atomic
/// values from `rhs` win, granular maps merge key by key, associative lists merge item by
/// item (`TypedValue.Merge`). Fails only on list items without a usable identity.
///
/// Upstream recurses once a level of the values; this keeps its own list of the maps and
/// lists being merged, so values as deep as Go reads take no more stack.
pub fn merge(lhs: &Value, rhs: &Value, schema: &Schema) -> Result<Value, String> {
    let mut open: Vec<Merging> = Vec::new();
    let mut step = start(&schema.root, Some(lhs), Some(rhs))?;
    loop {
        let merged = match step {
            Step::Open(merging) => {
                open.push(merging);
                None
            }
            Step::Done(merged) => Some(merged),
        };
        let Some(innermost) = open.last_mut() else {
            return Ok(merged.flatten().unwrap_or(Value::Null));
        };
        if let Some(Some(value)) = merged {
            innermost.keep(value);
        }
        step = match innermost.pairs.next() {
            Some(pair) => {
                innermost.key = pair.key;
                start(pair.t, pair.lhs, pair.rhs)?
            }
            None => Step::Done(open.pop().and_then(Merging::finish)),
        };
    }
}

/// What merging a pair of values starts: a result, or a map or list to merge member by member.
enum Step<'a> {
    Done(Option<Value>),
    Open(Merging<'a>),
}

/// A map or list being merged: the pairs of members left (in upstream's order), the key of
/// the one being merged, and what is merged so far.
struct Merging<'a> {
    pairs: std::vec::IntoIter<Pair<'a>>,
    key: Option<&'a String>,
    into: Merged,
}

/// Two values to merge, of type `t`, under `key` in a map.
struct Pair<'a> {
    key: Option<&'a String>,
    t: &'a Type,
    lhs: Option<&'a Value>,
    rhs: Option<&'a Value>,
}

/// A map or list being built, member by member.
enum Merged {
    Map(Map),
    List(Vec<Value>),
}

impl Merged {
    /// Adds `value`, under `key` in a map.
    fn keep(&mut self, key: Option<&String>, value: Value) {
        match (self, key) {
            (Merged::Map(map), Some(key)) => {
                map.insert(key.clone(), value);
            }
            (Merged::List(items), _) => items.push(value),
            (Merged::Map(_), None) => {}
        }
    }
}

impl Merging<'_> {
    fn keep(&mut self, value: Value) {
        self.into.keep(self.key, value);
    }

    /// The merged map or list; none if nothing is left in it.
    fn finish(self) -> Option<Value> {
        match self.into {
            Merged::Map(map) => (!map.is_empty()).then_some(Value::Object(map)),
            Merged::List(items) => (!items.is_empty()).then_some(Value::Array(items.into())),
        }
    }
}

fn start<'a>(
    t: &'a Type,
    lhs: Option<&'a Value>,
    rhs: Option<&'a Value>,
) -> Result<Step<'a>, String> {
    // The new value's shape wins when the two differ (upstream merges the old shape on a
    // copy of the walker and discards it).
    let node = match (lhs, rhs) {
        (_, Some(r)) => resolve(t, Some(r)),
        (Some(l), None) => resolve(t, Some(l)),
        (None, None) => return Err("at least one of lhs and rhs must be provided".to_owned()),
    };
    match node {
        Node::Leaf(_) => Ok(Step::Done(keep_rhs(lhs, rhs))),
        Node::Map(m) => Ok(merge_map(m, lhs, rhs)),
        Node::List(l) => merge_list(l, lhs, rhs),
    }
}

fn keep_rhs(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}

fn merge_map<'a>(m: &'a MapType, lhs: Option<&'a Value>, rhs: Option<&'a Value>) -> Step<'a> {
    let lm = lhs.and_then(Value::as_object);
    let rm = rhs.and_then(Value::as_object);
    let empty = lm.is_none_or(|m| m.is_empty()) && rm.is_none_or(|m| m.is_empty());
    if m.atomic || empty {
        return Step::Done(keep_rhs(lhs, rhs));
    }
    // Both sides' fields in key order, walked side by side: each key once, with its value on
    // either side.
    let mut left = lm.map(Map::iter).unwrap_or_default().peekable();
    let mut right = rm.map(Map::iter).unwrap_or_default().peekable();
    let mut pairs = Vec::with_capacity(left.len().max(right.len()));
    loop {
        let order = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((l, _)), Some((r, _))) => l.cmp(r),
        };
        let l = left.next_if(|_| order != Ordering::Greater);
        let r = right.next_if(|_| order != Ordering::Less);
        let Some((key, _)) = l.or(r) else { break };
        pairs.push(Pair {
            key: Some(key),
            t: field_type(m, key),
            lhs: l.map(|(_, v)| v),
            rhs: r.map(|(_, v)| v),
        });
    }
    Step::Open(Merging {
        pairs: pairs.into_iter(),
        key: None,
        into: Merged::Map(Map::new()),
    })
}

/// Item identities in list order, with each identity's item (`indexListPathElements`).
/// Duplicates are an error in the applied list; in the live list they map to `null` so they
/// are not merged with the applied item.
fn index<'v>(
    l: &ListType,
    items: &'v [Value],
    allow_duplicates: bool,
) -> Result<(Vec<PathElement>, BTreeMap<PathElement, &'v Value>), String> {
    static NULL: Value = Value::Null;
    let mut pes = Vec::with_capacity(items.len());
    let mut observed = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pe = item_pe(l, item).map_err(|e| format!("element {i}: {e}"))?;
        if observed.contains_key(&pe) {
            if !allow_duplicates {
                return Err(format!("duplicate entries for key {pe}"));
            }
            observed.insert(pe.clone(), &NULL);
        } else {
            observed.insert(pe.clone(), item);
        }
        pes.push(pe);
    }
    Ok((pes, observed))
}

/// The items of two lists to merge, paired by identity in upstream's order: items only in the
/// live list keep their place; applied items come in applied order, and items in both follow
/// the applied order (`visitListItems`).
fn merge_list<'a>(
    l: &'a ListType,
    lhs: Option<&'a Value>,
    rhs: Option<&'a Value>,
) -> Result<Step<'a>, String> {
    let ll = lhs.and_then(Value::as_array);
    let rl = rhs.and_then(Value::as_array);
    let empty = ll.is_none_or(|v| v.is_empty()) && rl.is_none_or(|v| v.is_empty());
    if l.kind == ListKind::Atomic || empty {
        return Ok(Step::Done(keep_rhs(lhs, rhs)));
    }
    let (ll, rl) = (
        ll.map_or(&[][..], Vec::as_slice),
        rl.map_or(&[][..], Vec::as_slice),
    );
    let (rhs_pes, observed_rhs) = index(l, rl, false)?;
    let (lhs_pes, observed_lhs) = index(l, ll, true)?;

    let mut shared = rhs_pes.iter().filter(|pe| observed_lhs.contains_key(*pe));
    let mut next_shared = shared.next();
    let mut merged_rhs = BTreeSet::new();
    let mut pairs = Vec::new();
    let pair = |lhs: Option<&'a Value>, rhs: Option<&'a Value>| Pair {
        key: None,
        t: &l.elem,
        lhs,
        rhs,
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs_pes.len() || ri < rhs_pes.len() {
        if li < lhs_pes.len() && ri < rhs_pes.len() {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.insert(pe.clone());
                pairs.push(pair(
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                ));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                // A shared item, but not the one due now.
                li += 1;
                continue;
            }
        }
        if li < lhs_pes.len() {
            let pe = &lhs_pes[li];
            if !observed_rhs.contains_key(pe) {
                // The item at this index: `observed` holds null for duplicates.
                pairs.push(pair(ll.get(li), None));
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rhs_pes.len() {
            let pe = &rhs_pes[ri];
            merged_rhs.insert(pe.clone());
            pairs.push(pair(
                observed_lhs.get(pe).copied(),
                observed_rhs.get(pe).copied(),
            ));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok(Step::Open(Merging {
        pairs: pairs.into_iter(),
        key: None,
        into: Merged::List(Vec::new()),
    }))
}

/// Removes the paths in `to_remove`, each with everything under it (`TypedValue.RemoveItems`
/// of structured-merge-diff v6.3, which kube-apiserver 1.36 vendors). A map or list is `null`
/// when it was empty, atomic or named itself; one emptied by removals under it stays, as `{}`
/// or `[]` (`removingWalker` keeps "the empty container structure").
///
/// One container at a time, like [`merge`].
pub(super) fn remove(v: &Value, to_remove: &FieldSet, t: &Type) -> Value {
    let mut open = match start_removing(v, to_remove, t) {
        Ok(removing) => vec![removing],
        Err(done) => return done,
    };
    // What a removal left of the member the innermost container is at.
    let mut removed = None;
    while let Some(innermost) = open.last_mut() {
        if let Some(after) = removed.take() {
            innermost.keep_removed(after);
        }
        match innermost.next() {
            Some((below, to_remove, t)) => match start_removing(below, to_remove, t) {
                Ok(removing) => open.push(removing),
                Err(done) => removed = Some(done),
            },
            None => {
                let done = open.pop().map_or(Value::Null, Removing::finish);
                if open.is_empty() {
                    return done;
                }
                removed = Some(done);
            }
        }
    }
    Value::Null
}

/// A map or list having paths removed below it: what is left of its members, the one being
/// removed under (with its key), what is kept, and whether a removal reached below it.
struct Removing<'a> {
    members: Members<'a>,
    below: Option<(Option<&'a String>, &'a Value)>,
    to_remove: &'a FieldSet,
    kept: Merged,
    reached: bool,
}

enum Members<'a> {
    List(std::slice::Iter<'a, Value>, &'a ListType),
    Map(recon_apimachinery::json::map::Iter<'a>, &'a MapType),
}

/// What removing `to_remove` from `v` starts: a map or list to go through, or the value left.
fn start_removing<'a>(
    v: &'a Value,
    to_remove: &'a FieldSet,
    t: &'a Type,
) -> Result<Removing<'a>, Value> {
    let (members, kept) = match resolve(t, Some(v)) {
        Node::Leaf(_) => return Err(v.clone()),
        Node::List(l) => {
            let Value::Array(items) = v else {
                return Err(Value::Null);
            };
            if items.is_empty() || l.kind == ListKind::Atomic {
                return Err(Value::Null);
            }
            (Members::List(items.iter(), l), Merged::List(Vec::new()))
        }
        Node::Map(m) => {
            let Value::Object(obj) = v else {
                return Err(Value::Null);
            };
            if obj.is_empty() || m.atomic {
                return Err(Value::Null);
            }
            (Members::Map(obj.iter(), m), Merged::Map(Map::new()))
        }
    };
    Ok(Removing {
        members,
        below: None,
        to_remove,
        kept,
        reached: false,
    })
}

impl<'a> Removing<'a> {
    /// Keeps the members up to the next one a removal reaches below: that one, what to remove
    /// under it and its type.
    fn next(&mut self) -> Option<(&'a Value, &'a FieldSet, &'a Type)> {
        loop {
            let (key, value, pe, t) = match &mut self.members {
                Members::List(items, l) => {
                    let item = items.next()?;
                    match item_pe(l, item) {
                        Ok(pe) => (None, item, pe, &l.elem),
                        Err(_) => {
                            self.kept.keep(None, item.clone());
                            continue;
                        }
                    }
                }
                Members::Map(fields, m) => {
                    let (key, value) = fields.next()?;
                    (
                        Some(key),
                        value,
                        PathElement::field(key),
                        field_type(m, key),
                    )
                }
            };
            if self.to_remove.members().contains(&pe) {
                continue;
            }
            match self.to_remove.with_prefix(&pe) {
                Some(sub) => {
                    self.reached = true;
                    self.below = Some((key, value));
                    return Some((value, sub, t));
                }
                None => self.kept.keep(key, value.clone()),
            }
        }
    }

    /// Keeps what a removal left of the member it reached below: an emptied container stays,
    /// empty.
    fn keep_removed(&mut self, after: Value) {
        let Some((key, before)) = self.below.take() else {
            return;
        };
        let after = match (before, after) {
            (Value::Object(_), Value::Null) => Value::Object(Map::new()),
            (Value::Array(_), Value::Null) => Value::Array(Vec::new().into()),
            (_, after) => after,
        };
        self.kept.keep(key, after);
    }

    /// What is left of the map or list: `null` if nothing is and no removal reached below it.
    fn finish(self) -> Value {
        match self.kept {
            Merged::Map(map) if !map.is_empty() || self.reached => Value::Object(map),
            Merged::List(items) if !items.is_empty() || self.reached => Value::Array(items.into()),
            _ => Value::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use recon_apimachinery::json;

    use super::*;
    use recon_apimachinery::fieldpath::Path;

    /// `path` extended by one element.
    fn child(path: &Path, pe: PathElement) -> Path {
        let mut p = path.0.clone();
        p.push(pe);
        Path(p)
    }

    fn schema() -> Schema {
        Schema::from_openapi_v3(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "v": {"type": "string"}, "w": {"type": "string"}}}},
            "atomic": {"type": "array", "items": {"type": "string"}},
            "am": {"type": "object", "x-kubernetes-map-type": "atomic",
                "additionalProperties": {"type": "string"}}
        }}}}))
        .unwrap()
    }

    #[test]
    fn list_merge_order_matches_the_real_server() {
        // Observed: live [p,q] + applied [o,q,r] gives [p,o,q,r]; set [x,y] + [w,y,z] gives [x,w,y,z].
        let live = json!({"spec": {
            "items": [{"name": "p", "v": "1"}, {"name": "q", "v": "2"}],
            "set": ["x", "y"]}});
        let applied = json!({"spec": {
            "items": [{"name": "o", "v": "0"}, {"name": "q", "w": "b"}, {"name": "r"}],
            "set": ["w", "y", "z"]}});
        assert_eq!(
            merge(&live, &applied, &schema()).unwrap(),
            json!({"spec": {
                "items": [{"name": "p", "v": "1"}, {"name": "o", "v": "0"},
                          {"name": "q", "v": "2", "w": "b"}, {"name": "r"}],
                "set": ["x", "w", "y", "z"]}})
        );
    }

    #[test]
    fn shared_items_follow_the_applied_order() {
        let live = json!({"spec": {"set": ["a", "b", "c"]}});
        let applied = json!({"spec": {"set": ["c", "a"]}});
        assert_eq!(
            merge(&live, &applied, &schema()).unwrap(),
            json!({"spec": {"set": ["b", "c", "a"]}})
        );
    }

    #[test]
    fn atomic_values_are_replaced() {
        let live = json!({"spec": {"atomic": ["a", "b"], "am": {"a": "1", "b": "2"}}});
        let applied = json!({"spec": {"atomic": ["c"], "am": {"a": "1"}}});
        assert_eq!(merge(&live, &applied, &schema()).unwrap(), applied);
    }

    #[test]
    fn duplicates() {
        let s = schema();
        let dup = json!({"spec": {"set": ["a", "a"]}});
        assert_eq!(
            merge(&json!({}), &dup, &s).unwrap_err(),
            r#"duplicate entries for key [="a"]"#
        );
        // Live duplicates collapse into the applied item.
        assert_eq!(
            merge(&dup, &json!({"spec": {"set": ["a"]}}), &s).unwrap(),
            json!({"spec": {"set": ["a"]}})
        );
    }

    #[test]
    fn removal_keeps_the_containers_it_empties() {
        let s = schema();
        let v =
            json!({"spec": {"items": [{"name": "p", "v": "1"}], "set": ["x", "y"], "other": 1}});
        let items = Path::fields(&["spec", "items"]);
        let rm = FieldSet::from_paths([
            child(&items, PathElement::key([("name", json!("p"))])),
            child(
                &Path::fields(&["spec", "set"]),
                PathElement::Value(json!("x")),
            ),
        ]);
        assert_eq!(
            remove(&v, &rm, &s.root),
            json!({"spec": {"items": [], "set": ["y"], "other": 1}})
        );
        // A container named itself goes, and so does one with nothing left of it above.
        let rm = FieldSet::from_paths([Path::fields(&["spec", "items"])]);
        assert_eq!(
            remove(&v, &rm, &s.root),
            json!({"spec": {"set": ["x", "y"], "other": 1}})
        );
        let all = FieldSet::from_paths([Path::fields(&["spec"])]);
        assert_eq!(remove(&v, &all, &s.root), json!(null));
    }

    // Values as deep as Go reads (10,000 levels), merged and removed from on a test thread's
    // stack; the deepest map holds a list merged item by item.
    #[test]
    fn values_as_deep_as_go_reads_merge_and_remove_without_recursion() {
        let nest = |leaf: Value| {
            (0..10_000).fold(leaf, |inner, _| {
                Value::Object(Map::from_iter([("a", inner)]))
            })
        };
        let s = Schema::untyped();
        let merged = merge(
            &nest(json!({"x": 1, "l": [1]})),
            &nest(json!({"y": 2, "l": [2]})),
            &s,
        )
        .unwrap();
        assert!(merged == nest(json!({"x": 1, "y": 2, "l": [2]})));

        let deep = Path::fields(&vec!["a"; 10_000]);
        let rm = FieldSet::from_paths([child(&deep, PathElement::field("x"))]);
        assert!(remove(&merged, &rm, &s.root) == nest(json!({"y": 2, "l": [2]})));
        // Removing the last field of the deepest map leaves it empty, not gone.
        let rm = FieldSet::from_paths([
            child(&deep, PathElement::field("x")),
            child(&deep, PathElement::field("y")),
            child(&deep, PathElement::field("l")),
        ]);
        assert!(remove(&merged, &rm, &s.root) == nest(json!({})));
    }
}
