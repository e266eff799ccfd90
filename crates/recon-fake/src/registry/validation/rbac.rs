//! rbac.authorization.k8s.io: Roles, ClusterRoles and their bindings
//! (`pkg/apis/rbac/validation`).

use recon_apimachinery::json;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_subdomain_name_errors, path_segment_errors};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

use super::read::{list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// The errors of creating `obj`, a `kind` of rbac.authorization.k8s.io.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    match kind {
        "Role" => validate_rules(obj, true),
        "ClusterRole" => validate_cluster_role(obj),
        "RoleBinding" => validate_binding(obj, true),
        "ClusterRoleBinding" => validate_binding(obj, false),
        _ => Vec::new(),
    }
}

/// The errors of updating `old` to `new`: those of a create, then a binding's `roleRef` may not
/// change (`ValidateRoleBindingUpdate`, `ValidateClusterRoleBindingUpdate`).
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = validate_create(kind, new);
    if matches!(kind, "RoleBinding" | "ClusterRoleBinding")
        && new.get("roleRef") != old.get("roleRef")
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "roleRef",
            BadValue::Raw(role_ref_json(new)),
            "cannot change roleRef",
        ));
    }
    errors
}

/// `ValidateRole` / the rules of `ValidateClusterRole`: `ValidatePolicyRule` for each.
fn validate_rules(obj: &Object, namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rules = obj.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errors.extend(policy_rule_errors(
            rule,
            namespaced,
            &Path::new("rules").index(i),
        ));
    }
    errors
}

/// `ValidatePolicyRule`.
fn policy_rule_errors(rule: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rule = Some(rule);
    if list_at(rule, "verbs").is_empty() {
        errors.push(FieldError::required(
            path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = list_at(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let value = BadValue::Raw(Value::Array(urls.to_vec().into()).to_string());
        if namespaced {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("nonResourceURLs"),
                value.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| !list_at(rule, k).is_empty())
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("nonResourceURLs"),
                value,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errors;
    }
    if list_at(rule, "apiGroups").is_empty() {
        errors.push(FieldError::required(
            path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_at(rule, "resources").is_empty() {
        errors.push(FieldError::required(
            path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errors
}

/// `ValidateClusterRole`: the rules, then an aggregation rule needs selectors.
fn validate_cluster_role(obj: &Object) -> Vec<FieldError> {
    let mut errors = validate_rules(obj, false);
    if let Some(rule) = obj.get("aggregationRule").filter(|v| !v.is_null())
        && list_at(Some(rule), "clusterRoleSelectors").is_empty()
    {
        errors.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    errors
}

/// The internal `rbac.RoleRef` (no JSON tags) as `field.Error` prints it.
fn role_ref_json(obj: &Object) -> String {
    let role_ref = obj.get("roleRef");
    format!(
        "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
        json!(str_at(role_ref, "apiGroup")),
        json!(str_at(role_ref, "kind")),
        json!(str_at(role_ref, "name")),
    )
}

/// `ValidateRoleBinding` (namespaced) and `ValidateClusterRoleBinding`.
fn validate_binding(obj: &Object, namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let role_ref = obj.get("roleRef");
    let group = str_at(role_ref, "apiGroup");
    if group != RBAC_GROUP {
        errors.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[RBAC_GROUP],
        ));
    }
    let kind = str_at(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errors.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = str_at(role_ref, "name");
    if name.is_empty() {
        errors.push(FieldError::required("roleRef.name", ""));
    } else {
        for message in path_segment_errors(name, false) {
            errors.push(FieldError::invalid("roleRef.name", name, message));
        }
    }
    let subjects = obj.get("subjects").and_then(Value::as_array);
    for (i, subject) in subjects.into_iter().flatten().enumerate() {
        errors.extend(subject_errors(
            subject,
            namespaced,
            &Path::new("subjects").index(i),
        ));
    }
    errors
}

/// `ValidateRoleBindingSubject`.
fn subject_errors(subject: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let subject = Some(subject);
    let name = str_at(subject, "name");
    if name.is_empty() {
        errors.push(FieldError::required(path.child("name"), ""));
    }
    let group = str_at(subject, "apiGroup");
    match str_at(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for message in dns1123_subdomain_name_errors(name) {
                    errors.push(FieldError::invalid(path.child("name"), name, message));
                }
            }
            if !group.is_empty() {
                errors.push(FieldError::not_supported(
                    path.child("apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && str_at(subject, "namespace").is_empty() {
                errors.push(FieldError::required(path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != RBAC_GROUP {
                errors.push(FieldError::not_supported(
                    path.child("apiGroup"),
                    group,
                    &[RBAC_GROUP],
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errors
}
