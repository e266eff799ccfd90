//! Writing a value as Go's `encoding/json` writes what it decoded into: a struct's fields in
//! declaration order, a map's keys sorted, no spaces, and `<`, `>`, `&` (and the JavaScript
//! line separators) escaped, as `json.Marshal` does by default.

use recon_apimachinery::json::Value;

use super::{GoType, TYPES};

/// Writes `value`, of Go type `ty`, to `out`. `None` is an unstructured value
/// (`map[string]interface{}`), written with every map's keys sorted.
pub(crate) fn write_value(ty: Option<&GoType>, value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => write_map(ty, map, &[], out),
        Value::Array(items) => write_array(items, out, |_, item, out| {
            write_value(child_type(ty, ""), item, out);
        }),
        Value::String(text) => write_string(text, out),
        // Numbers, booleans and null as serde_json prints them, without a copy.
        other => {
            use std::fmt::Write;
            let _ = write!(out, "{other}");
        }
    }
}

/// Writes `map`, of Go type `ty`, without its keys in `skip`: a struct's fields in declaration
/// order, any other map's keys sorted.
pub(crate) fn write_map(
    ty: Option<&GoType>,
    map: &recon_apimachinery::json::Map,
    skip: &[&str],
    out: &mut String,
) {
    let kept = |key: &str| !skip.contains(&key);
    let go_struct = match ty {
        Some(GoType::Struct(name)) => TYPES.get(name),
        _ => None,
    };
    // The struct is looked up once, not again for each field.
    let member = |key: &str, value: &Value, out: &mut String| {
        let field = match go_struct {
            Some(go_struct) => go_struct.fields.get(key),
            None => child_type(ty, key),
        };
        write_value(field, value, out);
    };
    match go_struct {
        Some(go_struct) => {
            let declared = go_struct
                .order
                .iter()
                .filter(|key| kept(key))
                .filter_map(|key| map.get_key_value(key));
            // Keys the struct lacks are not decoded into it; kept last should one come.
            let undeclared = map
                .iter()
                .filter(|(k, _)| !go_struct.fields.contains_key(*k) && kept(k));
            write_object(declared.chain(undeclared), out, member);
        }
        None => write_object(map.iter().filter(|(k, _)| kept(k)), out, member),
    }
}

/// Writes an object of `members`, each value by `write`.
pub(crate) fn write_object<'a>(
    members: impl IntoIterator<Item = (&'a String, &'a Value)>,
    out: &mut String,
    mut write: impl FnMut(&str, &Value, &mut String),
) {
    out.push('{');
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(key, out);
        out.push(':');
        write(key, value, out);
    }
    out.push('}');
}

/// Writes an array of `items`, each by `write` (given its index).
pub(crate) fn write_array(
    items: &[Value],
    out: &mut String,
    mut write: impl FnMut(usize, &Value, &mut String),
) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(i, item, out);
    }
    out.push(']');
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
