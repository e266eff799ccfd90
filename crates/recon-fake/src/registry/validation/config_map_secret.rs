//! ConfigMaps and Secrets: their keys, sizes, types and immutability
//! (`pkg/apis/core/validation/validation.go`).

use recon_apimachinery::json::{Map, Value};

use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// `validation.IsConfigMapKey`: the keys of ConfigMaps and Secrets.
fn config_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        errors.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
             (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
             '[-._a-zA-Z0-9]+')"
                .to_owned(),
        );
    }
    if key == "." {
        errors.push("must not be '.'".to_owned());
    } else if key == ".." {
        errors.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".to_owned());
    }
    errors
}

/// The length of the bytes a base64 string (as `[]byte` fields are written) stands for.
pub(super) fn decoded_len(b64: &str) -> usize {
    let padding = b64.bytes().rev().take_while(|b| *b == b'=').count();
    (b64.len() / 4 * 3 + (b64.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

/// `core.MaxSecretSize`: what all the values of a ConfigMap or Secret may add up to.
const MAX_SECRET_SIZE: usize = 1024 * 1024;

fn too_long(path: &str) -> FieldError {
    FieldError::new(
        ErrorType::TooLong,
        path,
        BadValue::Omit,
        format!("may not be more than {MAX_SECRET_SIZE} bytes"),
    )
}

/// `ValidateConfigMap`.
pub(super) fn validate_config_map(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let data = obj.get("data").and_then(Value::as_object).unwrap_or(&empty);
    let binary = obj
        .get("binaryData")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut total = 0;
    for (key, value) in data {
        let path = || Path::new("data").key(key);
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(path(), key, message));
        }
        if binary.contains_key(key) {
            errors.push(FieldError::invalid(
                path(),
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary {
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(
                Path::new("binaryData").key(key),
                key,
                message,
            ));
        }
        total += value.as_str().map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        // The whole object: `field.NewPath("")`, which prints as an empty index (recorded in
        // `limits/config-map-and-secret-data-over-1-mib`).
        errors.push(too_long("[]"));
    }
    errors
}

/// Whether `immutable: true` was set on `obj`.
fn is_immutable(obj: &Object) -> bool {
    obj.get("immutable").and_then(Value::as_bool) == Some(true)
}

fn immutable_forbidden(path: &str) -> FieldError {
    FieldError::forbidden(path, "field is immutable when `immutable` is set")
}

/// The `[]byte`/`string` maps of an immutable object, compared as `reflect.DeepEqual` does
/// (an empty map and no map differ).
fn same_field(new: &Object, old: &Object, key: &str) -> bool {
    new.get(key).filter(|v| !v.is_null()) == old.get(key).filter(|v| !v.is_null())
}

/// `ValidateConfigMapUpdate`: an immutable ConfigMap keeps `immutable`, `data` and `binaryData`.
pub(super) fn validate_config_map_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(immutable_forbidden("immutable"));
        }
        for key in ["data", "binaryData"] {
            if !same_field(new, old, key) {
                errors.push(immutable_forbidden(key));
            }
        }
    }
    errors.extend(validate_config_map(new));
    errors
}

/// `ValidateSecret`: keys, total size, and what each well-known type requires (the
/// `stringData` conversion has written every key into `data`).
pub(super) fn validate_secret(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let data = obj.get("data").and_then(Value::as_object).unwrap_or(&empty);
    let mut total = 0;
    for (key, value) in data {
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(
                Path::new("data").key(key),
                key,
                message,
            ));
        }
        total += value.as_str().map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        errors.push(too_long("data"));
    }
    let required = |key: &str| FieldError::required(Path::new("data").key(key), "");
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = obj
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errors.push(FieldError::required(
                    Path::new("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        ty @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if ty == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.get(key).and_then(Value::as_str) {
                None => errors.push(required(key)),
                Some(b64) => {
                    if let Some(message) = docker_config_error(b64) {
                        errors.push(FieldError::invalid(
                            Path::new("data").key(key),
                            "<secret contents redacted>",
                            message,
                        ));
                    }
                }
            }
        }
        // Username or password may be empty, but one of them must be there.
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            errors.push(required("username"));
            errors.push(required("password"));
        }
        "kubernetes.io/ssh-auth"
            if data
                .get("ssh-privatekey")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty) =>
        {
            errors.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !data.contains_key(key) {
                    errors.push(required(key));
                }
            }
        }
        _ => {}
    }
    errors
}

/// What `json.Unmarshal` into a `map[string]interface{}` says of a docker config, if it
/// fails: valid JSON of another type is named as Go names it; a syntax error is reported
/// without Go's exact wording (which this server does not reproduce).
fn docker_config_error(b64: &str) -> Option<String> {
    let bytes = base64_decode(b64)?;
    let kind = match serde_json::from_slice::<Value>(&bytes) {
        Err(e) => return Some(format!("invalid JSON: {e}")),
        Ok(Value::Object(_) | Value::Null) => return None,
        Ok(Value::Array(_)) => "array",
        Ok(Value::String(_)) => "string",
        Ok(Value::Number(_)) => "number",
        Ok(Value::Bool(_)) => "bool",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

/// Standard base64, as `[]byte` fields are written; `None` if it is not.
pub(super) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let trimmed = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in trimmed.bytes() {
        acc = (acc << 6) | digit(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// `ValidateSecretUpdate`: the type may not change; an immutable Secret keeps `immutable`
/// and `data`; then the new Secret is checked as on create.
pub(super) fn validate_secret_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ty = |o: &Object| {
        o.get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if ty(new) != ty(old) {
        errors.push(FieldError::invalid("type", &ty(new), "field is immutable"));
    }
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(immutable_forbidden("immutable"));
        }
        if !same_field(new, old, "data") {
            errors.push(immutable_forbidden("data"));
        }
    }
    errors.extend(validate_secret(new));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_keys_follow_is_config_map_key() {
        assert!(config_key_errors("a-b_c.d").is_empty());
        assert_eq!(config_key_errors("..").len(), 1);
        assert_eq!(config_key_errors("..a").len(), 1);
        assert_eq!(config_key_errors("a b").len(), 1);
    }

    #[test]
    fn base64_lengths_match_the_decoded_bytes() {
        for text in ["", "eA==", "eHk=", "eHl6", "eHl6dw=="] {
            let decoded = base64_decode(text).map(|b| b.len());
            assert_eq!(decoded, Some(decoded_len(text)), "{text}");
        }
        assert_eq!(base64_decode("eA=="), Some(b"x".to_vec()));
    }
}
