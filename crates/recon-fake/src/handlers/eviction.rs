//! `pods/{name}/eviction`: a `policy/v1` (or `policy/v1beta1`) `Eviction` deletes the pod if
//! the PodDisruptionBudgets selecting it allow, as `EvictionREST.Create` does
//! (`pkg/registry/core/pod/storage/eviction.go`).
//!
//! A pod that is already terminal, still `Pending` or being deleted is deleted at once. Otherwise
//! the budgets of its namespace whose selector matches its labels decide: more than one is a
//! 500, one that has not observed its generation or allows no disruption is a 429 with the
//! `DisruptionBudget` cause, and one that allows a disruption has its `disruptionsAllowed`
//! decremented and the pod listed in `disruptedPods` (through `/status`, as the eviction
//! handler's client writes it). An unready pod is deleted without decrementing when the budget
//! is healthy (or its `unhealthyPodEvictionPolicy` is `AlwaysAllow`). Before the delete the pod
//! gets the `DisruptionTarget` condition.

use http::Method;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::subresource_body::{BodyKind, decode_as, int_at, str_at, success};
use crate::client_service::InternalRequest;
use crate::request::call::Call;
use crate::request::delete_options::{DeleteOptions, Preconditions};
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, is_terminating, meta_str, meta_value};
use crate::wire::status::{Reason, StatusCause, StatusDetails};

const EVICTION: BodyKind = BodyKind {
    group: "policy",
    versions: &["v1", "v1beta1"],
    kind: "Eviction",
    internal_package: "policy",
};

/// `policyv1.DisruptionBudgetCause`.
const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// The user agent of the eviction handler's own PodDisruptionBudget client.
const LOOPBACK_AGENT: &str = "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/recon";

fn pdbs() -> GroupResource {
    GroupResource::new("policy", "poddisruptionbudgets")
}

impl State {
    /// POST `pods/{name}/eviction`.
    pub(crate) fn evict(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let eviction = decode_as(call, &EVICTION, &|g, v, k| self.knows(g, v, k))?;
        if meta_str(&eviction, "name") != call.name() {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let mut options = delete_options(&eviction)?;
        propagate_dry_run(call, &mut options)?;
        let Some((pod, _)) = self.load_typed(call)? else {
            return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
        };
        let phase = str_at(pod.get("status"), &["phase"]);
        if matches!(phase, "Succeeded" | "Failed" | "Pending") || is_terminating(&pod) {
            // `canIgnorePDB`: the pod has already disrupted, or has not started to serve.
            let enforce = !matches!(phase, "Succeeded" | "Failed") && !is_terminating(&pod);
            if enforce && rv_unset(&options) {
                set_precondition_rv(&mut options, meta_str(&pod, "resourceVersion"));
            }
            return self.condition_and_delete(call, options);
        }
        let namespace = call.namespace().unwrap_or("");
        let budgets = self.budgets_of(namespace, &pod)?;
        if budgets.len() > 1 {
            return Ok(Reply::json(
                500,
                serde_json::to_vec(&json!({
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    "code": 500,
                }))
                .unwrap_or_default(),
            ));
        }
        let mut precondition_added = false;
        if let Some(budget) = budgets.into_iter().next() {
            let status = budget.get("status");
            let always_allow =
                str_at(budget.get("spec"), &["unhealthyPodEvictionPolicy"]) == "AlwaysAllow";
            let healthy_enough = int_at(status, &["currentHealthy"])
                >= int_at(status, &["desiredHealthy"])
                && int_at(status, &["desiredHealthy"]) > 0;
            if !pod_ready(&pod) && (always_allow || healthy_enough) {
                precondition_added = true;
            } else {
                self.check_and_decrement(call, &budget, options.dry_run())?;
            }
        }
        if precondition_added {
            set_precondition_rv(&mut options, meta_str(&pod, "resourceVersion"));
        }
        self.condition_and_delete(call, options)
    }

    /// Whether the server serves `kind` in `group`/`version` (a body of it is converted, not
    /// unknown).
    pub(crate) fn knows(&self, group: &str, version: &str, kind: &str) -> bool {
        self.registry.find_kind(group, version, kind).is_some()
            || [
                ("policy", "v1", "Eviction"),
                ("policy", "v1beta1", "Eviction"),
                ("authentication.k8s.io", "v1", "TokenRequest"),
                ("authentication.k8s.io", "v1beta1", "SelfSubjectReview"),
            ]
            .contains(&(group, version, kind))
    }

    /// The budgets in `namespace` whose selector selects `pod` (`getPodDisruptionBudgets`).
    fn budgets_of(&self, namespace: &str, pod: &Object) -> Result<Vec<Object>, ApiError> {
        let labels = meta_value(pod, "labels");
        let mut found = Vec::new();
        for (key, stored) in self.store.list(&pdbs(), Some(namespace)) {
            let budget = stored.decode(key).map_err(|e| e.to_api_error())?;
            let Some(selector) = budget
                .get("spec")
                .and_then(|s| s.get("selector"))
                .filter(|s| !s.is_null())
            else {
                // A nil selector selects nothing.
                continue;
            };
            if crate::registry::validation::selector_converts(selector)
                && crate::registry::validation::selector_matches(selector, labels)
            {
                found.push(budget);
            }
        }
        Ok(found)
    }

    /// `checkAndDecrement`: refuses the eviction the budget does not allow; otherwise writes the
    /// budget's status with one disruption fewer and the pod among the disrupted ones.
    fn check_and_decrement(
        &mut self,
        call: &Call<'_>,
        budget: &Object,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        let name = meta_str(budget, "name").to_owned();
        let status = budget.get("status");
        let generation = meta_value(budget, "generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if int_at(status, &["observedGeneration"]) < generation {
            return Err(too_many_requests(
                10,
                format!("The disruption budget {name} is still being processed by the server."),
            ));
        }
        let allowed = int_at(status, &["disruptionsAllowed"]);
        if allowed < 0 {
            return Err(ApiError::forbidden(
                &GroupResource::new("policy", "poddisruptionbudget"),
                &name,
                "pdb disruptions allowed is negative",
            ));
        }
        let disrupted = status
            .and_then(|s| s.get("disruptedPods"))
            .and_then(Value::as_object)
            .map_or(0, recon_apimachinery::json::Map::len);
        if disrupted > 2000 {
            return Err(ApiError::forbidden(
                &GroupResource::new("policy", "poddisruptionbudget"),
                &name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            return Err(too_many_requests(
                0,
                format!(
                    "The disruption budget {name} needs {} healthy pods and has {} currently",
                    int_at(status, &["desiredHealthy"]),
                    int_at(status, &["currentHealthy"])
                ),
            ));
        }
        if dry_run {
            return Ok(());
        }
        let mut updated = budget.clone();
        let now = self.now();
        let observed = int_at(status, &["observedGeneration"]);
        let status = updated.entry("status").or_insert_with(|| json!({}));
        if !status.is_object() {
            *status = json!({});
        }
        status["disruptionsAllowed"] = Value::from(allowed - 1);
        if allowed - 1 == 0 {
            set_disruption_allowed_false(status, observed, &now);
        }
        if !status["disruptedPods"].is_object() {
            status["disruptedPods"] = json!({});
        }
        status["disruptedPods"][call.name()] = now;
        updated.insert("apiVersion".into(), Value::from("policy/v1"));
        updated.insert("kind".into(), Value::from("PodDisruptionBudget"));
        let path = format!(
            "/apis/policy/v1/namespaces/{}/poddisruptionbudgets/{name}/status",
            call.namespace().unwrap_or("")
        );
        let reply = self.serve_internal(
            None,
            InternalRequest {
                method: Method::PUT,
                path: &path,
                query: "",
                content_type: "application/json",
                user_agent: LOOPBACK_AGENT,
                body: serde_json::to_vec(&Value::Object(updated)).unwrap_or_default(),
            },
        );
        if reply.status >= 300 {
            return Err(error_of_reply(&reply));
        }
        Ok(())
    }

    /// `addConditionAndDeletePod`: the `DisruptionTarget` condition written through the status
    /// store (unless a dry run), then the delete with the eviction's options.
    fn condition_and_delete(
        &mut self,
        call: &Call<'_>,
        mut options: DeleteOptions,
    ) -> Result<Reply, ApiError> {
        let resource = call.rt.group_resource();
        let key = object_key(call.namespace(), call.name());
        if !options.dry_run() {
            let Some((mut pod, _)) = self.load_typed(call)? else {
                return Err(ApiError::not_found(&resource, call.name()));
            };
            check_pod_preconditions(&pod, call.name(), &options)?;
            let now = self.now();
            let changed = update_pod_condition(
                &mut pod,
                json!({
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "EvictionByEvictionAPI",
                    "message": "Eviction API: evicting",
                }),
                &now,
            );
            if changed {
                let path = format!(
                    "/api/v1/namespaces/{}/pods/{}/status",
                    call.namespace().unwrap_or(""),
                    call.name()
                );
                let reply = self.serve_internal(
                    None,
                    InternalRequest {
                        method: Method::PUT,
                        path: &path,
                        query: "",
                        content_type: "application/json",
                        user_agent: call.user_agent,
                        body: serde_json::to_vec(&Value::Object(pod)).unwrap_or_default(),
                    },
                );
                if reply.status >= 300 {
                    return Err(error_of_reply(&reply));
                }
                if !rv_unset(&options)
                    && let Some(stored) = self.store.get(&resource, &key)
                {
                    // The condition's write moved the version the precondition names.
                    let revision = stored.revision.to_string();
                    set_precondition_rv(&mut options, &revision);
                }
            }
        }
        self.delete_one(&call.rt, call.namespace(), call.name(), &options)?;
        Ok(Reply::json(201, success()))
    }
}

/// The eviction's `deleteOptions`, or the empty options.
fn delete_options(eviction: &Object) -> Result<DeleteOptions, ApiError> {
    match eviction.get("deleteOptions") {
        None | Some(Value::Null) => Ok(DeleteOptions::default()),
        Some(value) => {
            let mut value = value.clone();
            if let Value::Object(map) = &mut value {
                map.retain(|_, v| !v.is_null());
            }
            recon_apimachinery::json::from_value(value).map_err(|e| {
                ApiError::bad_request(format!(
                    "Eviction in version \"v1\" cannot be handled as a Eviction: {e}"
                ))
            })
        }
    }
}

/// `propagateDryRun`: the request's `dryRun` goes to options that have none; two different
/// ones are refused.
fn propagate_dry_run(call: &Call<'_>, options: &mut DeleteOptions) -> Result<(), ApiError> {
    let query: Vec<String> = call.query.all("dryRun").map(str::to_owned).collect();
    if options.dry_run.is_empty() {
        options.dry_run = query;
        return Ok(());
    }
    if query.is_empty() || query == options.dry_run {
        return Ok(());
    }
    Err(ApiError::internal_unknown(format!(
        "Non-matching dry-run options in request and content: [{}] and [{}]",
        query.join(" "),
        options.dry_run.join(" ")
    )))
}

fn rv_unset(options: &DeleteOptions) -> bool {
    options
        .preconditions
        .as_ref()
        .is_none_or(|p| p.resource_version.is_none())
}

fn set_precondition_rv(options: &mut DeleteOptions, rv: &str) {
    options
        .preconditions
        .get_or_insert_with(Preconditions::default)
        .resource_version = Some(rv.to_owned());
}

/// The preconditions as the eviction's own read of the pod checks them (`getLatestPod`).
fn check_pod_preconditions(
    pod: &Object,
    name: &str,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let Some(pre) = &options.preconditions else {
        return Ok(());
    };
    let resource = GroupResource::new("", "Pod");
    let uid = meta_str(pod, "uid");
    if let Some(want) = pre.uid.as_deref().filter(|u| !u.is_empty())
        && want != uid
    {
        return Err(ApiError::conflict(
            &resource,
            name,
            &format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    let rv = meta_str(pod, "resourceVersion");
    if let Some(want) = pre.resource_version.as_deref().filter(|r| !r.is_empty())
        && want != rv
    {
        return Err(ApiError::conflict(
            &resource,
            name,
            &format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            ),
        ));
    }
    Ok(())
}

/// `podutil.IsPodReady`.
fn pod_ready(pod: &Object) -> bool {
    pod.get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| str_at(Some(c), &["type"]) == "Ready" && str_at(Some(c), &["status"]) == "True")
}

/// `podutil.UpdatePodCondition`: adds `condition` or updates the one of its type; the
/// transition time moves only when the status does. Returns whether anything changed.
pub(crate) fn update_pod_condition(pod: &mut Object, mut condition: Value, now: &Value) -> bool {
    let status = pod.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return false;
    };
    let kind = str_at(Some(&condition), &["type"]).to_owned();
    match conditions
        .iter_mut()
        .find(|c| str_at(Some(c), &["type"]) == kind)
    {
        None => {
            condition["lastTransitionTime"] = now.clone();
            conditions.push(condition);
            true
        }
        Some(old) => {
            let same_status = old.get("status") == condition.get("status");
            condition["lastTransitionTime"] = if same_status {
                old.get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(Value::Null)
            } else {
                now.clone()
            };
            if let Some(probe) = old.get("lastProbeTime") {
                condition["lastProbeTime"] = probe.clone();
            }
            let changed = ["status", "reason", "message", "lastTransitionTime"]
                .iter()
                .any(|k| old.get(*k) != condition.get(*k));
            *old = condition;
            changed
        }
    }
}

/// `pdbhelper.UpdateDisruptionAllowedCondition` for a budget allowing no more disruption.
fn set_disruption_allowed_false(status: &mut Value, observed: i64, now: &Value) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    let wanted = json!({
        "type": "DisruptionAllowed",
        "status": "False",
        "reason": "InsufficientPods",
        "message": "",
        "observedGeneration": observed,
        "lastTransitionTime": now,
    });
    match conditions
        .iter_mut()
        .find(|c| str_at(Some(c), &["type"]) == "DisruptionAllowed")
    {
        None => conditions.push(wanted),
        Some(old) => {
            let time = if str_at(Some(old), &["status"]) == "False" {
                old.get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(now.clone())
            } else {
                now.clone()
            };
            *old = wanted;
            old["lastTransitionTime"] = time;
        }
    }
}

/// `errors.NewTooManyRequests` with the `DisruptionBudget` cause.
fn too_many_requests(retry_after: u32, cause: String) -> ApiError {
    ApiError::new(
        429,
        Reason::TooManyRequests,
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    .with_details(StatusDetails {
        causes: vec![StatusCause {
            reason: DISRUPTION_BUDGET_CAUSE.to_owned(),
            message: cause,
            field: String::new(),
        }],
        retry_after_seconds: (retry_after > 0).then_some(retry_after),
        ..StatusDetails::default()
    })
}

/// The error an internal write answered, as this request's own.
pub(crate) fn error_of_reply(reply: &Reply) -> ApiError {
    let body: Value = serde_json::from_slice(&reply.body.to_bytes()).unwrap_or(Value::Null);
    let reason = str_at(Some(&body), &["reason"])
        .parse()
        .unwrap_or(Reason::Unknown);
    let mut err = ApiError::new(reply.status, reason, str_at(Some(&body), &["message"]));
    if let Some(details) = body.get("details") {
        let causes = details
            .get("causes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| StatusCause {
                reason: str_at(Some(c), &["reason"]).to_owned(),
                message: str_at(Some(c), &["message"]).to_owned(),
                field: str_at(Some(c), &["field"]).to_owned(),
            })
            .collect();
        err = err.with_details(StatusDetails {
            name: str_at(Some(details), &["name"]).to_owned(),
            group: str_at(Some(details), &["group"]).to_owned(),
            kind: str_at(Some(details), &["kind"]).to_owned(),
            uid: str_at(Some(details), &["uid"]).to_owned(),
            causes,
            retry_after_seconds: None,
        });
    }
    err
}
