//! Server-side apply and `metadata.managedFields`, as kube-apiserver computes them.
//!
//! Pure functions over JSON values (`recon_apimachinery::json::Value`): the caller keeps objects, runs the strategy
//! (status resets, generation, validation) and decides whether to write.
//!
//! - [`record_update`]: every non-apply write (create, update, merge/JSON patch) updates the
//!   writer's `Update` entry.
//! - [`apply`]: a server-side apply: merge, prune, conflicts, ownership.
//! - [`ManagedFields`]: the entries, read from and written to objects; what a request's own
//!   `managedFields` means ([`ManagedFields::from_request`]).
//! - [`FieldSet`], [`typed::fields_of`]: field paths and their `fieldsV1` encoding.
//! - [`Schema`]: which lists and maps are atomic, sets or keyed, from a CRD schema or a small
//!   built-in table.
//!
//! The algorithms follow kubernetes-sigs/structured-merge-diff (`merge/update.go`,
//! `typed/*.go`, `fieldpath/*.go`) and apimachinery `pkg/util/managedfields/internal`; the
//! outputs were checked against a real apiserver (see the tests in `real_tests.rs`).
//!
//! How a server uses it, per write (the same order as kube-apiserver's handlers):
//!
//! ```ignore
//! // create, PUT, merge/JSON patch (main resource or a subresource):
//! let reset = reset_fields(subresource, has_status_subresource);
//! let req = Request { manager, api_version, kind, subresource, time, reset_fields: &reset, served: None, new_object: None, unstructured: false };
//! let start = ManagedFields::from_request(take_list(&mut new), live.as_ref(), rules);
//! record_update(start, live.as_ref(), &new, &req, &schema).write_to(&mut new);
//! // ... then the strategy (status resets keep the new managedFields), validation, and:
//! restore_unchanged_times(new_map, live_map);  // then skip the write if new == live
//!
//! // server-side apply:
//! let managed = ManagedFields::from_object(&live)?;          // 500 on error
//! let out = apply_owned(Some(&live), &body, managed, &req, force, &schema)?;
//! // ... out.object goes through the same strategy/validation/no-op steps.
//! ```

mod builtins;
mod compare;
mod conflict;
mod managed;
mod merge;
mod schema;
mod time;
mod typed;
mod updater;
mod versions;

#[cfg(test)]
mod real_tests;
#[cfg(test)]
mod tests;

use std::fmt;

pub use conflict::{Conflict, conflict_causes, conflict_message};
pub use managed::{
    ManagedFields, ManagerId, Operation, RequestRules, restore_unchanged_times, take_list,
};
pub use recon_apimachinery::fieldpath::{FieldSet, Path};
use recon_apimachinery::json;
use recon_apimachinery::json::Value;
pub use schema::Schema;
pub use time::Time;
pub use updater::MAX_UPDATE_MANAGERS;
use updater::{ApplyFailure, Ctx};
pub use versions::{Converter, ServedSchemas};

/// Who writes, to what, and when.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The field manager (`fieldManager`, or the user agent for non-apply writes); `""`
    /// becomes `unknown` as upstream does.
    pub manager: &'a str,
    /// The apiVersion of the endpoint, e.g. `example.com/v1`.
    pub api_version: &'a str,
    /// The kind served at the endpoint.
    pub kind: &'a str,
    /// `""` for the main resource, `"status"` for `/status`.
    pub subresource: &'a str,
    /// Now.
    pub time: Time,
    /// Fields the endpoint's strategy resets ([`reset_fields`]): never owned through this
    /// endpoint, and changes to them never conflict.
    pub reset_fields: &'a FieldSet,
    /// The schemas of every version the resource serves, when its managers' versions matter
    /// (a custom resource): entries of other versions are converted ([`ServedSchemas`]).
    pub served: Option<&'a ServedSchemas>,
    /// What the apiserver's `creater.New(gvk)` holds besides its type, which a create's
    /// Update entry is compared with: a built-in kind's fields Go writes even when unset (a
    /// Deployment's `spec.strategy`, `spec.template.metadata`); `None` for a custom resource.
    pub new_object: Option<&'a Value>,
    /// Whether the object is unstructured (a custom resource): its managedFields are then set
    /// as `Unstructured.SetManagedFields` sets them ([`ManagedFields::write_to_unstructured`]).
    pub unstructured: bool,
}

impl Request<'_> {
    fn manager(&self) -> &str {
        if self.manager.is_empty() {
            "unknown"
        } else {
            self.manager
        }
    }

    fn ctx<'s>(&'s self, schema: &'s Schema) -> Ctx<'s> {
        Ctx {
            schema,
            reset: self.reset_fields,
            api_version: self.api_version,
            time: self.time,
            served: self.served,
        }
    }

    /// What the apiserver's `creater.New(gvk)` gives: an object with only its type.
    fn empty_object(&self) -> Value {
        json!({"apiVersion": self.api_version, "kind": self.kind})
    }
}

/// The reset fields of a custom resource endpoint (apiextensions `GetResetFields`): with a
/// status subresource the main endpoint resets `status`, `/status` resets `metadata` and
/// `spec`; without one nothing is reset.
pub fn reset_fields(subresource: &str, has_status_subresource: bool) -> FieldSet {
    let paths: &[&str] = match (subresource, has_status_subresource) {
        ("", true) => &["status"],
        ("status", _) => &["metadata", "spec"],
        // Namespace `/finalize` (`FinalizeREST.GetResetFields`).
        ("finalize", _) => &["status"],
        _ => &[],
    };
    FieldSet::from_paths(paths.iter().map(|p| Path::fields(&[p])))
}

/// Updates managedFields for a non-apply write (create, update, merge or JSON patch) and
/// returns the new entries; write them with [`ManagedFields::write_to`].
///
/// `managed` is what the write starts from ([`ManagedFields::from_request`]); `old` is the
/// stored object (`None` on create); `new` the object about to be stored, before the
/// strategy's resets. As upstream (`skipNonAppliedManager`), an existing object without
/// managedFields stays untracked; a created one is always tracked.
pub fn record_update(
    managed: ManagedFields,
    old: Option<&Value>,
    new: &Value,
    req: &Request<'_>,
    schema: &Schema,
) -> ManagedFields {
    let mut m = managed;
    if m.is_empty() && old.is_some() {
        return m;
    }
    let empty;
    let old = match old {
        Some(o) => o,
        None => {
            empty = match req.new_object {
                // `handlers/create.go` hands the field manager `scope.Creater.New(kind)`.
                Some(Value::Object(zero)) => {
                    let mut zero = zero.clone();
                    zero.insert("apiVersion".to_owned(), json!(req.api_version));
                    zero.insert("kind".to_owned(), json!(req.kind));
                    Value::Object(zero)
                }
                _ => req.empty_object(),
            };
            &empty
        }
    };
    let id = ManagerId::new(
        req.manager(),
        Operation::Update,
        req.api_version,
        req.subresource,
    );
    if updater::record(&mut m, old, new, &id, &req.ctx(schema)).is_err() {
        // `UpdateNoErrors`: the write goes on, with no managedFields at all.
        return ManagedFields::default();
    }
    updater::cap_update_managers(&mut m, MAX_UPDATE_MANAGERS);
    m
}

/// The outcome of an apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The object to store: the merge result with managedFields written, or the live object
    /// with its new managedFields when the apply changed nothing else.
    pub object: Value,
    /// The new entries (also in `object`), for tests to read without decoding them.
    #[cfg(test)]
    pub managed: ManagedFields,
    /// Whether the merged object differs from the live one (then the applier's time moved).
    /// Ownership can change without this (a shared value).
    pub changed: bool,
}

/// Why an apply was refused; [`ApplyError::code`] and [`ApplyError::message`] give the Status
/// the apiserver answers with (reason `BadRequest` for the 400s, `Conflict` for the 409, none
/// for the 500s, which upstream does not classify).
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyError {
    /// 400: the body's apiVersion or kind is not the endpoint's.
    InvalidObjectType(String),
    /// 400: the body sets `metadata.managedFields`.
    ManagedFieldsNotNil,
    /// 409: fields owned by others would change.
    Conflicts(Vec<Conflict>),
    /// 500: the body does not fit the schema (duplicate or missing list keys, wrong types).
    InvalidPatch(String),
    /// 500: the stored object does not fit the schema.
    InvalidLive(String),
    /// 500: the merge failed.
    Merge(String),
    /// 500: an object does not convert into the version another manager wrote through.
    Conversion(String),
}

impl ApplyError {
    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            ApplyError::InvalidObjectType(_) | ApplyError::ManagedFieldsNotNil => 400,
            ApplyError::Conflicts(_) => 409,
            _ => 500,
        }
    }

    /// The Status `message`.
    pub fn message(&self) -> String {
        match self {
            ApplyError::InvalidObjectType(gvk) => format!("invalid object type: {gvk}"),
            ApplyError::ManagedFieldsNotNil => "metadata.managedFields must be nil".to_owned(),
            ApplyError::Conflicts(c) => conflict_message(c),
            ApplyError::InvalidPatch(m)
            | ApplyError::InvalidLive(m)
            | ApplyError::Conversion(m) => m.clone(),
            ApplyError::Merge(m) => format!("failed to merge config: {m}"),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ApplyError {}

/// `schema.GroupVersionKind.String()` of an apiVersion and kind, as unstructured objects
/// parse them (an unparsable apiVersion gives the empty GVK).
fn gvk_string(api_version: &str, kind: &str) -> String {
    let parts: Vec<&str> = api_version.split('/').collect();
    match parts[..] {
        [""] => format!("/, Kind={kind}"),
        [v] => format!("/{v}, Kind={kind}"),
        [g, v] => format!("{g}/{v}, Kind={kind}"),
        _ => "/, Kind=".to_owned(),
    }
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// [`apply_owned`] on a copy of `managed`.
#[cfg(test)]
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    managed: &ManagedFields,
    req: &Request<'_>,
    force: bool,
    schema: &Schema,
) -> Result<Applied, ApplyError> {
    apply_owned(live, applied, managed.clone(), req, force, schema)
}

/// Server-side apply of `applied` by `req.manager` (`FieldManager.Apply` and the managers it
/// wraps: version check, `before-first-apply`, strip meta, structured merge).
///
/// `live` is the stored object with its managedFields (`None` creates); `managed` its decoded
/// entries ([`ManagedFields::from_object`]; upstream answers a decode error with a 500
/// `failed to decode managed fields: <err>`). The caller still applies the strategy's resets
/// (drop `status` on the main endpoint, keep only `status` on `/status`) to the result.
pub fn apply_owned(
    live: Option<&Value>,
    applied: &Value,
    managed: ManagedFields,
    req: &Request<'_>,
    force: bool,
    schema: &Schema,
) -> Result<Applied, ApplyError> {
    let got = gvk_string(str_at(applied, "/apiVersion"), str_at(applied, "/kind"));
    if got != gvk_string(req.api_version, req.kind) {
        return Err(ApplyError::InvalidObjectType(got));
    }
    let ctx = req.ctx(schema);
    let mut m = managed;
    // An object nobody tracked yet: its current fields go to `before-first-apply`.
    if m.is_empty()
        && let Some(l) = live
    {
        let id = ManagerId::new(
            "before-first-apply",
            Operation::Update,
            req.api_version,
            req.subresource,
        );
        // Nobody else owns anything yet: no other version to convert into.
        let _ = updater::record(&mut m, &req.empty_object(), l, &id, &ctx);
        updater::cap_update_managers(&mut m, MAX_UPDATE_MANAGERS);
    }
    if matches!(
        applied.pointer("/metadata/managedFields"),
        Some(Value::Array(_))
    ) {
        return Err(ApplyError::ManagedFieldsNotNil);
    }
    let errs = typed::validate(applied, schema, false);
    if !errs.is_empty() {
        return Err(ApplyError::InvalidPatch(format!(
            "failed to create typed patch object ({}/{}; {got}): {}",
            str_at(applied, "/metadata/namespace"),
            str_at(applied, "/metadata/name"),
            typed::join_errors(&errs)
        )));
    }
    let empty;
    let live = match live {
        Some(live) => live,
        None => {
            empty = req.empty_object();
            &empty
        }
    };
    let errs = typed::validate(live, schema, true);
    if !errs.is_empty() {
        return Err(ApplyError::InvalidLive(format!(
            "failed to create typed live object ({}/{}; {got}): {}",
            str_at(live, "/metadata/namespace"),
            str_at(live, "/metadata/name"),
            typed::join_errors(&errs)
        )));
    }
    if let Some(served) = req.served {
        versions::reconcile(&m, live, req.api_version, served).map_err(ApplyError::Conversion)?;
    }
    let id = ManagerId::new(
        req.manager(),
        Operation::Apply,
        req.api_version,
        req.subresource,
    );
    let (new, changed) = match updater::apply(&mut m, live, applied, &id, force, &ctx) {
        Ok(r) => r,
        Err(ApplyFailure::Conflicts(c)) => return Err(ApplyError::Conflicts(c)),
        Err(ApplyFailure::Merge(e)) => return Err(ApplyError::Merge(e)),
        Err(ApplyFailure::Conversion(e)) => return Err(ApplyError::Conversion(e)),
    };
    // Unchanged, the live object is what is written back: copied only then.
    let mut object = if changed { new } else { live.clone() };
    #[cfg(test)]
    let managed = m.clone();
    if req.unstructured {
        m.write_to_unstructured(&mut object);
    } else {
        m.write_to(&mut object);
    }
    Ok(Applied {
        object,
        #[cfg(test)]
        managed,
        changed,
    })
}
