//! The errors a CRD is refused with for its rules, as a 1.36 server words them.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

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

#[test]
fn the_fields_of_a_rule_are_checked() {
    let spec: Value = serde_json::from_str(RULE_FIELDS).unwrap_or(Value::Null);
    let at = |i: usize| format!("{P}.x-kubernetes-validations[{i}]");
    assert_eq!(
        crd_error_lines(&spec_schema(spec)),
        [
            format!(
                "{}.message: Required value: message must be specified if rule contains line breaks",
                at(0)
            ),
            format!(
                "{}.message: Invalid value: \"a\\nb\": must not contain line breaks",
                at(1)
            ),
            format!(
                "{}.messageExpression: Required value: messageExpression must be non-empty if specified",
                at(2)
            ),
            format!(
                "{}.fieldPath: Invalid value: \" \": must be non-empty if specified",
                at(3)
            ),
            format!(
                "{}.fieldPath: Invalid value: \" \": must be a valid path",
                at(3)
            ),
            format!(
                "{}.fieldPath: Invalid value: \".a\\n\": must not contain line breaks",
                at(4)
            ),
            format!(
                "{}.fieldPath: Invalid value: \".a\\n\": must be a valid path",
                at(4)
            ),
            format!(
                "{}.fieldPath: Invalid value: \"a\": must be a valid path",
                at(5)
            ),
            format!(
                "{}.fieldPath: Invalid value: \".m[\\\"k\\\"]\": must be a valid path",
                at(6)
            ),
        ]
    );
}

/// Recorded from a 1.36 server: rules whose fields are refused.
const RULE_FIELDS: &str = r#"{"type": "object", "x-kubernetes-validations": [{"rule": "self.a\n== \"x\""}, {"rule": "true", "message": "a\nb"}, {"rule": "true", "messageExpression": " "}, {"rule": "true", "fieldPath": " "}, {"rule": "true", "fieldPath": ".a\n"}, {"rule": "self.a == \"x\"", "fieldPath": "a"}, {"rule": "self.a == \"x\"", "fieldPath": ".m[\"k\"]"}, {"rule": "self.a == \"x\"", "fieldPath": ".m['k']"}, {"rule": "self.a == \"x\"", "fieldPath": "['a']"}], "properties": {"a": {"type": "string"}, "m": {"type": "object", "additionalProperties": {"type": "string"}}}}"#;
