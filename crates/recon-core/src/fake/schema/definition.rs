//! Checks of a CRD's `openAPIV3Schema` made when the CRD is written
//! (apiextensions `ValidateCustomResourceDefinitionOpenAPISchema`), for what a structural
//! schema may not say. Only what changes how custom resources are served is modelled:
//! `uniqueItems: true`, forbidden because checking it is quadratic.

use serde_json::Value;

use super::super::field_error::FieldError;

/// Where the errors of each version's schema are reported: the internal API version of the
/// CRD, which hoists a schema shared by every version to `spec.validation`.
pub(crate) fn schema_path(versions: &[Option<&Value>], index: usize) -> String {
    let shared = versions.windows(2).all(|w| w[0] == w[1]);
    if shared {
        "spec.validation.openAPIV3Schema".to_owned()
    } else {
        format!("spec.versions[{index}].schema.openAPIV3Schema")
    }
}

/// The errors of one schema, reported under `path`.
pub(crate) fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    node(schema, path, &mut out);
    out
}

fn node(schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let Some(m) = schema.as_object() else { return };
    if m.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        out.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            node(v, &format!("{path}.properties[{k}]"), out);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(v) = m.get(key) {
            node(v, &format!("{path}.{key}"), out);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = m.get(key).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                node(v, &format!("{path}.{key}[{i}]"), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::field_error::aggregate;
    use super::*;

    #[test]
    fn unique_items_is_forbidden_wherever_it_is() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"tags": {"type": "array", "uniqueItems": true,
                "items": {"type": "array", "uniqueItems": true}}}}}});
        assert_eq!(
            aggregate(&validate(&schema, "spec.validation.openAPIV3Schema")),
            "[spec.validation.openAPIV3Schema.properties[spec].properties[tags].uniqueItems: \
             Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes \
             quadratic, spec.validation.openAPIV3Schema.properties[spec].properties[tags].items.\
             uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime \
             complexity becomes quadratic]"
        );
        assert!(validate(&json!({"type": "array", "uniqueItems": false}), "x").is_empty());
    }

    #[test]
    fn a_schema_every_version_shares_is_reported_at_spec_validation() {
        let (a, b) = (json!({"type": "object"}), json!({"type": "string"}));
        assert_eq!(
            schema_path(&[Some(&a), Some(&a)], 1),
            "spec.validation.openAPIV3Schema"
        );
        assert_eq!(
            schema_path(&[Some(&a), Some(&b)], 1),
            "spec.versions[1].schema.openAPIV3Schema"
        );
    }
}
