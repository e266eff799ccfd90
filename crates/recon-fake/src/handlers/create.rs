//! POST: create handler, `Store.Create` and `rest.BeforeCreate` of kube-apiserver.

use recon_apimachinery::json::Value;
use recon_apimachinery::names::NameRule;

use super::decode::{
    check_write_options, custom_type_meta_error, decode_request, ensure_namespace,
};
use super::field_manager::FieldManager;
use super::validation::{
    custom_finalizer_warnings, validate_builtin_finalizer_names, validate_names,
    validate_object_meta,
};
use crate::field::FieldError;
use crate::registry::resource::{GenerationRule, ResourceType};
use crate::registry::{conversion, defaults, validation};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::{Stored, object_key};
use crate::storage::write_limit;
use crate::wire::error::ApiError;
use crate::wire::object::{Object, is_terminating, meta_str, set_meta};

/// `maxNameGenerationCreateAttempts` of the generic store.
const GENERATE_NAME_ATTEMPTS: usize = 8;

/// Fields a client cannot set on create (`WipeObjectMetaSystemFields`): ignored, not rejected.
const SYSTEM_FIELDS: [&str; 5] = [
    "creationTimestamp",
    "uid",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
];

impl State {
    pub(crate) fn create(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        check_write_options(call, "CreateOptions")?;
        let (mut obj, mut warnings) = decode_request(call)?;
        if call.rt.custom
            && self
                .registry
                .is_terminating(&call.rt.group, &call.rt.plural)
        {
            return Err(ApiError::forbidden(
                &call.rt.group_resource(),
                meta_str(&obj, "name"),
                "create not allowed while custom resource definition is terminating",
            ));
        }
        for field in SYSTEM_FIELDS {
            set_meta(&mut obj, field, Value::Null);
        }
        ensure_namespace(call, &mut obj)?;
        FieldManager::new(call, self.clock.now()).record_update(None, &mut obj);
        // Mutating admission runs before the store's `BeforeCreate` (names are generated later).
        self.mutate(call, &mut obj)?;
        self.admit_create(call, &obj)?;
        self.confirm_no_escalation(call, &obj, None)?;
        let generated =
            meta_str(&obj, "name").is_empty() && !meta_str(&obj, "generateName").is_empty();
        let attempts = if generated { GENERATE_NAME_ATTEMPTS } else { 1 };
        let mut last_error = None;
        for attempt in 1..=attempts {
            let candidate = if attempt == attempts {
                std::mem::take(&mut obj)
            } else {
                obj.clone()
            };
            match self.create_once(call, candidate, generated, &mut warnings) {
                Err(e) if generated && e.reason() == crate::wire::status::Reason::AlreadyExists => {
                    last_error = Some(e);
                }
                other => return other.map(|r| r.with_warnings(warnings)),
            }
        }
        let err = last_error.unwrap_or_else(|| ApiError::internal("name generation failed"));
        let name = err.details().map(|d| d.name.clone()).unwrap_or_default();
        Err(ApiError::generate_name_conflict(
            &call.rt.group_resource(),
            &name,
        ))
    }

    /// One attempt of `Store.create`: system fields, a generated name, `BeforeCreate`, storage.
    pub(crate) fn create_once(
        &mut self,
        call: &Call<'_>,
        mut obj: Object,
        generate: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Reply, ApiError> {
        let uid = self.ids.uid();
        set_meta(&mut obj, "uid", Value::String(uid));
        set_meta(&mut obj, "creationTimestamp", self.now());
        if generate {
            let name = self.ids.generate_name(meta_str(&obj, "generateName"));
            set_meta(&mut obj, "name", Value::String(name));
        }
        let admin = self.admin_access_on_create(call, &obj);
        warnings.extend(before_create(call, &mut obj, admin)?);
        self.authorize_param_access(call, &obj, None)?;
        if let Some(stamp) = call.rt.hooks.stamp {
            stamp(&mut obj, None, &self.now());
        }
        let key = object_key(call.namespace(), meta_str(&obj, "name"));
        if call.rt.is_builtin("", "Service") {
            let errors = self.allocate_service(&mut obj, &key);
            if !errors.is_empty() {
                return Err(ApiError::invalid(
                    &call.rt.group_kind(),
                    meta_str(&obj, "name"),
                    &errors,
                ));
            }
        }
        // etcd3 `Create`: a numeric resourceVersion is refused with a plain (500) error.
        if meta_str(&obj, "resourceVersion")
            .parse::<u64>()
            .is_ok_and(|rv| rv != 0)
        {
            return Err(ApiError::internal_unknown(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        set_meta(&mut obj, "resourceVersion", Value::Null);
        if self.store.get(&call.rt.group_resource(), &key).is_some() {
            let err = ApiError::already_exists(&call.rt.group_resource(), meta_str(&obj, "name"));
            // `Store.Create` reads the existing object only to word the error: one that does
            // not decode leaves it plain.
            let terminating = self
                .load(&call.rt, &key)
                .is_ok_and(|existing| existing.is_some_and(|(o, _)| is_terminating(&o)));
            return Err(if terminating {
                err.prefixed("object is being deleted: ")
            } else {
                err
            });
        }
        conversion::to_storage(&call.rt, &call.path.version, &mut obj)?;
        if call.dry_run() {
            as_served(&call.rt, &mut obj);
            return Ok(Reply::json(
                201,
                call.object_response(&self.store.encode(&call.rt.group_resource(), &obj))?,
            ));
        }
        write_limit::fit(
            &mut obj,
            &call.rt.etcd_write(&key, None),
            call.body.len(),
            !call.is_apply(),
        )?;
        let (_, stored) = self.store_created(&call.rt, key.clone(), obj);
        // etcd3's `Create` decodes what it wrote for the answer: an object its decoder cannot
        // read (nested deeper than it reads) is written, and the create fails.
        let reply = match stored.served(&key) {
            Ok(body) => Ok(Reply::json(201, call.object_response(body)?)),
            Err(e) => Err(e.to_api_error()),
        };
        self.after_write(&call.rt);
        reply
    }

    /// Stores a created object. A built-in is written as its strategy prepared it and served
    /// as storage decodes it, with the scheme's defaults applied again: what the strategy
    /// generated after the request's defaulting (a Job's template labels, a claim's emptied
    /// status) gets its defaults only then (the Job's own labels, the claim's `Pending`
    /// phase). The first update writes them, even one that changes nothing else.
    pub(crate) fn store_created(
        &mut self,
        rt: &ResourceType,
        key: String,
        mut obj: Object,
    ) -> (u64, Stored) {
        let resource = rt.group_resource();
        if rt.custom || !generates_after_defaults(rt) {
            // Decoding it again would change nothing (the tests check it).
            #[cfg(debug_assertions)]
            if !rt.custom {
                let mut served = obj.clone();
                as_served(rt, &mut served);
                debug_assert!(
                    served == obj,
                    "a {} decodes as something else than was written",
                    rt.kind
                );
            }
            return self.store.put(&resource, key, obj);
        }
        let written = obj.clone();
        as_served(rt, &mut obj);
        self.store.put_as_written(&resource, key, obj, written)
    }
}

/// Whether a created built-in may hold what defaults fill in but the request's defaulting did
/// not: its kind has defaults and its strategy writes to it after they were applied. Without
/// both, the object is stored as storage serves it and need not be decoded again.
fn generates_after_defaults(rt: &ResourceType) -> bool {
    let hooks = &rt.hooks;
    let writes =
        hooks.prepare_create.is_some() || hooks.requester.is_some() || hooks.stamp.is_some();
    writes && defaults::defaulter(&rt.group, &rt.kind).is_some()
}

/// A created object as storage serves it: a built-in decoded again, with the scheme's
/// defaults.
pub(crate) fn as_served(rt: &ResourceType, obj: &mut Object) {
    if !rt.custom {
        defaults::as_decoded(&rt.group, &rt.kind, obj);
    }
}

/// `rest.BeforeCreate` from `PrepareForCreate` on: the type's create rules, then validation,
/// after the `leading` errors a strategy reports first (DRA's admin access). Returns the
/// type's `Warning`s.
pub(crate) fn before_create(
    call: &Call<'_>,
    obj: &mut Object,
    leading: Vec<FieldError>,
) -> Result<Vec<String>, ApiError> {
    let rt = &call.rt;
    if rt.custom {
        if call.has_status() {
            obj.remove("status");
        }
        set_meta(obj, "generation", Value::from(1));
        if let Some(err) = custom_type_meta_error(call, obj) {
            return Err(err);
        }
        // `customResourceValidator.Validate`: metadata, then the version's schema.
        let mut errors = validate_object_meta(obj, rt.namespaced, NameRule::DnsSubdomain);
        if let Some(schema) = rt.validation(&call.path.version) {
            // No stored value, nothing to ratchet: rules warn only on updates.
            errors.extend(schema.validate_create(obj).errors);
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(
                &rt.group_kind(),
                meta_str(obj, "name"),
                &errors,
            ));
        }
        return Ok(custom_finalizer_warnings(obj));
    }
    conversion::to_internal(rt, &call.path.version, obj);
    if rt.generation != GenerationRule::None {
        set_meta(obj, "generation", Value::from(1));
    }
    if let Some(prepare) = rt.hooks.prepare_create {
        prepare(obj);
    }
    if let Some(record) = rt.hooks.requester {
        record(obj, call.user);
    }
    // The strategy's `Validate` first; only if it passes, the generic path-segment checks.
    let mut errors = leading;
    errors.extend(validate_object_meta(obj, rt.namespaced, rt.name_rule));
    errors.extend(validate_builtin_finalizer_names(obj));
    if let Some(validate) = rt.hooks.validate {
        errors.extend(validate(obj, None));
    }
    errors.extend(validation::validate_create(&rt.group, &rt.kind, obj));
    // The generic checks are the strategy's metadata checks again under the path-segment name
    // rule: with the rest passed, only the names can fail anew.
    if errors.is_empty() && rt.name_rule != NameRule::PathSegment {
        errors = validate_names(obj, NameRule::PathSegment);
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(
            &rt.group_kind(),
            meta_str(obj, "name"),
            &errors,
        ));
    }
    Ok(validation::warnings(&rt.group, &rt.kind, obj))
}
