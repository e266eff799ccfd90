//! What the merge needs to know about an object's shape: which maps are atomic, which lists
//! are atomic, sets or keyed maps, and which map keys are declared fields.
//!
//! CRD schemas are converted the way kube-openapi's `schemaconv` does it
//! (`pkg/schemaconv/openapi.go` `parseSchema`, `parseObject`, `parseList`).

use std::collections::BTreeMap;
use std::fmt;
use std::mem;

use recon_apimachinery::json::Value;

use crate::teardown::{self, Tree};

/// The scalar kinds structured-merge-diff validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `integer` or `number`.
    Numeric,
    /// `string`.
    String,
    /// `boolean`.
    Boolean,
    /// No type: any scalar.
    Untyped,
}

/// How the items of a list are tracked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced as a whole (the default).
    Atomic,
    /// Items are scalars, owned one by one (`x-kubernetes-list-type: set`).
    Set,
    /// Items are maps identified by these fields (`x-kubernetes-list-type: map`).
    Map(Vec<String>),
}

/// A list type.
#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    /// The item type.
    pub elem: Type,
    /// How items are tracked.
    pub kind: ListKind,
}

/// A map (object) type.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// Declared fields (`properties`).
    pub fields: BTreeMap<String, Type>,
    /// The type of undeclared keys (`additionalProperties`, or deduced under
    /// `x-kubernetes-preserve-unknown-fields`); `None` when unknown keys are not allowed.
    pub elem: Option<Type>,
    /// `x-kubernetes-map-type: atomic`.
    pub atomic: bool,
    /// Field defaults, used for missing keys of keyed-list items.
    pub defaults: BTreeMap<String, Value>,
    /// Every key counts as a declared field: the fallback for built-in structs whose
    /// OpenAPI we do not carry.
    pub open_struct: bool,
}

impl MapType {
    /// A granular map with these declared fields and no others.
    pub fn with_fields<I: IntoIterator<Item = (&'static str, Type)>>(fields: I) -> Self {
        MapType {
            fields: fields.into_iter().map(|(k, t)| (k.to_owned(), t)).collect(),
            elem: None,
            atomic: false,
            defaults: BTreeMap::new(),
            open_struct: false,
        }
    }

    /// A granular map whose keys all have type `elem` (`additionalProperties`).
    pub fn of(elem: Type) -> Self {
        MapType {
            fields: BTreeMap::new(),
            elem: Some(elem),
            atomic: false,
            defaults: BTreeMap::new(),
            open_struct: false,
        }
    }

    /// The type of `key` and whether it is a declared field.
    pub fn field(&self, key: &str) -> Option<(&Type, bool)> {
        match self.fields.get(key) {
            Some(t) => Some((t, true)),
            None => self.elem.as_ref().map(|t| (t, self.open_struct)),
        }
    }

    /// Whether `key` is a declared field.
    pub fn declares(&self, key: &str) -> bool {
        self.open_struct || self.fields.contains_key(key)
    }
}

/// A node of the schema.
///
/// A CRD's schema nests as deep as the CRD, which Go reads to 10,000 levels: cloning,
/// comparing, printing and dropping a type (its [`MapType`]s and [`ListType`]s) go through
/// its tree a node at a time, with their own list of what is left, not the thread's stack.
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// Anything, tracked as one value (`__untyped_atomic_`).
    Atomic,
    /// Shape taken from the value: maps are granular with deduced values, lists atomic
    /// (`__untyped_deduced_`); what `x-kubernetes-preserve-unknown-fields` gives.
    Deduced,
    /// Like [`Type::Deduced`] but every map key counts as a declared field: a stand-in for
    /// built-in structs.
    Object,
    /// A map.
    Map(Box<MapType>),
    /// A list.
    List(Box<ListType>),
    /// No `type` in the schema: a scalar, this list or this map.
    Any(Box<MapType>, Box<ListType>),
}

impl Type {
    /// The map and list types this node holds (what it may resolve to for a value is
    /// [`parts`]).
    fn own_parts(&self) -> (Option<&MapType>, Option<&ListType>) {
        match self {
            Type::Map(m) => (Some(m), None),
            Type::List(l) => (None, Some(l)),
            Type::Any(m, l) => (Some(m), Some(l)),
            Type::Scalar(_) | Type::Atomic | Type::Deduced | Type::Object => (None, None),
        }
    }

    /// [`Type::own_parts`], to change.
    fn own_parts_mut(&mut self) -> (Option<&mut MapType>, Option<&mut ListType>) {
        match self {
            Type::Map(m) => (Some(m), None),
            Type::List(l) => (None, Some(l)),
            Type::Any(m, l) => (Some(m), Some(l)),
            Type::Scalar(_) | Type::Atomic | Type::Deduced | Type::Object => (None, None),
        }
    }

    /// Whether other types are below this one.
    fn nests(&self) -> bool {
        matches!(self, Type::Map(_) | Type::List(_) | Type::Any(..))
    }

    /// This node, with [`Type::Atomic`] in place of each type that nests below it, for
    /// [`Clone`] to fill in.
    fn shallow_copy(&self) -> Type {
        let leaf = |t: &Type| match t {
            Type::Scalar(s) => Type::Scalar(*s),
            Type::Deduced => Type::Deduced,
            Type::Object => Type::Object,
            Type::Atomic | Type::Map(_) | Type::List(_) | Type::Any(..) => Type::Atomic,
        };
        let map = |m: &MapType| {
            Box::new(MapType {
                fields: m.fields.iter().map(|(k, t)| (k.clone(), leaf(t))).collect(),
                elem: m.elem.as_ref().map(leaf),
                atomic: m.atomic,
                defaults: m.defaults.clone(),
                open_struct: m.open_struct,
            })
        };
        let list = |l: &ListType| {
            Box::new(ListType {
                elem: leaf(&l.elem),
                kind: l.kind.clone(),
            })
        };
        match self {
            Type::Map(m) => Type::Map(map(m)),
            Type::List(l) => Type::List(list(l)),
            Type::Any(m, l) => Type::Any(map(m), list(l)),
            Type::Scalar(_) | Type::Atomic | Type::Deduced | Type::Object => leaf(self),
        }
    }

    /// Whether the nodes are equal but for their fields' names and the types below them
    /// (they are as many, in the same places).
    fn same_node(&self, other: &Type) -> bool {
        let maps = |a: &MapType, b: &MapType| {
            a.atomic == b.atomic
                && a.open_struct == b.open_struct
                && a.elem.is_some() == b.elem.is_some()
                && a.fields.len() == b.fields.len()
                && a.defaults == b.defaults
        };
        match (self, other) {
            (Type::Scalar(a), Type::Scalar(b)) => a == b,
            (Type::Atomic, Type::Atomic)
            | (Type::Deduced, Type::Deduced)
            | (Type::Object, Type::Object) => true,
            (Type::Map(a), Type::Map(b)) => maps(a, b),
            (Type::List(a), Type::List(b)) => a.kind == b.kind,
            (Type::Any(am, al), Type::Any(bm, bl)) => maps(am, bm) && al.kind == bl.kind,
            _ => false,
        }
    }
}

impl Clone for Type {
    fn clone(&self) -> Self {
        /// Copies into the placeholder `to` the type `from` if it nests, leaving what is below
        /// it to `pending`.
        fn fill<'a>(from: &'a Type, to: &'a mut Type, pending: &mut Vec<(&'a Type, &'a mut Type)>) {
            if from.nests() {
                *to = from.shallow_copy();
                pending.push((from, to));
            }
        }
        let mut copy = self.shallow_copy();
        // Each node copied, with its original: the types that nest below it are still to copy.
        let mut pending = Vec::new();
        if self.nests() {
            pending.push((self, &mut copy));
        }
        while let Some((from, to)) = pending.pop() {
            let ((from_map, from_list), (to_map, to_list)) = (from.own_parts(), to.own_parts_mut());
            if let (Some(from), Some(to)) = (from_map, to_map) {
                for (from, to) in from.fields.values().zip(to.fields.values_mut()) {
                    fill(from, to, &mut pending);
                }
                if let (Some(from), Some(to)) = (&from.elem, &mut to.elem) {
                    fill(from, to, &mut pending);
                }
            }
            if let (Some(from), Some(to)) = (from_list, to_list) {
                fill(&from.elem, &mut to.elem, &mut pending);
            }
        }
        copy
    }
}

impl PartialEq for Type {
    fn eq(&self, other: &Self) -> bool {
        /// Whether `a` and `b` may be equal: leaves are compared, types that nest go to
        /// `pending`.
        fn alike<'a>(a: &'a Type, b: &'a Type, pending: &mut Vec<(&'a Type, &'a Type)>) -> bool {
            if a.nests() || b.nests() {
                pending.push((a, b));
                true
            } else {
                a.same_node(b)
            }
        }
        let mut pending = Vec::new();
        let (mut a, mut b) = (self, other);
        loop {
            if !a.same_node(b) {
                return false;
            }
            let ((a_map, a_list), (b_map, b_list)) = (a.own_parts(), b.own_parts());
            if let (Some(a), Some(b)) = (a_map, b_map) {
                for ((a_name, a), (b_name, b)) in a.fields.iter().zip(&b.fields) {
                    if a_name != b_name || !alike(a, b, &mut pending) {
                        return false;
                    }
                }
                if let (Some(a), Some(b)) = (&a.elem, &b.elem)
                    && !alike(a, b, &mut pending)
                {
                    return false;
                }
            }
            if let (Some(a), Some(b)) = (a_list, b_list)
                && !alike(&a.elem, &b.elem, &mut pending)
            {
                return false;
            }
            match pending.pop() {
                Some(next) => (a, b) = next,
                None => return true,
            }
        }
    }
}

/// A derived drop would take a frame per level: see [`teardown`]. The nodes are the [`Type`]s;
/// the maps and lists that hold a node's children drop them.
impl Tree for Type {
    /// The declared fields, and the types of undeclared keys and of list items.
    type Children = (BTreeMap<String, Type>, [Option<Type>; 2]);

    fn take_children(&mut self) -> Self::Children {
        let (map, list) = self.own_parts_mut();
        let (fields, elem) = map.map_or_else(Default::default, MapType::take_children);
        (fields, [elem, list.and_then(ListType::take_elem)])
    }

    fn each((fields, elems): Self::Children, into: &mut Vec<Type>) {
        into.extend(fields.into_values().filter(Type::nests));
        into.extend(elems.into_iter().flatten());
    }
}

impl MapType {
    /// The fields, and the type of undeclared keys when other types nest below it.
    fn take_children(&mut self) -> (BTreeMap<String, Type>, Option<Type>) {
        (
            mem::take(&mut self.fields),
            self.elem.take_if(|t| t.nests()),
        )
    }
}

impl ListType {
    /// The item type, when other types nest below it.
    fn take_elem(&mut self) -> Option<Type> {
        self.elem
            .nests()
            .then(|| mem::replace(&mut self.elem, Type::Atomic))
    }
}

impl Drop for MapType {
    fn drop(&mut self) {
        // Most often nothing nests below: a map of scalars, or one already taken apart.
        if self.fields.is_empty() && !self.elem.as_ref().is_some_and(Type::nests) {
            return;
        }
        let (fields, elem) = self.take_children();
        teardown::drop_taken::<Type>((fields, [elem, None]));
    }
}

impl Drop for ListType {
    fn drop(&mut self) {
        if let Some(elem) = self.take_elem() {
            teardown::drop_taken::<Type>((BTreeMap::new(), [Some(elem), None]));
        }
    }
}

/// As `#[derive(Debug)]` writes a type (`{:#?}` too), a node at a time.
impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut w = DebugWriter {
            pretty: f.alternate(),
            f,
            indent: 0,
            line_start: false,
        };
        let mut todo = vec![Piece::Type(self)];
        while let Some(piece) = todo.pop() {
            let start = todo.len();
            match piece {
                Piece::Type(Type::Scalar(s)) => {
                    todo.extend(Piece::tuple("Scalar", [Piece::Leaf(s)]));
                }
                Piece::Type(Type::Atomic) => w.put("Atomic")?,
                Piece::Type(Type::Deduced) => w.put("Deduced")?,
                Piece::Type(Type::Object) => w.put("Object")?,
                Piece::Type(Type::Map(m)) => todo.extend(Piece::tuple("Map", [Piece::Map(m)])),
                Piece::Type(Type::List(l)) => todo.extend(Piece::tuple("List", [Piece::List(l)])),
                Piece::Type(Type::Any(m, l)) => {
                    todo.extend(Piece::tuple("Any", [Piece::Map(m), Piece::List(l)]));
                }
                Piece::Map(m) => todo.extend(Piece::members(
                    "MapType",
                    Delim::Struct,
                    [
                        (Some("fields"), Piece::Fields(&m.fields)),
                        (Some("elem"), Piece::Elem(&m.elem)),
                        (Some("atomic"), Piece::Leaf(&m.atomic)),
                        (Some("defaults"), Piece::Leaf(&m.defaults)),
                        (Some("open_struct"), Piece::Leaf(&m.open_struct)),
                    ],
                )),
                Piece::List(l) => todo.extend(Piece::members(
                    "ListType",
                    Delim::Struct,
                    [
                        (Some("elem"), Piece::Type(&l.elem)),
                        (Some("kind"), Piece::Leaf(&l.kind)),
                    ],
                )),
                Piece::Fields(fields) if fields.is_empty() => w.put("{}")?,
                Piece::Fields(fields) => {
                    todo.push(Piece::Open("", Delim::Map));
                    for (i, (name, t)) in fields.iter().enumerate() {
                        todo.extend([Piece::Leaf(name), Piece::Text(": "), Piece::Type(t)]);
                        todo.push(Piece::End(i + 1 == fields.len()));
                    }
                    todo.push(Piece::Close(Delim::Map));
                }
                Piece::Elem(Some(t)) => todo.extend(Piece::tuple("Some", [Piece::Type(t)])),
                Piece::Elem(None) => w.put("None")?,
                Piece::Leaf(v) => w.leaf(v)?,
                Piece::Text(text) => w.put(text)?,
                Piece::Field(name) => {
                    w.put(name)?;
                    w.put(": ")?;
                }
                Piece::Open(name, delim) => w.open(name, delim)?,
                Piece::End(last) => w.end(last)?,
                Piece::Close(delim) => w.close(delim)?,
            }
            // The pieces were listed in order: the first is written first.
            todo[start..].reverse();
        }
        Ok(())
    }
}

/// What is left to write of a [`Type`]'s `Debug`.
enum Piece<'a> {
    Type(&'a Type),
    Map(&'a MapType),
    List(&'a ListType),
    Fields(&'a BTreeMap<String, Type>),
    Elem(&'a Option<Type>),
    /// A value that holds no type, written by its own `Debug`.
    Leaf(&'a dyn fmt::Debug),
    Text(&'static str),
    /// A struct field's name, before its value.
    Field(&'static str),
    /// The start of a tuple, struct or map, with its name.
    Open(&'static str, Delim),
    /// The end of a member: whether it is the last.
    End(bool),
    Close(Delim),
}

impl<'a> Piece<'a> {
    /// A tuple (`Name(a, b)`) of these members.
    fn tuple<const N: usize>(
        name: &'static str,
        members: [Piece<'a>; N],
    ) -> impl Iterator<Item = Piece<'a>> {
        Piece::members(name, Delim::Tuple, members.map(|m| (None, m)))
    }

    /// A tuple or struct (`Name { a: x, b: y }`) of these members, each after its field's
    /// name in a struct.
    fn members<const N: usize>(
        name: &'static str,
        delim: Delim,
        members: [(Option<&'static str>, Piece<'a>); N],
    ) -> impl Iterator<Item = Piece<'a>> {
        let members = members
            .into_iter()
            .enumerate()
            .flat_map(move |(i, (field, m))| {
                [
                    field.map(Piece::Field),
                    Some(m),
                    Some(Piece::End(i + 1 == N)),
                ]
            });
        std::iter::once(Piece::Open(name, delim))
            .chain(members.flatten())
            .chain([Piece::Close(delim)])
    }
}

/// The kind of a container [`DebugWriter`] writes.
#[derive(Clone, Copy)]
enum Delim {
    Tuple,
    Struct,
    Map,
}

/// Writes what `Formatter::debug_tuple`, `debug_struct` and `debug_map` write, keeping the
/// indentation their nested pretty forms take.
struct DebugWriter<'a, 'f> {
    f: &'a mut fmt::Formatter<'f>,
    pretty: bool,
    /// The containers open around what is written (pretty only).
    indent: usize,
    line_start: bool,
}

impl DebugWriter<'_, '_> {
    /// Writes `text`, each line indented (pretty only).
    fn put(&mut self, text: &str) -> fmt::Result {
        if !self.pretty {
            return self.f.write_str(text);
        }
        for line in text.split_inclusive('\n') {
            if self.line_start {
                for _ in 0..self.indent {
                    self.f.write_str("    ")?;
                }
            }
            self.line_start = line.ends_with('\n');
            self.f.write_str(line)?;
        }
        Ok(())
    }

    /// Writes a value by its own `Debug`.
    fn leaf(&mut self, v: &dyn fmt::Debug) -> fmt::Result {
        if self.pretty {
            self.put(&format!("{v:#?}"))
        } else {
            v.fmt(self.f)
        }
    }

    /// Starts a container named `name`.
    fn open(&mut self, name: &str, delim: Delim) -> fmt::Result {
        self.put(name)?;
        self.put(match (delim, self.pretty) {
            (Delim::Tuple, _) => "(",
            (Delim::Struct, true) => " {",
            (Delim::Struct, false) => " { ",
            (Delim::Map, _) => "{",
        })?;
        if self.pretty {
            self.put("\n")?;
            self.indent += 1;
        }
        Ok(())
    }

    /// Ends a member, the `last` of its container or not.
    fn end(&mut self, last: bool) -> fmt::Result {
        match (self.pretty, last) {
            (true, _) => self.put(",\n"),
            (false, false) => self.put(", "),
            (false, true) => Ok(()),
        }
    }

    /// Ends a container.
    fn close(&mut self, delim: Delim) -> fmt::Result {
        if self.pretty {
            self.indent = self.indent.saturating_sub(1);
        }
        self.put(match (delim, self.pretty) {
            (Delim::Tuple, _) => ")",
            (Delim::Struct, true) => "}",
            (Delim::Struct, false) => " }",
            (Delim::Map, _) => "}",
        })
    }
}

pub(super) static DEDUCED_MAP: MapType = MapType {
    fields: BTreeMap::new(),
    elem: Some(Type::Deduced),
    atomic: false,
    defaults: BTreeMap::new(),
    open_struct: false,
};

pub(super) static OBJECT_MAP: MapType = MapType {
    fields: BTreeMap::new(),
    elem: Some(Type::Object),
    atomic: false,
    defaults: BTreeMap::new(),
    open_struct: true,
};

pub(super) static ATOMIC_MAP: MapType = MapType {
    fields: BTreeMap::new(),
    elem: Some(Type::Atomic),
    atomic: true,
    defaults: BTreeMap::new(),
    open_struct: false,
};

pub(super) static ATOMIC_LIST: ListType = ListType {
    elem: Type::Atomic,
    kind: ListKind::Atomic,
};

/// What a type offers without looking at a value (`schema.Resolve`): its map and list parts.
pub(super) fn parts(t: &Type) -> (Option<&MapType>, Option<&ListType>) {
    match t {
        Type::Scalar(_) => (None, None),
        Type::Atomic => (Some(&ATOMIC_MAP), Some(&ATOMIC_LIST)),
        Type::Deduced => (Some(&DEDUCED_MAP), Some(&ATOMIC_LIST)),
        Type::Object => (Some(&OBJECT_MAP), Some(&ATOMIC_LIST)),
        Type::Map(m) => (Some(m), None),
        Type::List(l) => (None, Some(l)),
        Type::Any(m, l) => (Some(m), Some(l)),
    }
}

/// The schema of one kind: the type of its root object.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// The root type (a map).
    pub root: Type,
}

impl Schema {
    /// No schema: maps granular, lists atomic, except that `metadata` follows ObjectMeta.
    pub fn untyped() -> Self {
        let mut root = DEDUCED_MAP.clone();
        add_type_meta(&mut root);
        Schema {
            root: Type::Map(Box::new(root)),
        }
    }

    /// Converts a CRD version's `schema.openAPIV3Schema`. `apiVersion`, `kind` and `metadata`
    /// are always typed as the apiserver types them (metadata as ObjectMeta).
    pub fn from_openapi_v3(schema: &Value) -> Result<Self, String> {
        let mut root = match convert(schema)? {
            Type::Map(m) => *m,
            Type::Any(m, _) => *m,
            _ => return Err("the root of a CRD schema must be an object".to_owned()),
        };
        add_type_meta(&mut root);
        Ok(Schema {
            root: Type::Map(Box::new(root)),
        })
    }
}

fn add_type_meta(root: &mut MapType) {
    root.fields
        .insert("apiVersion".to_owned(), Type::Scalar(Scalar::String));
    root.fields
        .insert("kind".to_owned(), Type::Scalar(Scalar::String));
    root.fields.insert("metadata".to_owned(), object_meta());
}

/// `metav1.ObjectMeta` as the apiserver's OpenAPI declares it: finalizers a set,
/// ownerReferences keyed by `uid` with atomic items, managedFields atomic, labels and
/// annotations granular string maps.
pub fn object_meta() -> Type {
    let s = || Type::Scalar(Scalar::String);
    let n = || Type::Scalar(Scalar::Numeric);
    let b = || Type::Scalar(Scalar::Boolean);
    let mut owner_ref = MapType::with_fields([
        ("apiVersion", s()),
        ("blockOwnerDeletion", b()),
        ("controller", b()),
        ("kind", s()),
        ("name", s()),
        ("uid", s()),
    ]);
    owner_ref.atomic = true;
    Type::Map(Box::new(MapType::with_fields([
        ("annotations", Type::Map(Box::new(MapType::of(s())))),
        ("creationTimestamp", s()),
        ("deletionGracePeriodSeconds", n()),
        ("deletionTimestamp", s()),
        (
            "finalizers",
            Type::List(Box::new(ListType {
                elem: s(),
                kind: ListKind::Set,
            })),
        ),
        ("generateName", s()),
        ("generation", n()),
        ("labels", Type::Map(Box::new(MapType::of(s())))),
        (
            "managedFields",
            Type::List(Box::new(ListType {
                elem: Type::Atomic,
                kind: ListKind::Atomic,
            })),
        ),
        ("name", s()),
        ("namespace", s()),
        (
            "ownerReferences",
            Type::List(Box::new(ListType {
                elem: Type::Map(Box::new(owner_ref)),
                kind: ListKind::Map(vec!["uid".to_owned()]),
            })),
        ),
        ("resourceVersion", s()),
        ("selfLink", s()),
        ("uid", s()),
    ])))
}

fn ext_true(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

/// Converts an OpenAPI v3 structural schema (`parseSchema`, `parseObject`, `parseList`).
/// `x-kubernetes-preserve-unknown-fields` is inherited: once a node sets it, its whole
/// subtree keeps unknown keys.
///
/// Upstream recurses once a level of the schema; this keeps its own list of the nodes being
/// converted, so a schema as deep as Go reads takes no more stack than a shallow one. The
/// error is upstream's: the first it meets, in its order.
fn convert(schema: &Value) -> Result<Type, String> {
    let mut root = match start(schema, false)? {
        Started::Done(t) => return Ok(t),
        Started::Open(node) => node,
    };
    // The nodes being converted below the root, the innermost last.
    let mut open = Vec::new();
    loop {
        let innermost = open.last_mut().unwrap_or(&mut root);
        if let Some(below) = innermost.next()? {
            open.push(below);
            continue;
        }
        match open.pop() {
            Some(done) => open.last_mut().unwrap_or(&mut root).keep(done.built),
            None => return Ok(root.built),
        }
    }
}

/// What converting a node starts: its type (a scalar), or a map or list to convert.
enum Started<'a> {
    Done(Type),
    Open(Converting<'a>),
}

/// A node being converted: its type, built in place as the schemas below it are converted.
struct Converting<'a> {
    s: &'a Value,
    /// Whether unknown keys are kept here.
    preserve: bool,
    stage: Stage,
    /// The declared fields left to convert.
    properties: recon_apimachinery::json::map::Iter<'a>,
    /// The declared field being converted.
    field: Option<&'a String>,
    /// A map, a list, or both when the node has no `type`.
    built: Type,
}

/// How far a [`Converting`] is: each stage is skipped when the node has no map, or no list.
#[derive(Clone, Copy)]
enum Stage {
    /// Converting `properties`, then `additionalProperties`.
    Fields,
    /// `additionalProperties` converted, if it is a schema: the map is done, the list next.
    Additional,
    /// Converting `items`, if an object.
    Items,
}

/// Starts converting the schema `s` (`preserve`: whether its parent keeps unknown keys).
fn start(s: &Value, preserve: bool) -> Result<Started<'_>, String> {
    let map = || {
        Box::new(MapType {
            fields: BTreeMap::new(),
            elem: None,
            atomic: false,
            defaults: BTreeMap::new(),
            open_struct: false,
        })
    };
    let list = || {
        Box::new(ListType {
            elem: Type::Atomic,
            kind: ListKind::Atomic,
        })
    };
    let built = match s.get("type").and_then(Value::as_str).unwrap_or("") {
        "" => Type::Any(map(), list()),
        "object" => Type::Map(map()),
        "array" => Type::List(list()),
        "integer" | "number" => return Ok(Started::Done(Type::Scalar(Scalar::Numeric))),
        "string" => return Ok(Started::Done(Type::Scalar(Scalar::String))),
        "boolean" => return Ok(Started::Done(Type::Scalar(Scalar::Boolean))),
        other => return Err(format!("unrecognized type: '{other}'")),
    };
    let properties = match built {
        Type::List(_) => None,
        _ => s.get("properties").and_then(Value::as_object),
    };
    Ok(Started::Open(Converting {
        s,
        preserve: preserve || ext_true(s, "x-kubernetes-preserve-unknown-fields"),
        stage: Stage::Fields,
        properties: properties.map(|p| p.iter()).unwrap_or_default(),
        field: None,
        built,
    }))
}

impl<'a> Converting<'a> {
    /// Converts what is below this node up to the next map or list, which is returned to
    /// be converted first (its type then goes to [`Converting::keep`]); none once this
    /// node's type is built.
    fn next(&mut self) -> Result<Option<Converting<'a>>, String> {
        let (s, preserve) = (self.s, self.preserve);
        let (mut map, list) = self.built.own_parts_mut();
        if let (Stage::Fields, Some(map)) = (self.stage, &mut map) {
            for (name, member) in self.properties.by_ref() {
                if let Some(d) = member.get("default") {
                    map.defaults.insert(name.clone(), d.clone());
                }
                match start(member, preserve)? {
                    Started::Done(t) => {
                        map.fields.insert(name.clone(), t);
                    }
                    Started::Open(below) => {
                        self.field = Some(name);
                        return Ok(Some(below));
                    }
                }
            }
            self.stage = Stage::Additional;
            map.elem = match s.get("additionalProperties") {
                // An object without properties is free-form.
                None | Some(Value::Null) => {
                    (preserve || map.fields.is_empty()).then_some(Type::Deduced)
                }
                Some(Value::Bool(true)) => Some(Type::Deduced),
                Some(Value::Bool(false)) => None,
                Some(schema) => match start(schema, preserve)? {
                    Started::Done(t) => Some(t),
                    Started::Open(below) => return Ok(Some(below)),
                },
            };
        }
        if let (Stage::Additional, Some(map)) = (self.stage, map) {
            finish_map(map, s)?;
        }
        if let (Stage::Fields | Stage::Additional, Some(list)) = (self.stage, list) {
            list.kind = list_kind(s)?;
            self.stage = Stage::Items;
            if let Some(items) = s.get("items")
                && items.is_object()
            {
                match start(items, preserve)? {
                    Started::Done(t) => list.elem = t,
                    Started::Open(below) => return Ok(Some(below)),
                }
            }
        }
        Ok(None)
    }

    /// Puts the type of the node [`Converting::next`] returned in its place.
    fn keep(&mut self, t: Type) {
        match (self.stage, self.built.own_parts_mut()) {
            (Stage::Fields, (Some(map), _)) => {
                if let Some(name) = self.field {
                    map.fields.insert(name.clone(), t);
                }
            }
            (Stage::Additional, (Some(map), _)) => map.elem = Some(t),
            (Stage::Items, (_, Some(list))) => list.elem = t,
            _ => {}
        }
    }
}

/// Completes a map type once its fields and `additionalProperties` are converted
/// (`parseObject`).
fn finish_map(m: &mut MapType, s: &Value) -> Result<(), String> {
    m.atomic = match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        None | Some("granular") => false,
        Some("atomic") => true,
        Some(other) => return Err(format!("unknown map type {other}")),
    };
    // The CRD OpenAPI builder types embedded objects like the root (`addEmbeddedProperties`).
    if ext_true(s, "x-kubernetes-embedded-resource") {
        add_type_meta(m);
    }
    Ok(())
}

/// How a list's items are tracked (`parseList`).
fn list_kind(s: &Value) -> Result<ListKind, String> {
    Ok(
        match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("atomic") => ListKind::Atomic,
            Some("set") => ListKind::Set,
            Some("map") => {
                let keys = s
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .ok_or("missing map keys")?;
                ListKind::Map(
                    keys.iter()
                        .map(|k| k.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| format!("uninterpreted map keys: {keys:?}"))?,
                )
            }
            Some(other) => return Err(format!("unknown list type {other}")),
            None => ListKind::Atomic,
        },
    )
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn crd_schema_conversion() {
        let s = Schema::from_openapi_v3(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                        "items": {"type": "object", "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"}}}},
                    "am": {"type": "object", "x-kubernetes-map-type": "atomic"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}},
                    "strs": {"type": "object", "additionalProperties": {"type": "string"}},
                    "plain": {"type": "array", "items": {"type": "string"}},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true}
                }}
            }
        }))
        .unwrap();
        let Type::Map(root) = &s.root else { panic!() };
        assert!(root.fields.contains_key("metadata"));
        let Some((Type::Map(spec), true)) = root.field("spec") else {
            panic!()
        };
        let field = |n: &str| spec.fields.get(n).unwrap();
        assert!(matches!(field("set"), Type::List(l) if l.kind == ListKind::Set));
        let Type::List(ports) = field("ports") else {
            panic!()
        };
        assert_eq!(
            ports.kind,
            ListKind::Map(vec!["port".into(), "protocol".into()])
        );
        let Type::Map(item) = &ports.elem else {
            panic!()
        };
        assert_eq!(item.defaults.get("protocol"), Some(&json!("TCP")));
        assert!(matches!(field("am"), Type::Map(m) if m.atomic));
        // preserve-unknown-fields is inherited by nested objects.
        let Type::Map(free) = field("free") else {
            panic!()
        };
        assert_eq!(free.elem, Some(Type::Deduced));
        let Type::Map(a) = free.fields.get("a").unwrap() else {
            panic!()
        };
        assert_eq!(a.elem, Some(Type::Deduced));
        assert!(
            matches!(field("strs"), Type::Map(m) if m.elem == Some(Type::Scalar(Scalar::String)))
        );
        assert!(matches!(field("plain"), Type::List(l) if l.kind == ListKind::Atomic));
        let Type::Map(emb) = field("embedded") else {
            panic!()
        };
        assert!(emb.fields.contains_key("metadata") && emb.fields.contains_key("kind"));
        assert!(Schema::from_openapi_v3(&json!({"type": "string"})).is_err());
        assert!(
            Schema::from_openapi_v3(&json!({"type": "object", "properties": {
            "l": {"type": "array", "x-kubernetes-list-type": "map"}}}))
            .is_err()
        );
    }

    #[test]
    fn conversion_errors_come_in_upstream_order() {
        let err = |spec: Value| {
            let openapi = json!({"type": "object", "properties": {"spec": spec}});
            Schema::from_openapi_v3(&openapi).unwrap_err()
        };
        // A field's error comes first, however deep, then additionalProperties', then the
        // map's own.
        assert_eq!(
            err(json!({"type": "object", "x-kubernetes-map-type": "odd",
                "additionalProperties": {"type": "late"}, "properties": {
                    "a": {"type": "object", "properties": {"b": {"type": "deep"}}},
                    "c": {"type": "other"}}})),
            "unrecognized type: 'deep'"
        );
        assert_eq!(
            err(json!({"type": "object", "x-kubernetes-map-type": "odd",
                "additionalProperties": {"type": "late"}})),
            "unrecognized type: 'late'"
        );
        assert_eq!(
            err(json!({"type": "object", "x-kubernetes-map-type": "odd"})),
            "unknown map type odd"
        );
        // A list's kind comes before its items.
        assert_eq!(
            err(json!({"type": "array", "x-kubernetes-list-type": "odd", "items": {"type": "x"}})),
            "unknown list type odd"
        );
        // Without a type, the map comes first, then the list.
        assert_eq!(
            err(json!({"x-kubernetes-list-type": "odd", "x-kubernetes-map-type": "odd"})),
            "unknown map type odd"
        );
        assert_eq!(
            err(json!({"x-kubernetes-list-type": "odd", "properties": {"a": {"type": "x"}}})),
            "unrecognized type: 'x'"
        );
        assert_eq!(
            err(json!({"x-kubernetes-list-type": "map", "items": {"type": "x"}})),
            "missing map keys"
        );
    }

    #[test]
    fn types_print_as_derived_debug_prints() {
        let t = Type::Any(
            Box::new(MapType {
                fields: [("k".to_owned(), Type::Scalar(Scalar::String))].into(),
                elem: Some(Type::Deduced),
                atomic: false,
                defaults: [("k".to_owned(), json!("d"))].into(),
                open_struct: false,
            }),
            Box::new(ListType {
                elem: Type::Atomic,
                kind: ListKind::Map(vec!["k".to_owned()]),
            }),
        );
        assert_eq!(
            format!("{t:?}"),
            r#"Any(MapType { fields: {"k": Scalar(String)}, elem: Some(Deduced), atomic: false, defaults: {"k": String("d")}, open_struct: false }, ListType { elem: Atomic, kind: Map(["k"]) })"#
        );
        let pretty = r#"Any(
    MapType {
        fields: {
            "k": Scalar(
                String,
            ),
        },
        elem: Some(
            Deduced,
        ),
        atomic: false,
        defaults: {
            "k": String("d"),
        },
        open_struct: false,
    },
    ListType {
        elem: Atomic,
        kind: Map(
            [
                "k",
            ],
        ),
    },
)"#;
        assert_eq!(format!("{t:#?}"), pretty);
        // Inside a derived `Debug`, as a field.
        let in_schema = format!("{:#?}", Schema { root: t });
        assert_eq!(
            in_schema,
            format!(
                "Schema {{\n    root: {},\n}}",
                pretty.replace('\n', "\n    ")
            )
        );
    }

    /// `spec` nesting `levels` times `open` ... `close` around a `leaf` schema.
    fn nested(levels: usize, open: &str, leaf: &str, close: &str) -> Value {
        crate::wire::nesting::deep_text::read(&format!(
            r#"{{"type":"object","properties":{{"spec":{}{leaf}{}}}}}"#,
            open.repeat(levels),
            close.repeat(levels)
        ))
    }

    // CRD schemas as deep as kube-apiserver serves (`deep/a-crd-schema-as-deep-as-go-reads`)
    // are converted, cloned, compared, printed and dropped on a test thread's stack.
    #[test]
    fn schemas_as_deep_as_go_reads_convert_without_recursion() {
        use crate::apply::tests::{DEEP, deep_openapi};
        let s = Schema::from_openapi_v3(&deep_openapi(DEEP, "string")).unwrap();
        let Type::Map(root) = &s.root else { panic!() };
        let mut t = root.field("spec").unwrap().0;
        for _ in 0..DEEP {
            let Type::Map(m) = t else { panic!() };
            assert!(m.elem.is_none() && m.fields.len() == 1);
            t = m.field("a").unwrap().0;
        }
        assert_eq!(*t, Type::Scalar(Scalar::String));
        let copy = s.clone();
        assert!(copy == s);
        let other = Schema::from_openapi_v3(&deep_openapi(DEEP, "integer")).unwrap();
        assert!(other != s);
        let printed = format!("{:?}", other.root);
        // The root, ObjectMeta (with annotations, labels and owner references), each level.
        assert_eq!(printed.matches("MapType {").count(), DEEP + 5);
        assert!(printed.contains(r#"{"a": Scalar(Numeric)}, elem: None"#));
        // An error at the bottom is the conversion's.
        assert_eq!(
            Schema::from_openapi_v3(&deep_openapi(DEEP, "bogus")),
            Err("unrecognized type: 'bogus'".to_owned())
        );

        // Lists of lists, and untyped nodes (a map and a list each).
        let lists = Schema::from_openapi_v3(&nested(
            DEEP,
            r#"{"type":"array","x-kubernetes-list-type":"atomic","items":"#,
            r#"{"type":"boolean"}"#,
            "}",
        ))
        .unwrap();
        assert!(lists.clone() == lists && lists != s);
        let untyped = Schema::from_openapi_v3(&nested(
            DEEP,
            r#"{"x-kubernetes-preserve-unknown-fields":true,"items":{"type":"number"},"properties":{"a":"#,
            r#"{"type":"string","default":"d"}"#,
            "}}",
        ))
        .unwrap();
        let copy = untyped.clone();
        assert!(copy == untyped && copy != lists);
        assert!(format!("{copy:?}").matches("Any(").count() == DEEP);
    }
}
