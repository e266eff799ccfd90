//! evanphx/json-patch v4 (`patch.go`), case by case.

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;
use crate::proptests::{config, replace_node};

fn apply(doc: Value, patch: &str) -> Result<Value, Failure> {
    Patch::decode(patch.as_bytes())
        .unwrap_or_else(|e| panic!("{patch} does not decode: {e}"))
        .apply(&doc, usize::MAX)
}

fn applied(doc: Value, patch: &str) -> Value {
    apply(doc, patch).unwrap_or_else(|e| panic!("{patch} failed: {e}"))
}

fn fails(doc: Value, patch: &str) -> String {
    match apply(doc, patch) {
        Err(Failure::Failed(why)) => why,
        other => panic!("{patch}: expected a failure, got {other:?}"),
    }
}

fn panics(doc: Value, patch: &str) {
    assert!(
        matches!(apply(doc, patch), Err(Failure::Panic(_))),
        "{patch} should panic"
    );
}

#[test]
fn replace_of_a_missing_member_adds_it() {
    assert_eq!(
        applied(
            json!({"data": {}}),
            r#"[{"op":"replace","path":"/data/k","value":"v"}]"#
        ),
        json!({"data": {"k": "v"}})
    );
    // An index must exist.
    fails(
        json!({"a": [1]}),
        r#"[{"op":"replace","path":"/a/1","value":2}]"#,
    );
}

#[test]
fn add_and_replace_without_a_value_set_null() {
    assert_eq!(
        applied(json!({"a": 1}), r#"[{"op":"add","path":"/b"}]"#),
        json!({"a": 1, "b": null})
    );
    assert_eq!(
        applied(json!({"a": [1, 2]}), r#"[{"op":"replace","path":"/a/0"}]"#),
        json!({"a": [null, 2]})
    );
}

#[test]
fn copy_from_a_missing_member_copies_null_and_move_from_one_fails() {
    assert_eq!(
        applied(
            json!({"data": {}}),
            r#"[{"op":"copy","from":"/data/nothing","path":"/data/k"}]"#
        ),
        json!({"data": {"k": null}})
    );
    let why = fails(
        json!({"data": {}}),
        r#"[{"op":"move","from":"/data/nothing","path":"/data/k"}]"#,
    );
    assert_eq!(
        why,
        "error in move for path: 'nothing': Unable to remove nonexistent key: nothing: missing value"
    );
}

#[test]
fn move_takes_what_an_earlier_operation_wrote() {
    assert_eq!(
        applied(
            json!({"data": {}}),
            r#"[{"op":"add","path":"/data/a","value":"x"},{"op":"move","from":"/data/a","path":"/data/b"}]"#
        ),
        json!({"data": {"b": "x"}})
    );
}

#[test]
fn the_first_part_of_a_path_is_dropped_unread() {
    // `data/k` names the root's member `k`.
    assert_eq!(
        applied(
            json!({"data": {}}),
            r#"[{"op":"add","path":"data/k","value":"v"}]"#
        ),
        json!({"data": {}, "k": "v"})
    );
    assert_eq!(
        applied(
            json!({"data": {"k": 1}}),
            r#"[{"op":"replace","path":"x/data/k","value":2}]"#
        ),
        json!({"data": {"k": 2}})
    );
    let why = fails(json!({}), r#"[{"op":"add","path":"k","value":1}]"#);
    assert_eq!(
        why,
        r#"add operation does not apply: doc is missing path: "k": missing value"#
    );
}

#[test]
fn indices_are_read_by_atoi() {
    let doc = json!({"a": ["x", "y", "z"]});
    assert_eq!(
        applied(
            doc.clone(),
            r#"[{"op":"replace","path":"/a/01","value":"Y"}]"#
        ),
        json!({"a": ["x", "Y", "z"]})
    );
    assert_eq!(
        applied(
            doc.clone(),
            r#"[{"op":"replace","path":"/a/+2","value":"Z"}]"#
        ),
        json!({"a": ["x", "y", "Z"]})
    );
    // Negative: from the end; for `add`, from one past it.
    assert_eq!(
        applied(doc.clone(), r#"[{"op":"remove","path":"/a/-1"}]"#),
        json!({"a": ["x", "y"]})
    );
    assert_eq!(
        applied(doc.clone(), r#"[{"op":"add","path":"/a/-1","value":"w"}]"#),
        json!({"a": ["x", "y", "z", "w"]})
    );
    assert_eq!(
        applied(doc.clone(), r#"[{"op":"add","path":"/a/3","value":"w"}]"#),
        json!({"a": ["x", "y", "z", "w"]})
    );
    fails(doc.clone(), r#"[{"op":"add","path":"/a/4","value":"w"}]"#);
    fails(doc.clone(), r#"[{"op":"add","path":"/a/-5","value":"w"}]"#);
    fails(doc.clone(), r#"[{"op":"remove","path":"/a/-4"}]"#);
    fails(doc.clone(), r#"[{"op":"remove","path":"/a/1_0"}]"#);
    fails(
        doc.clone(),
        r#"[{"op":"remove","path":"/a/99999999999999999999"}]"#,
    );
    assert_eq!(
        applied(doc, r#"[{"op":"add","path":"/a/-","value":"w"}]"#),
        json!({"a": ["x", "y", "z", "w"]})
    );
}

#[test]
fn keys_are_unescaped_in_one_pass() {
    assert_eq!(decode_key("a~1b"), "a/b");
    assert_eq!(decode_key("~01"), "~1");
    assert_eq!(decode_key("~~1~"), "~/~");
    assert_eq!(
        applied(json!({}), r#"[{"op":"add","path":"/a~1b~0","value":1}]"#),
        json!({"a/b~": 1})
    );
}

#[test]
fn test_compares_scalars_by_their_text() {
    let doc = json!({"n": 1, "s": "a<b"});
    applied(doc.clone(), r#"[{"op":"test","path":"/n","value":1}]"#);
    fails(doc.clone(), r#"[{"op":"test","path":"/n","value":1.0}]"#);
    // The server wrote `<` as `\u003c`.
    fails(doc.clone(), r#"[{"op":"test","path":"/s","value":"a<b"}]"#);
    applied(doc, r#"[{"op":"test","path":"/s","value":"a\u003cb"}]"#);
}

#[test]
fn test_of_maps_and_lists_compares_members() {
    let doc = json!({"m": {"a": [1, {"b": null}]}});
    applied(
        doc.clone(),
        r#"[{"op":"test","path":"/m","value":{"a":[1,{"b":null}]}}]"#,
    );
    fails(
        doc.clone(),
        r#"[{"op":"test","path":"/m","value":{"a":[1]}}]"#,
    );
    fails(
        doc.clone(),
        r#"[{"op":"test","path":"/m","value":{"a":[1,{}]}}]"#,
    );
    applied(
        doc,
        r#"[{"op":"test","path":"","value":{"m":{"a":[1,{"b":null}]}}}]"#,
    );
}

#[test]
fn test_of_missing_and_null() {
    let doc = json!({"a": {"n": null}});
    applied(
        doc.clone(),
        r#"[{"op":"test","path":"/a/missing","value":null}]"#,
    );
    applied(doc.clone(), r#"[{"op":"test","path":"/a/missing"}]"#);
    applied(doc.clone(), r#"[{"op":"test","path":"/a/n","value":null}]"#);
    fails(
        doc.clone(),
        r#"[{"op":"test","path":"/a/missing","value":1}]"#,
    );
    fails(doc.clone(), r#"[{"op":"test","path":"/a","value":null}]"#);
    fails(doc.clone(), r#"[{"op":"test","path":"/a"}]"#);
    // A `null` the patch added is equal to `null` only.
    applied(
        doc.clone(),
        r#"[{"op":"add","path":"/b","value":null},{"op":"test","path":"/b","value":null}]"#,
    );
    fails(
        doc,
        r#"[{"op":"add","path":"/b","value":null},{"op":"test","path":"/b","value":0}]"#,
    );
}

#[test]
fn what_panics_in_go_is_a_panic() {
    // A `test` of the root without a value dereferences nil.
    panics(json!({}), r#"[{"op":"test","path":""}]"#);
    // Lists holding null are compared element by element, through nil.
    panics(
        json!({"a": [null]}),
        r#"[{"op":"test","path":"/a","value":[null]}]"#,
    );
    panics(
        json!({"a": [1]}),
        r#"[{"op":"test","path":"/a","value":[null]}]"#,
    );
    // A copied `null` read as a map is a nil map: adding to it panics.
    panics(
        json!({}),
        r#"[{"op":"add","path":"/a","value":null},{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/c","value":1}]"#,
    );
    // ... but it reads as empty.
    assert_eq!(
        applied(
            json!({}),
            r#"[{"op":"add","path":"/a","value":null},{"op":"copy","from":"/a","path":"/b"},{"op":"test","path":"/b/c"},{"op":"test","path":"/b","value":{}}]"#,
        ),
        json!({"a": null, "b": null})
    );
}

#[test]
fn paths_through_scalars_and_nulls_are_missing() {
    let doc = json!({"s": "x", "n": null});
    fails(doc.clone(), r#"[{"op":"add","path":"/s/a","value":1}]"#);
    fails(doc.clone(), r#"[{"op":"add","path":"/n/a","value":1}]"#);
    fails(doc, r#"[{"op":"add","path":"/missing/a","value":1}]"#);
}

#[test]
fn replace_of_the_root_takes_a_map_or_a_list() {
    assert_eq!(
        applied(
            json!({"a": 1}),
            r#"[{"op":"replace","path":"","value":{"b":2}}]"#
        ),
        json!({"b": 2})
    );
    assert_eq!(
        applied(
            json!({"a": 1}),
            r#"[{"op":"replace","path":"","value":[1]}]"#
        ),
        json!([1])
    );
    fails(json!({"a": 1}), r#"[{"op":"replace","path":"","value":1}]"#);
    fails(
        json!({"a": 1}),
        r#"[{"op":"replace","path":"","value":null}]"#,
    );
    panics(json!({"a": 1}), r#"[{"op":"replace","path":""}]"#);
}

#[test]
fn operations_without_a_kind_path_or_from_fail() {
    assert_eq!(fails(json!({}), r#"[null]"#), "Unexpected kind: unknown");
    assert_eq!(
        fails(json!({}), r#"[{"op":"frobnicate","path":"/a"}]"#),
        "Unexpected kind: frobnicate"
    );
    fails(json!({}), r#"[{"op":"Add","path":"/a","value":1}]"#);
    fails(json!({}), r#"[{"op":"add","value":1}]"#);
    fails(json!({}), r#"[{"op":"add","path":null,"value":1}]"#);
    fails(json!({"a": 1}), r#"[{"op":"copy","path":"/b"}]"#);
    // A repeated member: the last one counts.
    assert_eq!(
        applied(
            json!({}),
            r#"[{"op":"remove","op":"add","path":"/a","value":1,"value":2}]"#
        ),
        json!({"a": 2})
    );
}

#[test]
fn a_failure_leaves_the_document_unchanged() {
    let doc = json!({"a": 1});
    let patch =
        Patch::decode(br#"[{"op":"add","path":"/b","value":2},{"op":"remove","path":"/c"}]"#)
            .unwrap();
    assert!(patch.apply(&doc, usize::MAX).is_err());
    assert_eq!(doc, json!({"a": 1}));
}

#[test]
fn copies_count_their_bytes() {
    let blob = "x".repeat((1 << 20) - 2); // 1 MiB with its quotes
    let doc = json!({"a": blob});
    let copies: Vec<String> = (0..3)
        .map(|i| format!(r#"{{"op":"copy","from":"/a","path":"/c{i}"}}"#))
        .collect();
    applied(doc.clone(), &format!("[{}]", copies.join(",")));
    let copies: Vec<String> = (0..4)
        .map(|i| format!(r#"{{"op":"copy","from":"/a","path":"/c{i}"}}"#))
        .collect();
    let why = fails(doc, &format!("[{}]", copies.join(",")));
    assert!(why.starts_with("Unable to complete the copy"), "{why}");
}

#[test]
fn a_copied_value_is_written_back_with_go_s_escapes() {
    // The copy's text escapes `<`, so it no longer equals the text the patch gave.
    fails(
        json!({}),
        r#"[{"op":"add","path":"/a","value":"<"},{"op":"copy","from":"/a","path":"/b"},{"op":"test","path":"/b","value":"<"}]"#,
    );
    applied(
        json!({}),
        r#"[{"op":"add","path":"/a","value":"<"},{"op":"test","path":"/a","value":"<"}]"#,
    );
}

#[test]
fn decoding_takes_a_list_of_objects_or_null() {
    assert_eq!(Patch::decode(b"null").map(|p| p.len()), Ok(0));
    assert_eq!(Patch::decode(b"[null, {}]").map(|p| p.len()), Ok(2));
    assert_eq!(
        Patch::decode(b"{}").map(|p| p.len()),
        Err("json: cannot unmarshal object into Go value of type jsonpatch.Patch".to_owned())
    );
    assert_eq!(
        Patch::decode(b"[{}, \"x\"]").map(|p| p.len()),
        Err("json: cannot unmarshal string into Go value of type jsonpatch.Operation".to_owned())
    );
}

#[test]
fn raw_members_keep_their_text() {
    assert_eq!(
        raw::items(r#" [ 1.0 , "a,]" , {"x": [1, {}]}, null ] "#),
        vec!["1.0", r#""a,]""#, r#"{"x": [1, {}]}"#, "null"]
    );
    assert!(raw::items("[]").is_empty());
    assert_eq!(
        raw::members(r#"{"a\"b" : "x\\" , "c":{"d":"}"}}"#),
        Some(vec![
            ("a\"b".to_owned(), r#""x\\""#),
            ("c".to_owned(), r#"{"d":"}"}"#)
        ])
    );
    assert_eq!(raw::members("{}"), Some(vec![]));
    assert_eq!(raw::members("[1]"), None);
}

/// The deepest nesting Go decodes, which a document (and a patch body) may reach.
const DEEP: usize = nesting::GO_MAX_DEPTH;

/// `levels` containers nested around `leaf`, `{"a":[{"a":[...]}]}`: objects and lists in turn,
/// the outermost an object. Built without recursion, as every walk of it must be.
fn deep(levels: usize, leaf: Value) -> Value {
    let mut value = leaf;
    for level in (0..levels).rev() {
        value = if level % 2 == 0 {
            Value::Object(json::Map::from_iter([("a", value)]))
        } else {
            Value::Array(vec![value].into())
        };
    }
    value
}

/// An object of `members`: `json!` would copy a deep member by recursion.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(json::Map::from_iter(members))
}

/// The pointer to the value `levels` containers down in [`deep`].
fn deep_path(levels: usize) -> String {
    (0..levels)
        .map(|level| if level % 2 == 0 { "/a" } else { "/0" })
        .collect()
}

/// A `test` of `path` against the raw `value`.
fn test_op(path: &str, value: &str) -> String {
    format!(r#"{{"op":"test","path":"{path}","value":{value}}}"#)
}

/// [`applied`] for a patch too long to print.
fn applied_deep(doc: Value, patch: &str) -> Value {
    apply(doc, patch).unwrap_or_else(|e| panic!("the patch failed: {e}"))
}

/// How a patch too long to print failed.
fn failure(doc: Value, patch: &str) -> Option<Failure> {
    apply(doc, patch).err()
}

#[test]
fn deep_documents_are_tested_without_recursion() {
    let doc = deep(DEEP, json!(1));
    // The value nests two levels below the patch's own: as deep as a body may.
    let path = deep_path(2);
    let equal = deep(DEEP - 2, json!(1)).to_string();
    let result = applied_deep(doc.clone(), &format!("[{}]", test_op(&path, &equal)));
    assert_eq!(nesting::value_depth(&result), DEEP);
    assert!(result == doc);
    let unequal = deep(DEEP - 2, json!(2)).to_string();
    assert_eq!(
        failure(doc, &format!("[{}]", test_op(&path, &unequal))),
        Some(failed("testing value /a/0 failed: test failed"))
    );
    // `[null]` at the bottom: Go dereferences the `nil` element.
    let nulls = deep(DEEP - 2, Value::Null).to_string();
    assert_eq!(
        failure(
            deep(DEEP, Value::Null),
            &format!("[{}]", test_op(&path, &nulls))
        ),
        Some(Failure::Panic(NIL_DEREFERENCE))
    );
}

#[test]
fn deep_members_are_compared_in_order() {
    // Go stops at the first difference: a later member's `nil` dereference is never reached,
    // and an earlier one's is reached first. The values nest almost as deep as a patch's may,
    // `[null]` at the bottom.
    let nulls = deep(DEEP - 4, Value::Null);
    let doc = object([("a", json!(1)), ("b", nulls.clone())]);
    let value = object([("a", json!(2)), ("b", nulls.clone())]).to_string();
    assert_eq!(
        failure(doc, &format!("[{}]", test_op("", &value))),
        Some(failed("testing value  failed: test failed"))
    );
    let doc = object([("a", nulls.clone()), ("b", json!(1))]);
    let value = object([("a", nulls), ("b", json!(2))]).to_string();
    assert_eq!(
        failure(doc, &format!("[{}]", test_op("", &value))),
        Some(Failure::Panic(NIL_DEREFERENCE))
    );
}

#[test]
fn deep_values_are_copied_moved_and_removed_without_recursion() {
    let doc = object([("src", deep(DEEP - 1, json!("x<")))]);
    // The copy is written back as Go marshals it: `<` escaped.
    let leaf = deep(DEEP - 3, json!("LEAF")).to_string();
    let copy = r#"{"op":"copy","from":"/src","path":"/dst"}"#;
    let path = format!("/dst{}", deep_path(2));
    let as_copied = test_op(&path, &leaf.replace(r#""LEAF""#, r#""x\u003c""#));
    let as_given = test_op(&path, &leaf.replace(r#""LEAF""#, r#""x<""#));
    let result = applied_deep(doc.clone(), &format!("[{copy},{as_copied}]"));
    assert_eq!(nesting::value_depth(&result), DEEP);
    assert!(result["dst"] == result["src"]);
    assert_eq!(
        failure(doc.clone(), &format!("[{copy},{as_given}]")),
        Some(failed(format!("testing value {path} failed: test failed")))
    );

    let moved = applied_deep(
        doc.clone(),
        r#"[{"op":"move","from":"/src","path":"/dst"}]"#,
    );
    assert!(moved.get("src").is_none());
    assert!(moved["dst"] == doc["src"]);
    assert!(applied_deep(doc, r#"[{"op":"remove","path":"/src"}]"#) == json!({}));
}

#[test]
fn deep_values_are_added_and_replaced_from_their_text_without_recursion() {
    let value = deep(DEEP - 4, json!({"k": [1, null, "v"]}));
    let text = value.to_string();
    assert_eq!(nesting::value_depth(&value), DEEP - 2);
    let added = applied_deep(
        json!({}),
        &format!(r#"[{{"op":"add","path":"/v","value":{text}}}]"#),
    );
    assert!(added["v"] == value);
    let replaced = applied_deep(
        object([("v", deep(DEEP - 1, json!(1)))]),
        &format!(r#"[{{"op":"replace","path":"/v","value":{text}}}]"#),
    );
    assert!(replaced["v"] == value);
    let root = applied_deep(
        deep(DEEP, json!(1)),
        &format!(r#"[{{"op":"replace","path":"","value":{text}}}]"#),
    );
    assert!(root == value);
}

#[test]
fn nodes_100_000_levels_deep_are_walked_without_recursion() {
    let levels = 100_000;
    let value = deep(levels, json!("a<"));
    let node = Node::from_value(&value);
    assert_eq!(node.depth(), levels);
    let mut text = String::new();
    node.marshal(&mut text);
    assert!(text == value.to_string().replace('<', r"\u003c"));
    assert!(format!("{node:?}") == text);
    let (copy, size) = node.deep_copy();
    assert_eq!(size, text.len());
    assert_eq!(node.equal(&copy), Ok(true));
    let other = Node::from_value(&deep(levels, json!("b")));
    assert_eq!(node.equal(&other), Ok(false));
    assert!(copy.into_value() == value);
    let raw = Node::from_raw(Some(&value.to_string()));
    assert_eq!(raw.depth(), levels);
    let mut raw_text = String::new();
    raw.marshal(&mut raw_text);
    assert!(raw_text == text);
    // Every node goes out of scope here.
}

/// `levels` objects nested around `leaf`, each with a list beside the next one,
/// `{"a":{"a":...,"b":[1,2,3]},"b":[1,2,3]}`: its text, and the value it stands for.
fn deep_and_wide(levels: usize, leaf: Value) -> (String, Value) {
    let mut text = r#"{"a":"#.repeat(levels);
    text.push_str(&leaf.to_string());
    text.push_str(&r#","b":[1,2,3]}"#.repeat(levels));
    let mut value = leaf;
    for _ in 0..levels {
        value = object([("a", value), ("b", json!([1, 2, 3]))]);
    }
    (text, value)
}

#[test]
fn values_are_read_from_their_text_in_one_pass() {
    // Each level's text holds every level below it: scanning it again for each level above
    // took seconds for these (a debug build; the elapsed times are printed, not asserted).
    let (text, value) = deep_and_wide(DEEP - 3, json!("x"));
    let patch = format!(r#"[{{"op":"add","path":"/v","value":{text}}}]"#);
    let started = std::time::Instant::now();
    let added = applied_deep(json!({}), &patch);
    eprintln!(
        "a value {} levels deep and wide, added: {:?}",
        DEEP - 2,
        started.elapsed()
    );
    assert_eq!(nesting::value_depth(&added), DEEP - 1);
    assert!(added["v"] == value);

    for (levels, text) in [
        (100_000, deep(100_000, json!(1)).to_string()),
        (100_001, deep_and_wide(100_000, json!("x")).0),
    ] {
        let started = std::time::Instant::now();
        let node = Node::from_raw(Some(&text));
        eprintln!(
            "a value {levels} levels deep, read from {} bytes: {:?}",
            text.len(),
            started.elapsed()
        );
        assert_eq!(node.depth(), levels);
        let mut written = String::new();
        node.marshal(&mut written);
        assert!(written == text);
    }
}

#[test]
fn a_value_s_repeated_key_keeps_its_last_value() {
    assert_eq!(
        applied(
            json!({}),
            r#"[{"op":"add","path":"/v","value":{"a":1,"b":[{"c":1,"c":{"d":2}}],"a":[3]}}]"#
        ),
        json!({"v": {"a": [3], "b": [{"c": {"d": 2}}]}})
    );
}

#[test]
fn debug_tells_the_nulls_apart() {
    let node = Node::Doc(BTreeMap::from([
        ("a".to_owned(), Node::Nil),
        ("b".to_owned(), Node::NoText),
        (
            "c".to_owned(),
            Node::Ary(vec![Node::NullText, Node::from_value(&json!("<"))]),
        ),
    ]));
    assert_eq!(
        format!("{node:?}"),
        r#"{"a":nil,"b":<no text>,"c":[null,"\u003c"]}"#
    );
}

// The walks as they were written recursively, to check the explicit-stack ones against on
// shallow trees.

fn from_value_recursively(v: &Value) -> Node {
    match v {
        Value::Null => Node::Nil,
        Value::Array(items) => Node::Ary(items.iter().map(from_value_recursively).collect()),
        Value::Object(map) => Node::Doc(
            map.iter()
                .map(|(k, v)| (k.clone(), from_value_recursively(v)))
                .collect(),
        ),
        scalar => Node::Scalar(Scalar::Doc(scalar.clone())),
    }
}

/// [`Node::from_raw`] as it was: each container's members found by [`old_raw`], which scans
/// each of them to its end.
fn from_raw_recursively(raw: Option<&str>) -> Node {
    let Some(text) = raw.filter(|t| *t != "null") else {
        return Node::Nil;
    };
    match text.as_bytes().first() {
        Some(b'{') => Node::Doc(
            old_raw::members(text)
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, from_raw_recursively(Some(v))))
                .collect(),
        ),
        Some(b'[') => Node::Ary(
            old_raw::items(text)
                .into_iter()
                .map(|v| from_raw_recursively(Some(v)))
                .collect(),
        ),
        _ => Node::Scalar(Scalar::Text(text.to_owned())),
    }
}

/// The module `raw` as it was before containers were jumped over: every value scanned to its
/// end, byte by byte.
mod old_raw {
    /// The elements of the list `text` (none when it is not one).
    pub(super) fn items(text: &str) -> Vec<&str> {
        let mut items = Vec::new();
        let Some(mut at) = open(text, b'[') else {
            return items;
        };
        while let Some(end) = value_end(text, at) {
            items.push(&text[at..end]);
            match next(text, end) {
                Some((b',', after)) => at = skip_space(text, after),
                _ => break,
            }
        }
        items
    }

    /// The members of the object `text`, keys decoded (`None` when it is not an object).
    pub(super) fn members(text: &str) -> Option<Vec<(String, &str)>> {
        let mut members = Vec::new();
        let mut at = open(text, b'{')?;
        while let Some(key_end) = value_end(text, at) {
            let key: String = serde_json::from_str(&text[at..key_end]).ok()?;
            let (_, after_colon) = next(text, key_end).filter(|(c, _)| *c == b':')?;
            let start = skip_space(text, after_colon);
            let end = value_end(text, start)?;
            members.push((key, &text[start..end]));
            match next(text, end) {
                Some((b',', after)) => at = skip_space(text, after),
                _ => break,
            }
        }
        Some(members)
    }

    fn open(text: &str, bracket: u8) -> Option<usize> {
        let start = skip_space(text, 0);
        (text.as_bytes().get(start) == Some(&bracket)).then(|| skip_space(text, start + 1))
    }

    fn skip_space(text: &str, mut at: usize) -> usize {
        let bytes = text.as_bytes();
        while bytes
            .get(at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            at += 1;
        }
        at
    }

    fn next(text: &str, at: usize) -> Option<(u8, usize)> {
        let at = skip_space(text, at);
        text.as_bytes().get(at).map(|b| (*b, at + 1))
    }

    fn value_end(text: &str, start: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let mut at = start;
        while let Some(&b) = bytes.get(at) {
            at += 1;
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => {
                        in_string = false;
                        if depth == 0 {
                            return Some(at);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return (at - 1 > start).then_some(at - 1),
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(at);
                    }
                }
                b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {
                    return (at - 1 > start).then_some(at - 1);
                }
                _ => {}
            }
        }
        (at > start && depth == 0 && !in_string).then_some(at)
    }
}

fn into_value_recursively(node: &Node) -> Value {
    match node {
        Node::Nil | Node::NoText | Node::NullText => Value::Null,
        Node::Scalar(Scalar::Doc(v)) => v.clone(),
        Node::Scalar(Scalar::Text(t)) => serde_json::from_str(t).unwrap_or(Value::Null),
        Node::Doc(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), into_value_recursively(v)))
                .collect::<json::Map>(),
        ),
        Node::Ary(items) => Value::Array(items.iter().map(into_value_recursively).collect()),
    }
}

fn reread_recursively(node: &Node) -> Node {
    match node {
        Node::Nil | Node::NoText | Node::NullText => Node::Nil,
        Node::Scalar(s) => Node::Scalar(Scalar::Text(escape_html(&s.text()))),
        Node::Doc(map) => Node::Doc(
            map.iter()
                .map(|(k, v)| (k.clone(), reread_recursively(v)))
                .collect(),
        ),
        Node::Ary(items) => Node::Ary(items.iter().map(reread_recursively).collect()),
    }
}

fn marshal_recursively(node: &Node, out: &mut String) {
    match node {
        Node::Nil | Node::NoText | Node::NullText => out.push_str("null"),
        Node::Scalar(s) => out.push_str(&escape_html(&s.text())),
        Node::Doc(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&go_json(&Value::String(k.clone())));
                out.push(':');
                marshal_recursively(v, out);
            }
            out.push('}');
        }
        Node::Ary(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                marshal_recursively(v, out);
            }
            out.push(']');
        }
    }
}

fn equal_recursively(mine: &Node, other: &Node) -> Result<bool, Failure> {
    let nil = || Failure::Panic(NIL_DEREFERENCE);
    match mine {
        Node::Nil => Err(nil()),
        Node::NoText | Node::Scalar(_) => {
            let own = match mine {
                Node::Scalar(s) => Some(s.text()),
                _ => None,
            };
            match other {
                Node::Nil => Err(nil()),
                Node::NoText => Ok(own.is_none()),
                Node::Scalar(s) => Ok(own.is_some_and(|t| t == s.text())),
                _ => Ok(false),
            }
        }
        Node::NullText | Node::Doc(_) => {
            let empty = BTreeMap::new();
            let own = match mine {
                Node::Doc(map) => map,
                _ => &empty,
            };
            let theirs = match other {
                Node::Nil => return Err(nil()),
                Node::Doc(map) => map,
                Node::NullText => &empty,
                _ => return Ok(false),
            };
            if own.len() != theirs.len() {
                return Ok(false);
            }
            for (key, mine) in own {
                let Some(their) = theirs.get(key) else {
                    return Ok(false);
                };
                match (matches!(mine, Node::Nil), matches!(their, Node::Nil)) {
                    (true, true) => continue,
                    (false, false) => {}
                    _ => return Ok(false),
                }
                if !equal_recursively(mine, their)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Node::Ary(own) => {
            let theirs: &[Node] = match other {
                Node::Nil => return Err(nil()),
                Node::Ary(items) => items,
                Node::NullText => &[],
                _ => return Ok(false),
            };
            if own.len() != theirs.len() {
                return Ok(false);
            }
            for (mine, their) in own.iter().zip(theirs) {
                if !equal_recursively(mine, their)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

/// A node's variant at every level, scalars with how they were given.
fn shape(node: &Node) -> String {
    match node {
        Node::Nil => "nil".to_owned(),
        Node::NoText => "notext".to_owned(),
        Node::NullText => "nulltext".to_owned(),
        Node::Scalar(Scalar::Doc(v)) => format!("doc:{v}"),
        Node::Scalar(Scalar::Text(t)) => format!("text:{t}"),
        Node::Doc(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", shape(v)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Node::Ary(items) => {
            let items: Vec<String> = items.iter().map(shape).collect();
            format!("[{}]", items.join(","))
        }
    }
}

/// The node a generated value stands for: `"!notext"` and `"!nulltext"` are those nodes, a
/// string starting with `'` is the text after it, as a patch gives it.
fn node_of(v: &Value) -> Node {
    match v {
        Value::Null => Node::Nil,
        Value::String(s) if s == "!notext" => Node::NoText,
        Value::String(s) if s == "!nulltext" => Node::NullText,
        Value::String(s) if s.starts_with('\'') => Node::Scalar(Scalar::Text(s[1..].to_owned())),
        Value::Array(items) => Node::Ary(items.iter().map(node_of).collect()),
        Value::Object(map) => Node::Doc(map.iter().map(|(k, v)| (k.clone(), node_of(v))).collect()),
        scalar => Node::Scalar(Scalar::Doc(scalar.clone())),
    }
}

/// Shallow trees over a small vocabulary (so that two of them are often alike), with every
/// kind of node.
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        (0i64..3).prop_map(Value::from),
        prop::sample::select(
            &[
                "!notext",
                "!nulltext",
                "a",
                "<",
                r#"'"a""#,
                r#"'"\u003c""#,
                r#"'"<""#,
                "'1",
                "'1.0",
            ][..]
        )
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::vec(("[ab]", inner), 0..3)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(config(512))]

    /// The explicit-stack walks give what the recursive ones gave: the same text, nodes and
    /// values, and the same first difference or panic when comparing.
    #[test]
    fn the_walks_do_what_recursion_did(
        a in tree(),
        b in tree(),
        steps in prop::collection::vec(0usize..4, 0..4),
        how in 0u8..3,
    ) {
        let b = match how {
            0 => b,
            1 => a.clone(),
            _ => {
                let mut changed = a.clone();
                replace_node(&mut changed, &steps, b);
                changed
            }
        };
        let (mine, theirs) = (node_of(&a), node_of(&b));

        let (mut text, mut expected) = (String::new(), String::new());
        mine.marshal(&mut text);
        marshal_recursively(&mine, &mut expected);
        prop_assert_eq!(&text, &expected);

        prop_assert_eq!(shape(&Node::from_value(&a)), shape(&from_value_recursively(&a)));
        prop_assert_eq!(shape(&mine.reread()), shape(&reread_recursively(&mine)));
        let pretty = serde_json::to_string_pretty(&a).unwrap();
        for raw in [text.as_str(), pretty.as_str(), "null"] {
            prop_assert_eq!(
                shape(&Node::from_raw(Some(raw))),
                shape(&from_raw_recursively(Some(raw)))
            );
        }
        prop_assert_eq!(node_of(&a).into_value(), into_value_recursively(&mine));

        prop_assert_eq!(mine.equal(&theirs), equal_recursively(&mine, &theirs));
        prop_assert_eq!(theirs.equal(&mine), equal_recursively(&theirs, &mine));
        let copy = mine.deep_copy().0;
        prop_assert_eq!(mine.equal(&copy), equal_recursively(&mine, &copy));
    }
}

/// Space between tokens, often none.
fn space() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["", "", " ", "\n", " \t\r\n "][..])
}

/// Shallow JSON texts, spaced at random: numbers and strings written in the ways that decode
/// alike (`1.0` and `1e0`, `"a"` and `"\u0061"`), and keys repeated, in those ways too.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(
        &[
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1",
            "1.0",
            "1e3",
            "-1.5E-2",
            "1e0",
            r#""""#,
            r#""a""#,
            r#""\u0061""#,
            r#""a\"b""#,
            r#""\\""#,
            r#""\\\"""#,
            r#""\/é""#,
            r#""x,]}:{[ ""#,
        ][..],
    )
    .prop_map(str::to_owned);
    let key = prop::sample::select(&[r#""a""#, r#""\u0061""#, r#""b""#, r#""\"""#, r#""""#][..]);
    leaf.prop_recursive(4, 48, 4, move |inner| {
        let spaced = (space(), inner, space())
            .prop_map(|(a, v, b)| format!("{a}{v}{b}"))
            .boxed();
        prop_oneof![
            (space(), prop::collection::vec(spaced.clone(), 0..4))
                .prop_map(|(pad, items)| format!("[{pad}{}]", items.join(","))),
            (
                space(),
                prop::collection::vec((space(), key.clone(), space(), spaced), 0..4)
            )
                .prop_map(|(pad, members)| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(a, k, b, v)| format!("{a}{k}{b}:{v}"))
                        .collect();
                    format!("{{{pad}{}}}", members.join(","))
                }),
        ]
    })
}

proptest! {
    #![proptest_config(config(512))]

    /// Reading a value with its containers' ends found up front gives what scanning each one
    /// to its end gave: the same nodes, scalars' texts and members.
    #[test]
    fn raw_values_read_as_they_were_by_scanning(
        text in json_text(),
        before in space(),
        after in space(),
    ) {
        prop_assert!(read_json(text.as_bytes()).is_ok(), "{} is not JSON", text);
        let spaced = format!("{before}{text}{after}");
        for text in [text.as_str(), spaced.as_str()] {
            prop_assert_eq!(
                shape(&Node::from_raw(Some(text))),
                shape(&from_raw_recursively(Some(text)))
            );
            prop_assert_eq!(raw::items(text), old_raw::items(text));
            prop_assert_eq!(raw::members(text), old_raw::members(text));
        }
    }

    /// Text that is not JSON reads as it did, without a panic: garbage, and JSON with a
    /// character changed or the rest cut off.
    #[test]
    fn raw_garbage_reads_as_it_did(
        garbage in r#"[\[\]{}",:\\ a1é]{0,24}"#,
        json in json_text(),
        at in any::<prop::sample::Index>(),
        with in prop::sample::select(&["", "\"", "\\", "{", "}", "[", "]", ",", ":", " "][..]),
        cut in any::<bool>(),
    ) {
        let chars: Vec<(usize, char)> = json.char_indices().collect();
        let (i, c) = chars[at.index(chars.len())];
        let broken = if cut {
            json[..i].to_owned()
        } else {
            format!("{}{with}{}", &json[..i], &json[i + c.len_utf8()..])
        };
        for text in [garbage.as_str(), broken.as_str()] {
            prop_assert_eq!(
                shape(&Node::from_raw(Some(text))),
                shape(&from_raw_recursively(Some(text)))
            );
            prop_assert_eq!(raw::items(text), old_raw::items(text));
            prop_assert_eq!(raw::members(text), old_raw::members(text));
        }
    }
}
