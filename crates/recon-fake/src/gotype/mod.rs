//! The Go types of the built-in kinds, as kube-apiserver's JSON decoder sees them: which fields
//! each struct has and the Go type of each (`int32`, `string`, `[]v1.Container`,
//! `map[string]string`, `intstr.IntOrString`, ...). Read from the OpenAPI v3 schemas recorded
//! from a real kube-apiserver (`data/openapi.json`, written by `cargo xtask openapi`).
//!
//! The order of each struct's fields, which the OpenAPI does not keep, is read from the Go
//! sources (`data/go-field-order.json`, written by `xtask/record-go-field-order.py`): the JSON
//! encoder writes fields in that order ([`encode`]).
//!
//! The OpenAPI names structs but not Go's named scalar, slice and map types: a field of
//! `type Protocol string` is a `string` here, so a decoding error names `string` where Go names
//! `v1.Protocol` (but for the fields of [`NAMED_TYPES`]). The JSON types accepted are the same.

mod base64;
mod decode;
pub(crate) mod encode;
pub(crate) mod internal;
pub(crate) mod proto_size;
pub(crate) mod quantity;
mod unstructured;
mod zero_fields;

use foldhash::HashMap;
use std::sync::LazyLock;

use recon_apimachinery::json::Value;

pub(crate) use decode::decode;
pub(crate) use encode::{child_type, escape_html, write_map, write_value};
pub(crate) use unstructured::from_unstructured;
pub(crate) use zero_fields::{
    drop_unset_fields, drop_unset_fields_of, fill_zero_fields, fill_zero_fields_of,
};

/// The recorded schemas, `{"kubernetes": "<version>", "schemas": {<name>: <schema>}}`.
const OPENAPI: &str = include_str!("../../data/openapi.json");

/// Per struct schema name, its JSON field names in Go declaration order,
/// `{"structs": {<name>: [<field>, ...]}}`.
const FIELD_ORDER: &str = include_str!("../../data/go-field-order.json");

static TYPES: LazyLock<GoTypes> = LazyLock::new(|| {
    let mut types = GoTypes::from_openapi(OPENAPI);
    types.order_fields(FIELD_ORDER);
    types
});

/// The Go type of a field, a list item or a map value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GoType {
    Int32,
    Int64,
    Float64,
    String,
    /// `[]byte`: base64 in JSON.
    Bytes,
    Bool,
    /// `intstr.IntOrString`: a string, or what an `int32` takes.
    IntOrString,
    /// `resource.Quantity`: a string or a number, in the quantity syntax.
    Quantity,
    /// `metav1.Time`: decoded through a `string` read as RFC 3339, stored in UTC, whole seconds.
    Time,
    /// `metav1.MicroTime`: the same with exactly six fractional digits.
    MicroTime,
    /// Anything: `runtime.RawExtension`, `metav1.FieldsV1`, schemaless objects.
    Any,
    Slice(Box<GoType>),
    Map(Box<GoType>),
    /// A struct, by schema name.
    Struct(String),
    /// A named type (`type DeletionPropagation string`), decoded as what it is: Go's errors
    /// name it, the OpenAPI does not ([`NAMED_TYPES`]).
    Named(&'static str, Box<GoType>),
}

impl GoType {
    /// The type a named type is, or the type itself.
    pub(crate) fn underlying(&self) -> &GoType {
        match self {
            GoType::Named(_, of) => of.underlying(),
            other => other,
        }
    }
}

/// Fields whose Go type is a named one, as `(struct schema, field, type as reflect prints it)`.
/// Only the option structs' here: the built-in kinds still name the underlying type (see the
/// module documentation).
const NAMED_TYPES: &[(&str, &str, &str)] = &[
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "propagationPolicy",
        "v1.DeletionPropagation",
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
        "uid",
        "types.UID",
    ),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "v1.Protocol"),
    (
        "io.k8s.api.core.v1.ContainerPort",
        "protocol",
        "v1.Protocol",
    ),
];

/// One Go struct: its name as Go prints it and its fields by JSON name.
#[derive(Debug)]
pub(crate) struct GoStruct {
    /// `DeploymentSpec`: what an error's "Go struct field" names.
    pub(crate) name: String,
    /// `v1.DeploymentSpec`: the type as `reflect` prints it.
    pub(crate) qualified: String,
    /// Looked up by name for every member of every object written, read or defaulted: hashed.
    pub(crate) fields: HashMap<String, GoType>,
    /// The field names in declaration order: the order Go's encoder writes them in. Sorted
    /// where the recorded order lacks the struct.
    pub(crate) order: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct GoTypes {
    /// The recorded schemas themselves, by name (field management reads their list and map
    /// rules).
    schemas: recon_apimachinery::json::Map,
    structs: HashMap<String, GoStruct>,
    /// Kind to `(group, version, schema name of its top-level struct)`: looked up on every
    /// write of a built-in, without allocating.
    kinds: HashMap<String, Vec<(String, String, String)>>,
}

impl GoTypes {
    /// The types of `openapi`; none if it does not read (a test checks the recorded file does).
    fn from_openapi(openapi: &str) -> GoTypes {
        let Ok(Value::Object(mut document)) = serde_json::from_str::<Value>(openapi) else {
            return GoTypes::default();
        };
        let Some(Value::Object(schemas)) = document.remove("schemas") else {
            return GoTypes::default();
        };
        let mut types = GoTypes::default();
        for (name, schema) in &schemas {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                continue;
            };
            let mut fields: HashMap<String, GoType> = properties
                .iter()
                .map(|(field, s)| (field.clone(), go_type(s, &schemas)))
                .collect();
            for (_, field, go_name) in NAMED_TYPES.iter().filter(|(s, _, _)| s == name) {
                if let Some(ty) = fields.get_mut(*field) {
                    *ty = GoType::Named(go_name, Box::new(ty.clone()));
                }
            }
            let short = name.rsplit('.').next().unwrap_or(name).to_owned();
            types.structs.insert(
                name.clone(),
                GoStruct {
                    qualified: format!("{}.{short}", package(name)),
                    name: short,
                    order: properties.keys().cloned().collect(),
                    fields,
                },
            );
            for gvk in schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let part = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                types.kinds.entry(part("kind")).or_default().push((
                    part("group"),
                    part("version"),
                    name.clone(),
                ));
            }
        }
        types.schemas = schemas;
        types
    }

    /// Takes each struct's field order from `document`; a struct whose recorded order names
    /// other fields than its schema keeps the sorted order (a test checks none does).
    fn order_fields(&mut self, document: &str) {
        let Ok(Value::Object(mut document)) = serde_json::from_str::<Value>(document) else {
            return;
        };
        let Some(Value::Object(orders)) = document.remove("structs") else {
            return;
        };
        for (name, order) in orders {
            let (Some(go_struct), Ok(order)) = (
                self.structs.get_mut(&name),
                recon_apimachinery::json::from_value::<Vec<String>>(order),
            ) else {
                continue;
            };
            let mut sorted = order.clone();
            sorted.sort();
            if sorted == go_struct.order {
                go_struct.order = order;
            }
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&GoStruct> {
        self.structs.get(name)
    }
}

/// The struct of kind `kind` in `group` / `version`, if the recorded schemas have it.
pub(crate) fn kind_struct(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    TYPES
        .kinds
        .get(kind)?
        .iter()
        .find(|(g, v, _)| g == group && v == version)
        .map(|(_, _, name)| name.as_str())
}

/// The struct of a `group` `kind` object as the server keeps it: its type at the group's
/// preferred version when the recording has several (autoscaling's `HorizontalPodAutoscaler`
/// at v2, not v1).
pub(crate) fn stored_struct(group: &str, kind: &str) -> Option<&'static str> {
    TYPES
        .kinds
        .get(kind)?
        .iter()
        .filter(|(g, _, _)| g == group)
        .min_by(|(_, a, _), (_, b, _)| crate::handlers::discovery::version_order::compare(a, b))
        .map(|(_, _, name)| name.as_str())
}

/// Whether `kind` at `api_version` is a Go type kube-apiserver encodes (a built-in kind, or
/// `PartialObjectMetadata`), rather than an unstructured custom resource.
pub(crate) fn is_go_type(api_version: &str, kind: &str) -> bool {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    (group == "meta.k8s.io" && kind == "PartialObjectMetadata")
        || kind_struct(group, version, kind).is_some()
}

/// The recorded struct of `obj` when its `apiVersion` and `kind` name a built-in kind.
pub(crate) fn builtin_struct(obj: &recon_apimachinery::json::Map) -> Option<&'static str> {
    let text = |key: &str| obj.get(key).and_then(Value::as_str);
    let (api_version, kind) = (text("apiVersion")?, text("kind")?);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    kind_struct(group, version, kind)
}

/// `obj`, of the recorded struct `name`, as Go's encoder writes it, without the top-level keys
/// of `skip`.
pub(crate) fn encode_struct(
    name: &str,
    obj: &recon_apimachinery::json::Map,
    skip: &[&str],
) -> Vec<u8> {
    let mut out = String::with_capacity(256);
    write_struct(name, obj, skip, &mut out);
    out.into_bytes()
}

/// [`encode_struct`] into `out`.
pub(crate) fn write_struct(
    name: &str,
    obj: &recon_apimachinery::json::Map,
    skip: &[&str],
    out: &mut String,
) {
    write_map(Some(&GoType::Struct(name.to_owned())), obj, skip, out);
}

/// The recorded OpenAPI schema named `name` (`io.k8s.api.apps.v1.DeploymentSpec`).
pub(crate) fn recorded_schema(name: &str) -> Option<&'static Value> {
    TYPES.schemas.get(name)
}

/// `io.k8s.api.core.v1.PodSpec` is in Go package `v1`.
fn package(schema_name: &str) -> &str {
    let mut parts = schema_name.rsplit('.');
    parts.next();
    parts.next().unwrap_or("")
}

/// The Go type a property schema describes.
fn go_type(schema: &Value, schemas: &recon_apimachinery::json::Map) -> GoType {
    let reference = schema.get("$ref").or_else(|| {
        schema
            .get("allOf")
            .and_then(Value::as_array)
            .and_then(|all| all.first())
            .and_then(|first| first.get("$ref"))
    });
    if let Some(name) = reference
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        return match name {
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => GoType::IntOrString,
            "io.k8s.apimachinery.pkg.api.resource.Quantity" => GoType::Quantity,
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => GoType::Time,
            "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => GoType::MicroTime,
            _ => match schemas.get(name) {
                Some(target) if target.get("properties").is_some() => {
                    GoType::Struct(name.to_owned())
                }
                Some(target) => go_type(target, schemas),
                None => GoType::Any,
            },
        };
    }
    let format = schema.get("format").and_then(Value::as_str);
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") if format == Some("int32") => GoType::Int32,
        Some("integer") => GoType::Int64,
        Some("number") => GoType::Float64,
        Some("string") if format == Some("byte") => GoType::Bytes,
        Some("string") => GoType::String,
        Some("boolean") => GoType::Bool,
        Some("array") => match schema.get("items") {
            Some(items) => GoType::Slice(Box::new(go_type(items, schemas))),
            None => GoType::Any,
        },
        Some("object") => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => GoType::Map(Box::new(go_type(values, schemas))),
            _ => GoType::Any,
        },
        _ => GoType::Any,
    }
}

impl GoType {
    /// The type as Go's `reflect` prints it in an `UnmarshalTypeError`. An `IntOrString` that
    /// is not a string is decoded as its `int32`, so that is the type named.
    pub(crate) fn go_name(&self) -> String {
        match self {
            GoType::Int32 | GoType::IntOrString => "int32".into(),
            GoType::Int64 => "int64".into(),
            GoType::Float64 => "float64".into(),
            GoType::String | GoType::Time | GoType::MicroTime => "string".into(),
            GoType::Bytes => "[]uint8".into(),
            GoType::Bool => "bool".into(),
            GoType::Quantity => "resource.Quantity".into(),
            GoType::Any => "interface {}".into(),
            GoType::Slice(item) => format!("[]{}", item.go_name()),
            GoType::Map(value) => format!("map[string]{}", value.go_name()),
            GoType::Struct(name) => TYPES
                .get(name)
                .map_or_else(|| name.clone(), |s| s.qualified.clone()),
            GoType::Named(name, _) => (*name).to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_schemas_read_and_name_every_served_builtin_kind() {
        let types = &*TYPES;
        assert!(types.structs.len() > 300, "{}", types.structs.len());
        for (group, version, kind) in [
            ("", "v1", "ConfigMap"),
            ("", "v1", "Service"),
            ("apps", "v1", "Deployment"),
            ("batch", "v1", "CronJob"),
            ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
            ("autoscaling", "v2", "HorizontalPodAutoscaler"),
        ] {
            assert!(kind_struct(group, version, kind).is_some(), "{kind}");
        }
    }

    #[test]
    fn fields_have_the_go_types_of_their_schemas() {
        let spec = TYPES.get("io.k8s.api.apps.v1.DeploymentSpec").unwrap();
        assert_eq!(spec.name, "DeploymentSpec");
        assert_eq!(spec.qualified, "v1.DeploymentSpec");
        assert_eq!(spec.fields["replicas"], GoType::Int32);
        assert_eq!(spec.fields["template"].go_name(), "v1.PodTemplateSpec");
        let pod = TYPES.get("io.k8s.api.core.v1.PodSpec").unwrap();
        assert_eq!(pod.fields["containers"].go_name(), "[]v1.Container");
        assert_eq!(pod.fields["nodeSelector"].go_name(), "map[string]string");
        let port = TYPES.get("io.k8s.api.core.v1.ServicePort").unwrap();
        assert_eq!(port.fields["targetPort"], GoType::IntOrString);
        let secret = TYPES.get("io.k8s.api.core.v1.Secret").unwrap();
        assert_eq!(secret.fields["data"].go_name(), "map[string][]uint8");
        let meta = TYPES
            .get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
            .unwrap();
        assert_eq!(meta.fields["creationTimestamp"], GoType::Time);
        assert_eq!(meta.qualified, "v1.ObjectMeta");
    }

    #[test]
    fn every_struct_has_its_go_field_order() {
        let meta = TYPES
            .get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
            .unwrap();
        assert_eq!(meta.order[..3], ["name", "generateName", "namespace"]);
        let config_map = TYPES.get("io.k8s.api.core.v1.ConfigMap").unwrap();
        assert_eq!(
            config_map.order,
            [
                "kind",
                "apiVersion",
                "metadata",
                "immutable",
                "data",
                "binaryData"
            ]
        );
        let recorded: Value = serde_json::from_str(FIELD_ORDER).unwrap();
        for (name, go_struct) in &TYPES.structs {
            assert_eq!(
                recorded["structs"].get(name),
                Some(&recon_apimachinery::json!(go_struct.order)),
                "{name}: no recorded field order, or one naming other fields"
            );
        }
    }

    #[test]
    fn a_document_that_does_not_read_gives_no_types_rather_than_a_panic() {
        assert!(GoTypes::from_openapi("{").structs.is_empty());
        assert!(GoTypes::from_openapi("[]").kinds.is_empty());
    }
}
