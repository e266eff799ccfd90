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
//! - With `strategy: Webhook`, the CRD's webhook converts between the request's version and the
//!   storage version on the way in and out ([`super::conversion_webhook`]); its failures are
//!   500s with kube-apiserver's messages.
//!
//! Stored bodies carry no `apiVersion`: that part is the serving code's.
//!
//! A built-in served at several versions (autoscaling/v1 and v2 HorizontalPodAutoscalers)
//! converts with its type's hook: a write is decoded and defaulted in its own version, then
//! converted to the storage version, whose form stands for kube-apiserver's internal type, before
//! the strategy prepares and validates it ([`to_internal`]); storage reads it back with the
//! storage version's defaults; a read converts the stored object to the request's version.

use std::borrow::Cow;

use recon_apimachinery::json::Value;

use super::conversion_webhook::{self, WebhookEndpoint};
use super::resource::{ResourceType, StorageVersion};
use crate::wire::error::ApiError;
use crate::wire::object::{Object, decode_body, encode_body};

/// The storage version a request through `version` converts to and from, if it converts: the
/// CRD stores another version.
fn storage_for<'a>(rt: &'a ResourceType, version: &str) -> Option<&'a StorageVersion> {
    rt.storage.as_ref().filter(|s| s.name != version)
}

/// Whether a request through `version` converts.
pub(crate) fn converts(rt: &ResourceType, version: &str) -> bool {
    storage_for(rt, version).is_some()
}

/// `obj`, written through `version`, as storage keeps it: converted by the CRD's webhook if it
/// has one, then read with the storage version's schema.
pub(crate) fn to_storage(
    rt: &ResourceType,
    version: &str,
    obj: &mut Object,
) -> Result<(), ApiError> {
    let Some(storage) = storage_for(rt, version) else {
        return Ok(());
    };
    if !rt.custom {
        // Converted already ([`to_internal`]); what storage decodes gets its version's
        // defaults.
        super::defaults::as_decoded(&rt.group, &rt.kind, obj);
        return Ok(());
    }
    if let Some(webhook) = &storage.webhook {
        convert_by(webhook, rt, version, &storage.name, obj)?;
    }
    if let Some(schema) = storage.schema.as_deref() {
        // What cannot be coerced is kept as written, as storage's decoder drops only what it
        // cannot read.
        let _ = schema.decode(obj);
    }
    Ok(())
}

/// `obj`, as stored, served through `version`: converted by the CRD's webhook if it has one,
/// then pruned by `version`'s schema.
pub(crate) fn to_version(
    rt: &ResourceType,
    version: &str,
    obj: &mut Object,
) -> Result<(), ApiError> {
    let Some(storage) = storage_for(rt, version) else {
        return Ok(());
    };
    if let Some(convert) = rt.hooks.convert {
        convert(obj, &storage.name, version);
        return Ok(());
    }
    if let Some(webhook) = &storage.webhook {
        convert_by(webhook, rt, &storage.name, version, obj)?;
    }
    if let Some(schema) = rt.validation(version) {
        schema.prune(obj);
    }
    Ok(())
}

/// A built-in written through `version` in the storage version's form, which stands for the
/// internal type its strategy prepares and validates.
pub(crate) fn to_internal(rt: &ResourceType, version: &str, obj: &mut Object) {
    if let (Some(storage), Some(convert)) = (storage_for(rt, version), rt.hooks.convert) {
        convert(obj, version, &storage.name);
    }
}

/// A stored object (whose body carries no `apiVersion` or `kind`) typed as the storage version
/// that a request through `version` converts to.
pub(crate) fn type_as_stored(rt: &ResourceType, version: &str, obj: &mut Object) {
    if let Some(storage) = storage_for(rt, version) {
        obj.insert(
            "apiVersion".into(),
            Value::String(rt.api_version(&storage.name)),
        );
        obj.insert("kind".into(), Value::String(rt.kind.clone()));
    }
}

/// A stored body served through `version`: the same bytes unless the request converts.
pub(crate) fn body_in_version<'a>(
    rt: &ResourceType,
    version: &str,
    body: &'a [u8],
) -> Result<Cow<'a, [u8]>, ApiError> {
    if !converts(rt, version) {
        return Ok(Cow::Borrowed(body));
    }
    // The key only words a decoding error, and that error is not reported here.
    match decode_body("", body) {
        Ok(mut obj) => {
            to_version(rt, version, &mut obj)?;
            // Typed as the version served, so a built-in is written in that type's field order
            // (the two keys themselves are left out of the body).
            obj.insert("apiVersion".into(), Value::String(rt.api_version(version)));
            obj.insert("kind".into(), Value::String(rt.kind.clone()));
            Ok(Cow::Owned(encode_body(&obj).to_vec()))
        }
        // Served as it is: whoever reads it reports what does not decode.
        Err(_) => Ok(Cow::Borrowed(body)),
    }
}

/// Converts `obj` from `from` to `to` (versions of `rt`) with `webhook`: a 500 with
/// kube-apiserver's message when the webhook fails.
fn convert_by(
    webhook: &WebhookEndpoint,
    rt: &ResourceType,
    from: &str,
    to: &str,
    obj: &mut Object,
) -> Result<(), ApiError> {
    obj.insert("apiVersion".into(), Value::String(rt.api_version(from)));
    obj.insert("kind".into(), Value::String(rt.kind.clone()));
    let converted = conversion_webhook::convert(webhook, std::mem::take(obj), &rt.api_version(to))
        .map_err(ApiError::internal_unknown)?;
    *obj = converted;
    Ok(())
}
