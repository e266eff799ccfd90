//! CustomResourceDefinitions in the registry: what writing one does (defaults, validation, as the
//! CRD strategy does), the custom resource type a CRD serves, and its conditions. The
//! apiextensions controllers that act on them live in
//! [`controllers::apiextensions`](crate::controllers::apiextensions).

use std::sync::Arc;

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

use super::conversion_webhook::WebhookEndpoint;
use super::memo::Memo;
use super::resource::{
    DeleteBehavior, DiscoveryInfo, FieldLabels, FieldSchema, GcPolicy, GenerationRule,
    ResourceType, ServedVersion, Serving, StatusWrite, StorageVersion, TypeHooks, UnsupportedField,
};
use super::storage_hash::storage_version_hash;
use crate::apply::{Schema, ServedSchemas};
use crate::field::{BadValue, ErrorType, FieldError};
use crate::schema::{CelRules, CustomResourceSchema, structural};
use crate::table::custom::CustomColumns;
use crate::wire::object::{Object, meta_str, strings};

/// The finalizer the CRD registry adds on delete; the finalizer controller removes it once no
/// instance is left.
pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn spec(obj: &Object) -> Option<&Map> {
    obj.get("spec").and_then(Value::as_object)
}

fn spec_str<'a>(obj: &'a Object, path: &[&str]) -> &'a str {
    let mut v = obj.get("spec");
    for key in path {
        v = v.and_then(|x| x.get(*key));
    }
    v.and_then(Value::as_str).unwrap_or("")
}

fn versions(obj: &Object) -> Vec<&Map> {
    spec(obj)
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

fn storage_version(obj: &Object) -> Option<String> {
    let storage: Vec<&str> = versions(obj)
        .into_iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    match storage.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// `SetDefaults_CustomResourceDefinitionSpec`: singular and listKind from kind, conversion None
/// (applied as the object is decoded, before field management records who set what).
pub(crate) fn apply_defaults(obj: &mut Object) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    whole_bounds(spec);
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            names.insert("singular".into(), Value::String(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && !kind.is_empty()
        {
            names.insert("listKind".into(), Value::String(format!("{kind}List")));
        }
    }
    if !spec.contains_key("conversion") {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// `maximum`, `minimum` and `multipleOf` are Go `float64`s: a whole number is written back
/// without a fraction (`10.0`, as k8s-openapi's `f64` sends it, is stored as `10`). The JSON a
/// schema carries as is (`default`, `enum`, `example`) is kept as sent. Walked with a stack of
/// its own: a schema nests as deep as its sender likes.
fn whole_bounds(spec: &mut Object) {
    let mut stack: Vec<&mut Value> = spec.values_mut().collect();
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match key.as_str() {
                        "default" | "enum" | "example" => {}
                        "maximum" | "minimum" | "multipleOf" => {
                            if let Value::Number(n) = child
                                && let Some(f) = n
                                    .as_f64()
                                    .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15)
                            {
                                *n = recon_apimachinery::json::Number::from(f as i64);
                            }
                        }
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

/// CRD `PrepareForCreate`: a fresh status recording the storage version.
pub(crate) fn prepare_create(obj: &mut Object) {
    let stored: Value = storage_version(obj).map_or(Value::Null, |v| json!([v]));
    obj.insert(
        "status".into(),
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}),
    );
}

/// CRD `PrepareForUpdate`: the current storage version joins `status.storedVersions`.
pub(crate) fn prepare_update(new: &mut Object, _old: &Object) {
    let Some(version) = storage_version(new) else {
        return;
    };
    let status = new.entry("status").or_insert_with(|| json!({}));
    if let Some(status) = status.as_object_mut() {
        let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
        if let Some(list) = stored.as_array_mut()
            && !list.iter().any(|v| v == version.as_str())
        {
            list.push(Value::String(version));
        }
    }
}

/// The parts of `ValidateCustomResourceDefinition` that decide whether a CRD can be served; on
/// an update (`old`), a version whose schema is unchanged is not refused for the estimated
/// cost of a rule (`findVersionsWithUnchangedSchemas`), only for their total.
pub(crate) fn validate(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let (group, plural) = (
        spec_str(obj, &["group"]),
        spec_str(obj, &["names", "plural"]),
    );
    let name = meta_str(obj, "name");
    if name != format!("{plural}.{group}") {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errors.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        errors.push(FieldError::invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    let scope = spec_str(obj, &["scope"]);
    if scope.is_empty() {
        errors.push(FieldError::required("spec.scope", ""));
    } else if !matches!(scope, "Cluster" | "Namespaced") {
        errors.push(FieldError::not_supported(
            "spec.scope",
            scope,
            &["Cluster", "Namespaced"],
        ));
    }
    let list = versions(obj);
    let schemas: Vec<Option<&Value>> = list
        .iter()
        .map(|v| {
            v.get("schema")
                .and_then(|s| s.get("openAPIV3Schema"))
                .filter(|s| !s.is_null())
        })
        .collect();
    let shared = schemas.len() > 1 && schemas.windows(2).all(|w| w[0] == w[1]);
    for (i, schema) in schemas.iter().enumerate() {
        match schema {
            None => errors.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            )),
            // A schema all versions share is the internal version's `spec.validation`,
            // checked after the versions and names.
            Some(_) if shared || schemas.len() == 1 => {}
            Some(schema) => {
                let unchanged = unchanged_schema(old, list[i], schema);
                let path = structural::schema_path(&schemas, i);
                errors.extend(schema_errors(schema, &path, unchanged));
            }
        }
    }
    if storage_version(obj).is_none() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.versions",
            BadValue::Raw(internal_versions(&list)),
            "must have exactly one version marked as storage version",
        ));
    }
    for field in ["plural", "singular", "kind", "listKind"] {
        if spec_str(obj, &["names", field]).is_empty() {
            errors.push(FieldError::required(format!("spec.names.{field}"), ""));
        }
    }
    if let (true, Some(Some(schema))) = (shared || schemas.len() == 1, schemas.first()) {
        // The internal `spec.validation` is one schema; its per-expression costs are waived
        // when any version's is unchanged, as the real validator passes the first version's
        // name with it.
        let unchanged = list
            .first()
            .is_some_and(|v| unchanged_schema(old, v, schema));
        errors.extend(schema_errors(
            schema,
            &structural::schema_path(&schemas, 0),
            unchanged,
        ));
    }
    errors
}

/// Whether the stored CRD `old` has a version of the same name as `version` with the same
/// schema.
fn unchanged_schema(old: Option<&Object>, version: &Map, schema: &Value) -> bool {
    let Some(old) = old else {
        return false;
    };
    let name = version.get("name");
    versions(old).iter().any(|v| {
        v.get("name") == name
            && v.get("schema").and_then(|s| s.get("openAPIV3Schema")) == Some(schema)
    })
}

/// The errors of one version's schema, reported at `path`: not structural, or else rules that
/// do not compile (the real server compiles rules only in a schema it can build). Checked once
/// per distinct schema, path and cost waiver in a process: the rules are compiled to be checked,
/// on a thread of their own ([`CelRules::check_crd`]).
fn schema_errors(schema: &Value, path: &str, unchanged: bool) -> Vec<FieldError> {
    static CHECKED: Memo<(String, String, bool), Vec<FieldError>> = Memo::new();
    CHECKED.get_or_make((schema.to_string(), path.to_owned(), unchanged), || {
        let errors = structural::validate(schema, path);
        if !errors.is_empty() {
            return errors;
        }
        CelRules::check_crd(schema, path, unchanged)
    })
}

/// The versions as the validator prints them: Go's internal type, encoded without JSON tags.
fn internal_versions(list: &[&Map]) -> String {
    let entries: Vec<String> = list
        .iter()
        .map(|v| {
            let field = |k: &str| v.get(k).cloned().unwrap_or(Value::Null);
            json!({
                "Name": field("name"),
                "Served": v.get("served").cloned().unwrap_or(json!(false)),
                "Storage": v.get("storage").cloned().unwrap_or(json!(false)),
                "Deprecated": v.get("deprecated").cloned().unwrap_or(json!(false)),
                "DeprecationWarning": field("deprecationWarning"),
                "Schema": field("schema"),
                "Subresources": field("subresources"),
                "AdditionalPrinterColumns": field("additionalPrinterColumns"),
                "SelectableFields": field("selectableFields"),
            })
            .to_string()
        })
        .collect();
    format!("[{}]", entries.join(","))
}

/// Compiled types by the JSON of the CRD `spec` they were compiled from, shared by every server
/// of the process and every pass of the CRD controllers: a type depends on nothing else.
static COMPILED: Memo<String, Option<ResourceType>> = Memo::new();

/// The custom resource type a CRD serves, if it is valid: compiled once per distinct `spec`
/// (schemas, CEL rules, field-management schemas), then copied.
pub(crate) fn resource_type(obj: &Object) -> Option<ResourceType> {
    match obj.get("spec") {
        Some(spec) => COMPILED.get_or_make(spec.to_string(), || compile_resource_type(obj)),
        None => compile_resource_type(obj),
    }
}

/// [`resource_type`], compiled.
fn compile_resource_type(obj: &Object) -> Option<ResourceType> {
    let names = |k: &str| spec_str(obj, &["names", k]).to_owned();
    let list = versions(obj);
    let served: Vec<ServedVersion> = list
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| {
            Some(ServedVersion {
                name: v.get("name")?.as_str()?.to_owned(),
                status: v
                    .get("subresources")
                    .and_then(|s| s.get("status"))
                    .is_some_and(|s| !s.is_null()),
                schema: v
                    .get("schema")
                    .and_then(|s| s.get("openAPIV3Schema"))
                    .and_then(|s| Schema::from_openapi_v3(s).ok())
                    .map(|schema| FieldSchema::Converted(Arc::new(schema))),
                scale: v
                    .get("subresources")
                    .and_then(|s| s.get("scale"))
                    .is_some_and(|s| !s.is_null()),
                validation: v
                    .get("schema")
                    .and_then(|s| s.get("openAPIV3Schema"))
                    .filter(|s| s.is_object())
                    .map(|s| Arc::new(CustomResourceSchema::from_openapi_v3(s))),
                columns: Some(Arc::new(CustomColumns::of_version(v))),
            })
        })
        .collect();
    let selectable = list
        .iter()
        .flat_map(|v| {
            v.get("selectableFields")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| {
            let path = f
                .get("jsonPath")?
                .as_str()?
                .trim_start_matches('.')
                .to_owned();
            Some((path.clone(), path.split('.').map(str::to_owned).collect()))
        })
        .collect();
    if served.is_empty() || names("plural").is_empty() || names("kind").is_empty() {
        return None;
    }
    let group = spec_str(obj, &["group"]);
    let served_field_schemas: Vec<(String, Arc<Schema>)> = served
        .iter()
        .map(|v| {
            let schema = v
                .schema
                .as_ref()
                .map_or_else(|| Arc::new(Schema::untyped()), FieldSchema::get);
            (format!("{group}/{}", v.name), schema)
        })
        .collect();
    // Conversion matters only when another version is served besides the storage one.
    let storage = storage_version(obj)
        .filter(|v| served.iter().any(|s| &s.name != v))
        .map(|name| StorageVersion {
            schema: storage_schema_of(obj, &served, &name),
            name,
            webhook: conversion_webhook(obj),
        });
    // The discovery controller hashes the storage version only when it is served.
    let storage_version_hash = storage_version(obj)
        .filter(|v| served.iter().any(|s| &s.name == v))
        .map(|v| storage_version_hash(group, &v, &names("kind")));
    Some(ResourceType {
        group: group.to_owned(),
        versions: served,
        kind: names("kind"),
        list_kind: names("listKind"),
        plural: names("plural"),
        singular: names("singular"),
        namespaced: spec_str(obj, &["scope"]) == "Namespaced",
        custom: true,
        status_write: StatusWrite::OnlyStatus,
        generation: GenerationRule::AllButMetadata,
        unconditional_update: false,
        create_on_update: false,
        name_rule: NameRule::DnsSubdomain,
        delete_returns_object: false,
        gc: GcPolicy::DeleteDependents,
        delete: DeleteBehavior::Standard,
        field_labels: FieldLabels {
            extra: selectable,
            no_namespace: false,
            unsupported: UnsupportedField::NotSupported,
        },
        hooks: TypeHooks::default(),
        discovery: DiscoveryInfo {
            verbs: CUSTOM_RESOURCE_VERBS,
            short_names: name_list(obj, "shortNames"),
            categories: name_list(obj, "categories"),
            storage_version_hash,
            subresources: &[],
        },
        serving: Serving::Stored,
        internal_group: None,
        storage,
        field_versions: Some(Arc::new(ServedSchemas::new(served_field_schemas))),
    })
}

/// The webhook a CRD converts with (`conversion.strategy: Webhook`), as its `clientConfig`
/// names it; the handler is the one registered in-process, attached when the type is served.
fn conversion_webhook(obj: &Object) -> Option<WebhookEndpoint> {
    let conversion = obj.get("spec")?.get("conversion")?;
    if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
        return None;
    }
    let config = conversion
        .get("webhook")
        .and_then(|w| w.get("clientConfig"));
    let target = match config.and_then(|c| c.get("url")).and_then(Value::as_str) {
        Some(url) => url.to_owned(),
        None => {
            let service = config.and_then(|c| c.get("service"));
            let field = |k: &str| {
                service
                    .and_then(|s| s.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            };
            let port = service
                .and_then(|s| s.get("port"))
                .and_then(Value::as_i64)
                .unwrap_or(443);
            format!(
                "https://{}.{}.svc:{port}{}",
                field("name"),
                field("namespace"),
                field("path")
            )
        }
    };
    Some(WebhookEndpoint {
        target,
        handler: None,
    })
}

/// The schema of the CRD's storage version, which reads from storage decode with: the served
/// type's, or read from the CRD when the storage version is not served.
pub(crate) fn storage_schema(
    obj: &Object,
    served: &ResourceType,
) -> Option<Arc<CustomResourceSchema>> {
    storage_schema_of(obj, &served.versions, &storage_version(obj)?)
}

fn storage_schema_of(
    obj: &Object,
    served: &[ServedVersion],
    storage: &str,
) -> Option<Arc<CustomResourceSchema>> {
    if let Some(v) = served.iter().find(|v| v.name == storage) {
        return v.validation.clone();
    }
    versions(obj)
        .into_iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(storage))?
        .get("schema")?
        .get("openAPIV3Schema")
        .filter(|s| s.is_object())
        .map(|s| Arc::new(CustomResourceSchema::from_openapi_v3(s)))
}

/// The verbs the discovery controller lists for a custom resource, in its order.
const CUSTOM_RESOURCE_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// `spec.names.shortNames` or `spec.names.categories` (the discovery controller reads them from
/// `status.acceptedNames`, equal to these once the CRD is established).
fn name_list(obj: &Object, field: &str) -> Vec<String> {
    strings(
        spec(obj)
            .and_then(|s| s.get("names"))
            .and_then(|n| n.get(field)),
    )
}

/// The condition of type `kind` in `obj`'s `status.conditions`, if it has one.
pub(crate) fn condition<'a>(obj: &'a Object, kind: &str) -> Option<&'a Map> {
    obj.get("status")?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?
        .as_object()
}

/// Whether `obj` has a condition of type `kind` equivalent to the one given
/// (`IsCRDConditionEquivalent`: the same status, reason and message, whatever its time).
pub(crate) fn condition_equivalent(
    obj: &Object,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> bool {
    condition(obj, kind).is_some_and(|c| {
        let field = |name: &str| c.get(name).and_then(Value::as_str).unwrap_or_default();
        field("status") == status && field("reason") == reason && field("message") == message
    })
}

/// Whether [`set_condition`] with these would leave `obj` as it is: its condition of type
/// `kind` has the same status, reason and message, a `lastTransitionTime`, and nothing else.
pub(crate) fn condition_kept(
    obj: &Object,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> bool {
    condition(obj, kind).is_some_and(|c| {
        let is = |field: &str, want: &str| c.get(field).and_then(Value::as_str) == Some(want);
        c.len() == 5
            && c.contains_key("lastTransitionTime")
            && is("status", status)
            && is("reason", reason)
            && is("message", message)
    })
}

/// Sets a CRD condition the way `SetCRDCondition` does: `lastTransitionTime` moves only when
/// the status changes.
pub(crate) fn set_condition(
    obj: &mut Object,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &Value,
) {
    let st = obj.entry("status").or_insert_with(|| json!({}));
    let Some(st) = st.as_object_mut() else { return };
    let conditions = st.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let new = |time: Value| json!({"type": kind, "status": status, "lastTransitionTime": time, "reason": reason, "message": message});
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
    {
        Some(existing) => {
            let time = if existing.get("status").and_then(Value::as_str) == Some(status) {
                existing
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or_else(|| now.clone())
            } else {
                now.clone()
            };
            *existing = new(time);
        }
        None => list.push(new(now.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `condition_kept` says yes exactly where `set_condition` leaves the object as it is.
    #[test]
    fn a_condition_is_kept_only_where_setting_it_changes_nothing() {
        let now = json!("2026-12-03T00:00:00Z");
        let with = |condition: Value| {
            let Value::Object(obj) = json!({"status": {"conditions": [condition]}}) else {
                unreachable!("an object literal")
            };
            obj
        };
        let same = json!({"type": "Available", "status": "True", "lastTransitionTime": "t",
            "reason": "Local", "message": "m"});
        let cases = [
            (same.clone(), true),
            (
                json!({"type": "Available", "status": "True", "lastTransitionTime": "t", "reason": "Local", "message": "other"}),
                false,
            ),
            (
                json!({"type": "Available", "status": "False", "lastTransitionTime": "t", "reason": "Local", "message": "m"}),
                false,
            ),
            (
                json!({"type": "Available", "status": "True", "reason": "Local", "message": "m"}),
                false,
            ),
            (
                json!({"type": "Available", "status": "True", "lastTransitionTime": "t", "reason": "Local", "message": "m", "extra": 1}),
                false,
            ),
            (
                json!({"type": "Other", "status": "True", "lastTransitionTime": "t", "reason": "Local", "message": "m"}),
                false,
            ),
        ];
        for (condition, kept) in cases {
            let obj = with(condition.clone());
            assert_eq!(
                condition_kept(&obj, "Available", "True", "Local", "m"),
                kept,
                "{condition}"
            );
            let mut set = obj.clone();
            set_condition(&mut set, "Available", "True", "Local", "m", &now);
            assert_eq!(set == obj, kept, "{condition}");
        }
    }

    fn crd(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    fn widget_crd() -> Object {
        crd(json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}, "subresources": {"status": {}}}]}
        }))
    }

    #[test]
    fn defaults_fill_singular_list_kind_and_conversion() {
        let mut obj = widget_crd();
        apply_defaults(&mut obj);
        prepare_create(&mut obj);
        assert_eq!(obj["spec"]["names"]["singular"], "widget");
        assert_eq!(obj["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(obj["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(obj["status"]["storedVersions"], json!(["v1"]));
        assert!(validate(&obj, None).is_empty());
    }

    #[test]
    fn the_name_must_be_plural_dot_group() {
        let mut obj = widget_crd();
        obj["metadata"]["name"] = json!("wrong.example.com");
        apply_defaults(&mut obj);
        prepare_create(&mut obj);
        assert_eq!(
            crate::field::aggregate(&validate(&obj, None)),
            r#"metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group"#
        );
    }

    /// `findVersionsWithUnchangedSchemas`: a CRD stored with a rule over the per-expression
    /// budget (here about 1.6 times it, under the limit of all rules together) can still be
    /// updated while that version's schema stays as it is; a changed schema is checked in
    /// full.
    #[test]
    fn a_rule_over_budget_is_waived_only_while_its_schema_is_unchanged() {
        let mut old = widget_crd();
        apply_defaults(&mut old);
        prepare_create(&mut old);
        old["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object",
            "properties": {"spec": {"type": "object",
                "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
                "x-kubernetes-validations": [{"rule": "self.l.all(x, x > 0) && self.l.all(x, x < 9)"}]}}});
        let over_budget = "estimated rule cost exceeds budget by factor of";
        let created = crate::field::aggregate(&validate(&old, None));
        assert!(created.contains(over_budget), "{created}");

        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"team": "a"});
        assert!(validate(&relabelled, Some(&old)).is_empty());

        let mut changed = old.clone();
        changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"]
            [0]["rule"] = json!("self.l.all(x, x > 1) && self.l.all(x, x < 8)");
        let updated = crate::field::aggregate(&validate(&changed, Some(&old)));
        assert!(updated.contains(over_budget), "{updated}");
    }

    #[test]
    fn the_served_type_follows_the_spec() {
        let mut obj = widget_crd();
        apply_defaults(&mut obj);
        prepare_create(&mut obj);
        let t = resource_type(&obj).unwrap();
        assert_eq!(
            (t.plural.as_str(), t.kind.as_str(), t.namespaced),
            ("widgets", "Widget", true)
        );
        assert!(t.has_status("v1"));
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let mut obj = crd(json!({}));
        set_condition(&mut obj, "Established", "True", "A", "a", &json!("t1"));
        set_condition(&mut obj, "Established", "True", "B", "b", &json!("t2"));
        assert_eq!(obj["status"]["conditions"][0]["lastTransitionTime"], "t1");
        assert_eq!(obj["status"]["conditions"][0]["reason"], "B");
    }
}
