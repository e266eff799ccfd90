//! Writing a value as Go's `encoding/json` writes what it decoded into: a struct's fields in
//! declaration order, a map's keys sorted, no spaces, and `<`, `>`, `&` (and the JavaScript
//! line separators) escaped, as `json.Marshal` does by default.

use recon_apimachinery::go_json::write_go_string;
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
    /// into it; kept last should one come). `left` counts the members not yet written and not
    /// skipped: once the declared ones are written, none left means no undeclared ones to
    /// look for.
    Struct {
        go_struct: &'a GoStruct,
        order: std::slice::Iter<'a, String>,
        map: &'a Map,
        undeclared: recon_apimachinery::json::map::Iter<'a>,
        skip: &'a [&'a str],
        left: usize,
    },
    /// Any other map's: its keys sorted, each value of `ty`'s child type.
    Sorted {
        ty: Option<&'a GoType>,
        members: recon_apimachinery::json::map::Iter<'a>,
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
                    left: if skip.is_empty() {
                        map.len()
                    } else {
                        map.keys().filter(|k| !skip.contains(&k.as_str())).count()
                    },
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
                left,
            } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
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
                    write_go_string(out, key);
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
        Value::String(text) => write_go_string(out, text),
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

/// JSON text with `<`, `>`, `&`, U+2028 and U+2029 escaped, as `json.Marshal` (and `compact`
/// with HTML escaping) writes them. The bytes that may need it are found with `memchr`, and the
/// runs between them copied whole.
pub(crate) fn escape_html(json: &str, out: &mut String) {
    out.reserve(json.len());
    let bytes = json.as_bytes();
    // The next `<`, `>` or `&`, and the next E2 (which leads U+2028 and U+2029: E2 80 A8 and
    // E2 80 A9), each searched for again only once passed.
    let find = |from: usize| memchr::memchr3(b'<', b'>', b'&', &bytes[from..]).map(|at| from + at);
    let find_e2 = |from: usize| memchr::memchr(0xe2, &bytes[from..]).map(|at| from + at);
    let (mut next, mut next_e2) = (find(0), find_e2(0));
    let mut run = 0;
    loop {
        let at = match (next, next_e2) {
            (Some(a), Some(b)) => a.min(b),
            (Some(at), None) | (None, Some(at)) => at,
            (None, None) => break,
        };
        let (escape, width) = if next == Some(at) {
            next = find(at + 1);
            let escape = match bytes[at] {
                b'<' => "\\u003c",
                b'>' => "\\u003e",
                _ => "\\u0026",
            };
            (escape, 1)
        } else {
            next_e2 = find_e2(at + 1);
            match bytes.get(at + 1..at + 3) {
                Some([0x80, 0xa8]) => ("\\u2028", 3),
                Some([0x80, 0xa9]) => ("\\u2029", 3),
                _ => continue,
            }
        };
        // `run` and `at` are at the start of a character: an ASCII byte, or an E2 leading a
        // three-byte one.
        out.push_str(&json[run..at]);
        out.push_str(escape);
        run = at + width;
    }
    out.push_str(&json[run..]);
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn escape_html_escapes_what_go_does_and_copies_the_rest() {
        let mut out = String::new();
        escape_html("a<b>&c\u{2028}d\u{2029}e\u{2027}f\u{e9}\u{1f600}", &mut out);
        assert_eq!(
            out,
            "a\\u003cb\\u003e\\u0026c\\u2028d\\u2029e\u{2027}f\u{e9}\u{1f600}"
        );
        let mut plain = String::from("kept:");
        escape_html("no escapes here", &mut plain);
        assert_eq!(plain, "kept:no escapes here");
    }

    // Every string of up to four characters from an alphabet of what is escaped and what
    // looks like it, against escaping one character at a time.
    #[test]
    fn escape_html_agrees_with_escaping_each_character() {
        let alphabet = [
            'a', '<', '>', '&', '\u{2028}', '\u{2029}', '\u{2027}', '\u{e9}',
        ];
        let one = |c: char| match c {
            '<' => "\\u003c".to_owned(),
            '>' => "\\u003e".to_owned(),
            '&' => "\\u0026".to_owned(),
            '\u{2028}' => "\\u2028".to_owned(),
            '\u{2029}' => "\\u2029".to_owned(),
            c => c.to_string(),
        };
        let mut strings = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = strings
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(longer);
            strings.dedup();
        }
        for s in &strings {
            let mut out = String::new();
            escape_html(s, &mut out);
            assert_eq!(out, s.chars().map(one).collect::<String>(), "{s:?}");
        }
    }

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

    // Members the struct does not declare come after the declared ones, sorted; skipped ones
    // are left out wherever they are.
    #[test]
    fn undeclared_members_come_last_and_skipped_ones_not_at_all() {
        let config_map = GoType::Struct("io.k8s.api.core.v1.ConfigMap".into());
        let value = json!({"zz": 1, "data": {"a": "1"}, "aa": 2, "kind": "ConfigMap"});
        let mut out = String::new();
        write_map(Some(&config_map), value.as_object().unwrap(), &[], &mut out);
        assert_eq!(
            out,
            r#"{"kind":"ConfigMap","data":{"a":"1"},"aa":2,"zz":1}"#
        );
        for (skip, want) in [
            (&["kind", "aa"][..], r#"{"data":{"a":"1"},"zz":1}"#),
            (
                &["zz", "zz", "missing"][..],
                r#"{"kind":"ConfigMap","data":{"a":"1"},"aa":2}"#,
            ),
            (&["kind", "data", "aa", "zz"][..], "{}"),
        ] {
            let mut out = String::new();
            write_map(
                Some(&config_map),
                value.as_object().unwrap(),
                skip,
                &mut out,
            );
            assert_eq!(out, want, "skipping {skip:?}");
        }
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

    #[test]
    fn strings_are_escaped_as_go_escapes_them_for_html() {
        assert_eq!(
            written(None, &json!({"k": "<a & b>\u{2028}"})),
            r#"{"k":"\u003ca \u0026 b\u003e\u2028"}"#
        );
    }
}
