//! Failures a case injects, written as data so YAML suites can say them too.

use recon_fake::{ApiError, ApiServer, Failure, Reason, Verb};
use serde::{Deserialize, Serialize};

/// A failure injected into matching requests of a case (see
/// [`ApiServer::on`](recon_fake::ApiServer::on)).
///
/// ```yaml
/// reactors:
///   - verb: patch
///     resource: widgets
///     subresource: status
///     times: 1
///     fail: conflict
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReactorSpec {
    /// `get`, `list`, `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: String,
    /// The resource plural, such as `widgets`.
    pub resource: String,
    /// Only this API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Only this subresource (`status`); absent, the object itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// Only this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Only the first `times` matching requests; absent, all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<usize>,
    /// The failure.
    pub fail: FailureSpec,
}

/// An injected failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum FailureSpec {
    /// 409 with the optimistic-lock message.
    Conflict,
    /// 404 NotFound.
    NotFound,
    /// 409 AlreadyExists.
    AlreadyExists,
    /// 500 InternalError with this cause.
    Internal(String),
    /// 403 Forbidden for the object, with this reason (`configmaps "c" is forbidden: <reason>`,
    /// as RBAC or an admission plugin words it).
    Forbidden(String),
    /// Exactly this status.
    Status {
        /// The HTTP code.
        code: u16,
        /// The reason, as on the wire (`TooManyRequests`).
        reason: String,
        /// The message.
        message: String,
    },
}

impl ReactorSpec {
    /// Every `verb` request on `resource` (a plural, such as `configmaps`) fails with `fail`.
    ///
    /// ```
    /// use recon_testing::{FailureSpec, ReactorSpec};
    ///
    /// let once = ReactorSpec::new("create", "configmaps", FailureSpec::AlreadyExists).times(1);
    /// assert_eq!(once.times, Some(1));
    /// ```
    pub fn new(verb: &str, resource: &str, fail: FailureSpec) -> Self {
        ReactorSpec {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            group: None,
            subresource: None,
            namespace: None,
            name: None,
            times: None,
            fail,
        }
    }

    /// Only the first `n` matching requests fail.
    #[must_use]
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }

    /// Only requests about the object `name` fail.
    #[must_use]
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Only requests to this subresource fail (`status`); without it, only requests to the
    /// object itself.
    ///
    /// ```
    /// use recon_testing::{FailureSpec, ReactorSpec};
    ///
    /// let status = ReactorSpec::new("patch", "widgets", FailureSpec::Conflict).subresource("status");
    /// assert_eq!(status.subresource.as_deref(), Some("status"));
    /// ```
    #[must_use]
    pub fn subresource(mut self, subresource: &str) -> Self {
        self.subresource = Some(subresource.to_owned());
        self
    }

    /// Only requests in this API group fail (`apps`; `""` for the core group).
    #[must_use]
    pub fn group(mut self, group: &str) -> Self {
        self.group = Some(group.to_owned());
        self
    }

    /// Only requests in this namespace fail.
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Registers the reactor on `server`.
    pub(crate) fn install(&self, server: &ApiServer) -> Result<(), String> {
        let verb: Verb = self.verb.parse()?;
        let failure = match &self.fail {
            FailureSpec::Conflict => Failure::Conflict,
            FailureSpec::NotFound => Failure::NotFound,
            FailureSpec::AlreadyExists => Failure::AlreadyExists,
            FailureSpec::Internal(cause) => Failure::Internal(cause.clone()),
            FailureSpec::Forbidden(why) => Failure::Forbidden(why.clone()),
            FailureSpec::Status {
                code,
                reason,
                message,
            } => {
                let reason: Reason = reason.parse()?;
                Failure::Api(ApiError::new(*code, reason, message.clone()))
            }
        };
        let mut reactor = server.on(verb, &self.resource);
        if let Some(g) = &self.group {
            reactor = reactor.group(g);
        }
        if let Some(s) = &self.subresource {
            reactor = reactor.subresource(s);
        }
        if let Some(n) = &self.namespace {
            reactor = reactor.namespace(n);
        }
        if let Some(n) = &self.name {
            reactor = reactor.name(n);
        }
        if let Some(t) = self.times {
            reactor = reactor.times(t);
        }
        reactor.fail(failure);
        Ok(())
    }
}
