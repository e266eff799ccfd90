//! No rule and no object makes validation panic; and a tool to compare rules with a real
//! server.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

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
            Ok(Some(r)) => format!(
                "OK: {}",
                show(&r.evaluate(&spec(object.clone()), None).errors)
            ),
        };
        println!(
            "{}",
            serde_json::to_string(&json!([rule, out])).unwrap_or_default()
        );
    }
}

/// Rules nested as deep as the server lets through, by each way of nesting.
fn deep_rule(shape: &str, depth: usize) -> String {
    match shape {
        "paren" => format!("{}true{}", "(".repeat(depth), ")".repeat(depth)),
        "int" => format!("{}1{} > 0", "int(".repeat(depth), ")".repeat(depth)),
        "list" => format!("{}1{}.size() > 0", "[".repeat(depth), "]".repeat(depth)),
        "negint" => format!("{}1{} < 0", "-int(".repeat(depth), ")".repeat(depth)),
        "plus" => format!("1{} > 0", "+1".repeat(depth)),
        "member" => format!("self{} == 1", ".a".repeat(depth)),
        _ => format!("{}true", "!".repeat(depth)),
    }
}

/// Issue 22: a rule nesting brackets a hundred deep overflowed a test thread's 2 MiB stack
/// and aborted the process. Compiled and run on such a thread, in a child process so that an
/// overflow is a failure here rather than the end of the run.
#[test]
fn deep_rules_compile_and_run_on_a_test_threads_stack() {
    const NAME: &str =
        "schema::cel::tests::robustness::deep_rules_compile_and_run_on_a_test_threads_stack";
    if !crate::proptests::in_child_process(NAME) {
        return;
    }
    let outcomes = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(compile_and_run_deep_rules)
        .expect("a 2 MiB thread")
        .join()
        .expect("no panic");
    for (shape, depth, outcome) in outcomes {
        // What kube-apiserver 1.36 answered for each (a CRD POST with `dryRun=All`): up to
        // 249 deep every shape is accepted (`member` then fails type checking, a string
        // having no fields); 250 nested brackets are ANTLR's limit, 250 links of a chain
        // the visitor's; `!` does not nest.
        let expected = match (shape, depth) {
            ("paren" | "int" | "list" | "negint", 250 | 1000) => {
                "expression recursion limit exceeded: 250"
            }
            ("plus" | "member", 250 | 1000) => "max recursion depth exceeded",
            ("member", _) => "type 'string' does not support field selection",
            _ => "compiled",
        };
        assert!(
            outcome.contains(expected),
            "{shape} {depth}: expected {expected:?}, got {outcome}"
        );
    }
}

fn compile_and_run_deep_rules() -> Vec<(&'static str, usize, String)> {
    let mut outcomes = Vec::new();
    for shape in ["paren", "int", "list", "negint", "plus", "member", "not"] {
        for depth in [100, 200, 248, 249, 250, 1000] {
            let schema = json!({
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": deep_rule(shape, depth)}],
            });
            let errors = crd_errors(&schema);
            let outcome = if errors.is_empty() {
                // Evaluation walks the tree as deep as compilation did.
                rules(&schema).evaluate(&json!({"a": "x"}), None);
                "compiled".to_owned()
            } else {
                errors
            };
            outcomes.push((shape, depth, outcome));
        }
    }
    outcomes
}

/// The issue-22 rule: each `replace` puts the whole string in place of every `a`, so four of
/// them on 100 characters would build 10^10 of them. kube-apiserver 1.36 accepts the CRD
/// (each `replace` is estimated from its receiver, `self.s`, only) and has no bound on what a
/// call builds; recon stops the call before it allocates, as over the per-call cost limit.
#[test]
fn a_rule_that_would_build_gigabytes_stops_at_the_cost_limit() {
    const NAME: &str =
        "schema::cel::tests::robustness::a_rule_that_would_build_gigabytes_stops_at_the_cost_limit";
    if !crate::proptests::in_child_process(NAME) {
        return;
    }
    let rule = "self.s.replace('a', self.s.replace('a', self.s.replace('a', \
                self.s.replace('a', self.s)))).size() > 0";
    let schema = super::spec_schema(json!({"type": "object",
        "x-kubernetes-validations": [{"rule": rule}],
        "properties": {"s": {"type": "string"}}}));
    let rules = super::rules(&schema);
    let object = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "k"},
        "spec": {"s": "a".repeat(100)}});
    let outcome = rules.evaluate(&object, None);
    let errors = crate::field::aggregate(&outcome.errors);
    assert!(
        errors.contains("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule"),
        "{errors}"
    );
}
