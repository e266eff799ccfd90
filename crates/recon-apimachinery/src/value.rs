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

use crate::json::{Map, Number, Value};

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
/// strings, bools, lists, maps, null. Lists compare item by item, then by length; maps as
/// `MapCompareUsing` does (the side missing a key sorts after). The first difference met decides, so the walk keeps
/// its own stack of the lists and maps it is in rather than recursing.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    let mut open: Vec<Comparing<'_>> = Vec::new();
    let mut next = Some((a, b));
    loop {
        if let Some((a, b)) = next.take() {
            let c = match (a, b) {
                (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
                (Value::String(x), Value::String(y)) => x.cmp(y),
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                (Value::Array(x), Value::Array(y)) => {
                    open.push(Comparing::Lists(
                        x.iter().zip(y.iter()),
                        x.len().cmp(&y.len()),
                    ));
                    Ordering::Equal
                }
                (Value::Object(x), Value::Object(y)) => {
                    open.push(Comparing::Maps(MapSteps::new(x, y)));
                    Ordering::Equal
                }
                (Value::Null, Value::Null) => Ordering::Equal,
                _ => rank(a).cmp(&rank(b)),
            };
            if c != Ordering::Equal {
                return c;
            }
        }
        let Some(top) = open.last_mut() else {
            return Ordering::Equal;
        };
        let step = match top {
            Comparing::Lists(items, by_length) => match items.next() {
                Some(pair) => Ok(pair),
                None => Err(*by_length),
            },
            Comparing::Maps(steps) => steps.next(),
        };
        match step {
            Ok(pair) => next = Some(pair),
            Err(Ordering::Equal) => {
                open.pop();
            }
            Err(decided) => return decided,
        }
    }
}

fn compare_numbers(x: &Number, y: &Number) -> Ordering {
    match (Num::of(x), Num::of(y)) {
        (Num::Int(i), Num::Int(j)) => i.cmp(&j),
        (x, y) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
    }
}

/// Two lists or maps being compared.
enum Comparing<'a> {
    /// The item pairs left, and how the lengths compare (what decides once they run out).
    Lists(
        std::iter::Zip<std::slice::Iter<'a, Value>, std::slice::Iter<'a, Value>>,
        Ordering,
    ),
    Maps(MapSteps<'a>),
}

/// `MapCompareUsing`: walk the union of keys in lexical order; the side missing a key sorts
/// after the side that has it, a side that runs out of keys sorts first.
struct MapSteps<'a> {
    x: std::iter::Peekable<crate::json::map::Iter<'a>>,
    y: std::iter::Peekable<crate::json::map::Iter<'a>>,
    lens: (usize, usize),
    /// How many keys were walked.
    i: usize,
}

impl<'a> MapSteps<'a> {
    fn new(x: &'a Map, y: &'a Map) -> Self {
        MapSteps {
            x: x.iter().peekable(),
            y: y.iter().peekable(),
            lens: (x.len(), y.len()),
            i: 0,
        }
    }

    /// The values to compare next, or the ordering this step decides (`Equal`: the maps are
    /// equal).
    fn next(&mut self) -> Result<(&'a Value, &'a Value), Ordering> {
        let (l, r) = match (self.x.peek(), self.y.peek()) {
            (None, None) => return Err(Ordering::Equal),
            (Some(_), None) => (self.x.next().map(|e| e.1), None),
            (None, Some(_)) => (None, self.y.next().map(|e| e.1)),
            (Some((kx, _)), Some((ky, _))) => match kx.cmp(ky) {
                Ordering::Less => (self.x.next().map(|e| e.1), None),
                Ordering::Greater => (None, self.y.next().map(|e| e.1)),
                Ordering::Equal => (self.x.next().map(|e| e.1), self.y.next().map(|e| e.1)),
            },
        };
        let i = self.i;
        self.i += 1;
        if i == self.lens.0 {
            Err(Ordering::Less)
        } else if i == self.lens.1 {
            Err(Ordering::Greater)
        } else {
            match (l, r) {
                (None, _) => Err(Ordering::Greater),
                (_, None) => Err(Ordering::Less),
                (Some(l), Some(r)) => Ok((l, r)),
            }
        }
    }
}

/// `value.Equals`: numbers compare numerically, everything else structurally; compared a
/// list or map at a time (only pairs of containers wait their turn).
pub fn equals(a: &Value, b: &Value) -> bool {
    let mut pending = Vec::new();
    let (mut a, mut b) = (a, b);
    loop {
        // Scalars at once; a pair of containers waits for its turn.
        let equal = match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|(l, r)| match scalar_equals(l, r) {
                            Some(same) => same,
                            None => {
                                pending.push((l, r));
                                true
                            }
                        })
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter().all(|(k, l)| {
                        y.get(k).is_some_and(|r| match scalar_equals(l, r) {
                            Some(same) => same,
                            None => {
                                pending.push((l, r));
                                true
                            }
                        })
                    })
            }
            (l, r) => scalar_equals(l, r).unwrap_or(false),
        };
        if !equal {
            return false;
        }
        match pending.pop() {
            Some((x, y)) => (a, b) = (x, y),
            None => return true,
        }
    }
}

/// [`equals`] of two values unless both are containers of the same kind (`None`: their
/// items decide).
fn scalar_equals(a: &Value, b: &Value) -> Option<bool> {
    Some(match (a, b) {
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => return None,
        (Value::Number(x), Value::Number(y)) => match (Num::of(x), Num::of(y)) {
            (Num::Int(i), Num::Int(j)) => i == j,
            (x, y) => x.as_f64() == y.as_f64(),
        },
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    })
}

/// `value.ToString`: how path elements print values in conflict messages: `null`, `true`,
/// numbers as Go prints them, strings quoted, lists as `[a,b]`, maps as `k=vk2=v2`.
pub fn to_string(v: &Value) -> String {
    /// A list or map being printed: what is left of it, and whether an item was printed.
    enum Printing<'a> {
        List(std::slice::Iter<'a, Value>, bool),
        Map(crate::json::map::Iter<'a>),
    }
    let mut out = String::new();
    let mut open: Vec<Printing<'_>> = Vec::new();
    let mut next = Some(v);
    loop {
        match next.take() {
            Some(Value::Array(items)) => {
                out.push('[');
                open.push(Printing::List(items.iter(), false));
            }
            Some(Value::Object(fields)) => open.push(Printing::Map(fields.iter())),
            Some(scalar) => out.push_str(&scalar_string(scalar)),
            None => {}
        }
        let Some(top) = open.last_mut() else {
            return out;
        };
        match top {
            Printing::List(items, any) => match items.next() {
                Some(item) => {
                    if std::mem::replace(any, true) {
                        out.push(',');
                    }
                    next = Some(item);
                }
                None => {
                    out.push(']');
                    open.pop();
                }
            },
            Printing::Map(fields) => match fields.next() {
                Some((k, v)) => {
                    out.push_str(k);
                    out.push('=');
                    next = Some(v);
                }
                None => {
                    open.pop();
                }
            },
        }
    }
}

fn scalar_string(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        },
        Value::String(s) => go_quote(s),
        Value::Null | Value::Array(_) | Value::Object(_) => "null".to_owned(),
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

    /// The recursive reading of upstream's `Compare`, `Equals` and `ToString`, which the walks
    /// above must agree with.
    mod by_recursion {
        use super::*;

        pub(super) fn compare(a: &Value, b: &Value) -> Ordering {
            match (a, b) {
                (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
                (Value::String(x), Value::String(y)) => x.cmp(y),
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                (Value::Array(x), Value::Array(y)) => x
                    .iter()
                    .zip(y.iter())
                    .map(|(l, r)| compare(l, r))
                    .find(|c| c.is_ne())
                    .unwrap_or(x.len().cmp(&y.len())),
                (Value::Object(x), Value::Object(y)) => {
                    let keys: std::collections::BTreeSet<&String> =
                        x.keys().chain(y.keys()).collect();
                    for (i, k) in keys.into_iter().enumerate() {
                        let c = if i == x.len() {
                            Ordering::Less
                        } else if i == y.len() {
                            Ordering::Greater
                        } else {
                            match (x.get(k), y.get(k)) {
                                (None, _) => Ordering::Greater,
                                (_, None) => Ordering::Less,
                                (Some(l), Some(r)) => compare(l, r),
                            }
                        };
                        if c.is_ne() {
                            return c;
                        }
                    }
                    Ordering::Equal
                }
                (Value::Null, Value::Null) => Ordering::Equal,
                _ => rank(a).cmp(&rank(b)),
            }
        }

        pub(super) fn to_string(v: &Value) -> String {
            match v {
                Value::Array(items) => {
                    format!(
                        "[{}]",
                        items.iter().map(to_string).collect::<Vec<_>>().join(",")
                    )
                }
                Value::Object(m) => m
                    .iter()
                    .map(|(k, v)| format!("{k}={}", to_string(v)))
                    .collect(),
                scalar => scalar_string(scalar),
            }
        }
    }

    /// Small values of every kind, with numbers that are equal as ints and floats.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-2i64..3).prop_map(Value::from),
            (-2i64..3).prop_map(|n| Value::from(n as f64)),
            Just(Value::from(0.5)),
            prop::sample::select(vec!["", "a", "b"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_walks_agree_with_the_recursive_reading(a in any_value(), b in any_value()) {
            proptest::prop_assert_eq!(compare(&a, &b), by_recursion::compare(&a, &b));
            proptest::prop_assert_eq!(equals(&a, &b), by_recursion::compare(&a, &b).is_eq());
            proptest::prop_assert_eq!(to_string(&a), by_recursion::to_string(&a));
        }
    }

    // Values far deeper than Go reads compare, test equal and print on a test thread's stack.
    #[test]
    fn deep_values_take_no_stack() {
        let nest = |leaf: Value| {
            let mut v = leaf;
            for i in 0..100_000 {
                v = if i % 2 == 0 {
                    Value::Object(Map::from_iter([("k", v)]))
                } else {
                    Value::from(vec![v])
                };
            }
            v
        };
        let (one, two) = (nest(json!(1)), nest(json!(2)));
        assert_eq!(compare(&one, &two), Ordering::Less);
        assert_eq!(compare(&one, &nest(json!(1.0))), Ordering::Equal);
        assert!(equals(&one, &nest(json!(1.0))));
        assert!(!equals(&one, &two));
        // Lists outermost, each around a map: `[k=[k=…k=1]…]`.
        let printed = to_string(&one);
        assert!(printed == format!("{}1{}", "[k=".repeat(50_000), "]".repeat(50_000)));
    }
}
