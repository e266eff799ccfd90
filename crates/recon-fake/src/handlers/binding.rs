//! `pods/{name}/binding` and `namespaces/{ns}/bindings`: a `Binding` assigns a pod to a node,
//! as `BindingREST` and `LegacyBindingREST` do (`pkg/registry/core/pod/storage/storage.go`).
//!
//! The pod is written straight to storage (`GuaranteedUpdate`, no strategy and no field
//! manager): `spec.nodeName` set, the binding's annotations added, the `PodScheduled` condition
//! True. A pod already assigned, being deleted or with scheduling gates is a 409; the answer is
//! a 201 `Status` Success.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::eviction::update_pod_condition;
use super::subresource_body::{BodyKind, decode_as, str_at, success};
use crate::field::{FieldError, aggregate};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, meta_mut, meta_str, meta_value};

const BINDING: BodyKind = BodyKind {
    group: "",
    versions: &["v1"],
    kind: "Binding",
    internal_package: "core",
};

impl State {
    /// POST `pods/{name}/binding` (`from_collection` false) or `namespaces/{ns}/bindings`.
    pub(crate) fn bind(
        &mut self,
        call: &Call<'_>,
        from_collection: bool,
    ) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let binding = decode_as(call, &BINDING, &|g, v, k| self.knows(g, v, k))?;
        let name = if from_collection {
            meta_str(&binding, "name").to_owned()
        } else {
            call.name().to_owned()
        };
        if !from_collection && meta_str(&binding, "name") != name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        if let Some(ns) = call.namespace()
            && !meta_str(&binding, "namespace").is_empty()
            && meta_str(&binding, "namespace") != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let target = binding.get("target");
        let target_kind = str_at(target, &["kind"]);
        let node = str_at(target, &["name"]).to_owned();
        // `ValidatePodBinding`, reported as a plain error (`ToAggregate`).
        let mut errors = Vec::new();
        if !target_kind.is_empty() && target_kind != "Node" {
            errors.push(FieldError::not_supported(
                "target.kind",
                target_kind,
                &["Node", "<empty>"],
            ));
        }
        if node.is_empty() {
            errors.push(FieldError::required("target.name", ""));
        }
        if !errors.is_empty() {
            return Err(ApiError::internal_unknown(aggregate(&errors)));
        }
        let annotations = meta_value(&binding, "annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        self.assign_pod(
            call,
            &name,
            (
                meta_str(&binding, "uid"),
                meta_str(&binding, "resourceVersion"),
            ),
            &node,
            annotations,
        )?;
        Ok(Reply::json(201, success()))
    }

    /// `setPodNodeAndMetadata`, with `assignPod`'s errors.
    fn assign_pod(
        &mut self,
        call: &Call<'_>,
        name: &str,
        (uid, rv): (&str, &str),
        node: &str,
        annotations: recon_apimachinery::json::Map,
    ) -> Result<(), ApiError> {
        let pods = GroupResource::new("", "pods");
        // `assignPod` answers every refusal of the update as a conflict on `pods/binding`.
        let binding = GroupResource::new("", "pods/binding");
        let Some(rt) = self.registry.get("", "pods") else {
            return Err(ApiError::internal("pods are not registered"));
        };
        let key = object_key(call.namespace(), name);
        let Some((mut pod, _)) = self.load(&rt, &key).map_err(|e| e.to_api_error())? else {
            return Err(ApiError::not_found(&pods, name));
        };
        if meta_value(&pod, "deletionTimestamp").is_some_and(|v| !v.is_null()) {
            return Err(ApiError::conflict(
                &binding,
                name,
                &format!("pod {name} is being deleted, cannot be assigned to a host"),
            ));
        }
        if !uid.is_empty() && meta_str(&pod, "uid") != uid {
            return Err(ApiError::conflict(
                &binding,
                name,
                &format!("expected UID {uid}, found {}", meta_str(&pod, "uid")),
            ));
        }
        if !rv.is_empty() && meta_str(&pod, "resourceVersion") != rv {
            return Err(ApiError::conflict(
                &binding,
                name,
                &format!(
                    "expected resourceVersion {rv}, found {}",
                    meta_str(&pod, "resourceVersion")
                ),
            ));
        }
        let assigned = str_at(pod.get("spec"), &["nodeName"]);
        if !assigned.is_empty() {
            return Err(ApiError::conflict(
                &binding,
                name,
                &format!("pod {name} is already assigned to node \"{assigned}\""),
            ));
        }
        let gated = pod
            .get("spec")
            .and_then(|s| s.get("schedulingGates"))
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty());
        if gated {
            return Err(ApiError::conflict(
                &binding,
                name,
                &format!("pod {name} has non-empty .spec.schedulingGates"),
            ));
        }
        set_node(&mut pod, node, annotations);
        let now = self.now();
        update_pod_condition(
            &mut pod,
            json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null}),
            &now,
        );
        if call.dry_run() {
            return Ok(());
        }
        self.store.put(&pods, key, pod);
        self.after_write(&rt);
        Ok(())
    }
}

fn set_node(pod: &mut Object, node: &str, annotations: recon_apimachinery::json::Map) {
    let spec = pod.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    spec["nodeName"] = Value::from(node);
    if annotations.is_empty() {
        return;
    }
    let meta = meta_mut(pod);
    let current = meta.entry("annotations").or_insert_with(|| json!({}));
    if !current.is_object() {
        *current = json!({});
    }
    if let Some(current) = current.as_object_mut() {
        current.extend(annotations);
    }
}
