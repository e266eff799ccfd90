//! rbac.authorization.k8s.io: the API group of a binding's subjects.

use super::{default_zero, items, str_of};
use crate::wire::object::Object;

/// A subject of kind User or Group belongs to the RBAC API group when it names none.
pub(super) fn role_binding(obj: &mut Object) {
    for subject in items(obj, "subjects") {
        match str_of(subject, "kind") {
            "User" | "Group" => default_zero(subject, "apiGroup", "rbac.authorization.k8s.io"),
            _ => {}
        }
    }
}
