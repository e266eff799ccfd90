//! The `meta/v1` discovery documents, field for field as the real handlers write them:
//! `APIVersions` (`/api`), `APIGroupList` (`/apis`), `APIGroup` (`/apis/{group}`) and
//! `APIResourceList` (`/api/v1`, `/apis/{group}/{version}`).
//!
//! `/api` carries no `apiVersion` and lists `serverAddressByClientCIDRs` (the generic
//! apiserver's root handler, as recorded); `/apis` is kube-aggregator's; a group's own document carries `apiVersion: v1` and
//! no addresses; the core group's resource list has no `apiVersion` (kube-apiserver's legacy
//! codec), every other one has `v1`.

use serde::Serialize;

use super::catalog::{Entry, Group, GroupVersion};

/// The address clients are told to reach the server at, from any network. There is no network
/// here; this is kube-apiserver's default secure port on the loopback address.
const SERVER_ADDRESS: &str = "127.0.0.1:6443";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServerAddressByClientCidr {
    #[serde(rename = "clientCIDR")]
    client_cidr: &'static str,
    server_address: &'static str,
}

fn server_addresses() -> Vec<ServerAddressByClientCidr> {
    vec![ServerAddressByClientCidr {
        client_cidr: "0.0.0.0/0",
        server_address: SERVER_ADDRESS,
    }]
}

#[derive(Serialize)]
struct ApiVersions<'a> {
    kind: &'static str,
    versions: Vec<&'a str>,
    #[serde(rename = "serverAddressByClientCIDRs")]
    server_addresses: Vec<ServerAddressByClientCidr>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupVersionForDiscovery {
    group_version: String,
    version: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiGroup<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<&'static str>,
    name: &'a str,
    versions: Vec<GroupVersionForDiscovery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preferred_version: Option<GroupVersionForDiscovery>,
    #[serde(
        rename = "serverAddressByClientCIDRs",
        skip_serializing_if = "Option::is_none"
    )]
    server_addresses: Option<Vec<ServerAddressByClientCidr>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiGroupList<'a> {
    kind: &'static str,
    api_version: &'static str,
    groups: Vec<ApiGroup<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiResourceList<'a> {
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<&'static str>,
    group_version: String,
    resources: Vec<ApiResource<'a>>,
}

/// `metav1.APIResource`; `singularName` is always written, the rest only when set.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiResource<'a> {
    name: String,
    singular_name: &'a str,
    namespaced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'static str>,
    kind: &'a str,
    verbs: &'static [&'static str],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    short_names: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    categories: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    storage_version_hash: Option<&'a str>,
}

fn to_json(document: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(document).unwrap_or_default()
}

/// `/api`: the core group's versions.
pub(crate) fn api_versions(core: &Group<'_>) -> Vec<u8> {
    to_json(&ApiVersions {
        kind: "APIVersions",
        versions: core.versions.iter().map(|v| v.version).collect(),
        server_addresses: server_addresses(),
    })
}

fn group_version(group: &Group<'_>, version: &GroupVersion<'_>) -> GroupVersionForDiscovery {
    GroupVersionForDiscovery {
        group_version: group.group_version(version.version),
        version: version.version.to_owned(),
    }
}

fn api_group<'a>(group: &'a Group<'_>) -> ApiGroup<'a> {
    ApiGroup {
        kind: None,
        api_version: None,
        name: group.name,
        versions: group
            .versions
            .iter()
            .map(|v| group_version(group, v))
            .collect(),
        preferred_version: group.preferred().map(|v| group_version(group, v)),
        server_addresses: None,
    }
}

/// `/apis`: every named group. kube-aggregator serves it in front of kube-apiserver, with an
/// `apiVersion` and without addresses (`kube-aggregator/pkg/apiserver/handler_apis.go`);
/// apiextensions-apiserver alone would list each group's addresses.
pub(crate) fn group_list<'a, 'r: 'a>(groups: impl Iterator<Item = &'a Group<'r>>) -> Vec<u8> {
    to_json(&ApiGroupList {
        kind: "APIGroupList",
        api_version: "v1",
        groups: groups.map(api_group).collect(),
    })
}

/// `/apis/{group}`.
pub(crate) fn group(group: &Group<'_>) -> Vec<u8> {
    to_json(&ApiGroup {
        kind: Some("APIGroup"),
        api_version: Some("v1"),
        ..api_group(group)
    })
}

/// `/api/{version}` or `/apis/{group}/{version}`: each resource, then each of its subresources
/// as a resource of its own named `{plural}/{subresource}`. The compiled-in groups' installer
/// sorts all of these names; the CRD discovery controller appends `status` then `scale` after
/// each resource, with the resources in its informer's (unspecified) order, here by name.
pub(crate) fn resource_list(group: &Group<'_>, version: &GroupVersion<'_>) -> Vec<u8> {
    let mut resources: Vec<ApiResource<'_>> = version
        .resources
        .iter()
        .flat_map(|entry| std::iter::once(resource(entry)).chain(subresources(entry)))
        .collect();
    if !group.is_custom_only() {
        resources.sort_by(|a, b| a.name.cmp(&b.name));
    }
    to_json(&ApiResourceList {
        kind: "APIResourceList",
        api_version: (!group.name.is_empty()).then_some("v1"),
        group_version: group.group_version(version.version),
        resources,
    })
}

fn resource<'a>(entry: &Entry<'a>) -> ApiResource<'a> {
    let rt = entry.rt;
    ApiResource {
        name: rt.plural.clone(),
        singular_name: &rt.singular,
        namespaced: rt.namespaced,
        group: None,
        version: None,
        kind: &rt.kind,
        verbs: entry.verbs,
        short_names: &rt.discovery.short_names,
        categories: &rt.discovery.categories,
        storage_version_hash: rt.discovery.storage_version_hash.as_deref(),
    }
}

/// A subresource entry: no singular name, short names, categories or hash; one that answers
/// another kind (`scale`: an `autoscaling/v1` `Scale`) names its group and version.
fn subresources<'e, 'a>(entry: &'e Entry<'a>) -> impl Iterator<Item = ApiResource<'a>> + 'e {
    let rt = entry.rt;
    entry.subresources.iter().map(move |sub| ApiResource {
        name: format!("{}/{}", rt.plural, sub.name),
        singular_name: "",
        namespaced: rt.namespaced,
        // The core group's kinds name no group or version.
        group: sub
            .answers
            .map(|other| other.group)
            .filter(|g| !g.is_empty()),
        version: sub
            .answers
            .map(|other| other.version)
            .filter(|v| !v.is_empty()),
        kind: sub.answers.map_or(rt.kind.as_str(), |other| other.kind),
        verbs: sub.verbs,
        short_names: &[],
        categories: &[],
        storage_version_hash: None,
    })
}
