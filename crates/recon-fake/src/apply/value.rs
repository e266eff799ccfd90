//! JSON values the way structured-merge-diff orders, compares and prints them.
//!
//! Upstream works on Go's `interface{}` decoding of JSON, where whole numbers that fit an
//! `int64` are integers and everything else numeric is a `float64`; ints and floats compare
//! numerically (`value/value.go` `CompareUsing`, `EqualsUsing`).

use std::cmp::Ordering;

use recon_apimachinery::go_quote;
use serde_json::{Map, Value};

use crate::wire::go_json::go_exponent;
use crate::wire::number::Num;
pub(super) use crate::wire::number::go_type;

fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(n) => match Num::of(n) {
            Num::Float(_) => 0,
            Num::Int(_) => 1,
        },
        Value::String(_) => 2,
        Value::Bool(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
        Value::Null => 6,
    }
}

/// The total order of `value.Compare`: floats, ints (numerically comparable with floats),
/// strings, bools, lists, maps, null.
pub(super) fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Num::of(x), Num::of(y)) {
            (Num::Int(i), Num::Int(j)) => i.cmp(&j),
            (x, y) => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => compare_maps(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

/// `MapCompareUsing`: walk the union of keys in lexical order; the side missing a key sorts
/// after the side that has it, a side that runs out of keys sorts first.
fn compare_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    let (mut xi, mut yi) = (x.iter().peekable(), y.iter().peekable());
    let mut i = 0;
    loop {
        let (l, r) = match (xi.peek(), yi.peek()) {
            (None, None) => return Ordering::Equal,
            (Some(_), None) => (xi.next().map(|e| e.1), None),
            (None, Some(_)) => (None, yi.next().map(|e| e.1)),
            (Some((kx, _)), Some((ky, _))) => match kx.cmp(ky) {
                Ordering::Less => (xi.next().map(|e| e.1), None),
                Ordering::Greater => (None, yi.next().map(|e| e.1)),
                Ordering::Equal => (xi.next().map(|e| e.1), yi.next().map(|e| e.1)),
            },
        };
        let c = if i == x.len() {
            Ordering::Less
        } else if i == y.len() {
            Ordering::Greater
        } else {
            match (l, r) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(l), Some(r)) => compare(l, r),
            }
        };
        i += 1;
        if c != Ordering::Equal {
            return c;
        }
    }
}

/// `value.Equals`: numbers compare numerically, everything else structurally.
pub(super) fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Num::of(x), Num::of(y)) {
            (Num::Int(i), Num::Int(j)) => i == j,
            (x, y) => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equals(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, l)| y.get(k).is_some_and(|r| equals(l, r)))
        }
        _ => a == b,
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits, exponent
/// form below 1e-4 and from 1e6 on (`1e+06`).
fn go_float_v(f: f64) -> String {
    let exp = if f == 0.0 {
        0
    } else {
        f.abs().log10().floor() as i32
    };
    if f != 0.0 && !(-4..6).contains(&exp) {
        go_exponent(f)
    } else {
        format!("{f}")
    }
}

/// `value.ToString`: how path elements print values in conflict messages.
pub(super) fn to_display(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float_v(f),
        },
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(to_display).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", to_display(v)))
            .collect(),
    }
}

/// Go's `%v` of an `interface{}` holding decoded JSON (used inside upstream error texts).
pub(super) fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float_v(f),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_v).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_v(v))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn order_follows_upstream_type_ranking() {
        let ordered = [
            json!(0.5),
            json!(1),
            json!(1.5),
            json!(2),
            json!("a"),
            json!("b"),
            json!(false),
            json!(true),
            json!([1]),
            json!([1, 2]),
            json!({"a": 1}),
            json!(null),
        ];
        for w in ordered.windows(2) {
            assert_eq!(compare(&w[0], &w[1]), Ordering::Less, "{} < {}", w[0], w[1]);
            assert_eq!(compare(&w[1], &w[0]), Ordering::Greater);
        }
        assert_eq!(compare(&json!(1), &json!(1.0)), Ordering::Equal);
        assert!(equals(&json!(1), &json!(1.0)));
        assert!(!equals(&json!(1), &json!("1")));
        assert!(equals(
            &json!({"a": [1, {"b": 2.0}]}),
            &json!({"a": [1.0, {"b": 2}]})
        ));
    }

    #[test]
    fn maps_compare_key_by_key() {
        // The map that has a key the other lacks sorts first at that key.
        assert_eq!(compare(&json!({"a": 1}), &json!({"b": 1})), Ordering::Less);
        assert_eq!(
            compare(&json!({"a": 1}), &json!({"a": 1, "b": 1})),
            Ordering::Less
        );
        assert_eq!(
            compare(&json!({"a": 2}), &json!({"a": 1, "b": 1})),
            Ordering::Greater
        );
        assert_eq!(compare(&json!({}), &json!({})), Ordering::Equal);
    }

    #[test]
    fn display_matches_go() {
        assert_eq!(to_display(&json!("a\"b")), r#""a\"b""#);
        assert_eq!(to_display(&json!(80)), "80");
        assert_eq!(to_display(&json!(1.5)), "1.5");
        assert_eq!(to_display(&json!(1e21)), "1e+21");
        assert_eq!(to_display(&json!(1e6)), "1e+06");
        assert_eq!(to_display(&json!(123456.5)), "123456.5");
        assert_eq!(go_v(&json!([1])), "[1]");
        assert_eq!(go_type(&json!("x")), "string");
        assert_eq!(go_quote("tab\there\u{1}"), "\"tab\\there\\x01\"");
    }
}
