//! JSON as Go's `encoding/json` writes it, for the texts the real server builds from JSON
//! (field paths of managed fields, values quoted in field errors): keys sorted, `<`, `>`, `&`
//! and the line separators escaped, floats in Go's format.

use std::fmt::Write as _;

use serde_json::Value;

use super::number::Num;

/// `json.Marshal` of a value.
pub(crate) fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(&mut out, v);
    out
}

/// `json.Marshal` of a string.
pub(crate) fn go_json_string(s: &str) -> String {
    let mut out = String::new();
    write_go_string(&mut out, s);
    out
}

fn write_go_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) => out.push_str(&go_float(f)),
        },
        Value::String(s) => write_go_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(out, item);
            }
            out.push(']');
        }
        // serde_json's map iterates in key order, as Go sorts map keys.
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(out, k);
                out.push(':');
                write_go_json(out, item);
            }
            out.push('}');
        }
    }
}

/// `encoding/json`'s float format: plain between 1e-6 and 1e21, else the shortest exponent
/// form with Go's sign (`1e+21`, `1.5e-7`).
fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    go_exponent(f).replace("e-0", "e-")
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: the shortest exponent form with a sign and at least
/// two exponent digits (`1e+21`, `1.5e-07`).
pub(crate) fn go_exponent(f: f64) -> String {
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// A JSON string with Go's escapes: `<`, `>`, `&`, U+2028 and U+2029 as `\u` sequences.
pub(crate) fn write_go_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_sorted_html_escaped_and_go_floats() {
        assert_eq!(
            go_json(&json!({"b": [1, 2.5, 1e21, 1.5e-7], "a": "<&>\u{2028}"})),
            r#"{"a":"\u003c\u0026\u003e\u2028","b":[1,2.5,1e+21,1.5e-7]}"#
        );
        assert_eq!(go_json(&json!(2.0)), "2");
        assert_eq!(go_json(&json!(1e-7)), "1e-7");
        assert_eq!(go_exponent(1.5e-7), "1.5e-07");
    }
}
