//! The `/scale` subresource: an `autoscaling/v1` `Scale` made of a Deployment's, ReplicaSet's,
//! StatefulSet's or ReplicationController's replicas and selector, or of a custom resource's at
//! the paths its CRD declares (`ScaleREST` of `pkg/registry/apps/*/storage/storage.go`,
//! `pkg/registry/core/replicationcontroller/storage/storage.go` and the apiextensions-apiserver's
//! `pkg/registry/customresource/etcd.go`).
//!
//! A read builds the Scale from the stored parent. A write builds the current Scale, lets the
//! request change it (a PUT replaces it, a patch patches it), checks it, then writes its
//! `spec.replicas` into the parent through the ordinary update path, with the Scale's
//! `resourceVersion` (when it has one) as the parent's: the parent's validation, generation,
//! managedFields (an entry for the `scale` subresource) and watch events follow from that.

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

use super::decode::{check_name, check_write_options, ensure_namespace};
use super::field_manager::{FieldManager, apply_error};
use super::field_validation::FieldValidation;
use super::patch::{
    PatchType, apply_json_patch, apply_merge_patch, check_patch_options, decode_apply_body,
    patch_type, patched_object_invalid, strategic_error,
};
use super::update::UpdateRequest;
use crate::apply::{ApplyError, Conflict, ManagerId, Operation, Path};
use crate::field::{BadValue, ErrorType, FieldError};
use crate::registry::resource::ResourceType;
use crate::request::call::Call;
use crate::request::negotiate::{Format, negotiate};
use crate::request::reply::Reply;
use crate::request::route::Verb;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::strategic;
use crate::table::custom::CustomColumns;
use crate::table::{IncludeObject, Item, ListMeta, TableRequest};
use crate::wire::error::ApiError;
use crate::wire::group::{GroupKind, GroupResource};
use crate::wire::object::{
    DecodeContext, Object, json_type, meta_str, meta_value, not_an_object, read_json, set_meta,
};

/// `invalidSpecReplicas` of the custom resource `ScaleREST`: a parent without replicas.
const NO_REPLICAS: i64 = i32::MIN as i64;

/// Where a parent keeps what its Scale shows.
struct ScalePaths {
    /// `spec.replicas` of the Scale, as declared (a CRD's path keeps its leading period).
    spec: String,
    /// `status.replicas` of the Scale.
    status: String,
    /// `status.selector` of the Scale.
    selector: SelectorSource,
    /// A custom resource: replicas may be missing, and its errors are worded for that.
    custom: bool,
}

/// How the parent holds the selector the Scale shows as a string.
enum SelectorSource {
    /// A `metav1.LabelSelector` at `spec.selector` (`metav1.LabelSelectorAsSelector`).
    LabelSelector,
    /// A ReplicationController's map at `spec.selector` (`labels.SelectorFromSet`).
    LabelMap,
    /// A string at a CRD's `labelSelectorPath`, if it declares one.
    Path(Option<String>),
}

/// The fields of a path as `unstructured.NestedFieldNoCopy` reads it: the leading period
/// ignored, then split at each period.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.strip_prefix('.').unwrap_or(path).split('.')
}

/// The value at `path`, if every level above it is an object holding the next.
fn nested<'v>(obj: &'v Object, path: &str) -> Option<&'v Value> {
    let mut segs = segments(path);
    let mut current = obj.get(segs.next()?)?;
    for seg in segs {
        current = current.as_object()?.get(seg)?;
    }
    Some(current)
}

/// `unstructured.NestedInt64`: the integer at `path`, `None` when missing; an error when it is
/// there but not an integer (or a level above is not an object).
fn nested_int(obj: &Object, path: &str) -> Result<Option<i64>, String> {
    let mut segs = segments(path).peekable();
    let mut current: &Object = obj;
    let mut walked = Vec::new();
    while let Some(seg) = segs.next() {
        walked.push(seg);
        let Some(value) = current.get(seg) else {
            return Ok(None);
        };
        if segs.peek().is_none() {
            return match value.as_i64() {
                Some(n) if !value.is_f64() => Ok(Some(n)),
                _ => Err(format!(
                    "{} accessor error: {} is of the type {}, expected int64",
                    walked.join("."),
                    value,
                    go_type_name(value)
                )),
            };
        }
        match value {
            Value::Object(map) => current = map,
            Value::Null => return Ok(None),
            other => {
                return Err(format!(
                    "{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    walked.join("."),
                    other,
                    go_type_name(other)
                ));
            }
        }
    }
    Ok(None)
}

/// The Go type `encoding/json` decodes a JSON value into, as unstructured errors name it.
fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `unstructured.SetNestedField`: writes `value` at `path`, making the objects above it.
fn set_nested(obj: &mut Object, path: &str, value: Value) -> Result<(), String> {
    let segs: Vec<&str> = segments(path).collect();
    let Some((last, parents)) = segs.split_last() else {
        return Ok(());
    };
    let mut current = obj;
    for (i, seg) in parents.iter().enumerate() {
        let entry = current
            .entry((*seg).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if entry.is_null() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(map) = entry else {
            return Err(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                segs[..=i].join(".")
            ));
        };
        current = map;
    }
    current.insert((*last).to_owned(), value);
    Ok(())
}

/// `metav1.LabelSelectorAsSelector(...).String()`: the requirements sorted by key, each as
/// `key=value`, `key in (a,b)`, `key notin (a,b)`, `key` or `!key`; nothing for an empty or
/// missing selector.
fn label_selector_string(selector: Option<&Value>) -> String {
    let Some(selector) = selector.and_then(Value::as_object) else {
        return String::new();
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or_default();
            requirements.push((key.clone(), format!("{key}={value}")));
        }
    }
    if let Some(expressions) = selector.get("matchExpressions").and_then(Value::as_array) {
        for e in expressions {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let mut values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            values.sort_unstable();
            values.dedup();
            let text = match e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_owned(),
                "DoesNotExist" => format!("!{key}"),
                _ => continue,
            };
            requirements.push((key.to_owned(), text));
        }
    }
    // `sort.Sort(ByKey(...))`: stable enough for distinct keys.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels.SelectorFromSet(...).String()`: `key=value` pairs sorted by key.
fn label_map_string(selector: Option<&Value>) -> String {
    let Some(map) = selector.and_then(Value::as_object) else {
        return String::new();
    };
    let mut pairs: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// An error of reading the parent's replicas, as the REST handler answers a plain Go error.
fn internal(why: String) -> ApiError {
    ApiError::internal(&why)
}

impl ScalePaths {
    /// The Scale of `parent`, and whether its spec replicas were there.
    fn scale_of(&self, parent: &Object) -> Result<(Object, bool), ApiError> {
        let spec = nested_int(parent, &self.spec).map_err(internal)?;
        let status = nested_int(parent, &self.status).map_err(internal)?;
        let selector = match &self.selector {
            SelectorSource::LabelSelector => {
                label_selector_string(parent.get("spec").and_then(|s| s.get("selector")))
            }
            SelectorSource::LabelMap => {
                label_map_string(parent.get("spec").and_then(|s| s.get("selector")))
            }
            SelectorSource::Path(Some(path)) => nested(parent, path)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            SelectorSource::Path(None) => String::new(),
        };
        let mut metadata = Map::new();
        for field in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
        ] {
            if let Some(v) = meta_value(parent, field).filter(|v| !v.is_null()) {
                metadata.insert(field.to_owned(), v.clone());
            }
        }
        // Go's int32 fields: `spec.replicas` is left out at zero, `status.replicas` is not.
        let replicas = spec.unwrap_or(0) as i32;
        let mut spec_map = Map::new();
        if replicas != 0 {
            spec_map.insert("replicas".to_owned(), Value::from(replicas));
        }
        let mut status_map = Map::new();
        status_map.insert(
            "replicas".to_owned(),
            Value::from(status.unwrap_or(0) as i32),
        );
        if !selector.is_empty() {
            status_map.insert("selector".to_owned(), Value::String(selector));
        }
        let scale = json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": metadata,
            "spec": spec_map,
            "status": status_map,
        });
        let Value::Object(scale) = scale else {
            return Err(ApiError::internal("a Scale is an object"));
        };
        Ok((scale, spec.is_some()))
    }
}

/// The Scale as JSON bytes or, for a custom resource's asked as a Table, its Table (the
/// scale's columns; the table's `resourceVersion` the Scale's).
fn scale_reply(call: &Call<'_>, paths: &ScalePaths, scale: &Object) -> Result<Reply, ApiError> {
    let bytes = Value::Object(scale.clone()).to_string().into_bytes();
    let Ok(Format::Table(version)) = negotiate(call.accept, false) else {
        return Ok(Reply::json(200, bytes));
    };
    if !paths.custom {
        return Ok(Reply::json(200, bytes));
    }
    let request = TableRequest {
        version,
        include: IncludeObject::parse(call.query)?,
        now: call.now,
        headers: true,
    };
    let meta = ListMeta {
        resource_version: scale
            .get("metadata")
            .and_then(|m| m.get("resourceVersion"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        ..ListMeta::default()
    };
    let columns = CustomColumns::of_scale(!paths.spec.is_empty(), !paths.status.is_empty());
    let item = Item {
        object: scale,
        served: &bytes,
        stored: None,
    };
    let table = crate::table::scale_table(&columns, &request, &item, &meta)?;
    Ok(Reply::json(200, table))
}

/// The Scale's `spec.replicas` as Go decodes it into an `int32`: zero when missing; the
/// decoder's error otherwise.
fn decoded_replicas(scale: &Object) -> Result<i64, String> {
    let Some(value) = scale.get("spec").and_then(|s| s.get("replicas")) else {
        return Ok(0);
    };
    let cannot = |what: &str| {
        format!(
            "json: cannot unmarshal {what} into Go struct field ScaleSpec.spec.replicas of type int32"
        )
    };
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(v) if !n.is_f64() && i32::try_from(v).is_ok() => Ok(v),
            _ => Err(cannot(&format!("number {n}"))),
        },
        Value::String(_) => Err(cannot("string")),
        Value::Bool(_) => Err(cannot("bool")),
        Value::Array(_) => Err(cannot("array")),
        Value::Object(_) => Err(cannot("object")),
        Value::Null => Ok(0),
    }
}

/// A PUT's Scale that does not decode.
fn undecodable(why: String) -> ApiError {
    ApiError::bad_request(format!(
        "Scale in version \"v1\" cannot be handled as a Scale: {why}"
    ))
}

/// Go's `json.Marshal` of a value: map keys sorted, strings quoted as Go quotes them.
fn go_json_text(value: &Value) -> String {
    recon_apimachinery::go_json::go_json(value)
}

/// `members` of `map` in the order of `fields` (a Go struct's), then any others sorted: the
/// text the patch library writes of a Scale decoded from Go.
fn ordered_object(map: &Map, fields: &[&str], inner: &dyn Fn(&str, &Value) -> String) -> String {
    let mut parts = Vec::new();
    for field in fields {
        if let Some(v) = map.get(field) {
            parts.push(format!(
                "{}:{}",
                go_json_text(&Value::String((*field).to_owned())),
                inner(field, v)
            ));
        }
    }
    for (k, v) in map {
        if !fields.contains(&k.as_str()) {
            parts.push(format!(
                "{}:{}",
                go_json_text(&Value::String(k.clone())),
                inner(k, v)
            ));
        }
    }
    format!("{{{}}}", parts.join(","))
}

/// A patched Scale as the patch handler quotes it: the Scale's struct order, its managedFields
/// entries in theirs.
fn patched_scale_text(scale: &Object) -> String {
    const ENTRY: &[&str] = &[
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "fieldsV1",
        "subresource",
    ];
    let entry_text = |_: &str, v: &Value| match v {
        Value::Object(m) => ordered_object(m, ENTRY, &|_, v| go_json_text(v)),
        other => go_json_text(other),
    };
    let metadata_text = |k: &str, v: &Value| match (k, v) {
        ("managedFields", Value::Array(entries)) => format!(
            "[{}]",
            entries
                .iter()
                .map(|e| entry_text("", e))
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => go_json_text(v),
    };
    let top = |k: &str, v: &Value| match (k, v) {
        ("metadata", Value::Object(m)) => ordered_object(
            m,
            &[
                "name",
                "generateName",
                "namespace",
                "selfLink",
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "labels",
                "annotations",
                "ownerReferences",
                "finalizers",
                "managedFields",
            ],
            &metadata_text,
        ),
        _ => go_json_text(v),
    };
    ordered_object(
        scale,
        &["apiVersion", "kind", "metadata", "spec", "status"],
        &top,
    )
}

impl State {
    /// GET, PUT and PATCH of `{name}/scale`.
    pub(crate) fn scale(&mut self, call: &Call<'_>, verb: Verb) -> Result<Reply, ApiError> {
        let paths = self.scale_paths(&call.rt, &call.path.version)?;
        match verb {
            Verb::Get => {
                let Some((parent, _)) = self.load_typed(call)? else {
                    return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
                };
                let (scale, found) = paths.scale_of(&parent)?;
                if paths.custom && !found {
                    return Err(ApiError::internal(&format!(
                        "the spec replicas field {} does not exist",
                        recon_apimachinery::go_quote(&paths.spec)
                    )));
                }
                scale_reply(call, &paths, &scale)
            }
            Verb::Update => {
                check_write_options(call, "UpdateOptions")?;
                let requested = decode_scale(call.body)?;
                decoded_replicas(&requested).map_err(undecodable)?;
                self.write_scale(call, &paths, Change::Replace(requested))
            }
            Verb::Patch => {
                let kind = patch_type(call)?;
                check_patch_options(call, kind)?;
                self.write_scale(call, &paths, Change::Patch(kind))
            }
            _ => Err(ApiError::method_not_routed()),
        }
    }

    /// Where the parent type keeps its replicas and selector.
    fn scale_paths(&self, rt: &ResourceType, version: &str) -> Result<ScalePaths, ApiError> {
        if !rt.custom {
            let selector = if rt.group.is_empty() {
                SelectorSource::LabelMap
            } else {
                SelectorSource::LabelSelector
            };
            return Ok(ScalePaths {
                spec: "spec.replicas".to_owned(),
                status: "status.replicas".to_owned(),
                selector,
                custom: false,
            });
        }
        let crds = GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions");
        let key = object_key(None, &format!("{}.{}", rt.plural, rt.group));
        let crd = self
            .store
            .get(&crds, &key)
            .and_then(|stored| stored.decode(&key).ok())
            .ok_or_else(|| ApiError::not_found(&rt.group_resource(), ""))?;
        let scale = crd
            .get("spec")
            .and_then(|s| s.get("versions"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
            .and_then(|v| v.get("subresources"))
            .and_then(|s| s.get("scale"))
            .cloned()
            .unwrap_or(Value::Null);
        let text = |field: &str| {
            scale
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let selector = Some(text("labelSelectorPath")).filter(|p| !p.is_empty());
        Ok(ScalePaths {
            spec: text("specReplicasPath"),
            status: text("statusReplicasPath"),
            selector: SelectorSource::Path(selector),
            custom: true,
        })
    }

    /// A PUT or a patch: the Scale the request makes of the current one, checked, then its
    /// replicas written to the parent.
    fn write_scale(
        &mut self,
        call: &Call<'_>,
        paths: &ScalePaths,
        change: Change,
    ) -> Result<Reply, ApiError> {
        // The body is read before the object (`validateAndTranscodePatch`).
        let early = match change {
            Change::Patch(PatchType::Strategic) => {
                Some(strategic::parse_patch_body(call.body).map_err(|e| strategic_error(&e))?)
            }
            Change::Patch(PatchType::Apply) => Some(decode_apply_body(call.body)?),
            _ => None,
        };
        let Some((old, stored)) = self.load_typed(call)? else {
            return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
        };
        let (mut current, found) = paths.scale_of(&old)?;
        if paths.custom && !found {
            // `invalidSpecReplicas`: the Scale says the parent had none.
            let mut spec = Map::new();
            spec.insert("replicas".to_owned(), Value::from(NO_REPLICAS));
            current.insert("spec".to_owned(), Value::Object(spec));
        }
        let current_replicas = decoded_replicas(&current).map_err(undecodable)?;
        let mut applied_namespace = String::new();
        let (mut scale, applied) = match change {
            Change::Replace(scale) => (scale, None),
            Change::Patch(PatchType::Apply) => {
                let Some(Value::Object(body)) = early else {
                    return Err(ApiError::bad_request("the apply body is not an object"));
                };
                let wants = body.get("spec").and_then(|s| s.get("replicas")).is_some();
                applied_namespace = meta_str(&body, "namespace").to_owned();
                let mut scale = current.clone();
                if let Some(spec) = body.get("spec") {
                    scale.insert("spec".to_owned(), spec.clone());
                }
                if let Some(Value::Object(meta)) = body.get("metadata") {
                    for (k, v) in meta {
                        set_meta(&mut scale, k, v.clone());
                    }
                }
                (scale, Some(wants))
            }
            Change::Patch(kind) => {
                let mut doc = Value::Object(current);
                match kind {
                    PatchType::Merge => {
                        apply_merge_patch(&mut doc, call.body)?;
                    }
                    PatchType::Json => {
                        apply_json_patch(&mut doc, call.body, FieldValidation::of(call))?;
                    }
                    _ => {
                        let patch = early.unwrap_or(Value::Null);
                        doc = strategic::apply(&doc, &patch, strategic::metadata_only())
                            .map_err(|e| strategic_error(&e))?;
                    }
                }
                let Value::Object(scale) = doc else {
                    return Err(ApiError::bad_request("the patched Scale is not an object"));
                };
                (scale, None)
            }
        };
        check_name(call, &scale)?;
        ensure_namespace(call, &mut scale)?;
        let replicas = match decoded_replicas(&scale) {
            Ok(replicas) => replicas,
            Err(why) => {
                // The patched Scale is quoted as it was patched, with its managedFields.
                let mut quoted = scale.clone();
                let entries = scale_view_entries(&old, &paths.spec);
                if !entries.is_empty() {
                    set_meta(&mut quoted, "managedFields", Value::Array(entries.into()));
                }
                return Err(patched_object_invalid(&patched_scale_text(&quoted), &why));
            }
        };
        let mut parent = old.clone();
        let api_version = call.api_version();
        match applied {
            Some(wants) => {
                let owners = ReplicasOwners::of(&old, &paths.spec);
                let own = ManagerId::new(call.field_manager(), Operation::Apply, "", "scale");
                let changes = wants && replicas != current_replicas;
                let others: Vec<ManagerId> = owners
                    .ids
                    .iter()
                    .filter(|id| **id != own)
                    .cloned()
                    .collect();
                if changes && !call.query.flag("force") && !others.is_empty() {
                    let conflicts = others
                        .into_iter()
                        .map(|manager| Conflict {
                            manager,
                            path: Path::fields(&["spec", "replicas"]),
                        })
                        .collect();
                    return Err(apply_error(ApplyError::Conflicts(conflicts)));
                }
                if paths.custom {
                    // The apply handler converts the merged Scale to the custom resource's
                    // version, which it cannot (the CR conversion knows only the CRD's).
                    return Err(ApiError::internal_unknown(format!(
                        "failed to convert new object ({applied_namespace}/{}; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1",
                        call.name()
                    )));
                }
                let entries = owners.applied(
                    (&own, call.field_manager()),
                    wants,
                    changes,
                    &api_version,
                    &paths.spec,
                );
                set_meta(&mut parent, "managedFields", entries);
            }
            None => {
                set_nested(&mut parent, &paths.spec, Value::from(replicas))
                    .map_err(|why| ApiError::internal(&why))?;
                let mut before = old.clone();
                FieldManager::new(call, self.clock.now())
                    .record_update(Some(&mut before), &mut parent);
            }
        }
        if paths.custom && replicas == NO_REPLICAS {
            return Err(ApiError::bad_request(format!(
                "the spec replicas field {} cannot be empty",
                recon_apimachinery::go_quote(&paths.spec)
            )));
        }
        if !paths.custom && replicas < 0 {
            // `ValidateScale`.
            return Err(ApiError::invalid(
                &GroupKind::new("autoscaling", "Scale"),
                meta_str(&scale, "name"),
                &[FieldError::new(
                    ErrorType::Invalid,
                    "spec.replicas",
                    BadValue::Raw(replicas.to_string()),
                    "must be greater than or equal to 0",
                )],
            ));
        }
        set_nested(&mut parent, &paths.spec, Value::from(replicas))
            .map_err(|why| ApiError::internal(&why))?;
        untime_scale_entries(&mut parent);
        let rv = meta_str(&scale, "resourceVersion").to_owned();
        if paths.custom {
            // The store's checks, in its order: the lock, then the custom resource's
            // `ValidateScaleSpec` (the only rule a scale write can break).
            if !rv.is_empty() && rv != stored.revision.to_string() {
                return Err(ApiError::optimistic_lock(
                    &call.rt.group_resource(),
                    call.name(),
                ));
            }
            if replicas < 0 {
                return Err(ApiError::invalid(
                    &GroupKind::new(call.rt.group.clone(), call.rt.kind.clone()),
                    call.name(),
                    &[FieldError::new(
                        ErrorType::Invalid,
                        paths.spec.clone(),
                        BadValue::Raw(replicas.to_string()),
                        "should be a non-negative integer",
                    )],
                ));
            }
            if !rv.is_empty() {
                set_meta(&mut parent, "resourceVersion", Value::String(rv));
            }
        } else {
            // `deployment.ResourceVersion = scale.ResourceVersion`: none is an unconditional write.
            set_meta(&mut parent, "resourceVersion", Value::String(rv));
        }
        let uid = meta_str(&scale, "uid").to_owned();
        set_meta(&mut parent, "uid", Value::String(uid));
        // The parent is written and read back as JSON, whatever form the Scale is asked in.
        let parent_call = Call {
            accept: "application/json",
            rt: call.rt.clone(),
            ..*call
        };
        let reply = self.update(
            &parent_call,
            UpdateRequest {
                object: parent,
                uid_precondition: true,
                warnings: Vec::new(),
                current: Some((old, stored)),
                fields_managed: true,
            },
        )?;
        let written = read_json(&reply.body.to_bytes())
            .ok()
            .and_then(|v| match v {
                Value::Object(map) => Some(map),
                _ => None,
            })
            .ok_or_else(|| ApiError::internal("the updated parent is not an object"))?;
        let (scale, _) = paths.scale_of(&written)?;
        Ok(scale_reply(call, paths, &scale)?.with_warnings(reply.warnings))
    }
}

/// The `fieldsV1` keys of a path: `f:` before each field.
fn fields_keys(path: &str) -> Vec<String> {
    segments(path).map(|s| format!("f:{s}")).collect()
}

/// Whether a `fieldsV1` set holds the path of `keys`.
fn holds(fields: &Value, keys: &[String]) -> bool {
    let mut current = fields;
    for key in keys {
        match current.get(key) {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
}

/// Takes the path of `keys` out of a `fieldsV1` set, and every map it leaves empty.
fn take_out(fields: &mut Value, keys: &[String]) {
    let Some((first, rest)) = keys.split_first() else {
        return;
    };
    let Some(map) = fields.as_object_mut() else {
        return;
    };
    if rest.is_empty() {
        map.remove(first);
        return;
    }
    if let Some(child) = map.get_mut(first) {
        take_out(child, rest);
        if child.as_object().is_some_and(Map::is_empty) {
            map.remove(first);
        }
    }
}

/// The parent's managedFields and which of their owners hold its replicas.
struct ReplicasOwners {
    entries: Vec<Value>,
    /// The owners of the replicas, as the Scale names them.
    ids: Vec<ManagerId>,
}

/// The identity of a managedFields entry.
fn entry_id(entry: &Value, api_version: Option<&str>) -> ManagerId {
    let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or_default();
    let operation = if text("operation") == "Apply" {
        Operation::Apply
    } else {
        Operation::Update
    };
    ManagerId::new(
        text("manager"),
        operation,
        api_version.unwrap_or(text("apiVersion")),
        text("subresource"),
    )
}

impl ReplicasOwners {
    fn of(parent: &Object, spec_path: &str) -> ReplicasOwners {
        let keys = fields_keys(spec_path);
        let entries: Vec<Value> = meta_value(parent, "managedFields")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ids = entries
            .iter()
            .filter(|e| e.get("fieldsV1").is_some_and(|f| holds(f, &keys)))
            .map(|e| entry_id(e, Some("autoscaling/v1")))
            .collect();
        ReplicasOwners { entries, ids }
    }

    /// The parent's entries after `own` applied (`wants`: the replicas; `changes`: to
    /// another value, which takes them from every other owner).
    fn applied(
        self,
        (own, manager): (&ManagerId, &str),
        wants: bool,
        changes: bool,
        api_version: &str,
        spec_path: &str,
    ) -> Value {
        let keys = fields_keys(spec_path);
        let mut out = Vec::new();
        for mut entry in self.entries {
            if entry_id(&entry, None) == *own {
                continue;
            }
            if changes && let Some(fields) = entry.get_mut("fieldsV1") {
                take_out(fields, &keys);
                if fields.as_object().is_some_and(Map::is_empty) {
                    continue;
                }
            }
            out.push(entry);
        }
        if wants {
            let mut fields = Value::Object(Map::new());
            for key in keys.iter().rev() {
                let mut wrap = Map::new();
                wrap.insert(key.clone(), fields);
                fields = Value::Object(wrap);
            }
            out.push(json!({
                "manager": manager,
                "operation": "Apply",
                "apiVersion": api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": fields,
                "subresource": "scale",
            }));
        }
        Value::Array(out.into())
    }
}

/// The parent's entries as the Scale holds them (`ScaleHandler.ToSubresource`): those that own
/// the replicas, at `autoscaling/v1`, owning `spec.replicas`, with their times, sorted.
fn scale_view_entries(parent: &Object, spec_path: &str) -> Vec<Value> {
    let keys = fields_keys(spec_path);
    let mut entries: Vec<Value> = meta_value(parent, "managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e.get("fieldsV1").is_some_and(|f| holds(f, &keys)))
        .map(|e| {
            let mut e = e.clone();
            if let Some(map) = e.as_object_mut() {
                map.insert("apiVersion".to_owned(), Value::from("autoscaling/v1"));
                map.insert("fieldsV1".to_owned(), json!({"f:spec": {"f:replicas": {}}}));
            }
            e
        })
        .collect();
    sort_entries(&mut entries);
    entries
}

/// `sortEncodedManagedFields`: operation, time (none first), manager, apiVersion, subresource.
fn sort_entries(entries: &mut [Value]) {
    let text = |e: &Value, k: &str| {
        e.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    entries.sort_by_key(|e| {
        (
            text(e, "operation"),
            text(e, "time"),
            text(e, "manager"),
            text(e, "apiVersion"),
            text(e, "subresource"),
        )
    });
}

/// The entries a scale write leaves carry no time (`ScaleHandler.ToParent` takes the parent's
/// time of the same identity, which a Scale's never has), and are sorted as
/// `sortEncodedManagedFields` sorts them: operation, time (none first), manager, apiVersion,
/// subresource.
fn untime_scale_entries(parent: &mut Object) {
    let Some(Value::Array(entries)) = meta_value(parent, "managedFields").cloned() else {
        return;
    };
    let mut entries: Vec<Value> = entries
        .into_iter()
        .map(|mut e| {
            if e.get("subresource").and_then(Value::as_str) == Some("scale")
                && let Some(map) = e.as_object_mut()
            {
                map.remove("time");
            }
            e
        })
        .collect();
    sort_entries(&mut entries);
    set_meta(parent, "managedFields", Value::Array(entries.into()));
}

/// What a write does to the current Scale.
enum Change {
    /// A PUT's Scale replaces it.
    Replace(Object),
    /// A patch of this type patches it.
    Patch(PatchType),
}

/// A PUT's body as a Scale: a JSON object of kind Scale (or none named).
fn decode_scale(body: &[u8]) -> Result<Object, ApiError> {
    let context = DecodeContext {
        kind: "Scale",
        version: "v1",
    };
    let scale = match read_json(body) {
        Ok(Value::Object(scale)) => scale,
        Ok(other) => return Err(context.unrecognized(&not_an_object(json_type(&other)), body)),
        Err(e) => return Err(undecodable(e.to_string())),
    };
    let kind = scale
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !kind.is_empty() && kind != "Scale" {
        let api_version = scale
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = api_version.rsplit('/').next().unwrap_or_default();
        return Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a Scale: converting ({version}.{kind}) to (autoscaling.Scale): unknown conversion",
            recon_apimachinery::go_quote(version)
        )));
    }
    Ok(scale)
}
