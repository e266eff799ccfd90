//! `metav1validation.ValidateConditions` (`k8s.io/apimachinery/pkg/apis/meta/v1/validation`):
//! a list of `metav1.Condition`s, each with a unique type that is a qualified name, a status of
//! `True`, `False` or `Unknown`, an observed generation not negative, a transition time, a
//! reason (at most 1024 bytes, a letter then letters, digits, `_`, `,` or `:`) and a message of
//! at most 32768 bytes.

use recon_apimachinery::json::Value;

use super::pod::invalid_int;
use super::read::{int_at, is_set, str_at};
use super::resource_claims::label_name;
use crate::field::{BadValue, ErrorType, FieldError, Path};

/// `maxReasonLen`.
const MAX_REASON: usize = 1024;
/// `maxMessageLen`.
const MAX_MESSAGE: usize = 32 * 1024;

/// The message of `isValidConditionReason`.
const REASON_FORMAT: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

/// `ValidateConditions`: per condition, a duplicate type first, then its own errors.
pub(super) fn conditions(list: &[Value], at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for (i, condition) in list.iter().enumerate() {
        let here = at.index(i);
        let ty = str_at(Some(condition), "type");
        if types.contains(&ty) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                here.child("type"),
                BadValue::Str(ty.to_owned()),
                "",
            ));
        } else {
            types.push(ty);
        }
        errors.extend(condition_errors(condition, &here));
    }
    errors
}

/// `ValidateCondition`.
fn condition_errors(condition: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = label_name(str_at(Some(condition), "type"), &at.child("type"));
    let status = str_at(Some(condition), "status");
    if !matches!(status, "True" | "False" | "Unknown") {
        errors.push(FieldError::not_supported_named(
            at.child("status"),
            status,
            &["False", "True", "Unknown"],
        ));
    }
    if let Some(generation) = int_at(Some(condition), "observedGeneration")
        && generation < 0
    {
        errors.push(invalid_int(
            &at.child("observedGeneration"),
            generation,
            "must be greater than or equal to zero",
        ));
    }
    if !is_set(Some(condition), "lastTransitionTime") {
        errors.push(FieldError::required(at.child("lastTransitionTime"), ""));
    }
    let reason = str_at(Some(condition), "reason");
    if reason.is_empty() {
        errors.push(FieldError::required(at.child("reason"), ""));
    } else {
        if !is_condition_reason(reason) {
            errors.push(FieldError::invalid(
                at.child("reason"),
                reason,
                REASON_FORMAT,
            ));
        }
        if reason.len() > MAX_REASON {
            errors.push(FieldError::too_long(at.child("reason"), MAX_REASON as i64));
        }
    }
    if str_at(Some(condition), "message").len() > MAX_MESSAGE {
        errors.push(FieldError::too_long(
            at.child("message"),
            MAX_MESSAGE as i64,
        ));
    }
    errors
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    match rest.split_last() {
        None => true,
        Some((last, middle)) => {
            (last.is_ascii_alphanumeric() || *last == b'_')
                && middle
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_start_with_a_letter_and_end_without_punctuation() {
        assert!(is_condition_reason("A"));
        assert!(is_condition_reason("ReasonA,ReasonB"));
        assert!(is_condition_reason("a_"));
        assert!(!is_condition_reason("bad reason"));
        assert!(!is_condition_reason("A:"));
        assert!(!is_condition_reason("9a"));
    }
}
