//! The `kube::Api` of any kind a server serves, found by discovery from an object's
//! `apiVersion` and `kind`: how set-up steps and user actions write objects no Rust type names.

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{ApiCapabilities, Scope};

/// The resource serving `api_version` `kind`, its capabilities, and its `Api` in `namespace`
/// (the client's default namespace for a namespaced kind given none; all of them for a
/// cluster-scoped one).
pub(crate) async fn api_for(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Result<(Api<DynamicObject>, ApiResource, ApiCapabilities), kube::Error> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, caps) = kube::discovery::pinned_kind(client, &gvk).await?;
    let api = match (&caps.scope, namespace) {
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
        (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
    };
    Ok((api, resource, caps))
}
