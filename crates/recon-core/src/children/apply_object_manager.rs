//! `ApplyObjectManager`: an [`ObjectManager`] that makes an object match what a reconciler
//! wants with server-side apply, and sends nothing when what it applied last is still there.

use kube::api::{ApiResource, Patch, PatchParams};
use serde_json::{Map, Value};

use super::object_manager::{
    ObjectManager, Parent, WriteEvents, describe, remove_unwanted, track_managed,
};
use crate::context::Context;
use crate::error::Error;
use crate::json::{apply_entry, extract};
use crate::object_api::ObjectApi;
use crate::tree::{Reconciled, Setup};

/// The `metadata` fields an apply body carries: the object's identity and the metadata a
/// writer sets. Everything the server sets (uid, resourceVersion, creationTimestamp,
/// generation, managedFields, deletionTimestamp, ...) is left out, and so is `generateName`:
/// an apply names its object.
type SanitizeHook<C> = Box<dyn Fn(&C) -> Value + Send + Sync>;

const APPLIED_METADATA: [&str; 6] = [
    "name",
    "namespace",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
];

/// Manages an object with server-side apply (`PATCH`, `application/apply-patch+yaml`) under
/// one field manager.
///
/// [`manage`](ObjectManager::manage) with a desired object applies its *intent*: `apiVersion`
/// and `kind` (from the type), `metadata.name` (required: an apply cannot generate a name),
/// `namespace`, `labels`, `annotations`, `ownerReferences` and `finalizers` when set, and
/// every other top-level field except `status`. A field this manager applied before and no
/// longer sends is released by the server: removed if no other manager owns it, kept if one
/// does. Fields other managers set are left alone.
///
/// **No request when nothing changed.** Given the `actual` object, the manager reads its own
/// `Apply` entry in `metadata.managedFields`, takes from `actual` the values of the fields
/// that entry lists, and compares them (as JSON) with the intent it would send: equal, it
/// sends nothing and returns `actual`. The check is conservative: whenever it cannot tell, it
/// applies. So a reconcile costs one (no-op) apply when
/// - `actual` carries no managedFields (a cache that strips them, say);
/// - the server rewrites a value this manager sets (a quantity `1000m` stored as `1`, a
///   defaulted field inside a field owned whole): the values never compare equal;
/// - a map this manager applies empty (`data: {}`) holds keys of other managers, or a list's
///   items come back in another order than sent.
///
/// **Conflicts.** With [`force`](ApplyObjectManager::force) (the default, as Kubernetes
/// recommends for controllers) a field another manager changed is taken back. Without it, that
/// apply fails with a 409 `Conflict`, returned as the error, with an `ApplyFailed` event.
///
/// **Deleting.** A desired `None` deletes `actual` (unless it is already being deleted). With
/// a [`finalizer`](ApplyObjectManager::finalizer), the finalizer is added to the parent before
/// any write and cleared once the delete was accepted or the object is absent; unlike
/// reconciler.io's `UpdatingObjectManager`, which waits for a later reconcile to see the
/// object gone.
///
/// Events, about the parent: Normal `Applied` `Applied <Kind> "<name>"` and Warning
/// `ApplyFailed` `Failed to apply <Kind> "<name>": <server message>`, only when an apply was
/// sent; `Deleted` / `DeleteFailed` for deletes.
///
/// The desired object must carry its namespace for a namespaced kind.
///
/// # Example
///
/// A ConfigMap mirrored into a `<name>-copy` ConfigMap:
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{ApplyObjectManager, ObjectManager, Parent, SyncReconciler};
///
/// fn mirror() -> SyncReconciler<ConfigMap> {
///     let manager = ApplyObjectManager::<ConfigMap>::new("mirror").finalizer("example.com/mirror");
///     SyncReconciler::<ConfigMap>::new("Mirror").sync_with(manager, async |ctx, manager, cm| {
///         let name = format!("{}-copy", cm.metadata.name.as_deref().unwrap_or_default());
///         let api = kube::Api::<ConfigMap>::namespaced(ctx.config().client().clone(), "default");
///         let actual = api.get_opt(&name).await?;
///         let mut desired = ConfigMap::default();
///         desired.metadata.name = Some(name);
///         desired.metadata.namespace = Some("default".into());
///         desired.data = cm.data.clone();
///         manager.manage(ctx, Parent { resource: cm, dyntype: &() }, actual, Some(desired)).await?;
///         Ok(())
///     })
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # use recon_core::{Config, EventLog, Request, ResourceReconciler};
/// # let server = recon_fake::ApiServer::new();
/// # let api = kube::Api::<ConfigMap>::namespaced(server.client(), "default");
/// # let mut cm = ConfigMap::default();
/// # cm.metadata.name = Some("settings".into());
/// # cm.data = Some([("k".to_string(), "v".to_string())].into());
/// # api.create(&Default::default(), &cm).await.unwrap();
/// # let config = Config::new(server.client(), "demo").with_recorder(EventLog::default());
/// # let reconciler = ResourceReconciler::new(config, mirror());
/// # let request = Request::namespaced("default", "settings");
/// # reconciler.reconcile(&request).await.unwrap();
/// # assert_eq!(api.get("settings-copy").await.unwrap().data, cm.data);
/// # server.clear_requests();
/// # reconciler.reconcile(&request).await.unwrap();
/// # let writes = server.requests().iter().filter(|r| r.method != http::Method::GET).count();
/// # assert_eq!(writes, 0, "in sync: nothing sent");
/// # });
/// ```
pub struct ApplyObjectManager<C: Reconciled> {
    field_manager: String,
    dyntype: C::DynamicType,
    force: bool,
    finalizer: Option<String>,
    track_desired: bool,
    sanitize: Option<SanitizeHook<C>>,
}

impl<C: Reconciled> ApplyObjectManager<C>
where
    C::DynamicType: Default,
{
    /// A manager applying as `field_manager`, with `force`.
    pub fn new(field_manager: impl Into<String>) -> Self {
        Self::new_with(field_manager, C::DynamicType::default())
    }
}

impl<C: Reconciled> ApplyObjectManager<C> {
    /// [`ApplyObjectManager::new`] for a kind known at runtime (`DynamicObject` and its
    /// `ApiResource`).
    pub fn new_with(field_manager: impl Into<String>, dyntype: C::DynamicType) -> Self {
        ApplyObjectManager {
            field_manager: field_manager.into(),
            dyntype,
            force: true,
            finalizer: None,
            track_desired: false,
            sanitize: None,
        }
    }

    /// Whether an apply takes over fields other managers own (default `true`, as Kubernetes
    /// recommends for controllers: the controller's intent wins). Without it, changing a field
    /// another manager owns is a 409 conflict.
    #[must_use]
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Keeps `finalizer` on the parent while the object may exist: added before any write,
    /// cleared once the object is deleted or absent.
    #[must_use]
    pub fn finalizer(mut self, finalizer: impl Into<String>) -> Self {
        self.finalizer = Some(finalizer.into()).filter(|f| !f.is_empty());
        self
    }

    /// Tracks the managed object once applied (or found in sync), so a change to it
    /// re-reconciles the parent; [`ObjectManager::setup`] then declares a watch of its kind.
    #[must_use]
    pub fn track_desired(mut self, track: bool) -> Self {
        self.track_desired = track;
        self
    }

    /// What debug logs show of an object applied (by default, only its kind and name): leave
    /// out what must not be logged, such as a Secret's data.
    #[must_use]
    pub fn sanitize(mut self, sanitize: impl Fn(&C) -> Value + Send + Sync + 'static) -> Self {
        self.sanitize = Some(Box::new(sanitize));
        self
    }

    /// The field manager.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// The apply body for `desired`.
    fn intent(&self, desired: &C) -> Result<Value, Error> {
        let kind = C::kind(&self.dyntype);
        let mut object = match serde_json::to_value(desired) {
            Ok(Value::Object(object)) => object,
            Ok(other) => {
                return Err(Error::msg(format!(
                    "cannot apply {kind}: it serialises to {other}, not to an object"
                )));
            }
            Err(err) => return Err(Error::msg(format!("cannot serialise {kind}: {err}"))),
        };
        object.remove("status");
        let metadata = match object.remove("metadata") {
            Some(Value::Object(metadata)) => metadata,
            _ => Map::new(),
        };
        let named = metadata
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !named {
            return Err(Error::msg(format!(
                "cannot apply {kind}: the desired object has no metadata.name (server-side apply \
                 cannot generate one; set the name instead of generateName)"
            )));
        }
        let metadata: Map<String, Value> = APPLIED_METADATA
            .iter()
            .filter_map(|key| {
                metadata
                    .get(*key)
                    .filter(|v| !v.is_null())
                    .map(|v| ((*key).to_owned(), v.clone()))
            })
            .collect();
        object.insert(
            "apiVersion".to_owned(),
            Value::String(C::api_version(&self.dyntype).into_owned()),
        );
        object.insert("kind".to_owned(), Value::String(kind.into_owned()));
        object.insert("metadata".to_owned(), Value::Object(metadata));
        Ok(Value::Object(object))
    }

    /// Whether the fields this manager owns in `actual` already hold `intent`.
    fn in_sync(&self, actual: &C, intent: &Value) -> bool {
        let api_version = C::api_version(&self.dyntype);
        let owned = match apply_entry(
            actual.meta().managed_fields.as_deref(),
            &self.field_manager,
            "",
        ) {
            None => Value::Object(Map::new()),
            Some(entry) => {
                let fits = entry.api_version.as_deref() == Some(&*api_version)
                    && entry.fields_type.as_deref() == Some("FieldsV1");
                if !fits {
                    return false;
                }
                let Some(fields) = &entry.fields_v1 else {
                    return false;
                };
                let Ok(actual) = serde_json::to_value(actual) else {
                    return false;
                };
                match extract(&fields.0, &actual) {
                    Some(owned) => owned,
                    None => return false,
                }
            }
        };
        owned == comparable(intent)
    }

    fn log_applied(&self, what: &str, desired: &C) {
        match &self.sanitize {
            Some(sanitize) => tracing::debug!(
                field_manager = %self.field_manager,
                object = %what,
                desired = %sanitize(desired),
                "applied"
            ),
            None => tracing::debug!(field_manager = %self.field_manager, object = %what, "applied"),
        }
    }
}

impl<R: Reconciled, C: Reconciled> ObjectManager<R, C> for ApplyObjectManager<C> {
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
        // A desired object that cannot be applied fails before anything is written.
        let intent = self.intent(&desired)?;
        parent.add_finalizer(ctx, finalizer).await?;
        let what = describe(&self.dyntype, &desired);
        if let Some(actual) = actual
            && self.in_sync(&actual, &intent)
        {
            tracing::debug!(field_manager = %self.field_manager, object = %what, "in sync; nothing to apply");
            track_managed(ctx, self.track_desired, &self.dyntype, &actual)?;
            return Ok(Some(actual));
        }
        let api = ObjectApi::<C>::of(ctx.config().client(), &self.dyntype, &desired);
        let mut params = PatchParams::apply(&self.field_manager);
        params.force = self.force;
        let result = api.patch(&params, &Patch::Apply(&intent)).await;
        WriteEvents::APPLY
            .publish(ctx, &parent.object_ref(), &what, &result)
            .await;
        let applied = result?;
        self.log_applied(&what, &desired);
        track_managed(ctx, self.track_desired, &self.dyntype, &applied)?;
        Ok(Some(applied))
    }

    fn setup(&self, setup: &mut Setup) {
        if self.track_desired {
            setup.tracks_with(ApiResource::erase::<C>(&self.dyntype));
        }
    }
}

/// `intent` without what managedFields never list: `apiVersion`, `kind`, and the name and
/// namespace in `metadata` (dropped when nothing else is left in it).
fn comparable(intent: &Value) -> Value {
    let mut out = intent.clone();
    if let Value::Object(object) = &mut out {
        object.remove("apiVersion");
        object.remove("kind");
        if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
            metadata.remove("name");
            metadata.remove("namespace");
            if metadata.is_empty() {
                object.remove("metadata");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_intent_keeps_what_a_writer_sets_and_names_its_object() {
        let desired: ConfigMap = serde_json::from_value(json!({
            "metadata": {
                "name": "c", "namespace": "ns", "labels": {"a": "1"},
                "uid": "u", "resourceVersion": "7", "generation": 3,
                "creationTimestamp": "2024-01-01T00:00:00Z",
                "managedFields": [{"manager": "m", "operation": "Apply"}],
                "generateName": "c-",
            },
            "data": {"k": "v"},
            "immutable": true,
        }))
        .unwrap();
        let manager = ApplyObjectManager::<ConfigMap>::new("m");
        assert_eq!(
            manager.intent(&desired).unwrap(),
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "ns", "labels": {"a": "1"}},
                "data": {"k": "v"}, "immutable": true,
            })
        );
        let unnamed: ConfigMap =
            serde_json::from_value(json!({"metadata": {"generateName": "c-"}})).unwrap();
        let err = manager.intent(&unnamed).unwrap_err().to_string();
        assert!(err.contains("no metadata.name"), "{err}");
    }

    #[test]
    fn identity_is_not_compared() {
        let intent = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "c", "namespace": "ns"}, "data": {"k": "v"}});
        assert_eq!(comparable(&intent), json!({"data": {"k": "v"}}));
    }
}
