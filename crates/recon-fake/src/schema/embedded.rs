//! `x-kubernetes-embedded-resource` objects, as apiextensions `schema/objectmeta` treats them:
//!
//! - [`coerce`], on decoding: `apiVersion` and `kind` must be strings, and `metadata` is decoded
//!   as an `ObjectMeta` (unknown fields dropped, wrong types refused);
//! - [`validate`]: both `apiVersion` and `kind` are needed, non-empty, with a parseable
//!   group/version and a kind that is a DNS-1035 label once lowercased. (The real server
//!   checks `metadata` with lenient path-segment name rules; not modelled yet.)

use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::dns1035_label_errors;

use super::model::{Additional, Node};
use super::steps::Step;
use super::validate::bad_value;
use crate::field::{ErrorType, FieldError};
use crate::wire::object::normalize_metadata;

/// `CoerceWithOptions` below the resource root: every embedded resource in `v` (at field path
/// `path`) gets its type and object metadata checked, and `metadata` normalised. The paths of
/// unknown metadata fields dropped are added to `unknown`. The first failure is the error.
///
/// One value at a time, in the order a recursion would take (a value may nest as deep as Go
/// reads): what is left to do is a list of values, each with the length of its parent's path
/// and the step below it.
pub(crate) fn coerce(
    node: &Node,
    path: &str,
    v: &mut Value,
    unknown: &mut Vec<String>,
) -> Result<(), FieldError> {
    let mut path = path.to_owned();
    let mut pending = vec![(node, v, path.len(), Step::Here)];
    while let Some((node, v, parent, step)) = pending.pop() {
        step.below(&mut path, parent);
        let at = path.len();
        match v {
            Value::Object(map) => {
                if node.embedded_resource {
                    coerce_type_and_object_meta(&path, map, unknown)?;
                }
                for (k, v) in map.iter_mut().rev() {
                    if let Some(schema) = node.properties.get(k) {
                        pending.push((schema, v, at, Step::Field(k)));
                    } else if let Some(Additional::Schema(schema)) = &node.additional_properties {
                        pending.push((schema, v, at, Step::Key(k)));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &node.items {
                    for (i, item) in items.iter_mut().enumerate().rev() {
                        pending.push((schema, item, at, Step::Index(i)));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn coerce_type_and_object_meta(
    path: &str,
    map: &mut Map,
    unknown: &mut Vec<String>,
) -> Result<(), FieldError> {
    for key in ["apiVersion", "kind"] {
        if let Some(v) = map.get(key).filter(|v| !v.is_string()) {
            return Err(FieldError::new(
                ErrorType::Invalid,
                join(path, key),
                bad_value(v),
                "must be a string",
            ));
        }
    }
    let before = map.get("metadata").cloned();
    match normalize_metadata(map) {
        Ok(paths) => {
            unknown.extend(paths.into_iter().map(|p| join(path, &p)));
            Ok(())
        }
        Err(why) => Err(FieldError::new(
            ErrorType::Invalid,
            join(path, "metadata"),
            before
                .as_ref()
                .map_or(crate::field::BadValue::Omit, bad_value),
            why,
        )),
    }
}

/// The errors of the embedded resources within `obj` (the resource itself is not one), in the
/// order a recursion would find them, one value at a time.
pub(crate) fn validate(node: &Node, obj: &Map) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut path = String::new();
    let mut pending = Vec::new();
    members(node, obj, 0, Step::Field, &mut pending);
    while let Some((node, v, parent, step)) = pending.pop() {
        step.below(&mut path, parent);
        match v {
            Value::Object(map) => {
                if node.embedded_resource {
                    embedded(&path, map, &mut out);
                }
                members(node, map, path.len(), Step::Member, &mut pending);
            }
            Value::Array(items) => {
                if let Some(schema) = &node.items {
                    let items = items.iter().enumerate().rev();
                    pending.extend(
                        items.map(|(i, item)| (&**schema, item, path.len(), Step::Index(i))),
                    );
                }
            }
            _ => {}
        }
    }
    out
}

/// The members of `map` that have a schema, to be validated next in their order: a property
/// at `property` below the path `at` bytes long, any other key in brackets.
fn members<'a>(
    node: &'a Node,
    map: &'a Map,
    at: usize,
    property: fn(&'a str) -> Step<'a>,
    pending: &mut Vec<(&'a Node, &'a Value, usize, Step<'a>)>,
) {
    for (k, v) in map.iter().rev() {
        if let Some(schema) = node.properties.get(k) {
            pending.push((schema, v, at, property(k)));
        } else if let Some(Additional::Schema(schema)) = &node.additional_properties {
            pending.push((schema, v, at, Step::Key(k)));
        }
    }
}

/// `validateEmbeddedResource`.
fn embedded(path: &str, map: &Map, out: &mut Vec<FieldError>) {
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
