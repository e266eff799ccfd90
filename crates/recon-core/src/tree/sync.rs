//! `SyncReconciler`: custom logic as async functions or closures, with separate handling of
//! finalization.

use kube::Resource;

use super::async_step::{
    AsyncStep, AsyncStep2, IntoOutcome, ResourceHook, resource_hook, stateful_hook,
};
use super::setup::Setup;
use super::sub_reconciler::SubReconciler;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;

type SetupHook = Box<dyn Fn(&mut Setup) + Send + Sync>;

/// The minimal sub-reconciler: a `sync` hook for live resources and an optional `finalize` hook
/// for resources being deleted (which run only while a finalizer keeps them).
///
/// A hook is an `async fn` of the context and the resource it borrows, or an async closure
/// capturing nothing ([`AsyncStep`] says exactly what fits), returning `Result<(), Error>` or,
/// to ask for a requeue, `Result<Outcome, Error>` ([`IntoOutcome`]). The library boxes it
/// once. State a hook needs, such as a name or a shared client, is given beside it to
/// [`sync_with`](Self::sync_with) or [`finalize_with`](Self::finalize_with) and lent to each
/// call as the argument after the context.
///
/// ```
/// use recon_core::{Context, Error, SyncReconciler};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// async fn count_keys(_ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
///     let keys = cm.data.as_ref().map_or(0, |d| d.len());
///     cm.metadata.annotations.get_or_insert_default().insert("keys".into(), keys.to_string());
///     Ok(())
/// }
///
/// let count_keys = SyncReconciler::<ConfigMap>::new("CountKeys").sync(count_keys);
///
/// let label = String::from("example.com/counted");
/// let mark = SyncReconciler::<ConfigMap>::new("Mark").sync_with(label, async |_ctx, label, cm| {
///     cm.metadata.labels.get_or_insert_default().insert(label.clone(), "true".into());
///     Ok(())
/// });
/// # let _ = (count_keys, mark);
/// ```
pub struct SyncReconciler<R> {
    name: String,
    sync: Option<ResourceHook<R>>,
    finalize: Option<ResourceHook<R>>,
    sync_during_finalization: bool,
    declare: Option<SetupHook>,
}

impl<R: Resource + Send + Sync + 'static> SyncReconciler<R> {
    /// A sync reconciler with no hooks yet.
    pub fn new(name: impl Into<String>) -> Self {
        SyncReconciler {
            name: name.into(),
            sync: None,
            finalize: None,
            sync_during_finalization: false,
            declare: None,
        }
    }

    /// The hook for live resources: an `async fn` or an async closure capturing nothing (see
    /// [`AsyncStep`]), returning `()` or an [`Outcome`] (see [`IntoOutcome`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Context, Error, Outcome, SubReconciler, SyncReconciler};
    ///
    /// async fn count_keys(_ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
    ///     let keys = cm.data.as_ref().map_or(0, |d| d.len());
    ///     cm.metadata.annotations.get_or_insert_default().insert("keys".into(), keys.to_string());
    ///     Ok(())
    /// }
    ///
    /// let count_keys = SyncReconciler::<ConfigMap>::new("CountKeys").sync(count_keys);
    /// let recheck_when_empty = SyncReconciler::<ConfigMap>::new("RecheckWhenEmpty")
    ///     .sync(async |_ctx, cm| {
    ///         Ok(match &cm.data {
    ///             Some(data) if !data.is_empty() => Outcome::done(),
    ///             _ => Outcome::requeue_after(Duration::from_secs(60)),
    ///         })
    ///     });
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use recon_core::{Config, Request};
    /// # let ctx = Context::new(Config::new(recon_fake::ApiServer::new().client(), "demo"), Request::namespaced("default", "cm"));
    /// # let mut cm = ConfigMap::default();
    /// # count_keys.reconcile(&ctx, &mut cm).await.unwrap();
    /// # assert_eq!(cm.metadata.annotations.unwrap()["keys"], "0");
    /// # let outcome = recheck_when_empty.reconcile(&ctx, &mut ConfigMap::default()).await.unwrap();
    /// # assert_eq!(outcome, Outcome::requeue_after(Duration::from_secs(60)));
    /// # });
    /// ```
    #[must_use]
    pub fn sync<T, F>(mut self, hook: F) -> Self
    where
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep<'a, &'a mut R, T> + 'static,
    {
        self.sync = Some(resource_hook(hook));
        self
    }

    /// The hook for live resources, with `state` lent to each call as the argument after the
    /// context: `async fn(ctx: &Context, state: &S, resource: &mut R)`, or an async closure
    /// capturing nothing, `async |ctx, state, resource| { .. }` (see [`AsyncStep2`]).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::SyncReconciler;
    ///
    /// fn labeler(label: &str) -> SyncReconciler<ConfigMap> {
    ///     SyncReconciler::<ConfigMap>::new("Label").sync_with(label.to_owned(), async |_ctx, label, cm| {
    ///         cm.metadata.labels.get_or_insert_default().insert(label.clone(), "true".into());
    ///         Ok(())
    ///     })
    /// }
    /// # let _ = labeler("example.com/seen");
    /// ```
    #[must_use]
    pub fn sync_with<S, T, F>(mut self, state: S, hook: F) -> Self
    where
        S: Send + Sync + 'static,
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep2<'a, &'a S, &'a mut R, T> + 'static,
    {
        self.sync = Some(stateful_hook(state, hook));
        self
    }

    /// The hook for resources being deleted: an `async fn` or an async closure capturing
    /// nothing (see [`AsyncStep`]), returning `()` or an [`Outcome`] (see [`IntoOutcome`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Context, Error, Outcome, SubReconciler, SyncReconciler};
    ///
    /// /// Looks again in 10 s while the resource is not marked drained.
    /// async fn await_drained(_ctx: &Context, cm: &mut ConfigMap) -> Result<Outcome, Error> {
    ///     let drained = cm.metadata.annotations.as_ref().is_some_and(|a| a.contains_key("drained"));
    ///     Ok(match drained {
    ///         true => Outcome::done(),
    ///         false => Outcome::requeue_after(Duration::from_secs(10)),
    ///     })
    /// }
    ///
    /// let drain = SyncReconciler::<ConfigMap>::new("Drain").finalize(await_drained);
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    /// # use recon_core::{Config, Request};
    /// # let ctx = Context::new(Config::new(recon_fake::ApiServer::new().client(), "demo"), Request::namespaced("default", "cm"));
    /// # let mut cm = ConfigMap::default();
    /// # cm.metadata.deletion_timestamp = Some(Time("2024-01-01T00:00:00Z".parse().unwrap()));
    /// # assert_eq!(drain.reconcile(&ctx, &mut cm).await.unwrap(), Outcome::requeue_after(Duration::from_secs(10)));
    /// # cm.metadata.annotations = Some([("drained".to_owned(), String::new())].into());
    /// # assert_eq!(drain.reconcile(&ctx, &mut cm).await.unwrap(), Outcome::done());
    /// # });
    /// ```
    #[must_use]
    pub fn finalize<T, F>(mut self, hook: F) -> Self
    where
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep<'a, &'a mut R, T> + 'static,
    {
        self.finalize = Some(resource_hook(hook));
        self
    }

    /// The hook for resources being deleted, with `state` lent to each call as the argument
    /// after the context (see [`sync_with`](Self::sync_with)).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::Resource;
    /// use recon_core::{Event, SyncReconciler};
    ///
    /// let announce = SyncReconciler::<ConfigMap>::new("AnnounceDeletion")
    ///     .finalize_with("Deleting", async |ctx, reason, cm| {
    ///         ctx.publish(&cm.object_ref(&()), Event::normal(*reason, "Finalize", "deleting")).await;
    ///         Ok(())
    ///     });
    /// # let _ = announce;
    /// ```
    #[must_use]
    pub fn finalize_with<S, T, F>(mut self, state: S, hook: F) -> Self
    where
        S: Send + Sync + 'static,
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep2<'a, &'a S, &'a mut R, T> + 'static,
    {
        self.finalize = Some(stateful_hook(state, hook));
        self
    }

    /// Declares the watches the hooks need: the kinds they track (a change to a tracked
    /// object re-reconciles the resource only if its kind is watched).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Setup, SubReconciler, SyncReconciler};
    ///
    /// let settings = SyncReconciler::<ConfigMap>::new("Settings")
    ///     .sync(async |ctx, _| {
    ///         let _settings: Option<ConfigMap> = ctx.track_and_get(Some("default"), "settings").await?;
    ///         Ok(())
    ///     })
    ///     .with_setup(|setup| setup.tracks::<ConfigMap>());
    /// let mut setup = Setup::default();
    /// settings.setup(&mut setup);
    /// assert_eq!(setup.watches().len(), 1);
    /// ```
    #[must_use]
    pub fn with_setup(mut self, declare: impl Fn(&mut Setup) + Send + Sync + 'static) -> Self {
        self.declare = Some(Box::new(declare));
        self
    }

    /// Also run `sync` (before `finalize`) while the resource is being deleted.
    #[must_use]
    pub fn sync_during_finalization(mut self, yes: bool) -> Self {
        self.sync_during_finalization = yes;
        self
    }
}

impl<R: Resource + Send + Sync + 'static> SubReconciler<R> for SyncReconciler<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        if let Some(declare) = &self.declare {
            declare(setup);
        }
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let terminating = resource.meta().deletion_timestamp.is_some();
        let mut outcome = Outcome::done();
        if (!terminating || self.sync_during_finalization)
            && let Some(sync) = &self.sync
        {
            outcome = sync.call(ctx, resource).await?;
        }
        if terminating && let Some(finalize) = &self.finalize {
            let finalized = finalize
                .call(ctx, resource)
                .await
                .map_err(|e| e.with_outcome(outcome))?;
            outcome = outcome.merge(finalized);
        }
        Ok(outcome)
    }
}
