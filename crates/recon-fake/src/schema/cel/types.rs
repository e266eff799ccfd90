//! CEL types as the type checker sees them, the type of a schema node
//! (`common.SchemaDeclType`, named as `DeclType.MaybeAssignTypeName` names object types), and
//! the escaping of property names into CEL identifiers (`cel.Escape`).

use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use super::tree::SNode;

/// An object type declared by a schema: its name and its (escaped) fields.
#[derive(Debug, PartialEq)]
pub(super) struct ObjType {
    pub(super) name: String,
    pub(super) fields: BTreeMap<String, Type>,
}

/// A CEL type.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Type {
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    Dyn,
    /// The type of an expression that failed to check.
    Error,
    List(Rc<Type>),
    Map(Rc<Type>, Rc<Type>),
    Object(Rc<ObjType>),
    /// A named type with parameters: `optional_type(T)`, and the Kubernetes library types
    /// (`kubernetes.Quantity`, `net.IP`, ...) which take none.
    Opaque(&'static str, Vec<Type>),
    /// `type(T)`; `None` for `type` itself.
    Meta(Option<Rc<Type>>),
    /// A type parameter of an overload, or a free type variable of the checker.
    Param(Rc<str>),
}

pub(super) const OPTIONAL: &str = "optional_type";
/// `google.protobuf.Any`, see [`Type::is_dyn`].
pub(super) const ANY: &str = "google.protobuf.Any";

impl Type {
    pub(super) fn list(t: Type) -> Type {
        Type::List(Rc::new(t))
    }

    pub(super) fn map(k: Type, v: Type) -> Type {
        Type::Map(Rc::new(k), Rc::new(v))
    }

    pub(super) fn optional(t: Type) -> Type {
        Type::Opaque(OPTIONAL, vec![t])
    }

    pub(super) fn type_of(t: Type) -> Type {
        Type::Meta(Some(Rc::new(t)))
    }

    /// The parameters, as cel-go's `Type.Parameters()`.
    pub(super) fn params(&self) -> Vec<Type> {
        match self {
            Type::List(e) => vec![(**e).clone()],
            Type::Map(k, v) => vec![(**k).clone(), (**v).clone()],
            Type::Opaque(_, p) => p.clone(),
            Type::Meta(Some(t)) => vec![(**t).clone()],
            _ => Vec::new(),
        }
    }

    pub(super) fn is_dyn_or_error(&self) -> bool {
        self.is_dyn() || matches!(self, Type::Error)
    }

    /// cel-go's `isDyn`: `dyn`, or `google.protobuf.Any` (the type of DRA attribute values),
    /// which the checker takes as `dyn` but names as itself.
    pub(super) fn is_dyn(&self) -> bool {
        match self {
            Type::Dyn => true,
            Type::Opaque(name, params) => *name == ANY && params.is_empty(),
            _ => false,
        }
    }

    /// `T` of `optional_type(T)`.
    pub(super) fn unwrap_optional(&self) -> Option<&Type> {
        match self {
            Type::Opaque(OPTIONAL, p) => p.first(),
            _ => None,
        }
    }
}

impl Type {
    /// The name of the type itself, without parameters: as cel-go's `FormatCELType` writes it
    /// (`formatted`), or its declared name (`Type.DeclaredTypeName`).
    fn own_name(&self, formatted: bool) -> &str {
        match self {
            Type::Null if formatted => "null",
            Type::Null => "null_type",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Duration if formatted => "duration",
            Type::Duration => "google.protobuf.Duration",
            Type::Timestamp if formatted => "timestamp",
            Type::Timestamp => "google.protobuf.Timestamp",
            Type::Dyn => "dyn",
            Type::Error if formatted => "!error!",
            Type::Error => "*error*",
            Type::List(_) => "list",
            Type::Map(..) => "map",
            Type::Object(o) => &o.name,
            Type::Opaque(name, _) => name,
            Type::Meta(_) => "type",
            Type::Param(name) => name,
        }
    }

    /// cel-go's `Type.String()`, which the admission plugins print in their own messages
    /// (`must evaluate to bool but got google.protobuf.Timestamp`): declared names, a type
    /// parameter in angle brackets.
    pub(super) fn declared(&self) -> String {
        if let Type::Param(name) = self {
            return format!("<{name}>");
        }
        let params = self.params();
        if params.is_empty() {
            return self.own_name(false).to_owned();
        }
        let list: Vec<String> = params.iter().map(Type::declared).collect();
        format!("{}({})", self.own_name(false), list.join(", "))
    }
}

impl fmt::Display for Type {
    /// cel-go's `FormatCELType`, which the checker's messages use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.own_name(true))?;
        if matches!(self, Type::Object(_) | Type::Param(_)) {
            return Ok(());
        }
        let params = self.params();
        if !params.is_empty() {
            let list: Vec<String> = params.iter().map(ToString::to_string).collect();
            write!(f, "({})", list.join(", "))?;
        }
        Ok(())
    }
}

/// The name the real server gives the type of `self` (`selfType` and the nanoseconds of the
/// clock when the CRD was compiled); fixed here, so that messages naming it are stable.
pub(super) const SELF_TYPE_NAME: &str = "selfType0";

/// The CEL type of values of `s`, or `None` when they are not visible to CEL (no type, or a
/// list or map of such). `resource_root` for the root of a resource; object types are named
/// from `name` (`selfType0`, `selfType0.spec`, `selfType0.@elem`, ...).
pub(super) fn decl_type(s: &SNode, resource_root: bool, name: &str) -> Option<Type> {
    if s.int_or_string {
        return Some(Type::Dyn);
    }
    let s = if resource_root { s.view() } else { s };
    match s.ty.as_str() {
        "array" => {
            let items = s.items.as_deref()?;
            let elem = decl_type(items, items.embedded, &format!("{name}.@idx"))?;
            Some(Type::list(elem))
        }
        "object" => {
            if let Some(additional) = s.additional.as_deref() {
                let elem = decl_type(additional, additional.embedded, &format!("{name}.@elem"))?;
                return Some(Type::map(Type::String, elem));
            }
            let mut fields = BTreeMap::new();
            for (prop, schema) in &s.properties {
                let Some(escaped) = escape(prop) else {
                    continue;
                };
                if let Some(t) = decl_type(schema, schema.embedded, &format!("{name}.{escaped}")) {
                    fields.insert(escaped, t);
                }
            }
            Some(Type::Object(Rc::new(ObjType {
                name: name.to_owned(),
                fields,
            })))
        }
        "string" => Some(match s.format.as_str() {
            "byte" => Type::Bytes,
            "duration" => Type::Duration,
            "date" | "date-time" => Type::Timestamp,
            _ => Type::String,
        }),
        "boolean" => Some(Type::Bool),
        "number" => Some(Type::Double),
        "integer" => Some(Type::Int),
        _ => None,
    }
}

/// Whether [`decl_type`] of `s` is a type, without building it: one step at a time down the
/// `items` and `additionalProperties` it depends on (a schema may nest as deep as Go reads).
pub(super) fn has_decl_type(mut s: &SNode, mut resource_root: bool) -> bool {
    loop {
        if s.int_or_string {
            return true;
        }
        let view = if resource_root { s.view() } else { s };
        let below = match view.ty.as_str() {
            "array" => view.items.as_deref(),
            "object" => match view.additional.as_deref() {
                Some(additional) => Some(additional),
                None => return true,
            },
            "string" | "boolean" | "number" | "integer" => return true,
            _ => return false,
        };
        let Some(below) = below else {
            return false;
        };
        (s, resource_root) = (below, below.embedded);
    }
}

/// The schemas of the fields of [`decl_type`] of `s`, when it is an object type: the
/// properties of its view (not all of them fields: see [`escape`] and [`has_decl_type`]).
pub(super) fn object_fields(s: &SNode, resource_root: bool) -> Option<&BTreeMap<String, SNode>> {
    if s.int_or_string {
        return None;
    }
    let view = if resource_root { s.view() } else { s };
    (view.ty == "object" && view.additional.is_none()).then_some(&view.properties)
}

/// CEL's reserved words (`celReserved` of cel-go's parser and of kube-apiserver's admission
/// validation): no identifier or variable may be one.
pub(crate) const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `cel.Escape`: a property name as a CEL identifier (`__` as `__underscores__`, `.` as
/// `__dot__`, `-` as `__dash__`, `/` as `__slash__`, a reserved word `w` as `__w__`), or
/// `None` when the name has other characters or starts with a digit.
pub(super) fn escape(ident: &str) -> Option<String> {
    let first = ident.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&ident) {
        return Some(format!("__{ident}__"));
    }
    let mut out = String::with_capacity(ident.len());
    let mut rest = ident;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// `cel.Unescape`: the property name an escaped CEL identifier stands for; every
/// `__word__` in it must be one of the escapes (a reserved word only as the whole name).
pub(super) fn unescape(escaped: &str) -> Option<String> {
    let b = escaped.as_bytes();
    let mut out = String::with_capacity(escaped.len());
    let (mut i, mut copied) = (0, 0);
    while i + 1 < b.len() {
        if b[i] != b'_' || b[i + 1] != b'_' {
            i += 1;
            continue;
        }
        // `__[^_]+__` starting here?
        let mut j = i + 2;
        while j < b.len() && b[j] != b'_' {
            j += 1;
        }
        if j == i + 2 || j + 1 >= b.len() || b[j + 1] != b'_' {
            i += 1;
            continue;
        }
        let contents = &escaped[i + 2..j];
        let replacement = match contents {
            "underscores" => "__",
            "dot" => ".",
            "dash" => "-",
            "slash" => "/",
            w if RESERVED.contains(&w) && j + 2 - i == escaped.len() => w,
            _ => return None,
        };
        out.push_str(&escaped[copied..i]);
        out.push_str(replacement);
        i = j + 2;
        copied = i;
    }
    out.push_str(&escaped[copied..]);
    Some(out)
}
