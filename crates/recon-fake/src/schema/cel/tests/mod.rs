//! Tests: the recorded answers of a real kube-apiserver 1.36 (`fixtures/conformance`), and
//! cases checked against one.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::CelRules;
use crate::field::aggregate;

mod cost;
mod crd;
mod library;
mod properties;
mod robustness;
mod runtime;

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
    show(&rules(schema).evaluate(new, old).errors)
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
    let errors = rules(&s).evaluate(&obj, None).errors;
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
    let errors = rules(&s).evaluate(&b, Some(&a)).errors;
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

#[test]
fn compiled_rules_can_be_shared_across_threads() {
    fn shared<T: Send + Sync + Clone>() {}
    shared::<CelRules>();
}
