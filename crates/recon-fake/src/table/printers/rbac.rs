//! The rbac.authorization.k8s.io printers (pkg/printers/internalversion/printers.go:
//! `printRoleBinding`, `printClusterRoleBinding`; subjects split by pkg/apis/rbac/helpers.go,
//! `SubjectsStrings`).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, list_at, name, str_at, text, wide};
use crate::wire::object::Object;

pub(super) const ROLE_BINDING: Printer = Printer {
    group: "rbac.authorization.k8s.io",
    kind: "RoleBinding",
    columns: &[
        NAME,
        text(
            "Role",
            "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
        ),
        AGE,
        wide("Users", "Users in the roleBinding"),
        wide("Groups", "Groups in the roleBinding"),
        wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
    ],
    row: binding_row,
};

pub(super) const CLUSTER_ROLE_BINDING: Printer = Printer {
    group: "rbac.authorization.k8s.io",
    kind: "ClusterRoleBinding",
    columns: &[
        NAME,
        text(
            "Role",
            "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
        ),
        AGE,
        wide("Users", "Users in the clusterRoleBinding"),
        wide("Groups", "Groups in the clusterRoleBinding"),
        wide(
            "ServiceAccounts",
            "ServiceAccounts in the clusterRoleBinding",
        ),
    ],
    row: binding_row,
};

fn binding_row(obj: &Object, now: Timestamp) -> Row {
    let role = format!(
        "{}/{}",
        str_at(obj, &["roleRef", "kind"]),
        str_at(obj, &["roleRef", "name"])
    );
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in list_at(obj, &["subjects"]) {
        let field = |k: &str| subject.get(k).and_then(Value::as_str).unwrap_or("");
        match field("kind") {
            "ServiceAccount" => accounts.push(format!("{}/{}", field("namespace"), field("name"))),
            "User" => users.push(field("name").to_owned()),
            "Group" => groups.push(field("name").to_owned()),
            _ => {}
        }
    }
    Row::new(vec![
        name(obj),
        Cell::text(role),
        age_of(obj, now),
        Cell::text(users.join(", ")),
        Cell::text(groups.join(", ")),
        Cell::text(accounts.join(", ")),
    ])
}
