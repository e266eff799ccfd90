//! What the merge needs to know about an object's shape: which maps are atomic, which lists
//! are atomic, sets or keyed maps, and which map keys are declared fields.
//!
//! CRD schemas are converted the way kube-openapi's `schemaconv` does it
//! (`pkg/schemaconv/openapi.go` `parseSchema`, `parseObject`, `parseList`).

use std::collections::BTreeMap;

use recon_apimachinery::json::Value;

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
#[derive(Debug, Clone, PartialEq)]
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
        let mut root = match convert(schema, false)? {
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

/// One OpenAPI v3 structural schema node (`parseSchema`). `preserve` is inherited: once a
/// node sets `x-kubernetes-preserve-unknown-fields`, its whole subtree keeps unknown keys.
fn convert(s: &Value, preserve: bool) -> Result<Type, String> {
    let preserve = preserve || ext_true(s, "x-kubernetes-preserve-unknown-fields");
    match s.get("type").and_then(Value::as_str).unwrap_or("") {
        "" => Ok(Type::Any(
            Box::new(convert_object(s, preserve)?),
            Box::new(convert_list(s, preserve)?),
        )),
        "object" => Ok(Type::Map(Box::new(convert_object(s, preserve)?))),
        "array" => Ok(Type::List(Box::new(convert_list(s, preserve)?))),
        "integer" | "number" => Ok(Type::Scalar(Scalar::Numeric)),
        "string" => Ok(Type::Scalar(Scalar::String)),
        "boolean" => Ok(Type::Scalar(Scalar::Boolean)),
        other => Err(format!("unrecognized type: '{other}'")),
    }
}

fn convert_object(s: &Value, preserve: bool) -> Result<MapType, String> {
    let mut fields = BTreeMap::new();
    let mut defaults = BTreeMap::new();
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (name, member) in props {
            fields.insert(name.clone(), convert(member, preserve)?);
            if let Some(d) = member.get("default") {
                defaults.insert(name.clone(), d.clone());
            }
        }
    }
    let elem = match s.get("additionalProperties") {
        None | Some(Value::Null) => {
            // An object without properties is free-form.
            (preserve || fields.is_empty()).then_some(Type::Deduced)
        }
        Some(Value::Bool(true)) => Some(Type::Deduced),
        Some(Value::Bool(false)) => None,
        Some(schema) => Some(convert(schema, preserve)?),
    };
    let atomic = match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        None | Some("granular") => false,
        Some("atomic") => true,
        Some(other) => return Err(format!("unknown map type {other}")),
    };
    let mut m = MapType {
        fields,
        elem,
        atomic,
        defaults,
        open_struct: false,
    };
    // The CRD OpenAPI builder types embedded objects like the root (`addEmbeddedProperties`).
    if ext_true(s, "x-kubernetes-embedded-resource") {
        add_type_meta(&mut m);
    }
    Ok(m)
}

fn convert_list(s: &Value, preserve: bool) -> Result<ListType, String> {
    let kind = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
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
    };
    let elem = match s.get("items") {
        Some(items) if items.is_object() => convert(items, preserve)?,
        _ => Type::Atomic,
    };
    Ok(ListType { elem, kind })
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
}
