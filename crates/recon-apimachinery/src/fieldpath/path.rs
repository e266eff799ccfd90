//! Field paths: one step into a map, a keyed list, a set or an atomic list
//! (structured-merge-diff `fieldpath/element.go`, `path.go`, `serialize-pe.go`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::json::Value;

use crate::go_json::{go_json, write_go_string};
use crate::value::{compare, to_string};

/// One step of a field path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A map key (struct field): `f:<name>`, printed `.name`. Shared, not copied, as field
    /// sets are combined.
    Field(Arc<str>),
    /// An associative-list item selected by its key fields, sorted by name:
    /// `k:{"name":"a"}`, printed `[name="a"]`.
    Key(Vec<(String, Value)>),
    /// A set item selected by its value: `v:"x"`, printed `[="x"]`.
    Value(Value),
    /// An atomic-list index: `i:0`, printed `[0]`.
    Index(i64),
}

impl PathElement {
    /// A field element.
    #[inline]
    pub fn field(name: impl AsRef<str>) -> Self {
        PathElement::Field(Arc::from(name.as_ref()))
    }

    /// A key element from name/value pairs, sorted by name as upstream stores them.
    pub fn key<I, S>(fields: I) -> Self
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        let mut fields: Vec<(String, Value)> =
            fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `fieldsV1` key for this element (`SerializePathElement`).
    pub fn serialize(&self) -> String {
        let mut out = String::new();
        self.write_key(&mut out);
        out
    }

    /// Appends [`serialize`](Self::serialize)'s key to `out`.
    pub fn write_key(&self, out: &mut String) {
        match self {
            PathElement::Field(name) => {
                out.reserve(name.len() + 2);
                out.push_str("f:");
                out.push_str(name);
            }
            PathElement::Key(fields) => {
                out.push_str("k:{");
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_go_string(out, name);
                    out.push(':');
                    out.push_str(&go_json(value));
                }
                out.push('}');
            }
            PathElement::Value(v) => {
                out.push_str("v:");
                out.push_str(&go_json(v));
            }
            PathElement::Index(i) => {
                use std::fmt::Write as _;
                let _ = write!(out, "i:{i}");
            }
        }
    }

    /// Parses a `fieldsV1` key (`DeserializePathElement`). `Ok(None)` is an element type this
    /// version does not know: upstream drops those silently.
    pub fn deserialize(s: &str) -> Result<Option<Self>, String> {
        let bytes = s.as_bytes();
        if bytes.len() < 2 {
            return Err("key must be 2 characters long:".to_owned());
        }
        if bytes[1] != b':' {
            return Err(format!("missing colon: {s}"));
        }
        let rest = &s[2..];
        let parse = |text: &str| {
            serde_json::from_str::<Value>(text).map_err(|e| format!("parsing {s:?}: {e}"))
        };
        Ok(Some(match bytes[0] {
            b'f' => PathElement::Field(Arc::from(rest)),
            b'v' => PathElement::Value(parse(rest)?),
            b'k' => match parse(rest)? {
                Value::Object(m) => PathElement::key(m),
                _ => return Err(format!("parsing {s:?}: expected an object")),
            },
            b'i' => PathElement::Index(
                rest.parse::<i64>()
                    .map_err(|e| format!("parsing {s:?}: {e}"))?,
            ),
            _ => return Ok(None),
        }))
    }
}

impl Ord for PathElement {
    /// `PathElement.Compare`: fields, then keys, values, indexes.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let c = an.cmp(bn).then_with(|| compare(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// `PathElement.String`, as conflict messages print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A field path from the object root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// A path of field names, e.g. `Path::fields(&["spec", "replicas"])`.
    pub fn fields(names: &[&str]) -> Self {
        Path(names.iter().map(|n| PathElement::field(*n)).collect())
    }
}

impl fmt::Display for Path {
    /// `Path.String`: the elements' strings concatenated (`.spec.items[name="a"].v`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|pe| write!(f, "{pe}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::json;

    use super::*;

    #[test]
    fn display_matches_conflict_messages() {
        let p = Path(vec![
            PathElement::field("spec"),
            PathElement::field("items"),
            PathElement::key([("name", json!("a"))]),
            PathElement::field("v"),
        ]);
        assert_eq!(p.to_string(), r#".spec.items[name="a"].v"#);
        let f = Path(vec![
            PathElement::field("metadata"),
            PathElement::field("finalizers"),
            PathElement::Value(json!("x")),
        ]);
        assert_eq!(f.to_string(), r#".metadata.finalizers[="x"]"#);
        let k = PathElement::key([("protocol", json!("TCP")), ("port", json!(80))]);
        assert_eq!(k.to_string(), r#"[port=80,protocol="TCP"]"#);
        assert_eq!(PathElement::Index(3).to_string(), "[3]");
    }

    #[test]
    fn serialization_round_trips() {
        for (pe, s) in [
            (PathElement::field("a.b"), "f:a.b"),
            (
                PathElement::key([("protocol", json!("UDP")), ("port", json!(10))]),
                r#"k:{"port":10,"protocol":"UDP"}"#,
            ),
            (PathElement::Value(json!("x")), r#"v:"x""#),
            (PathElement::Value(json!(9)), "v:9"),
            (PathElement::Index(2), "i:2"),
        ] {
            assert_eq!(pe.serialize(), s);
            assert_eq!(PathElement::deserialize(s).unwrap(), Some(pe));
        }
        assert_eq!(PathElement::deserialize("x:zzz").unwrap(), None);
        assert!(PathElement::deserialize("k:notjson").is_err());
        assert!(PathElement::deserialize("v:1 2").is_err());
        assert!(PathElement::deserialize("f").is_err());
        assert!(PathElement::deserialize("fx").is_err());
        assert!(PathElement::deserialize("i:x").is_err());
    }

    #[test]
    fn order_is_fields_keys_values_indexes() {
        let mut v = [
            PathElement::Index(0),
            PathElement::Value(json!(1)),
            PathElement::key([("a", json!(1))]),
            PathElement::field("z"),
        ];
        v.sort();
        assert!(matches!(v[0], PathElement::Field(_)));
        assert!(matches!(v[3], PathElement::Index(_)));
        assert!(PathElement::Value(json!(9)) < PathElement::Value(json!(10)));
    }
}
