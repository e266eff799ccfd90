//! Escalation prevention on writes of RBAC objects, as the RBAC registry's policy-based storages
//! do it (`pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go`):
//! a user may only write a role granting rules it already holds, and only bind a role whose rules
//! it holds, unless it is in `system:masters`, may `escalate` the role (roles) or may `bind` the
//! role named (bindings). Aggregating ClusterRoles takes every right (`*` on everything).
//!
//! The rules compared are the user's as the storage's rule resolver reads them: the roles bound
//! to it cluster-wide, and in the request's namespace (`pkg/registry/rbac/validation/rule.go`,
//! `ConfirmNoEscalation`); what is missing is broken down, compacted and listed as
//! `rbacv1helpers.CompactString` writes it (`component-helpers/auth/rbac/validation`,
//! `Covers`; `pkg/registry/rbac/validation/policy_compact.go`).

use std::collections::BTreeSet;

use recon_apimachinery::json::Value;
use recon_apimachinery::{go_quote, go_quote_list};

use super::rbac::{self, GROUP, RoleReader};
use super::{Attributes, Target};
use crate::rbac::{PolicyRule, compact, uncovered};
use crate::request::call::Call;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, list_items, meta_str};

/// The metadata the garbage collector writes: an update changing only these is never an
/// escalation (`pkg/registry/rbac/helpers.go`, `IsOnlyMutatingGCFields`).
const GC_FIELDS: [&str; 4] = ["ownerReferences", "finalizers", "selfLink", "managedFields"];

impl State {
    /// Refuses a create (`old` is `None`, a create through PUT or apply included) or an update
    /// of a Role, ClusterRole, RoleBinding or ClusterRoleBinding that would grant `call.user`
    /// rights it does not hold; every other write passes.
    pub(crate) fn confirm_no_escalation(
        &self,
        call: &Call<'_>,
        new: &Object,
        old: Option<&Object>,
    ) -> Result<(), ApiError> {
        if call.rt.custom || call.rt.group != GROUP || call.user.is_privileged() {
            return Ok(());
        }
        let plural = call.rt.plural.as_str();
        let is_role = matches!(plural, "roles" | "clusterroles");
        if !is_role && !matches!(plural, "rolebindings" | "clusterrolebindings") {
            return Ok(());
        }
        // A role's `escalate` is checked before anything else; a binding's `bind` after the
        // garbage collector's exemption.
        if is_role && self.may_escalate(call) {
            return Ok(());
        }
        if old.is_some_and(|old| only_gc_fields_change(new, old)) {
            return Ok(());
        }
        let namespace = call.namespace().unwrap_or("");
        let name = meta_str(new, "name");
        let resource = GroupResource::new(GROUP, plural);
        let forbidden = |why: &str| ApiError::forbidden(&resource, name, why);
        let reader = RoleReader::Storage {
            request_resource: plural,
        };
        if is_role {
            let rules = PolicyRule::list(new.get("rules"));
            self.confirm_held(call.user, namespace, reader, &rules)
                .map_err(|why| forbidden(&why))?;
            let aggregates = |role: &Object| {
                role.get("aggregationRule")
                    .is_some_and(|rule| !list_items(rule.get("clusterRoleSelectors")).is_empty())
            };
            if plural == "clusterroles"
                && (aggregates(new) || old.is_some_and(aggregates))
                && self
                    .confirm_held(call.user, namespace, reader, &full_authority())
                    .is_err()
            {
                return Err(forbidden(
                    "must have cluster-admin privileges to use the aggregationRule",
                ));
            }
            return Ok(());
        }
        let role_ref = new.get("roleRef").unwrap_or(&Value::Null);
        if self.may_bind(call.user, role_ref, namespace) {
            return Ok(());
        }
        let rules = self.role_reference_rules(role_ref, namespace, plural)?;
        self.confirm_held(call.user, namespace, reader, &rules)
            .map_err(|why| forbidden(&why))
    }

    /// `RoleEscalationAuthorized`: the user may `escalate` the role the request names (none on
    /// a create through POST).
    fn may_escalate(&self, call: &Call<'_>) -> bool {
        self.authorize(&Attributes {
            user: call.user.clone(),
            verb: "escalate".to_owned(),
            target: Target::Resource {
                namespace: call.namespace().unwrap_or("").to_owned(),
                group: GROUP.to_owned(),
                resource: call.rt.plural.clone(),
                subresource: String::new(),
                name: call.name().to_owned(),
            },
        })
        .allowed
    }

    /// `BindingAuthorized`: the user may `bind` the role a binding in `namespace` (empty for a
    /// ClusterRoleBinding) refers to.
    fn may_bind(&self, user: &UserInfo, role_ref: &Value, namespace: &str) -> bool {
        let resource = match text(role_ref, "kind") {
            "ClusterRole" => "clusterroles",
            "Role" => "roles",
            _ => return false,
        };
        self.authorize(&Attributes {
            user: user.clone(),
            verb: "bind".to_owned(),
            target: Target::Resource {
                namespace: namespace.to_owned(),
                group: text(role_ref, "apiGroup").to_owned(),
                resource: resource.to_owned(),
                subresource: String::new(),
                name: text(role_ref, "name").to_owned(),
            },
        })
        .allowed
    }

    /// `GetRoleReferenceRules` through the storage's getters: the rules of the role a binding
    /// names, or the error reading it gives (a Role read without a namespace, from a
    /// ClusterRoleBinding, fails before any lookup).
    fn role_reference_rules(
        &self,
        role_ref: &Value,
        namespace: &str,
        request_resource: &str,
    ) -> Result<Vec<PolicyRule>, ApiError> {
        let name = text(role_ref, "name");
        let (plural, key) = match text(role_ref, "kind") {
            "Role" if namespace.is_empty() => {
                return Err(ApiError::bad_request("Namespace parameter required."));
            }
            "Role" => ("roles", object_key(Some(namespace), name)),
            "ClusterRole" => ("clusterroles", object_key(None, name)),
            other => {
                return Err(ApiError::internal_unknown(format!(
                    "unsupported role reference kind: {}",
                    go_quote(other)
                )));
            }
        };
        // The store qualifies its not-found error with the request's resource.
        rbac::stored_rules(self, plural, &key)
            .ok_or_else(|| ApiError::not_found(&GroupResource::new(GROUP, request_resource), name))
    }

    /// `ConfirmNoEscalation`: `Ok` when the rules `user` holds in `namespace` cover `rules`,
    /// otherwise the message naming what is missing.
    fn confirm_held(
        &self,
        user: &UserInfo,
        namespace: &str,
        reader: RoleReader<'_>,
        rules: &[PolicyRule],
    ) -> Result<(), String> {
        let (owned, resolution_errors) = rbac::rules_for(self, user, namespace, reader);
        let missing = uncovered(&owned, rules);
        if missing.is_empty() {
            return Ok(());
        }
        let descriptions: BTreeSet<String> =
            compact(missing).iter().map(ToString::to_string).collect();
        let mut message = format!(
            "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            go_quote(&user.username),
            go_quote_list(&user.groups),
            descriptions.into_iter().collect::<Vec<_>>().join("\n")
        );
        if let Some(errors) = resolution_errors {
            // `%v` of a one-element `[]error` holding the aggregate.
            message.push_str(&format!("; resolution errors: [{errors}]"));
        }
        Err(message)
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// What aggregating ClusterRoles needs: every verb on every resource and path.
fn full_authority() -> Vec<PolicyRule> {
    let all = vec!["*".to_owned()];
    vec![
        PolicyRule {
            verbs: all.clone(),
            api_groups: all.clone(),
            resources: all.clone(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: all.clone(),
            non_resource_urls: all,
            ..PolicyRule::default()
        },
    ]
}

/// `IsOnlyMutatingGCFields`: `new` is `old` once its garbage-collection metadata is `old`'s,
/// compared as Go's semantic equality compares (an unset field and its zero value alike).
fn only_gc_fields_change(new: &Object, old: &Object) -> bool {
    let mut copied = new.clone();
    let old_meta = old.get("metadata").and_then(Value::as_object);
    if let Some(Value::Object(meta)) = copied.get_mut("metadata") {
        for field in GC_FIELDS {
            match old_meta.and_then(|m| m.get(field)) {
                Some(value) => meta.insert(field.to_owned(), value.clone()),
                None => meta.remove(field),
            };
        }
    }
    without_zero_values(&Value::Object(copied)) == without_zero_values(&Value::Object(old.clone()))
}

/// A value with its zero values (null, `""`, `false`, `0`, empty lists and maps) left out, as
/// Go holds them in a struct: unset and zero are the same.
fn without_zero_values(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Bool(b) => b.then(|| value.clone()),
        Value::Number(n) => (n.as_f64() != Some(0.0)).then(|| value.clone()),
        Value::String(s) => (!s.is_empty()).then(|| value.clone()),
        Value::Array(items) => (!items.is_empty()).then(|| {
            // Items keep their places: a zero item is still an item.
            Value::Array(
                items
                    .iter()
                    .map(|i| without_zero_values(i).unwrap_or(Value::Null))
                    .collect(),
            )
        }),
        Value::Object(map) => {
            let kept: recon_apimachinery::json::Map = map
                .iter()
                .filter_map(|(k, v)| without_zero_values(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_garbage_collector_metadata_changing_is_exempt() {
        let old: Object = recon_apimachinery::json::from_value(recon_apimachinery::json!({
            "metadata": {"name": "r", "labels": {}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
        }))
        .unwrap();
        let mut new = old.clone();
        new["metadata"]["ownerReferences"] = recon_apimachinery::json!([{"name": "o"}]);
        new["metadata"]["finalizers"] = recon_apimachinery::json!(["x/y"]);
        new["metadata"].as_object_mut().unwrap().remove("labels");
        assert!(only_gc_fields_change(&new, &old));
        new["metadata"]["labels"] = recon_apimachinery::json!({"a": "b"});
        assert!(!only_gc_fields_change(&new, &old));
    }
}
