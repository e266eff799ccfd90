//! The RBAC authorizer (`plugin/pkg/auth/authorizer/rbac/rbac.go`) over the Roles,
//! ClusterRoles and bindings stored in the server, read as its informers hold them: first every
//! ClusterRoleBinding, then the RoleBindings of the request's namespace
//! (`pkg/registry/rbac/validation/rule.go`, `VisitRulesFor`), each binding whose subjects
//! include the user contributing the rules of the role it names. The informers' order is not
//! defined; here it is the order of names.

use recon_apimachinery::errors::aggregate;
use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use super::{Attributes, Target};
pub(crate) use crate::rbac::PolicyRule;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::user::UserInfo;
use crate::wire::group::GroupResource;
use crate::wire::object::list_items;

pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

impl PolicyRule {
    /// `RuleAllows`: whether this rule covers the request.
    pub(crate) fn allows(&self, attributes: &Attributes) -> bool {
        if !has_or_wildcard(&self.verbs, &attributes.verb) {
            return false;
        }
        match &attributes.target {
            Target::Resource {
                group,
                resource,
                subresource,
                name,
                ..
            } => {
                has_or_wildcard(&self.api_groups, group)
                    && self.resource_matches(resource, subresource)
                    && (self.resource_names.is_empty() || self.resource_names.contains(name))
            }
            Target::NonResource { path } => self.non_resource_urls.iter().any(|url| {
                url == "*"
                    || url == path
                    || url
                        .strip_suffix('*')
                        .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
            }),
        }
    }

    /// `ResourceMatches` (`pkg/apis/rbac/v1/evaluation_helpers.go`): `*`, the resource with its
    /// subresource (`deployments/status`), or `*/subresource`.
    fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|rule| {
            if rule == "*" {
                return true;
            }
            if subresource.is_empty() {
                return rule == resource;
            }
            rule.strip_prefix(resource)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|sub| sub == subresource)
                || rule
                    .strip_prefix("*/")
                    .is_some_and(|sub| sub == subresource)
        })
    }
}

fn has_or_wildcard(set: &[String], wanted: &str) -> bool {
    set.iter().any(|s| s == "*" || s == wanted)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `authorizingVisitor`: allowed by the first rule that covers the request, naming its binding;
/// otherwise no opinion, with the errors met resolving roles as the reason.
pub(super) fn authorize(state: &State, attributes: &Attributes) -> (bool, String) {
    let mut errors = Vec::new();
    let mut allowed_by = None;
    visit_rules(
        state,
        &attributes.user,
        attributes.namespace(),
        RoleReader::Informer,
        &mut |source, found| match found {
            Ok(rule) if rule.allows(attributes) => {
                allowed_by = Some(format!("RBAC: allowed by {source}"));
                false
            }
            Ok(_) => true,
            Err(error) => {
                errors.push(error);
                true
            }
        },
    );
    match allowed_by {
        Some(reason) => (true, reason),
        None => (
            false,
            aggregate(errors)
                .map(|e| format!("RBAC: {e}"))
                .unwrap_or_default(),
        ),
    }
}

/// Who reads the roles bindings name, which says how a missing one is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoleReader<'a> {
    /// The authorizer's informers: `role.rbac.authorization.k8s.io "x" not found`.
    Informer,
    /// The RBAC storage's getters, inside a request on `request_resource` of the RBAC group: the
    /// store qualifies its not-found error with the request's resource
    /// (`rolebindings.rbac.authorization.k8s.io "x" not found` for a Role read while writing a
    /// RoleBinding).
    Storage { request_resource: &'a str },
}

impl RoleReader<'_> {
    /// The error of a missing role (`plural` is `roles` or `clusterroles`).
    pub(crate) fn not_found(self, plural: &str, name: &str) -> String {
        let resource = match self {
            RoleReader::Informer => &plural[..plural.len() - 1],
            RoleReader::Storage { request_resource } => request_resource,
        };
        format!("{resource}.{GROUP} {} not found", go_quote(name))
    }
}

/// `RulesFor`: every rule that applies to `user` in `namespace`, and the errors met resolving
/// the roles bindings name.
pub(crate) fn rules_for(
    state: &State,
    user: &UserInfo,
    namespace: &str,
    reader: RoleReader<'_>,
) -> (Vec<PolicyRule>, Option<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    visit_rules(state, user, namespace, reader, &mut |_, found| {
        match found {
            Ok(rule) => rules.push(rule.clone()),
            Err(error) => errors.push(error),
        }
        true
    });
    (rules, aggregate(errors))
}

/// Calls `visitor` with each rule of each binding that applies to `user` (and the binding's
/// description), or with the error of a role that cannot be found; stops when it answers false.
fn visit_rules(
    state: &State,
    user: &UserInfo,
    namespace: &str,
    reader: RoleReader<'_>,
    visitor: &mut dyn FnMut(&str, Result<&PolicyRule, String>) -> bool,
) {
    let cluster_bindings = GroupResource::new(GROUP, "clusterrolebindings");
    for (key, stored) in state.store.list(&cluster_bindings, None) {
        let read = state
            .rbac_lister
            .read(&state.store, "clusterrolebindings", key, stored);
        let Some(binding) = read else {
            continue;
        };
        if !visit_binding(state, user, &binding, "", reader, visitor) {
            return;
        }
    }
    if namespace.is_empty() {
        return;
    }
    let bindings = GroupResource::new(GROUP, "rolebindings");
    for (key, stored) in state.store.list(&bindings, Some(namespace)) {
        let Some(binding) = state
            .rbac_lister
            .read(&state.store, "rolebindings", key, stored)
        else {
            continue;
        };
        if !visit_binding(state, user, &binding, namespace, reader, visitor) {
            return;
        }
    }
}

/// One binding (a RoleBinding of `namespace`, or a ClusterRoleBinding when it is empty); false
/// when the visitor asked to stop.
fn visit_binding(
    state: &State,
    user: &UserInfo,
    binding: &Value,
    namespace: &str,
    reader: RoleReader<'_>,
    visitor: &mut dyn FnMut(&str, Result<&PolicyRule, String>) -> bool,
) -> bool {
    let subjects = list_items(binding.get("subjects"));
    let Some(subject) = subjects.iter().find(|s| applies_to(user, s, namespace)) else {
        return true;
    };
    let role_ref = binding.get("roleRef").unwrap_or(&Value::Null);
    let rules = match role_rules(state, role_ref, namespace, reader) {
        Ok(rules) => rules,
        Err(error) => return visitor("", Err(error)),
    };
    let name = text(&binding["metadata"], "name");
    let source = if namespace.is_empty() {
        format!(
            "ClusterRoleBinding {} of {} {} to {}",
            go_quote(name),
            text(role_ref, "kind"),
            go_quote(text(role_ref, "name")),
            describe_subject(subject, "")
        )
    } else {
        format!(
            "RoleBinding {} of {} {} to {}",
            go_quote(&format!("{name}/{namespace}")),
            text(role_ref, "kind"),
            go_quote(text(role_ref, "name")),
            describe_subject(subject, namespace)
        )
    };
    rules.iter().all(|rule| visitor(&source, Ok(rule)))
}

/// `GetRoleReferenceRules`: the rules of the Role (in the binding's namespace) or ClusterRole a
/// binding names, or the reader's not-found error.
fn role_rules(
    state: &State,
    role_ref: &Value,
    namespace: &str,
    reader: RoleReader<'_>,
) -> Result<Vec<PolicyRule>, String> {
    let name = text(role_ref, "name");
    let (plural, key) = match text(role_ref, "kind") {
        "Role" => ("roles", object_key(Some(namespace), name)),
        "ClusterRole" => ("clusterroles", object_key(None, name)),
        other => {
            return Err(format!(
                "unsupported role reference kind: {}",
                go_quote(other)
            ));
        }
    };
    stored_rules(state, plural, &key).ok_or_else(|| reader.not_found(plural, name))
}

/// The rules of the stored role (`roles` or `clusterroles`) at `key`; `None` when there is none.
pub(crate) fn stored_rules(
    state: &State,
    plural: &'static str,
    key: &str,
) -> Option<Vec<PolicyRule>> {
    let stored = state.store.get(&GroupResource::new(GROUP, plural), key)?;
    let role = state.rbac_lister.read(&state.store, plural, key, stored)?;
    Some(PolicyRule::list(role.get("rules")))
}

/// `appliesToUser`: a user by name, a group the user is in, or a service account by its user
/// name (in the binding's namespace when the subject names none).
fn applies_to(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = text(subject, "name");
    match text(subject, "kind") {
        "User" => user.username == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let account_namespace = match text(subject, "namespace") {
                "" => namespace,
                given => given,
            };
            !account_namespace.is_empty()
                && user.username == service_account_username(account_namespace, name)
        }
        _ => false,
    }
}

/// The user name a service account authenticates as (`serviceaccount.MakeUsername`).
pub(crate) fn service_account_username(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// `describeSubject`: a service account as `name/namespace`.
fn describe_subject(subject: &Value, namespace: &str) -> String {
    let (kind, name) = (text(subject, "kind"), text(subject, "name"));
    if kind == "ServiceAccount" {
        let account_namespace = match text(subject, "namespace") {
            "" => namespace,
            given => given,
        };
        return format!(
            "{kind} {}",
            go_quote(&format!("{name}/{account_namespace}"))
        );
    }
    format!("{kind} {}", go_quote(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let own = |s: &[&str]| s.iter().map(|x| (*x).to_owned()).collect();
        PolicyRule {
            verbs: own(verbs),
            api_groups: own(groups),
            resources: own(resources),
            ..PolicyRule::default()
        }
    }

    fn request(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::admin(),
            verb: verb.to_owned(),
            target: Target::Resource {
                namespace: String::new(),
                group: group.to_owned(),
                resource: resource.to_owned(),
                subresource: sub.to_owned(),
                name: name.to_owned(),
            },
        }
    }

    fn url(verb: &str, path: &str) -> Attributes {
        Attributes {
            user: UserInfo::admin(),
            verb: verb.to_owned(),
            target: Target::NonResource {
                path: path.to_owned(),
            },
        }
    }

    // evaluation_helpers_test.go's cases, in substance.
    #[test]
    fn subresources_match_exactly_or_through_star_slash() {
        let status = rule(&["update"], &["apps"], &["deployments/status"]);
        assert!(status.allows(&request("update", "apps", "deployments", "status", "")));
        assert!(!status.allows(&request("update", "apps", "deployments", "", "")));
        assert!(!status.allows(&request("update", "apps", "deployments", "scale", "")));
        let any = rule(&["update"], &["*"], &["*/finalizers"]);
        assert!(any.allows(&request("update", "x.io", "widgets", "finalizers", "")));
        assert!(!any.allows(&request("update", "x.io", "widgets", "", "")));
        assert!(!any.allows(&request("update", "x.io", "widgets", "status", "")));
        let plain = rule(&["get"], &[""], &["pods"]);
        assert!(!plain.allows(&request("get", "", "pods", "log", "")));
        assert!(rule(&["*"], &["*"], &["*"]).allows(&request("get", "", "pods", "log", "p")));
    }

    #[test]
    fn resource_names_limit_a_rule_to_named_objects() {
        let mut named = rule(&["get"], &[""], &["secrets"]);
        named.resource_names = vec!["token".to_owned()];
        assert!(named.allows(&request("get", "", "secrets", "", "token")));
        assert!(!named.allows(&request("get", "", "secrets", "", "other")));
        assert!(!named.allows(&request("list", "", "secrets", "", "")));
        assert!(!named.allows(&request("get", "", "secrets", "", "")));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_a_star_suffix() {
        let rule = PolicyRule {
            verbs: vec!["get".to_owned()],
            non_resource_urls: vec!["/logs/*".to_owned(), "/metrics".to_owned()],
            ..PolicyRule::default()
        };
        assert!(rule.allows(&url("get", "/metrics")));
        assert!(rule.allows(&url("get", "/logs/")));
        assert!(rule.allows(&url("get", "/logs/a/b")));
        assert!(!rule.allows(&url("get", "/logs")));
        assert!(!rule.allows(&url("get", "/metrics/x")));
        assert!(!rule.allows(&url("post", "/metrics")));
        assert!(!rule.allows(&request("get", "", "metrics", "", "")));
    }
}
