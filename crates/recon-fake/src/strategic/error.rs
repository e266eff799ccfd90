//! The errors of a strategic merge patch: the merge's own failures, mirroring Go's error values,
//! and the answer the apiserver's PATCH handler makes of each.

use std::fmt;

/// Which kind of answer the apiserver gives for a failed strategic merge patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategicErrorKind {
    /// `400 BadRequest` `metav1.Status` built by `errors.NewBadRequest(message)`.
    BadRequest,
    /// `422 Invalid` `metav1.Status` built by
    /// `errors.NewGenericServerResponse(422, "", GroupResource{}, "", msg, 0, false)`;
    /// the message is always the generic
    /// `the server rejected our request due to an error in our request` and
    /// `details` is present but empty.
    Invalid,
    /// A plain Go error that is not a `StatusError`:
    /// `responsewriters.ErrorToAPIStatus` answers `500` with an empty reason
    /// and `message = err.Error()`.
    Internal,
    /// The Go code panics (for example `==` on two JSON objects). The panic is
    /// recovered by `WithPanicRecovery` (`pkg/server/filters/wrap.go`), which
    /// writes a `text/plain` 500 body (the message plus a newline) rather than
    /// a `Status`; because `HandleCrash` re-panics afterwards, a real client
    /// may instead see the connection dropped.
    Panic,
}

/// The error the apiserver's PATCH handler answers when a strategic merge
/// patch cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrategicError {
    /// HTTP status code: 400, 422 or 500.
    pub code: u16,
    /// `metav1.Status.reason`: `BadRequest`, `Invalid`, or empty (`Unknown`).
    pub reason: &'static str,
    /// `metav1.Status.message` (or the plain-text body for [`StrategicErrorKind::Panic`]).
    pub message: String,
    /// How the answer is built.
    pub kind: StrategicErrorKind,
}

/// Generic message of `NewGenericServerResponse` for status 422
/// (`k8s.io/apimachinery` `pkg/api/errors/errors.go`).
const GENERIC_422: &str = "the server rejected our request due to an error in our request";

/// Body written by `WithPanicRecovery` (`k8s.io/apiserver` `pkg/server/filters/wrap.go`).
const PANIC_BODY: &str = "This request caused apiserver to panic. Look in the logs for details.";

impl StrategicError {
    pub(super) fn new(kind: StrategicErrorKind, message: String) -> Self {
        let (code, reason) = match kind {
            StrategicErrorKind::BadRequest => (400, "BadRequest"),
            StrategicErrorKind::Invalid => (422, "Invalid"),
            StrategicErrorKind::Internal | StrategicErrorKind::Panic => (500, ""),
        };
        Self {
            code,
            reason,
            message,
            kind,
        }
    }
}

impl fmt::Display for StrategicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for StrategicError {}

/// Internal failure of the merge, mirroring the Go error values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fault {
    /// `mergepatch.ErrBadPatchFormatForPrimitiveList`.
    BadPrimitiveListFormat,
    /// `mergepatch.ErrBadPatchFormatForRetainKeys`.
    BadRetainKeysFormat,
    /// `mergepatch.ErrBadPatchFormatForSetElementOrderList`.
    BadSetElementOrderFormat,
    /// `mergepatch.ErrNoListOfLists`.
    NoListOfLists,
    /// Any other Go error, with its `Error()` text.
    Plain(String),
    /// A Go runtime panic, with the panic text (for diagnostics only).
    Panic(String),
}

impl Fault {
    /// `interpretStrategicMergePatchError` (`pkg/endpoints/handlers/patch.go`):
    /// the sentinel format errors become 400, `ErrNoListOfLists` 422, anything
    /// else is returned unchanged and so becomes a 500.
    pub(super) fn into_error(self) -> StrategicError {
        match self {
            Fault::BadPrimitiveListFormat => StrategicError::new(
                StrategicErrorKind::BadRequest,
                "invalid patch format of primitive list".into(),
            ),
            Fault::BadRetainKeysFormat => StrategicError::new(
                StrategicErrorKind::BadRequest,
                "invalid patch format of retainKeys".into(),
            ),
            Fault::BadSetElementOrderFormat => StrategicError::new(
                StrategicErrorKind::BadRequest,
                "invalid patch format of setElementOrder list".into(),
            ),
            Fault::NoListOfLists => {
                StrategicError::new(StrategicErrorKind::Invalid, GENERIC_422.into())
            }
            Fault::Plain(message) => StrategicError::new(StrategicErrorKind::Internal, message),
            Fault::Panic(_) => StrategicError::new(StrategicErrorKind::Panic, PANIC_BODY.into()),
        }
    }
}
