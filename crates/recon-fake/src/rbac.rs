//! RBAC policy rules as kube-apiserver compares them, and the rules a set of requests needed.
//!
//! [`uncovered`] is component-helpers' `Covers` (the comparison the RBAC registry makes before a
//! role may be written): what of some rules another set does not grant. [`NeededRules`] reads
//! the request log ([`RecordedRequest::access`]) and gathers, per API group and resource, the
//! verbs the code under test used: the smallest ClusterRole that lets it do what it did,
//! printable as YAML to compare with an operator's own manifest.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, ListParams, PostParams};
//! use recon_fake::ApiServer;
//! use recon_fake::rbac::{NeededRules, PolicyRule};
//!
//! let server = ApiServer::new();
//! let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await.unwrap();
//! api.list(&ListParams::default()).await.unwrap();
//!
//! let needed = NeededRules::from_requests(&server.requests());
//! assert_eq!(
//!     needed.to_cluster_role_yaml("operator"),
//!     r#"apiVersion: rbac.authorization.k8s.io/v1
//! kind: ClusterRole
//! metadata:
//!   name: "operator"
//! rules:
//! ## namespaces: default
//! - apiGroups: [""]
//!   resources: ["configmaps"]
//!   verbs: ["create", "list"]
//! "#
//! );
//! let granted = [PolicyRule::resources(&[""], &["configmaps"], &["get", "list"])];
//! let missing = needed.missing_from(&granted);
//! assert_eq!(missing, [PolicyRule::resources(&[""], &["configmaps"], &["create"])]);
//! # });
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use recon_apimachinery::go_quote_list;
use recon_apimachinery::json::Value;

use crate::authz::AccessTarget;
use crate::record::{RecordedRequest, RequestOrigin};

/// One rule of a Role or ClusterRole (`rbacv1.PolicyRule`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicyRule {
    /// The verbs allowed (`*`: all).
    pub verbs: Vec<String>,
    /// The API groups (`""`: the core group; `*`: all).
    pub api_groups: Vec<String>,
    /// The resources, `resource/subresource` for a subresource (`*`, `*/status`).
    pub resources: Vec<String>,
    /// The names the rule is limited to; empty: every object.
    pub resource_names: Vec<String>,
    /// Paths outside the API (`/healthz`, `/logs/*`).
    pub non_resource_urls: Vec<String>,
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

impl PolicyRule {
    /// A rule on resources of API groups.
    pub fn resources(api_groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            verbs: owned(verbs),
            api_groups: owned(api_groups),
            resources: owned(resources),
            ..PolicyRule::default()
        }
    }

    /// A rule on paths outside the API.
    pub fn paths(urls: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            verbs: owned(verbs),
            non_resource_urls: owned(urls),
            ..PolicyRule::default()
        }
    }

    /// The rule limited to objects of these names.
    pub fn named(mut self, names: &[&str]) -> PolicyRule {
        self.resource_names = owned(names);
        self
    }

    /// A rule as a Role's JSON holds it (unknown or malformed fields read as empty).
    pub fn from_json(rule: &serde_json::Value) -> PolicyRule {
        PolicyRule::from_value(&Value::from(rule.clone()))
    }

    /// [`PolicyRule::from_json`] of the server's own JSON.
    pub(crate) fn from_value(rule: &Value) -> PolicyRule {
        let strings = |key: &str| crate::wire::object::strings(rule.get(key));
        PolicyRule {
            verbs: strings("verbs"),
            api_groups: strings("apiGroups"),
            resources: strings("resources"),
            resource_names: strings("resourceNames"),
            non_resource_urls: strings("nonResourceURLs"),
        }
    }

    /// The rules of a Role's or ClusterRole's JSON (`rules`).
    pub fn of_role(role: &serde_json::Value) -> Vec<PolicyRule> {
        let rules = role.get("rules").cloned().map(Value::from);
        PolicyRule::list(rules.as_ref())
    }

    /// The rules of a `rules` list.
    pub(crate) fn list(rules: Option<&Value>) -> Vec<PolicyRule> {
        crate::wire::object::list_items(rules)
            .iter()
            .map(PolicyRule::from_value)
            .collect()
    }
}

/// `rbacv1helpers.CompactString`: the rule's non-empty fields, each as Go's `%q` of a list
/// (`{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`), as
/// kube-apiserver lists the rules a role may not grant.
impl fmt::Display for PolicyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ]
        .into_iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(field, values)| format!("{field}:{}", go_quote_list(values)))
        .collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// `Covers` (`component-helpers/auth/rbac/validation`): the pieces of `servant` (one verb,
/// group, resource and name, or one verb and path each) that no rule of `owner` covers, in
/// order; empty when `owner` grants everything `servant` does.
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|piece| !owner.iter().any(|rule| rule_covers(rule, piece)))
        .collect()
}

/// `BreakdownRule`: a rule as rules of one verb, API group, resource and resource name each,
/// then one per path and verb.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut pieces = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let piece = PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..PolicyRule::default()
                };
                for name in &rule.resource_names {
                    pieces.push(PolicyRule {
                        resource_names: one(name),
                        ..piece.clone()
                    });
                }
                if rule.resource_names.is_empty() {
                    pieces.push(piece);
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            pieces.push(PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..PolicyRule::default()
            });
        }
    }
    pieces
}

fn has(set: &[String], wanted: &str) -> bool {
    set.iter().any(|s| s == wanted)
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(set, w))
}

/// `ruleCovers`: whether `owner` covers `piece` (a rule from [`breakdown`]).
fn rule_covers(owner: &PolicyRule, piece: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &piece.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &piece.api_groups);
    let resources = resources_cover(&owner.resources, &piece.resources);
    let urls = piece.non_resource_urls.iter().all(|path| {
        owner.non_resource_urls.iter().any(|url| {
            url == path
                || url
                    .strip_suffix('*')
                    .is_some_and(|_| path.starts_with(url.trim_end_matches('*')))
        })
    });
    let names = owner.resource_names.is_empty()
        || (!piece.resource_names.is_empty()
            && has_all(&owner.resource_names, &piece.resource_names));
    verbs && groups && resources && names && urls
}

/// `resourceCoversAll`: `*`, the resources themselves, or `*/subresource` for a subresource.
fn resources_cover(owned: &[String], wanted: &[String]) -> bool {
    if has(owned, "*") || has_all(owned, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owned, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owned, &format!("*/{sub}")))
    })
}

/// `CompactRules` (`pkg/registry/rbac/validation/policy_compact.go`): the rules of one group,
/// one resource and at most one name that differ only by verb, merged into one (after the
/// others; kube-apiserver sorts their descriptions).
pub fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut compacted = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            compacted.push(rule);
            continue;
        }
        let same = simple.iter_mut().find(|s| {
            s.api_groups == rule.api_groups
                && s.resources == rule.resources
                && s.resource_names == rule.resource_names
        });
        match same {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    compacted.extend(simple);
    compacted
}

/// The rules a set of requests needed: per API group and resource (`resource/subresource` for
/// a subresource) the verbs used and the namespaces they were used in, and per path outside
/// the API its verbs. Names are left out: the rules cover every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NeededRules {
    resources: BTreeMap<(String, String), Use>,
    paths: BTreeMap<String, BTreeSet<String>>,
}

/// The verbs used on one resource, and where (`""`: cluster-wide).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Use {
    verbs: BTreeSet<String>,
    namespaces: BTreeSet<String>,
}

impl NeededRules {
    /// What the code under test did: every request of [`RequestOrigin::Client`] the server
    /// read (refused ones too: they show what was needed), whoever it acted as.
    pub fn from_requests(requests: &[RecordedRequest]) -> NeededRules {
        let mut needed = NeededRules::default();
        for request in requests {
            if request.origin == RequestOrigin::Client
                && let Some(access) = &request.access
            {
                needed.add(&access.verb, &access.target);
            }
        }
        needed
    }

    /// Adds one request's verb on its target.
    pub fn add(&mut self, verb: &str, target: &AccessTarget) {
        match target {
            AccessTarget::Resource {
                namespace,
                group,
                resource,
                subresource,
                ..
            } => {
                let resource = if subresource.is_empty() {
                    resource.clone()
                } else {
                    format!("{resource}/{subresource}")
                };
                let used = self.resources.entry((group.clone(), resource)).or_default();
                used.verbs.insert(verb.to_owned());
                used.namespaces.insert(namespace.clone());
            }
            AccessTarget::NonResource { path } => {
                self.paths
                    .entry(path.clone())
                    .or_default()
                    .insert(verb.to_owned());
            }
        }
    }

    /// Adds what watching `resource` of `group` in every namespace needs (`list` and `watch`,
    /// cluster-wide), as a kube-runtime `Controller` or reflector on `Api::all` does: tables
    /// call the reconcile function, not the watches that feed it.
    pub fn watch(&mut self, group: &str, resource: &str) {
        for verb in ["list", "watch"] {
            self.add(
                verb,
                &AccessTarget::Resource {
                    namespace: String::new(),
                    group: group.to_owned(),
                    resource: resource.to_owned(),
                    subresource: String::new(),
                    name: String::new(),
                },
            );
        }
    }

    /// Adds everything `other` needed.
    pub fn merge(&mut self, other: &NeededRules) {
        for (key, used) in &other.resources {
            let mine = self.resources.entry(key.clone()).or_default();
            mine.verbs.extend(used.verbs.iter().cloned());
            mine.namespaces.extend(used.namespaces.iter().cloned());
        }
        for (path, verbs) in &other.paths {
            self.paths
                .entry(path.clone())
                .or_default()
                .extend(verbs.iter().cloned());
        }
    }

    /// Whether no request was made.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.paths.is_empty()
    }

    /// One rule per API group and resource with its verbs (sorted), then one per path.
    pub fn rules(&self) -> Vec<PolicyRule> {
        let sorted = |verbs: &BTreeSet<String>| verbs.iter().cloned().collect::<Vec<_>>();
        let resources = self
            .resources
            .iter()
            .map(|((group, resource), used)| PolicyRule {
                verbs: sorted(&used.verbs),
                api_groups: vec![group.clone()],
                resources: vec![resource.clone()],
                ..PolicyRule::default()
            });
        let paths = self.paths.iter().map(|(path, verbs)| PolicyRule {
            verbs: sorted(verbs),
            non_resource_urls: vec![path.clone()],
            ..PolicyRule::default()
        });
        resources.chain(paths).collect()
    }

    /// What of the needed rules `granted` does not grant, broken down to one verb on one
    /// resource each (empty when `granted` is enough). Scopes are not compared: a rule granted
    /// only in one namespace counts everywhere.
    pub fn missing_from(&self, granted: &[PolicyRule]) -> Vec<PolicyRule> {
        compact(uncovered(granted, &self.rules()))
    }

    /// What `granted` grants beyond the needed rules, broken down and compacted the same way.
    pub fn excess_in(&self, granted: &[PolicyRule]) -> Vec<PolicyRule> {
        compact(uncovered(&self.rules(), granted))
    }

    /// The rules as a ClusterRole named `name`, in YAML, each resource rule after a comment
    /// saying where it was used (`# namespaces: a, b`, or `# cluster-wide`).
    pub fn to_cluster_role_yaml(&self, name: &str) -> String {
        let list = |items: &[String]| {
            let quoted: Vec<String> = items.iter().map(|i| json_string(i)).collect();
            format!("[{}]", quoted.join(", "))
        };
        let mut yaml = format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {}\nrules:\n",
            json_string(name)
        );
        for ((group, resource), used) in &self.resources {
            let namespaced: Vec<&str> = used
                .namespaces
                .iter()
                .filter(|n| !n.is_empty())
                .map(String::as_str)
                .collect();
            if used.namespaces.contains("") {
                yaml.push_str("# cluster-wide\n");
            }
            if !namespaced.is_empty() {
                yaml.push_str(&format!("# namespaces: {}\n", namespaced.join(", ")));
            }
            let verbs: Vec<String> = used.verbs.iter().cloned().collect();
            yaml.push_str(&format!(
                "- apiGroups: {}\n  resources: {}\n  verbs: {}\n",
                list(std::slice::from_ref(group)),
                list(std::slice::from_ref(resource)),
                list(&verbs)
            ));
        }
        for (path, verbs) in &self.paths {
            let verbs: Vec<String> = verbs.iter().cloned().collect();
            yaml.push_str(&format!(
                "- nonResourceURLs: {}\n  verbs: {}\n",
                list(std::slice::from_ref(path)),
                list(&verbs)
            ));
        }
        yaml
    }
}

/// A string as a JSON (and so YAML flow) scalar.
fn json_string(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        PolicyRule {
            verbs: owned(verbs),
            api_groups: owned(groups),
            resources: owned(resources),
            resource_names: owned(names),
            non_resource_urls: Vec::new(),
        }
    }

    fn url(verbs: &[&str], urls: &[&str]) -> PolicyRule {
        PolicyRule {
            verbs: verbs.iter().map(|s| (*s).to_owned()).collect(),
            non_resource_urls: urls.iter().map(|s| (*s).to_owned()).collect(),
            ..PolicyRule::default()
        }
    }

    // The cases of component-helpers' policy_comparator_test.go, as this port reads them.
    #[test]
    fn a_star_verb_or_group_or_resource_covers_everything_of_its_kind() {
        let owner = [rule(&["*"], &["*"], &["*"], &[])];
        let servant = [rule(
            &["get", "delete"],
            &["", "apps"],
            &["pods", "deployments/scale"],
            &["x"],
        )];
        assert!(uncovered(&owner, &servant).is_empty());
    }

    #[test]
    fn a_named_rule_covers_only_its_names_and_never_the_whole_collection() {
        let owner = [rule(&["get"], &[""], &["pods"], &["a"])];
        assert!(uncovered(&owner, &[rule(&["get"], &[""], &["pods"], &["a"])]).is_empty());
        assert_eq!(
            uncovered(&owner, &[rule(&["get"], &[""], &["pods"], &["a", "b"])]),
            [rule(&["get"], &[""], &["pods"], &["b"])]
        );
        assert_eq!(
            uncovered(&owner, &[rule(&["get"], &[""], &["pods"], &[])]),
            [rule(&["get"], &[""], &["pods"], &[])]
        );
    }

    #[test]
    fn star_slash_subresource_covers_that_subresource_of_any_resource() {
        let owner = [rule(&["update"], &["apps"], &["*/status"], &[])];
        assert!(
            uncovered(
                &owner,
                &[rule(&["update"], &["apps"], &["deployments/status"], &[])]
            )
            .is_empty()
        );
        assert_eq!(
            uncovered(
                &owner,
                &[rule(&["update"], &["apps"], &["deployments"], &[])]
            )
            .len(),
            1
        );
    }

    #[test]
    fn paths_are_covered_exactly_or_by_a_star_suffix() {
        let owner = [url(&["get"], &["/healthz", "/apis/*"])];
        assert!(uncovered(&owner, &[url(&["get"], &["/healthz", "/apis/apps"])]).is_empty());
        assert_eq!(
            uncovered(&owner, &[url(&["get", "post"], &["/metrics"])]),
            [url(&["get"], &["/metrics"]), url(&["post"], &["/metrics"])]
        );
        // A resource rule never covers a path.
        assert_eq!(
            uncovered(
                &[rule(&["*"], &["*"], &["*"], &[])],
                &[url(&["get"], &["/metrics"])]
            )
            .len(),
            1
        );
    }

    #[test]
    fn a_rule_without_groups_breaks_down_to_nothing() {
        assert!(breakdown(&rule(&["get"], &[], &["pods"], &[])).is_empty());
    }

    #[test]
    fn missing_pieces_compact_by_resource_and_name_and_print_as_go_does() {
        let missing = uncovered(
            &[],
            &[
                rule(&["get", "watch"], &[""], &["configmaps", "secrets"], &[]),
                rule(&["patch"], &["apps"], &["deployments"], &["a", "b"]),
                url(&["get"], &["/metrics"]),
            ],
        );
        let printed: BTreeSet<String> = compact(missing).iter().map(|r| r.to_string()).collect();
        assert_eq!(
            printed.into_iter().collect::<Vec<_>>(),
            [
                r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "watch"]}"#,
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "watch"]}"#,
                r#"{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["patch"]}"#,
                r#"{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["b"], Verbs:["patch"]}"#,
                r#"{NonResourceURLs:["/metrics"], Verbs:["get"]}"#,
            ]
        );
    }
}
