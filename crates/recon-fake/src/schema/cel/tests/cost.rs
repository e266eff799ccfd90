//! The cost estimate against kube-apiserver's: for each recorded rule, the largest `maxItems`
//! the real server accepts is accepted here, and the smallest it refuses is refused with the
//! same message (whose factor, given to six decimals, pins the estimate to about ten units).
//! Recorded by `xtask/record-cel-costs.py`.

use serde_json::{Value, json};

use super::{crd_errors, spec_schema};

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
