//! Port numbers and names (`validation.IsValidPortNum`, `IsValidPortName`), as services,
//! probes, network policies and webhooks check them.

use recon_apimachinery::json::Value;

use crate::field::{BadValue, ErrorType, FieldError, Path};

/// `validation.IsValidPortNum`.
pub(super) fn port_num_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_owned()]
    }
}

/// `validation.IsValidPortName` (IANA_SVC_NAME).
pub(super) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_owned());
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_owned());
    }
    errors
}

/// `ValidatePortNumOrName`: a number is a port number, a string a port name.
pub(super) fn port_num_or_name_errors(value: &Value, path: &Path) -> Vec<FieldError> {
    match value {
        Value::String(name) => port_name_errors(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name, m))
            .collect(),
        other => {
            let n = other.as_i64().unwrap_or(0);
            port_num_errors(n)
                .into_iter()
                .map(|m| FieldError::new(ErrorType::Invalid, path, BadValue::Raw(n.to_string()), m))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_follow_iana_svc_name() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(port_name_errors("80").len(), 1);
        assert_eq!(port_name_errors("-a--b-").len(), 2);
        assert_eq!(port_name_errors("Very_Long_Name-x").len(), 2);
    }
}
