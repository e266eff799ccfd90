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
