//! Aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`): every group with
//! its versions and resources in one document, subresources nested under their resource.
//! kube-apiserver answers it at `/api` (the core group alone) and `/apis` (the named groups)
//! when the `Accept` header asks for it.

use serde::Serialize;

use super::catalog::{Entry, Group, GroupVersion, Subresource};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupDiscoveryList<'a> {
    kind: &'static str,
    api_version: &'static str,
    metadata: Metadata<'a>,
    items: Vec<GroupDiscovery<'a>>,
}

/// Object metadata: only the group's name is set (and none for the core group, nor the list).
#[derive(Serialize)]
struct Metadata<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Serialize)]
struct GroupDiscovery<'a> {
    metadata: Metadata<'a>,
    versions: Vec<VersionDiscovery<'a>>,
}

#[derive(Serialize)]
struct VersionDiscovery<'a> {
    version: &'a str,
    resources: Vec<ResourceDiscovery<'a>>,
    /// `Current`: this server's documents are never stale.
    freshness: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceDiscovery<'a> {
    resource: &'a str,
    response_kind: ResponseKind<'a>,
    scope: &'static str,
    singular_resource: &'a str,
    verbs: &'static [&'static str],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    short_names: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    categories: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subresources: Vec<SubresourceDiscovery<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubresourceDiscovery<'a> {
    subresource: &'static str,
    response_kind: ResponseKind<'a>,
    verbs: &'static [&'static str],
}

/// The group, version and kind an endpoint answers with.
#[derive(Serialize)]
struct ResponseKind<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

/// The aggregated document of `groups`, in the order given.
pub(crate) fn document<'a, 'r: 'a>(groups: impl IntoIterator<Item = &'a Group<'r>>) -> Vec<u8> {
    let list = GroupDiscoveryList {
        kind: "APIGroupDiscoveryList",
        api_version: "apidiscovery.k8s.io/v2",
        metadata: Metadata { name: None },
        items: groups.into_iter().map(group).collect(),
    };
    serde_json::to_vec(&list).unwrap_or_default()
}

fn group<'a>(group: &'a Group<'_>) -> GroupDiscovery<'a> {
    GroupDiscovery {
        metadata: Metadata {
            name: Some(group.name).filter(|n| !n.is_empty()),
        },
        versions: group.versions.iter().map(version).collect(),
    }
}

fn version<'a>(version: &'a GroupVersion<'_>) -> VersionDiscovery<'a> {
    VersionDiscovery {
        version: version.version,
        resources: version
            .resources
            .iter()
            .map(|e| resource(e, version.version))
            .collect(),
        freshness: "Current",
    }
}

fn resource<'a>(entry: &'a Entry<'_>, version: &'a str) -> ResourceDiscovery<'a> {
    let rt = entry.rt;
    let kind = response_kind(entry, version);
    ResourceDiscovery {
        resource: &rt.plural,
        scope: if rt.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        },
        singular_resource: &rt.singular,
        verbs: entry.verbs,
        short_names: &rt.discovery.short_names,
        categories: &rt.discovery.categories,
        subresources: entry
            .subresources
            .iter()
            .map(|sub| subresource(sub, &kind))
            .collect(),
        response_kind: kind,
    }
}

/// A custom resource names its full group/version/kind. A built-in names only its kind: the
/// installer's `APIResource` leaves group and version empty for the group being served, and
/// `ConvertGroupVersionIntoToDiscovery` copies them as they are.
fn response_kind<'a>(entry: &'a Entry<'_>, version: &'a str) -> ResponseKind<'a> {
    let rt = entry.rt;
    let (group, version) = if rt.custom {
        (rt.group.as_str(), version)
    } else {
        ("", "")
    };
    ResponseKind {
        group,
        version,
        kind: &rt.kind,
    }
}

fn subresource<'a>(sub: &Subresource, parent: &ResponseKind<'a>) -> SubresourceDiscovery<'a> {
    let response_kind = if let Some(other) = sub.answers {
        ResponseKind {
            group: other.group,
            version: other.version,
            kind: other.kind,
        }
    } else {
        ResponseKind {
            group: parent.group,
            version: parent.version,
            kind: parent.kind,
        }
    };
    SubresourceDiscovery {
        subresource: sub.name,
        response_kind,
        verbs: sub.verbs,
    }
}
