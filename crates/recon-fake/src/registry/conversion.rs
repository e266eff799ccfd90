//! How a custom resource moves between the versions its CRD serves, with `strategy: None`, as
//! kube-apiserver does it (recorded in the `versions/` scenarios): only `apiVersion` changes, but
//! each side's schema has its say.
//!
//! - A write is pruned, defaulted and validated by its own version's schema, as for any custom
//!   resource; then stored in the storage version, which storage reads with that version's
//!   schema: pruned and defaulted again (a field only the request's version has is lost).
//! - A read is the stored object with the request's `apiVersion`, pruned by the request
//!   version's schema and not defaulted by it (only storage's defaults show).
//!
//! Stored bodies carry no `apiVersion`: that part is the serving code's.

use std::borrow::Cow;

use super::resource::ResourceType;
use crate::wire::object::{Object, decode_body, encode_body};

/// Whether a request through `version` converts: the CRD stores another version.
pub(crate) fn converts(rt: &ResourceType, version: &str) -> bool {
    rt.storage.as_ref().is_some_and(|s| s.name != version)
}

/// `obj`, written through `version`, as storage keeps it.
pub(crate) fn to_storage(rt: &ResourceType, version: &str, obj: &mut Object) {
    if !converts(rt, version) {
        return;
    }
    if let Some(schema) = rt.storage.as_ref().and_then(|s| s.schema.as_deref()) {
        // What cannot be coerced is kept as written, as storage's decoder drops only what it
        // cannot read.
        let _ = schema.decode(obj);
    }
}

/// `obj`, as stored, served through `version`.
pub(crate) fn to_version(rt: &ResourceType, version: &str, obj: &mut Object) {
    if !converts(rt, version) {
        return;
    }
    if let Some(schema) = rt.validation(version) {
        schema.prune(obj);
    }
}

/// A stored body served through `version`: the same bytes unless the request converts.
pub(crate) fn body_in_version<'a>(
    rt: &ResourceType,
    version: &str,
    key: &str,
    body: &'a [u8],
) -> Cow<'a, [u8]> {
    if !converts(rt, version) {
        return Cow::Borrowed(body);
    }
    match decode_body(key, body) {
        Ok(mut obj) => {
            to_version(rt, version, &mut obj);
            Cow::Owned(encode_body(&obj).to_vec())
        }
        // Served as it is: whoever reads it reports what does not decode.
        Err(_) => Cow::Borrowed(body),
    }
}
