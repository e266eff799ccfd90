//! `While`: a sub-reconciler run again and again while a condition holds, up to a limit.

use super::for_each::Scoped;
use crate::context::{Context, Stasher};
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

type Condition<R> = Box<dyn Fn(&Context, &R) -> bool + Send + Sync>;

/// The stash key holding the index (from 0) of the iteration of the innermost running
/// [`While`] loop. Outside any loop it holds nothing (or what was stashed there before).
pub const WHILE_ITERATION: Stasher<usize> = Stasher::new("recon/while-iteration");

/// The iteration limit of a [`While`] loop unless set otherwise.
pub const DEFAULT_MAX_ITERATIONS: usize = 100;

/// A [`While`] loop's condition still held after its last allowed iteration. Reach it from an
/// [`Error`] with `err.cause().and_then(|c| c.downcast_ref::<MaxIterationsExceeded>())`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("exceeded max iterations: {iterations}")]
pub struct MaxIterationsExceeded {
    /// How many iterations ran (the limit).
    pub iterations: usize,
}

/// Runs a sub-reconciler while a condition on the resource holds.
///
/// Each iteration, as reconciler.io's `While` does: checks the limit, stashes the iteration
/// index ([`While::iteration`], [`WHILE_ITERATION`]), evaluates the condition (which sees the
/// index of the iteration about to run) and, while it holds, runs the nested reconciler. In
/// nested loops the innermost index is the one visible; the outer index is back once an inner
/// loop ends.
///
/// Outcomes are aggregated. The first error ends the loop and is returned with the outcome
/// gathered so far. The limit is checked before the condition: once `max_iterations`
/// iterations (default [`DEFAULT_MAX_ITERATIONS`]) have run, the loop fails with
/// [`MaxIterationsExceeded`], whether or not the condition would still hold.
/// `max_iterations(None)` or `Some(0)` removes the limit.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Config, Context, Request, SubReconciler, SyncReconciler, While};
///
/// // Fill the config map with keys k0, k1, k2.
/// let add_key = SyncReconciler::<ConfigMap>::new("AddKey").sync(async |ctx, cm| {
///     let i = While::<ConfigMap>::iteration(ctx).unwrap_or_default();
///     cm.data.get_or_insert_default().insert(format!("k{i}"), String::new());
///     Ok(())
/// });
/// let fill = While::new("Fill", |_ctx, cm: &ConfigMap| cm.data.as_ref().map_or(0, |d| d.len()) < 3, add_key)
///     .max_iterations(Some(10));
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// fill.reconcile(&ctx, &mut cm).await.unwrap();
/// let keys: Vec<String> = cm.data.unwrap().into_keys().collect();
/// assert_eq!(keys, ["k0", "k1", "k2"]);
/// assert_eq!(While::<ConfigMap>::iteration(&ctx), None, "outside the loop");
/// # });
/// ```
pub struct While<R> {
    name: String,
    condition: Condition<R>,
    reconciler: BoxSubReconciler<R>,
    max_iterations: Option<usize>,
}

impl<R: Send + Sync + 'static> While<R> {
    /// Runs `reconciler` while `condition` holds, at most [`DEFAULT_MAX_ITERATIONS`] times.
    pub fn new(
        name: impl Into<String>,
        condition: impl Fn(&Context, &R) -> bool + Send + Sync + 'static,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        While {
            name: name.into(),
            condition: Box::new(condition),
            reconciler: BoxSubReconciler::new(reconciler),
            max_iterations: Some(DEFAULT_MAX_ITERATIONS),
        }
    }

    /// The most iterations allowed; `None` or `Some(0)`: no limit.
    #[must_use]
    pub fn max_iterations(mut self, limit: Option<usize>) -> Self {
        self.max_iterations = limit.filter(|&n| n > 0);
        self
    }
}

impl<R> While<R> {
    /// The index of the current iteration of the innermost running loop, from 0; `None`
    /// outside any loop.
    pub fn iteration(ctx: &Context) -> Option<usize> {
        WHILE_ITERATION.retrieve_opt(ctx)
    }
}

impl<R: Send + Sync> SubReconciler<R> for While<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        // Restores an enclosing loop's index however this loop ends.
        let scope = Scoped::enter(ctx, WHILE_ITERATION);
        let mut outcome = Outcome::done();
        for iteration in 0.. {
            if self.max_iterations.is_some_and(|max| iteration >= max) {
                let exceeded = MaxIterationsExceeded {
                    iterations: iteration,
                };
                return Err(Error::new(exceeded).with_outcome(outcome));
            }
            scope.set(iteration);
            if !(self.condition)(ctx, resource) {
                break;
            }
            match self.reconciler.reconcile(ctx, resource).await {
                Ok(o) => outcome = outcome.merge(o),
                Err(e) => return Err(e.with_outcome(outcome)),
            }
        }
        Ok(outcome)
    }
}
