//! `Advice`: hooks that run before, around and after a nested sub-reconciler.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{
    AsyncStep, AsyncStep2, BoxSubReconciler, IntoOutcome, ReconcileFuture, ResourceHook, Setup,
    SubReconciler, resource_hook,
};

type AroundHook<R> = Box<
    dyn for<'a> Fn(&'a Context, &'a mut R, &'a BoxSubReconciler<R>) -> ReconcileFuture<'a>
        + Send
        + Sync,
>;

type AfterHook<R> = Box<
    dyn for<'a> Fn(&'a Context, &'a mut R, Result<Outcome, Error>) -> ReconcileFuture<'a>
        + Send
        + Sync,
>;

/// Wraps a sub-reconciler with optional async hooks:
///
/// - `before` runs first; its error is returned at once (neither the nested reconciler nor
///   `after` run). Its outcome is merged with what follows.
/// - `around` receives the nested reconciler and decides how to run it (once, several times,
///   not at all). Without it the nested reconciler runs once.
/// - `after` receives the result so far (outcome or error) and returns the final one: it may
///   keep, rewrite or replace it.
///
/// [`SubReconciler::setup`] forwards to the nested reconciler, so its watches are declared
/// whatever hooks are set.
///
/// ```
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Advice, Config, Context, Outcome, Request, SubReconciler, SyncReconciler};
///
/// let inner = SyncReconciler::<ConfigMap>::new("Inner").sync(async |_, cm| {
///     cm.data.get_or_insert_default().insert("runs".into(), "x".into());
///     Ok(())
/// });
/// let advised = Advice::new("Twice", inner)
///     .around(async |ctx, cm, nested| {
///         let first = nested.reconcile(ctx, cm).await?;
///         cm.data.get_or_insert_default().insert("between".into(), "y".into());
///         Ok(first.merge(nested.reconcile(ctx, cm).await?))
///     })
///     // Check again in a minute, even on success.
///     .after(async |_ctx, _cm, result| result.map(|o| o.merge(Outcome::requeue_after(Duration::from_secs(60)))));
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// let outcome = advised.reconcile(&ctx, &mut cm).await.unwrap();
/// assert_eq!(outcome, Outcome::requeue_after(Duration::from_secs(60)));
/// assert_eq!(cm.data.unwrap().len(), 2);
/// # });
/// ```
pub struct Advice<R> {
    name: String,
    reconciler: BoxSubReconciler<R>,
    before: Option<ResourceHook<R>>,
    around: Option<AroundHook<R>>,
    after: Option<AfterHook<R>>,
}

impl<R: Send + Sync + 'static> Advice<R> {
    /// Advice around `reconciler`, with no hooks yet (it then behaves as `reconciler`).
    pub fn new(name: impl Into<String>, reconciler: impl SubReconciler<R> + 'static) -> Self {
        Advice {
            name: name.into(),
            reconciler: BoxSubReconciler::new(reconciler),
            before: None,
            around: None,
            after: None,
        }
    }

    /// The hook run before the nested reconciler, an `async fn` or an async closure of the
    /// context and the resource (see [`AsyncStep`]) returning `()` or an [`Outcome`] (see
    /// [`IntoOutcome`]); an error ends the reconcile at once.
    #[must_use]
    pub fn before<T, F>(mut self, hook: F) -> Self
    where
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep<'a, &'a mut R, T> + 'static,
    {
        self.before = Some(resource_hook(hook));
        self
    }

    /// The hook that runs the nested reconciler: an `async fn` or an async closure of the
    /// context, the resource and the nested reconciler (see [`AsyncStep2`]).
    #[must_use]
    pub fn around<F>(mut self, hook: F) -> Self
    where
        F: for<'a> AsyncStep2<'a, &'a mut R, &'a BoxSubReconciler<R>, Outcome> + 'static,
    {
        self.around = Some(Box::new(move |ctx, resource, nested| {
            Box::pin(hook(ctx, resource, nested))
        }));
        self
    }

    /// The hook that receives the result of `before` and `around` and returns the final one:
    /// an `async fn` or an async closure of the context, the resource and that result (see
    /// [`AsyncStep2`]).
    #[must_use]
    pub fn after<F>(mut self, hook: F) -> Self
    where
        F: for<'a> AsyncStep2<'a, &'a mut R, Result<Outcome, Error>, Outcome> + 'static,
    {
        self.after = Some(Box::new(move |ctx, resource, result| {
            Box::pin(hook(ctx, resource, result))
        }));
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for Advice<R> {
    fn name(&self) -> &str {
        &self.name
    }

    // Go's Advice returns early from its setup when it has no Setup hook of its own, so the
    // advised reconciler's watches are lost; here they are always declared.
    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let before = match &self.before {
            Some(before) => before.call(ctx, resource).await?,
            None => Outcome::done(),
        };
        let result = match &self.around {
            Some(around) => around(ctx, resource, &self.reconciler).await,
            None => self.reconciler.reconcile(ctx, resource).await,
        };
        let result = match result {
            Ok(outcome) => Ok(before.merge(outcome)),
            Err(err) => Err(err.with_outcome(before)),
        };
        match &self.after {
            Some(after) => after(ctx, resource, result).await,
            None => result,
        }
    }
}
