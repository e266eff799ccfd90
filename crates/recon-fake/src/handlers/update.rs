//! PUT, and the update path every write of an existing object takes: `Store.Update` and
//! `rest.BeforeUpdate` of kube-apiserver, in their order (which decides which error wins).

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::NameRule;

use super::create::{as_served, before_create};
use super::decode::{
    check_name, check_write_options, custom_type_meta_error, decode_request, ensure_namespace,
};
use super::field_manager::FieldManager;
use super::validation::{
    MapChecks, validate_builtin_finalizer_names, validate_namespace_finalizer_names,
    validate_object_meta_checked, validate_object_meta_update,
};
use crate::apply::restore_unchanged_times;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::registry::resource::{DeleteBehavior, GenerationRule, StatusWrite};
use crate::registry::{conversion, defaults, validation};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::Stored;
use crate::storage::write_limit;
use crate::wire::error::ApiError;
use crate::wire::group::GroupKind;
use crate::wire::object::{
    Object, decode_body, deletion_grace, finalizers, generation, is_terminating, meta_mut,
    meta_str, meta_value, set_meta,
};

/// Which endpoint a write came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// The object itself.
    Main,
    /// Its `/status` subresource.
    Status,
    /// A Namespace's `/finalize` subresource: the only way to change `spec.finalizers`.
    Finalize,
    /// A CertificateSigningRequest's `/approval`: only `status.conditions` changes.
    Approval,
}

impl Endpoint {
    pub(crate) fn of(call: &Call<'_>) -> Endpoint {
        match call.path.subresource.as_deref() {
            Some("status") => Endpoint::Status,
            Some("finalize") => Endpoint::Finalize,
            Some("approval") => Endpoint::Approval,
            _ => Endpoint::Main,
        }
    }
}

/// An update as the store receives it.
pub(crate) struct UpdateRequest {
    /// The object the client wants stored: a PUT body, or the patched current object.
    pub(crate) object: Object,
    /// A PUT's `metadata.uid` is a precondition (patches have none).
    pub(crate) uid_precondition: bool,
    pub(crate) warnings: Vec<String>,
    /// The stored object as the caller already read it ([`State::load_typed`]), if it did.
    pub(crate) current: Option<(Object, Stored)>,
    /// Whether `object` already carries this write's managedFields (a server-side apply).
    pub(crate) fields_managed: bool,
}

impl State {
    /// PUT of an object or its `/status`.
    pub(crate) fn replace(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        check_write_options(call, "UpdateOptions")?;
        let (mut object, warnings) = decode_request(call)?;
        ensure_namespace(call, &mut object)?;
        check_name(call, &object)?;
        self.update(
            call,
            UpdateRequest {
                object,
                uid_precondition: true,
                warnings,
                current: None,
                fields_managed: false,
            },
        )
    }

    /// `Store.Update`: preconditions, resourceVersion, `BeforeUpdate`, delete-on-empty-finalizers,
    /// no-op detection, then the write.
    pub(crate) fn update(
        &mut self,
        call: &Call<'_>,
        request: UpdateRequest,
    ) -> Result<Reply, ApiError> {
        let rt = call.rt.clone();
        let gr = rt.group_resource();
        let endpoint = Endpoint::of(call);
        let key = call.key();
        let UpdateRequest {
            object: mut new,
            uid_precondition,
            mut warnings,
            current,
            fields_managed,
        } = request;
        let current = match current {
            Some(current) => Some(current),
            None => self.load_typed(call)?,
        };
        let Some((mut old, stored)) = current else {
            if rt.create_on_update && endpoint == Endpoint::Main {
                FieldManager::new(call, self.clock.now()).record_update(None, &mut new);
                return self.create_on_update(call, new, warnings);
            }
            return Err(ApiError::not_found(&gr, call.name()));
        };
        // The storage's uid precondition, then admission (`UpdatedObject`), then the
        // resourceVersion checks: `Store.Update`'s order.
        if uid_precondition {
            let (want, have) = (meta_str(&new, "uid"), meta_str(&old, "uid"));
            if !want.is_empty() && want != have {
                return Err(ApiError::conflict(
                    &gr,
                    call.name(),
                    &format!(
                        "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {want}, UID in object meta: {have}",
                        rt.storage_key(call.namespace(), call.name())
                    ),
                ));
            }
        }
        self.mutate(call, &mut new)?;
        self.admit_update(call)?;
        self.confirm_no_escalation(call, &new, Some(&old))?;
        let rv_text = meta_str(&new, "resourceVersion");
        let rv: u64 = if rv_text.is_empty() {
            0
        } else {
            rv_text.parse().map_err(|_| {
                ApiError::internal_unknown(format!(
                    "strconv.ParseUint: parsing {}: invalid syntax",
                    go_quote(rv_text)
                ))
            })?
        };
        if rv == 0 {
            if !rt.unconditional_update {
                // The store reports this one against {group, resource}: `widgets.example.com "x"`.
                return Err(ApiError::invalid(
                    &GroupKind::new(rt.group.clone(), rt.plural.clone()),
                    call.name(),
                    &[FieldError::new(
                        ErrorType::Invalid,
                        "metadata.resourceVersion",
                        BadValue::Raw("0".to_owned()),
                        "must be specified for an update",
                    )],
                ));
            }
            set_meta(
                &mut new,
                "resourceVersion",
                Value::String(stored.revision.to_string()),
            );
        } else if rv != stored.revision {
            return Err(ApiError::optimistic_lock(&gr, call.name()));
        }
        if !fields_managed {
            FieldManager::new(call, self.clock.now()).record_update(Some(&mut old), &mut new);
        }
        // The strategy may start from the stored object (status writes); the write's
        // managedFields are kept either way, set aside meanwhile (nothing it does reads them).
        let managed = new
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.remove("managedFields"));
        // The strategy compares with the stored object as decoded, not as the request's
        // version serves it (a conversion there and back may not give it back).
        let internal_old = if !rt.custom && conversion::converts(&rt, &call.path.version) {
            let mut internal = stored.decode(&key).map_err(|e| e.to_api_error())?;
            conversion::type_as_stored(&rt, &call.path.version, &mut internal);
            Some(internal)
        } else {
            None
        };
        let strategy_old = internal_old.as_ref().unwrap_or(&old);
        let admin = match endpoint {
            Endpoint::Status => self.admin_access_on_status(call, &new, strategy_old),
            _ => Vec::new(),
        };
        let (mut new, validation_warnings) =
            before_update(call, endpoint, new, strategy_old, admin)?;
        if endpoint == Endpoint::Main {
            self.authorize_param_access(call, &new, Some(strategy_old))?;
        }
        if let Some(stamp) = rt.hooks.stamp {
            stamp(&mut new, Some(strategy_old), &self.now());
        }
        warnings.extend(validation_warnings);
        set_meta(&mut new, "managedFields", managed.unwrap_or(Value::Null));
        restore_unchanged_times(&mut new, &old);
        conversion::to_storage(&rt, &call.path.version, &mut new)?;

        let finalizers_done = finalizers(&new).is_empty()
            && is_terminating(&old)
            && deletion_grace(&old).unwrap_or(0) == 0
            && (rt.delete != DeleteBehavior::Namespace || namespace_finalizers_empty(&new));
        if finalizers_done {
            // `deleteWithoutFinalizers`: gone within this request, answered with the request's object.
            if !call.dry_run() {
                self.store.remove(&gr, &key);
                self.after_write(&rt);
            }
            return Ok(
                Reply::json(200, call.object_response(&self.store.encode(&gr, &new))?)
                    .with_warnings(warnings),
            );
        }
        // etcd's bytes: what was written, where storage serves it otherwise.
        let unchanged = match self.store.written(&gr, &key) {
            Some(bytes) => new == decode_body(&key, bytes).map_err(|e| e.to_api_error())?,
            // `old` is in the request's version; storage's form is what it compares with.
            None if rt.custom && conversion::converts(&rt, &call.path.version) => {
                new == stored.decode(&key).map_err(|e| e.to_api_error())?
            }
            None if conversion::converts(&rt, &call.path.version) => {
                // The stored body carries no `apiVersion` or `kind`: `new`'s are what storage
                // would write.
                let mut current = stored.decode(&key).map_err(|e| e.to_api_error())?;
                for field in ["apiVersion", "kind"] {
                    match new.get(field) {
                        Some(v) => current.insert(field.to_owned(), v.clone()),
                        None => current.remove(field),
                    };
                }
                new == current
            }
            None => new == old,
        };
        if unchanged {
            // What would be stored is byte-identical (bodies are canonical, so equal objects
            // encode equally): etcd is not written, the resourceVersion stays, no watch event.
            return Ok(
                Reply::json(200, call.object_response(&stored.body)?).with_warnings(warnings)
            );
        }
        if call.dry_run() {
            let body = self.store.encode(&gr, &new);
            return Ok(Reply::json(200, call.object_response(&body)?).with_warnings(warnings));
        }
        let bound = call.body.len().saturating_add(stored.body.len());
        write_limit::fit(
            &mut new,
            &rt.etcd_write(&key, Some(stored.revision)),
            bound,
            !call.is_apply(),
        )?;
        let (_, stored) = self.store.put(&gr, key.clone(), new);
        // As on create: `GuaranteedUpdate` decodes what it wrote.
        let reply = match stored.served(&key) {
            Ok(body) => Ok(Reply::json(200, call.object_response(body)?).with_warnings(warnings)),
            Err(e) => Err(e.to_api_error()),
        };
        self.after_write(&rt);
        reply
    }

    /// PUT of a missing object of a type that allows it (Service, Event, Lease): a create, 201.
    fn create_on_update(
        &mut self,
        call: &Call<'_>,
        mut obj: Object,
        mut warnings: Vec<String>,
    ) -> Result<Reply, ApiError> {
        for field in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "resourceVersion",
        ] {
            set_meta(&mut obj, field, Value::Null);
        }
        // A PUT that creates is admitted as a create.
        self.mutate(call, &mut obj)?;
        self.admit_create(call, &obj)?;
        self.confirm_no_escalation(call, &obj, None)?;
        let uid = self.ids.uid();
        set_meta(&mut obj, "uid", Value::String(uid));
        set_meta(&mut obj, "creationTimestamp", self.now());
        let admin = self.admin_access_on_create(call, &obj);
        warnings.extend(before_create(call, &mut obj, admin)?);
        // The Service registry's `Create` allocates addresses and ports however it is reached.
        if call.rt.is_builtin("", "Service") {
            let errors = self.allocate_service(&mut obj, &call.key());
            if !errors.is_empty() {
                return Err(ApiError::invalid(
                    &call.rt.group_kind(),
                    meta_str(&obj, "name"),
                    &errors,
                ));
            }
        }
        if call.dry_run() {
            as_served(&call.rt, &mut obj);
            return Ok(Reply::json(
                201,
                call.object_response(&self.store.encode(&call.rt.group_resource(), &obj))?,
            )
            .with_warnings(warnings));
        }
        write_limit::fit(
            &mut obj,
            &call.rt.etcd_write(&call.key(), None),
            call.body.len(),
            !call.is_apply(),
        )?;
        let (_, stored) = self.store_created(&call.rt, call.key(), obj);
        let reply = Reply::json(201, call.object_response(&stored.body)?).with_warnings(warnings);
        self.after_write(&call.rt);
        Ok(reply)
    }
}

fn namespace_finalizers_empty(obj: &Object) -> bool {
    obj.get("spec")
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// `rest.BeforeUpdate`: server-owned metadata carried over, the strategy's `PrepareForUpdate`
/// (status and generation rules), then validation, the `leading` errors a strategy reports
/// first (DRA's admin access) before its others. Returns the object to store and the
/// validation's `Warning`s.
fn before_update(
    call: &Call<'_>,
    endpoint: Endpoint,
    mut new: Object,
    old: &Object,
    leading: Vec<FieldError>,
) -> Result<(Object, Vec<String>), ApiError> {
    let rt = &call.rt;
    // A built-in written through another version than its storage one: the strategy works on
    // the internal form (`old` is the stored object then).
    conversion::to_internal(rt, &call.path.version, &mut new);
    set_meta(
        &mut new,
        "generation",
        meta_value(old, "generation")
            .cloned()
            .unwrap_or(Value::Null),
    );
    match endpoint {
        Endpoint::Main => prepare_main_update(call, &mut new, old),
        Endpoint::Status => {
            new = prepare_status_update(rt.status_write, new, old);
            if let Some(prepare) = rt.hooks.prepare_status_update {
                prepare(&mut new, old);
            }
        }
        Endpoint::Finalize => prepare_finalize_update(&mut new, old),
        Endpoint::Approval => new = prepare_approval_update(new, old),
    }
    if !rt.custom && !matches!(endpoint, Endpoint::Main) {
        // The main endpoint's preparation does it before comparing generations.
        defaults::as_stored(&rt.group, &rt.kind, &mut new);
    }
    if meta_str(&new, "uid").is_empty() {
        set_meta(
            &mut new,
            "uid",
            meta_value(old, "uid").cloned().unwrap_or(Value::Null),
        );
    }
    for field in ["creationTimestamp", "deletionTimestamp"] {
        if let Some(v) = meta_value(old, field) {
            let v = v.clone();
            set_meta(&mut new, field, v);
        }
    }
    if meta_value(&new, "deletionGracePeriodSeconds").is_none()
        && let Some(v) = meta_value(old, "deletionGracePeriodSeconds")
    {
        let v = v.clone();
        set_meta(&mut new, "deletionGracePeriodSeconds", v);
    }
    // `validateCommonFields` (path-segment names), then the strategy's `ValidateUpdate`.
    let maps = MapChecks::of(&new);
    let meta = |rule| validate_object_meta_checked(&new, rt.namespaced, rule, &maps);
    let meta_update = || validate_object_meta_update(&new, old, &maps);
    let mut errors = meta(NameRule::PathSegment);
    errors.extend(meta_update());
    let mut warnings = Vec::new();
    if rt.custom {
        if let Some(err) = custom_type_meta_error(call, &new) {
            return Err(err);
        }
        errors.extend(meta_update());
        // The schema: the whole object from the main endpoint, `.status` from `/status`.
        if let Some(schema) = rt.validation(&call.path.version) {
            let verdict = match endpoint {
                Endpoint::Status => schema.validate_status_update(&new, old),
                _ => schema.validate_update(&new, old),
            };
            errors.extend(verdict.errors);
            warnings = verdict.warnings;
        }
    } else if let Some(strategy) = validation::validate_update_placing_meta(
        &rt.group,
        &rt.kind,
        call.path.subresource.as_deref(),
        &new,
        old,
        &|| {
            // Core's `ValidateObjectMeta` and `ValidateObjectMetaUpdate`: the kube finalizer
            // names after apimachinery's checks.
            let mut object_meta = meta(rt.name_rule);
            object_meta.extend(validate_builtin_finalizer_names(&new));
            let mut object_meta_update = meta_update();
            object_meta_update.extend(validate_builtin_finalizer_names(&new));
            (object_meta, object_meta_update)
        },
    ) {
        // A strategy that places the metadata errors among its own.
        errors.extend(strategy);
    } else {
        errors.extend(leading);
        errors.extend(meta_update());
        errors.extend(meta(rt.name_rule));
        errors.extend(validate_builtin_finalizer_names(&new));
        if let Some(validate) = rt.hooks.validate {
            errors.extend(validate(&new, Some(old)));
        }
        errors.extend(match endpoint {
            Endpoint::Main => validation::validate_update(&rt.group, &rt.kind, &new, old),
            Endpoint::Status => validation::validate_status_update(&rt.group, &rt.kind, &new, old),
            Endpoint::Finalize | Endpoint::Approval => Vec::new(),
        });
        if endpoint == Endpoint::Finalize {
            errors.extend(validate_namespace_finalizer_names(&new));
        }
    }
    if !rt.custom && endpoint == Endpoint::Main {
        warnings = validation::warnings(&rt.group, &rt.kind, &new);
    }
    if !errors.is_empty() {
        let kind = if rt.custom {
            GroupKind::new(rt.group.clone(), meta_kind(&new, &rt.kind))
        } else {
            rt.group_kind()
        };
        return Err(ApiError::invalid(&kind, meta_str(&new, "name"), &errors));
    }
    Ok((new, warnings))
}

fn meta_kind(obj: &Object, default: &str) -> String {
    obj.get("kind")
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_owned()
}

/// `csrApprovalStrategy.PrepareForUpdate` (`pkg/registry/certificates/certificates/strategy.go`):
/// the stored request with the written metadata and `status.conditions`; nothing else an
/// approver sends is kept.
fn prepare_approval_update(new: Object, old: &Object) -> Object {
    let mut kept = old.clone();
    if let Some(meta) = new.get("metadata") {
        kept.insert("metadata".into(), meta.clone());
    }
    let conditions = new.get("status").and_then(|s| s.get("conditions")).cloned();
    let status = kept
        .entry("status")
        .or_insert_with(|| Value::Object(Object::new()));
    if let Value::Object(status) = status {
        match conditions {
            Some(c) => status.insert("conditions".into(), c),
            None => status.remove("conditions"),
        };
    }
    kept
}

/// `PrepareForUpdate` of the main endpoint: status is the subresource's to change, and the
/// generation moves with the type's rule.
fn prepare_main_update(call: &Call<'_>, new: &mut Object, old: &Object) {
    let rt = &call.rt;
    if call.has_status() {
        match old.get("status") {
            Some(status) => new.insert("status".into(), status.clone()),
            None => new.remove("status"),
        };
    }
    if let Some(prepare) = rt.hooks.prepare_update {
        prepare(new, old);
    }
    if !rt.custom {
        // As read back from storage, which decodes with the scheme's defaults again.
        defaults::as_decoded(&rt.group, &rt.kind, new);
    }
    let changed = match rt.generation {
        GenerationRule::None => false,
        GenerationRule::Spec { annotations } => {
            new.get("spec") != old.get("spec")
                || (annotations && meta_value(new, "annotations") != meta_value(old, "annotations"))
        }
        GenerationRule::AllButMetadata => {
            let ignored = ["apiVersion", "kind", "metadata", "status"];
            let status_counts = !call.has_status();
            let counts =
                |k: &String| !ignored.contains(&k.as_str()) || (status_counts && k == "status");
            !new.iter()
                .filter(|(k, _)| counts(k))
                .eq(old.iter().filter(|(k, _)| counts(k)))
        }
    };
    if changed {
        let generation = generation(old) + 1;
        meta_mut(new).insert("generation".into(), Value::from(generation));
    }
}

/// `namespaceFinalizeStrategy.PrepareForUpdate`: the status stays the stored one; the rest,
/// `spec.finalizers` included, comes from the request.
fn prepare_finalize_update(new: &mut Object, old: &Object) {
    match old.get("status") {
        Some(status) => new.insert("status".into(), status.clone()),
        None => new.remove("status"),
    };
}

/// `PrepareForUpdate` of `/status`: custom resources take only `.status` from the request;
/// built-ins reset their listed fields to the stored values and keep the rest.
fn prepare_status_update(rule: StatusWrite, mut new: Object, old: &Object) -> Object {
    match rule {
        StatusWrite::OnlyStatus => {
            let status = new.remove("status");
            let mut result = old.clone();
            match status {
                Some(s) => result.insert("status".into(), s),
                None => result.remove("status"),
            };
            // The lock and uid were checked against the request; what is stored is the old object.
            result
        }
        StatusWrite::Reset { fields, metadata } => {
            for field in fields {
                match old.get(field) {
                    Some(v) => new.insert((*field).to_owned(), v.clone()),
                    None => new.remove(field),
                };
            }
            for field in metadata {
                let v = meta_value(old, field).cloned().unwrap_or(Value::Null);
                set_meta(&mut new, field, v);
            }
            new
        }
    }
}
