//! kube-controller-manager's ClusterRole aggregation controller
//! (`pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`): a ClusterRole
//! with an `aggregationRule` holds the rules of every other ClusterRole its selectors match
//! (in name order, each rule once), written by a forced server-side apply of its `rules` as
//! `clusterrole-aggregation-controller`. It runs on every cluster, so here after each write to
//! a ClusterRole, as its informer would have caught up, and as the server boots: `admin`,
//! `edit` and `view` hold the rules of the `aggregate-to-*` roles.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use http::Method;
use memchr::memmem;
use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

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
        // In name order (a cluster-scoped key is the name).
        let stored: Vec<(&String, &Stored)> = self.store.list(&roles_resource, None).collect();
        let lister = &mut self.cluster_role_lister;
        lister.catch_up(&stored);
        let lister = &*lister;
        let aggregating = stored
            .iter()
            .filter(|(name, _)| lister.aggregating(name))
            .filter_map(|(name, role)| lister.read(name, role));
        let mut applies = Vec::new();
        for role in aggregating {
            let role = &*role;
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
                for (other_name, other) in &stored {
                    if other_name.as_str() == name
                        || !selector_matches_labels(selector, |key| other.label(key))
                    {
                        continue;
                    }
                    let Some(other) = lister.read(other_name, other) else {
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

/// The controller's lister: every ClusterRole by name, read again only once it changes. It keeps
/// whether a role aggregates (its stored body names an `aggregationRule`) and, once read, the
/// decoded roles it needs: the aggregating ones and those their selectors match.
#[derive(Default)]
pub(crate) struct ClusterRoleLister {
    roles: HashMap<String, Listed>,
}

struct Listed {
    revision: u64,
    aggregating: bool,
    decoded: OnceCell<Option<Arc<Object>>>,
}

impl ClusterRoleLister {
    /// Brings the lister up to the stored roles, which come in name order.
    fn catch_up(&mut self, stored: &[(&String, &Stored)]) {
        self.roles.retain(|name, _| {
            stored
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .is_ok()
        });
        for (name, role) in stored {
            if self
                .roles
                .get(*name)
                .is_some_and(|l| l.revision == role.revision)
            {
                continue;
            }
            let listed = Listed {
                revision: role.revision,
                aggregating: memmem::find(&role.body, b"\"aggregationRule\"").is_some(),
                decoded: OnceCell::new(),
            };
            self.roles.insert((*name).clone(), listed);
        }
    }

    fn aggregating(&self, name: &str) -> bool {
        self.roles.get(name).is_some_and(|l| l.aggregating)
    }

    /// The role decoded; `None` when it does not decode (the lister holds no such role).
    fn read(&self, name: &str, role: &Stored) -> Option<Arc<Object>> {
        let listed = self.roles.get(name)?;
        listed
            .decoded
            .get_or_init(|| role.decode(name).ok().map(Arc::new))
            .clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str, aggregating: bool, revision: u64) -> Stored {
        let mut obj = json!({"metadata": {"name": name, "resourceVersion": revision.to_string()}});
        if aggregating {
            obj["aggregationRule"] = json!({"clusterRoleSelectors": []});
        }
        let Value::Object(obj) = obj else {
            unreachable!()
        };
        Stored::new(&obj, revision, None)
    }

    #[test]
    fn the_lister_reads_a_role_again_only_once_it_changed_and_forgets_deleted_ones() {
        let (a, b) = ("a".to_owned(), "b".to_owned());
        let mut lister = ClusterRoleLister::default();
        let (a1, b1) = (role("a", false, 1), role("b", true, 2));
        lister.catch_up(&[(&a, &a1), (&b, &b1)]);
        assert!(!lister.aggregating("a") && lister.aggregating("b"));
        let first = lister.read("b", &b1).unwrap();
        assert!(Arc::ptr_eq(&first, &lister.read("b", &b1).unwrap()));

        // `a` gains an aggregation rule, `b` is deleted.
        let a3 = role("a", true, 3);
        lister.catch_up(&[(&a, &a3)]);
        assert!(lister.aggregating("a"));
        assert!(
            lister
                .read("a", &a3)
                .unwrap()
                .contains_key("aggregationRule")
        );
        assert!(!lister.aggregating("b"));
        assert!(lister.read("b", &b1).is_none());
    }
}
