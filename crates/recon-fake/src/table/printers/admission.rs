//! The admission policies and their bindings (pkg/printers/internalversion/printers.go:
//! `printValidatingAdmissionPolicy`, `printMutatingAdmissionPolicy`,
//! `printValidatingAdmissionPolicyBinding`, `printMutatingAdmissionPolicyBinding`).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, integer, list_at, name, str_at, text};
use crate::wire::object::Object;

/// The ParamKind column of both policies.
const PARAM_KIND: &str =
    "ParamKind specifies the kind of resources used to parameterize this policy";

pub(super) const VALIDATING_ADMISSION_POLICY: Printer = Printer {
    group: "admissionregistration.k8s.io",
    kind: "ValidatingAdmissionPolicy",
    columns: &[
        NAME,
        integer(
            "Validations",
            "Validations indicates the number of validation rules defined in this configuration",
        ),
        text("ParamKind", PARAM_KIND),
        AGE,
    ],
    row: |obj, now| policy_row(obj, "validations", now),
};

pub(super) const MUTATING_ADMISSION_POLICY: Printer = Printer {
    group: "admissionregistration.k8s.io",
    kind: "MutatingAdmissionPolicy",
    columns: &[
        NAME,
        integer(
            "Mutations",
            "Mutation indicates the number of mutations rules defined in this configuration",
        ),
        text("ParamKind", PARAM_KIND),
        AGE,
    ],
    row: |obj, now| policy_row(obj, "mutations", now),
};

/// The PolicyName column of both bindings.
const POLICY_NAME: &str =
    "PolicyName indicates the policy definition which the policy binding binded to";
/// The ParamRef column of both bindings.
const PARAM_REF: &str = "ParamRef indicates the param resource which sets the configuration param";

pub(super) const VALIDATING_ADMISSION_POLICY_BINDING: Printer = Printer {
    group: "admissionregistration.k8s.io",
    kind: "ValidatingAdmissionPolicyBinding",
    columns: &[
        NAME,
        text("PolicyName", POLICY_NAME),
        text("ParamRef", PARAM_REF),
        AGE,
    ],
    row: binding_row,
};

pub(super) const MUTATING_ADMISSION_POLICY_BINDING: Printer = Printer {
    group: "admissionregistration.k8s.io",
    kind: "MutatingAdmissionPolicyBinding",
    columns: &[
        NAME,
        text("PolicyName", POLICY_NAME),
        text("ParamRef", PARAM_REF),
        AGE,
    ],
    row: binding_row,
};

/// A binding's policy and its param reference: `namespace/name`, `*/name` without a
/// namespace, the selector as its Go `String()`, or `<unset>`.
fn binding_row(obj: &Object, now: Timestamp) -> Row {
    let param_ref = at(obj, &["spec", "paramRef"]).filter(|p| p.is_object());
    let field = |k: &str| {
        param_ref
            .and_then(|p| p.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let selector = param_ref
        .and_then(|p| p.get("selector"))
        .filter(|s| !s.is_null());
    let param = match (field("name"), field("namespace"), selector) {
        ("", _, Some(selector)) => selector_go_string(selector),
        ("", _, None) => "<unset>".to_owned(),
        (name, "", _) => format!("*/{name}"),
        (name, namespace, _) => format!("{namespace}/{name}"),
    };
    Row::new(vec![
        name(obj),
        Cell::text(str_at(obj, &["spec", "policyName"])),
        Cell::text(param),
        age_of(obj, now),
    ])
}

/// `metav1.LabelSelector.String()` (generated.pb.go): the labels sorted by key, then each
/// requirement with its values as `%v` prints a string slice.
fn selector_go_string(selector: &Value) -> String {
    let mut labels: Vec<(&String, &str)> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k, v.as_str().unwrap_or("")))
        .collect();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let expressions: String = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|v| v.as_str().unwrap_or(""))
                .collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                field("key"),
                field("operator"),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

/// A policy's rule count (of `rules`) and its param kind, `apiVersion/kind` or `<unset>`.
fn policy_row(obj: &Object, rules: &str, now: Timestamp) -> Row {
    let count = list_at(obj, &["spec", rules]).len();
    let param_kind = match at(obj, &["spec", "paramKind"]).filter(|p| p.is_object()) {
        Some(p) => {
            let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("");
            format!("{}/{}", field("apiVersion"), field("kind"))
        }
        None => "<unset>".to_owned(),
    };
    Row::new(vec![
        name(obj),
        Cell::Int(i64::try_from(count).unwrap_or(i64::MAX)),
        Cell::text(param_kind),
        age_of(obj, now),
    ])
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn policies_count_their_rules_and_name_their_param_kind() {
        let obj = json!({"metadata": {"name": "p"}, "spec": {
            "validations": [{"expression": "true"}, {"expression": "false"}],
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}
        }});
        let row = policy_row(
            obj.as_object().unwrap(),
            "validations",
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(row.cells[1..3], [Cell::Int(2), Cell::text("v1/ConfigMap")]);
    }

    #[test]
    fn bindings_name_their_param_reference() {
        let param = |param_ref: Value| {
            let obj = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "paramRef": param_ref}});
            binding_row(obj.as_object().unwrap(), Timestamp::UNIX_EPOCH).cells[2].clone()
        };
        assert_eq!(
            param(json!({"name": "x", "namespace": "n"})),
            Cell::text("n/x")
        );
        assert_eq!(param(json!({"name": "x"})), Cell::text("*/x"));
        assert_eq!(param(Value::Null), Cell::text("<unset>"));
        assert_eq!(
            param(json!({"selector": {"matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "k", "operator": "In", "values": ["y", "x"]}]}})),
            Cell::text(
                "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[y x],},},}"
            )
        );
    }
}
