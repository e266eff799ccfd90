//! The `fieldValidation` option of create, update and patch: what a write does with fields the
//! type does not know (dropped from the object either way) and with keys a body repeats (the
//! last one kept either way). `Warn` is the server's default
//! since Kubernetes 1.27: one `Warning` header per field. `Ignore` says nothing. `Strict` fails
//! the request with a strict decoding error naming every field.

use crate::field::FieldError;
use crate::request::call::Call;

/// One `fieldValidation` directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

/// The values `ValidateFieldValidation` accepts, in the order its message lists them.
const ACCEPTED: [&str; 4] = ["", "Ignore", "Strict", "Warn"];

impl FieldValidation {
    /// The request's directive (an unknown value was refused by [`option_error`] already).
    pub(crate) fn of(call: &Call<'_>) -> FieldValidation {
        match call.query.get("fieldValidation").unwrap_or("") {
            "Ignore" => FieldValidation::Ignore,
            "Strict" => FieldValidation::Strict,
            _ => FieldValidation::Warn,
        }
    }

    /// What the unknown fields at `paths` make of the request: the `Warning`s to send, or the
    /// strict decoding error (`Err`) for the caller to wrap as its verb does.
    pub(crate) fn unknown_fields(self, paths: &[String]) -> Result<Vec<String>, String> {
        self.fields(&[], paths)
    }

    /// The same for a body that also repeats the keys at `duplicates` (`duplicate field
    /// "data"`, before the unknown fields).
    pub(crate) fn fields(
        self,
        duplicates: &[String],
        unknown: &[String],
    ) -> Result<Vec<String>, String> {
        let messages: Vec<String> = duplicates
            .iter()
            .map(|p| format!("duplicate field \"{p}\""))
            .chain(unknown.iter().map(|p| format!("unknown field \"{p}\"")))
            .collect();
        self.messages(messages)
    }

    /// The same for strict decoding errors already worded (a JSON patch's own, `json patch
    /// unknown field "[0].bogus"`, come before the object's).
    pub(crate) fn messages(self, messages: Vec<String>) -> Result<Vec<String>, String> {
        match self {
            FieldValidation::Ignore => Ok(Vec::new()),
            FieldValidation::Warn => Ok(messages),
            FieldValidation::Strict if messages.is_empty() => Ok(Vec::new()),
            FieldValidation::Strict => {
                Err(format!("strict decoding error: {}", messages.join(", ")))
            }
        }
    }
}

/// `ValidateFieldValidation` of the request's options.
pub(crate) fn option_error(call: &Call<'_>) -> Option<FieldError> {
    let value = call.query.get("fieldValidation").unwrap_or("");
    (!ACCEPTED.contains(&value))
        .then(|| FieldError::not_supported("fieldValidation", value, &ACCEPTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warn_sends_one_warning_per_field_and_strict_names_them_all() {
        let paths = ["bogus".to_owned(), "spec.bogus".to_owned()];
        assert_eq!(
            FieldValidation::Warn.unknown_fields(&paths),
            Ok(vec![
                "unknown field \"bogus\"".to_owned(),
                "unknown field \"spec.bogus\"".to_owned()
            ])
        );
        assert_eq!(
            FieldValidation::Strict.unknown_fields(&paths),
            Err(
                "strict decoding error: unknown field \"bogus\", unknown field \"spec.bogus\""
                    .to_owned()
            )
        );
        assert_eq!(FieldValidation::Ignore.unknown_fields(&paths), Ok(vec![]));
        assert_eq!(FieldValidation::Strict.unknown_fields(&[]), Ok(vec![]));
    }

    #[test]
    fn duplicates_come_before_unknown_fields() {
        let duplicates = ["data".to_owned()];
        let unknown = ["colour".to_owned()];
        assert_eq!(
            FieldValidation::Strict.fields(&duplicates, &unknown),
            Err(
                "strict decoding error: duplicate field \"data\", unknown field \"colour\""
                    .to_owned()
            )
        );
        assert_eq!(
            FieldValidation::Warn.fields(&duplicates, &[]),
            Ok(vec!["duplicate field \"data\"".to_owned()])
        );
    }
}
