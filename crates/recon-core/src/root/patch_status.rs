//! Status patches for code outside a reconciler tree: copy, mutate, diff, and send a merge
//! patch of what changed, or nothing at all.

use kube::Api;
use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::status_strategy::status_json;
use crate::json::merge_diff;

/// Applies `mutate` to a copy of `resource` and merge-patches the status fields that changed.
/// Sends nothing (and returns `None`) when the status is unchanged.
///
/// No precondition: see [`StatusStrategy::MergePatch`](crate::StatusStrategy::MergePatch) for
/// what that allows (lists replaced whole; a value computed from a stale read overwrites a
/// concurrent writer's). Use [`patch_status_locked`] to get a 409 instead.
pub async fn patch_status<R>(
    api: &Api<R>,
    resource: &R,
    mutate: impl FnOnce(&mut R),
) -> Result<Option<R>, kube::Error>
where
    R: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    send(api, resource, mutate, false).await
}

/// Like [`patch_status`], with `metadata.resourceVersion` of `resource` in the patch: a write
/// since `resource` was read makes it a 409 Conflict.
pub async fn patch_status_locked<R>(
    api: &Api<R>,
    resource: &R,
    mutate: impl FnOnce(&mut R),
) -> Result<Option<R>, kube::Error>
where
    R: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    send(api, resource, mutate, true).await
}

async fn send<R>(
    api: &Api<R>,
    resource: &R,
    mutate: impl FnOnce(&mut R),
    lock: bool,
) -> Result<Option<R>, kube::Error>
where
    R: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let mut desired = resource.clone();
    mutate(&mut desired);
    let Some(diff) = merge_diff(&status_json(resource), &status_json(&desired)) else {
        return Ok(None);
    };
    let name = resource.meta().name.as_deref().ok_or_else(|| {
        kube::Error::BuildRequest(kube::core::request::Error::Validation(
            "the resource has no metadata.name".to_owned(),
        ))
    })?;
    let mut body = json!({ "status": diff });
    if lock {
        body["metadata"] = json!({"resourceVersion": resource.meta().resource_version});
    }
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .map(Some)
}
