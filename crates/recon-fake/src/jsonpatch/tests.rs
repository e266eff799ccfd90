//! evanphx/json-patch v4 (`patch.go`), case by case.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

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
