//! Objects against rules: the answers of a 1.36 server to the `probes`, `rats` and `mores`
//! CRDs (failures, reasons and field paths, typed values, runtime errors, transition rules,
//! ratcheting).

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

/// The `probes` CRD the cases below were recorded with (a 1.36 server): its `spec`
/// properties, one per case.
fn probes() -> Value {
    spec_schema(json!({"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                "x-kubernetes-validations": [
                    {"rule": "self.port > 0", "message": "port must be positive"},
                    {"rule": "self.port == oldSelf.port", "message": "port is immutable"}]}},
        "tags": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string",
            "maxLength": 20, "x-kubernetes-validations": [{"rule": "self.size() <= 3"}]}},
        "settings": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string",
            "maxLength": 20, "x-kubernetes-validations": [
                {"rule": "self != 'bad'", "messageExpression": "'bad value for ' + self"}]}},
        "fp": {"type": "object", "properties": {"x": {"type": "string"}}, "x-kubernetes-validations": [
            {"rule": "!has(self.x)", "message": "x is forbidden", "fieldPath": ".x", "reason": "FieldValueForbidden"}]},
        "req": {"type": "object", "properties": {"y": {"type": "string"}, "z": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "has(self.y)", "message": "y is required",
                "fieldPath": ".y", "reason": "FieldValueRequired"}]},
        "dup": {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [
            {"rule": "self.size() == 1", "reason": "FieldValueDuplicate"}]},
        "dupstr": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == 'a'", "reason": "FieldValueDuplicate", "message": "dup"}]},
        "esc": {"type": "object", "properties": {"foo-bar": {"type": "string"}, "namespace": {"type": "string"},
            "a.b": {"type": "integer"}, "x__y": {"type": "boolean"}},
            "x-kubernetes-validations": [{"rule":
                "self.foo__dash__bar == 'x' && self.__namespace__ == 'ns' && self.a__dot__b == 1 && self.x__underscores__y"}]},
        "num": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.5"}]},
        "ios": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [
            {"rule": "type(self) == int ? self < 10 : self.endsWith('%')"}]},
        "ts": {"type": "string", "format": "date-time", "x-kubernetes-validations": [
            {"rule": "self > timestamp('2020-01-01T00:00:00Z')"}]},
        "dur": {"type": "string", "format": "duration", "x-kubernetes-validations": [
            {"rule": "self < duration('1h')"}]},
        "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": [
                {"rule": "self.kind == 'Pod' && self.metadata.name != ''", "message": "must be a named pod"}]},
        "nokey": {"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [
            {"rule": "self.a == 'x'"}]},
        "mx": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 20}, "n": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.n < 5", "messageExpression": "'q is ' + self.q", "message": "fallback message"},
                {"rule": "self.n < 6", "messageExpression": "''"},
                {"rule": "self.n < 7", "messageExpression": "'  padded  '"}]},
        "intv": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 5", "message": "too big"}]},
        "boolv": {"type": "boolean", "x-kubernetes-validations": [{"rule": "self"}]},
        "setl": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "set is immutable"}]},
        "mapl": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}},
            "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "map list is immutable"}]},
        "ovf": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self * 2 > 0"}, {"rule": "self / (self - self) > 0"}]},
        "idx": {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [
            {"rule": "self[5] == 'a'"}, {"rule": "[1,2][5] == 1"}, {"rule": "{'a': 1}['b'] == 1"}]},
        "opt": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 20}},
            "x-kubernetes-validations": [{"rule": "self.?a.orValue('none') == 'x'"}]},
        "strs": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.charAt(10) == 'a'"}, {"rule": "self.substring(5) == ''"},
            {"rule": "'%s %d %.2f %x %s'.format([self, 42, 3.14159, 255, [1, 'a']]) == ''",
             "messageExpression": "'%s %d %.2f %x %s %s'.format([self, 42, 3.14159, 255, [1, 'a', 2.5], {'k': true}])"}]},
        "q": {"type": "string", "x-kubernetes-validations": [
            {"rule": "quantity(self).isGreaterThan(quantity('1Gi'))", "message": "quantity too small"}]}
    }}))
}

fn probe(spec_value: Value) -> String {
    let s = probes();
    let mut root = s.clone();
    root["x-kubernetes-validations"] = json!([{"rule": "self.metadata.name.startsWith('p')", "message": "name must start with p"}]);
    validate(&root, &spec(spec_value), None)
}

#[test]
fn a_root_rule_reports_at_nil() {
    let mut root = probes();
    root["x-kubernetes-validations"] = json!([{"rule": "self.metadata.name.startsWith('p')", "message": "name must start with p"}]);
    let obj = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x1"}, "spec": {}});
    assert_eq!(
        validate(&root, &obj, None),
        "<nil>: Invalid value: name must start with p"
    );
}

#[test]
fn items_of_lists_and_values_of_maps_are_validated_one_by_one() {
    assert_eq!(
        probe(json!({"items": [{"name": "a", "port": 0}, {"name": "b", "port": -1}]})),
        "[spec.items[0]: Invalid value: port must be positive, \
         spec.items[1]: Invalid value: port must be positive]"
    );
    assert_eq!(
        probe(json!({"tags": ["abcd", "ab"]})),
        r#"spec.tags[0]: Invalid value: "abcd": failed rule: self.size() <= 3"#
    );
    assert_eq!(
        probe(json!({"settings": {"k1": "bad", "k2": "ok"}})),
        r#"spec.settings[k1]: Invalid value: "bad": bad value for bad"#
    );
}

#[test]
fn reason_and_field_path_shape_the_error() {
    assert_eq!(
        probe(json!({"fp": {"x": "v"}})),
        "spec.fp.x: Forbidden: x is forbidden"
    );
    assert_eq!(
        probe(json!({"req": {"z": "v"}})),
        "spec.req.y: Required value: y is required"
    );
    // A duplicate names the value only, and an object or a list not even that.
    assert_eq!(
        probe(json!({"dup": ["a", "b"]})),
        "spec.dup: Duplicate value"
    );
    assert_eq!(
        probe(json!({"dupstr": "b"})),
        r#"spec.dupstr: Duplicate value: "b""#
    );
    let errors = rules(&probes())
        .evaluate(&spec(json!({"fp": {"x": "v"}})), None)
        .errors;
    assert_eq!(errors[0].cause().reason, "FieldValueForbidden");
}

#[test]
fn property_names_are_escaped() {
    let rule = "self.foo__dash__bar == 'x' && self.__namespace__ == 'ns' && self.a__dot__b == 1 && self.x__underscores__y";
    assert_eq!(
        probe(json!({"esc": {"foo-bar": "y", "namespace": "ns", "a.b": 1, "x__y": true}})),
        format!("spec.esc: Invalid value: failed rule: {rule}")
    );
    assert_eq!(
        probe(json!({"esc": {"foo-bar": "x", "namespace": "ns", "a.b": 1, "x__y": true}})),
        ""
    );
}

#[test]
fn values_have_the_types_of_their_schema() {
    assert_eq!(
        probe(json!({"num": 2})),
        "spec.num: Invalid value: 2: failed rule: self < 1.5"
    );
    assert_eq!(probe(json!({"num": 1.25})), "");
    let ios = "type(self) == int ? self < 10 : self.endsWith('%')";
    assert_eq!(
        probe(json!({"ios": 11})),
        format!("spec.ios: Invalid value: 11: failed rule: {ios}")
    );
    assert_eq!(
        probe(json!({"ios": "50"})),
        format!(r#"spec.ios: Invalid value: "50": failed rule: {ios}"#)
    );
    assert_eq!(probe(json!({"ios": "50%"})), "");
    assert_eq!(
        probe(json!({"ts": "2019-01-01T00:00:00Z"})),
        r#"spec.ts: Invalid value: "2019-01-01T00:00:00Z": failed rule: self > timestamp('2020-01-01T00:00:00Z')"#
    );
    assert_eq!(probe(json!({"ts": "2021-01-01T00:00:00.5+01:00"})), "");
    assert_eq!(
        probe(json!({"dur": "2h"})),
        r#"spec.dur: Invalid value: "2h": failed rule: self < duration('1h')"#
    );
    assert_eq!(probe(json!({"dur": "59m"})), "");
    assert_eq!(
        probe(json!({"intv": 7})),
        "spec.intv: Invalid value: 7: too big"
    );
    assert_eq!(
        probe(json!({"boolv": false})),
        "spec.boolv: Invalid value: false: failed rule: self"
    );
}

#[test]
fn an_embedded_resource_shows_its_type_and_name() {
    assert_eq!(
        probe(json!({"emb": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "n"}}})),
        "spec.emb: Invalid value: must be a named pod"
    );
    assert_eq!(
        probe(json!({"emb": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"}}})),
        ""
    );
}

#[test]
fn runtime_errors_are_reported_with_the_type_as_value() {
    assert_eq!(
        probe(json!({"nokey": {}})),
        r#"spec.nokey: Invalid value: "object": no such key: a evaluating rule: self.a == 'x'"#
    );
    assert_eq!(
        probe(json!({"ovf": 9_223_372_036_854_775_807_i64})),
        "[spec.ovf: Invalid value: \"integer\": integer overflow evaluating rule: self * 2 > 0, \
         spec.ovf: Invalid value: \"integer\": division by zero evaluating rule: self / (self - self) > 0]"
    );
    assert_eq!(
        probe(json!({"idx": ["a"]})),
        "[spec.idx: Invalid value: \"array\": index out of bounds: 5 evaluating rule: self[5] == 'a', \
         spec.idx: Invalid value: \"array\": index out of bounds: 5 evaluating rule: [1,2][5] == 1, \
         spec.idx: Invalid value: \"array\": no such key: b evaluating rule: {'a': 1}['b'] == 1]"
    );
}

#[test]
fn a_message_expression_that_fails_or_is_empty_falls_back() {
    assert_eq!(
        probe(json!({"mx": {"n": 10}})),
        "[spec.mx: Invalid value: fallback message, \
         spec.mx: Invalid value: failed rule: self.n < 6, \
         spec.mx: Invalid value: padded]"
    );
}

#[test]
fn string_functions_and_format() {
    assert_eq!(
        probe(json!({"strs": "abc"})),
        "[spec.strs: Invalid value: \"string\": index out of range: 10 evaluating rule: self.charAt(10) == 'a', \
         spec.strs: Invalid value: \"string\": index out of range: 5 evaluating rule: self.substring(5) == '', \
         spec.strs: Invalid value: \"abc\": abc 42 3.14 ff [1, \"a\", 2.500000] {\"k\":true}]"
    );
    assert_eq!(
        probe(json!({"opt": {}})),
        "spec.opt: Invalid value: failed rule: self.?a.orValue('none') == 'x'"
    );
    assert_eq!(probe(json!({"opt": {"a": "x"}})), "");
}

#[test]
fn quantities_come_from_the_kubernetes_library() {
    assert_eq!(
        probe(json!({"q": "1Mi"})),
        r#"spec.q: Invalid value: "1Mi": quantity too small"#
    );
    assert_eq!(probe(json!({"q": "2Gi"})), "");
}

#[test]
fn transition_rules_follow_map_list_items_by_key_and_compare_sets_as_sets() {
    let s = probes();
    let old = spec(
        json!({"items": [{"name": "a", "port": 1}, {"name": "b", "port": 2}],
        "setl": ["x", "y"], "mapl": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]}),
    );
    let reordered = spec(
        json!({"items": [{"name": "b", "port": 2}, {"name": "a", "port": 1}],
        "setl": ["y", "x"], "mapl": [{"k": "b", "v": 2}, {"k": "a", "v": 1}]}),
    );
    assert_eq!(validate(&s, &reordered, Some(&old)), "");
    let port = spec(
        json!({"items": [{"name": "b", "port": 2}, {"name": "a", "port": 5},
        {"name": "c", "port": 3}], "setl": ["y", "x"], "mapl": [{"k": "b", "v": 2}, {"k": "a", "v": 1}]}),
    );
    assert_eq!(
        validate(&s, &port, Some(&reordered)),
        "spec.items[1]: Invalid value: port is immutable"
    );
    let set = spec(
        json!({"items": [{"name": "b", "port": 2}, {"name": "a", "port": 1}],
        "setl": ["x", "z"], "mapl": [{"k": "b", "v": 2}, {"k": "a", "v": 1}]}),
    );
    assert_eq!(
        validate(&s, &set, Some(&reordered)),
        "spec.setl: Invalid value: set is immutable"
    );
    let map = spec(
        json!({"items": [{"name": "b", "port": 2}, {"name": "a", "port": 1}],
        "setl": ["y", "x"], "mapl": [{"k": "a", "v": 9}]}),
    );
    assert_eq!(
        validate(&s, &map, Some(&reordered)),
        "spec.mapl: Invalid value: map list is immutable"
    );
}

/// The `rats` CRD the ratcheting cases were recorded with, its limits lowered from 10 to 3
/// after `stored` was created.
fn rats() -> Value {
    let rule = |r: &str, m: &str| json!([{"rule": r, "message": m}]);
    spec_schema(json!({"type": "object",
        "x-kubernetes-validations": rule("!has(self.a) || self.a.size() < 3", "spec a too long"),
        "properties": {
            "a": {"type": "string", "maxLength": 20,
                "x-kubernetes-validations": rule("self.size() < 3", "a too long")},
            "b": {"type": "string"},
            "l": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 20,
                "x-kubernetes-validations": rule("self.size() < 3", "item too long")}},
            "m": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "required": ["k"],
                    "properties": {"k": {"type": "string", "maxLength": 20}, "v": {"type": "string", "maxLength": 20}},
                    "x-kubernetes-validations": rule("self.v.size() < 3", "v too long")}},
            "o": {"type": "object", "properties": {"x": {"type": "string", "maxLength": 20}},
                "x-kubernetes-validations": rule("self.x.size() < 3", "x too long")}}}))
}

/// Errors, then warnings, of an update.
fn ratcheted(schema: &Value, new: &Value, old: &Value) -> (String, Vec<String>) {
    let outcome = rules(schema).evaluate(new, Some(old));
    (show(&outcome.errors), outcome.warnings)
}

#[test]
fn ratcheting_turns_failures_of_unchanged_values_into_warnings() {
    let s = rats();
    let stored = json!({"a": "aaaaa", "l": ["xxxxx", "yy"],
        "m": [{"k": "a", "v": "vvvvv"}, {"k": "b", "v": "w"}], "o": {"x": "xxxxx"}});
    let update = |patch: Value| {
        let mut new = stored.clone();
        if let (Some(n), Some(p)) = (new.as_object_mut(), patch.as_object()) {
            for (k, v) in p {
                n.insert(k.clone(), v.clone());
            }
        }
        ratcheted(&s, &spec(new), &spec(stored.clone()))
    };
    let (a, l0, m0, o) = (
        r#"spec.a: Invalid value: "aaaaa": a too long"#,
        r#"spec.l[0]: Invalid value: "xxxxx": item too long"#,
        "spec.m[0]: Invalid value: v too long",
        "spec.o: Invalid value: x too long",
    );
    let spec_error = "spec: Invalid value: spec a too long";
    assert_eq!(
        update(json!({"b": "new"})),
        (
            spec_error.to_owned(),
            vec![a.to_owned(), l0.to_owned(), m0.to_owned(), o.to_owned()]
        )
    );
    // An atomic list that changed takes its items' failures, unchanged ones too.
    assert_eq!(
        update(json!({"l": ["xxxxx", "yy", "z"]})),
        (
            format!("[{spec_error}, {l0}]"),
            vec![a.to_owned(), m0.to_owned(), o.to_owned()]
        )
    );
    // Items of a map list are followed by key.
    assert_eq!(
        update(json!({"m": [{"k": "b", "v": "w2"}, {"k": "a", "v": "vvvvv"}]})),
        (
            spec_error.to_owned(),
            vec![
                a.to_owned(),
                l0.to_owned(),
                "spec.m[1]: Invalid value: v too long".to_owned(),
                o.to_owned()
            ]
        )
    );
    assert_eq!(
        update(json!({"o": {"x": "xxxxxx"}})),
        (
            format!("[{spec_error}, {o}]"),
            vec![a.to_owned(), l0.to_owned(), m0.to_owned()]
        )
    );
    assert_eq!(
        update(json!({"a": "aaaaaa"})),
        (
            format!(r#"[{spec_error}, spec.a: Invalid value: "aaaaaa": a too long]"#),
            vec![l0.to_owned(), m0.to_owned(), o.to_owned()]
        )
    );
}

/// The `mores` CRD of the cases below (recorded from a 1.36 server).
fn mores() -> Value {
    let spec: Value = serde_json::from_str(MORES_SPEC).unwrap_or(Value::Null);
    spec_schema(spec)
}

const MORES_SPEC: &str = r#"{"type": "object", "properties": {"o": {"type": "string", "x-kubernetes-validations": [{"rule": "oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('a')", "optionalOldSelf": true, "message": "o: starts with a, then immutable"}]}, "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "values are immutable"}]}}, "al": {"type": "string", "maxLength": 10}, "emb": {"type": "array", "maxItems": 3, "items": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": [{"rule": "has(self.metadata.name) && self.metadata.name.size() < 5", "message": "short name"}]}}, "gt": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > oldSelf", "message": "must grow"}]}}, "x-kubernetes-validations": [{"rule": "has(self.gt) || !has(oldSelf.gt)", "message": "gt cannot be removed"}]}"#;

#[test]
fn optional_old_self_transition_rules_and_embedded_items() {
    let s = mores();
    assert_eq!(
        validate(&s, &spec(json!({"o": "b"})), None),
        r#"spec.o: Invalid value: "b": o: starts with a, then immutable"#
    );
    let emb = json!({"o": "abc", "m": {"k": "v"}, "emb": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "toolong"}},
        {"apiVersion": "v1", "kind": "Pod"}], "gt": 1});
    assert_eq!(
        validate(&s, &spec(emb), None),
        "[spec.emb[0]: Invalid value: short name, \
         spec.emb[1]: Invalid value: \"object\": no such key: metadata evaluating rule: short name]"
    );
    let stored = json!({"o": "abc", "m": {"k": "v"}, "al": "y", "gt": 1});
    let update = |patch: Value| {
        let mut new = stored.clone();
        if let (Some(n), Some(p)) = (new.as_object_mut(), patch.as_object()) {
            for (k, v) in p {
                if v.is_null() {
                    n.remove(k);
                } else {
                    n.insert(k.clone(), v.clone());
                }
            }
        }
        validate(&s, &spec(new), Some(&spec(stored.clone())))
    };
    // A transition rule is not ratcheted: `gt` fails though unchanged.
    let gt = "spec.gt: Invalid value: 1: must grow";
    assert_eq!(
        update(json!({"o": "abd"})),
        format!(r#"[{gt}, spec.o: Invalid value: "abd": o: starts with a, then immutable]"#)
    );
    assert_eq!(
        update(json!({"m": {"k": "w", "k2": "z"}})),
        format!(r#"[{gt}, spec.m[k]: Invalid value: "w": values are immutable]"#)
    );
    assert_eq!(update(json!({"gt": 2})), "");
    assert_eq!(
        update(json!({"gt": null})),
        "spec: Invalid value: gt cannot be removed"
    );
}

#[test]
fn old_self_exists_only_where_a_rule_of_the_node_uses_it() {
    let mx = json!({"rule": "self.x != \"bad\"", "messageExpression": "\"old was \" + oldSelf.x"});
    let s = spec_schema(json!({"type": "object", "properties": {
        "a": {"type": "object", "properties": {"x": {"type": "string"}},
            "x-kubernetes-validations": [mx]},
        "b": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "self.y == oldSelf.y", "message": "y immutable"}, mx]}}}));
    let failed = "Invalid value: failed rule: self.x != \"bad\"";
    assert_eq!(
        validate(
            &s,
            &spec(json!({"a": {"x": "bad"}, "b": {"x": "bad", "y": "1"}})),
            None
        ),
        format!("[spec.a: {failed}, spec.b: {failed}]")
    );
    let stored = spec(json!({"a": {"x": "ok"}, "b": {"x": "ok", "y": "1"}}));
    let new = spec(json!({"a": {"x": "bad"}, "b": {"x": "bad", "y": "1"}}));
    assert_eq!(
        validate(&s, &new, Some(&stored)),
        format!("[spec.a: {failed}, spec.b: Invalid value: old was ok]")
    );
}
