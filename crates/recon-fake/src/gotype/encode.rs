//! Writing a value as Go's `encoding/json` writes what it decoded into: a struct's fields in
//! declaration order, a map's keys sorted, no spaces, and `<`, `>`, `&` (and the JavaScript
//! line separators) escaped, as `json.Marshal` does by default.

use std::collections::btree_map;

use recon_apimachinery::json::{Map, Value};

use super::{GoStruct, GoType, TYPES};

/// Writes `value`, of Go type `ty`, to `out`. `None` is an unstructured value
/// (`map[string]interface{}`), written with every map's keys sorted.
pub(crate) fn write_value(ty: Option<&GoType>, value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => write_map(ty, map, &[], out),
        Value::Array(items) => {
            write_nested(Open::Array(items.iter(), child_type(ty, ""), false), out)
        }
        scalar => write_scalar(scalar, out),
    }
}

/// Writes `map`, of Go type `ty`, without its keys in `skip`: a struct's fields in declaration
/// order, any other map's keys sorted.
pub(crate) fn write_map(ty: Option<&GoType>, map: &Map, skip: &[&str], out: &mut String) {
    write_nested(Open::Object(Members::of(ty, map, skip), false), out);
}

/// A container being written: what is left of it, and whether an item was written.
enum Open<'a> {
    Object(Members<'a>, bool),
    /// The items left, and their type.
    Array(std::slice::Iter<'a, Value>, Option<&'a GoType>, bool),
}

/// The members of an object left to write, in the order Go writes them, each with its type.
enum Members<'a> {
    /// A struct's: its declared fields in declaration order, then any it lacks (not decoded
    /// into it; kept last should one come).
    Struct {
        go_struct: &'a GoStruct,
        order: std::slice::Iter<'a, String>,
        map: &'a Map,
        undeclared: btree_map::Iter<'a, String, Value>,
        skip: &'a [&'a str],
    },
    /// Any other map's: its keys sorted, each value of `ty`'s child type.
    Sorted {
        ty: Option<&'a GoType>,
        members: btree_map::Iter<'a, String, Value>,
        skip: &'a [&'a str],
    },
}

impl<'a> Members<'a> {
    fn of(ty: Option<&'a GoType>, map: &'a Map, skip: &'a [&'a str]) -> Members<'a> {
        match ty {
            // The struct is looked up once, not again for each field.
            Some(GoType::Struct(name)) if let Some(go_struct) = TYPES.get(name) => {
                Members::Struct {
                    go_struct,
                    order: go_struct.order.iter(),
                    map,
                    undeclared: map.iter(),
                    skip,
                }
            }
            _ => Members::Sorted {
                ty,
                members: map.iter(),
                skip,
            },
        }
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a String, &'a Value, Option<&'a GoType>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::Struct {
                go_struct,
                order,
                map,
                undeclared,
                skip,
            } => {
                let declared = order
                    .filter(|key| !skip.contains(&key.as_str()))
                    .find_map(|key| map.get_key_value(key));
                if let Some((key, value)) = declared {
                    return Some((key, value, go_struct.fields.get(key)));
                }
                undeclared
                    .find(|(key, _)| {
                        !go_struct.fields.contains_key(*key) && !skip.contains(&key.as_str())
                    })
                    .map(|(key, value)| (key, value, None))
            }
            Members::Sorted { ty, members, skip } => members
                .find(|(key, _)| !skip.contains(&key.as_str()))
                .map(|(key, value)| (key, value, child_type(*ty, key))),
        }
    }
}

/// Writes the container `first` opens, one container at a time: a value may nest as deep as
/// Go decodes (10,000 levels).
fn write_nested<'a>(first: Open<'a>, out: &mut String) {
    out.push(match first {
        Open::Object(..) => '{',
        Open::Array(..) => '[',
    });
    let mut open = vec![first];
    while let Some(innermost) = open.last_mut() {
        let (value, ty) = match innermost {
            Open::Object(members, any) => match members.next() {
                Some((key, value, ty)) => {
                    if std::mem::replace(any, true) {
                        out.push(',');
                    }
                    write_string(key, out);
                    out.push(':');
                    (value, ty)
                }
                None => {
                    out.push('}');
                    open.pop();
                    continue;
                }
            },
            Open::Array(items, ty, any) => match items.next() {
                Some(item) => {
                    if std::mem::replace(any, true) {
                        out.push(',');
                    }
                    (item, *ty)
                }
                None => {
                    out.push(']');
                    open.pop();
                    continue;
                }
            },
        };
        match value {
            Value::Object(map) => {
                out.push('{');
                open.push(Open::Object(Members::of(ty, map, &[]), false));
            }
            Value::Array(items) => {
                out.push('[');
                open.push(Open::Array(items.iter(), child_type(ty, ""), false));
            }
            scalar => write_scalar(scalar, out),
        }
    }
}

/// Numbers, booleans and null as serde_json prints them, without a copy; strings escaped as
/// Go escapes them.
fn write_scalar(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => write_string(text, out),
        other => {
            use std::fmt::Write;
            let _ = write!(out, "{other}");
        }
    }
}

/// The type of `key` in a value of type `ty`: a struct's field, a map's values, a slice's
/// items (any key).
pub(crate) fn child_type<'a>(ty: Option<&'a GoType>, key: &str) -> Option<&'a GoType> {
    match ty? {
        GoType::Struct(name) => TYPES.get(name)?.fields.get(key),
        GoType::Map(value) => Some(value),
        GoType::Slice(item) => Some(item),
        _ => None,
    }
}

/// A JSON string as `encoding/json` escapes it (HTML-safe): what serde_json writes, with
/// [`escape_html`]'s characters escaped too. Runs of characters that need no escape are copied
/// whole.
pub(crate) fn write_string(text: &str, out: &mut String) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let escape = match bytes[i] {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            b'&' => "\\u0026",
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                if bytes[i + 2] == 0xa8 {
                    "\\u2028"
                } else {
                    "\\u2029"
                }
            }
            control @ 0..0x20 => {
                out.push_str(&text[run..i]);
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(control >> 4)]));
                out.push(char::from(HEX[usize::from(control & 0xf)]));
                i += 1;
                run = i;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&text[run..i]);
        out.push_str(escape);
        i += if bytes[i] == 0xe2 { 3 } else { 1 };
        run = i;
    }
    out.push_str(&text[run..]);
    out.push('"');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// JSON text with `<`, `>`, `&`, U+2028 and U+2029 escaped, as `json.Marshal` (and `compact`
/// with HTML escaping) writes them.
pub(crate) fn escape_html(json: &str, out: &mut String) {
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn written(ty: Option<&GoType>, value: &Value) -> String {
        let mut out = String::new();
        write_value(ty, value, &mut out);
        out
    }

    #[test]
    fn a_struct_is_written_in_field_order_and_its_maps_sorted() {
        let config_map = GoType::Struct("io.k8s.api.core.v1.ConfigMap".into());
        let value = json!({
            "apiVersion": "v1", "data": {"b": "2", "a": "1"}, "kind": "ConfigMap",
            "metadata": {"uid": "u", "name": "c", "labels": {"z": "1", "y": "2"}},
        });
        assert_eq!(
            written(Some(&config_map), &value),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","uid":"u","labels":{"y":"2","z":"1"}},"data":{"a":"1","b":"2"}}"#
        );
    }

    // Values as deep as Go decodes are written one container at a time, on a test thread's
    // stack: a 10,000-level one in a schemaless field of a built-in (an annotation-free
    // `RawExtension`), as any unstructured value, between the struct's fields in Go's order.
    #[test]
    fn ten_thousand_levels_are_written_without_recursion() {
        let inner = (0..10_000).fold(json!("<"), |inner, _| {
            Value::Object(json::Map::from_iter([("b", inner), ("a", json!([1]))]))
        });
        let revision = GoType::Struct("io.k8s.api.apps.v1.ControllerRevision".into());
        let value = Value::Object(json::Map::from_iter([
            ("data", inner),
            ("revision", json!(1)),
            ("kind", json!("ControllerRevision")),
        ]));
        let text = written(Some(&revision), &value);
        assert!(
            text.starts_with(r#"{"kind":"ControllerRevision","data":{"a":[1],"b":{"a":[1],"b":"#),
            "{}",
            &text[..80]
        );
        assert!(text.ends_with(&format!(r#""\u003c"{},"revision":1}}"#, "}".repeat(10_000))));
        assert_eq!(
            text.len(),
            10_000 * r#"{"a":[1],"b":}"#.len()
                + r#"{"kind":"ControllerRevision","data":,"revision":1}"#.len()
                + 8
        );
    }

    #[test]
    fn list_items_take_the_slice_item_type() {
        let spec = GoType::Struct("io.k8s.api.core.v1.PodSpec".into());
        let value = json!({"containers": [{"image": "i", "name": "n"}]});
        assert_eq!(
            written(Some(&spec), &value),
            r#"{"containers":[{"name":"n","image":"i"}]}"#
        );
    }

    proptest::proptest! {
        /// The run-copying writer agrees with serde_json's escaping followed by
        /// [`escape_html`], on any text.
        #[test]
        fn strings_are_written_as_serde_json_escapes_them_then_html(text in "(\\PC|[\\x00-\\x1f\\u{2028}\\u{2029}<>&\"\\\\])*") {
            let mut expected = String::new();
            escape_html(&Value::String(text.clone()).to_string(), &mut expected);
            let mut written = String::new();
            write_string(&text, &mut written);
            proptest::prop_assert_eq!(written, expected);
        }
    }

    #[test]
    fn strings_are_escaped_as_go_escapes_them_for_html() {
        assert_eq!(
            written(None, &json!({"k": "<a & b>\u{2028}"})),
            r#"{"k":"\u003ca \u0026 b\u003e\u2028"}"#
        );
    }
}
