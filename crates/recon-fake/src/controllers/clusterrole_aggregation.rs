//! kube-controller-manager's ClusterRole aggregation controller
//! (`pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`): a ClusterRole
//! with an `aggregationRule` holds the rules of every other ClusterRole its selectors match
//! (in name order, each rule once), written by a forced server-side apply of its `rules` as
//! `clusterrole-aggregation-controller`. It runs on every cluster, so here after each write to
//! a ClusterRole, as its informer would have caught up, and as the server boots: `admin`,
//! `edit` and `view` hold the rules of the `aggregate-to-*` roles.

use std::cell::OnceCell;

use http::Method;
use memchr::memmem;
use serde_json::{Map, Value, json};

use super::client::Controller;
use crate::client_service::InternalRequest;
use crate::record::RequestOrigin;
use crate::registry::validation::{selector_converts, selector_matches_labels};
use crate::state::State;
use crate::storage::stored::Stored;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, list_items, meta_str};

const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

impl State {
    /// `syncClusterRole` for every aggregated ClusterRole; requests logged under `origin` when
    /// given.
    pub(crate) fn aggregate_cluster_roles(&mut self, origin: Option<RequestOrigin>) {
        let roles_resource = GroupResource::new("rbac.authorization.k8s.io", "clusterroles");
        // In name order (a cluster-scoped key is the name). Only the aggregating roles and those
        // their selectors match (read from the stored labels) are decoded: a cluster holds
        // dozens of roles, and this runs after every write to one.
        let stored: Vec<(&String, &Stored)> = self.store.list(&roles_resource, None).collect();
        let decoded: Vec<OnceCell<Option<Object>>> =
            stored.iter().map(|_| OnceCell::new()).collect();
        let read = |i: usize| {
            let (name, role) = stored[i];
            decoded[i].get_or_init(|| role.decode(name).ok()).as_ref()
        };
        let aggregating = (0..stored.len())
            .filter(|&i| memmem::find(&stored[i].1.body, b"\"aggregationRule\"").is_some())
            .filter_map(read);
        let mut applies = Vec::new();
        for role in aggregating {
            let Some(selectors) =
                role.get("aggregationRule")
                    .filter(|r| !r.is_null())
                    .map(|rule| {
                        rule.get("clusterRoleSelectors")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                    })
            else {
                continue;
            };
            // A selector that does not convert fails the sync: the role is left as it is.
            if !selectors.iter().all(selector_converts) {
                continue;
            }
            let name = meta_str(role, "name");
            let mut rules: Vec<Value> = Vec::new();
            for selector in &selectors {
                for (i, (other_name, other)) in stored.iter().enumerate() {
                    if other_name.as_str() == name
                        || !selector_matches_labels(selector, |key| other.label(key))
                    {
                        continue;
                    }
                    let Some(other) = read(i) else {
                        continue;
                    };
                    for rule in list_items(other.get("rules")) {
                        if !rules.iter().any(|r| same_rule(r, rule)) {
                            rules.push(rule.clone());
                        }
                    }
                }
            }
            let current = list_items(role.get("rules"));
            let unchanged = current.len() == rules.len()
                && current.iter().zip(&rules).all(|(a, b)| same_rule(a, b));
            if !unchanged {
                applies.push((name.to_owned(), rules));
            }
        }
        for (name, rules) in applies {
            let rules: Vec<Value> = rules.iter().map(apply_rule).collect();
            let body = json!({
                "kind": "ClusterRole",
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "metadata": {"name": name},
                "rules": rules,
            });
            let path = format!("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}");
            let query = format!("fieldManager={FIELD_MANAGER}&force=true");
            self.serve_internal(
                origin,
                InternalRequest {
                    method: Method::PATCH,
                    path: &path,
                    query: &query,
                    content_type: "application/apply-patch+yaml",
                    user_agent: Controller::ClusterRoleAggregation.user_agent(),
                    body: body.to_string().into_bytes(),
                },
            );
        }
    }
}

/// The rule's lists, an absent or null one read as empty (`equality.Semantic` takes a nil slice
/// for an empty one).
const RULE_LISTS: [&str; 5] = [
    "verbs",
    "apiGroups",
    "resources",
    "resourceNames",
    "nonResourceURLs",
];

fn same_rule(a: &Value, b: &Value) -> bool {
    RULE_LISTS
        .iter()
        .all(|key| list_items(a.get(*key)) == list_items(b.get(*key)))
}

/// The rule as an apply configuration writes it: the lists that are set.
fn apply_rule(rule: &Value) -> Value {
    let mut out = Map::new();
    for key in [
        "resources",
        "resourceNames",
        "apiGroups",
        "nonResourceURLs",
        "verbs",
    ] {
        if let Some(list) = rule.get(key).filter(|l| l.is_array()) {
            out.insert(key.to_owned(), list.clone());
        }
    }
    Value::Object(out)
}
