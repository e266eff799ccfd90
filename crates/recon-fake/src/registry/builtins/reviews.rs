//! The review APIs of authentication.k8s.io/v1 and authorization.k8s.io/v1: create-only
//! resources that store nothing and answer the request with its `status` filled in
//! (`pkg/registry/authentication/*`, `pkg/registry/authorization/*`).

use super::builtin;
use crate::registry::resource::{ResourceType, Serving};

pub(super) fn types() -> Vec<ResourceType> {
    let review = |group: &str, kind: &str, plural: &str, namespaced: bool| {
        builtin(group, "v1", kind, plural, namespaced).serving(Serving::CreateOnly, &["create"])
    };
    vec![
        review(
            "authentication.k8s.io",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
        ),
        review(
            "authentication.k8s.io",
            "TokenReview",
            "tokenreviews",
            false,
        ),
        review(
            "authorization.k8s.io",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            true,
        ),
        review(
            "authorization.k8s.io",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
        ),
        review(
            "authorization.k8s.io",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
        ),
        review(
            "authorization.k8s.io",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
        ),
    ]
}
