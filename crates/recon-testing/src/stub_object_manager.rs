//! `StubObjectManager`: an [`ObjectManager`] with no options, for tables about what a child
//! reconciler orchestrates rather than how a manager writes (reconciler.io's testing
//! `StubObjectManager`).

use kube::api::{DeleteParams, PostParams};
use kube::core::Request;
use recon_core::{Context, Error, ObjectManager, Parent, Reconciled};
use serde_json::Value;

/// Creates a desired object that does not exist, updates (PUT) an existing one whose content
/// differs from the desired one, deletes one no longer desired (unless it is already being
/// deleted), and otherwise leaves it alone. "Content" is every top-level field but
/// `apiVersion`, `kind`, `metadata` and `status`, plus the labels and annotations: those are
/// taken from the desired object, the rest of the existing one is kept. No events, no
/// finalizer, no tracking; a failed request is returned as it is.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::ChildReconciler;
/// use recon_testing::StubObjectManager;
///
/// let child = ChildReconciler::<ConfigMap, ConfigMap>::new(
///     StubObjectManager::new(),
///     |_, _| Ok(None),
///     |_, _, child| child.map(|_| ()),
/// );
/// # let _ = child;
/// ```
pub struct StubObjectManager<C: Reconciled> {
    dyntype: C::DynamicType,
}

impl<C: Reconciled> StubObjectManager<C>
where
    C::DynamicType: Default,
{
    /// A stub for a type known at compile time.
    pub fn new() -> Self {
        Self::new_with(C::DynamicType::default())
    }
}

impl<C: Reconciled> Default for StubObjectManager<C>
where
    C::DynamicType: Default,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Reconciled> StubObjectManager<C> {
    /// A stub for a type known at runtime (`DynamicObject` and its `ApiResource`).
    pub fn new_with(dyntype: C::DynamicType) -> Self {
        StubObjectManager { dyntype }
    }

    /// Requests about `object`'s collection (kube's `Api` constructors are split by scope at
    /// compile time; the URL path serves any).
    fn requests(&self, object: &C) -> Request {
        Request::new(C::url_path(
            &self.dyntype,
            object.meta().namespace.as_deref(),
        ))
    }

    async fn create(&self, ctx: &Context, object: &C) -> Result<C, Error> {
        let body = serde_json::to_vec(object).map_err(Error::new)?;
        let request = self
            .requests(object)
            .create(&PostParams::default(), body)
            .map_err(Error::new)?;
        Ok(ctx.config().client().request(request).await?)
    }

    async fn replace(&self, ctx: &Context, object: &C) -> Result<C, Error> {
        let body = serde_json::to_vec(object).map_err(Error::new)?;
        let name = object.meta().name.clone().unwrap_or_default();
        let request = self
            .requests(object)
            .replace(&name, &PostParams::default(), body)
            .map_err(Error::new)?;
        Ok(ctx.config().client().request(request).await?)
    }

    async fn delete(&self, ctx: &Context, object: &C) -> Result<(), Error> {
        let name = object.meta().name.clone().unwrap_or_default();
        let request = self
            .requests(object)
            .delete(&name, &DeleteParams::default())
            .map_err(Error::new)?;
        ctx.config()
            .client()
            .request::<serde_json::Value>(request)
            .await?;
        Ok(())
    }
}

impl<R: Reconciled, C: Reconciled> ObjectManager<R, C> for StubObjectManager<C> {
    async fn manage(
        &self,
        ctx: &Context,
        _parent: Parent<'_, R>,
        actual: Option<C>,
        desired: Option<C>,
    ) -> Result<Option<C>, Error> {
        // An object never stored counts as none.
        let actual = actual.filter(|a| a.meta().creation_timestamp.is_some());
        match (actual, desired) {
            (None, None) => Ok(None),
            (Some(actual), None) => {
                if actual.meta().deletion_timestamp.is_none() {
                    self.delete(ctx, &actual).await?;
                }
                Ok(None)
            }
            (None, Some(desired)) => Ok(Some(self.create(ctx, &desired).await?)),
            (Some(actual), Some(desired)) => {
                let merged = merge_into(&actual, &desired)?;
                let unchanged = untyped(&merged)? == untyped(&actual)?;
                if unchanged {
                    return Ok(Some(actual));
                }
                Ok(Some(self.replace(ctx, &merged).await?))
            }
        }
    }
}

/// `object` without `apiVersion` and `kind`, which a `DynamicObject` read from a list lacks.
fn untyped<C: Reconciled>(object: &C) -> Result<Value, Error> {
    let mut value = serde_json::to_value(object).map_err(Error::new)?;
    if let Value::Object(fields) = &mut value {
        fields.remove("apiVersion");
        fields.remove("kind");
    }
    Ok(value)
}

/// `actual` with `desired`'s content: its top-level fields (but the type and object
/// metadata and the status), labels and annotations; `desired`'s type where `actual` has none.
fn merge_into<C: Reconciled>(actual: &C, desired: &C) -> Result<C, Error> {
    let mut target = serde_json::to_value(actual).map_err(Error::new)?;
    let source = serde_json::to_value(desired).map_err(Error::new)?;
    if let (Value::Object(target), Value::Object(source)) = (&mut target, &source) {
        for (key, value) in source {
            match key.as_str() {
                "metadata" | "status" => {}
                // A `DynamicObject` read from a list has no type; the update says what it is,
                // as reconciler.io's unstructured objects always do.
                "apiVersion" | "kind" => {
                    target.entry(key.clone()).or_insert_with(|| value.clone());
                }
                _ => {
                    target.insert(key.clone(), value.clone());
                }
            }
        }
    }
    let mut merged: C = serde_json::from_value(target).map_err(Error::new)?;
    merged.meta_mut().labels = desired.meta().labels.clone();
    merged.meta_mut().annotations = desired.meta().annotations.clone();
    Ok(merged)
}
