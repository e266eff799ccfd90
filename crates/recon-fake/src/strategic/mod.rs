//! Strategic merge patch (`application/strategic-merge-patch+json`) for
//! built-in kinds, as the real kube-apiserver applies it.
//!
//! The apiserver's PATCH handler (`k8s.io/apiserver` `pkg/endpoints/handlers/patch.go`,
//! `smpPatcher` → `strategicPatchObject` → `applyPatchToObject`) converts the
//! stored object to its versioned form, turns it into a JSON map, decodes the
//! request body into a `map[string]interface{}` and calls
//! `strategicpatch.StrategicMergeMapPatch` (`k8s.io/apimachinery`
//! `pkg/util/strategicpatch/patch.go`) with the Go type as schema. This module
//! re-implements that path on JSON values (`recon_apimachinery::json::Value`):
//!
//! * [`apply`] merges a patch into an object with the rules and the exact
//!   element ordering of upstream's `mergeMap`/`mergeSlice`, including the
//!   directives `$patch` (`replace`, `delete`, `merge`), `$retainKeys`,
//!   `$deleteFromPrimitiveList/<list>` and `$setElementOrder/<list>`.
//! * [`schema_for`] returns the patch metadata (`patchStrategy` and
//!   `patchMergeKey` struct tags) of the built-in kinds the fake serves.
//! * [`StrategicError`] carries the HTTP status, reason and message the
//!   apiserver answers when the merge fails (see its docs for the mapping).
//!
//! Ordering, as upstream: a merged list keeps the patch's order for the
//! elements the patch names and inserts the stored-only elements among them by
//! their stored order; an element new to the list goes *before* any stored-only
//! element that follows it, so `[a, b]` patched with `[c]` gives `[c, a, b]`.
//! `$setElementOrder/<list>` takes precedence over both orders.
//!
//! Not modelled:
//! * the typed round trip that follows the merge upstream
//!   (`FromUnstructuredWithValidation` + defaulting): unknown fields, `null`s
//!   inside replaced lists or appended elements, and values of the wrong JSON
//!   type are left as the merge produced them (upstream drops, zeroes or
//!   rejects them with 422), except that leftover directive keys are removed,
//!   as a typed decode drops them as unknown fields;
//! * errors of the Go schema lookup for fields the struct does not have
//!   (`unable to find api field …`): fields missing from the table behave
//!   like untagged fields;
//! * which error is reported when several parts of one patch object are
//!   wrong: Go visits map keys in random order, this module in byte order.

mod error;
pub(crate) mod gofmt;
mod gosort;
mod merge;
#[cfg(test)]
mod proptests;
mod schema;
#[cfg(test)]
mod tests;

use error::Fault;
pub use error::{StrategicError, StrategicErrorKind};
use recon_apimachinery::json::Value;
pub use schema::{PatchSchema, metadata_only, schema_for};

use crate::wire::object::json_type;

/// Checks a raw PATCH body the way the handler does before anything else
/// (`validateAndTranscodePatch`: `json.Valid`, else 400 `invalid JSON patch`)
/// and parses it.
///
/// The real handler runs this check before it reads the stored object, so an
/// unparsable body is a 400 even for an object that does not exist, while a
/// missing object is a 404 before any error of [`apply`].
///
/// # Errors
///
/// 400 with Go's JSON syntax error (`invalid character ...`) when `body` is not JSON.
pub fn parse_patch_body(body: &[u8]) -> Result<Value, StrategicError> {
    // Go's `json.Unmarshal` error, bare: the strategic patcher does not prefix it. Read as
    // deep as Go reads.
    crate::wire::object::read_json(body).map_err(|e| {
        StrategicError::new(
            StrategicErrorKind::BadRequest,
            crate::wire::go_json_syntax::worded(body, &e),
        )
    })
}

/// Applies a strategic merge patch to `original` (the stored object, as JSON)
/// using the patch metadata of `schema`, as `strategicpatch.StrategicMergeMapPatch`
/// does on the server.
///
/// * A `null` patch is a no-op (the Go decoder leaves the patch map nil).
/// * A patch that is not a JSON object fails with 400 and the Go decoder's
///   message, e.g. `json: cannot unmarshal array into Go value of type map[string]interface {}`.
/// * Merge failures map to 400/422/500 as described on [`StrategicErrorKind`].
///
/// Leftover directive keys (`$patch`, `$retainKeys`, `$setElementOrder…`,
/// `$deleteFromPrimitiveList…`) that upstream copies verbatim into new content
/// are removed from the result, as the typed decode that follows upstream
/// drops them.
///
/// # Errors
///
/// The [`StrategicError`] the apiserver answers: see [`StrategicErrorKind`]
/// for how each upstream error maps to 400, 422 or 500.
pub fn apply(
    original: &Value,
    patch: &Value,
    schema: &PatchSchema,
) -> Result<Value, StrategicError> {
    let patch = match patch {
        Value::Object(map) => map.clone(),
        Value::Null => return Ok(original.clone()),
        other => {
            return Err(StrategicError::new(
                StrategicErrorKind::BadRequest,
                format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_type(other)
                ),
            ));
        }
    };
    let original = match original {
        Value::Object(map) => map.clone(),
        // Upstream always has an object here (`runtime.DefaultUnstructuredConverter.ToUnstructured`);
        // answer like an unexpected Go error rather than guessing.
        other => {
            return Err(StrategicError::new(
                StrategicErrorKind::Internal,
                format!(
                    "stored object is a JSON {}, not an object",
                    json_type(other)
                ),
            ));
        }
    };
    let merged = merge::merge_map(original, patch, schema.cursor()).map_err(Fault::into_error)?;
    let mut merged = Value::Object(merged);
    strip_directive_keys(&mut merged);
    Ok(merged)
}

/// Whether a key is one of the SMP directive keys.
fn is_directive_key(key: &str) -> bool {
    key == "$patch"
        || key == "$retainKeys"
        || key.starts_with("$setElementOrder")
        || key.starts_with("$deleteFromPrimitiveList")
}

/// Removes directive keys anywhere in `value`.
fn strip_directive_keys(value: &mut Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                map.retain(|key, _| !is_directive_key(key));
                pending.extend(map.values_mut());
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}
