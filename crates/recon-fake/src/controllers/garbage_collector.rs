//! kube-controller-manager's garbage collector (`pkg/controller/garbagecollector`), as one
//! synchronous pass over every stored object (O1–O3). The real one reacts to watch events; a
//! pass looks at everything, which reaches the same state, since each step below is what
//! `attemptToDeleteItem` / `attemptToOrphanWorker` do for an object whatever queued it.
//!
//! - `attemptToOrphanWorker`: an object being deleted with the `orphan` finalizer has the owner
//!   references to it removed from its dependents, then loses the finalizer.
//! - `attemptToDeleteItem`: an object being deleted is left alone, unless it waits for its
//!   dependents (`foregroundDeletion`): then it loses that finalizer once no dependent blocks it
//!   (`processDeletingDependentsItem`). Otherwise its owner references are classified
//!   (`classifyReferences`): solid (the owner exists), dangling (no owner of that name, or one
//!   with another uid), or waiting (the owner is being deleted in the foreground). With a solid
//!   owner, dangling and waiting references are removed; without one, the object is deleted.

use std::collections::HashMap;

use recon_apimachinery::json::{Map, Value};

use super::client::{Controller, Target, refusal};
use super::report::{GcAction, Propagation};
use crate::registry::resource::ResourceType;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::object::{Object, finalizers, is_terminating, meta_str, meta_value};

/// `metav1.FinalizerOrphanDependents`.
pub(crate) const ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Clone)]
struct OwnerRef {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    block_owner_deletion: bool,
}

fn owner_refs(obj: &Object) -> Vec<OwnerRef> {
    let text = |r: &Value, k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    meta_value(obj, "ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| OwnerRef {
            api_version: text(r, "apiVersion"),
            kind: text(r, "kind"),
            name: text(r, "name"),
            uid: text(r, "uid"),
            block_owner_deletion: r.get("blockOwnerDeletion").and_then(Value::as_bool)
                == Some(true),
        })
        .collect()
}

/// `ownerReferences` without the entries whose uid is in `uids`; `null` when none is left (a
/// merge patch then removes the field).
fn without_owners(obj: &Object, uids: &[String]) -> Value {
    let kept: Vec<Value> = meta_value(obj, "ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| {
            !uids
                .iter()
                .any(|u| r.get("uid").and_then(Value::as_str) == Some(u))
        })
        .cloned()
        .collect();
    if kept.is_empty() {
        Value::Null
    } else {
        Value::Array(kept.into())
    }
}

/// How `classifyReferences` sees an object's owners.
#[derive(Debug, Default)]
struct Classified {
    solid: Vec<OwnerRef>,
    dangling: Vec<OwnerRef>,
    waiting: Vec<OwnerRef>,
}

/// The graph builder's dependents: for each uid, the objects naming it as an owner (whatever
/// their namespace: the graph is keyed by uid only).
#[derive(Debug, Default)]
struct Graph {
    dependents: HashMap<String, Vec<Target>>,
}

impl Graph {
    fn build(items: &[Target]) -> Self {
        let mut graph = Graph::default();
        for item in items {
            for owner in owner_refs(&item.obj) {
                graph
                    .dependents
                    .entry(owner.uid)
                    .or_default()
                    .push(item.clone());
            }
        }
        graph
    }

    fn dependents_of(&self, uid: &str) -> &[Target] {
        self.dependents.get(uid).map_or(&[], Vec::as_slice)
    }
}

/// Whether the garbage collector watches `rt`: every type but Events (`DefaultIgnoredResources`).
fn monitored(rt: &ResourceType) -> bool {
    !(rt.plural == "events" && matches!(rt.group.as_str(), "" | "events.k8s.io"))
}

fn has_finalizer(obj: &Object, finalizer: &str) -> bool {
    finalizers(obj).iter().any(|f| f == finalizer)
}

/// `isDeletingDependents`: being deleted, in the foreground.
fn deleting_dependents(obj: &Object) -> bool {
    is_terminating(obj) && has_finalizer(obj, FOREGROUND)
}

impl State {
    /// One pass of the garbage collector over every monitored object.
    pub(crate) fn garbage_collector_pass(&mut self, actions: &mut Vec<GcAction>) {
        let items: Vec<Target> = self
            .registry
            .all()
            .iter()
            .filter(|rt| monitored(rt))
            .flat_map(|rt| self.known_targets(rt, None))
            .collect();
        let graph = Graph::build(&items);
        for item in &items {
            if let Some(item) = self.reload(&item.rt, &item.key, item.uid())
                && is_terminating(&item.obj)
                && has_finalizer(&item.obj, ORPHAN)
            {
                self.attempt_to_orphan(&item, &graph, actions);
            }
            if let Some(item) = self.reload(&item.rt, &item.key, item.uid()) {
                self.attempt_to_delete_item(&item, &graph, actions);
            }
        }
    }

    /// `attemptToOrphanWorker`: the dependents stop referencing `owner`, then `orphan` goes.
    fn attempt_to_orphan(&mut self, owner: &Target, graph: &Graph, actions: &mut Vec<GcAction>) {
        let uids = [owner.uid().to_owned()];
        let mut all_done = true;
        for dependent in self.dependents(owner, graph) {
            // `orphanDependents` ignores NotFound.
            all_done &= self.remove_owner_references(&dependent, &uids, NotFound::Done, actions);
        }
        if all_done {
            self.remove_finalizer(owner, ORPHAN, actions);
        }
    }

    /// `attemptToDeleteItem`.
    fn attempt_to_delete_item(
        &mut self,
        item: &Target,
        graph: &Graph,
        actions: &mut Vec<GcAction>,
    ) {
        if is_terminating(&item.obj) {
            // "Being deleted" is a one-way trip; only a foreground deletion needs the collector.
            if has_finalizer(&item.obj, FOREGROUND) {
                self.process_deleting_dependents(item, graph, actions);
            }
            return;
        }
        let refs = owner_refs(&item.obj);
        if refs.is_empty() {
            return;
        }
        // An unresolvable reference (unknown kind, or a namespaced owner of a cluster-scoped
        // object) makes the real collector retry the object forever: it is never collected.
        let Some(classified) = self.classify_references(item, refs) else {
            return;
        };
        if !classified.solid.is_empty() {
            let gone: Vec<String> = classified
                .dangling
                .iter()
                .chain(&classified.waiting)
                .map(|r| r.uid.clone())
                .collect();
            if !gone.is_empty() {
                self.remove_owner_references(item, &gone, NotFound::Failed, actions);
            }
        } else if !classified.waiting.is_empty() && !self.dependents(item, graph).is_empty() {
            if self.has_dependent_deleting_dependents(item, graph) {
                self.unblock_owner_references(item, actions);
            }
            let item = self.reload(&item.rt, &item.key, item.uid());
            if let Some(item) = item {
                self.delete_dependent(&item, Propagation::Foreground, actions);
            }
        } else {
            // No live owner: delete with the policy the object's own finalizers ask for.
            let propagation = if has_finalizer(&item.obj, ORPHAN) {
                Propagation::Orphan
            } else if has_finalizer(&item.obj, FOREGROUND) {
                Propagation::Foreground
            } else {
                Propagation::Background
            };
            self.delete_dependent(item, propagation, actions);
        }
    }

    /// `classifyReferences`; `None` when a reference cannot be resolved (`isDangling`'s errors).
    fn classify_references(&self, item: &Target, refs: Vec<OwnerRef>) -> Option<Classified> {
        let mut classified = Classified::default();
        for reference in refs {
            match self.live_owner(item, &reference)? {
                None => classified.dangling.push(reference),
                Some(owner) if deleting_dependents(&owner) => classified.waiting.push(reference),
                Some(_) => classified.solid.push(reference),
            }
        }
        Some(classified)
    }

    /// `isDangling`: the owner a reference names, looked up by name where it must live (the
    /// dependent's namespace for a namespaced owner, so an owner in another namespace is absent,
    /// O2), `Some(None)` when absent or of another uid.
    fn live_owner(&self, item: &Target, reference: &OwnerRef) -> Option<Option<Object>> {
        let (group, version) = reference
            .api_version
            .split_once('/')
            .unwrap_or(("", &reference.api_version));
        let owner_rt = self.registry.find_kind(group, version, &reference.kind)?;
        if owner_rt.namespaced && item.namespace().is_none() {
            // `namespacedOwnerOfClusterScopedObjectErr`: cluster-scoped objects cannot have
            // namespaced owners; the object is left alone.
            return None;
        }
        let namespace = if owner_rt.namespaced {
            item.namespace()
        } else {
            None
        };
        let owner = match self.load(&owner_rt, &object_key(namespace, &reference.name)) {
            Ok(owner) => owner.map(|(owner, _)| owner),
            Err(e) => {
                // `isDangling`'s GET fails: the item is retried later, so left alone now.
                tracing::warn!(error = %e, "garbage collector cannot read an owner");
                return None;
            }
        };
        Some(owner.filter(|owner| meta_str(owner, "uid") == reference.uid))
    }

    /// `item`'s dependents as stored now (the graph is the pass's snapshot).
    fn dependents(&self, item: &Target, graph: &Graph) -> Vec<Target> {
        graph
            .dependents_of(item.uid())
            .iter()
            .filter_map(|d| self.reload(&d.rt, &d.key, d.uid()))
            .filter(|d| owner_refs(&d.obj).iter().any(|r| r.uid == item.uid()))
            .collect()
    }

    /// Whether one of `item`'s dependents is itself deleting its dependents (the cycle check of
    /// `attemptToDeleteItem`).
    fn has_dependent_deleting_dependents(&self, item: &Target, graph: &Graph) -> bool {
        self.dependents(item, graph)
            .iter()
            .any(|d| deleting_dependents(&d.obj))
    }

    /// `processDeletingDependentsItem`: once no dependent blocks `item` (`blockingDependents`),
    /// `foregroundDeletion` goes. (The dependents themselves are collected as items of the pass.)
    fn process_deleting_dependents(
        &mut self,
        item: &Target,
        graph: &Graph,
        actions: &mut Vec<GcAction>,
    ) {
        let blocked = self.dependents(item, graph).iter().any(|d| {
            owner_refs(&d.obj)
                .iter()
                .any(|r| r.uid == item.uid() && r.block_owner_deletion)
        });
        if !blocked {
            self.remove_finalizer(item, FOREGROUND, actions);
        }
    }

    /// `deleteObject`: a DELETE with a uid precondition and `propagation`.
    fn delete_dependent(
        &mut self,
        item: &Target,
        propagation: Propagation,
        actions: &mut Vec<GcAction>,
    ) {
        let reply =
            self.controller_delete(Controller::GarbageCollector, item, propagation.as_str());
        let removed = self.is_removed(item);
        // A delete that finds nothing enqueues a virtual delete event: nothing to retry.
        record(item, &reply, NotFound::Done, actions, || {
            GcAction::Deleted {
                object: item.id(),
                propagation,
                removed,
            }
        });
    }

    /// The owner references to `uids` removed from `item` (`deleteOwnerRefJSONMergePatch`;
    /// for built-in kinds the real collector sends the equivalent strategic merge patch first).
    /// Returns whether the write went through.
    fn remove_owner_references(
        &mut self,
        item: &Target,
        uids: &[String],
        not_found: NotFound,
        actions: &mut Vec<GcAction>,
    ) -> bool {
        let mut metadata = Map::new();
        metadata.insert("ownerReferences".into(), without_owners(&item.obj, uids));
        let reply = self.controller_patch_metadata(Controller::GarbageCollector, item, metadata);
        record(item, &reply, not_found, actions, || {
            GcAction::OwnerReferencesRemoved {
                object: item.id(),
                owners: uids.to_vec(),
            }
        })
    }

    /// `unblockOwnerReferences`: `blockOwnerDeletion: false` wherever it was true.
    fn unblock_owner_references(&mut self, item: &Target, actions: &mut Vec<GcAction>) {
        let refs: Vec<Value> = meta_value(&item.obj, "ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| {
                let mut r = r.clone();
                if r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true)
                    && let Some(map) = r.as_object_mut()
                {
                    map.insert("blockOwnerDeletion".into(), Value::Bool(false));
                }
                r
            })
            .collect();
        let mut metadata = Map::new();
        metadata.insert("ownerReferences".into(), Value::Array(refs.into()));
        let reply = self.controller_patch_metadata(Controller::GarbageCollector, item, metadata);
        record(item, &reply, NotFound::Failed, actions, || {
            GcAction::OwnerReferencesUnblocked { object: item.id() }
        });
    }

    /// `removeFinalizer`: a merge patch of the finalizers without `finalizer`, locked on the
    /// resourceVersion read. The store deletes the object if that was its last finalizer.
    fn remove_finalizer(&mut self, item: &Target, finalizer: &str, actions: &mut Vec<GcAction>) {
        let rest: Vec<Value> = finalizers(&item.obj)
            .into_iter()
            .filter(|f| f != finalizer)
            .map(Value::String)
            .collect();
        let mut metadata = Map::new();
        let list = if rest.is_empty() {
            Value::Null
        } else {
            Value::Array(rest.into())
        };
        metadata.insert("finalizers".into(), list);
        let reply = self.controller_patch_metadata(Controller::GarbageCollector, item, metadata);
        let removed = self.is_removed(item);
        record(item, &reply, NotFound::Failed, actions, || {
            GcAction::FinalizerRemoved {
                object: item.id(),
                finalizer: finalizer.to_owned(),
                removed,
            }
        });
    }
}

/// What a 404 answer to a controller write means to the collector. (The objects written were
/// just read, so in the fake a 404 is the strict-namespaces NotFound of a namespace that is gone.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotFound {
    /// Ignored: nothing was written, nothing is retried.
    Done,
    /// An error the real collector retries: reported as a failure.
    Failed,
}

/// Reports a controller write: `done` when it went through, a failure when refused (a 404 as
/// `not_found` says). Returns whether the controller may go on.
fn record(
    item: &Target,
    reply: &Reply,
    not_found: NotFound,
    actions: &mut Vec<GcAction>,
    done: impl FnOnce() -> GcAction,
) -> bool {
    match reply.status {
        200..=299 => actions.push(done()),
        404 if not_found == NotFound::Done => {}
        _ => {
            actions.push(GcAction::Failed {
                object: item.id(),
                error: refusal(reply),
            });
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::registry::Registry;

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn events_are_not_monitored_as_default_ignored_resources_says() {
        let types = Registry::with_builtins().all();
        let watched: Vec<&str> = types
            .iter()
            .filter(|rt| monitored(rt))
            .map(|rt| rt.plural.as_str())
            .collect();
        assert!(!watched.contains(&"events"));
        assert!(watched.contains(&"configmaps"));
    }

    #[test]
    fn removing_the_last_owner_reference_clears_the_field() {
        let o = obj(json!({"metadata": {"ownerReferences": [
            {"uid": "a", "name": "x"}, {"uid": "b", "name": "y"}]}}));
        assert_eq!(
            without_owners(&o, &["a".into()]),
            json!([{"uid": "b", "name": "y"}])
        );
        assert_eq!(without_owners(&o, &["a".into(), "b".into()]), Value::Null);
    }

    #[test]
    fn only_an_explicit_true_blocks_owner_deletion() {
        let o = obj(json!({"metadata": {"ownerReferences": [
            {"uid": "a", "blockOwnerDeletion": true}, {"uid": "b", "blockOwnerDeletion": false},
            {"uid": "c"}]}}));
        let blocking: Vec<bool> = owner_refs(&o)
            .iter()
            .map(|r| r.block_owner_deletion)
            .collect();
        assert_eq!(blocking, [true, false, false]);
    }
}
