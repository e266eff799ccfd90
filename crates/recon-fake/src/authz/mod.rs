//! Authorization as kube-apiserver's chain decides it with `--authorization-mode=RBAC`
//! (`pkg/kubeapiserver/authorizer/reload.go`): the `system:masters` group is allowed everything
//! (`apiserver/pkg/authorization/authorizerfactory/builtin.go`), then the RBAC authorizer
//! ([`rbac`]) allows what a bound role's rules allow, or has no opinion; no opinion from every
//! authorizer is a denial (`apiserver/pkg/authorization/union/union.go`).

mod escalation;
pub(crate) mod impersonation;
pub(crate) mod lister;
pub(crate) mod rbac;
pub(crate) mod request_info;

use recon_apimachinery::go_quote;

use crate::state::State;
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;

/// `user.SystemPrivilegedGroup`: its members pass every authorization check.
const PRIVILEGED_GROUP: &str = "system:masters";

/// What a request asks to do (`authorizer.Attributes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    pub(crate) user: UserInfo,
    pub(crate) verb: String,
    pub(crate) target: Target,
}

/// What a request is on, as kube-apiserver's authorizer reads it from the path
/// (`RequestInfo`): one of the API's resources, or another path of the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessTarget {
    /// A request under `/api` or `/apis` on a resource.
    Resource {
        /// The namespace; empty for a cluster-wide request.
        namespace: String,
        /// The API group; empty for the core group.
        group: String,
        /// The resource's plural (`deployments`).
        resource: String,
        /// The subresource (`status`), or empty.
        subresource: String,
        /// The object's name; empty for a request on a collection (a list or watch of one
        /// name by a `metadata.name=` field selector has that name).
        name: String,
    },
    /// A request on any other path (`/version`, `/apis`, `/healthz`).
    NonResource {
        /// The URL path.
        path: String,
    },
}

/// What a request asked to do, as kube-apiserver's authorizer saw it, and whether it was
/// allowed; the request log keeps it for every request ([`crate::RecordedRequest::access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Access {
    /// The user the request acted as: `admin` for [`crate::ApiServer::client`], or whom it
    /// impersonated.
    pub user: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or
    /// `deletecollection` on a resource; the method in lower case on another path.
    pub verb: String,
    /// What the request is on.
    pub target: AccessTarget,
    /// Whether the authorizer allowed it (refused requests are answered 403).
    pub allowed: bool,
}

pub(crate) use AccessTarget as Target;

/// A request's attributes and the authorizer's decision on them.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub(crate) attributes: Attributes,
    pub(crate) decision: Decision,
}

/// What a request of the administrator's own (no impersonation) asked, allowed: the
/// administrator is in `system:masters`, which every check allows whatever the roles, so this
/// depends on the request alone and the log works it out only when it is read.
pub(crate) fn administrator_access(method: &http::Method, path: &str, query: &str) -> Access {
    let admin = &*crate::user::ADMIN;
    debug_assert!(admin.is_privileged());
    let attributes = request_info::attributes(
        admin.clone(),
        method,
        path,
        &crate::request::route::Query::parse(query),
    );
    Checked {
        attributes,
        decision: Decision {
            allowed: true,
            reason: String::new(),
        },
    }
    .into_access()
}

impl Checked {
    pub(crate) fn into_access(self) -> Access {
        Access {
            user: self.attributes.user.username,
            groups: self.attributes.user.groups,
            verb: self.attributes.verb,
            target: self.attributes.target,
            allowed: self.decision.allowed,
        }
    }
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

impl UserInfo {
    /// Whether the user is in `system:masters`, which every check allows.
    pub(crate) fn is_privileged(&self) -> bool {
        self.groups.iter().any(|g| g == PRIVILEGED_GROUP)
    }
}

/// The 403 of a request the authorizer did not allow
/// (`apiserver/pkg/endpoints/handlers/responsewriters/errors.go`, `ForbiddenStatusError`):
/// who cannot do what, where, then the authorizer's reason when it gave one; `&`, `<` and `>`
/// escaped as HTML.
pub(crate) fn forbidden(attributes: &Attributes, reason: &str) -> ApiError {
    let user = go_quote(&attributes.user.username);
    let verb = &attributes.verb;
    let (message, resource, name) = match &attributes.target {
        Target::NonResource { path } => (
            format!("User {user} cannot {verb} path {}", go_quote(path)),
            GroupResource::new("", ""),
            "",
        ),
        Target::Resource {
            namespace,
            group,
            resource,
            subresource,
            name,
        } => {
            let what = if subresource.is_empty() {
                resource.clone()
            } else {
                format!("{resource}/{subresource}")
            };
            let scope = if namespace.is_empty() {
                "at the cluster scope".to_owned()
            } else {
                format!("in the namespace {}", go_quote(namespace))
            };
            (
                format!(
                    "User {user} cannot {verb} resource {} in API group {} {scope}",
                    go_quote(&what),
                    go_quote(group)
                ),
                GroupResource::new(group, resource),
                name.as_str(),
            )
        }
    };
    let message = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let why = if reason.is_empty() {
        message
    } else {
        format!("{message}: {reason}")
    };
    ApiError::forbidden(&resource, name, &why)
}

impl State {
    /// Decides `attributes` as kube-apiserver's authorizer chain does.
    pub(crate) fn authorize(&self, attributes: &Attributes) -> Decision {
        if attributes.user.is_privileged() {
            return Decision {
                allowed: true,
                reason: String::new(),
            };
        }
        let (allowed, reason) = rbac::authorize(self, attributes);
        Decision { allowed, reason }
    }
}
