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
pub(super) fn any_value() -> impl Strategy<Value = serde_json::Value> {
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

/// What a test does to a [`Map`] and, alike, to the `BTreeMap` it is checked against.
#[derive(Debug, Clone)]
enum Edit {
    Insert(String, i64),
    Remove(String),
    Entry(String, i64),
    Retain(u8),
    Extend(Vec<(String, i64)>),
}

/// Keys of one to three letters of `a`–`h`: enough of them (584) that a map grows past a
/// sorted vector, few enough that edits meet the same keys again.
fn any_edit() -> impl Strategy<Value = Edit> {
    let key = "[a-h]{1,3}";
    prop_oneof![
        4 => (key, any::<i64>()).prop_map(|(k, v)| Edit::Insert(k, v)),
        2 => key.prop_map(Edit::Remove),
        2 => (key, any::<i64>()).prop_map(|(k, v)| Edit::Entry(k, v)),
        1 => any::<u8>().prop_map(Edit::Retain),
        1 => prop::collection::vec((key, any::<i64>()), 0..50).prop_map(Edit::Extend),
    ]
}

proptest! {
    // Whichever way it keeps its fields (a sorted vector, or a tree past 32 fields), a map
    // answers every read as a `BTreeMap` given the same edits does.
    #[test]
    fn a_map_behaves_as_a_btree_map(edits in prop::collection::vec(any_edit(), 0..200)) {
        let mut ours = Map::new();
        let mut model = std::collections::BTreeMap::<String, Value>::new();
        for edit in edits {
            match edit {
                Edit::Insert(k, v) => {
                    prop_assert_eq!(ours.insert(k.clone(), v.into()), model.insert(k, v.into()));
                }
                Edit::Remove(k) => prop_assert_eq!(ours.remove(&k), model.remove(&k)),
                Edit::Entry(k, v) => {
                    let mine = ours.entry(k.clone()).and_modify(|x| *x = json!([x.clone()]));
                    prop_assert_eq!(mine.key(), &k);
                    mine.or_insert(v.into());
                    model.entry(k).and_modify(|x| *x = json!([x.clone()])).or_insert(v.into());
                }
                Edit::Retain(bit) => {
                    let keep = |k: &String| k.len() as u8 & 1 == bit & 1;
                    ours.retain(|k, _| keep(k));
                    model.retain(|k, _| keep(k));
                }
                Edit::Extend(fields) => {
                    ours.extend(fields.iter().cloned());
                    model.extend(fields.into_iter().map(|(k, v)| (k, Value::from(v))));
                }
            }
            prop_assert_eq!(ours.len(), model.len());
        }
        prop_assert!(ours.iter().eq(model.iter()));
        prop_assert!(ours.iter().rev().eq(model.iter().rev()));
        for k in model.keys() {
            prop_assert_eq!(ours.get(k), model.get(k));
            prop_assert!(ours.contains_key(k));
        }
        prop_assert_eq!(ours.get("zz"), None);
        // Built at once, from any order, with keys repeated: the last value of a key stays.
        let mut given: Vec<(String, Value)> =
            model.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
        given.extend(model.keys().map(|k| (k.clone(), json!("overwritten"))));
        given.extend(model.iter().map(|(k, v)| (k.clone(), v.clone())));
        let built = Map::from_iter(given);
        prop_assert!(built.iter().eq(model.iter()));
        // Equal whatever either keeps its fields as; a copy is equal and independent.
        let same = Map::from(model.clone());
        prop_assert!(same == ours && built == ours);
        let mut copy = ours.clone();
        prop_assert!(copy == ours);
        copy.insert("new".to_owned(), Value::Null);
        prop_assert!(copy != ours);
        prop_assert!(ours.clone().into_iter().eq(model.into_iter()));
    }
}

// A body may hold an object of a million keys in any order: each insertion costs a tree's
// logarithm once the map is past a sorted vector, not a shift of every later field.
#[test]
fn a_map_of_a_million_keys_in_reverse_order_builds_in_a_tree() {
    let mut fields = Map::new();
    for i in (0..1_000_000u32).rev() {
        fields.insert(format!("{i:07}"), Value::from(i));
    }
    assert_eq!(fields.len(), 1_000_000);
    assert_eq!(
        fields.first_key_value().map(|(k, _)| k.as_str()),
        Some("0000000")
    );
    assert_eq!(fields["0999999"], Value::from(999_999));
    let parsed: Value = serde_json::from_str(&Value::Object(fields).to_string()).unwrap();
    assert_eq!(parsed.as_object().map(Map::len), Some(1_000_000));
}
