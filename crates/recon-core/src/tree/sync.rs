//! `SyncReconciler`: custom logic as async closures, with separate handling of finalization.

use futures::future::BoxFuture;
use kube::Resource;

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

/// The minimal sub-reconciler: a `sync` hook for live resources and an optional `finalize` hook
/// for resources being deleted (which run only while a finalizer keeps them).
///
/// Hooks are async closures that borrow the context and the resource:
///
/// ```
/// use recon_core::SyncReconciler;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let count_keys = SyncReconciler::<ConfigMap>::new("CountKeys").sync(|_ctx, cm| {
///     Box::pin(async move {
///         let keys = cm.data.as_ref().map_or(0, |d| d.len());
///         cm.metadata.annotations.get_or_insert_default().insert("keys".into(), keys.to_string());
///         Ok(())
///     })
/// });
/// # let _ = count_keys;
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

    /// The hook for live resources.
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

    /// The hook for live resources, asking for a requeue through its [`Outcome`].
    #[must_use]
    pub fn sync_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync + 'static,
    {
        self.sync = Some(hook(f));
        self
    }

    /// The hook for resources being deleted.
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

    /// The hook for resources being deleted, asking for a requeue through its [`Outcome`].
    #[must_use]
    pub fn finalize_with_outcome<F>(mut self, f: F) -> Self
    where
        F: for<'a> Fn(&'a Context, &'a mut R) -> ReconcileFuture<'a> + Send + Sync + 'static,
    {
        self.finalize = Some(hook(f));
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
    ///     .sync(|ctx, _| Box::pin(async move {
    ///         let _settings: Option<ConfigMap> = ctx.track_and_get(Some("default"), "settings").await?;
    ///         Ok(())
    ///     }))
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
