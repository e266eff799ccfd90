//! `pods/{name}/ephemeralcontainers` and `pods/{name}/resize`: the two subresources that write
//! part of a pod's spec (`EphemeralContainersREST` and `ResizeREST` in
//! `pkg/registry/core/pod/storage/storage.go`, their strategies in
//! `pkg/registry/core/pod/strategy.go`).
//!
//! GET answers the Pod. A PUT or a patch (JSON, merge or strategic merge) is read against the
//! stored pod, of which only `spec.ephemeralContainers` (`dropNonEphemeralContainerUpdates`) or
//! the containers' `resources` and `resizePolicy` (`dropNonResizeUpdates`) are taken; the
//! generation moves when the spec does. Validation covers the common refusals:
//! ephemeral containers that are removed, changed, unnamed, named twice, without an image,
//! aimed at an unknown container or given a field an ephemeral container may not have
//! (`ValidatePodEphemeralContainersUpdate`, `validateEphemeralContainers`), and a resize that
//! changes the pod's QoS class (`ValidatePodResize`). Server-side apply is not served here.

use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::dns1123_label_errors;

use super::decode::{check_name, check_write_options, decode_request, ensure_namespace};
use super::field_manager::FieldManager;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::gotype::internal;
use crate::registry::defaults;
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::request::route::Verb;
use crate::state::State;
use crate::storage::write_limit;
use crate::wire::error::ApiError;
use crate::wire::media_type::patch_media_type;
use crate::wire::object::{Object, generation, meta_mut, meta_str, read_json};

/// The fields an ephemeral container may not set, in `EphemeralContainerCommon`'s order
/// (`allowedEphemeralContainerFields` lists the others).
const NOT_FOR_EPHEMERAL: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// Which part of the pod a subresource writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    EphemeralContainers,
    Resize,
}

impl State {
    /// GET, PUT or PATCH of `pods/{name}/{sub}`.
    pub(crate) fn write_pod_part(
        &mut self,
        call: &Call<'_>,
        verb: Verb,
        sub: &str,
    ) -> Result<Reply, ApiError> {
        let part = if sub == "resize" {
            Part::Resize
        } else {
            Part::EphemeralContainers
        };
        match verb {
            Verb::Get => self.get(call),
            Verb::Update => {
                check_write_options(call, "UpdateOptions")?;
                let (mut object, _) = decode_request(call)?;
                ensure_namespace(call, &mut object)?;
                check_name(call, &object)?;
                self.store_pod_part(call, part, object, true)
            }
            _ => {
                check_write_options(call, "PatchOptions")?;
                let Some((current, _)) = self.load_typed(call)? else {
                    return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
                };
                let object = patched(call, current)?;
                self.store_pod_part(call, part, object, false)
            }
        }
    }

    /// The strategy's `PrepareForUpdate` and `ValidateUpdate`, then the write.
    fn store_pod_part(
        &mut self,
        call: &Call<'_>,
        part: Part,
        mut requested: Object,
        uid_precondition: bool,
    ) -> Result<Reply, ApiError> {
        let resource = call.rt.group_resource();
        let Some((mut old, stored)) = self.load_typed(call)? else {
            return Err(ApiError::not_found(&resource, call.name()));
        };
        if uid_precondition {
            let want = meta_str(&requested, "uid");
            if !want.is_empty() && want != meta_str(&old, "uid") {
                return Err(ApiError::conflict(
                    &resource,
                    call.name(),
                    &format!(
                        "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {want}, UID in object meta: {}",
                        call.rt.storage_key(call.namespace(), call.name()),
                        meta_str(&old, "uid")
                    ),
                ));
            }
        }
        let rv = meta_str(&requested, "resourceVersion");
        if !rv.is_empty() && rv != stored.revision.to_string() {
            return Err(ApiError::optimistic_lock(&resource, call.name()));
        }
        defaults::apply("", "Pod", &mut requested);
        let mut new = old.clone();
        let spec = new
            .entry("spec")
            .or_insert_with(|| Value::Object(Map::new()));
        let wanted_spec = requested.get("spec");
        match part {
            Part::EphemeralContainers => {
                match wanted_spec.and_then(|s| s.get("ephemeralContainers")) {
                    Some(list) if !list.is_null() => spec["ephemeralContainers"] = list.clone(),
                    _ => {
                        if let Value::Object(spec) = spec {
                            spec.remove("ephemeralContainers");
                        }
                    }
                }
            }
            Part::Resize => take_resources(spec, wanted_spec),
        }
        let errors = match part {
            Part::EphemeralContainers => ephemeral_errors(&new, &old),
            Part::Resize => resize_errors(&new, &old),
        };
        if !errors.is_empty() {
            return Err(ApiError::invalid(
                &call.rt.group_kind(),
                call.name(),
                &errors,
            ));
        }
        if internal::semantic_eq("core.PodSpec", new.get("spec"), old.get("spec")) {
            // Nothing this subresource writes changed: no write.
            return Ok(Reply::json(200, call.object_response(&stored.body)?));
        }
        let next = generation(&old) + 1;
        meta_mut(&mut new).insert("generation".into(), Value::from(next));
        FieldManager::new(call, self.clock.now()).record_update(Some(&mut old), &mut new);
        if call.dry_run() {
            return Ok(Reply::json(
                200,
                call.object_response(&self.store.encode(&resource, &new))?,
            ));
        }
        new.remove("apiVersion");
        new.remove("kind");
        let key = call.key();
        write_limit::fit(
            &mut new,
            &call.rt.etcd_write(&key, Some(stored.revision)),
            call.body.len().saturating_add(stored.body.len()),
            true,
        )?;
        let (_, written) = self.store.put(&resource, key.clone(), new);
        let reply = match written.served(&key) {
            Ok(body) => Ok(Reply::json(200, call.object_response(body)?)),
            Err(e) => Err(e.to_api_error()),
        };
        self.after_write(&call.rt);
        reply
    }
}

/// The stored pod with the request's patch applied.
fn patched(call: &Call<'_>, current: Object) -> Result<Object, ApiError> {
    let doc = Value::Object(current);
    let unsupported = || {
        ApiError::unsupported_media_type(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
        ])
    };
    let patched = match patch_media_type(call.content_type) {
        "application/merge-patch+json" => {
            let patch = read_json(call.body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "error decoding patch: the patch is not a JSON object",
                ));
            }
            let mut doc = doc;
            recon_apimachinery::json::merge_patch(&mut doc, &patch);
            doc
        }
        "application/json-patch+json" => {
            let patch =
                crate::jsonpatch::Patch::decode(call.body).map_err(ApiError::bad_request)?;
            patch
                .apply(&doc, 2 * crate::wire::nesting::GO_MAX_DEPTH)
                .map_err(|_| {
                    ApiError::new(
                        422,
                        crate::wire::status::Reason::Invalid,
                        "the server rejected our request due to an error in our request",
                    )
                })?
        }
        "application/strategic-merge-patch+json" => {
            let patch = crate::strategic::parse_patch_body(call.body)
                .map_err(|e| ApiError::bad_request(e.message.clone()))?;
            let schema = crate::strategic::schema_for("", "Pod")
                .unwrap_or_else(crate::strategic::metadata_only);
            crate::strategic::apply(&doc, &patch, schema)
                .map_err(|e| ApiError::bad_request(e.message.clone()))?
        }
        _ => return Err(unsupported()),
    };
    match patched {
        Value::Object(object) => Ok(object),
        _ => Err(ApiError::bad_request(
            "the patched object is not a JSON object",
        )),
    }
}

/// `dropNonResizeUpdates`: each container's (and restartable init container's) resources and
/// resize policy, matched by name.
fn take_resources(spec: &mut Value, wanted: Option<&Value>) {
    for key in ["containers", "initContainers"] {
        let Some(list) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        let wanted_list = wanted
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for container in list.iter_mut() {
            if key == "initContainers"
                && container.get("restartPolicy").and_then(Value::as_str) != Some("Always")
            {
                continue;
            }
            let name = container.get("name").cloned();
            let Some(source) = wanted_list.iter().find(|c| c.get("name") == name.as_ref()) else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match source.get(field) {
                    Some(v) => container[field] = v.clone(),
                    None => {
                        if let Value::Object(c) = container {
                            c.remove(field);
                        }
                    }
                }
            }
        }
    }
}

fn containers<'a>(pod: &'a Object, key: &str) -> &'a [Value] {
    pod.get("spec")
        .and_then(|s| s.get(key))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether `v` is set to something other than Go's zero value.
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => m.values().any(|v| is_set(Some(v))),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// `validateEphemeralContainers` for the common errors, then
/// `ValidatePodEphemeralContainersUpdate`'s rules on the ones that existed.
fn ephemeral_errors(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = "spec.ephemeralContainers";
    let mut names: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|k| containers(new, k))
        .map(|c| text(c, "name"))
        .collect();
    let others = names.clone();
    for (i, container) in containers(new, "ephemeralContainers").iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = text(container, "name");
        if name.is_empty() {
            errors.push(FieldError::required(format!("{at}.name"), ""));
        } else {
            for message in dns1123_label_errors(name) {
                errors.push(FieldError::invalid(format!("{at}.name"), name, message));
            }
        }
        if text(container, "image").is_empty() {
            errors.push(FieldError::required(format!("{at}.image"), ""));
        }
        if !name.is_empty() && names.contains(&name) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                format!("{at}.name"),
                BadValue::Str(name.to_owned()),
                "",
            ));
        } else {
            names.push(name);
        }
        let target = text(container, "targetContainerName");
        if !target.is_empty() && !others.contains(&target) {
            errors.push(FieldError::not_found(
                format!("{at}.targetContainerName"),
                target,
            ));
        }
        for field in NOT_FOR_EPHEMERAL {
            if is_set(container.get(field)) {
                errors.push(FieldError::forbidden(
                    format!("{at}.{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    let current = containers(new, "ephemeralContainers");
    for existing in containers(old, "ephemeralContainers") {
        let name = text(existing, "name");
        match current.iter().find(|c| text(c, "name") == name) {
            None => errors.push(FieldError::forbidden(
                path,
                format!("existing ephemeral containers \"{name}\" may not be removed\n"),
            )),
            Some(now)
                if !internal::semantic_eq("core.EphemeralContainer", Some(existing), Some(now)) =>
            {
                let diff = internal::diff("core.EphemeralContainer", Some(existing), Some(now));
                errors.push(FieldError::forbidden(
                    path,
                    format!("existing ephemeral containers \"{name}\" may not be changed\n{diff}"),
                ));
            }
            Some(_) => {}
        }
    }
    errors
}

/// `ValidatePodResize`: the QoS class may not change.
fn resize_errors(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let before = crate::registry::builtins::pod_qos_class(old);
    let after = crate::registry::builtins::pod_qos_class(new);
    if before != after {
        let shown = new
            .get("status")
            .and_then(|s| s.get("qosClass"))
            .and_then(Value::as_str)
            .unwrap_or("");
        errors.push(FieldError::invalid(
            "spec",
            shown,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    errors
}
