//! ControllerRevisions (`ValidateControllerRevisionCreate`, `ValidateControllerRevisionUpdate`
//! of `pkg/apis/apps/validation/validation.go`, run by
//! `pkg/registry/apps/controllerrevision/strategy.go`): the revision is not negative; on create
//! the data is a JSON object; on update the data does not change.
//!
//! Not modelled: Go keeps the data as the bytes it was sent and compares bytes on update, so a
//! change of spacing or key order alone is refused there; here the data is compared as JSON.
//! The metadata errors an update repeats (the strategy validates the new metadata a second
//! time) are reported once.

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::Value;

use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::Object;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("apps", "ControllerRevision"))
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    let mut errors = revision_errors(obj);
    match obj.get("data") {
        None | Some(Value::Null) => errors.push(FieldError::required("data", "data is mandatory")),
        Some(Value::Object(_)) => {}
        Some(_) => errors.push(FieldError::required(
            "data",
            "data must be a valid JSON object",
        )),
    }
    errors
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = revision_errors(new);
    let data = new.get("data").filter(|d| !d.is_null());
    if data != old.get("data").filter(|d| !d.is_null()) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "data",
            BadValue::Raw(data.map_or_else(|| "null".to_owned(), go_json)),
            "field is immutable",
        ));
    }
    errors
}

/// `ValidateNonnegativeField` of the revision.
fn revision_errors(obj: &Object) -> Vec<FieldError> {
    let revision = obj.get("revision").and_then(Value::as_i64).unwrap_or(0);
    if revision < 0 {
        return vec![FieldError::new(
            ErrorType::Invalid,
            "revision",
            BadValue::Raw(revision.to_string()),
            "must be greater than or equal to 0",
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use recon_apimachinery::json;

    fn object(v: Value) -> Object {
        match v {
            Value::Object(map) => map,
            _ => Object::new(),
        }
    }

    #[test]
    fn data_must_be_an_object_on_create() {
        let list = object(json!({"data": [1], "revision": 1}));
        let errors: Vec<String> = validate_create(&list)
            .iter()
            .map(FieldError::body)
            .collect();
        assert_eq!(errors, ["Required value: data must be a valid JSON object"]);
        assert!(validate_create(&object(json!({"data": {}}))).is_empty());
    }

    #[test]
    fn data_may_not_change() {
        let old = object(json!({"data": {"a": 1}, "revision": 1}));
        let new = object(json!({"data": {"a": 2}, "revision": 2}));
        let errors: Vec<String> = validate_update(&new, &old)
            .iter()
            .map(FieldError::body)
            .collect();
        assert_eq!(errors, [r#"Invalid value: {"a":2}: field is immutable"#]);
    }
}
