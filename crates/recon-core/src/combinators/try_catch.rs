//! `TryCatch`: a sub-reconciler whose result a hook may handle, and one that always runs after.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{AsyncStep2, BoxSubReconciler, ReconcileFuture, Setup, SubReconciler};

type CatchHook<R> = Box<
    dyn for<'a> Fn(&'a Context, &'a mut R, Result<Outcome, Error>) -> ReconcileFuture<'a>
        + Send
        + Sync,
>;

/// Runs `try`, hands its result to the `catch` hook, then runs `finally`, whatever happened,
/// as reconciler.io's `TryCatch` does.
///
/// - `catch` (async) runs after every `try`, successful or not. It receives what `try`
///   returned (on failure, the outcome `try` gathered before failing is [`Error::outcome`])
///   and returns the result in its place: `Ok(outcome)` swallows an error, `Err(..)` rethrows
///   or replaces it (keep what `try` asked for with [`Error::with_outcome`]); passing the
///   result through unchanged is the same as having no `catch`.
/// - `finally` runs after `try` (and `catch`), even when they failed. Its outcome is merged
///   with theirs; its error, if any, is returned instead of theirs.
///
/// [`SubReconciler::setup`] forwards to `try` and `finally`.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Config, Context, Error, Outcome, Request, SubReconciler, SyncReconciler, TryCatch};
///
/// let risky = SyncReconciler::<ConfigMap>::new("Risky")
///     .sync(async |_, _| Err::<(), _>(Error::msg("not yet")));
/// let cleanup = SyncReconciler::<ConfigMap>::new("Cleanup").sync(async |_, cm| {
///     cm.metadata.labels.get_or_insert_default().insert("cleaned".into(), "yes".into());
///     Ok(())
/// });
/// let guarded = TryCatch::new("Guarded", risky)
///     // A failure is not one: try again later, keeping what `try` asked for.
///     .catch(async |_ctx, _cm, result| result.or_else(|err| Ok(err.outcome().merge(Outcome::requeue()))))
///     .finally(cleanup);
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// assert_eq!(guarded.reconcile(&ctx, &mut cm).await.unwrap(), Outcome::requeue());
/// assert!(cm.metadata.labels.is_some(), "finally ran");
/// # });
/// ```
pub struct TryCatch<R> {
    name: String,
    try_: BoxSubReconciler<R>,
    catch: Option<CatchHook<R>>,
    finally: Option<BoxSubReconciler<R>>,
}

impl<R: Send + Sync + 'static> TryCatch<R> {
    /// Runs `try_`, with no `catch` or `finally` yet.
    pub fn new(name: impl Into<String>, try_: impl SubReconciler<R> + 'static) -> Self {
        TryCatch {
            name: name.into(),
            try_: BoxSubReconciler::new(try_),
            catch: None,
            finally: None,
        }
    }

    /// The hook handling the result of `try`: an `async fn` or an async closure of the
    /// context, the resource and that result (see [`AsyncStep2`]).
    #[must_use]
    pub fn catch<F>(mut self, hook: F) -> Self
    where
        F: for<'a> AsyncStep2<'a, &'a mut R, Result<Outcome, Error>, Outcome> + 'static,
    {
        self.catch = Some(Box::new(move |ctx, resource, result| {
            Box::pin(hook(ctx, resource, result))
        }));
        self
    }

    /// The sub-reconciler run last, whatever happened before.
    #[must_use]
    pub fn finally(mut self, finally: impl SubReconciler<R> + 'static) -> Self {
        self.finally = Some(BoxSubReconciler::new(finally));
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for TryCatch<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.try_.setup(setup);
        if let Some(finally) = &self.finally {
            finally.setup(setup);
        }
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let tried = self.try_.reconcile(ctx, resource).await;
        let result = match &self.catch {
            Some(catch) => catch(ctx, resource, tried).await,
            None => tried,
        };
        let Some(finally) = &self.finally else {
            return result;
        };
        let gathered = match &result {
            Ok(outcome) => *outcome,
            Err(err) => err.outcome(),
        };
        match finally.reconcile(ctx, resource).await {
            Ok(last) => match result {
                Ok(outcome) => Ok(outcome.merge(last)),
                Err(err) => Err(err.with_outcome(last)),
            },
            Err(err) => {
                if let Err(overridden) = &result {
                    // Only one error goes up; keep a trace of the one replaced.
                    tracing::debug!(
                        reconciler = %self.name,
                        error = %overridden,
                        "error replaced by the error of finally"
                    );
                }
                Err(err.with_outcome(gathered))
            }
        }
    }
}
