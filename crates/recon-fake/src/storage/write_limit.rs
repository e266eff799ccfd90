//! etcd's limit on one write (`--max-request-bytes`, 1.5 MiB by default). A write over it is
//! refused with etcd's own error, which kube-apiserver answers as a plain 500; create, update
//! and every patch but apply first try again without `managedFields`, which can be large
//! (`isTooLargeError` in the REST handlers).
//!
//! The size counted is the object's JSON and its key. etcd holds built-in kinds as protobuf,
//! which is smaller than JSON: a built-in object just under the limit in protobuf is refused
//! here and stored by a real server.

use crate::wire::error::ApiError;
use crate::wire::object::{Object, encode_body};

/// etcd's default `--max-request-bytes`.
const MAX_WRITE_BYTES: usize = 3 << 19;
/// What a write can add beyond the request body and the stored object (metadata the server
/// sets, a `managedFields` entry): below the limit by this much, a write fits without measuring.
const SLACK: usize = 64 << 10;

/// Checks that `obj`, written under `key`, fits one etcd write; `bound` is the size of what it was made from (the request
/// body and the stored object), so the common small write is not measured. Too large, `managedFields` are dropped when `drop_managed_fields` allows (not for
/// apply), and the object measured again.
pub(crate) fn fit(
    obj: &mut Object,
    key: &str,
    bound: usize,
    drop_managed_fields: bool,
) -> Result<(), ApiError> {
    if bound.saturating_add(SLACK) < MAX_WRITE_BYTES {
        return Ok(());
    }
    let fits = |obj: &Object| encode_body(obj).len() + key.len() <= MAX_WRITE_BYTES;
    if fits(obj) {
        return Ok(());
    }
    if drop_managed_fields {
        let metadata = obj.get_mut("metadata").and_then(|m| m.as_object_mut());
        if metadata.and_then(|m| m.remove("managedFields")).is_some() && fits(obj) {
            return Ok(());
        }
    }
    Err(ApiError::internal_unknown(
        "etcdserver: request is too large",
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn object(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_small_write_is_not_measured_and_a_large_one_is() {
        let mut small = object(json!({"data": {"k": "v"}}));
        assert!(fit(&mut small, "ns/a", 100, true).is_ok());
        let mut large = object(json!({"data": {"k": "x".repeat(MAX_WRITE_BYTES)}}));
        let err = fit(&mut large, "ns/a", MAX_WRITE_BYTES, true).unwrap_err();
        assert_eq!(err.code(), 500);
    }

    #[test]
    fn managed_fields_are_dropped_to_fit_unless_applying() {
        let blob = "x".repeat(MAX_WRITE_BYTES / 2);
        let with_fields = || {
            object(json!({
                "metadata": {"managedFields": [{"manager": blob}]},
                "data": {"k": blob},
            }))
        };
        let mut obj = with_fields();
        assert!(fit(&mut obj, "ns/a", MAX_WRITE_BYTES, true).is_ok());
        assert_eq!(obj["metadata"], json!({}));
        let mut applied = with_fields();
        assert!(fit(&mut applied, "ns/a", MAX_WRITE_BYTES, false).is_err());
    }
}
