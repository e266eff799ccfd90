//! Schemas of the built-in kinds for field management, from the OpenAPI recorded from a real
//! kube-apiserver (`data/openapi.json`), converted as the apiserver converts its own OpenAPI
//! for structured-merge-diff: `x-kubernetes-list-type` and `-list-map-keys` (else a patch
//! strategy `merge` with its merge key), `x-kubernetes-map-type`, the defaults of list-map
//! keys, `IntOrString` / `Quantity` as untyped scalars and `RawExtension` as atomic. A kind the
//! recording lacks is typed as [`Type::Object`]: granular structs, atomic lists.

use std::collections::BTreeMap;

use recon_apimachinery::json::Value;

use super::schema::{ListKind, ListType, MapType, OBJECT_MAP, Scalar, Schema, Type, object_meta};
use crate::gotype;

/// Deeper than any built-in type nests; past it a schema is untyped.
const MAX_DEPTH: usize = 32;

const REF_PREFIX: &str = "#/components/schemas/";

impl Schema {
    /// The schema of a built-in kind at `api_version` (`apps/v1`), `metadata` as ObjectMeta.
    pub fn builtin(api_version: &str, kind: &str) -> Schema {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let mut root =
            match gotype::kind_struct(group, version, kind).and_then(gotype::recorded_schema) {
                Some(schema) => match convert(schema, 0, &mut Vec::new()) {
                    Type::Map(m) => *m,
                    _ => OBJECT_MAP.clone(),
                },
                None => OBJECT_MAP.clone(),
            };
        root.fields.insert("metadata".into(), object_meta());
        root.fields
            .insert("apiVersion".into(), Type::Scalar(Scalar::String));
        root.fields
            .insert("kind".into(), Type::Scalar(Scalar::String));
        Schema {
            root: Type::Map(Box::new(root)),
        }
    }
}

/// The schema a `$ref` (bare or as the only `allOf`) names.
fn reference(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .or_else(|| schema.get("allOf")?.as_array()?.first()?.get("$ref"))?
        .as_str()?
        .strip_prefix(REF_PREFIX)
}

/// `schema` as a field-management type; `expanding` holds the named schemas being converted
/// around it: a type that contains itself (a CRD's `JSONSchemaProps`) is untyped where it
/// recurs, or its expansion would never end.
fn convert(schema: &Value, depth: usize, expanding: &mut Vec<String>) -> Type {
    if depth > MAX_DEPTH {
        return Type::Deduced;
    }
    if let Some(name) = reference(schema) {
        return match name {
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
            | "io.k8s.apimachinery.pkg.api.resource.Quantity" => Type::Scalar(Scalar::Untyped),
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" => object_meta(),
            // Owned whole, though its schema is a free-form object: kube-apiserver 1.36 writes
            // a ControllerRevision's `data` as `f:data: {}` (`patch/strategic-merge-into-a-
            // raw-extension`, `deep/a-controller-revision-as-deep-as-go-reads`).
            "io.k8s.apimachinery.pkg.runtime.RawExtension" => Type::Atomic,
            _ if expanding.iter().any(|n| n == name) => Type::Deduced,
            _ => match gotype::recorded_schema(name) {
                Some(target) => {
                    expanding.push(name.to_owned());
                    let converted = convert(target, depth + 1, expanding);
                    expanding.pop();
                    with_map_type(converted, schema)
                }
                None => Type::Deduced,
            },
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer" | "number") => Type::Scalar(Scalar::Numeric),
        Some("string") => Type::Scalar(Scalar::String),
        Some("boolean") => Type::Scalar(Scalar::Boolean),
        Some("array") => Type::List(Box::new(list(schema, depth, expanding))),
        Some("object") => match (schema.get("properties"), schema.get("additionalProperties")) {
            (Some(Value::Object(properties)), _) => {
                let fields = properties
                    .iter()
                    .map(|(name, field)| (name.clone(), convert(field, depth + 1, expanding)))
                    .collect();
                with_map_type(
                    Type::Map(Box::new(MapType {
                        fields,
                        // Built-in objects reach field management decoded into their Go
                        // type, which has no other fields.
                        elem: None,
                        atomic: false,
                        defaults: BTreeMap::new(),
                        open_struct: true,
                    })),
                    schema,
                )
            }
            (_, Some(values @ Value::Object(_))) => with_map_type(
                Type::Map(Box::new(MapType {
                    fields: BTreeMap::new(),
                    elem: Some(convert(values, depth + 1, expanding)),
                    atomic: false,
                    defaults: BTreeMap::new(),
                    open_struct: false,
                })),
                schema,
            ),
            _ => Type::Deduced,
        },
        _ => Type::Deduced,
    }
}

/// `x-kubernetes-map-type: atomic` on a field (or its struct) makes its map atomic.
fn with_map_type(t: Type, schema: &Value) -> Type {
    match (
        t,
        schema.get("x-kubernetes-map-type").and_then(Value::as_str),
    ) {
        (Type::Map(mut m), Some("atomic")) => {
            m.atomic = true;
            Type::Map(m)
        }
        (t, _) => t,
    }
}

fn list(schema: &Value, depth: usize, expanding: &mut Vec<String>) -> ListType {
    let mut elem = schema
        .get("items")
        .map_or(Type::Deduced, |items| convert(items, depth + 1, expanding));
    let text = |key: &str| schema.get(key).and_then(Value::as_str);
    let keys: Vec<String> = match schema.get("x-kubernetes-list-map-keys") {
        Some(Value::Array(keys)) => keys
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let merge_key = text("x-kubernetes-patch-merge-key");
    let merges = text("x-kubernetes-patch-strategy").is_some_and(|s| s.contains("merge"));
    let kind = match text("x-kubernetes-list-type") {
        Some("set") => ListKind::Set,
        Some("map") if !keys.is_empty() => ListKind::Map(keys),
        Some(_) => ListKind::Atomic,
        // No list type: the patch strategy decides, as in the apiserver's conversion.
        None => match (merges, merge_key) {
            (true, Some(key)) => ListKind::Map(vec![key.to_owned()]),
            (true, None) if matches!(elem, Type::Scalar(_)) => ListKind::Set,
            _ => ListKind::Atomic,
        },
    };
    if let (ListKind::Map(keys), Some(name)) = (&kind, items_reference(schema)) {
        key_defaults(&mut elem, keys, name);
    }
    ListType { elem, kind }
}

fn items_reference(schema: &Value) -> Option<&str> {
    reference(schema.get("items")?)
}

/// The defaults the item schema gives its key fields (`protocol: TCP` of a port):
/// structured-merge-diff fills them in before comparing keys.
fn key_defaults(elem: &mut Type, keys: &[String], item_schema: &str) {
    let (Type::Map(item), Some(properties)) = (
        elem,
        gotype::recorded_schema(item_schema).and_then(|s| s.get("properties")),
    ) else {
        return;
    };
    for key in keys {
        if let Some(default) = properties.get(key).and_then(|p| p.get("default")) {
            item.defaults.insert(key.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn at<'a>(t: &'a Type, path: &[&str]) -> &'a Type {
        let mut t = t;
        for step in path {
            t = match (t, step.strip_suffix("[]")) {
                (Type::Map(m), None) => m.fields.get(*step).unwrap(),
                (Type::Map(m), Some(n)) => match m.fields.get(n).unwrap() {
                    Type::List(l) => &l.elem,
                    other => panic!("{other:?}"),
                },
                (other, _) => panic!("{other:?} at {step}"),
            };
        }
        t
    }

    fn list_kind<'a>(t: &'a Type, path: &[&str]) -> &'a ListKind {
        match at(t, path) {
            Type::List(l) => &l.kind,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deployment_lists_and_maps_follow_the_recorded_openapi() {
        let s = Schema::builtin("apps/v1", "Deployment");
        let pod = ["spec", "template", "spec"];
        let with = |rest: &[&'static str]| -> Vec<&'static str> {
            pod.iter().chain(rest).copied().collect()
        };
        assert_eq!(
            list_kind(&s.root, &with(&["containers"])),
            &ListKind::Map(vec!["name".into()])
        );
        assert_eq!(
            list_kind(&s.root, &with(&["containers[]", "ports"])),
            &ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
        let Type::Map(port) = at(&s.root, &with(&["containers[]", "ports[]"])) else {
            panic!()
        };
        assert_eq!(port.defaults.get("protocol"), Some(&json!("TCP")));
        assert_eq!(
            at(
                &s.root,
                &with(&["containers[]", "ports[]", "containerPort"])
            ),
            &Type::Scalar(Scalar::Numeric)
        );
        assert!(matches!(at(&s.root, &["spec", "selector"]), Type::Map(m) if m.atomic));
        assert_eq!(
            list_kind(&s.root, &["status", "conditions"]),
            &ListKind::Map(vec!["type".into()])
        );
        assert_eq!(
            list_kind(&s.root, &["spec", "template", "metadata", "finalizers"]),
            &ListKind::Set
        );
        assert_eq!(
            at(&s.root, &with(&["containers[]", "resources", "limits"])),
            &Type::Map(Box::new(MapType {
                fields: BTreeMap::new(),
                elem: Some(Type::Scalar(Scalar::Untyped)),
                atomic: false,
                defaults: BTreeMap::new(),
                open_struct: false,
            }))
        );
    }

    #[test]
    fn atomic_structs_of_other_kinds() {
        let binding = Schema::builtin("rbac.authorization.k8s.io/v1", "RoleBinding");
        assert!(matches!(at(&binding.root, &["roleRef"]), Type::Map(m) if m.atomic));
        let budget = Schema::builtin("policy/v1", "PodDisruptionBudget");
        assert!(matches!(at(&budget.root, &["spec", "selector"]), Type::Map(m) if m.atomic));
        let service = Schema::builtin("v1", "Service");
        assert_eq!(
            list_kind(&service.root, &["spec", "ports"]),
            &ListKind::Map(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(
            at(&service.root, &["spec", "ports[]", "targetPort"]),
            &Type::Scalar(Scalar::Untyped)
        );
    }

    #[test]
    fn a_kind_without_a_recorded_schema_is_struct_like() {
        let s = Schema::builtin("apiextensions.k8s.io/v1", "CustomResourceDefinition");
        let Type::Map(root) = &s.root else { panic!() };
        assert!(root.open_struct);
        assert!(root.fields.contains_key("metadata"));
    }
}
