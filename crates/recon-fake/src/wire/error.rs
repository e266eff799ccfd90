//! Errors as kube-apiserver reports them: `metav1.Status` bodies with the real codes, reasons and
//! message texts (k8s.io/apimachinery `pkg/api/errors/errors.go`), so `kube::Error::Api` and its
//! `is_not_found()` / `is_conflict()` helpers behave exactly as against a cluster.

use std::fmt;

use recon_apimachinery::go_quote;
use serde::Serialize;

use super::group::{GroupKind, GroupResource};
use super::status::{Reason, StatusCause, StatusDetails};
use crate::field::{FieldError, aggregate};

/// An error answer of the in-memory API server, serialised as a `metav1.Status`.
///
/// The constructors reproduce kube-apiserver's messages word for word; they are public so that
/// reactors can inject the same errors a cluster would send.
///
/// ```
/// use recon_fake::{ApiError, GroupResource};
///
/// let err = ApiError::not_found(&GroupResource::new("", "configmaps"), "settings");
/// assert_eq!(err.code(), 404);
/// assert_eq!(err.message(), r#"configmaps "settings" not found"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    code: u16,
    reason: Reason,
    message: String,
    details: Option<Box<StatusDetails>>,
}

impl ApiError {
    /// An error with an explicit code, reason and message and no details.
    pub fn new(code: u16, reason: Reason, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// Adds `details` to the error.
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The `reason` field.
    pub fn reason(&self) -> Reason {
        self.reason
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `details` field, if any.
    pub fn details(&self) -> Option<&StatusDetails> {
        self.details.as_deref()
    }

    /// `NewNotFound`: 404 `<resource> "<name>" not found`.
    pub fn not_found(resource: &GroupResource, name: &str) -> Self {
        Self::new(
            404,
            Reason::NotFound,
            format!("{resource} {} not found", go_quote(name)),
        )
        .with_details(resource_details(resource, name))
    }

    /// `NewAlreadyExists`: 409 `<resource> "<name>" already exists`.
    pub fn already_exists(resource: &GroupResource, name: &str) -> Self {
        Self::new(
            409,
            Reason::AlreadyExists,
            format!("{resource} {} already exists", go_quote(name)),
        )
        .with_details(resource_details(resource, name))
    }

    /// `NewGenerateNameConflict`: every generated name was taken.
    pub fn generate_name_conflict(resource: &GroupResource, name: &str) -> Self {
        let mut details = resource_details(resource, name);
        details.retry_after_seconds = Some(1);
        Self::new(
            409,
            Reason::AlreadyExists,
            format!(
                "{resource} {} already exists, the server was not able to generate a unique name for the object",
                go_quote(name)
            ),
        )
        .with_details(details)
    }

    /// The same error with `prefix` in front of its message.
    pub(crate) fn prefixed(mut self, prefix: &str) -> Self {
        self.message.insert_str(0, prefix);
        self
    }

    /// `NewConflict`: 409 `Operation cannot be fulfilled on <resource> "<name>": <why>`.
    pub fn conflict(resource: &GroupResource, name: &str, why: &str) -> Self {
        Self::new(
            409,
            Reason::Conflict,
            format!(
                "Operation cannot be fulfilled on {resource} {}: {why}",
                go_quote(name)
            ),
        )
        .with_details(resource_details(resource, name))
    }

    /// The optimistic-lock conflict every stale write gets.
    pub fn optimistic_lock(resource: &GroupResource, name: &str) -> Self {
        Self::conflict(resource, name, OPTIMISTIC_LOCK_MESSAGE)
    }

    /// `NewInvalid`: 422 `<Kind.group> "<name>" is invalid: <errors>`, one cause per field error.
    pub(crate) fn invalid(kind: &GroupKind, name: &str, errors: &[FieldError]) -> Self {
        let details = StatusDetails {
            name: name.to_owned(),
            group: kind.group.clone(),
            kind: kind.kind.clone(),
            causes: errors.iter().map(FieldError::cause).collect(),
            ..StatusDetails::default()
        };
        Self::new(
            422,
            Reason::Invalid,
            format!(
                "{kind} {} is invalid: {}",
                go_quote(name),
                aggregate(errors)
            ),
        )
        .with_details(details)
    }

    /// `NewForbidden`: 403 `<resource> "<name>" is forbidden: <why>`; without a name
    /// `<resource> is forbidden: <why>`, without a resource `forbidden: <why>`.
    pub fn forbidden(resource: &GroupResource, name: &str, why: &str) -> Self {
        let message = match (
            resource.resource.is_empty() && resource.group.is_empty(),
            name,
        ) {
            (true, _) => format!("forbidden: {why}"),
            (false, "") => format!("{resource} is forbidden: {why}"),
            (false, name) => format!("{resource} {} is forbidden: {why}", go_quote(name)),
        };
        Self::new(403, Reason::Forbidden, message).with_details(resource_details(resource, name))
    }

    /// What kube-apiserver's router answers for a path it has no route for, inside a
    /// compiled-in API group: `NewGenericServerResponse(404)`.
    pub fn no_route() -> Self {
        Self::new(
            404,
            Reason::NotFound,
            "the server could not find the requested resource",
        )
        .with_details(StatusDetails::default())
    }

    /// What kube-apiserver's router (go-restful) answers for a `Content-Type` the route does not
    /// consume, before any handler runs.
    pub fn content_type_not_routed() -> Self {
        Self::new(
            415,
            Reason::UnsupportedMediaType,
            "415: Unsupported Media Type",
        )
        .with_details(StatusDetails::default())
    }

    /// What kube-apiserver's router answers for a method a route does not serve.
    pub fn method_not_routed() -> Self {
        Self::new(
            405,
            Reason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        )
        .with_details(StatusDetails::default())
    }

    /// `NewBadRequest`: 400 with a free-text message and no details.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, Reason::BadRequest, message)
    }

    /// `NewMethodNotSupported`: 405 `<verb> is not supported on resources of kind "<resource>"`.
    pub fn method_not_supported(resource: &GroupResource, verb: &str) -> Self {
        Self::new(
            405,
            Reason::MethodNotAllowed,
            format!(
                "{verb} is not supported on resources of kind {}",
                go_quote(&resource.to_string())
            ),
        )
        .with_details(StatusDetails {
            group: resource.group.clone(),
            kind: resource.resource.clone(),
            ..StatusDetails::default()
        })
    }

    /// 415: the patch or body format is not one this resource accepts.
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            Reason::UnsupportedMediaType,
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// A 500 with an empty reason: how the apiserver reports a plain Go error.
    pub fn internal_unknown(message: impl Into<String>) -> Self {
        Self::new(500, Reason::Unknown, message)
    }

    /// 500 `InternalError` with the apiserver's wording.
    pub fn internal(message: &str) -> Self {
        Self::new(
            500,
            Reason::InternalError,
            format!("Internal error occurred: {message}"),
        )
        .with_details(StatusDetails {
            causes: vec![StatusCause {
                reason: String::new(),
                message: message.to_owned(),
                field: String::new(),
            }],
            ..StatusDetails::default()
        })
    }

    /// The `metav1.Status` JSON body.
    pub fn to_status_json(&self) -> Vec<u8> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Status<'a> {
            kind: &'static str,
            api_version: &'static str,
            metadata: Empty,
            status: &'static str,
            message: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            reason: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            details: Option<&'a StatusDetails>,
            code: u16,
        }
        #[derive(Serialize)]
        struct Empty {}
        let status = Status {
            kind: "Status",
            api_version: "v1",
            metadata: Empty {},
            status: "Failure",
            message: &self.message,
            reason: self.reason.as_str(),
            details: self.details.as_deref(),
            code: self.code,
        };
        serde_json::to_vec(&status).unwrap_or_default()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.code,
            self.reason.as_str(),
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

/// `registry.OptimisticLockErrorMsg`.
pub(crate) const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

fn resource_details(resource: &GroupResource, name: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_owned(),
        group: resource.group.clone(),
        kind: resource.resource.clone(),
        ..StatusDetails::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_leaves_out_an_empty_name_as_new_forbidden_does() {
        let widgets = GroupResource::new("example.com", "widgets");
        let message = |name: &str| {
            ApiError::forbidden(&widgets, name, "no")
                .message()
                .to_owned()
        };
        assert_eq!(message("w"), r#"widgets.example.com "w" is forbidden: no"#);
        assert_eq!(message(""), "widgets.example.com is forbidden: no");
        let nothing = GroupResource::new("", "");
        assert_eq!(
            ApiError::forbidden(&nothing, "", "no").message(),
            "forbidden: no"
        );
    }

    #[test]
    fn status_body_has_the_metav1_status_shape() {
        let err = ApiError::not_found(&GroupResource::new("example.com", "widgets"), "foo");
        let body: recon_apimachinery::json::Value =
            serde_json::from_slice(&err.to_status_json()).unwrap();
        assert_eq!(
            body,
            recon_apimachinery::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "widgets.example.com \"foo\" not found", "reason": "NotFound",
                "details": {"name": "foo", "group": "example.com", "kind": "widgets"}, "code": 404
            })
        );
    }

    #[test]
    fn an_empty_reason_is_omitted() {
        let err = ApiError::internal_unknown(
            "resourceVersion should not be set on objects to be created",
        );
        let body: recon_apimachinery::json::Value =
            serde_json::from_slice(&err.to_status_json()).unwrap();
        assert!(body.get("reason").is_none());
        assert_eq!(body["code"], 500);
    }
}
