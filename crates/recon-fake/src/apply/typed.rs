//! Walking a value with its type: which shape a node takes, list item identities, the field
//! set a value sets, and upstream's validation of applied configurations
//! (structured-merge-diff `typed/helpers.go`, `tofieldset.go`, `validate.go`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use super::schema::{
    ATOMIC_LIST, DEDUCED_MAP, ListKind, ListType, MapType, OBJECT_MAP, Scalar, Schema, Type, parts,
};
use recon_apimachinery::fieldpath::FieldSet;
use recon_apimachinery::fieldpath::PathElement;
use recon_apimachinery::go_json::go_type;

use crate::strategic::gofmt::fmt_v;

/// The shape a type takes for a given value (`deduceAtom` + `handleAtom`).
#[derive(Clone, Copy)]
pub(super) enum Node<'a> {
    /// A scalar or anything tracked as one value; `None` accepts any value.
    Leaf(Option<Scalar>),
    Map(&'a MapType),
    List(&'a ListType),
}

impl Node<'_> {
    pub(super) fn same_shape(&self, other: &Node<'_>) -> bool {
        matches!(
            (self, other),
            (Node::Leaf(_), Node::Leaf(_))
                | (Node::Map(_), Node::Map(_))
                | (Node::List(_), Node::List(_))
        )
    }
}

/// Picks the shape of `t` for `v`. Upstream tries map, then scalar, then list when the value
/// does not decide (absent or null), so null resolves to a map where a map is possible.
pub(super) fn resolve<'a>(t: &'a Type, v: Option<&Value>) -> Node<'a> {
    let deduced = |map: &'a MapType| match v {
        Some(Value::Array(_)) => Node::List(&ATOMIC_LIST),
        Some(Value::Object(_) | Value::Null) | None => Node::Map(map),
        Some(_) => Node::Leaf(Some(Scalar::Untyped)),
    };
    match t {
        Type::Scalar(s) => Node::Leaf(Some(*s)),
        Type::Atomic => Node::Leaf(None),
        Type::Deduced => deduced(&DEDUCED_MAP),
        Type::Object => deduced(&OBJECT_MAP),
        Type::Map(m) => Node::Map(m),
        Type::List(l) => Node::List(l),
        Type::Any(m, l) => match v {
            Some(Value::Array(_)) => Node::List(l),
            Some(Value::Object(_) | Value::Null) | None => Node::Map(m),
            Some(_) => Node::Leaf(Some(Scalar::Untyped)),
        },
    }
}

/// The type of a map key; keys nobody declared are treated as deduced.
pub(super) fn field_type<'a>(m: &'a MapType, key: &str) -> &'a Type {
    m.field(key).map_or(&Type::Deduced, |(t, _)| t)
}

/// The identity of a list item (`listItemToPathElement`).
pub(super) fn item_pe(list: &ListType, item: &Value) -> Result<PathElement, String> {
    match &list.kind {
        ListKind::Atomic => Err("invalid indexing of non-associative list".to_owned()),
        ListKind::Map(keys) => {
            let m = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".to_owned());
                }
                Value::Object(m) => m,
                _ => {
                    return Err(
                        "associative list with keys may not have non-map elements".to_owned()
                    );
                }
            };
            let defaults = match &list.elem {
                Type::Map(et) => Some(&et.defaults),
                _ => None,
            };
            let mut fields = Vec::new();
            for k in keys {
                if let Some(v) = m.get(k) {
                    fields.push((k.clone(), v.clone()));
                } else if let Some(d) = defaults.and_then(|d| d.get(k)) {
                    fields.push((k.clone(), d.clone()));
                }
            }
            if !keys.is_empty() && fields.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|k| go_quote(k)).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            Ok(PathElement::key(fields))
        }
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_owned())
            }
            Value::Array(_) => {
                Err("not supported: associative list with lists as elements".to_owned())
            }
            Value::Null => Err(
                "associative list without keys has an element that's an explicit null".to_owned(),
            ),
            v => Ok(PathElement::Value(v.clone())),
        },
    }
}

/// The fields a value sets, as an applied configuration owns them (`TypedValue.ToFieldSet`):
/// scalars, atomic lists and maps, every list item, and map keys that are undeclared or
/// hold `null` or `{}`.
pub fn fields_of(value: &Value, schema: &Schema) -> FieldSet {
    /// One step of the walk.
    enum Step<'a> {
        /// Add what `value`, of type `t`, sets at the current path.
        Visit(&'a Type, &'a Value),
        /// Add the current path.
        Own,
        Enter(PathElement),
        Leave,
    }
    /// A node of the set being built: the element it goes under, whether that path is in the
    /// set itself, and what is under it. A node joins its parent when the walk leaves it, so
    /// each path is added once, under its parent, not walked down again from the root.
    struct Open {
        pe: PathElement,
        owned: bool,
        set: FieldSet,
    }
    let mut root = FieldSet::new();
    let mut open: Vec<Open> = Vec::new();
    // What is left to do, the next step last: upstream recurses once a level of the
    // value, this keeps its own list, so a value as deep as Go reads takes no more stack.
    let mut todo = vec![Step::Visit(&schema.root, value)];
    while let Some(step) = todo.pop() {
        // The current path is in the set (the whole object, the empty path, never is).
        let own = |open: &mut Vec<Open>| {
            if let Some(node) = open.last_mut() {
                node.owned = true;
            }
        };
        let (t, v) = match step {
            Step::Visit(t, v) => (t, v),
            Step::Own => {
                own(&mut open);
                continue;
            }
            Step::Enter(pe) => {
                open.push(Open {
                    pe,
                    owned: false,
                    set: FieldSet::new(),
                });
                continue;
            }
            Step::Leave => {
                if let Some(node) = open.pop() {
                    let parent = open.last_mut().map_or(&mut root, |p| &mut p.set);
                    if node.owned {
                        parent.add_member(node.pe.clone());
                    }
                    parent.adopt(node.pe, node.set);
                }
                continue;
            }
        };
        let start = todo.len();
        match resolve(t, Some(v)) {
            Node::Leaf(_) => own(&mut open),
            Node::List(l) if l.kind == ListKind::Atomic => own(&mut open),
            Node::List(l) => {
                let Value::Array(items) = v else { continue };
                let pes: Vec<Option<PathElement>> =
                    items.iter().map(|i| item_pe(l, i).ok()).collect();
                // A duplicated item is owned once, as a whole.
                let mut seen = BTreeSet::new();
                let mut dups = BTreeSet::new();
                let here = open.last_mut().map_or(&mut root, |p| &mut p.set);
                for pe in pes.iter().flatten() {
                    if !seen.insert(pe.clone()) && dups.insert(pe.clone()) {
                        here.add_member(pe.clone());
                    }
                }
                for (item, pe) in items.iter().zip(pes) {
                    let Some(pe) = pe else { continue };
                    if dups.contains(&pe) {
                        continue;
                    }
                    todo.extend([
                        Step::Enter(pe),
                        Step::Visit(&l.elem, item),
                        Step::Own,
                        Step::Leave,
                    ]);
                }
            }
            Node::Map(m) if m.atomic => own(&mut open),
            Node::Map(m) => {
                let Value::Object(obj) = v else { continue };
                for (k, val) in obj.iter() {
                    todo.push(Step::Enter(PathElement::field(k)));
                    todo.push(Step::Visit(field_type(m, k), val));
                    let empty = matches!(val, Value::Object(o) if o.is_empty());
                    if val.is_null() || empty || !m.declares(k) {
                        todo.push(Step::Own);
                    }
                    todo.push(Step::Leave);
                }
            }
        }
        // The steps were listed in order: the first is done first.
        todo[start..].reverse();
    }
    root
}

/// Adds every declared field that has children in `set` as a member itself
/// (`Set.EnsureNamedFieldsAreMembers`), so that removing it removes the whole field. One node
/// of the set at a time: a set is as deep as the object it tracks.
pub(super) fn ensure_named(set: &FieldSet, t: Option<&Type>) -> FieldSet {
    /// A node being copied: its children left, the map or list type of its value, what is
    /// built of it so far, and the element it goes under.
    struct Open<'a> {
        children: std::collections::btree_map::Iter<'a, PathElement, FieldSet>,
        map: Option<&'a MapType>,
        list: Option<&'a ListType>,
        members: BTreeSet<PathElement>,
        built: BTreeMap<PathElement, FieldSet>,
        pe: Option<&'a PathElement>,
    }
    fn start<'a>(set: &'a FieldSet, t: Option<&'a Type>, pe: Option<&'a PathElement>) -> Open<'a> {
        let (map, list) = t.map_or((None, None), parts);
        Open {
            children: set.children().iter(),
            map,
            list,
            members: set.members().clone(),
            built: BTreeMap::new(),
            pe,
        }
    }
    let mut open = vec![start(set, t, None)];
    while let Some(innermost) = open.last_mut() {
        if let Some((pe, child)) = innermost.children.next() {
            let child_type = match (pe, innermost.map, innermost.list) {
                (PathElement::Field(name), Some(m), _) => {
                    if m.declares(name) {
                        innermost.members.insert(pe.clone());
                    }
                    m.field(name).map(|(t, _)| t)
                }
                (PathElement::Key(_), _, Some(l)) => Some(&l.elem),
                _ => None,
            };
            open.push(start(child, child_type, Some(pe)));
            continue;
        }
        let Some(done) = open.pop() else { break };
        let node = FieldSet::from_parts(done.members, done.built);
        match (done.pe, open.last_mut()) {
            (Some(pe), Some(parent)) => {
                parent.built.insert(pe.clone(), node);
            }
            // Only the root has no element to go under.
            _ => return node,
        }
    }
    FieldSet::new()
}

/// Upstream's validation of a typed value (`validatingObjectWalker`); each error is
/// `path: message` in upstream's words.
pub(super) fn validate(value: &Value, schema: &Schema, allow_duplicates: bool) -> Vec<String> {
    let mut errs = Vec::new();
    // `path`: the checked value's path, extended for each member and cut back after it (one
    // buffer for the walk). Upstream recurses once a level of the value; this keeps its
    // own list of what is left, so a value as deep as Go reads takes no more stack.
    let mut path = String::new();
    let mut todo = vec![Checking::Value(&schema.root, value)];
    while let Some(step) = todo.pop() {
        let (t, v) = match step {
            Checking::Value(t, v) => (t, v),
            Checking::Error(e) => {
                errs.push(e);
                continue;
            }
            Checking::Field(name) => {
                path.push('.');
                path.push_str(name);
                continue;
            }
            Checking::Item(pe) => {
                write!(path, "{pe}").ok();
                continue;
            }
            Checking::Leave(len) => {
                path.truncate(len);
                continue;
            }
        };
        let start = todo.len();
        check(t, v, &path, allow_duplicates, &mut errs, &mut todo);
        // The steps were listed in order: the first is done first.
        todo[start..].reverse();
    }
    errs
}

/// `ValidationErrors.Error()`.
pub(super) fn join_errors(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        _ => {
            let mut out = String::from("errors:");
            for e in errs {
                out.push_str("\n  ");
                out.push_str(e);
            }
            out
        }
    }
}

fn err_at(path: &str, msg: String) -> String {
    if path.is_empty() {
        msg
    } else {
        format!("{path}: {msg}")
    }
}

/// One step of [`validate`]'s walk.
enum Checking<'a> {
    /// Check `value`, of type `t`, at the current path.
    Value(&'a Type, &'a Value),
    /// An error found while the walk listed a container's members: reported once the members
    /// before it are checked, as upstream reports it.
    Error(String),
    /// Extend the current path by a map's field (`.name`).
    Field(&'a str),
    /// Extend the current path by a list's item (`[name="a"]`, `[0]`).
    Item(PathElement),
    /// Cut the current path back to this length.
    Leave(usize),
}

/// Checks `v`, of type `t`, at `path`: a scalar at once; a list's items and a map's fields
/// are listed in `todo` (in order), each between the steps that extend the path for it and
/// cut it back. An item without an identity, or an undeclared field, ends the container's
/// list with its error, as upstream stops there.
fn check<'a>(
    t: &'a Type,
    v: &'a Value,
    path: &str,
    allow_dup: bool,
    errs: &mut Vec<String>,
    todo: &mut Vec<Checking<'a>>,
) {
    match resolve(t, Some(v)) {
        Node::Leaf(Some(kind)) => {
            if let Some(msg) = check_scalar(kind, v) {
                errs.push(err_at(path, msg));
            }
        }
        Node::Leaf(None) => {}
        Node::List(l) => match v {
            Value::Null => {}
            Value::Array(items) => {
                let mut observed = BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    let pe = if l.kind == ListKind::Atomic {
                        PathElement::Index(i as i64)
                    } else {
                        match item_pe(l, item) {
                            Ok(pe) => pe,
                            Err(e) => {
                                todo.push(Checking::Error(err_at(
                                    path,
                                    format!("element {i}: {e}"),
                                )));
                                return;
                            }
                        }
                    };
                    if l.kind != ListKind::Atomic && !observed.insert(pe.clone()) && !allow_dup {
                        todo.push(Checking::Error(err_at(
                            path,
                            format!("duplicate entries for key {pe}"),
                        )));
                    }
                    todo.push(Checking::Item(pe));
                    todo.push(Checking::Value(&l.elem, item));
                    todo.push(Checking::Leave(path.len()));
                }
            }
            other => errs.push(err_at(
                path,
                format!("expected list, got &{{{}}}", fmt_v(other)),
            )),
        },
        Node::Map(m) => match v {
            Value::Null => {}
            Value::Object(obj) => {
                for (k, val) in obj.iter() {
                    match m.field(k) {
                        Some((ft, _)) => {
                            todo.push(Checking::Field(k));
                            todo.push(Checking::Value(ft, val));
                            todo.push(Checking::Leave(path.len()));
                        }
                        None => {
                            let at = format!("{path}.{k}");
                            todo.push(Checking::Error(err_at(
                                &at,
                                "field not declared in schema".to_owned(),
                            )));
                            return;
                        }
                    }
                }
            }
            other => errs.push(err_at(
                path,
                format!("expected map, got &{{{}}}", fmt_v(other)),
            )),
        },
    }
}

/// `validateScalar`; null is valid everywhere.
fn check_scalar(kind: Scalar, v: &Value) -> Option<String> {
    let ok = matches!(
        (kind, v),
        (_, Value::Null)
            | (Scalar::Numeric, Value::Number(_))
            | (Scalar::String, Value::String(_))
            | (Scalar::Boolean, Value::Bool(_))
            | (
                Scalar::Untyped,
                Value::Number(_) | Value::String(_) | Value::Bool(_)
            )
    );
    if ok {
        return None;
    }
    Some(match kind {
        Scalar::Numeric => format!("expected numeric (int or float), got {}", go_type(v)),
        Scalar::String => format!(
            "expected string, got &value.valueUnstructured{{Value:{}}}",
            fmt_v(v)
        ),
        Scalar::Boolean => format!("expected boolean, got &{{{}}}", fmt_v(v)),
        Scalar::Untyped => format!("expected any scalar, got &{{{}}}", fmt_v(v)),
    })
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use recon_apimachinery::fieldpath::Path;

    fn lists_schema() -> Schema {
        Schema::from_openapi_v3(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "v": {"type": "string"}}}},
            "n": {"type": "integer"},
            "obj": {"type": "object", "properties": {"a": {"type": "string"}}}
        }}}}))
        .unwrap()
    }

    #[test]
    fn field_set_of_keyed_lists_and_sets() {
        let s = lists_schema();
        let v = json!({"spec": {"set": ["a"], "items": [{"name": "x", "v": "1"}], "obj": {}}});
        let set = fields_of(&v, &s);
        assert_eq!(
            set.to_fields_v1(),
            json!({"f:spec": {
                "f:items": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}, "f:v": {}}},
                "f:obj": {},
                "f:set": {"v:\"a\"": {}}
            }})
        );
    }

    #[test]
    fn duplicates_are_owned_whole() {
        let s = lists_schema();
        let v = json!({"spec": {"items": [{"name": "x", "v": "1"}, {"name": "x", "v": "2"}, {"name": "y"}]}});
        assert_eq!(
            fields_of(&v, &s).to_fields_v1(),
            json!({"f:spec": {"f:items": {
                "k:{\"name\":\"x\"}": {},
                "k:{\"name\":\"y\"}": {".": {}, "f:name": {}}
            }}})
        );
    }

    #[test]
    fn validation_messages() {
        let s = lists_schema();
        let errs = validate(
            &json!({"spec": {"items": [{"name": "x"}, {"name": "x"}], "set": ["a", "a"], "n": "x"}}),
            &s,
            false,
        );
        assert_eq!(
            errs,
            [
                r#".spec.items: duplicate entries for key [name="x"]"#,
                ".spec.n: expected numeric (int or float), got string",
                r#".spec.set: duplicate entries for key [="a"]"#,
            ]
        );
        assert!(
            validate(
                &json!({"spec": {"items": [{"name": "x"}, {"name": "x"}]}}),
                &s,
                true
            )
            .is_empty()
        );
        assert_eq!(
            validate(&json!({"spec": {"items": [{"v": "1"}]}}), &s, false),
            [
                r#".spec.items: element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn't have default values for any key fields)"#
            ]
        );
        assert_eq!(
            validate(&json!({"spec": {"obj": [1]}}), &s, false),
            [".spec.obj: expected map, got &{[1]}"]
        );
        assert_eq!(
            validate(&json!({"metadata": {"bogus": 1}}), &s, false),
            [".metadata.bogus: field not declared in schema"]
        );
        assert_eq!(join_errors(&["a".into(), "b".into()]), "errors:\n  a\n  b");
    }

    #[test]
    fn ensure_named_marks_declared_parents() {
        let s = lists_schema();
        let set = FieldSet::from_paths([Path(vec![
            PathElement::field("spec"),
            PathElement::field("items"),
            PathElement::key([("name", json!("x"))]),
            PathElement::field("v"),
        ])]);
        let named = ensure_named(&set, Some(&s.root));
        assert!(named.has(&Path::fields(&["spec"]).0));
        assert!(named.has(&Path::fields(&["spec", "items"]).0));
        // A list item is not a named field.
        assert!(!named.has(&[
            PathElement::field("spec"),
            PathElement::field("items"),
            PathElement::key([("name", json!("x"))])
        ]));
    }

    // A value as deep as Go reads (10,000 levels) yields its field set, and is validated, on a
    // test thread's stack: an undeclared field owns itself at every level.
    #[test]
    fn the_fields_of_a_value_as_deep_as_go_reads() {
        use recon_apimachinery::json::Map;
        let mut value = json!(1);
        for _ in 0..10_000 {
            value = Value::Object(Map::from_iter([("a", value)]));
        }
        let set = fields_of(&value, &Schema::untyped());
        for depth in [1, 5_000, 10_000] {
            assert!(set.has(&Path::fields(&vec!["a"; depth]).0), "{depth}");
        }
        assert!(!set.has(&Path::fields(&vec!["a"; 10_001]).0));
        assert_eq!(
            validate(&value, &Schema::untyped(), false),
            Vec::<String>::new()
        );
        // Nothing is declared in an untyped value: no parent becomes a member.
        assert!(ensure_named(&set, Some(&Schema::untyped().root)) == set);
    }

    // A set as deep as Go reads, of a type that declares every field at every level (a
    // built-in's stand-in).
    #[test]
    fn ensure_named_walks_a_set_as_deep_as_go_reads() {
        let set = FieldSet::from_paths([Path::fields(&vec!["a"; 10_000])]);
        let named = ensure_named(&set, Some(&Type::Object));
        for depth in [1, 5_000, 9_999] {
            assert!(named.has(&Path::fields(&vec!["a"; depth]).0), "{depth}");
        }
        assert_eq!(named.paths().len(), 10_000);
    }
}
