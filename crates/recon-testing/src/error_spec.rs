//! An expected error: a part of its message, or what the API server answered (code, reason,
//! message), matched against the error a reconcile returned.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The error a case expects, written as a part of its message (`error: etcd is unavailable`,
/// `""` for any error) or as fields (`error: {code: 500, reason: InternalError, message:
/// etcd}`). Every field given must hold:
///
/// - `code` and `reason`: the `metav1.Status` of the API error underneath (a `kube::Error::Api`
///   anywhere in the error's chain of sources, as a kube-rs controller's own error wraps it,
///   with `#[source]` or `#[error(transparent)]`). An error that is no API error has neither.
/// - `message`: a part of the error's text, or of the Status message of its API error.
/// - `exactMessage`: the whole Status message of its API error, or the whole text of any other
///   error.
///
/// ```
/// use recon_testing::ErrorSpec;
///
/// let conflict = ErrorSpec::api(409, "Conflict").message("the object has been modified");
/// assert_eq!(conflict.code, Some(409));
/// let any: ErrorSpec = "".into();
/// assert_eq!(any, ErrorSpec::containing(""));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorSpec {
    /// The HTTP code of the API error (`500`).
    pub code: Option<u16>,
    /// The reason of the API error, as on the wire (`InternalError`).
    pub reason: Option<String>,
    /// A part of the message.
    pub message: Option<String>,
    /// The whole message.
    pub exact_message: Option<String>,
}

/// What an error that ended a run said: its text and, for an API error, its Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObservedError {
    /// The error's `Display` text.
    pub(crate) text: String,
    /// The API error underneath: code, reason, message.
    pub(crate) status: Option<(u16, String, String)>,
}

impl ObservedError {
    /// What `err` says; its API error is looked for along its chain of sources.
    pub(crate) fn of(err: &recon_core::Error) -> Self {
        // A `#[error(transparent)]` wrapper forwards its chain past the `kube::Error`, straight
        // to the `Status` that is the API error's source.
        let status = match err.find::<kube::Error>() {
            Some(kube::Error::Api(status)) => Some(status.as_ref()),
            _ => err.find::<Box<kube::core::Status>>().map(AsRef::as_ref),
        };
        ObservedError {
            text: err.to_string(),
            status: status.map(|s| (s.code, s.reason.clone(), s.message.clone())),
        }
    }

    /// An error with no API error underneath (a panic, a harness failure).
    pub(crate) fn text(text: String) -> Self {
        ObservedError { text, status: None }
    }

    /// The message a Status gives, else the text.
    fn message(&self) -> &str {
        self.status.as_ref().map_or(&self.text, |(_, _, m)| m)
    }

    /// How the error is written as an expectation: its Status for an API error (never kube's
    /// debug dump of it), else its text.
    pub(crate) fn written(&self) -> ErrorSpec {
        match &self.status {
            Some((code, reason, message)) => ErrorSpec {
                code: Some(*code),
                reason: Some(reason.clone()),
                message: Some(message.clone()),
                exact_message: None,
            },
            None => ErrorSpec::containing(&self.text),
        }
    }
}

impl ErrorSpec {
    /// An error whose message contains `text` (`""`: any error).
    pub fn containing(text: &str) -> Self {
        ErrorSpec {
            message: Some(text.to_owned()),
            ..ErrorSpec::default()
        }
    }

    /// An error whose message is `text`, whole.
    pub fn exactly(text: &str) -> Self {
        ErrorSpec {
            exact_message: Some(text.to_owned()),
            ..ErrorSpec::default()
        }
    }

    /// An API error with this HTTP `code` and `reason` (`409`, `Conflict`).
    pub fn api(code: u16, reason: &str) -> Self {
        ErrorSpec {
            code: Some(code),
            reason: Some(reason.to_owned()),
            ..ErrorSpec::default()
        }
    }

    /// The same, whose message also contains `text`.
    #[must_use]
    pub fn message(mut self, text: &str) -> Self {
        self.message = Some(text.to_owned());
        self
    }

    /// The same, whose message is also `text`, whole.
    #[must_use]
    pub fn exact_message(mut self, text: &str) -> Self {
        self.exact_message = Some(text.to_owned());
        self
    }

    /// Whether only a part of the message is expected: written as a plain string.
    fn is_text(&self) -> bool {
        self.code.is_none() && self.reason.is_none() && self.exact_message.is_none()
    }

    /// The expectation in words: `containing "text"`, or its written fields.
    pub(crate) fn describe(&self) -> String {
        match (&self.message, self.is_text()) {
            (Some(part), true) => format!("containing {part:?}"),
            _ => serde_json::to_string(self).unwrap_or_default(),
        }
    }

    /// What about `observed` differs from this expectation, one sentence each.
    pub(crate) fn mismatches(&self, observed: &ObservedError) -> Vec<String> {
        let mut out = Vec::new();
        let status = observed.status.as_ref();
        if (self.code.is_some() || self.reason.is_some()) && status.is_none() {
            out.push(format!(
                "the error is not an API error, so it has no code or reason: {:?}",
                observed.text
            ));
        }
        if let (Some(code), Some((actual, _, _))) = (self.code, status)
            && code != *actual
        {
            out.push(format!("the error's code is {actual}, not {code}"));
        }
        if let (Some(reason), Some((_, actual, _))) = (&self.reason, status)
            && reason != actual
        {
            out.push(format!("the error's reason is {actual:?}, not {reason:?}"));
        }
        if let Some(part) = &self.message
            && !observed.text.contains(part.as_str())
            && !observed.message().contains(part.as_str())
        {
            out.push(format!(
                "the error {:?} does not contain {part:?}",
                observed.message()
            ));
        }
        if let Some(exact) = &self.exact_message
            && observed.message() != exact
        {
            out.push(format!(
                "the error's message is {:?}, not {exact:?}",
                observed.message()
            ));
        }
        out
    }

    /// What `observed` is written as, keeping this expectation's form where it still holds:
    /// its fields, and its part of the message while the message contains it.
    pub(crate) fn rewritten(&self, observed: &ObservedError) -> ErrorSpec {
        if self.mismatches(observed).is_empty() {
            return self.clone();
        }
        let written = observed.written();
        if self.is_text() && written.is_text() {
            return written;
        }
        let (code, reason, message) = match &observed.status {
            Some((c, r, m)) => (Some(*c), Some(r.clone()), m.clone()),
            None => (None, None, observed.text.clone()),
        };
        let keep = |part: &String| {
            observed
                .message()
                .contains(part.as_str())
                .then(|| part.clone())
        };
        ErrorSpec {
            code,
            reason,
            exact_message: self.exact_message.as_ref().map(|_| message.clone()),
            message: match (&self.message, &self.exact_message) {
                (_, Some(_)) => None,
                (Some(part), None) => keep(part).or(Some(message)),
                (None, None) => Some(message),
            },
        }
    }
}

impl From<&str> for ErrorSpec {
    fn from(text: &str) -> Self {
        ErrorSpec::containing(text)
    }
}

impl From<&String> for ErrorSpec {
    fn from(text: &String) -> Self {
        ErrorSpec::containing(text)
    }
}

impl From<String> for ErrorSpec {
    fn from(text: String) -> Self {
        ErrorSpec::containing(&text)
    }
}

/// The fields form, as written.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exact_message: Option<String>,
}

impl Serialize for ErrorSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_text() {
            return serializer.serialize_str(self.message.as_deref().unwrap_or(""));
        }
        Fields {
            code: self.code,
            reason: self.reason.clone(),
            message: self.message.clone(),
            exact_message: self.exact_message.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ErrorSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Written;
        impl<'de> Visitor<'de> for Written {
            type Value = ErrorSpec;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a part of the error's message, or {code, reason, message, exactMessage}",
                )
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ErrorSpec, E> {
                Ok(ErrorSpec::containing(text))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ErrorSpec, A::Error> {
                let f = Fields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if f.message.is_some() && f.exact_message.is_some() {
                    return Err(de::Error::custom(
                        "`message` (a part) and `exactMessage` (the whole) exclude each other",
                    ));
                }
                Ok(ErrorSpec {
                    code: f.code,
                    reason: f.reason,
                    message: f.message,
                    exact_message: f.exact_message,
                })
            }
        }
        deserializer.deserialize_any(Written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error() -> ObservedError {
        ObservedError {
            text: "ApiError: etcd is unavailable: InternalError (ErrorResponse { .. })".into(),
            status: Some((500, "InternalError".into(), "etcd is unavailable".into())),
        }
    }

    #[test]
    fn every_field_given_must_hold() {
        assert!(
            ErrorSpec::api(500, "InternalError")
                .mismatches(&api_error())
                .is_empty()
        );
        let wrong = ErrorSpec::api(409, "Conflict").exact_message("etcd");
        assert_eq!(
            wrong.mismatches(&api_error()),
            [
                "the error's code is 500, not 409",
                "the error's reason is \"InternalError\", not \"Conflict\"",
                "the error's message is \"etcd is unavailable\", not \"etcd\"",
            ]
        );
        let plain = ObservedError::text("disk full".into());
        assert_eq!(
            ErrorSpec::api(500, "InternalError")
                .mismatches(&plain)
                .len(),
            1
        );
        assert!(
            ErrorSpec::exactly("disk full")
                .mismatches(&plain)
                .is_empty()
        );
    }

    #[test]
    fn an_api_error_is_written_as_its_status_not_its_debug_dump() {
        let written = serde_json::to_value(api_error().written()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"code": 500, "reason": "InternalError", "message": "etcd is unavailable"})
        );
        let kept = ErrorSpec::containing("etcd").rewritten(&api_error());
        assert_eq!(
            kept,
            ErrorSpec::containing("etcd"),
            "a part that still holds is kept"
        );
    }

    #[test]
    fn both_forms_read_back() {
        let text: ErrorSpec = serde_json::from_str("\"boom\"").unwrap();
        assert_eq!(text, ErrorSpec::containing("boom"));
        let fields: ErrorSpec =
            serde_json::from_str(r#"{"code": 404, "reason": "NotFound"}"#).unwrap();
        assert_eq!(fields, ErrorSpec::api(404, "NotFound"));
        let both = r#"{"message": "a", "exactMessage": "a"}"#;
        assert!(serde_json::from_str::<ErrorSpec>(both).is_err());
        assert!(serde_json::from_str::<ErrorSpec>(r#"{"cod": 1}"#).is_err());
    }
}
