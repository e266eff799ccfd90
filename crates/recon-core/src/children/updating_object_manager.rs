//! `UpdatingObjectManager`: creates, updates (PUT, with the resourceVersion read) and deletes
//! a managed object, and remembers what admission changed in what it sent so that those
//! changes do not read as drift on the next reconcile.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use jiff::{SignedDuration, Timestamp};
use kube::api::ApiResource;
use serde_json::Value;

use super::object_manager::{
    ObjectManager, Parent, WriteEvents, describe, remove_unwanted, track_managed,
};
use crate::context::Context;
use crate::error::Error;
use crate::object_api::ObjectApi;
use crate::tree::{Reconciled, Setup};

type MergeHook<C> = Box<dyn Fn(&mut C, &C) + Send + Sync>;
type HarmonizeHook<C> = Box<dyn Fn(&C, &mut C) + Send + Sync>;
type SanitizeHook<C> = Box<dyn Fn(&C) -> Value + Send + Sync>;

/// How long a remembered admission mutation holds.
const MUTATION_TTL: SignedDuration = SignedDuration::from_hours(1);

/// Which state of an object a remembered mutation applies to: its generation where the kind
/// has one (a change of spec by anyone invalidates it), else its resourceVersion.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Version {
    Generation(i64),
    ResourceVersion(Option<String>),
}

impl Version {
    fn of(meta: &kube::core::ObjectMeta) -> Self {
        match meta.generation {
            Some(g) => Version::Generation(g),
            None => Version::ResourceVersion(meta.resource_version.clone()),
        }
    }
}

/// What admission changed in an update, as a JSON Patch from what was sent to what was stored.
struct Mutation {
    version: Version,
    patch: json_patch::Patch,
    expires: Timestamp,
}

/// An [`ObjectManager`] that creates the desired object when there is none, replaces it (PUT)
/// when `merge_before_update` changes it, and deletes it when it is no longer desired.
///
/// - **Update:** the actual object is copied, `merge_before_update(current, desired)` copies
///   the fields the reconciler owns onto it, and the result is sent only if it differs from
///   the actual object; the resourceVersion read is the precondition (a concurrent write is a
///   409).
/// - **Admission mutations:** what the server changed in an update (defaults a webhook or the
///   server filled in) is remembered per object, for an hour, and applied to the desired
///   object before comparing, as long as the object's generation (or, for kinds without one,
///   its resourceVersion) has not moved. Without it, a default the reconciler does not set
///   reads as drift and is "fixed" on every reconcile.
/// - **Finalizer** (optional): added to the parent before any create or update, cleared once
///   the object is deleted or gone, for children that owner references cannot clean up
///   (another namespace, a cluster-scoped child).
/// - **Tracking** (optional): the parent tracks the object, so any change to it re-reconciles
///   the parent even without an owner reference.
///
/// Events: `Created`, `Updated`, `Deleted` and their `…Failed` warnings, about the parent.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::UpdatingObjectManager;
///
/// let manager = UpdatingObjectManager::<ConfigMap>::new(|current, desired| {
///     current.metadata.labels = desired.metadata.labels.clone();
///     current.data = desired.data.clone();
/// })
/// .track_desired(true);
/// # let _ = manager;
/// ```
pub struct UpdatingObjectManager<C: Reconciled> {
    dyntype: C::DynamicType,
    merge_before_update: MergeHook<C>,
    harmonize_immutable_fields: Option<HarmonizeHook<C>>,
    sanitize: Option<SanitizeHook<C>>,
    finalizer: Option<String>,
    track_desired: bool,
    mutations: Mutex<HashMap<String, Mutation>>,
}

impl<C: Reconciled> UpdatingObjectManager<C>
where
    C::DynamicType: Default,
{
    /// A manager that updates with `merge_before_update(current, desired)`: copy onto
    /// `current` (the actual object) the fields of `desired` this reconciler owns.
    pub fn new(merge_before_update: impl Fn(&mut C, &C) + Send + Sync + 'static) -> Self {
        Self::new_with(C::DynamicType::default(), merge_before_update)
    }
}

impl<C: Reconciled> UpdatingObjectManager<C> {
    /// [`UpdatingObjectManager::new`] for a kind known at runtime.
    pub fn new_with(
        dyntype: C::DynamicType,
        merge_before_update: impl Fn(&mut C, &C) + Send + Sync + 'static,
    ) -> Self {
        UpdatingObjectManager {
            dyntype,
            merge_before_update: Box::new(merge_before_update),
            harmonize_immutable_fields: None,
            sanitize: None,
            finalizer: None,
            track_desired: false,
            mutations: Mutex::default(),
        }
    }

    /// Before an update, `harmonize(actual, desired)` copies onto the desired object the fields
    /// that cannot change once set (a Service's `clusterIP`, say).
    #[must_use]
    pub fn harmonize_immutable_fields(
        mut self,
        harmonize: impl Fn(&C, &mut C) + Send + Sync + 'static,
    ) -> Self {
        self.harmonize_immutable_fields = Some(Box::new(harmonize));
        self
    }

    /// How objects appear in logs (to leave out secrets, for example); by default in full.
    #[must_use]
    pub fn sanitize(mut self, sanitize: impl Fn(&C) -> Value + Send + Sync + 'static) -> Self {
        self.sanitize = Some(Box::new(sanitize));
        self
    }

    /// Keeps `finalizer` on the parent while the object exists.
    #[must_use]
    pub fn finalizer(mut self, finalizer: impl Into<String>) -> Self {
        self.finalizer = Some(finalizer.into()).filter(|f| !f.is_empty());
        self
    }

    /// Has the parent track the object (and the controller watch its kind).
    #[must_use]
    pub fn track_desired(mut self, yes: bool) -> Self {
        self.track_desired = yes;
        self
    }

    fn for_log(&self, object: &C) -> Value {
        match &self.sanitize {
            Some(sanitize) => sanitize(object),
            None => serde_json::to_value(object).unwrap_or(Value::Null),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Mutation>> {
        // Each change is one insert or remove: the map is consistent whatever panicked.
        self.mutations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `desired` with the admission mutations remembered for `actual` applied.
    fn with_remembered_mutations(&self, ctx: &Context, actual: &C, desired: &C) -> C {
        let meta = actual.meta();
        let Some(uid) = meta.uid.as_deref() else {
            return desired.clone();
        };
        let patch = {
            let mut mutations = self.lock();
            mutations.retain(|_, m| m.expires > ctx.now());
            match mutations.get(uid) {
                Some(m) if m.version == Version::of(meta) => m.patch.clone(),
                _ => return desired.clone(),
            }
        };
        let mut patched = match serde_json::to_value(desired) {
            Ok(v) => v,
            Err(_) => return desired.clone(),
        };
        // A patch that no longer fits (the desired object changed shape) is dropped: the update
        // then simply goes ahead.
        if json_patch::patch(&mut patched, &patch).is_err() {
            tracing::debug!(uid, "remembered admission mutation does not apply; ignored");
            return desired.clone();
        }
        serde_json::from_value(patched).unwrap_or_else(|_| desired.clone())
    }

    /// Remembers what the server changed: `stored` against what was sent, rebuilt on `stored`
    /// from `desired`.
    fn remember_mutations(&self, ctx: &Context, stored: &C, desired: &C) {
        let Some(uid) = stored.meta().uid.clone() else {
            return;
        };
        let mut sent = stored.clone();
        (self.merge_before_update)(&mut sent, desired);
        let (Ok(sent), Ok(stored_json)) =
            (serde_json::to_value(&sent), serde_json::to_value(stored))
        else {
            return;
        };
        let patch = json_patch::diff(&sent, &stored_json);
        let mut mutations = self.lock();
        if patch.0.is_empty() {
            mutations.remove(&uid);
            return;
        }
        mutations.insert(
            uid,
            Mutation {
                version: Version::of(stored.meta()),
                patch,
                expires: ctx
                    .now()
                    .saturating_add(MUTATION_TTL)
                    .unwrap_or(Timestamp::MAX),
            },
        );
    }

    async fn create(
        &self,
        ctx: &Context,
        parent: &Parent<'_, impl Reconciled>,
        desired: &C,
    ) -> Result<C, Error> {
        tracing::info!(object = %describe(&self.dyntype, desired), "creating");
        tracing::debug!(body = %self.for_log(desired), "creating");
        let api = ObjectApi::<C>::of(ctx.config().client(), &self.dyntype, desired);
        let created = api.create(desired).await;
        WriteEvents::CREATE
            .publish(
                ctx,
                &parent.object_ref(),
                &describe(&self.dyntype, desired),
                &created,
            )
            .await;
        let created = created?;
        // Tracked after the create: a generated name is only known now.
        track_managed(ctx, self.track_desired, &self.dyntype, &created)?;
        Ok(created)
    }

    async fn update(
        &self,
        ctx: &Context,
        parent: &Parent<'_, impl Reconciled>,
        actual: C,
        mut desired: C,
    ) -> Result<C, Error> {
        if let Some(harmonize) = &self.harmonize_immutable_fields {
            harmonize(&actual, &mut desired);
        }
        let expected = self.with_remembered_mutations(ctx, &actual, &desired);
        let mut current = actual.clone();
        track_managed(ctx, self.track_desired, &self.dyntype, &current)?;
        (self.merge_before_update)(&mut current, &expected);
        let unchanged = serde_json::to_value(&current).ok() == serde_json::to_value(&actual).ok();
        if unchanged {
            tracing::debug!("in sync; no update");
            return Ok(actual);
        }
        let (from, to) = (self.for_log(&actual), self.for_log(&current));
        // The change in a line at info (as a JSON Patch of the logged views), both views at debug.
        let change = serde_json::to_string(&json_patch::diff(&from, &to)).unwrap_or_default();
        tracing::info!(object = %describe(&self.dyntype, &current), %change, "updating");
        tracing::debug!(%from, %to, "updating");
        let api = ObjectApi::<C>::of(ctx.config().client(), &self.dyntype, &current);
        let updated = api.replace(&current).await;
        WriteEvents::UPDATE
            .publish(
                ctx,
                &parent.object_ref(),
                &describe(&self.dyntype, &current),
                &updated,
            )
            .await;
        let updated = updated?;
        self.remember_mutations(ctx, &updated, &desired);
        Ok(updated)
    }
}

impl<R: Reconciled, C: Reconciled> ObjectManager<R, C> for UpdatingObjectManager<C> {
    async fn manage(
        &self,
        ctx: &Context,
        mut parent: Parent<'_, R>,
        actual: Option<C>,
        desired: Option<C>,
    ) -> Result<Option<C>, Error> {
        let finalizer = self.finalizer.as_deref();
        let Some(desired) = desired else {
            remove_unwanted(ctx, &mut parent, &self.dyntype, actual.as_ref(), finalizer).await?;
            return Ok(None);
        };
        parent.add_finalizer(ctx, finalizer).await?;
        match actual {
            None => self.create(ctx, &parent, &desired).await.map(Some),
            Some(actual) => self.update(ctx, &parent, actual, desired).await.map(Some),
        }
    }

    fn setup(&self, setup: &mut Setup) {
        if self.track_desired {
            setup.tracks_with(ApiResource::erase::<C>(&self.dyntype));
        }
    }
}
