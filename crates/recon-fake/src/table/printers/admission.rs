//! The admission policies (pkg/printers/internalversion/printers.go:
//! `printValidatingAdmissionPolicy`, `printMutatingAdmissionPolicy`).

use jiff::Timestamp;
use serde_json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, integer, list_at, name, text};
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
    use serde_json::json;

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
}
