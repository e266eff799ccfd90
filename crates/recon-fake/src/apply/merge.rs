//! Merging an applied configuration into a live object, and removing fields from an object
//! (structured-merge-diff `typed/merge.go`, `typed/remove.go`).

use std::collections::{BTreeMap, BTreeSet};

use recon_apimachinery::json::{Map, Value};

use super::schema::{ListKind, ListType, MapType, Schema, Type};
use super::typed::{Node, field_type, item_pe, resolve};
use recon_apimachinery::fieldpath::FieldSet;
use recon_apimachinery::fieldpath::PathElement;

/// Merges `rhs` (the applied configuration) into `lhs` (the live object): scalars and atomic
/// values from `rhs` win, granular maps merge key by key, associative lists merge item by
/// item (`TypedValue.Merge`). Fails only on list items without a usable identity.
pub fn merge(lhs: &Value, rhs: &Value, schema: &Schema) -> Result<Value, String> {
    Ok(walk(&schema.root, Some(lhs), Some(rhs))?.unwrap_or(Value::Null))
}

fn walk(t: &Type, lhs: Option<&Value>, rhs: Option<&Value>) -> Result<Option<Value>, String> {
    // The new value's shape wins when the two differ (upstream merges the old shape on a
    // copy of the walker and discards it).
    let node = match (lhs, rhs) {
        (_, Some(r)) => resolve(t, Some(r)),
        (Some(l), None) => resolve(t, Some(l)),
        (None, None) => return Err("at least one of lhs and rhs must be provided".to_owned()),
    };
    match node {
        Node::Leaf(_) => Ok(keep_rhs(lhs, rhs)),
        Node::Map(m) => merge_map(m, lhs, rhs),
        Node::List(l) => merge_list(l, lhs, rhs),
    }
}

fn keep_rhs(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}

fn merge_map(
    m: &MapType,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, String> {
    let lm = lhs.and_then(Value::as_object);
    let rm = rhs.and_then(Value::as_object);
    let empty = lm.is_none_or(|m| m.is_empty()) && rm.is_none_or(|m| m.is_empty());
    if m.atomic || empty {
        return Ok(keep_rhs(lhs, rhs));
    }
    let mut out = Map::new();
    let keys: BTreeSet<&String> = lm.into_iter().chain(rm).flat_map(|o| o.keys()).collect();
    for k in keys {
        let merged = walk(
            field_type(m, k),
            lm.and_then(|o| o.get(k)),
            rm.and_then(|o| o.get(k)),
        )?;
        if let Some(v) = merged {
            out.insert(k.clone(), v);
        }
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
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

fn merge_list(
    l: &ListType,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, String> {
    let ll = lhs.and_then(Value::as_array);
    let rl = rhs.and_then(Value::as_array);
    let empty = ll.is_none_or(|v| v.is_empty()) && rl.is_none_or(|v| v.is_empty());
    if l.kind == ListKind::Atomic || empty {
        return Ok(keep_rhs(lhs, rhs));
    }
    let (ll, rl) = (
        ll.map_or(&[][..], Vec::as_slice),
        rl.map_or(&[][..], Vec::as_slice),
    );
    let (rhs_pes, observed_rhs) = index(l, rl, false)?;
    let (lhs_pes, observed_lhs) = index(l, ll, true)?;

    // Items only in the live list keep their place; applied items come in applied order,
    // and items in both follow the applied order (`visitListItems`).
    let mut shared = rhs_pes.iter().filter(|pe| observed_lhs.contains_key(*pe));
    let mut next_shared = shared.next();
    let mut merged_rhs = BTreeSet::new();
    let mut out = Vec::new();
    let item = |lc: Option<&Value>, rc: Option<&Value>| walk(&l.elem, lc, rc);
    let (mut li, mut ri) = (0, 0);
    while li < lhs_pes.len() || ri < rhs_pes.len() {
        if li < lhs_pes.len() && ri < rhs_pes.len() {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.insert(pe.clone());
                let o = item(observed_lhs.get(pe).copied(), observed_rhs.get(pe).copied())?;
                out.extend(o);
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
                let o = item(ll.get(li), None)?;
                out.extend(o);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rhs_pes.len() {
            let pe = &rhs_pes[ri];
            merged_rhs.insert(pe.clone());
            let o = item(observed_lhs.get(pe).copied(), observed_rhs.get(pe).copied())?;
            out.extend(o);
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out.into())))
}

/// Removes the paths in `to_remove`, each with everything under it (`TypedValue.RemoveItems`
/// of structured-merge-diff v6.3, which kube-apiserver 1.36 vendors). A map or list is `null`
/// when it was empty, atomic or named itself; one emptied by removals under it stays, as `{}`
/// or `[]` (`removingWalker` keeps "the empty container structure").
pub(super) fn remove(v: &Value, to_remove: &FieldSet, t: &Type) -> Value {
    // What a removal under a container left: an emptied child container stays, empty.
    fn emptied(before: &Value, after: Value) -> Value {
        match (before, after) {
            (Value::Object(_), Value::Null) => Value::Object(Map::new()),
            (Value::Array(_), Value::Null) => Value::Array(Vec::new().into()),
            (_, after) => after,
        }
    }
    match resolve(t, Some(v)) {
        Node::Leaf(_) => v.clone(),
        Node::List(l) => {
            let Value::Array(items) = v else {
                return Value::Null;
            };
            if items.is_empty() || l.kind == ListKind::Atomic {
                return Value::Null;
            }
            let mut out = Vec::new();
            let mut reached = false;
            for item in items {
                match item_pe(l, item) {
                    Ok(pe) if to_remove.members().contains(&pe) => {}
                    Ok(pe) => match to_remove.with_prefix(&pe) {
                        Some(sub) => {
                            reached = true;
                            out.push(emptied(item, remove(item, sub, &l.elem)));
                        }
                        None => out.push(item.clone()),
                    },
                    Err(_) => out.push(item.clone()),
                }
            }
            if out.is_empty() && !reached {
                Value::Null
            } else {
                Value::Array(out.into())
            }
        }
        Node::Map(m) => {
            let Value::Object(obj) = v else {
                return Value::Null;
            };
            if obj.is_empty() || m.atomic {
                return Value::Null;
            }
            let mut out = Map::new();
            let mut reached = false;
            for (k, val) in obj {
                let pe = PathElement::field(k);
                if to_remove.members().contains(&pe) {
                    continue;
                }
                let kept = match to_remove.with_prefix(&pe) {
                    Some(sub) => {
                        reached = true;
                        emptied(val, remove(val, sub, field_type(m, k)))
                    }
                    None => val.clone(),
                };
                out.insert(k.clone(), kept);
            }
            if out.is_empty() && !reached {
                Value::Null
            } else {
                Value::Object(out)
            }
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
}
