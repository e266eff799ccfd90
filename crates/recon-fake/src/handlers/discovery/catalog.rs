//! What discovery lists, read from the registry: groups in the order kube-apiserver lists them,
//! each group's versions (preferred first), and each version's resources with their verbs and
//! subresources. The legacy and aggregated documents are two renderings of this one catalog.

use std::collections::BTreeMap;

use super::version_order;
use crate::registry::Registry;
use crate::registry::resource::{DeleteBehavior, ResourceType};

/// The named groups kube-apiserver knows, in the order it lists them (kube-aggregator's group
/// priorities, highest first; the core group leads). Groups not listed here, every CRD group
/// among them, come after, by name: CRDs register their `APIService` with one shared priority
/// (1000, `crdregistration_controller.go`).
const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

/// The verbs of a terminating CRD's resources: the discovery controller drops create, update
/// and patch once the CRD's `Terminating` condition is true.
const TERMINATING_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "watch"];

/// The verbs of the `status` and `scale` subresources.
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// The verbs of `namespaces/finalize`.
const FINALIZE_VERBS: &[&str] = &["update"];

/// Every group the server serves, core group included.
pub(crate) struct Catalog<'r> {
    groups: Vec<Group<'r>>,
}

/// One API group (`""` is the core group).
pub(crate) struct Group<'r> {
    pub(crate) name: &'r str,
    /// Preferred first (kube-aware version order); never empty.
    pub(crate) versions: Vec<GroupVersion<'r>>,
}

/// The resources a group serves at one version, by name.
pub(crate) struct GroupVersion<'r> {
    pub(crate) version: &'r str,
    pub(crate) resources: Vec<Entry<'r>>,
}

/// One resource at one version, as discovery describes it.
pub(crate) struct Entry<'r> {
    pub(crate) rt: &'r ResourceType,
    pub(crate) verbs: &'static [&'static str],
    pub(crate) subresources: Vec<Subresource>,
}

/// A subresource discovery lists with its resource.
pub(crate) struct Subresource {
    pub(crate) name: &'static str,
    /// `scale` answers an `autoscaling/v1` `Scale`; the others answer the resource's own kind.
    pub(crate) scale: bool,
    pub(crate) verbs: &'static [&'static str],
}

impl<'r> Catalog<'r> {
    pub(crate) fn new(registry: &'r Registry) -> Self {
        let mut by_group: BTreeMap<&'r str, Vec<&'r ResourceType>> = BTreeMap::new();
        for rt in registry.types() {
            by_group.entry(rt.group.as_str()).or_default().push(rt);
        }
        let mut groups: Vec<Group<'r>> = by_group
            .into_iter()
            .filter_map(|(name, types)| Group::new(name, &types, registry))
            .collect();
        // Stable: groups of equal rank stay in name order.
        groups.sort_by_key(|g| group_rank(g.name));
        Catalog { groups }
    }

    pub(crate) fn group(&self, name: &str) -> Option<&Group<'r>> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// The groups under `/apis`: all but the core group.
    pub(crate) fn named_groups(&self) -> impl Iterator<Item = &Group<'r>> {
        self.groups.iter().filter(|g| !g.name.is_empty())
    }
}

fn group_rank(name: &str) -> usize {
    GROUP_ORDER
        .iter()
        .position(|g| *g == name)
        .unwrap_or(GROUP_ORDER.len())
}

impl<'r> Group<'r> {
    /// The group of `types` (all of group `name`); `None` if they serve no version.
    fn new(name: &'r str, types: &[&'r ResourceType], registry: &Registry) -> Option<Self> {
        let mut versions: Vec<&'r str> = types
            .iter()
            .flat_map(|t| t.versions.iter().map(|v| v.name.as_str()))
            .collect();
        versions.sort_by(|a, b| version_order::compare(a, b));
        versions.dedup();
        let versions: Vec<GroupVersion<'r>> = versions
            .into_iter()
            .map(|version| GroupVersion::new(version, types, registry))
            .collect();
        (!versions.is_empty()).then_some(Group { name, versions })
    }

    pub(crate) fn version(&self, version: &str) -> Option<&GroupVersion<'r>> {
        self.versions.iter().find(|v| v.version == version)
    }

    /// The version clients should use: the first one.
    pub(crate) fn preferred(&self) -> Option<&GroupVersion<'r>> {
        self.versions.first()
    }

    /// Whether only CRDs serve this group: its documents come from the apiextensions handlers.
    pub(crate) fn is_custom_only(&self) -> bool {
        self.versions
            .iter()
            .flat_map(|v| &v.resources)
            .all(|e| e.rt.custom)
    }

    /// `{group}/{version}`, or just the version in the core group.
    pub(crate) fn group_version(&self, version: &str) -> String {
        if self.name.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.name)
        }
    }
}

impl<'r> GroupVersion<'r> {
    fn new(version: &'r str, types: &[&'r ResourceType], registry: &Registry) -> Self {
        let mut resources: Vec<Entry<'r>> = types
            .iter()
            .filter(|t| t.serves(version))
            .map(|t| Entry::new(t, version, registry.is_terminating(&t.group, &t.plural)))
            .collect();
        resources.sort_by(|a, b| a.rt.plural.cmp(&b.rt.plural));
        GroupVersion { version, resources }
    }
}

impl<'r> Entry<'r> {
    fn new(rt: &'r ResourceType, version: &str, terminating: bool) -> Self {
        let verbs = if terminating && rt.custom {
            TERMINATING_VERBS
        } else {
            rt.discovery.verbs
        };
        let mut subresources: Vec<Subresource> = [
            // Only the namespace controller's `/finalize` may change `spec.finalizers`.
            (rt.delete == DeleteBehavior::Namespace).then_some(Subresource {
                name: "finalize",
                scale: false,
                verbs: FINALIZE_VERBS,
            }),
            rt.has_status(version).then_some(Subresource {
                name: "status",
                scale: false,
                verbs: SUBRESOURCE_VERBS,
            }),
            rt.has_scale(version).then_some(Subresource {
                name: "scale",
                scale: true,
                verbs: SUBRESOURCE_VERBS,
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !rt.custom {
            // A built-in group's documents come from its sorted resource list (`scale` before
            // `status`); the CRD controller appends `status` then `scale`.
            subresources.sort_by_key(|s| s.name);
        }
        Entry {
            rt,
            verbs,
            subresources,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<'a>(catalog: &'a Catalog<'_>) -> Vec<&'a str> {
        catalog.groups.iter().map(|g| g.name).collect()
    }

    #[test]
    fn builtin_groups_come_in_kube_apiserver_order() {
        let registry = Registry::with_builtins();
        let catalog = Catalog::new(&registry);
        assert_eq!(
            names(&catalog),
            [
                "",
                "apps",
                "events.k8s.io",
                "autoscaling",
                "batch",
                "networking.k8s.io",
                "policy",
                "rbac.authorization.k8s.io",
                "apiextensions.k8s.io",
                "coordination.k8s.io"
            ]
        );
    }

    #[test]
    fn unknown_groups_rank_after_the_builtins() {
        assert!(group_rank("example.com") > group_rank("coordination.k8s.io"));
        assert_eq!(group_rank("a.example.com"), group_rank("b.example.com"));
    }

    #[test]
    fn core_resources_are_sorted_and_carry_their_status_subresource() {
        let registry = Registry::with_builtins();
        let catalog = Catalog::new(&registry);
        let v1 = catalog.group("").and_then(|g| g.version("v1")).unwrap();
        let plurals: Vec<&str> = v1.resources.iter().map(|e| e.rt.plural.as_str()).collect();
        let mut sorted = plurals.clone();
        sorted.sort_unstable();
        assert_eq!(plurals, sorted);
        let pods = v1.resources.iter().find(|e| e.rt.plural == "pods").unwrap();
        assert_eq!(pods.subresources.len(), 1);
        assert_eq!(pods.subresources[0].name, "status");
        let configmaps = v1
            .resources
            .iter()
            .find(|e| e.rt.plural == "configmaps")
            .unwrap();
        assert!(configmaps.subresources.is_empty());
    }

    #[test]
    fn only_crd_groups_are_custom_only() {
        let registry = Registry::with_builtins();
        let catalog = Catalog::new(&registry);
        assert!(!catalog.group("apps").unwrap().is_custom_only());
    }
}
