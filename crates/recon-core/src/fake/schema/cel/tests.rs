//! Tests: the recorded answers of a real kube-apiserver 1.36 (`fixtures/conformance`), and
//! cases checked against one.

use serde_json::{Value, json};

use super::super::super::field_error::aggregate;
use super::CelRules;

const SCHEMEDS: &str = include_str!("../../../../../../fixtures/conformance/crds/schemeds.yaml");

/// The `openAPIV3Schema` of the conformance CRD `schemeds`.
fn schemeds_schema() -> Value {
    let crd: Value = serde_saphyr::from_str(SCHEMEDS).unwrap_or(Value::Null);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

fn rules(schema: &Value) -> CelRules {
    match CelRules::compile(schema) {
        Ok(Some(r)) => r,
        Ok(None) => panic!("no rules"),
        Err(e) => panic!("does not compile: {}", aggregate(&e)),
    }
}

/// The CRD-time errors of a schema.
fn crd_errors(schema: &Value) -> String {
    match CelRules::compile_at(schema, "spec.validation.openAPIV3Schema") {
        Err(e) => aggregate(&e),
        Ok(_) => String::new(),
    }
}

/// A resource of the schemeds CRD, with the defaults the real server applies first.
fn schemed(spec: Value) -> Value {
    let mut full = json!({"enabled": false, "maxReplicas": 10, "minReplicas": 0, "replicas": 1,
        "strategy": {"maxSurge": 1, "type": "Rolling"}});
    if let (Some(f), Some(s)) = (full.as_object_mut(), spec.as_object()) {
        for (k, v) in s {
            f.insert(k.clone(), v.clone());
        }
    }
    json!({"apiVersion": "conformance.example.com/v1", "kind": "Schemed",
        "metadata": {"name": "s1", "namespace": "ns"}, "spec": full})
}

fn with_status(mut obj: Value, status: Value) -> Value {
    obj["status"] = status;
    obj
}

/// A schema with `spec` as given.
fn spec_schema(spec: Value) -> Value {
    json!({"type": "object", "properties": {"spec": spec}})
}

/// The errors as one string, empty when there are none.
fn show(errors: &[super::FieldError]) -> String {
    if errors.is_empty() {
        String::new()
    } else {
        aggregate(errors)
    }
}

fn validate(schema: &Value, new: &Value, old: Option<&Value>) -> String {
    show(&rules(schema).validate(new, old))
}

fn spec(v: Value) -> Value {
    json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "p1"}, "spec": v})
}

#[test]
fn cel_rule_fails_with_its_message_at_the_object_without_a_value() {
    // cel-rule-fails.yaml
    let s = schemeds_schema();
    let obj = schemed(json!({"title": "abc", "replicas": 2, "minReplicas": 3}));
    assert_eq!(
        validate(&s, &obj, None),
        "spec: Invalid value: replicas must be at least minReplicas"
    );
    let errors = rules(&s).validate(&obj, None);
    assert_eq!(errors[0].cause().reason, "FieldValueInvalid");
    assert_eq!(errors[0].cause().field, "spec");
    // Against the defaults, and holding.
    let defaulted = schemed(json!({"title": "abc", "minReplicas": 1}));
    assert_eq!(validate(&s, &defaulted, None), "");
    let holds = schemed(json!({"title": "abc", "replicas": 2, "minReplicas": 2}));
    assert_eq!(validate(&s, &holds, None), "");
}

#[test]
fn cel_message_expression_computes_the_message() {
    // cel-message-expression.yaml
    let s = schemeds_schema();
    let obj = schemed(json!({"title": "abc", "replicas": 20}));
    assert_eq!(
        validate(&s, &obj, None),
        "spec: Invalid value: replicas 20 is more than maxReplicas 10"
    );
}

#[test]
fn cel_transition_rule_compares_with_the_stored_value() {
    // cel-transition-rule-oldself.yaml
    let s = schemeds_schema();
    let a = schemed(json!({"title": "abc", "mode": "a"}));
    assert_eq!(validate(&s, &a, None), "");
    let b = schemed(json!({"title": "abc", "mode": "b"}));
    let errors = rules(&s).validate(&b, Some(&a));
    assert_eq!(
        aggregate(&errors),
        r#"spec.mode: Invalid value: "b": mode is immutable"#
    );
    assert_eq!(
        errors[0].cause().message,
        r#"Invalid value: "b": mode is immutable"#
    );
    let kept = schemed(json!({"title": "abc", "mode": "a", "replicas": 2}));
    assert_eq!(validate(&s, &kept, Some(&a)), "");
    // No stored mode: the rule does not run.
    let none = schemed(json!({"title": "abc"}));
    assert_eq!(validate(&s, &b, Some(&none)), "");
}

#[test]
fn status_rule_reports_at_status() {
    // status-write-is-validated.yaml: the whole object, against the stored one.
    let s = schemeds_schema();
    let stored = schemed(json!({"title": "abc"}));
    let new = with_status(stored.clone(), json!({"readyReplicas": -1}));
    assert_eq!(
        validate(&s, &new, Some(&stored)),
        "status: Invalid value: readyReplicas must not be negative"
    );
    let fine = with_status(
        stored.clone(),
        json!({"phase": "Ready", "readyReplicas": 1}),
    );
    assert_eq!(validate(&s, &fine, Some(&stored)), "");
}

#[test]
fn several_rules_fail_in_order() {
    // several-errors-are-one-422-with-causes.yaml: the CEL part.
    let s = schemeds_schema();
    let obj =
        schemed(json!({"title": "abc", "replicas": 200, "tags": ["a", "a"], "minReplicas": 300}));
    assert_eq!(
        validate(&s, &obj, None),
        "[spec: Invalid value: replicas must be at least minReplicas, \
         spec: Invalid value: replicas 200 is more than maxReplicas 10]"
    );
}

#[test]
fn a_schema_without_rules_compiles_to_nothing() {
    let s = spec_schema(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    assert!(matches!(CelRules::compile(&s), Ok(None)));
}

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
    let errors = rules(&probes()).validate(&spec(json!({"fp": {"x": "v"}})), None);
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

/// The CRD-time errors, one per line (each may span several).
fn crd_error_lines(schema: &Value) -> Vec<String> {
    match CelRules::compile_at(schema, "spec.validation.openAPIV3Schema") {
        Err(e) => e.iter().map(ToString::to_string).collect(),
        Ok(_) => Vec::new(),
    }
}

const P: &str = "spec.validation.openAPIV3Schema.properties[spec]";

/// A JSON string as Go writes it (`<`, `>` and `&` escaped).
fn go_string(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `{"Rule": ...}` as the real server prints a rule.
fn rule_json(rule: &str, extra: &str) -> String {
    let base = format!(
        r#"{{"Rule":{},"Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}}"#,
        go_string(rule)
    );
    if extra.is_empty() {
        base
    } else {
        base.replace(
            r#""Reason":null,"FieldPath":"","OptionalOldSelf":null}"#,
            extra,
        )
    }
}

#[test]
fn crd_time_errors_say_why_a_rule_does_not_compile() {
    // Recorded from a 1.36 server (its `selfType` numbers vary; ours is fixed).
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.foo == 1"},
            {"rule": "self.a +"},
            {"rule": "self.a", "reason": "FieldValueForbidden"},
            {"rule": "self.a == oldSelf.a", "optionalOldSelf": true, "messageExpression": "1"},
            {"rule": "self.a == 'x'", "optionalOldSelf": false, "fieldPath": ".a"}],
        "properties": {"a": {"type": "string"},
            "l": {"type": "array", "items": {"type": "object",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}));
    let syntax = "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', \
                  'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
    assert_eq!(
        crd_error_lines(&schema),
        [
            format!(
                r#"{P}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within {P}.properties[l]"#
            ),
            format!(
                "{P}.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^",
                rule_json("self.foo == 1", "")
            ),
            format!(
                "{P}.x-kubernetes-validations[1].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:9: {syntax}\n | self.a +\n | ........^",
                rule_json("self.a +", "")
            ),
            format!(
                "{P}.x-kubernetes-validations[2].rule: Invalid value: {}: cel expression must evaluate to a bool",
                rule_json(
                    "self.a",
                    r#""Reason":"FieldValueForbidden","FieldPath":"","OptionalOldSelf":null}"#
                )
            ),
            format!(
                "{P}.x-kubernetes-validations[3].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, optional_type(string))'\n | self.a == oldSelf.a\n | .......^",
                rule_json(
                    "self.a == oldSelf.a",
                    r#""Reason":null,"FieldPath":"","OptionalOldSelf":true}"#
                )
                .replace(r#""MessageExpression":"""#, r#""MessageExpression":"1""#)
            ),
            format!(
                "{P}.x-kubernetes-validations[3].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
            ),
            format!(
                "{P}.x-kubernetes-validations[4].optionalOldSelf: Invalid value: false: may not be set if oldSelf is not used in rule"
            ),
        ]
    );
}

#[test]
fn a_bad_field_path_keeps_the_node_rules_from_being_compiled() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.foo == 1"},
            {"rule": "self.a == 'x'", "fieldPath": ".nope"}],
        "properties": {"a": {"type": "string"}}}));
    assert_eq!(
        crd_errors(&schema),
        format!(
            r#"{P}.x-kubernetes-validations[1].fieldPath: Invalid value: ".nope": must be a valid path"#
        )
    );
}

#[test]
fn crd_time_type_errors_are_cel_go_s() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self == 1"},
            {"rule": "nope"},
            {"rule": "size(self.a, 1) == 1"},
            {"rule": "self.a.startsWith(1)"},
            {"rule": "self.n > 1", "messageExpression": "self.n"},
            {"rule": "self.l.all(x, x.nope)"},
            {"rule": "has(self.nope)"},
            {"rule": "Foo{a: 1}"},
            {"rule": "self.n == 1.0"},
            {"rule": "self.ios"},
            {"rule": "self.m.x == \"a\" && self.d == 1.0 && self.nosuch(1)"}],
        "properties": {"a": {"type": "string"}, "n": {"type": "integer"},
            "l": {"type": "array", "items": {"type": "string"}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "ios": {"x-kubernetes-int-or-string": true}, "d": {"type": "number"}}}));
    let at = |i: usize, rule: &str, mx: &str, detail: &str| {
        let value = rule_json(rule, "").replace(
            r#""MessageExpression":"""#,
            &format!(r#""MessageExpression":{}"#, go_string(mx)),
        );
        let field = if detail.starts_with("messageExpression") {
            "messageExpression"
        } else {
            "rule"
        };
        format!("{P}.x-kubernetes-validations[{i}].{field}: Invalid value: {value}: {detail}")
    };
    assert_eq!(
        crd_error_lines(&schema),
        [
            at(
                0,
                "self == 1",
                "",
                "compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(selfType0, int)'\n | self == 1\n | .....^"
            ),
            at(
                1,
                "nope",
                "",
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope\n | ^"
            ),
            at(
                2,
                "size(self.a, 1) == 1",
                "",
                "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(string, int)'\n | size(self.a, 1) == 1\n | ....^"
            ),
            at(
                3,
                "self.a.startsWith(1)",
                "",
                "compilation failed: ERROR: <input>:1:18: found no matching overload for 'startsWith' applied to 'string.(int)'\n | self.a.startsWith(1)\n | .................^"
            ),
            at(
                4,
                "self.n > 1",
                "self.n",
                "messageExpression must evaluate to a string"
            ),
            at(
                5,
                "self.l.all(x, x.nope)",
                "",
                "compilation failed: ERROR: <input>:1:16: type 'string' does not support field selection\n | self.l.all(x, x.nope)\n | ...............^"
            ),
            at(
                6,
                "has(self.nope)",
                "",
                "compilation failed: ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"
            ),
            at(
                7,
                "Foo{a: 1}",
                "",
                "compilation failed: ERROR: <input>:1:4: undeclared reference to 'Foo' (in container '')\n | Foo{a: 1}\n | ...^"
            ),
            at(
                8,
                "self.n == 1.0",
                "",
                "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, double)'\n | self.n == 1.0\n | .......^"
            ),
            at(9, "self.ios", "", "cel expression must evaluate to a bool"),
            at(
                10,
                "self.m.x == \"a\" && self.d == 1.0 && self.nosuch(1)",
                "",
                "compilation failed: ERROR: <input>:1:48: undeclared reference to 'nosuch' (in container '')\n | self.m.x == \"a\" && self.d == 1.0 && self.nosuch(1)\n | ...............................................^"
            ),
        ]
    );
}

#[test]
fn crd_time_errors_for_functions_kubernetes_does_not_offer_and_bad_literals() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "math.greatest(1, 2) == 2"},
            {"rule": "cel.bind(x, 1, x == 1)"},
            {"rule": "\"abc\".reverse() == \"cba\""},
            {"rule": "[1,2].distinct() == [1,2] && lists.range(3) == [0,1,2] && [3,1].sortBy(x, x) == [1,3]"},
            {"rule": "self.m.all(k, v, v != \"\")"},
            {"rule": "strings.quote(\"a\") == \"a\" && [1,2].sum() == 3 && [1].min() == 1"},
            {"rule": "self.a.matches(\"[\")"},
            {"rule": "duration(\"1x\") > duration(\"1s\")"},
            {"rule": "optional.of(1).hasValue() && 1 < 1.5 && 1u < 2"},
            {"rule": "[1, \"a\"] == []"}],
        "properties": {"a": {"type": "string"},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}}));
    let at = |i: usize, rule: &str, detail: &str| {
        format!(
            "{P}.x-kubernetes-validations[{i}].rule: Invalid value: {}: compilation failed: {detail}",
            rule_json(rule, "")
        )
    };
    assert_eq!(
        crd_error_lines(&schema),
        [
            at(
                0,
                "math.greatest(1, 2) == 2",
                "ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.greatest(1, 2) == 2\n | ^\nERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')\n | math.greatest(1, 2) == 2\n | .............^"
            ),
            at(
                1,
                "cel.bind(x, 1, x == 1)",
                "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')\n | cel.bind(x, 1, x == 1)\n | ^\nERROR: <input>:1:9: undeclared reference to 'bind' (in container '')\n | cel.bind(x, 1, x == 1)\n | ........^\nERROR: <input>:1:10: undeclared reference to 'x' (in container '')\n | cel.bind(x, 1, x == 1)\n | .........^\nERROR: <input>:1:16: undeclared reference to 'x' (in container '')\n | cel.bind(x, 1, x == 1)\n | ...............^"
            ),
            at(
                2,
                "\"abc\".reverse() == \"cba\"",
                "ERROR: <input>:1:14: found no matching overload for 'reverse' applied to 'string.()'\n | \"abc\".reverse() == \"cba\"\n | .............^"
            ),
            at(
                6,
                "self.a.matches(\"[\")",
                "ERROR: <input>:1:16: invalid matches argument\n | self.a.matches(\"[\")\n | ...............^"
            ),
            at(
                7,
                "duration(\"1x\") > duration(\"1s\")",
                "ERROR: <input>:1:10: invalid duration argument\n | duration(\"1x\") > duration(\"1s\")\n | .........^"
            ),
            at(
                9,
                "[1, \"a\"] == []",
                "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, \"a\"] == []\n | ....^"
            ),
        ]
    );
}

#[test]
fn crd_time_errors_for_values_cel_cannot_see() {
    let schema = spec_schema(json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.a == \"x\""}],
        "properties": {
            "a": {"x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": "self == 1"}]},
            "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": "has(self.q)"}]}}}));
    assert_eq!(
        crd_error_lines(&schema),
        [
            format!(
                "{P}.properties[a].x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"
            ),
            format!(
                "{P}.properties[b].x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:4: undefined field 'q'\n | has(self.q)\n | ...^",
                rule_json("has(self.q)", "")
            ),
            format!(
                "{P}.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: undefined field 'a'\n | self.a == \"x\"\n | ....^",
                rule_json("self.a == \"x\"", "")
            ),
        ]
    );
}

#[test]
fn crd_time_paths_are_relative_without_a_root() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "true", "message": " "}, {"rule": "true", "reason": "Bogus"}]}));
    let errors = match CelRules::compile(&schema) {
        Err(e) => aggregate(&e),
        Ok(_) => String::new(),
    };
    assert_eq!(
        errors,
        "[properties[spec].x-kubernetes-validations[0].message: Invalid value: \" \": must be non-empty if specified, \
         properties[spec].x-kubernetes-validations[1].reason: Unsupported value: \"Bogus\": supported values: \
         \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"]"
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

/// Expressions and the message a real 1.36 server printed for `'%s'.format([expr])`.
const LIBRARY: &[(&str, &str)] = &[
    (r#"ip('192.168.0.1').isLoopback()"#, r#"false"#),
    (r#"string(ip('::1'))"#, r#"::1"#),
    (r#"ip('10.0.0.1').family()"#, r#"4"#),
    (r#"cidr('10.0.0.0/8').containsIP('10.1.2.3')"#, r#"true"#),
    (r#"string(cidr('10.0.0.1/8').masked())"#, r#"10.0.0.0/8"#),
    (r#"cidr('10.0.0.0/8').prefixLength()"#, r#"8"#),
    (
        r#"url('https://example.com:8080/path?x=1').getHost()"#,
        r#"example.com:8080"#,
    ),
    (
        r#"url('https://example.com:8080/path?x=1&x=2').getQuery()"#,
        r#"{"x":["1", "2"]}"#,
    ),
    (
        r#"url('https://example.com:8080/p%20a').getEscapedPath()"#,
        r#"/p%20a"#,
    ),
    (r#"semver('1.2.3').major()"#, r#"1"#),
    (r#"semver('v1.2', true).minor()"#, r#"2"#),
    (r#"semver('1.2.3').isLessThan(semver('1.10.0'))"#, r#"true"#),
    (r#"format.named('dns1123Label').hasValue()"#, r#"true"#),
    (
        r#"quantity('1.5Gi').asApproximateFloat()"#,
        r#"1.610612736e+09"#,
    ),
    (r#"quantity('100m').isInteger()"#, r#"false"#),
    (r#"quantity('1k').add(5).asInteger()"#, r#"1005"#),
    (r#"quantity('1k').compareTo(quantity('1000'))"#, r#"0"#),
    (r#"[3, 1, 2].sort()"#, r#"[1, 2, 3]"#),
    (r#"[[1], [2, 3]].flatten()"#, r#"[1, 2, 3]"#),
    (r#"lists.range(3)"#, r#"[0, 1, 2]"#),
    (r#"'a,b,c'.split(',', 2)"#, r#"["a", "b,c"]"#),
    (r#"'hello'.indexOf('l')"#, r#"2"#),
    (r#"'hello'.lastIndexOf('l')"#, r#"3"#),
    (r#"'Hello'.lowerAscii()"#, r#"hello"#),
    (r#"'a.b.c'.replace('.', '-', 1)"#, r#"a-b.c"#),
    (r#"'  x '.trim()"#, r#"x"#),
    (r#"strings.quote('a"b\n')"#, r#""a\"b\n""#),
    (r#"sets.intersects([1, 2], [2, 3])"#, r#"true"#),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getDayOfWeek()"#,
        r#"6"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getHours('America/New_York')"#,
        r#"3"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getMilliseconds()"#,
        r#"123"#,
    ),
    (
        r#"timestamp('2023-05-06T07:08:09.123Z').getDayOfYear()"#,
        r#"125"#,
    ),
    (
        r#"string(timestamp('2023-05-06T07:08:09.120Z'))"#,
        r#"2023-05-06T07:08:09.12Z"#,
    ),
    (r#"string(duration('1h30m'))"#, r#"5400s"#),
    (r#"duration('1h30m').getMinutes()"#, r#"90"#),
    (r#"string(1.5e21)"#, r#"1.5e+21"#),
    (r#"string(1e-7)"#, r#"1e-07"#),
    (r#"string(0.1)"#, r#"0.1"#),
    (r#"int(1e10)"#, r#"10000000000"#),
    (r#"double('1.5')"#, r#"1.5"#),
    (r#"'abcabc'.find('b.')"#, r#"bc"#),
    (r#"'abcabc'.findAll('b', 1)"#, r#"["b"]"#),
    (r#"optional.none().orValue(5)"#, r#"5"#),
    (r#"[1, 2, 3].exists_one(x, x > 2)"#, r#"true"#),
    (r#"[1, 2, 3].map(x, x * 2)"#, r#"[2, 4, 6]"#),
    (r#"[1, 2, 3].filter(x, x > 1)"#, r#"[2, 3]"#),
    (r#"{'a': 1}.transformMap(k, v, v + 1)"#, r#"{"a":2}"#),
    (r#"[1, 2].transformList(i, v, i + v)"#, r#"[1, 3]"#),
    (r#"string(b'abc')"#, r#"abc"#),
    (r#"dyn(1) == 1.0"#, r#"true"#),
    (r#"[1, 2, 3].isSorted()"#, r#"true"#),
    (r#"[2, 1].min()"#, r#"1"#),
    (r#"'abc'.charAt(3)"#, r#"failed rule: false"#),
    (r#"size('héllo')"#, r#"5"#),
    (r#"1u + 2u"#, r#"3"#),
    (r#"-9223372036854775808"#, r#"-9223372036854775808"#),
    (r#"7 / 2"#, r#"3"#),
    (r#"7 % -3"#, r#"1"#),
    (r#"-7 / 2"#, r#"-3"#),
    (r#"2.0 / 0.0"#, r#"+Inf"#),
    (r#"string(-0.0)"#, r#"-0"#),
    (r#"[1, 2, 3].slice(1, 2)"#, r#"[2]"#),
    (r#"[1, 1, 2].distinct()"#, r#"[1, 2]"#),
    (r#"[1, 2].reverse()"#, r#"[2, 1]"#),
    (r#"sets.equivalent([1, 2], [2, 1, 1])"#, r#"true"#),
    (r#"{'b': 2, 'a': 1}"#, r#"{"a":1, "b":2}"#),
    (r#"[1, 2] + [3]"#, r#"[1, 2, 3]"#),
    (r#"duration('-1.5s')"#, r#"-1.5s"#),
    (r#"string(duration('100ms'))"#, r#"0.1s"#),
    (r#"timestamp(1700000000)"#, r#"2023-11-14T22:13:20Z"#),
    (r#"int(timestamp('2023-01-01T00:00:00Z'))"#, r#"1672531200"#),
    (r#"string(duration('1h') + duration('1s'))"#, r#"3601s"#),
    (r#"bool('true')"#, r#"true"#),
    (r#"isURL('not a url')"#, r#"false"#),
    (r#"isIP('1.2.3')"#, r#"false"#),
    (r#"isCIDR('1.2.3.4/33')"#, r#"false"#),
    (
        r#"quantity('1Gi').isGreaterThan(quantity('1G'))"#,
        r#"true"#,
    ),
    (
        r#"'%.3f %e %b %o %X'.format([2.5, 12345.678, 5, 8, 255])"#,
        r#"2.500 1.234568×10⁰⁴ 101 10 FF"#,
    ),
    (r#"'%s'.format([duration('90s')])"#, r#"90s"#),
    (
        r#"'%s'.format([timestamp('2023-01-01T00:00:00Z')])"#,
        r#"2023-01-01T00:00:00Z"#,
    ),
    (r#"'%s'.format([type(1)])"#, r#"int"#),
    (r#"'%s'.format([null])"#, r#"null"#),
    (r#"'%s'.format([1.0])"#, r#"1"#),
];

#[test]
fn library_functions_give_what_cel_go_gives() {
    let rules: Vec<Value> = LIBRARY
        .iter()
        .map(|(e, _)| json!({"rule": "false", "messageExpression": format!("'%s'.format([{e}])")}))
        .collect();
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": rules}));
    let errors = rules_or_errors(&schema).validate(&spec(json!({})), None);
    let got: Vec<String> = errors.iter().map(|e| e.cause().message).collect();
    let wanted: Vec<String> = LIBRARY
        .iter()
        .map(|(_, m)| format!("Invalid value: {m}"))
        .collect();
    let mismatches: Vec<String> = LIBRARY
        .iter()
        .zip(got.iter().zip(&wanted))
        .filter(|(_, (g, w))| g != w)
        .map(|((e, _), (g, w))| format!("{e}: got {g:?}, wanted {w:?}"))
        .collect();
    assert_eq!(mismatches, Vec::<String>::new());
    assert_eq!(got.len(), wanted.len());
}

fn rules_or_errors(schema: &Value) -> CelRules {
    rules(schema)
}

#[test]
fn library_errors_are_worded_as_kubernetes_words_them() {
    let fields = [
        (
            "q",
            "quantity(self).isInteger()",
            "abc",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "c",
            "cidr(self).prefixLength() == 1",
            "1.2.3.4",
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4\"): no '/'",
        ),
        (
            "u",
            "url(self).getHost() == 'x'",
            "x",
            "URL parse error during conversion from string: parse \"x\": invalid URI for request",
        ),
        (
            "v",
            "semver(self).major() == 1",
            "x",
            "No Major.Minor.Patch elements found",
        ),
        (
            "t",
            "timestamp(self) > timestamp('2020-01-01T00:00:00Z')",
            "2020-01-01",
            "invalid RFC 3339 timestamp \"2020-01-01\"",
        ),
        (
            "d",
            "duration(self) > duration('1s')",
            "1x",
            "type conversion error from 'string' to 'google.protobuf.Duration'",
        ),
        (
            "n",
            "int(self) > 1",
            "abc",
            "type conversion error from 'string' to 'int'",
        ),
        (
            "tz",
            "timestamp('2020-01-01T00:00:00Z').getHours(self) == 1",
            "Nowhere/Land",
            "unknown time zone Nowhere/Land",
        ),
        (
            "tz2",
            "timestamp('2020-01-01T00:00:00Z').getHours(self) == 1",
            "+25:00",
            "timezone offset hours out of range [-23, 23]: +25:00",
        ),
    ];
    for (field, rule, value, message) in fields {
        let schema = spec_schema(
            json!({"type": "object", "properties": {field: {"type": "string",
            "maxLength": 64, "x-kubernetes-validations": [{"rule": rule}]}}}),
        );
        assert_eq!(
            validate(&schema, &spec(json!({field: value})), None),
            format!("spec.{field}: Invalid value: \"string\": {message} evaluating rule: {rule}")
        );
    }
}

#[test]
fn constants_that_cannot_convert_and_bad_format_arguments_are_refused_with_the_crd() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "false", "messageExpression": "'%s'.format([uint(-1)])"},
        {"rule": "false", "messageExpression": "'%s'.format([[1, 2].first()])"},
        {"rule": "int('x') == 1"}]}));
    assert_eq!(
        crd_error_lines(&schema),
        [
            format!(
                "{P}.x-kubernetes-validations[0].messageExpression: Invalid value: {}: messageExpression instantiation failed: unsigned integer overflow",
                rule_json("false", "").replace(
                    r#""MessageExpression":"""#,
                    &format!(
                        r#""MessageExpression":{}"#,
                        go_string("'%s'.format([uint(-1)])")
                    )
                )
            ),
            format!(
                "{P}.x-kubernetes-validations[1].messageExpression: Invalid value: {}: messageExpression compilation failed: ERROR: <input>:1:26: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type\n | '%s'.format([[1, 2].first()])\n | .........................^",
                rule_json("false", "").replace(
                    r#""MessageExpression":"""#,
                    &format!(
                        r#""MessageExpression":{}"#,
                        go_string("'%s'.format([[1, 2].first()])")
                    )
                )
            ),
            format!(
                "{P}.x-kubernetes-validations[2].rule: Invalid value: {}: program instantiation failed: type conversion error from 'string' to 'int'",
                rule_json("int('x') == 1", "")
            ),
        ]
    );
}

#[test]
fn macro_predicates_must_be_bool() {
    let schema = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "[1,2,3].exists_one(x, x)"},
            {"rule": "self.a.size() > 1 ? self.a : false"},
            {"rule": "{\"a\": 1, \"a\": 2}.size() == 1"},
            {"rule": "self.l.filter(x, 1) == []"},
            {"rule": "[1].all(x, 1)"},
            {"rule": "1 in {\"a\": 1}"}],
        "properties": {"a": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}}}}));
    let at = |i: usize, rule: &str, detail: &str| {
        format!(
            "{P}.x-kubernetes-validations[{i}].rule: Invalid value: {}: compilation failed: {detail}",
            rule_json(rule, "")
        )
    };
    assert_eq!(
        crd_error_lines(&schema),
        [
            at(
                0,
                "[1,2,3].exists_one(x, x)",
                "ERROR: <input>:1:19: found no matching overload for '_?_:_' applied to '(int, int, int)'\n | [1,2,3].exists_one(x, x)\n | ..................^"
            ),
            at(
                1,
                "self.a.size() > 1 ? self.a : false",
                "ERROR: <input>:1:19: found no matching overload for '_?_:_' applied to '(bool, string, bool)'\n | self.a.size() > 1 ? self.a : false\n | ..................^"
            ),
            at(
                3,
                "self.l.filter(x, 1) == []",
                "ERROR: <input>:1:14: found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'\n | self.l.filter(x, 1) == []\n | .............^"
            ),
            at(
                4,
                "[1].all(x, 1)",
                "ERROR: <input>:1:12: expected type 'bool' but found 'int'\n | [1].all(x, 1)\n | ...........^"
            ),
            at(
                5,
                "1 in {\"a\": 1}",
                "ERROR: <input>:1:3: found no matching overload for '@in' applied to '(int, map(string, int))'\n | 1 in {\"a\": 1}\n | ..^"
            ),
        ]
    );
    // A repeated key of a map literal takes the later value.
    let runtime = spec_schema(json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "{\"a\": 1, \"a\": 2}.size() == 1 && {\"a\": 1, \"a\": 2}.a == 2"},
        {"rule": "has(self.m.x) && self.m.?x.orValue(\"\") == \"1\""},
        {"rule": "self.o == null"}],
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}},
            "o": {"type": "object", "properties": {"z": {"type": "string"}}}}}));
    assert_eq!(
        validate(&runtime, &spec(json!({"m": {"x": "2"}, "o": {}})), None),
        "[spec: Invalid value: failed rule: has(self.m.x) && self.m.?x.orValue(\"\") == \"1\", \
         spec: Invalid value: failed rule: self.o == null]"
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
fn no_input_makes_it_panic() {
    let deep = format!("{}true{}", "(".repeat(300), ")".repeat(300));
    let chain = format!("1{} > 0", "+1".repeat(1000));
    let member_chain = format!("self{} == 1", ".a".repeat(400));
    let mut rules: Vec<String> = [
        "",
        " ",
        "(",
        ")",
        "[[[[",
        "a.b.c.d(",
        "'unterminated",
        "\"\\u{zz}\"",
        "1 +",
        "self.",
        ".",
        "?",
        "in",
        "has()",
        "has(self)",
        "self.all()",
        "self.l.all(1, 2)",
        "self.l.map(x, y, z, w)",
        "self[?'a']",
        "[?1] == []",
        "{?'a': 1} == {}",
        "optional.none() == optional.none()",
        "self.?a.?b == optional.none()",
        "Foo.Bar{}",
        "a.b.C{x: 1}",
        "1.0 / 0.0 > 1.0",
        "-9223372036854775808 - 1 > 0",
        "9223372036854775807 + 1 > 0",
        "0x7fffffffffffffff > 1",
        "18446744073709551615u > 1u",
        "18446744073709551616u > 1u",
        "1e400 > 1.0",
        "'\\xff' == ''",
        "b'\\xff' == b''",
        "string(b'\\xff') == ''",
        "'é'.size() == 1",
        "self.l.all(x, self.l.all(y, self.l.all(z, true)))",
        "lists.range(100000000).size() > 0",
        "'a'.format([1,2,3]) == ''",
        "'%'.format([]) == ''",
        "'%d'.format([]) == ''",
        "'%.x'.format([1]) == ''",
        "duration('-9223372036854775808ns') < duration('0s')",
        "timestamp('9999-12-31T23:59:59Z') + duration('1s') > timestamp('2000-01-01T00:00:00Z')",
        "timestamp('0001-01-01T00:00:00Z').getFullYear('America/New_York') > 0",
        "url('http://[::1]:80').getHostname() == ''",
        "quantity('1e1000').asInteger() > 0",
        "semver('1.2.3-alpha+build').major() == 1",
        "ip('::ffff:1.2.3.4').family() == 6",
        "cidr('::/0').containsIP(ip('1.2.3.4'))",
        "self.a.matches('(a+)+$')",
        "self.a.substring(-1, 2) == ''",
        "self.a.charAt(-1) == ''",
        "self.a.indexOf('', -5) == 0",
        "self.a.split('', -3).size() > 0",
        "self.a.replace('', 'x', 3) == ''",
        "self.l.slice(2, 1) == []",
        "self.l.flatten(-1) == []",
        "self.l.sort() == self.l",
        "self.m.transformMapEntry(k, v, {v: k}) == {}",
        "[1, 'a'].size() == 2",
        "dyn([1, 'a']).sort() == []",
        "dyn(self.l)[dyn('x')] == 1",
        "dyn(self.m)[1] == 'a'",
        "int(dyn(self.n)) > 0",
        "uint(dyn(self.i)) > 0u",
        "self.l.sum() > 0",
        "self.l.max() > 0",
        "self.n * 1e308 * 1e308 > 0.0",
        "int(self.n * 1e300) > 0",
        "timestamp(dyn(self.i)) > timestamp(0)",
        "self.ts.getHours(self.a) > 0",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    rules.extend([deep, chain, member_chain]);
    let objects = [
        spec(json!({})),
        spec(
            json!({"a": "aaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "l": [3, 1, 2], "m": {"x": "y"}, "n": 1.5,
            "i": -9_223_372_036_854_775_807_i64, "ts": "2020-01-01T00:00:00Z"}),
        ),
        spec(json!({"a": 1, "l": "x", "m": [1], "n": "x", "i": 1.5, "ts": "never"})),
        spec(json!({"a": null, "l": [null, "x"], "m": {"x": null}, "n": null})),
        json!("not an object"),
        json!({"spec": "string"}),
        json!(null),
    ];
    for rule in &rules {
        let schema = spec_schema(json!({"type": "object",
            "x-kubernetes-validations": [{"rule": rule, "messageExpression": rule}],
            "properties": {"a": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "n": {"type": "number"}, "i": {"type": "integer"},
                "ts": {"type": "string", "format": "date-time"}}}));
        let compiled = CelRules::compile(&schema);
        if let Ok(Some(r)) = compiled {
            for obj in &objects {
                let _ = r.evaluate(obj, Some(obj));
                let _ = r.evaluate(obj, None);
            }
        }
    }
}

/// Prints what each rule of `CEL_PROBE_RULES` (a JSON list) compiles to and evaluates to, for
/// comparing with a real server by hand.
#[test]
#[ignore = "a tool, not a test"]
fn probe_rules() {
    let Ok(text) = std::env::var("CEL_PROBE_RULES") else {
        return;
    };
    let rules: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    let object: Value = std::env::var("CEL_PROBE_OBJECT")
        .ok()
        .and_then(|o| serde_json::from_str(&o).ok())
        .unwrap_or(json!({}));
    let properties: Value = std::env::var("CEL_PROBE_PROPERTIES")
        .ok()
        .and_then(|o| serde_json::from_str(&o).ok())
        .unwrap_or(json!({}));
    for rule in rules {
        let schema = spec_schema(json!({"type": "object", "properties": properties,
            "x-kubernetes-validations": [{"rule": rule}]}));
        let out = match CelRules::compile_at(&schema, "spec.validation.openAPIV3Schema") {
            Err(e) => show(&e),
            Ok(None) => "no rules".to_owned(),
            Ok(Some(r)) => format!("OK: {}", show(&r.validate(&spec(object.clone()), None))),
        };
        println!(
            "{}",
            serde_json::to_string(&json!([rule, out])).unwrap_or_default()
        );
    }
}
