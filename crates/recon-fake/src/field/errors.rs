//! Field validation errors, rendered as k8s.io/apimachinery `pkg/util/validation/field` renders
//! them (`metadata.name: Invalid value: "X": detail`), with the matching `StatusCause`.

use recon_apimachinery::go_quote;

use crate::wire::status::StatusCause;

/// The `field.ErrorType` of a validation error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ErrorType {
    Required,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    /// `field.TypeInvalid`: printed as `Invalid value`, its own cause reason.
    TypeInvalid,
    Duplicate,
    TooMany,
    /// `field.NotFound`: printed as Invalid is, with the value.
    NotFound,
    /// `field.InternalError`: never prints a value.
    Internal,
}

impl ErrorType {
    fn text(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TypeInvalid => "Invalid value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::TooMany => "Too many",
            ErrorType::NotFound => "Not found",
            ErrorType::Internal => "Internal error",
        }
    }

    fn cause(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Internal => "InternalError",
        }
    }
}

/// The offending value, in the form Go prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum BadValue {
    /// No value is printed (`Required`, `Forbidden`, `Too long`, or omitted on purpose).
    Omit,
    /// A string, printed with `%q`.
    Str(String),
    /// Printed verbatim: numbers (`%v`) or Go's `%#v` of other types (`0x0`, `[]string{"x"}`).
    Raw(String),
}

impl BadValue {
    /// An integer, printed as `field.Error` prints numbers.
    pub(crate) fn int(n: i64) -> BadValue {
        BadValue::Raw(n.to_string())
    }

    /// A value printed as `field.Error` prints what is neither a string nor a number: its
    /// JSON.
    pub(crate) fn json(v: &recon_apimachinery::json::Value) -> BadValue {
        BadValue::Raw(v.to_string())
    }

    /// The JSON of a Go struct without tags: `fields` of `value` in declaration order, a
    /// missing one `null`.
    pub(crate) fn go_struct(value: &recon_apimachinery::json::Value, fields: &[&str]) -> BadValue {
        let parts: Vec<String> = fields
            .iter()
            .map(|f| {
                let field = value
                    .get(*f)
                    .unwrap_or(&recon_apimachinery::json::Value::Null);
                format!("{}:{field}", recon_apimachinery::json::Value::from(*f))
            })
            .collect();
        BadValue::Raw(format!("{{{}}}", parts.join(",")))
    }
}

/// One field validation error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FieldError {
    kind: ErrorType,
    field: String,
    value: BadValue,
    detail: String,
}

impl FieldError {
    pub(crate) fn new(
        kind: ErrorType,
        field: impl Into<String>,
        value: BadValue,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }

    /// `field.Invalid` with a string value.
    pub(crate) fn invalid(
        field: impl Into<String>,
        value: &str,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(
            ErrorType::Invalid,
            field,
            BadValue::Str(value.to_owned()),
            detail,
        )
    }

    /// `field.TooLong` (the value is never printed): "byte" for a limit of one, and no number
    /// for a negative limit.
    pub(crate) fn too_long(field: impl Into<String>, max: i64) -> Self {
        let detail = match max {
            1 => "may not be more than 1 byte".to_owned(),
            m if m >= 0 => format!("may not be more than {m} bytes"),
            _ => "value is too long".to_owned(),
        };
        Self::new(ErrorType::TooLong, field, BadValue::Omit, detail)
    }

    /// `field.TooMany`: the number of items (omitted when negative), then the limit, worded as
    /// `too_long` words it.
    pub(crate) fn too_many(field: impl Into<String>, actual: i64, max: i64) -> Self {
        let detail = match max {
            1 => "must have at most 1 item".to_owned(),
            m if m >= 0 => format!("must have at most {m} items"),
            _ => "has too many items".to_owned(),
        };
        let value = if actual >= 0 {
            BadValue::Raw(actual.to_string())
        } else {
            BadValue::Omit
        };
        Self::new(ErrorType::TooMany, field, value, detail)
    }

    /// `field.Required`.
    pub(crate) fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, BadValue::Omit, detail)
    }

    /// `field.NotFound` with a string value.
    pub(crate) fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self::new(
            ErrorType::NotFound,
            field,
            BadValue::Str(value.to_owned()),
            "",
        )
    }

    /// `field.Forbidden`.
    pub(crate) fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, BadValue::Omit, detail)
    }

    /// `field.NotSupported`: the detail lists the supported values, quoted.
    pub(crate) fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
        Self::new(
            ErrorType::NotSupported,
            field,
            BadValue::Str(value.to_owned()),
            format!("supported values: {}", list.join(", ")),
        )
    }

    /// [`FieldError::not_supported`] of a value of a named string type (`core.Protocol`):
    /// `field.Error` prints only a plain `string` with `%q`, anything else through
    /// `json.Marshal`, which escapes `<`, `>` and `&` (`"a\u0026b"`).
    pub(crate) fn not_supported_named(
        field: impl Into<String>,
        value: &str,
        supported: &[&str],
    ) -> Self {
        let mut error = Self::not_supported(field, value, supported);
        error.value = BadValue::Raw(recon_apimachinery::go_json::go_json_string(value));
        error
    }

    /// Whether CEL rules are skipped because of this error (apiextensions `hasBlockingErr`):
    /// a value that is missing, of the wrong type, not allowed, or too long or large.
    pub(crate) fn blocks_rules(&self) -> bool {
        matches!(
            self.kind,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    }

    /// The part after `field: ` (`field.Error.ErrorBody`), also the cause's message.
    pub(crate) fn body(&self) -> String {
        let mut s = match (&self.kind, &self.value) {
            (
                ErrorType::Required
                | ErrorType::Forbidden
                | ErrorType::TooLong
                | ErrorType::Internal,
                _,
            )
            | (_, BadValue::Omit) => self.kind.text().to_owned(),
            (kind, BadValue::Str(v)) => format!("{}: {}", kind.text(), go_quote(v)),
            (kind, BadValue::Raw(v)) => format!("{}: {v}", kind.text()),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    pub(crate) fn cause(&self) -> StatusCause {
        StatusCause {
            reason: self.kind.cause().to_owned(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// `ErrorList.ToAggregate().Error()`: one error as is, several as `[a, b]`, duplicates dropped.
pub(crate) fn aggregate(errors: &[FieldError]) -> String {
    recon_apimachinery::errors::aggregate(errors.iter().map(FieldError::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_renders_the_quoted_value_and_detail() {
        let e = FieldError::invalid("metadata.name", "A", "must be lowercase");
        assert_eq!(
            e.to_string(),
            r#"metadata.name: Invalid value: "A": must be lowercase"#
        );
        assert_eq!(e.cause().reason, "FieldValueInvalid");
    }

    #[test]
    fn required_never_prints_a_value() {
        let e = FieldError::required("metadata.name", "name or generateName is required");
        assert_eq!(
            e.to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
    }

    #[test]
    fn not_found_prints_the_value_with_its_own_reason() {
        let e = FieldError::not_found("spec.containers[0].volumeMounts[0].name", "data");
        assert_eq!(
            e.to_string(),
            r#"spec.containers[0].volumeMounts[0].name: Not found: "data""#
        );
        assert_eq!(e.cause().reason, "FieldValueNotFound");
    }

    #[test]
    fn several_errors_aggregate_in_brackets_without_duplicates() {
        let a = FieldError::required("a", "");
        let b = FieldError::forbidden("b", "no");
        assert_eq!(
            aggregate(&[a.clone(), b, a]),
            "[a: Required value, b: Forbidden: no]"
        );
    }
}
