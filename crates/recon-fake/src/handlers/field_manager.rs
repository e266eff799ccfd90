//! `metadata.managedFields` on every write, as kube-apiserver's `FieldManager` keeps them: the
//! writer of a create, update or merge / JSON / strategic patch gains an `Update` entry for the
//! fields it set, and a server-side apply merges and takes ownership (see [`crate::apply`]).
//!
//! The manager is the `fieldManager` parameter, else the User-Agent up to its first `/`, else
//! `unknown` (kube-rs sends no User-Agent unless configured to).

use std::sync::Arc;

use recon_apimachinery::json::Value;

use crate::apply::{
    self, ApplyError, FieldSet, ManagedFields, Request, RequestRules, Schema, ServedSchemas, Time,
    conflict_causes, reset_fields,
};
use crate::gotype;
use crate::registry::resource::{FieldSchema, ResourceType, ServedVersion};
use crate::request::call::Call;
use crate::wire::error::ApiError;
use crate::wire::object::Object;
use crate::wire::status::{Reason, StatusCause, StatusDetails};

impl Call<'_> {
    /// `managerOrUserAgent`.
    pub(crate) fn field_manager(&self) -> &str {
        match self.query.get("fieldManager") {
            Some(manager) if !manager.is_empty() => manager,
            _ => self.user_agent.split('/').next().unwrap_or(""),
        }
    }

    /// The structural schema field management follows for this request's version: the CRD's,
    /// or the built-in type's table; untyped when a CRD's schema does not convert.
    pub(crate) fn field_schema(&self) -> Arc<Schema> {
        field_schema(
            self.rt
                .versions
                .iter()
                .find(|v| v.name == self.path.version),
        )
    }
}

/// The structural schema field management follows at `version`; untyped without one.
fn field_schema(version: Option<&ServedVersion>) -> Arc<Schema> {
    version
        .and_then(|v| v.schema.as_ref())
        .map_or_else(|| Arc::new(Schema::untyped()), FieldSchema::get)
}

/// Field management for one request.
pub(crate) struct FieldManager<'c> {
    rt: &'c ResourceType,
    manager: &'c str,
    schema: Arc<Schema>,
    /// A custom resource's versions: its managers' entries convert between them.
    served: Option<Arc<ServedSchemas>>,
    reset: FieldSet,
    /// The version written at, and its `apiVersion`.
    version: String,
    api_version: String,
    subresource: String,
    time: Time,
}

impl<'c> FieldManager<'c> {
    pub(crate) fn new(call: &'c Call<'c>, now: jiff::Timestamp) -> Self {
        let subresource = call.path.subresource.clone().unwrap_or_default();
        FieldManager {
            rt: &call.rt,
            manager: call.field_manager(),
            schema: call.field_schema(),
            served: call.rt.field_versions.clone(),
            reset: reset_fields(&subresource, call.has_status()),
            version: call.path.version.clone(),
            api_version: call.api_version(),
            subresource,
            time: Time(now.as_second()),
        }
    }

    /// Field management for a write one of the server's own controllers makes to `rt` at its
    /// first version (to `subresource` when not empty), as `manager`.
    pub(crate) fn for_controller(
        rt: &'c ResourceType,
        subresource: &str,
        manager: &'c str,
        now: jiff::Timestamp,
    ) -> Self {
        let version = rt.versions.first();
        FieldManager {
            rt,
            manager,
            schema: field_schema(version),
            served: rt.field_versions.clone(),
            reset: reset_fields(subresource, version.is_some_and(|v| v.status)),
            version: version.map_or(String::new(), |v| v.name.clone()),
            api_version: rt.api_version(version.map_or("", |v| v.name.as_str())),
            subresource: subresource.to_owned(),
            time: Time(now.as_second()),
        }
    }

    fn request(&self) -> Request<'_> {
        Request {
            manager: self.manager,
            api_version: &self.api_version,
            kind: &self.rt.kind,
            subresource: &self.subresource,
            time: self.time,
            reset_fields: &self.reset,
            served: self.served.as_deref(),
            new_object: None,
            unstructured: self.rt.custom,
        }
    }

    /// A non-apply write: `new` (the request's object) gets the managedFields it will be stored
    /// with; `old` is the stored object (`None` on create), borrowed mutably only to be read
    /// as a JSON value without copying it.
    pub(crate) fn record_update(&self, old: Option<&mut Object>, new: &mut Object) {
        let rules = RequestRules {
            subresource: !self.subresource.is_empty(),
            empty_list_resets: !self.rt.custom,
        };
        // A create is compared with a new object of the type: for a built-in kind, the fields
        // Go writes even when unset.
        let new_object = (old.is_none() && !self.rt.custom).then(|| {
            let mut zero = recon_apimachinery::json::Map::new();
            let rt = self.rt;
            // The request's version's type: another one than storage's when the type converts.
            match gotype::kind_struct(&rt.group, &self.version, &rt.kind) {
                Some(name) => gotype::fill_zero_fields_of(name, &mut zero),
                None => gotype::fill_zero_fields(&rt.group, &rt.kind, &mut zero),
            }
            Value::Object(zero)
        });
        with_value(new, |doc| {
            let sent = apply::take_list(doc);
            let record = |old: Option<&Value>| {
                let start = ManagedFields::from_request(sent, old, rules);
                let request = Request {
                    new_object: new_object.as_ref(),
                    ..self.request()
                };
                apply::record_update(start, old, doc, &request, &self.schema)
            };
            let managed = match old {
                Some(old) => with_value(old, |old| record(Some(&*old))),
                None => record(None),
            };
            if self.rt.custom {
                managed.write_to_unstructured(doc);
            } else {
                managed.write_to(doc);
            }
        });
    }

    /// A server-side apply of `applied` onto `live` (`None` creates), which is borrowed
    /// mutably only to be read as a JSON value without copying it.
    pub(crate) fn apply(
        &self,
        live: Option<&mut Object>,
        applied: &Value,
        force: bool,
    ) -> Result<Object, ApiError> {
        let apply = |live: Option<&Value>| {
            let managed = match live {
                Some(l) => ManagedFields::from_object(l).map_err(|e| {
                    ApiError::internal_unknown(format!("failed to decode managed fields: {e}"))
                })?,
                None => ManagedFields::default(),
            };
            apply::apply_owned(live, applied, managed, &self.request(), force, &self.schema)
                .map_err(apply_error)
        };
        let applied = match live {
            Some(live) => with_value(live, |live| apply(Some(&*live))),
            None => apply(None),
        }?;
        match applied.object {
            Value::Object(map) => Ok(map),
            _ => Err(ApiError::internal_unknown(
                "apply did not produce an object",
            )),
        }
    }
}

/// Runs `f` on `obj` as a JSON value: the map is moved in and back out, not copied.
fn with_value<R>(obj: &mut Object, f: impl FnOnce(&mut Value) -> R) -> R {
    let mut doc = Value::Object(std::mem::take(obj));
    let out = f(&mut doc);
    if let Value::Object(map) = doc {
        *obj = map;
    }
    out
}

pub(crate) fn apply_error(err: ApplyError) -> ApiError {
    let reason = match err.code() {
        400 => Reason::BadRequest,
        409 => Reason::Conflict,
        _ => Reason::Unknown,
    };
    let api_error = ApiError::new(err.code(), reason, err.message());
    let ApplyError::Conflicts(conflicts) = &err else {
        return api_error;
    };
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    api_error.with_details(StatusDetails {
        causes: conflict_causes(conflicts)
            .iter()
            .map(|c| StatusCause {
                reason: text(c, "reason"),
                message: text(c, "message"),
                field: text(c, "field"),
            })
            .collect(),
        ..StatusDetails::default()
    })
}
