//! `x-kubernetes-embedded-resource` (apiextensions `objectmeta.Validate`): an embedded object
//! needs `apiVersion` and `kind`, both non-empty strings, a parseable group/version and a kind
//! that is a DNS-1035 label once lowercased. (Its `metadata` is checked by the real server with
//! lenient path-segment name rules; not modelled yet.)

use serde_json::{Map, Value};

use super::super::field_error::{ErrorType, FieldError};
use super::super::names::dns1035_label_errors;
use super::model::{Additional, Node};
use super::validate::bad_value;

/// The errors of the embedded resources within `obj` (the resource itself is not one).
pub(crate) fn validate(node: &Node, obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut out = Vec::new();
    for (k, v) in obj {
        if let Some(schema) = node.properties.get(k) {
            value(schema, k, v, &mut out);
        } else if let Some(Additional::Schema(schema)) = &node.additional_properties {
            value(schema, &format!("[{k}]"), v, &mut out);
        }
    }
    out
}

fn value(node: &Node, path: &str, v: &Value, out: &mut Vec<FieldError>) {
    match v {
        Value::Object(map) => {
            if node.embedded_resource {
                embedded(path, map, out);
            }
            for (k, v) in map {
                if let Some(schema) = node.properties.get(k) {
                    value(schema, &format!("{path}.{k}"), v, out);
                } else if let Some(Additional::Schema(schema)) = &node.additional_properties {
                    value(schema, &format!("{path}[{k}]"), v, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(schema) = &node.items {
                for (i, item) in items.iter().enumerate() {
                    value(schema, &format!("{path}[{i}]"), item, out);
                }
            }
        }
        _ => {}
    }
}

/// `validateEmbeddedResource`.
fn embedded(path: &str, map: &Map<String, Value>, out: &mut Vec<FieldError>) {
    for key in ["apiVersion", "kind"] {
        if !map.contains_key(key) {
            out.push(FieldError::required(format!("{path}.{key}"), ""));
        }
    }
    for key in ["apiVersion", "kind"] {
        let Some(v) = map.get(key) else { continue };
        let field = format!("{path}.{key}");
        let Some(s) = v.as_str() else {
            out.push(FieldError::new(
                ErrorType::Invalid,
                field,
                bad_value(v),
                "must be a string",
            ));
            continue;
        };
        if s.is_empty() {
            out.push(FieldError::invalid(field, s, "must not be empty"));
        } else if key == "apiVersion" && s.matches('/').count() > 1 {
            // `schema.ParseGroupVersion`.
            out.push(FieldError::invalid(
                field,
                s,
                format!("unexpected GroupVersion string: {s}"),
            ));
        } else if key == "kind" {
            let errors = dns1035_label_errors(&s.to_lowercase());
            if !errors.is_empty() {
                out.push(FieldError::invalid(
                    field,
                    s,
                    format!(
                        "may have mixed case, but should otherwise match: {}",
                        errors.join(",")
                    ),
                ));
            }
        }
    }
}
