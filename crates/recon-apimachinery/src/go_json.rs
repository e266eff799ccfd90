//! JSON as Go's `encoding/json` writes it and as the apiserver decodes it into unstructured
//! content, for the texts the real server builds from JSON (field paths of managed fields,
//! values quoted in field errors): keys sorted, `<`, `>`, `&` and the line separators escaped,
//! floats in Go's format; an integral number that fits is an `int64`, any other a `float64`,
//! each printed as Go's `%v` prints it.
//!
//! ```
//! use recon_apimachinery::go_json::{go_float, go_json};
//! use recon_apimachinery::json;
//!
//! assert_eq!(go_json(&json!({"b": 1e21, "a": "<"})), r#"{"a":"\u003c","b":1e+21}"#);
//! assert_eq!(go_float(1e6), "1e+06");
//! ```

use std::fmt::Write as _;

use crate::json::{Event, Number, Root, Value, walk};
use crate::scan::find_first;

/// `json.Marshal` of a value.
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(&mut out, v);
    out
}

/// `json.Marshal` of a string.
pub fn go_json_string(s: &str) -> String {
    let mut out = String::new();
    write_go_string(&mut out, s);
    out
}

/// Written one container at a time: a value may nest as deep as Go decodes (10,000 levels).
fn write_go_json(out: &mut String, v: &Value) {
    // Writing to a `String` cannot fail.
    let _ = walk(Root::Value(v), &mut |event| {
        match event {
            Event::Open(array, _) => out.push(if array { '[' } else { '{' }),
            Event::Item(key, first) => {
                if !first {
                    out.push(',');
                }
                if let Some(key) = key {
                    write_go_string(out, key);
                    out.push(':');
                }
            }
            Event::Scalar(Value::Null) => out.push_str("null"),
            Event::Scalar(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
            Event::Scalar(Value::Number(n)) => match Num::of(n) {
                Num::Int(i) => {
                    let _ = write!(out, "{i}");
                }
                Num::Float(f) => out.push_str(&json_float(f)),
            },
            Event::Scalar(Value::String(s)) => write_go_string(out, s),
            // Containers come as `Open` and `Close`.
            Event::Scalar(Value::Array(_) | Value::Object(_)) => {}
            // The map iterates in key order, as Go sorts map keys.
            Event::Close(array, _) => out.push(if array { ']' } else { '}' }),
        }
        Ok(())
    });
}

/// `encoding/json`'s float format: plain between 1e-6 and 1e21, else the shortest exponent
/// form with Go's sign (`1e+21`, `1.5e-7`).
fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    go_exponent(f).replace("e-0", "e-")
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: the shortest exponent form with a sign and at least
/// two exponent digits (`1e+21`, `1.5e-07`).
fn go_exponent(f: f64) -> String {
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

/// A JSON string as `encoding/json` writes it (`appendString` in Go 1.22 and later, HTML-safe):
/// `"` and `\\` escaped, `\b`, `\f`, `\n`, `\r` and `\t` short, other control characters,
/// `<`, `>`, `&`, U+2028 and U+2029 as `\u00XX`-style sequences. Runs of characters that need
/// nothing are copied whole.
pub fn write_go_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let (mut run, mut i) = (0, 0);
    loop {
        i = find_first(bytes, i, needs_look);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let (escape, width): (&str, usize) = match b {
            b'"' => ("\\\"", 1),
            b'\\' => ("\\\\", 1),
            b'\n' => ("\\n", 1),
            b'\r' => ("\\r", 1),
            b'\t' => ("\\t", 1),
            0x08 => ("\\b", 1),
            0x0c => ("\\f", 1),
            b'<' => ("\\u003c", 1),
            b'>' => ("\\u003e", 1),
            b'&' => ("\\u0026", 1),
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9; any other E2 sequence is copied.
            0xe2 => match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(0x80), Some(0xa8)) => ("\\u2028", 3),
                (Some(0x80), Some(0xa9)) => ("\\u2029", 3),
                _ => {
                    i += 1;
                    continue;
                }
            },
            control => {
                out.push_str(&s[run..i]);
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(control >> 4)]));
                out.push(char::from(HEX[usize::from(control & 0xf)]));
                i += 1;
                run = i;
                continue;
            }
        };
        out.push_str(&s[run..i]);
        out.push_str(escape);
        i += width;
        run = i;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The bytes [`write_go_string`] looks at: control characters, `"`, `\\`, `<`, `>`, `&`, and the
/// first byte of U+2028 and U+2029.
fn needs_look(b: u8) -> bool {
    // `|`, not `||`: no branch, so that a chunk is tested in vector instructions.
    (b < 0x20) | (b == b'"') | (b == b'\\') | (b == b'<') | (b == b'>') | (b == b'&') | (b == 0xe2)
}

/// A decoded JSON number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// An integral literal that fits an `int64`.
    Int(i64),
    /// Any other number.
    Float(f64),
}

impl Num {
    /// How the apiserver decodes `n`.
    #[inline]
    pub fn of(n: &Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(0.0)),
        }
    }

    /// The number as a `float64`.
    #[inline]
    pub fn as_f64(self) -> f64 {
        match self {
            // Precision loss is Go's too (`valueHelp.asFloat64`).
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// `%v`.
    pub fn go(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        }
    }
}

/// Go's `%T` of a value decoded into unstructured content.
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) => match Num::of(n) {
            Num::Int(_) => "int64",
            Num::Float(_) => "float64",
        },
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits that
/// round-trip, in exponent form when the exponent is below -4 or at least 6.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: `d.ddde±x`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        // Plain notation, as `{}` prints it for this range.
        let plain = format!("{f}");
        return plain;
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use crate::json;

    use super::*;

    // Go decodes 10,000 levels; the writer walks far deeper on a test thread's stack.
    #[test]
    fn a_hundred_thousand_levels_are_written_without_recursion() {
        let mut value = json!("<");
        for _ in 0..100_000 {
            value = json::Value::Array(vec![json!(1.0), value].into());
        }
        let text = go_json(&value);
        assert_eq!(
            text,
            format!(
                r#"{}"\u003c"{}"#,
                "[1,".repeat(100_000),
                "]".repeat(100_000)
            )
        );
    }

    // `encoding/json` `appendString` since Go 1.22 (kube-apiserver 1.36 is built with 1.25):
    // `\b` and `\f` short, other controls as `\u00XX`, the HTML characters and line separators
    // as `\u` sequences, everything else as it is (U+2027 and € share U+2028's first byte).
    #[test]
    fn strings_take_go_s_escapes() {
        assert_eq!(
            go_json_string("a\u{8}b\u{c}c\n\r\t\u{1}\u{1f}\"\\<>&\u{2028}\u{2029}\u{2027}€é"),
            "\"a\\bb\\fc\\n\\r\\t\\u0001\\u001f\\\"\\\\\\u003c\\u003e\\u0026\\u2028\\u2029\u{2027}€é\""
        );
    }

    fn serde_json_string(text: &str) -> String {
        serde_json::Value::String(text.to_owned()).to_string()
    }

    /// serde_json's string made HTML-safe as Go's is.
    fn html_safe(serde: &str) -> String {
        serde
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029")
    }

    proptest::proptest! {
        /// Go's escapes are serde_json's (which writes `\b` and `\f` short too) with the HTML
        /// characters and line separators escaped: the run-copying writer agrees, on any text.
        #[test]
        fn strings_are_serde_json_s_escapes_made_html_safe(
            text in "(\\PC|[\\x00-\\x1f\\u{2028}\\u{2029}\u{2027}<>&\"\\\\€])*"
        ) {
            proptest::prop_assert_eq!(go_json_string(&text), html_safe(&serde_json_string(&text)));
        }

        /// Long runs of plain text are passed over a chunk at a time: what ends a chunk, or
        /// falls anywhere in one, is found the same.
        #[test]
        fn long_strings_are_escaped_wherever_the_escapes_fall(
            text in "([a-z]{0,70}[\\x00-\\x1f<>&\"\\\\\u{2028}\u{2027}é]){0,6}[a-z]{0,70}"
        ) {
            let serde = serde_json_string(&text);
            proptest::prop_assert_eq!(go_json_string(&text), html_safe(&serde));
            let read = crate::json::read(serde.as_bytes());
            proptest::prop_assert_eq!(read, Some(crate::json::Value::String(text)));
        }
    }

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

    #[test]
    fn go_types_are_those_of_unstructured_content() {
        assert_eq!(go_type(&json!("x")), "string");
        assert_eq!(go_type(&json!(1)), "int64");
        assert_eq!(go_type(&json!(1.5)), "float64");
        assert_eq!(go_type(&json!(null)), "<nil>");
        assert_eq!(crate::go_quote("tab\there\u{1}"), "\"tab\\there\\x01\"");
    }

    #[test]
    fn go_prints_floats_like_v() {
        assert_eq!(go_float(2.5), "2.5");
        assert_eq!(go_float(3.0), "3");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1e20), "1e+20");
        assert_eq!(go_float(123_456_789.0), "1.23456789e+08");
        assert_eq!(go_float(100_000.0), "100000");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(-1.5e300), "-1.5e+300");
    }
}
