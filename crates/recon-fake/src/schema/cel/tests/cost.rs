//! The cost estimate against kube-apiserver's: for each recorded rule, the largest `maxItems`
//! the real server accepts is accepted here, and the smallest it refuses is refused with the
//! same message (whose factor, given to six decimals, pins the estimate to about ten units).
//! Recorded by `xtask/record-cel-costs.py`.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{crd_errors, spec_schema};
use crate::field::aggregate;

const BOUNDARIES: &str = include_str!("../../../../../../fixtures/cel/cost-boundaries.json");

fn schema(item: &Value, rule: &str, max_items: u64) -> Value {
    let mut item = item.clone();
    item["x-kubernetes-validations"] = json!([{"rule": rule}]);
    spec_schema(json!({"type": "object", "properties": {
        "w": {"type": "array", "maxItems": max_items, "items": item}}}))
}

#[test]
fn estimates_refuse_rules_where_kube_apiserver_does() {
    let recorded: Value = serde_json::from_str(BOUNDARIES).expect("the fixture is JSON");
    let item = &recorded["item"];
    let mut wrong = Vec::new();
    for case in recorded["cases"].as_array().expect("cases") {
        let rule = case["rule"].as_str().expect("rule");
        let at = case["refusedAt"].as_u64().expect("refusedAt");
        let expected = case["message"].as_str().expect("message");
        if at > 1 {
            let below = crd_errors(&schema(item, rule, at - 1));
            if !below.is_empty() {
                wrong.push(format!("{rule}: maxItems {} refused: {below}", at - 1));
            }
        }
        let refused = crd_errors(&schema(item, rule, at));
        if refused != expected {
            wrong.push(format!(
                "{rule}: maxItems {at}:\n  real: {expected}\n  recon: {refused}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of the recorded rules differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

const RUNTIME_BOUNDARIES: &str =
    include_str!("../../../../../../fixtures/cel/runtime-cost-boundaries.json");

/// `0, 1, ..., n - 1` as the recorder wrote them for items of type `item`.
fn items(item: &str, n: u64) -> Value {
    (0..n)
        .map(|i| match item {
            "string" => json!(i.to_string()),
            "object" => json!({"a": i}),
            _ => json!(i),
        })
        .collect()
}

/// The charges against kube-apiserver's: for each recorded rule, the longest list the real
/// server evaluates within the per-call limit passes here, and the shortest it stops is
/// stopped with the same message. Recorded by `xtask/record-cel-runtime-costs.py`.
#[test]
fn runtime_charges_stop_rules_where_kube_apiserver_does() {
    let recorded: Value = serde_json::from_str(RUNTIME_BOUNDARIES).expect("the fixture is JSON");
    let rules = super::rules(&recorded["schema"]);
    let fields = &recorded["schema"]["properties"]["spec"]["properties"];
    let mut wrong = Vec::new();
    for case in recorded["cases"].as_array().expect("cases") {
        let field = case["field"].as_str().expect("field");
        let at = case["refusedAt"].as_u64().expect("refusedAt");
        let expected = case["message"].as_str().expect("message");
        let item = fields[field]["items"]["type"].as_str().expect("item type");
        let outcome = |n: u64| {
            let object = json!({"apiVersion": "conformance.example.com/v1", "kind": "RuntimeCost",
                "metadata": {"name": "probe", "namespace": "default"},
                "spec": {field: items(item, n)}});
            rules.evaluate(&object, None).errors
        };
        let below = outcome(at - 1);
        if !below.is_empty() {
            wrong.push(format!(
                "{field}: {} items refused: {}",
                at - 1,
                aggregate(&below)
            ));
        }
        let refused = aggregate(&outcome(at));
        if refused != expected {
            wrong.push(format!(
                "{field}: {at} items:\n  real: {expected}\n  recon: {refused}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of the recorded rules differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
