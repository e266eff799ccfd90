//! Authorization as kube-apiserver's chain decides it with `--authorization-mode=RBAC`
//! (`pkg/kubeapiserver/authorizer/reload.go`): the `system:masters` group is allowed everything
//! (`apiserver/pkg/authorization/authorizerfactory/builtin.go`), then the RBAC authorizer
//! ([`rbac`]) allows what a bound role's rules allow, or has no opinion; no opinion from every
//! authorizer is a denial (`apiserver/pkg/authorization/union/union.go`).

pub(crate) mod rbac;

use crate::state::State;
use crate::user::UserInfo;

/// `user.SystemPrivilegedGroup`: its members pass every authorization check.
const PRIVILEGED_GROUP: &str = "system:masters";

/// What a request asks to do (`authorizer.Attributes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    pub(crate) user: UserInfo,
    pub(crate) verb: String,
    pub(crate) target: Target,
}

/// A request on the API's resources, or on another path of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Resource {
        /// Empty for a cluster-wide request.
        namespace: String,
        group: String,
        resource: String,
        subresource: String,
        /// Empty for a request on a collection.
        name: String,
    },
    NonResource {
        path: String,
    },
}

impl Attributes {
    /// The namespace whose role bindings apply: none for a non-resource request.
    fn namespace(&self) -> &str {
        match &self.target {
            Target::Resource { namespace, .. } => namespace,
            Target::NonResource { .. } => "",
        }
    }
}

/// What the chain of authorizers answers (`authorizer.Decision` and its reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub(crate) allowed: bool,
    /// Why: the binding that allowed, or the errors met looking for one; empty when none.
    pub(crate) reason: String,
}

impl State {
    /// Decides `attributes` as kube-apiserver's authorizer chain does.
    pub(crate) fn authorize(&self, attributes: &Attributes) -> Decision {
        if attributes.user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
            return Decision {
                allowed: true,
                reason: String::new(),
            };
        }
        let (allowed, reason) = rbac::authorize(self, attributes);
        Decision { allowed, reason }
    }
}
