//! The review a client sends to learn who it is (`pkg/registry/authentication/selfsubjectreview`),
//! answered for the in-memory server's one identity, a cluster administrator
//! (`UserInfo::admin`) or whom it impersonates.

use recon_apimachinery::json;

use super::subresource_body::{BodyKind, decode_as};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::object::encode_answer;

const SELF_SUBJECT_REVIEW: BodyKind = BodyKind {
    group: "authentication.k8s.io",
    versions: &["v1", "v1beta1"],
    kind: "SelfSubjectReview",
    internal_package: "authentication",
};

impl State {
    /// `SelfSubjectReview`: the requester's user info, stamped with the time of the review.
    pub(crate) fn review_self(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut review = decode_as(call, &SELF_SUBJECT_REVIEW, &|g, v, k| self.knows(g, v, k))?;
        let user = call.user;
        let mut info = json!({"username": user.username, "groups": user.groups});
        if !user.uid.is_empty() {
            info["uid"] = json!(user.uid);
        }
        if let Some(extra) = user.extra_json() {
            info["extra"] = extra;
        }
        review.insert("metadata".into(), json!({"creationTimestamp": self.now()}));
        review.insert("status".into(), json!({"userInfo": info}));
        Ok(Reply::json(201, encode_answer(&review)))
    }
}
