//! policy: PodDisruptionBudgets (`pkg/apis/policy/validation`).

use recon_apimachinery::json::Value;

use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::Object;

/// An `intstr.IntOrString` as `field.Error` prints it: a number, or a quoted string.
fn int_or_string_value(v: &Value) -> BadValue {
    match v {
        Value::String(s) => BadValue::Str(s.clone()),
        other => BadValue::Raw(other.to_string()),
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of apps validation.
fn int_or_percent_errors(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match v {
        Value::String(s) => {
            let digits = s.strip_suffix('%').unwrap_or("");
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    int_or_string_value(v),
                    "a valid percent string must be a numeric string followed by an ending '%' \
                     (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
            } else if digits.parse::<u64>().map_or(true, |p| p > 100) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    int_or_string_value(v),
                    "must not be greater than 100%",
                ));
            }
        }
        other => {
            let n = other.as_i64().unwrap_or(0);
            if n < 0 {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    BadValue::int(n),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    errors
}

/// `ValidatePodDisruptionBudgetSpec` (the selector's own rules aside).
pub(super) fn validate(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let field = |key: &str| spec.and_then(|s| s.get(key)).filter(|v| !v.is_null());
    let (min, max) = (field("minAvailable"), field("maxUnavailable"));
    if min.is_some() && max.is_some() {
        // The internal spec (no JSON tags) is the value.
        let null = Value::Null;
        let value = format!(
            "{{\"MinAvailable\":{},\"Selector\":{},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
            min.unwrap_or(&null),
            field("selector").unwrap_or(&null),
            max.unwrap_or(&null),
            field("unhealthyPodEvictionPolicy").unwrap_or(&null),
        );
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec",
            BadValue::Raw(value),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if let Some(min) = min {
        errors.extend(int_or_percent_errors(min, "spec.minAvailable"));
    }
    if let Some(max) = max {
        errors.extend(int_or_percent_errors(max, "spec.maxUnavailable"));
    }
    if let Some(policy) = field("unhealthyPodEvictionPolicy") {
        let policy = policy.as_str().unwrap_or("");
        if policy != "AlwaysAllow" && policy != "IfHealthyBudget" {
            errors.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn percentages_are_at_most_100() {
        assert!(int_or_percent_errors(&json!("50%"), "p").is_empty());
        assert_eq!(int_or_percent_errors(&json!("150%"), "p").len(), 1);
        assert_eq!(int_or_percent_errors(&json!("x"), "p").len(), 1);
        assert_eq!(int_or_percent_errors(&json!(-1), "p").len(), 1);
    }
}
