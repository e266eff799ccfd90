//! DELETE of one object or of a collection: the delete handler, `rest.BeforeDelete` and
//! `Store.Delete` / `Store.DeleteCollection` of kube-apiserver, with finalizers, propagation
//! policies, graceful deletion (Pods) and preconditions.

use bytes::Bytes;
use std::sync::Arc;

use recon_apimachinery::gotime::{self, Layout};
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::registry::conversion;
use crate::registry::crd::{CLEANUP_FINALIZER, set_condition};
use crate::registry::resource::{DeleteBehavior, GcPolicy, ResourceType};
use crate::request::call::Call;
use crate::request::delete_options::DeleteOptions;
use crate::request::list_query::ListQuery;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{
    Object, deletion_grace, finalizers, generation, is_terminating, meta_str, set_meta,
};
use crate::wire::status::StatusDetails;

/// How one delete ended.
pub(crate) enum Deleted {
    /// Still stored (finalizers, a grace period): answered with the object.
    Kept(Vec<u8>),
    /// Removed from storage: the last stored body and its uid.
    Removed { body: Vec<u8>, uid: String },
}

impl State {
    pub(crate) fn delete(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let options = DeleteOptions::from_call(call)?;
        options.validate()?;
        self.admit_delete(call)?;
        if conversion::converts(&call.rt, &call.path.version) {
            // The stored object is read in the request's version first: one its conversion
            // fails on is not deleted.
            self.load_typed(call)?;
        }
        let outcome = self.delete_one(&call.rt, call.namespace(), call.name(), &options)?;
        self.delete_reply(&call.rt, call, outcome, &options)
    }

    /// DELETE on a collection: list with the selectors, then delete each item as a single delete
    /// would; the answer is the list as it was before.
    pub(crate) fn delete_collection(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let options = DeleteOptions::from_call(call)?;
        options.validate()?;
        let query = ListQuery::parse(call)?;
        let (list, names) = self.list_matching(call, &query)?;
        for name in names {
            match self.delete_one(&call.rt, call.namespace(), &name, &options) {
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        Ok(Reply::json(200, list))
    }

    fn delete_reply(
        &self,
        rt: &ResourceType,
        call: &Call<'_>,
        outcome: Deleted,
        options: &DeleteOptions,
    ) -> Result<Reply, ApiError> {
        Ok(match outcome {
            Deleted::Kept(body) => {
                // The legacy `orphanDependents: false` asks for 202 while deletion is pending.
                let status = if options.orphan_dependents == Some(false) {
                    202
                } else {
                    200
                };
                Reply::json(status, call.object_response(&Bytes::from(body))?)
            }
            Deleted::Removed { body, .. } if rt.delete_returns_object => {
                Reply::json(200, call.object_response(&Bytes::from(body))?)
            }
            Deleted::Removed { uid, .. } => {
                Reply::json(200, success_status(&rt.group_resource(), call.name(), &uid))
            }
        })
    }

    /// `Store.Delete` (or the registry's own, for Namespace and CustomResourceDefinition).
    pub(crate) fn delete_one(
        &mut self,
        rt: &Arc<ResourceType>,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let gr = rt.group_resource();
        let key = object_key(namespace, name);
        let Some((mut obj, stored)) = self.load(rt, &key).map_err(|e| e.to_api_error())? else {
            return Err(ApiError::not_found(&gr, name));
        };
        check_preconditions(rt, &obj, name, options)?;
        let mut current = stored.body.to_vec();
        let first_delete = !is_terminating(&obj);
        match rt.delete {
            DeleteBehavior::Namespace if first_delete => {
                set_meta(&mut obj, "deletionTimestamp", self.now());
                obj.insert("status".into(), json!({"phase": "Terminating"}));
                let list = gc_finalizers(rt, &obj, options);
                set_meta(&mut obj, "finalizers", Value::from(list));
                return Ok(Deleted::Kept(
                    self.write_back(rt, key, obj, &current, options),
                ));
            }
            DeleteBehavior::Namespace if !namespace_spec_finalizers_empty(&obj) => {
                return Ok(Deleted::Kept(current));
            }
            DeleteBehavior::CustomResourceDefinition if first_delete => {
                set_meta(&mut obj, "deletionTimestamp", self.now());
                let mut list = finalizers(&obj);
                if !list.iter().any(|f| f == CLEANUP_FINALIZER) {
                    list.push(CLEANUP_FINALIZER.to_owned());
                }
                set_meta(&mut obj, "finalizers", Value::from(list));
                set_condition(
                    &mut obj,
                    "Terminating",
                    "True",
                    "InstanceDeletionPending",
                    "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                    &self.now(),
                );
                return Ok(Deleted::Kept(
                    self.write_back(rt, key, obj, &current, options),
                ));
            }
            _ => {}
        }

        // `rest.BeforeDelete`: graceful deletion (Pods only).
        let mut graceful = false;
        if let Some(grace_period) = rt.hooks.grace_period {
            if first_delete {
                let grace = grace_period(&obj, options.grace_period_seconds);
                let when = self.clock.now() + jiff::SignedDuration::from_secs(grace);
                set_meta(
                    &mut obj,
                    "deletionTimestamp",
                    Value::String(gotime::format(Layout::Time, when)),
                );
                set_meta(&mut obj, "deletionGracePeriodSeconds", Value::from(grace));
                bump_generation(&mut obj);
                graceful = grace > 0;
                if grace == 0 {
                    // Written as terminating first, then removed: watchers see both.
                    current = self.write_back(rt, key.clone(), obj.clone(), &current, options);
                }
            } else if deletion_grace(&obj).unwrap_or(0) > 0 {
                // A graceful deletion is already under way; this delete changes nothing.
                return Ok(Deleted::Kept(current));
            }
        }

        let list = gc_finalizers(rt, &obj, options);
        // An empty list is not written (`omitempty`).
        let written = if list.is_empty() {
            Value::Null
        } else {
            Value::from(list.clone())
        };
        set_meta(&mut obj, "finalizers", written);
        if graceful {
            return Ok(Deleted::Kept(
                self.write_back(rt, key, obj, &current, options),
            ));
        }
        if !list.is_empty() {
            mark_as_deleting(&mut obj, &self.now());
            return Ok(Deleted::Kept(
                self.write_back(rt, key, obj, &current, options),
            ));
        }
        let uid = meta_str(&obj, "uid").to_owned();
        if options.dry_run() {
            return Ok(Deleted::Removed { body: current, uid });
        }
        let body = match self.store.remove(&gr, &key) {
            // The object as deleted carries the deletion's revision (what a delete answering
            // with the object shows, as the DELETED event does).
            Some((_, last)) => last.body.to_vec(),
            None => current,
        };
        self.after_write(rt);
        Ok(Deleted::Removed { body, uid })
    }

    /// Stores `obj` unless it is byte-identical to `current` or the request is a dry run; returns
    /// the body to answer with.
    fn write_back(
        &mut self,
        rt: &Arc<ResourceType>,
        key: String,
        obj: Object,
        current: &[u8],
        options: &DeleteOptions,
    ) -> Vec<u8> {
        let body = self.store.encode(&rt.group_resource(), &obj);
        if body == current || options.dry_run() {
            return body.to_vec();
        }
        let (_, stored) = self.store.put(&rt.group_resource(), key, obj);
        self.after_write(rt);
        stored.body.to_vec()
    }
}

fn namespace_spec_finalizers_empty(obj: &Object) -> bool {
    obj.get("spec")
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// `BeforeDelete`'s early precondition check, reported against `{group, Kind}`.
fn check_preconditions(
    rt: &ResourceType,
    obj: &Object,
    name: &str,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let Some(pre) = &options.preconditions else {
        return Ok(());
    };
    let resource = GroupResource::new(rt.group.clone(), rt.kind.clone());
    let uid = meta_str(obj, "uid");
    if let Some(want) = &pre.uid
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
    let rv = meta_str(obj, "resourceVersion");
    if let Some(want) = &pre.resource_version
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

/// `deletionFinalizersForGarbageCollection`: the object's finalizers with `orphan` /
/// `foregroundDeletion` set as the options (or, failing that, the object or the type) ask.
fn gc_finalizers(rt: &ResourceType, obj: &Object, options: &DeleteOptions) -> Vec<String> {
    let current = finalizers(obj);
    if rt.gc == GcPolicy::Unsupported {
        return current;
    }
    let has = |f: &str| current.iter().any(|c| c == f);
    let policy = options.propagation_policy.as_deref();
    let orphan = match (options.orphan_dependents, policy) {
        (Some(o), _) => o,
        (None, Some("Orphan")) => true,
        (None, Some(_)) => false,
        (None, None) if has("orphan") => true,
        (None, None) if has("foregroundDeletion") => false,
        (None, None) => rt.gc == GcPolicy::OrphanDependents,
    };
    let foreground = match (options.orphan_dependents, policy) {
        (Some(_), _) => false,
        (None, Some(p)) => p == "Foreground",
        (None, None) => has("foregroundDeletion"),
    };
    let mut list: Vec<String> = current
        .into_iter()
        .filter(|f| f != "orphan" && f != "foregroundDeletion")
        .collect();
    if orphan {
        list.push("orphan".to_owned());
    }
    if foreground {
        list.push("foregroundDeletion".to_owned());
    }
    list
}

/// `markAsDeleting`: the first time, generation +1 (when set) and deletionTimestamp now; an
/// earlier deletionTimestamp is kept; the grace period becomes 0.
fn mark_as_deleting(obj: &mut Object, now: &Value) {
    if !is_terminating(obj) {
        bump_generation(obj);
        set_meta(obj, "deletionTimestamp", now.clone());
    }
    set_meta(obj, "deletionGracePeriodSeconds", Value::from(0));
}

fn bump_generation(obj: &mut Object) {
    let g = generation(obj);
    if g > 0 {
        set_meta(obj, "generation", Value::from(g + 1));
    }
}

/// The `Status` a delete answers with once the object is gone.
fn success_status(resource: &GroupResource, name: &str, uid: &str) -> Vec<u8> {
    let details = StatusDetails {
        name: name.to_owned(),
        group: resource.group.clone(),
        kind: resource.resource.clone(),
        uid: uid.to_owned(),
        ..StatusDetails::default()
    };
    serde_json::to_vec(&json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }))
    .unwrap_or_default()
}
