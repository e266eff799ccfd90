//! The self reviews a client sends to learn who it is and what it may do
//! (`pkg/registry/authentication/selfsubjectreview`,
//! `pkg/registry/authorization/selfsubjectaccessreview`), answered for the in-memory server's
//! one identity, a cluster administrator ([`UserInfo::admin`]): in `system:masters`, every
//! request is allowed.

use serde_json::{Value, json};

use super::field_manager::FieldManager;
use super::subresource_body::{BodyKind, decode_as};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::field_error::{BadValue, ErrorType, FieldError};
use crate::wire::group::GroupKind;

const SELF_SUBJECT_REVIEW: BodyKind = BodyKind {
    group: "authentication.k8s.io",
    versions: &["v1", "v1beta1"],
    kind: "SelfSubjectReview",
    internal_package: "authentication",
};

const SELF_SUBJECT_ACCESS_REVIEW: BodyKind = BodyKind {
    group: "authorization.k8s.io",
    versions: &["v1"],
    kind: "SelfSubjectAccessReview",
    internal_package: "authorization",
};

impl State {
    /// `SelfSubjectReview`: the requester's user info, stamped with the time of the review.
    pub(crate) fn review_self(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut review = decode_as(call, &SELF_SUBJECT_REVIEW, &|g, v, k| self.knows(g, v, k))?;
        let user = UserInfo::admin();
        let mut info = json!({"username": user.username, "groups": user.groups});
        if !user.uid.is_empty() {
            info["uid"] = json!(user.uid);
        }
        if let Some(extra) = user.extra_json() {
            info["extra"] = extra;
        }
        review.insert("metadata".into(), json!({"creationTimestamp": self.now()}));
        review.insert("status".into(), json!({"userInfo": info}));
        Ok(Reply::json(201, to_vec(review)))
    }

    /// `SelfSubjectAccessReview`: exactly one of the resource and non-resource attributes, and
    /// the answer, with the managedFields the create handler records.
    pub(crate) fn review_self_access(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut review = decode_as(call, &SELF_SUBJECT_ACCESS_REVIEW, &|g, v, k| {
            self.knows(g, v, k)
        })?;
        let spec = review.get("spec");
        let given = |key: &str| spec.and_then(|s| s.get(key)).is_some_and(|v| !v.is_null());
        let (resource, non_resource) =
            (given("resourceAttributes"), given("nonResourceAttributes"));
        if resource == non_resource {
            let error = if resource {
                // The internal type's fields, as Go prints the struct (`ValidateSelfSubjectAccessReviewSpec`).
                let attributes = spec.and_then(|s| s.get("nonResourceAttributes"));
                let text = |key: &str| {
                    attributes
                        .and_then(|a| a.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                };
                FieldError::new(
                    ErrorType::Invalid,
                    "spec.nonResourceAttributes",
                    BadValue::Raw(format!(
                        "{{\"Path\":{},\"Verb\":{}}}",
                        json!(text("path")),
                        json!(text("verb"))
                    )),
                    "cannot be specified in combination with resourceAttributes",
                )
            } else {
                FieldError::new(
                    ErrorType::Invalid,
                    "spec.resourceAttributes",
                    BadValue::Raw("null".to_owned()),
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )
            };
            return Err(ApiError::invalid(
                &GroupKind::new("authorization.k8s.io".to_owned(), String::new()),
                "",
                &[error],
            ));
        }
        FieldManager::new(call, self.clock.now()).record_update(None, &mut review);
        review.insert("status".into(), json!({"allowed": true}));
        Ok(Reply::json(201, to_vec(review)))
    }
}

fn to_vec(obj: serde_json::Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(&Value::Object(obj)).unwrap_or_default()
}
