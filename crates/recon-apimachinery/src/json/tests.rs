use proptest::prelude::*;

use super::*;

/// `depth` containers, alternating objects (field `a`) and arrays, around a string.
fn nested(depth: usize) -> Value {
    let mut value = Value::from("leaf");
    for level in 0..depth {
        value = if level % 2 == 0 {
            Value::Object(Map::from_iter([("a", value)]))
        } else {
            Value::Array(Array::from(vec![Value::from(level), value]))
        };
    }
    value
}

#[test]
fn a_map_prints_as_its_object_does() {
    let map = Map::from_iter([("b", json!([1, {"c": "<"}])), ("a", json!(null))]);
    assert_eq!(map.to_string(), r#"{"a":null,"b":[1,{"c":"<"}]}"#);
    assert_eq!(
        format!("{map:#}"),
        format!("{:#}", Value::Object(map.clone()))
    );
}

// A test thread's stack (2 MiB) holds values far deeper than Go decodes (10,000 levels): they
// are built, copied, compared, printed, converted and dropped one container at a time.
#[test]
fn a_value_a_hundred_thousand_levels_deep_takes_no_stack() {
    let deep = nested(100_000);
    let copy = deep.clone();
    assert!(copy == deep);
    let mut other = nested(100_000);
    // The outermost level (99,999) is an array; 49,999 steps of two levels end at level 1.
    *other.pointer_mut(&"/1/a".repeat(49_999)).unwrap() = Value::from("other");
    assert!(other != deep);
    let (mut open, mut close) = (String::new(), String::new());
    for level in (0..100_000).rev() {
        if level % 2 == 0 {
            open.push_str("{\"a\":");
            close.push('}');
        } else {
            open.push_str(&format!("[{level},"));
            close.push(']');
        }
    }
    // The outermost closes last.
    let close: String = close.chars().rev().collect();
    let text = deep.to_string();
    assert!(text == format!("{open}\"leaf\"{close}"));
    assert!(
        format!("{deep:?}")
            .starts_with("Array [Number(99999), Object {\"a\": Array [Number(99997)")
    );
    // The first line opens the outermost array; then a line per item (two in each array,
    // one in each object) and one closing each container. (Deeper, the indentation alone
    // would be gigabytes.)
    let shallower = nested(2_000);
    assert_eq!(format!("{shallower:#}").lines().count(), 1 + 3_000 + 2_000);
    let theirs = serde_json::Value::from(copy);
    assert!(theirs.is_array());
    // serde_json's own value recurses to drop: back into a `Value` it goes, whole.
    let back = Value::from(theirs);
    assert!(back == deep);
}

#[test]
fn indexing_reads_null_where_nothing_is_and_writes_new_fields() {
    let mut value = json!({"a": [1, {"b": "x"}]});
    assert_eq!(value["a"][1]["b"], "x");
    assert_eq!(value["missing"]["deeper"], Value::Null);
    assert_eq!(value["a"][7], Value::Null);
    assert_eq!(value.get("a").and_then(|a| a.get(0)), Some(&json!(1)));
    value["c"]["d"] = json!(true);
    assert_eq!(value["c"], json!({"d": true}));
    value["a"][0] = json!(2);
    assert_eq!(value.pointer("/a/0"), Some(&json!(2)));
    assert_eq!(value.pointer("/a/01"), None);
    assert_eq!(value.pointer("a"), None);
    assert_eq!(value.pointer(""), Some(&value));
    let escaped = json!({"a/b": {"~": 3}});
    assert_eq!(escaped.pointer("/a~1b/~0"), Some(&json!(3)));
}

#[test]
fn values_compare_with_rust_scalars_as_serde_json_s_do() {
    assert_eq!(json!("x"), "x");
    assert_eq!(json!(3), 3);
    assert_eq!(json!(3), 3u64);
    assert_eq!(json!(3), 3.0);
    assert_ne!(json!(-1), 18446744073709551615u64);
    assert_eq!(json!(true), true);
    assert_ne!(json!("3"), 3);
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(Value::from(Some("x")), json!("x"));
    assert_eq!(Value::from(vec![1, 2]), json!([1, 2]));
}

/// Any JSON value serde_json can hold, a few levels deep.
fn any_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        ".{0,8}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(".{0,4}", inner, 0..6)
                .prop_map(|fields| serde_json::Value::Object(fields.into_iter().collect())),
        ]
    })
}

proptest! {
    // Printing, comparing, converting and (de)serialising agree with serde_json's own value.
    #[test]
    fn a_value_behaves_as_serde_json_s(a in any_value(), b in any_value()) {
        let ours = Value::from(a.clone());
        prop_assert_eq!(ours.to_string(), a.to_string());
        prop_assert_eq!(format!("{ours:#}"), format!("{a:#}"));
        prop_assert_eq!(format!("{ours:?}"), format!("{a:?}"));
        if let (Value::Object(fields), serde_json::Value::Object(theirs)) = (&ours, &a) {
            prop_assert_eq!(format!("{fields:?}"), format!("{theirs:?}"));
        }
        prop_assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&a).unwrap());
        let text = a.to_string();
        prop_assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            Value::from(serde_json::from_str::<serde_json::Value>(&text).unwrap())
        );
        let other = Value::from(b.clone());
        prop_assert_eq!(ours == other, a == b);
        prop_assert_eq!(serde_json::Value::from(ours.clone()), a.clone());
        prop_assert_eq!(to_value(&a).unwrap(), ours.clone());
        prop_assert_eq!(from_value::<serde_json::Value>(ours).unwrap(), a);
    }
}
