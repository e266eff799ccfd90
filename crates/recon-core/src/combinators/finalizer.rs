//! Finalizers on the reconciled resource: [`WithFinalizer`] keeps one around a sub-tree.
//! [`add_finalizer`] and [`clear_finalizer`] (which object managers use too) send a JSON merge
//! patch that carries the resourceVersion read (so a concurrent change is a 409, not a lost
//! finalizer), and copy the server's answer back onto the in-memory resource.

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::context::{Context, Event};
use crate::error::{Error, describe_failure};
use crate::object_api::ObjectApi;
use crate::outcome::Outcome;
use crate::tree::{AsyncStep, BoxSubReconciler, Reconciled, Setup, SubReconciler};

/// Adds `finalizer` to `resource` (no request if it is already there).
pub async fn add_finalizer<R: Reconciled>(
    ctx: &Context,
    resource: &mut R,
    dyntype: &R::DynamicType,
    finalizer: &str,
) -> Result<(), Error> {
    let mut finalizers = resource.meta().finalizers.clone().unwrap_or_default();
    if finalizer.is_empty() || finalizers.iter().any(|f| f == finalizer) {
        return Ok(());
    }
    finalizers.push(finalizer.to_owned());
    patch_finalizers(ctx, resource, dyntype, finalizers, finalizer).await
}

/// Removes `finalizer` from `resource` (no request if it is not there). Removing the last
/// finalizer of a resource being deleted deletes it.
pub async fn clear_finalizer<R: Reconciled>(
    ctx: &Context,
    resource: &mut R,
    dyntype: &R::DynamicType,
    finalizer: &str,
) -> Result<(), Error> {
    let finalizers = resource.meta().finalizers.clone().unwrap_or_default();
    if finalizer.is_empty() || !finalizers.iter().any(|f| f == finalizer) {
        return Ok(());
    }
    let kept = finalizers.into_iter().filter(|f| f != finalizer).collect();
    patch_finalizers(ctx, resource, dyntype, kept, finalizer).await
}

async fn patch_finalizers<R: Reconciled>(
    ctx: &Context,
    resource: &mut R,
    dyntype: &R::DynamicType,
    finalizers: Vec<String>,
    finalizer: &str,
) -> Result<(), Error> {
    let list = if finalizers.is_empty() {
        Value::Null
    } else {
        json!(finalizers)
    };
    let body = json!({"metadata": {"finalizers": list, "resourceVersion": resource.meta().resource_version}});
    let regarding = resource.object_ref(dyntype);
    let api = ObjectApi::of(ctx.original_config().client(), dyntype, resource);
    match api
        .patch(&PatchParams::default(), &Patch::Merge(body))
        .await
    {
        Ok(patched) => {
            let (meta, from) = (resource.meta_mut(), patched.meta());
            meta.finalizers = from.finalizers.clone();
            meta.resource_version = from.resource_version.clone();
            meta.generation = from.generation;
            let event = Event::normal(
                "FinalizerPatched",
                "PatchFinalizer",
                format!("Patched finalizer {finalizer:?}"),
            );
            ctx.publish(&regarding, event).await;
            Ok(())
        }
        Err(err) => {
            let note = format!(
                "Failed to patch finalizer {finalizer:?}: {}",
                describe_failure(&err)
            );
            ctx.publish(
                &regarding,
                Event::warning("FinalizerPatchFailed", "PatchFinalizer", note),
            )
            .await;
            Err(err.into())
        }
    }
}

type ReadyHook<R> = Box<
    dyn for<'a> Fn(&'a Context, &'a R) -> futures::future::BoxFuture<'a, Result<bool, Error>>
        + Send
        + Sync,
>;

/// Keeps a finalizer on the resource around a sub-tree: added before the sub-tree runs on a
/// live resource; cleared once the sub-tree succeeds on a resource being deleted (and
/// `ready_to_clear` agrees).
pub struct WithFinalizer<R: Reconciled> {
    name: String,
    finalizer: String,
    dyntype: R::DynamicType,
    reconciler: BoxSubReconciler<R>,
    ready_to_clear: Option<ReadyHook<R>>,
}

impl<R: Reconciled> WithFinalizer<R>
where
    R::DynamicType: Default,
{
    /// `reconciler` under the protection of `finalizer`.
    pub fn new(finalizer: impl Into<String>, reconciler: impl SubReconciler<R> + 'static) -> Self {
        Self::new_with(finalizer, R::DynamicType::default(), reconciler)
    }
}

impl<R: Reconciled> WithFinalizer<R> {
    /// Like [`WithFinalizer::new`], for a resource type known at runtime.
    pub fn new_with(
        finalizer: impl Into<String>,
        dyntype: R::DynamicType,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        WithFinalizer {
            name: "WithFinalizer".to_owned(),
            finalizer: finalizer.into(),
            dyntype,
            reconciler: BoxSubReconciler::new(reconciler),
            ready_to_clear: None,
        }
    }

    /// Only clear the finalizer once `ready` says so (reconciler.io's `ReadyToClearFinalizer`,
    /// asked only while the resource is being deleted): an `async fn` or an async closure of
    /// the context and the resource (see [`AsyncStep`]), so it may look outside the cluster;
    /// its error fails the reconcile and keeps the finalizer.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Sequence, WithFinalizer};
    ///
    /// let guarded = WithFinalizer::<ConfigMap>::new("example.com/cleanup", Sequence::new([]))
    ///     .ready_to_clear(async |_ctx, cm| Ok(cm.data.as_ref().is_none_or(|d| d.is_empty())));
    /// # let _ = guarded;
    /// ```
    #[must_use]
    pub fn ready_to_clear<F>(mut self, ready: F) -> Self
    where
        F: for<'a> AsyncStep<'a, &'a R, bool> + 'static,
    {
        self.ready_to_clear = Some(Box::new(move |ctx, resource| {
            Box::pin(ready(ctx, resource))
        }));
        self
    }
}

impl<R: Reconciled> SubReconciler<R> for WithFinalizer<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        if resource.meta().deletion_timestamp.is_none() {
            add_finalizer(ctx, resource, &self.dyntype, &self.finalizer).await?;
            return self.reconciler.reconcile(ctx, resource).await;
        }
        let outcome: Outcome = self.reconciler.reconcile(ctx, resource).await?;
        let ready = match &self.ready_to_clear {
            Some(ready) => ready(ctx, resource)
                .await
                .map_err(|e| e.with_outcome(outcome))?,
            None => true,
        };
        if ready {
            clear_finalizer(ctx, resource, &self.dyntype, &self.finalizer)
                .await
                .map_err(|e| e.with_outcome(outcome))?;
        }
        Ok(outcome)
    }
}
