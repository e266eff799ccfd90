//! `SyncReconciler`: custom logic as async functions or closures, with separate handling of
//! finalization.

use futures::future::BoxFuture;
use kube::Resource;

use super::async_step::AsyncStep;
use super::setup::Setup;
use super::sub_reconciler::{ReconcileFuture, SubReconciler};
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;

type Hook<R> = Box<dyn for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync>;

type SetupHook = Box<dyn Fn(&mut Setup) + Send + Sync>;

fn hook<R, F>(f: F) -> Hook<R>
where
    F: for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync + 'static,
{
    Box::new(f)
}

fn unit_hook<R: 'static, F>(f: F) -> Hook<R>
where
    F: for<'a> Fn(&'a Context, &'a mut R) -> BoxFuture<'a, Result<(), Error>>
        + Send
        + Sync
        + 'static,
{
    hook(move |ctx, resource| {
        let done = f(ctx, resource);
        Box::pin(async move { done.await.map(|()| Outcome::done()) })
    })
}

// The unboxed forms: the library boxes the hook's future, once per call.
fn fn_hook<R: 'static, F>(f: F) -> Hook<R>
where
    F: for<'a> AsyncStep<'a, R, Outcome> + 'static,
{
    hook(move |ctx, resource| Box::pin(f(ctx, resource)))
}

fn unit_fn_hook<R: 'static, F>(f: F) -> Hook<R>
where
    F: for<'a> AsyncStep<'a, R, ()> + 'static,
{
    hook(move |ctx, resource| {
        let done = f(ctx, resource);
        Box::pin(async move { done.await.map(|()| Outcome::done()) })
    })
}

/// The minimal sub-reconciler: a `sync` hook for live resources and an optional `finalize` hook
/// for resources being deleted (which run only while a finalizer keeps them).
///
/// Hooks are async functions of the context and the resource they borrow, given in one of two
/// forms that run alike:
///
/// * an `async fn` item, or an async closure capturing nothing, to the `*_fn` methods
///   ([`sync_fn`](Self::sync_fn), [`sync_fn_with_outcome`](Self::sync_fn_with_outcome),
///   [`finalize_fn`](Self::finalize_fn),
///   [`finalize_fn_with_outcome`](Self::finalize_fn_with_outcome)); [`AsyncStep`] says exactly
///   what fits;
/// * a closure returning a boxed future, `|ctx, resource| Box::pin(async move { .. })`, to
///   [`sync`](Self::sync), [`sync_with_outcome`](Self::sync_with_outcome),
///   [`finalize`](Self::finalize) and [`finalize_with_outcome`](Self::finalize_with_outcome):
///   the form for a hook that captures state, such as a name or a shared client.
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
/// let count_keys = SyncReconciler::<ConfigMap>::new("CountKeys").sync_fn(count_keys);
///
/// let label = String::from("example.com/counted");
/// let mark = SyncReconciler::<ConfigMap>::new("Mark").sync(move |_ctx, cm| {
///     let label = label.clone();
///     Box::pin(async move {
///         cm.metadata.labels.get_or_insert_default().insert(label, "true".into());
///         Ok(())
///     })
/// });
/// # let _ = (count_keys, mark);
/// ```
pub struct SyncReconciler<R> {
    name: String,
    sync: Option<Hook<R>>,
    finalize: Option<Hook<R>>,
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

    /// The hook for live resources, as a closure returning a boxed future: the form for a hook
    /// that captures state. A hook capturing nothing reads better as an `async fn` given to
    /// [`sync_fn`](Self::sync_fn).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::SyncReconciler;
    ///
    /// fn labeler(label: &str) -> SyncReconciler<ConfigMap> {
    ///     let label = label.to_owned();
    ///     SyncReconciler::<ConfigMap>::new("Label").sync(move |_ctx, cm| {
    ///         let label = label.clone();
    ///         Box::pin(async move {
    ///             cm.metadata.labels.get_or_insert_default().insert(label, "true".into());
    ///             Ok(())
    ///         })
    ///     })
    /// }
    /// # let _ = labeler("example.com/seen");
    /// ```
    #[must_use]
    pub fn sync<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> BoxFuture<'a, Result<(), Error>>
            + Send
            + Sync
            + 'static,
    {
        self.sync = Some(unit_hook(f));
        self
    }

    /// The hook for live resources, as an `async fn` or an async closure capturing nothing
    /// (see [`AsyncStep`]). A hook capturing state takes the boxed form, [`sync`](Self::sync).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Context, Error, SubReconciler, SyncReconciler};
    ///
    /// async fn count_keys(_ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
    ///     let keys = cm.data.as_ref().map_or(0, |d| d.len());
    ///     cm.metadata.annotations.get_or_insert_default().insert("keys".into(), keys.to_string());
    ///     Ok(())
    /// }
    ///
    /// let count_keys = SyncReconciler::<ConfigMap>::new("CountKeys").sync_fn(count_keys);
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use recon_core::{Config, Request};
    /// # let ctx = Context::new(Config::new(recon_fake::ApiServer::new().client(), "demo"), Request::namespaced("default", "cm"));
    /// # let mut cm = ConfigMap::default();
    /// # count_keys.reconcile(&ctx, &mut cm).await.unwrap();
    /// # assert_eq!(cm.metadata.annotations.unwrap()["keys"], "0");
    /// # });
    /// ```
    #[must_use]
    pub fn sync_fn<F>(mut self, f: F) -> Self
    where
        F: for<'a> AsyncStep<'a, R, ()> + 'static,
    {
        self.sync = Some(unit_fn_hook(f));
        self
    }

    /// The hook for live resources, asking for a requeue through its [`Outcome`], as a closure
    /// returning a boxed future (for a hook capturing state; otherwise see
    /// [`sync_fn_with_outcome`](Self::sync_fn_with_outcome)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Outcome, SyncReconciler};
    ///
    /// fn recheck_every(delay: Duration) -> SyncReconciler<ConfigMap> {
    ///     SyncReconciler::<ConfigMap>::new("Recheck")
    ///         .sync_with_outcome(move |_ctx, _cm| Box::pin(async move { Ok(Outcome::requeue_after(delay)) }))
    /// }
    /// # let _ = recheck_every(Duration::from_secs(60));
    /// ```
    #[must_use]
    pub fn sync_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync + 'static,
    {
        self.sync = Some(hook(f));
        self
    }

    /// The hook for live resources, asking for a requeue through its [`Outcome`], as an
    /// `async fn` or an async closure capturing nothing (see [`AsyncStep`]). A hook capturing
    /// state takes the boxed form, [`sync_with_outcome`](Self::sync_with_outcome).
    ///
    /// ```
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Outcome, SubReconciler, SyncReconciler};
    ///
    /// let recheck_when_empty = SyncReconciler::<ConfigMap>::new("RecheckWhenEmpty")
    ///     .sync_fn_with_outcome(async |_ctx, cm| {
    ///         Ok(match &cm.data {
    ///             Some(data) if !data.is_empty() => Outcome::done(),
    ///             _ => Outcome::requeue_after(Duration::from_secs(60)),
    ///         })
    ///     });
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use recon_core::{Config, Context, Request};
    /// # let ctx = Context::new(Config::new(recon_fake::ApiServer::new().client(), "demo"), Request::namespaced("default", "cm"));
    /// # let outcome = recheck_when_empty.reconcile(&ctx, &mut ConfigMap::default()).await.unwrap();
    /// # assert_eq!(outcome, Outcome::requeue_after(Duration::from_secs(60)));
    /// # });
    /// ```
    #[must_use]
    pub fn sync_fn_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> AsyncStep<'a, R, Outcome> + 'static,
    {
        self.sync = Some(fn_hook(f));
        self
    }

    /// The hook for resources being deleted, as a closure returning a boxed future (for a hook
    /// capturing state; otherwise see [`finalize_fn`](Self::finalize_fn)).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Event, SyncReconciler};
    /// use kube::Resource;
    ///
    /// fn announce_deletion(reason: &'static str) -> SyncReconciler<ConfigMap> {
    ///     SyncReconciler::<ConfigMap>::new("AnnounceDeletion").finalize(move |ctx, cm| {
    ///         Box::pin(async move {
    ///             ctx.publish(&cm.object_ref(&()), Event::normal(reason, "Finalize", "deleting")).await;
    ///             Ok(())
    ///         })
    ///     })
    /// }
    /// # let _ = announce_deletion("Deleting");
    /// ```
    #[must_use]
    pub fn finalize<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> BoxFuture<'a, Result<(), Error>>
            + Send
            + Sync
            + 'static,
    {
        self.finalize = Some(unit_hook(f));
        self
    }

    /// The hook for resources being deleted, as an `async fn` or an async closure capturing
    /// nothing (see [`AsyncStep`]). A hook capturing state takes the boxed form,
    /// [`finalize`](Self::finalize).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::Resource;
    /// use recon_core::{Context, Error, Event, SyncReconciler};
    ///
    /// async fn announce_deletion(ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
    ///     ctx.publish(&cm.object_ref(&()), Event::normal("Deleting", "Finalize", "deleting")).await;
    ///     Ok(())
    /// }
    ///
    /// let announce = SyncReconciler::<ConfigMap>::new("AnnounceDeletion").finalize_fn(announce_deletion);
    /// # let _ = announce;
    /// ```
    #[must_use]
    pub fn finalize_fn<F>(mut self, f: F) -> Self
    where
        F: for<'a> AsyncStep<'a, R, ()> + 'static,
    {
        self.finalize = Some(unit_fn_hook(f));
        self
    }

    /// The hook for resources being deleted, asking for a requeue through its [`Outcome`], as
    /// a closure returning a boxed future (for a hook capturing state; otherwise see
    /// [`finalize_fn_with_outcome`](Self::finalize_fn_with_outcome)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Outcome, SyncReconciler};
    ///
    /// fn wait_before_release(delay: Duration) -> SyncReconciler<ConfigMap> {
    ///     SyncReconciler::<ConfigMap>::new("WaitBeforeRelease")
    ///         .finalize_with_outcome(move |_ctx, _cm| Box::pin(async move { Ok(Outcome::requeue_after(delay)) }))
    /// }
    /// # let _ = wait_before_release(Duration::from_secs(5));
    /// ```
    #[must_use]
    pub fn finalize_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync + 'static,
    {
        self.finalize = Some(hook(f));
        self
    }

    /// The hook for resources being deleted, asking for a requeue through its [`Outcome`], as
    /// an `async fn` or an async closure capturing nothing (see [`AsyncStep`]). A hook capturing
    /// state takes the boxed form, [`finalize_with_outcome`](Self::finalize_with_outcome).
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
    /// let drain = SyncReconciler::<ConfigMap>::new("Drain").finalize_fn_with_outcome(await_drained);
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
    pub fn finalize_fn_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> AsyncStep<'a, R, Outcome> + 'static,
    {
        self.finalize = Some(fn_hook(f));
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
    ///     .sync_fn(async |ctx, _| {
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

    fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        Box::pin(async move {
            let terminating = resource.meta().deletion_timestamp.is_some();
            let mut outcome = Outcome::done();
            if (!terminating || self.sync_during_finalization)
                && let Some(sync) = &self.sync
            {
                outcome = sync(ctx, resource).await?;
            }
            if terminating && let Some(finalize) = &self.finalize {
                let finalized = finalize(ctx, resource)
                    .await
                    .map_err(|e| e.with_outcome(outcome))?;
                outcome = outcome.merge(finalized);
            }
            Ok(outcome)
        })
    }
}
