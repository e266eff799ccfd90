//! Values as `field.Error` prints them when they are not strings or numbers: Go's
//! `json.Marshal` (keys sorted, `<`, `>` and `&` escaped).

use std::fmt::Write as _;

use serde_json::Value as Json;

use super::super::number::Num;
use super::tree::RawRule;

/// `apiextensions.ValidationRule` as JSON (its Go field names, in their order).
pub(super) fn rule(r: &RawRule) -> String {
    let mut out = String::from("{\"Rule\":");
    string(&mut out, &r.rule);
    out.push_str(",\"Message\":");
    string(&mut out, &r.message);
    out.push_str(",\"MessageExpression\":");
    string(&mut out, &r.message_expression);
    out.push_str(",\"Reason\":");
    match &r.reason {
        Some(reason) => string(&mut out, reason),
        None => out.push_str("null"),
    }
    out.push_str(",\"FieldPath\":");
    string(&mut out, &r.field_path);
    out.push_str(",\"OptionalOldSelf\":");
    out.push_str(match r.optional_old_self {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    });
    out.push('}');
    out
}

/// Decoded JSON as Go marshals it.
pub(super) fn value(v: &Json) -> String {
    let mut out = String::new();
    write(&mut out, v);
    out
}

fn write(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => match Num::of(n) {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) => out.push_str(&float(f)),
        },
        Json::String(s) => string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(out, k);
                out.push(':');
                if let Some(item) = m.get(k) {
                    write(out, item);
                }
            }
            out.push('}');
        }
    }
}

/// `encoding/json`'s float format: `%f`-like between 1e-6 and 1e21, else the shortest
/// exponent form with `e-7` rather than `e-07`.
fn float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        let digits = if sign == '-' {
            digits.to_owned()
        } else {
            format!("{digits:0>2}")
        };
        return format!("{mantissa}e{sign}{digits}");
    }
    format!("{f}")
}

/// A JSON string with Go's escapes.
fn string(out: &mut String, s: &str) {
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
