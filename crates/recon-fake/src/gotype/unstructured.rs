//! `runtime.DefaultUnstructuredConverter.FromUnstructured`: how kube-apiserver turns the map a
//! strategic merge patch produced back into the Go type, and the errors it words otherwise than
//! the JSON decoder (`unrecognized type: int32`, `cannot convert int64 to string`, `cannot
//! restore struct from: string`). Its error quotes the patch as Go's `%v` prints a map
//! ([`fmt_v`](crate::strategic::gofmt::fmt_v)).

use recon_apimachinery::gotime::{self, Layout};
use recon_apimachinery::json::Value;

use super::base64::corrupt_at;
use super::{GoType, TYPES, quantity};
use crate::wire::object::Object;

/// Whether `obj` converts into struct `struct_name`; `Err` is the converter's error, the first
/// in document order.
pub(crate) fn from_unstructured(struct_name: &str, obj: &Object) -> Result<(), String> {
    // One value at a time, not by recursion: a CRD's `JSONSchemaProps` nests as deep as Go
    // reads. The values still to convert are taken from the end, so they are queued backwards.
    let mut pending = Vec::new();
    queue_fields(struct_name, obj, &mut pending);
    pending.reverse();
    while let Some((ty, value)) = pending.pop() {
        let start = pending.len();
        convert(ty, value, &mut pending)?;
        pending[start..].reverse();
    }
    Ok(())
}

/// Queues the fields of `obj`, of struct `struct_name`, that the struct has: the converter
/// skips the others.
fn queue_fields<'v>(
    struct_name: &str,
    obj: &'v Object,
    pending: &mut Vec<(&'static GoType, &'v Value)>,
) {
    let Some(go_struct) = TYPES.get(struct_name) else {
        return;
    };
    pending.extend(
        obj.iter()
            .filter_map(|(key, value)| Some((go_struct.fields.get(key)?, value))),
    );
}

/// The Go kind of a value decoded from JSON (integral numbers as `int64`).
fn source_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

/// Converts `value` into `ty`, queueing what it holds.
fn convert<'v>(
    ty: &'static GoType,
    value: &'v Value,
    pending: &mut Vec<(&'static GoType, &'v Value)>,
) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    let kind = source_kind(value);
    let scalar = |dest: &str, accepts: &[&str], convertible: &[&str]| {
        if accepts.contains(&kind) {
            Ok(())
        } else if convertible.contains(&kind) {
            Err(format!("cannot convert {kind} to {dest}"))
        } else {
            Err(format!("unrecognized type: {dest}"))
        }
    };
    match ty {
        GoType::Any => Ok(()),
        GoType::Named(_, of) => convert(of, value, pending),
        GoType::Int32 => scalar("int32", &["int64"], &["float64"]),
        GoType::Int64 => scalar("int64", &["int64"], &["float64"]),
        GoType::Float64 => scalar("float64", &["int64", "float64"], &[]),
        GoType::String => scalar("string", &["string"], &["int64"]),
        GoType::Bool => scalar("bool", &["bool"], &[]),
        // Types with their own JSON decoding are converted through it.
        GoType::IntOrString => match value {
            Value::String(_) => Ok(()),
            Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => Ok(()),
            Value::Number(n) => Err(format!(
                "json: cannot unmarshal number {n} into Go value of type int32"
            )),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type int32",
                crate::wire::object::json_type(other)
            )),
        },
        GoType::Quantity => {
            let text = match value {
                Value::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            };
            quantity::canonical(&text)
                .map(|_| ())
                .map_err(str::to_owned)
        }
        GoType::Time | GoType::MicroTime => match value {
            // The converter hands a type with its own `UnmarshalJSON` its JSON: `time.Parse`.
            Value::String(text) => {
                let layout = if *ty == GoType::Time {
                    Layout::Time
                } else {
                    Layout::MicroTime
                };
                gotime::parse(layout, text).map(|_| ())
            }
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type string",
                crate::wire::object::json_type(other)
            )),
        },
        GoType::Bytes => match value {
            Value::String(text) => match corrupt_at(text) {
                Some(at) => Err(format!("illegal base64 data at input byte {at}")),
                None => Ok(()),
            },
            Value::Array(_) => Ok(()),
            _ => Err(format!("cannot restore slice from {kind}")),
        },
        GoType::Slice(item) => match value {
            Value::Array(items) => {
                pending.extend(items.iter().map(|v| (&**item, v)));
                Ok(())
            }
            _ => Err(format!("cannot restore slice from {kind}")),
        },
        GoType::Map(item) => match value {
            Value::Object(entries) => {
                pending.extend(entries.values().map(|v| (&**item, v)));
                Ok(())
            }
            _ => Err(format!("cannot restore map from {kind}")),
        },
        GoType::Struct(name) => match value {
            Value::Object(obj) => {
                queue_fields(name, obj, pending);
                Ok(())
            }
            _ => Err(format!("cannot restore struct from: {kind}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::strategic::gofmt::fmt_v;
    use recon_apimachinery::json;

    use super::*;
    use crate::gotype::kind_struct;

    fn deployment(spec: Value) -> Result<(), String> {
        let Value::Object(obj) = json!({"spec": spec}) else {
            unreachable!()
        };
        from_unstructured(kind_struct("apps", "v1", "Deployment").unwrap(), &obj)
    }

    #[test]
    fn conversions_fail_as_the_unstructured_converter_words_it() {
        // Recorded (decoding/wrong-type-by-strategic-merge-patch-is-400).
        assert_eq!(
            deployment(json!({"replicas": "three"})),
            Err("unrecognized type: int32".into())
        );
        assert_eq!(
            deployment(json!({"replicas": 2.5})),
            Err("cannot convert float64 to int32".into())
        );
        assert_eq!(deployment(json!({"replicas": 3.0})), Ok(()));
        assert_eq!(
            deployment(json!({"template": "x"})),
            Err("cannot restore struct from: string".into())
        );
        assert_eq!(
            deployment(json!({"template": {"spec": {"containers": {"a": 1}}}})),
            Err("cannot restore slice from map".into())
        );
        assert_eq!(
            deployment(json!({"template": {"metadata": {"labels": {"a": 1}}}})),
            Err("cannot convert int64 to string".into())
        );
        assert_eq!(deployment(json!({"unknown": "kept for decoding"})), Ok(()));
    }

    #[test]
    fn the_first_failure_in_document_order_is_the_one_reported() {
        assert_eq!(
            deployment(json!({"replicas": "three", "template": "x"})),
            Err("unrecognized type: int32".into())
        );
        assert_eq!(
            deployment(
                json!({"template": {"spec": {"containers": [{"name": 1}]}}, "replicas": 2.5})
            ),
            Err("cannot convert float64 to int32".into())
        );
    }

    // A CRD's schema nests `JSONSchemaProps` as deep as Go reads: converted on a test thread's
    // stack, the failure at the bottom found before one in a later field.
    #[test]
    fn a_schema_as_deep_as_go_reads_converts() {
        let crd = |leaf: &str| {
            let schema = crate::wire::nesting::deep_text::nested_schema(4_990, leaf);
            let text = format!(
                r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{schema}}}}}]}},"status":{{"storedVersions":"v1"}}}}"#
            );
            match crate::wire::nesting::deep_text::read(&text) {
                Value::Object(obj) => obj,
                other => panic!("not an object: {other:?}"),
            }
        };
        let name = kind_struct("apiextensions.k8s.io", "v1", "CustomResourceDefinition").unwrap();
        assert_eq!(
            from_unstructured(name, &crd(r#"{"type":"string","maxLength":"one"}"#)),
            Err("unrecognized type: int64".into())
        );
        assert_eq!(
            from_unstructured(name, &crd(r#"{"type":"string"}"#)),
            Err("cannot restore slice from string".into())
        );
    }

    #[test]
    fn patches_print_as_go_prints_a_map() {
        assert_eq!(
            fmt_v(&json!({"spec": {"replicas": "three"}})),
            "map[spec:map[replicas:three]]"
        );
        assert_eq!(
            fmt_v(&json!({"b": [1, 2.5, true, null], "a": 3.0})),
            "map[a:3 b:[1 2.5 true <nil>]]"
        );
    }
}
