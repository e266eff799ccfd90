//! Persisting status: the strategies a [`ResourceReconciler`](crate::ResourceReconciler) can
//! write status with, what each one guarantees, and what happens on a conflict.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::status_apply::status_to_apply;
use crate::json::{Collision, merge_diff, three_way};
use crate::object_api::ObjectApi;

/// How status is written: at most once per reconcile, and not at all when it did not change.
///
/// Each strategy has a contract; choose by who else writes this status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StatusStrategy {
    /// `PUT /status` of the whole object as read, with its `resourceVersion`: any write by
    /// anyone since the read is a 409. Safe with concurrent writers; every conflict costs a
    /// retry (see [`ConflictPolicy`]).
    Update,
    /// A JSON merge patch (RFC 7396) of the status fields that changed, with no precondition. Two
    /// things to know:
    /// - a list is replaced whole: a writer that changes `status.conditions` sends the whole
    ///   list it read, and erases a condition another writer added since;
    /// - a field changed here from a stale read overwrites a concurrent writer's value.
    ///
    /// Fine when this reconciler is the only writer of the fields it changes.
    MergePatch,
    /// The merge patch of [`StatusStrategy::MergePatch`] with `metadata.resourceVersion` in its
    /// body: a concurrent write makes it a 409 instead of clobbering. The default.
    #[default]
    MergePatchWithLock,
    /// Server-side apply of status with a field manager. The apply configuration holds only
    /// what this reconciler manages: the status fields this reconcile changed and those its
    /// manager applied before (read from the object's `managedFields`), never another manager's
    /// fields or list entries. So writers of disjoint fields and, with `conditions` declared a
    /// list-map keyed by `type` (`x-kubernetes-list-type: map`), of disjoint conditions coexist
    /// without locks, reconcile after reconcile. A field the reconciler stops setting is left
    /// out and the server releases it: removed, unless another manager owns it too.
    ///
    /// Without `force`, changing a field another manager owns is a 409 conflict; `force` takes
    /// over just the fields this reconcile sends. Lists the server merges item by item are sent
    /// in part; any other list (no declared list type: atomic) is sent whole when it changed,
    /// and its one owner is whoever applied it last. The shape of a list is read from
    /// `managedFields` too, so a reader that strips them (see
    /// [`Config::with_api_reader`](crate::Config::with_api_reader)) makes every list atomic and
    /// every field this manager set before look unowned: it is released unless it changed.
    Apply {
        /// The field manager name.
        field_manager: String,
        /// Take ownership of conflicting fields instead of failing.
        force: bool,
    },
}

/// What to do when a status write conflicts with a concurrent write (409).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictPolicy {
    /// Read the object again and re-apply this reconcile's status changes to it (every changed
    /// field, conditions merged by type), up to `attempts` times. Where the other writer changed
    /// the same field differently, nothing is overwritten: the request is requeued.
    Retry {
        /// How many times to re-read and write again.
        attempts: u32,
    },
    /// Requeue the request: the next reconcile starts from the current object.
    Requeue,
}

impl Default for ConflictPolicy {
    fn default() -> Self {
        ConflictPolicy::Retry { attempts: 3 }
    }
}

/// What a status write ended with.
#[derive(Debug)]
pub(crate) enum StatusWrite<R> {
    /// The status did not change: nothing was sent.
    Unchanged,
    /// Written; the object as stored.
    Written(R),
    /// A conflict the policy answers with a requeue.
    Requeue(Option<Collision>),
}

/// `.status` of `resource`, as JSON (`null` when absent).
pub(crate) fn status_json<R: Serialize>(resource: &R) -> Value {
    serde_json::to_value(resource)
        .ok()
        .and_then(|mut v| v.get_mut("status").map(Value::take))
        .unwrap_or(Value::Null)
}

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

/// Writes the status of `desired` (read as `original`) with `strategy`, handling conflicts
/// with `policy`.
pub(crate) async fn write_status<R>(
    client: &kube::Client,
    dyntype: &R::DynamicType,
    strategy: &StatusStrategy,
    policy: ConflictPolicy,
    original: &R,
    desired: &R,
) -> Result<StatusWrite<R>, kube::Error>
where
    R: Resource + Clone + Serialize + DeserializeOwned,
{
    let base_status = status_json(original);
    let desired_status = status_json(desired);
    if base_status == desired_status {
        return Ok(StatusWrite::Unchanged);
    }
    let api = ObjectApi::of(client, dyntype, original);
    let mut current = original.clone();
    let mut target = desired_status.clone();
    let mut attempt = 0;
    loop {
        let err = match send(&api, dyntype, strategy, &current, &target).await {
            Ok(written) => return Ok(StatusWrite::Written(written)),
            Err(err) if is_conflict(&err) => err,
            Err(err) => return Err(err),
        };
        match policy {
            ConflictPolicy::Requeue => return Ok(StatusWrite::Requeue(None)),
            ConflictPolicy::Retry { attempts } if attempt < attempts => attempt += 1,
            ConflictPolicy::Retry { .. } => return Err(err),
        }
        let fresh = api.get().await?;
        let fresh_status = status_json(&fresh);
        match three_way(&base_status, &desired_status, &fresh_status, "status") {
            Ok(merged) if merged == fresh_status => return Ok(StatusWrite::Written(fresh)),
            Ok(merged) => {
                current = fresh;
                target = merged;
            }
            Err(collision) => return Ok(StatusWrite::Requeue(Some(collision))),
        }
    }
}

/// One status request of `strategy`, from `current` (the object the write is based on) to the
/// status `target`.
async fn send<R>(
    api: &ObjectApi<'_, R>,
    dyntype: &R::DynamicType,
    strategy: &StatusStrategy,
    current: &R,
    target: &Value,
) -> Result<R, kube::Error>
where
    R: Resource + Clone + Serialize + DeserializeOwned,
{
    let params = PatchParams::default();
    match strategy {
        StatusStrategy::Update => {
            let mut object = serde_json::to_value(current).map_err(kube::Error::SerdeError)?;
            object["status"] = target.clone();
            let object: R = serde_json::from_value(object).map_err(kube::Error::SerdeError)?;
            api.replace_status(&object).await
        }
        StatusStrategy::MergePatch => {
            let diff = merge_diff(&status_json(current), target).unwrap_or_else(|| json!({}));
            api.patch_status(&params, &Patch::Merge(json!({ "status": diff })))
                .await
        }
        StatusStrategy::MergePatchWithLock => {
            let diff = merge_diff(&status_json(current), target).unwrap_or_else(|| json!({}));
            let body = json!({
                "metadata": {"resourceVersion": current.meta().resource_version},
                "status": diff,
            });
            api.patch_status(&params, &Patch::Merge(body)).await
        }
        StatusStrategy::Apply {
            field_manager,
            force,
        } => {
            let meta = current.meta();
            let mut body = json!({
                "apiVersion": R::api_version(dyntype),
                "kind": R::kind(dyntype),
                "metadata": {"name": meta.name},
            });
            let status = status_to_apply(
                &status_json(current),
                target,
                meta.managed_fields.as_deref(),
                field_manager,
            );
            if let Some(status) = status {
                body["status"] = status;
            }
            if let Some(ns) = &meta.namespace {
                body["metadata"]["namespace"] = json!(ns);
            }
            let mut params = PatchParams::apply(field_manager);
            params.force = *force;
            api.patch_status(&params, &Patch::Apply(body)).await
        }
    }
}
