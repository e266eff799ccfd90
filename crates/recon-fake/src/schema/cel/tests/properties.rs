//! Property tests of CEL (issue 22): no source text, arbitrary or mutated from a valid rule,
//! makes the parser, the compiler or the evaluator panic, whatever object the rule meets.
//!
//! Rules run with no cost limit yet, so expense is bounded by construction: sources are at
//! most 60 characters, numbers in them at most a few digits, objects small, and no source
//! reaches `lists.range` (the one function whose work grows with an argument's value rather
//! than with the input's size).

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;
use crate::proptests::{config, json as json_value};

#[path = "../../../../../recon-apimachinery/tests/support/mutation.rs"]
mod mutation;
use mutation::{edit, mutate};

/// Rules the `spec` schema below compiles, each within the bounds of [`bounded`], covering macros, optionals, the extension
/// libraries and the Kubernetes library types.
const VALID_RULES: &[&str] = &[
    "self.a.startsWith('x') || self.l.all(x, x > 0)",
    "self.l.exists_one(x, x == 2) && size(self.m) < 3",
    "self.m.all(k, self.m[k] != k) ? self.n < 1.5 : true",
    "self.?a.orValue('none') != 'x'",
    "has(self.ts) && self.ts > timestamp('2020-01-01T00:00:00Z')",
    "self.l.map(x, x * 2).filter(y, y > 2).size() <= 3",
    "'%s-%d'.format([self.a, self.i]).size() < 20",
    "self.a.matches('^[a-z]+$') && self.a.indexOf('b') < 3",
    "quantity('1Gi').isGreaterThan(quantity('1Mi'))",
    "int(self.n) + self.i - 1 != 0 && self.i % 2 == 0",
    "duration('90m') > duration('1h') && self.a.split(',') != []",
    "[3, 1].sort() == [1, 3] && {'a': 1}.exists(k, k == 'a')",
];

/// Tokens for generated sources: the language's operators, literals, macros and functions,
/// the schema's fields, and characters the lexer may handle badly.
const TOKENS: &[&str] = &[
    "self",
    "oldSelf",
    ".",
    ".?",
    "a",
    "l",
    "m",
    "n",
    "i",
    "ts",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "?",
    "!",
    "-",
    "+",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    " in ",
    "0",
    "1",
    "2",
    "1.5",
    "3u",
    "-1",
    "'x'",
    "\"y\"",
    "b'z'",
    "r'\\d'",
    "'''t'''",
    "true",
    "null",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "size",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "dyn",
    "type",
    "matches",
    "contains",
    "startsWith",
    "split",
    "join",
    "format",
    "indexOf",
    "substring",
    "lowerAscii",
    "sort",
    "timestamp",
    "duration",
    "quantity",
    "url",
    "ip",
    "cidr",
    "semver",
    "optional.of",
    "orValue",
    "x",
    "y",
    " ",
    "\0",
    "é",
    "'",
    "\"",
    "\\",
    "`",
    "#",
    "$",
];

/// Whether a source stays within the bounds the module's documentation states.
fn bounded(source: &str) -> bool {
    source.chars().count() <= 60
        && !source.contains("range")
        && !source
            .split(|c: char| !c.is_ascii_digit())
            .any(|digits| digits.len() > 4)
}

fn source() -> impl Strategy<Value = String> {
    // Mutations weigh most: few arbitrary sources compile, and only compiled rules evaluate.
    prop_oneof![
        1 => "[ -~]{0,60}",
        1 => prop::collection::vec(prop::sample::select(TOKENS), 0..20).prop_map(|t| t.concat()),
        4 => (
            prop::sample::select(VALID_RULES),
            prop::collection::vec(edit(), 0..3)
        )
            .prop_map(|(rule, edits)| mutate(rule, &edits, TOKENS)),
    ]
    .prop_filter("bounded cost", |s| bounded(s))
}

/// A `spec` that mostly fits the schema, with some fields of the wrong type or null.
fn spec_value() -> impl Strategy<Value = Value> {
    let typed = (
        prop::option::of("[a-c,]{0,5}"),
        prop::option::of(prop::collection::vec(-3i64..5, 0..5)),
        prop::option::of(prop::collection::btree_map(
            "[a-c]{0,2}",
            "[a-c]{0,2}",
            0..3,
        )),
        prop::option::of(-1e3f64..1e3),
        prop::option::of(any::<i64>()),
        prop::option::of(prop_oneof![
            Just("2021-06-01T12:00:00Z".to_owned()),
            "[0-9TZ:-]{0,20}"
        ]),
    )
        .prop_map(|(a, l, m, n, i, ts)| {
            let mut spec = recon_apimachinery::json::Map::new();
            let fields = [
                ("a", a.map(Value::from)),
                ("l", l.map(Value::from)),
                ("m", m.map(|m| json!(m))),
                ("n", n.map(Value::from)),
                ("i", i.map(Value::from)),
                ("ts", ts.map(Value::from)),
            ];
            for (name, value) in fields {
                if let Some(value) = value {
                    spec.insert(name.to_owned(), value);
                }
            }
            Value::Object(spec)
        });
    prop_oneof![4 => typed, 1 => json_value(3)]
}

fn rule_schema(rule: &str) -> Value {
    spec_schema(json!({"type": "object",
        "x-kubernetes-validations": [{"rule": rule}],
        // Bounded, so that the real server's cost estimate accepts every valid rule.
        "properties": {"a": {"type": "string", "maxLength": 100},
            "l": {"type": "array", "maxItems": 100, "items": {"type": "integer"}},
            "m": {"type": "object", "maxProperties": 20,
                "additionalProperties": {"type": "string", "maxLength": 100}},
            "n": {"type": "number"}, "i": {"type": "integer"},
            "ts": {"type": "string", "format": "date-time"}}}))
}

#[test]
fn the_valid_rules_compile() {
    for rule in VALID_RULES {
        assert!(bounded(rule), "{rule} is out of the generators' bounds");
        assert!(
            matches!(CelRules::compile(&rule_schema(rule)), Ok(Some(_))),
            "{rule}: {}",
            crd_errors(&rule_schema(rule))
        );
    }
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn parsing_never_panics(source in source()) {
        // As compilation runs it: on a stack sized for deep nesting.
        let _ = super::super::stack::on_large_stack(|| super::super::syntax::parse(&source));
    }

    #[test]
    fn compiling_and_evaluating_never_panic(
        source in source(),
        new in spec_value(),
        old in prop::option::of(spec_value()),
    ) {
        if let Ok(Some(rules)) = CelRules::compile(&rule_schema(&source)) {
            let old = old.map(spec);
            let _ = rules.evaluate(&spec(new), old.as_ref());
        }
    }
}
