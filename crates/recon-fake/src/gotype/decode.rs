//! Decoding a built-in object into its Go type, as kube-apiserver's JSON decoder does: a value
//! of the wrong JSON type fails with `encoding/json`'s `UnmarshalTypeError` (the innermost
//! struct, the field path from the top without list indices, the Go type); quantities come
//! back in Go's canonical form and `[]byte` in standard base64; fields the type
//! does not have are dropped and reported for field validation; a `null` list item or map value
//! becomes its type's zero value.
//!
//! Go reports the first type error in document order; objects here keep their keys sorted, so
//! of several wrong fields the first by key order is the one named.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use recon_apimachinery::gotime::{self, Layout};
use recon_apimachinery::json::{Number, Value};

use super::{GoStruct, GoType, TYPES, base64::corrupt_at, quantity};
use crate::wire::object::{Object, json_type};

/// Go's `StdEncoding` reads trailing bits it then drops; writing back is canonical.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// Decodes `obj`, of the struct named `struct_name` (from [`super::kind_struct`]), in place.
/// Returns the paths of the unknown fields dropped (`spec.template.spec.containers[0].imag`),
/// sorted; `Err` is the decoding error, worded as Go words it. `metadata` is left to the
/// `ObjectMeta` decoding that ran before.
pub(crate) fn decode(struct_name: &str, obj: &mut Object) -> Result<Vec<String>, String> {
    let mut walk = Walk::default();
    let metadata = obj.remove("metadata");
    if let Some(go_struct) = TYPES.get(struct_name) {
        walk.run(go_struct, obj);
    }
    if let Some(metadata) = metadata {
        obj.insert("metadata".into(), metadata);
    }
    match walk.error {
        Some(error) => Err(error),
        None => {
            walk.unknown.sort();
            Ok(walk.unknown)
        }
    }
}

/// The decoding of one object, one value at a time: a value's children wait on a list of
/// their own rather than on the call stack, as a struct's fields can nest as deep as Go reads
/// (a CRD's `JSONSchemaProps` holds its own type).
#[derive(Default)]
struct Walk {
    unknown: Vec<String>,
    error: Option<String>,
    /// Where the value at hand is, with list indices and map keys: for unknown-field paths.
    display: String,
    /// The JSON field names of the structs entered from the top, without indices or keys: the
    /// field path of a type error.
    fields: Vec<&'static str>,
    /// The structs entered: the innermost names a type error's "Go struct field".
    structs: Vec<&'static str>,
}

/// How a value is reached from the one above it.
enum Step<'v> {
    Field(&'static str),
    Index(usize),
    Key(&'v str),
}

/// A value still to decode, or the way back out of one.
enum Task<'v> {
    /// `value` of type `ty`, reached by `step`; `item` for a list item or map value (a `null`
    /// one becomes the type's zero value).
    Value {
        ty: &'static GoType,
        value: &'v mut Value,
        step: Step<'v>,
        item: bool,
    },
    /// The lengths of the path buffers before the value now done was entered.
    Leave {
        display: usize,
        fields: usize,
        structs: usize,
    },
}

impl Walk {
    /// Decodes `obj`, of struct `root`, stopping at the first error.
    fn run(&mut self, root: &'static GoStruct, obj: &mut Object) {
        let mut tasks = Vec::new();
        self.fields_of(root, obj, &mut tasks);
        while let Some(task) = tasks.pop() {
            if self.error.is_some() {
                return;
            }
            match task {
                Task::Leave {
                    display,
                    fields,
                    structs,
                } => {
                    self.display.truncate(display);
                    self.fields.truncate(fields);
                    self.structs.truncate(structs);
                }
                Task::Value {
                    ty,
                    value,
                    step,
                    item,
                } => {
                    if item && value.is_null() {
                        *value = ty.zero();
                        continue;
                    }
                    tasks.push(Task::Leave {
                        display: self.display.len(),
                        fields: self.fields.len(),
                        structs: self.structs.len(),
                    });
                    match step {
                        Step::Field(name) => {
                            if !self.display.is_empty() {
                                self.display.push('.');
                            }
                            self.display.push_str(name);
                            self.fields.push(name);
                        }
                        Step::Index(i) => {
                            write!(self.display, "[{i}]").ok();
                        }
                        Step::Key(key) => {
                            self.display.push('.');
                            self.display.push_str(key);
                        }
                    }
                    self.value(ty, value, &mut tasks);
                }
            }
        }
    }

    /// Enters the struct `go_struct` in `obj`: its unknown fields are reported and dropped, its
    /// known ones queued in key order (`null` leaves a field at its zero value: whether Go
    /// writes that back depends on `omitempty`, which the schemas do not say, so the storing
    /// code drops the empty fields it knows of, `defaults::as_stored`).
    fn fields_of<'v>(
        &mut self,
        go_struct: &'static GoStruct,
        obj: &'v mut Object,
        tasks: &mut Vec<Task<'v>>,
    ) {
        self.structs.push(&go_struct.name);
        let unknown: Vec<String> = obj
            .keys()
            .filter(|key| !go_struct.fields.contains_key(*key))
            .cloned()
            .collect();
        for key in unknown {
            let path = if self.display.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.display)
            };
            self.unknown.push(path);
            obj.remove(&key);
        }
        let start = tasks.len();
        for (key, value) in obj.iter_mut() {
            let Some((name, ty)) = go_struct.fields.get_key_value(key) else {
                continue;
            };
            if !value.is_null() {
                tasks.push(Task::Value {
                    ty,
                    value,
                    step: Step::Field(name),
                    item: false,
                });
            }
        }
        // Taken from the end: the first field is decoded first, as Go reads them.
        tasks[start..].reverse();
    }

    /// Decodes `value` of type `ty`, queueing what it holds.
    fn value<'v>(&mut self, ty: &'static GoType, value: &'v mut Value, tasks: &mut Vec<Task<'v>>) {
        // A named type decodes as what it is; the error names it.
        let mismatch = match (ty.underlying(), &mut *value) {
            (GoType::Any, _) => None,
            (GoType::Int32 | GoType::IntOrString, Value::Number(n)) => {
                integer_text(n, i64::from(i32::MIN), i64::from(i32::MAX))
                    .map(|text| format!("number {text}"))
            }
            (GoType::Int64, Value::Number(n)) => {
                integer_text(n, i64::MIN, i64::MAX).map(|text| format!("number {text}"))
            }
            (GoType::Time | GoType::MicroTime, Value::String(text)) => {
                // Not a type error: `time.Parse`'s own, without a field; kept in the server's form.
                let layout = match ty.underlying() {
                    GoType::Time => Layout::Time,
                    _ => Layout::MicroTime,
                };
                match gotime::canonical(layout, text) {
                    Ok(canonical) => *text = canonical,
                    Err(why) => self.error = Some(why),
                }
                return;
            }
            (GoType::Float64, Value::Number(_))
            | (GoType::String | GoType::IntOrString, Value::String(_))
            | (GoType::Bool, Value::Bool(_)) => None,
            (GoType::Bytes, Value::String(text)) => {
                match corrupt_at(text) {
                    Some(at) => {
                        // Not a type error: Go returns base64's own error, without a field.
                        self.error = Some(format!("illegal base64 data at input byte {at}"));
                        return;
                    }
                    None => {
                        let compact: String =
                            text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
                        if let Ok(bytes) = LENIENT.decode(compact) {
                            *text = base64::engine::general_purpose::STANDARD.encode(bytes);
                        }
                        None
                    }
                }
            }
            (GoType::Quantity, value) => {
                let text = match &*value {
                    Value::String(s) => s.trim().to_owned(),
                    other => other.to_string(),
                };
                // Not a type error either: the quantity parser's own, without a field.
                match quantity::canonical(&text) {
                    Ok(canonical) => *value = Value::String(canonical),
                    Err(why) => self.error = Some(why.to_owned()),
                }
                return;
            }
            (GoType::Slice(item), Value::Array(items)) => {
                let start = tasks.len();
                tasks.extend(items.iter_mut().enumerate().map(|(i, value)| Task::Value {
                    ty: item,
                    value,
                    step: Step::Index(i),
                    item: true,
                }));
                tasks[start..].reverse();
                None
            }
            (GoType::Map(item), Value::Object(entries)) => {
                let start = tasks.len();
                tasks.extend(entries.iter_mut().map(|(key, value)| Task::Value {
                    ty: item,
                    value,
                    step: Step::Key(key),
                    item: true,
                }));
                tasks[start..].reverse();
                None
            }
            (GoType::Struct(name), Value::Object(obj)) => {
                if let Some(go_struct) = TYPES.get(name) {
                    self.fields_of(go_struct, obj, tasks);
                }
                None
            }
            (_, other) => Some(json_type(other).to_owned()),
        };
        if let Some(what) = mismatch {
            // `encoding/json`'s `UnmarshalTypeError`: the innermost struct, the field path
            // from the top without list indices, the Go type.
            self.error = Some(format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {}",
                self.structs.last().copied().unwrap_or_default(),
                self.fields.join("."),
                ty.go_name()
            ));
        }
    }
}

/// `None` when `n` is an integer Go's `strconv.ParseInt` reads within `min..=max`, else the
/// number as written (Go quotes the literal: `2.5`, `3.0`).
fn integer_text(n: &Number, min: i64, max: i64) -> Option<String> {
    match n.as_i64() {
        Some(i) if (min..=max).contains(&i) => None,
        _ => Some(n.to_string()),
    }
}

impl GoType {
    /// What a `null` list item or map value decodes to: the type's zero value as Go writes it.
    fn zero(&self) -> Value {
        match self {
            GoType::String | GoType::Time | GoType::MicroTime => Value::String(String::new()),
            GoType::Int32 | GoType::Int64 | GoType::Float64 | GoType::IntOrString => Value::from(0),
            GoType::Bool => Value::Bool(false),
            GoType::Struct(_) => Value::Object(Object::new()),
            GoType::Quantity => Value::String("0".into()),
            GoType::Bytes | GoType::Any | GoType::Slice(_) | GoType::Map(_) => Value::Null,
            GoType::Named(_, of) => of.zero(),
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::gotype::kind_struct;

    fn decode_as(kind: (&str, &str, &str), body: Value) -> (Result<Vec<String>, String>, Value) {
        let Value::Object(mut obj) = body else {
            panic!("not an object")
        };
        let name = kind_struct(kind.0, kind.1, kind.2).unwrap();
        let result = decode(name, &mut obj);
        (result, Value::Object(obj))
    }

    const DEPLOYMENT: (&str, &str, &str) = ("apps", "v1", "Deployment");
    const CONFIG_MAP: (&str, &str, &str) = ("", "v1", "ConfigMap");
    const SERVICE: (&str, &str, &str) = ("", "v1", "Service");

    #[test]
    fn a_wrong_type_names_the_innermost_struct_and_the_path_without_indices() {
        // The messages recorded from kube-apiserver 1.36 (fixtures/conformance/decoding).
        let (result, _) = decode_as(DEPLOYMENT, json!({"spec": {"replicas": "three"}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let (result, _) = decode_as(
            SERVICE,
            json!({"spec": {"ports": [{"port": 80}, {"port": "http"}]}}),
        );
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32"
        );
        let (result, _) = decode_as(CONFIG_MAP, json!({"data": {"k": 5}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        let (result, _) = decode_as(DEPLOYMENT, json!({"spec": {"template": "x"}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec"
        );
        let (result, _) = decode_as(SERVICE, json!({"spec": {"ports": "80"}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort"
        );
    }

    #[test]
    fn integers_must_be_written_as_integers_that_fit() {
        for (replicas, text) in [
            (json!(2.5), "2.5"),
            (json!(3.0), "3.0"),
            (json!(3_000_000_000_i64), "3000000000"),
        ] {
            let (result, _) = decode_as(DEPLOYMENT, json!({"spec": {"replicas": replicas}}));
            assert_eq!(
                result.unwrap_err(),
                format!(
                    "json: cannot unmarshal number {text} into Go struct field DeploymentSpec.spec.replicas of type int32"
                )
            );
        }
        let (result, _) = decode_as(
            DEPLOYMENT,
            json!({"spec": {"progressDeadlineSeconds": 600}}),
        );
        assert_eq!(result, Ok(vec![]));
    }

    #[test]
    fn int_or_string_takes_either_and_names_int32_otherwise() {
        for port in [json!(8080), json!("http")] {
            let (result, _) = decode_as(
                SERVICE,
                json!({"spec": {"ports": [{"port": 80, "targetPort": port}]}}),
            );
            assert_eq!(result, Ok(vec![]));
        }
        let (result, _) = decode_as(
            SERVICE,
            json!({"spec": {"ports": [{"port": 80, "targetPort": true}]}}),
        );
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32"
        );
    }

    #[test]
    fn unknown_fields_are_dropped_and_reported_with_list_indices() {
        let (result, object) = decode_as(
            DEPLOYMENT,
            json!({
                "colour": "blue",
                "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": [{"name": "a", "imag": "x"}]}}},
            }),
        );
        assert_eq!(
            result.unwrap(),
            ["colour", "spec.template.spec.containers[0].imag"]
        );
        assert_eq!(
            object,
            json!({
                "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": [{"name": "a"}]}}},
            })
        );
    }

    #[test]
    fn null_is_the_zero_value_in_a_map_and_left_for_storing_in_a_struct() {
        let (result, object) =
            decode_as(CONFIG_MAP, json!({"data": {"k": null}, "immutable": null}));
        assert_eq!(result, Ok(vec![]));
        assert_eq!(object, json!({"data": {"k": ""}, "immutable": null}));
    }

    #[test]
    fn bytes_are_base64_and_quantities_parse() {
        let secret = ("", "v1", "Secret");
        let (result, _) = decode_as(secret, json!({"data": {"k": "not base64!"}}));
        assert_eq!(result.unwrap_err(), "illegal base64 data at input byte 3");
        let (result, object) = decode_as(secret, json!({"data": {"k": "aGk=\n", "l": "aGl="}}));
        assert_eq!(result, Ok(vec![]));
        assert_eq!(object, json!({"data": {"k": "aGk=", "l": "aGk="}}));

        let resources = |cpu: Value| {
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "a", "resources": {"requests": {"cpu": cpu}}}
            ]}}}})
        };
        let (result, _) = decode_as(DEPLOYMENT, resources(json!("lots")));
        assert_eq!(result.unwrap_err(), quantity::FORMAT_WRONG);
        for (written, stored) in [
            (json!("250m"), "250m"),
            (json!(1), "1"),
            (json!(" 2Gi "), "2Gi"),
        ] {
            let (result, object) = decode_as(DEPLOYMENT, resources(written));
            assert_eq!(result, Ok(vec![]));
            assert_eq!(object, resources(json!(stored)));
        }
    }
}

#[cfg(test)]
mod deep_tests {
    use super::*;
    use crate::gotype::kind_struct;
    use crate::wire::nesting::deep_text::{nested_schema, read};

    /// A CRD whose spec schema nests `levels` objects of one property `a`, with `leaf` as the
    /// innermost schema: `JSONSchemaProps` holds its own type, so the Go types nest as deep.
    fn deep_crd(levels: usize, leaf: &str) -> Object {
        let schema = nested_schema(levels, leaf);
        let text = format!(
            r#"{{"spec":{{"group":"example.com","names":{{"plural":"deeps","kind":"Deep"}},"scope":"Namespaced","versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#
        );
        match read(&text) {
            Value::Object(obj) => obj,
            other => panic!("not an object: {other:?}"),
        }
    }

    /// Schema levels that make the CRD as deep as Go reads (10,000 levels).
    const DEEP: usize = 4_990;

    const CRD: (&str, &str, &str) = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition");

    // Go's decoder reads a CRD as deep as its 10,000 levels allow (recorded:
    // `deep/a-crd-schema-as-deep-as-go-reads`); so does this walk, on a test thread's stack.
    #[test]
    fn a_schema_as_deep_as_go_reads_decodes_on_a_small_stack() {
        let name = kind_struct(CRD.0, CRD.1, CRD.2).unwrap();
        let mut crd = deep_crd(DEEP, r#"{"type":"string","colour":"red"}"#);
        let unknown = decode(name, &mut crd).unwrap();
        let versions = "spec.versions[0].schema.openAPIV3Schema";
        assert_eq!(
            unknown,
            [format!("{versions}{}.colour", ".properties.a".repeat(DEEP))]
        );
        assert!(crd == deep_crd(DEEP, r#"{"type":"string"}"#));

        let mut crd = deep_crd(DEEP, r#"{"type":"string","maxLength":"one"}"#);
        assert_eq!(
            decode(name, &mut crd).unwrap_err(),
            format!(
                "json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema{}.maxLength of type int64",
                ".properties".repeat(DEEP)
            )
        );
    }
}
