//! The parts of a `metav1.Status` body an error fills in: its reason, and the details that name
//! the object and list the causes.

use serde::Serialize;

/// A `metav1.StatusReason`: the machine-readable half of an API error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// 404 `NotFound`.
    NotFound,
    /// 409 `AlreadyExists`.
    AlreadyExists,
    /// 409 `Conflict` (optimistic lock, preconditions).
    Conflict,
    /// 422 `Invalid` (validation).
    Invalid,
    /// 400 `BadRequest`.
    BadRequest,
    /// 403 `Forbidden`.
    Forbidden,
    /// 405 `MethodNotAllowed`.
    MethodNotAllowed,
    /// 406 `NotAcceptable`.
    NotAcceptable,
    /// 415 `UnsupportedMediaType`.
    UnsupportedMediaType,
    /// 410 `Gone`.
    Gone,
    /// 410 `Expired`.
    Expired,
    /// 413 `RequestEntityTooLarge`.
    RequestEntityTooLarge,
    /// 429 `TooManyRequests`.
    TooManyRequests,
    /// 500 `InternalError`.
    InternalError,
    /// 503 `ServiceUnavailable`.
    ServiceUnavailable,
    /// 504 `Timeout`.
    Timeout,
    /// An empty reason: what the apiserver sends for errors that are not `StatusError`s.
    Unknown,
    /// Not a Kubernetes reason: recon's in-memory server answers 501 `NotImplemented` to requests
    /// it does not model yet, rather than answering them wrongly.
    NotImplemented,
}

impl Reason {
    /// The wire spelling (`""` for [`Reason::Unknown`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotFound => "NotFound",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Invalid => "Invalid",
            Reason::BadRequest => "BadRequest",
            Reason::Forbidden => "Forbidden",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::NotAcceptable => "NotAcceptable",
            Reason::UnsupportedMediaType => "UnsupportedMediaType",
            Reason::Gone => "Gone",
            Reason::Expired => "Expired",
            Reason::RequestEntityTooLarge => "RequestEntityTooLarge",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
            Reason::Timeout => "Timeout",
            Reason::Unknown => "",
            Reason::NotImplemented => "NotImplemented",
        }
    }
}

impl std::str::FromStr for Reason {
    type Err = String;

    /// The reason of its wire spelling (`""` is [`Reason::Unknown`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const ALL: [Reason; 18] = [
            Reason::NotFound,
            Reason::AlreadyExists,
            Reason::Conflict,
            Reason::Invalid,
            Reason::BadRequest,
            Reason::Forbidden,
            Reason::MethodNotAllowed,
            Reason::NotAcceptable,
            Reason::UnsupportedMediaType,
            Reason::Gone,
            Reason::Expired,
            Reason::RequestEntityTooLarge,
            Reason::TooManyRequests,
            Reason::InternalError,
            Reason::ServiceUnavailable,
            Reason::Timeout,
            Reason::Unknown,
            Reason::NotImplemented,
        ];
        ALL.into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a Kubernetes status reason"))
    }
}

/// `metav1.StatusDetails`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The object's name, when the error concerns one object.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The API group (empty for the core group).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Usually the resource plural (the apiserver's own quirk), sometimes a Kind.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The object's uid, on successful deletes.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// One entry per field error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Set on errors a client should retry after a delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// `metav1.StatusCause` (its `type` is spelled `reason` on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusCause {
    /// Machine-readable cause, e.g. `FieldValueInvalid`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable description of the cause.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field path the cause concerns, e.g. `metadata.name`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
}
