//! `AdmissionDenied`: the error a step returns to refuse an admission request on purpose, with
//! the status the user sees.

use super::review::AdmissionStatus;

/// A deliberate refusal. Returned (with `?` or `Err(..into())`) from a step of a tree run by an
/// [`AdmissionWebhookAdapter`](crate::AdmissionWebhookAdapter), it becomes the response's
/// status: its code, reason and message. Any other error also refuses the request, as an
/// internal error (code 500) carrying the error's message.
///
/// ```
/// use recon_core::admission::AdmissionDenied;
///
/// let denied = AdmissionDenied::invalid("spec.replicas: must be at most 10");
/// assert_eq!(denied.code(), 422);
/// assert_eq!(denied.to_string(), "spec.replicas: must be at most 10");
/// let status = denied.status();
/// assert_eq!(status.reason.as_deref(), Some("Invalid"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AdmissionDenied {
    code: u16,
    reason: String,
    message: String,
}

impl AdmissionDenied {
    /// Refused with `code` and `reason` (a `metav1.StatusReason`, such as `Forbidden`).
    pub fn new(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        AdmissionDenied {
            code,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// Refused as not allowed: 403 `Forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// Refused as an invalid object: 422 `Invalid`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// Refused as a malformed request: 400 `BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// Refused because the webhook failed: 500 `InternalError` (what any error other than an
    /// `AdmissionDenied` becomes).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The HTTP status code the refusal reads as.
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The response status this refusal gives.
    pub fn status(&self) -> AdmissionStatus {
        AdmissionStatus {
            code: Some(i32::from(self.code)),
            message: Some(self.message.clone()),
            reason: Some(self.reason.clone()),
            status: Some("Failure".to_owned()),
            details: None,
        }
    }
}
