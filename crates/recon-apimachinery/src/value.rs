//! JSON values the way structured-merge-diff's `value` package orders, compares and prints
//! them.
//!
//! Upstream works on Go's `interface{}` decoding of JSON, where whole numbers that fit an
//! `int64` are integers and everything else numeric is a `float64`; ints and floats compare
//! numerically (`value/value.go` `CompareUsing`, `EqualsUsing`).
//!
//! ```
//! use std::cmp::Ordering;
//!
//! use recon_apimachinery::value::{compare, equals, to_string};
//! use recon_apimachinery::json;
//!
//! assert_eq!(compare(&json!(1.5), &json!(2)), Ordering::Less);
//! assert!(equals(&json!([1]), &json!([1.0])));
//! assert_eq!(to_string(&json!({"a": "x"})), r#"a="x""#);
//! ```

use std::cmp::Ordering;

use crate::json::{Map, Value};

use crate::go_json::{Num, go_float};
use crate::go_quote;

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
#[inline]
pub fn compare(a: &Value, b: &Value) -> Ordering {
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
fn compare_maps(x: &Map, y: &Map) -> Ordering {
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
pub fn equals(a: &Value, b: &Value) -> bool {
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

/// `value.ToString`: how path elements print values in conflict messages.
pub fn to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        },
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", to_string(v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::json;

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
        assert_eq!(to_string(&json!("a\"b")), r#""a\"b""#);
        assert_eq!(to_string(&json!(80)), "80");
        assert_eq!(to_string(&json!(1.5)), "1.5");
        assert_eq!(to_string(&json!(1e21)), "1e+21");
        assert_eq!(to_string(&json!(1e6)), "1e+06");
        assert_eq!(to_string(&json!(123456.5)), "123456.5");
    }
}
