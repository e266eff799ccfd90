//! kube-controller-manager's namespace controller (`pkg/controller/namespace/deletion`,
//! `namespacedResourcesDeleter.Delete`), for every Namespace with a `deletionTimestamp`:
//!
//! 1. `updateNamespaceStatusFunc`: phase `Terminating` if it is not yet.
//! 2. Nothing more once `spec.finalizers` is empty (`finalized`).
//! 3. `deleteAllContent`: a Background DeleteCollection of every namespaced type in the
//!    namespace, then what remains is counted into the deletion conditions
//!    (`namespaceConditionUpdater`), written with an UpdateStatus when they change.
//! 4. When nothing remains, `finalizeNamespace`: `kubernetes` is removed from `spec.finalizers`
//!    through `/finalize`, and the registry deletes the namespace if no finalizer is left.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::client::{Controller, Target, refusal};
use super::report::GcAction;
use crate::registry::resource::ResourceType;
use crate::request::reply::Reply;
use crate::state::State;
use crate::wire::object::{Object, finalizers, is_terminating, meta_str, strings};

/// The namespace controller's finalizer token (`v1.FinalizerKubernetes`).
const FINALIZER_TOKEN: &str = "kubernetes";
/// `finalizerEstimateSeconds`: how long content with finalizers is expected to take.
const FINALIZER_ESTIMATE_SECONDS: i64 = 15;

/// The conditions the controller maintains, in its `conditionTypes` order, with the reason and
/// message of their "nothing wrong" (False) variant.
const CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// What `deleteAllContent` found after deleting.
#[derive(Debug, Default)]
struct Remaining {
    /// `gvrToNumRemaining`, as the condition words it: `"configmaps." -> 2`.
    resources: BTreeMap<String, usize>,
    /// `finalizersToNumRemaining`.
    finalizers: BTreeMap<String, usize>,
    /// Errors of the content deletion (`ProcessDeleteContentErr`).
    errors: Vec<String>,
    /// The largest estimate, in seconds, of how long the content takes to go.
    estimate: i64,
}

impl Remaining {
    /// Whether the namespace may be finalized: `deleteAllContent` returned no error and no
    /// estimate.
    fn done(&self) -> bool {
        self.errors.is_empty() && self.estimate == 0
    }

    /// The conditions `updateConditions` would set, in the controller's order: the True variant
    /// where something is wrong, else the False ("nothing wrong") one.
    fn conditions(&self) -> Vec<Condition> {
        CONDITIONS
            .iter()
            .map(|(kind, ok_reason, ok_message)| match self.failing(kind) {
                Some((reason, message)) => Condition {
                    kind,
                    status: "True",
                    reason,
                    message,
                },
                None => Condition {
                    kind,
                    status: "False",
                    reason: ok_reason,
                    message: (*ok_message).to_owned(),
                },
            })
            .collect()
    }

    /// The reason and message of condition `kind`'s True variant, if it applies
    /// (`ProcessContentTotals`, `makeDeleteContentCondition`).
    fn failing(&self, kind: &str) -> Option<(&'static str, String)> {
        match kind {
            "NamespaceDeletionContentFailure" if !self.errors.is_empty() => {
                let mut errors = self.errors.clone();
                errors.sort();
                let message = format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    errors.len(),
                    errors.join(", ")
                );
                Some(("ContentDeletionFailed", message))
            }
            "NamespaceContentRemaining" if !self.resources.is_empty() => Some((
                "SomeResourcesRemain",
                format!(
                    "Some resources are remaining: {}",
                    counts(&self.resources, "has")
                ),
            )),
            "NamespaceFinalizersRemaining" if !self.finalizers.is_empty() => Some((
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    counts(&self.finalizers, "in")
                ),
            )),
            _ => None,
        }
    }
}

/// One `NamespaceCondition` as the controller computes it (its time is set when written).
struct Condition {
    kind: &'static str,
    status: &'static str,
    reason: &'static str,
    message: String,
}

/// `"<key> <verb> <n> resource instances"` per entry, sorted (as Go sorts the strings), joined.
fn counts(map: &BTreeMap<String, usize>, verb: &str) -> String {
    let mut parts: Vec<String> = map
        .iter()
        .map(|(key, n)| format!("{key} {verb} {n} resource instances"))
        .collect();
    parts.sort();
    parts.join(", ")
}

fn phase(obj: &Object) -> &str {
    obj.get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn spec_finalizers(obj: &Object) -> Vec<String> {
    strings(obj.get("spec").and_then(|s| s.get("finalizers")))
}

fn timestamp(obj: &Object, field: &str) -> Option<Timestamp> {
    meta_str(obj, field).parse().ok()
}

impl State {
    /// One pass of the namespace controller over every terminating Namespace.
    pub(crate) fn namespace_controller_pass(&mut self, actions: &mut Vec<GcAction>) {
        let Some(namespaces) = self.registry.get("", "namespaces") else {
            return;
        };
        for ns in self.known_targets(&namespaces, None) {
            if is_terminating(&ns.obj) {
                self.sync_namespace(ns, actions);
            }
        }
    }

    /// `namespacedResourcesDeleter.Delete` for one namespace.
    fn sync_namespace(&mut self, ns: Target, actions: &mut Vec<GcAction>) {
        let ns = if phase(&ns.obj) == "Terminating" {
            ns
        } else {
            // `updateNamespaceStatusFunc`.
            let mut object = ns.typed();
            object.insert("status".into(), json!({"phase": "Terminating"}));
            match self.update_namespace_status(&ns, object, actions) {
                Some(ns) => ns,
                None => return,
            }
        };
        if spec_finalizers(&ns.obj).is_empty() {
            return;
        }
        let remaining = self.delete_all_content(&ns, actions);
        let Some(ns) = self.update_deletion_conditions(ns, &remaining, actions) else {
            return;
        };
        if remaining.done() {
            self.finalize_namespace(&ns, actions);
        }
    }

    /// `deleteAllContent`: every namespaced type with objects in the namespace is deleted as a
    /// collection, then what remains is counted.
    fn delete_all_content(&mut self, ns: &Target, actions: &mut Vec<GcAction>) -> Remaining {
        let mut remaining = Remaining::default();
        let name = ns.name().to_owned();
        for rt in self.registry.all().into_iter().filter(|rt| rt.namespaced) {
            let before = match self.targets(&rt, Some(&name)) {
                Ok(before) => before,
                // The type's list fails (`deleteAllContentForGroupVersionResource` returns
                // the error): kept, the namespace waits, the other types go on.
                Err(e) => {
                    remaining.errors.push(e.go_message);
                    continue;
                }
            };
            if before.is_empty() {
                continue;
            }
            let estimate = self.graceful_termination_estimate(&rt, &before, ns);
            let reply = self.controller_delete_collection(&rt, &name);
            // `deleteCollection` treats NotFound and MethodNotSupported as "not supported".
            if !(200..300).contains(&reply.status) && !matches!(reply.status, 404 | 405) {
                remaining.errors.push(refusal(&reply).message().to_owned());
            }
            self.report_content_deleted(&before, actions);
            self.count_remaining(&rt, &name, estimate, &mut remaining);
        }
        remaining
    }

    /// One action per object the DeleteCollection changed (an object already terminating is
    /// left as it was).
    fn report_content_deleted(&self, before: &[Target], actions: &mut Vec<GcAction>) {
        for target in before {
            let now = self.reload(&target.rt, &target.key, target.uid());
            let unchanged = now.as_ref().is_some_and(|n| {
                meta_str(&n.obj, "resourceVersion") == meta_str(&target.obj, "resourceVersion")
            });
            if !unchanged {
                actions.push(GcAction::NamespaceContentDeleted {
                    object: target.id(),
                    removed: now.is_none(),
                });
            }
        }
    }

    /// `deleteAllContentForGroupVersionResource`'s count of what is left of `rt`.
    fn count_remaining(
        &self,
        rt: &Arc<ResourceType>,
        namespace: &str,
        estimate: i64,
        remaining: &mut Remaining,
    ) {
        let left = match self.targets(rt, Some(namespace)) {
            Ok(left) => left,
            Err(e) => {
                remaining.errors.push(e.go_message);
                return;
            }
        };
        if left.is_empty() {
            return;
        }
        let resource = format!("{}.{}", rt.plural, rt.group);
        *remaining.resources.entry(resource).or_default() += left.len();
        let mut with_finalizers = false;
        for target in &left {
            for finalizer in finalizers(&target.obj) {
                with_finalizers = true;
                *remaining.finalizers.entry(finalizer).or_default() += 1;
            }
        }
        if estimate > 0 {
            remaining.estimate = remaining.estimate.max(estimate);
        } else if with_finalizers {
            remaining.estimate = remaining.estimate.max(FINALIZER_ESTIMATE_SECONDS);
        } else {
            let version = rt.versions.first().map_or("", |v| v.name.as_str());
            remaining.errors.push(format!(
                "unexpected items still remain in namespace: {namespace} for gvr: {}/{version}, Resource={}",
                rt.group, rt.plural
            ));
        }
    }

    /// `estimateGracefulTermination`: for Pods, the longest `terminationGracePeriodSeconds` of
    /// those not yet finished, unless that long has passed since the namespace's deletion.
    fn graceful_termination_estimate(
        &self,
        rt: &ResourceType,
        objects: &[Target],
        ns: &Target,
    ) -> i64 {
        if !rt.group.is_empty() || rt.plural != "pods" {
            return 0;
        }
        let estimate = objects
            .iter()
            .filter(|p| !matches!(phase(&p.obj), "Succeeded" | "Failed"))
            .filter_map(|p| {
                p.obj
                    .get("spec")
                    .and_then(|s| s.get("terminationGracePeriodSeconds"))
                    .and_then(Value::as_i64)
            })
            .max()
            .unwrap_or(0);
        let elapsed = timestamp(&ns.obj, "deletionTimestamp")
            .map_or(0, |deleted| (self.clock.now() - deleted).get_seconds());
        if elapsed >= estimate { 0 } else { estimate }
    }

    /// `namespaceConditionUpdater.Update` and the UpdateStatus that follows when it changed
    /// something; returns the namespace as stored afterwards.
    fn update_deletion_conditions(
        &mut self,
        ns: Target,
        remaining: &Remaining,
        actions: &mut Vec<GcAction>,
    ) -> Option<Target> {
        let ns = self.reload(&ns.rt, &ns.key, ns.uid())?;
        let mut object = ns.typed();
        if !self.merge_conditions(&mut object, remaining) {
            return Some(ns);
        }
        self.update_namespace_status(&ns, object, actions)
    }

    /// `updateConditions`: each maintained condition added if missing, or updated in place (its
    /// transition time moving only when its status changes); returns whether anything changed.
    fn merge_conditions(&self, object: &mut Object, remaining: &Remaining) -> bool {
        let now = self.now();
        let status = object.entry("status").or_insert_with(|| json!({}));
        let Some(status) = status.as_object_mut() else {
            return false;
        };
        let list = status.entry("conditions").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        let Some(list) = list.as_array_mut() else {
            return false;
        };
        let mut changed = false;
        for condition in remaining.conditions() {
            let wanted = json!({"type": condition.kind, "status": condition.status,
                                "reason": condition.reason, "message": condition.message});
            match list.iter_mut().find(|c| c["type"] == condition.kind) {
                None => {
                    let mut condition = wanted;
                    condition["lastTransitionTime"] = now.clone();
                    list.push(condition);
                    changed = true;
                }
                Some(old) => {
                    let same = ["status", "reason", "message"]
                        .iter()
                        .all(|k| old.get(*k) == wanted.get(*k));
                    if same {
                        continue;
                    }
                    if old.get("status") != wanted.get("status") {
                        old["lastTransitionTime"] = now.clone();
                    }
                    for k in ["status", "reason", "message"] {
                        old[k] = wanted[k].clone();
                    }
                    changed = true;
                }
            }
        }
        changed
    }

    /// UpdateStatus of the namespace with `object`; the namespace as stored afterwards.
    fn update_namespace_status(
        &mut self,
        ns: &Target,
        object: Object,
        actions: &mut Vec<GcAction>,
    ) -> Option<Target> {
        let reply = self.controller_put(Controller::Namespace, ns, "status", object);
        self.record_namespace_write(ns, &reply, actions, || GcAction::NamespaceStatusUpdated {
            namespace: ns.id(),
        });
        self.reload(&ns.rt, &ns.key, ns.uid())
    }

    /// `finalizeNamespace`: `spec.finalizers` without `kubernetes` (sorted, as Go's string
    /// set), through `/finalize`.
    fn finalize_namespace(&mut self, ns: &Target, actions: &mut Vec<GcAction>) {
        let mut rest: Vec<String> = spec_finalizers(&ns.obj)
            .into_iter()
            .filter(|f| f != FINALIZER_TOKEN)
            .collect();
        rest.sort();
        rest.dedup();
        let mut object = ns.typed();
        let spec = object.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            if rest.is_empty() {
                spec.remove("finalizers");
            } else {
                spec.insert("finalizers".into(), json!(rest));
            }
        }
        let reply = self.controller_put(Controller::Namespace, ns, "finalize", object);
        let removed = self.is_removed(ns);
        self.record_namespace_write(ns, &reply, actions, || GcAction::NamespaceFinalized {
            namespace: ns.id(),
            removed,
        });
    }

    fn record_namespace_write(
        &self,
        ns: &Target,
        reply: &Reply,
        actions: &mut Vec<GcAction>,
        done: impl FnOnce() -> GcAction,
    ) {
        actions.push(if (200..300).contains(&reply.status) {
            done()
        } else {
            GcAction::Failed {
                object: ns.id(),
                error: refusal(reply),
            }
        });
    }
}
