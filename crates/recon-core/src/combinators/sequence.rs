//! `Sequence`: sub-reconcilers in order, stopping at the first error.

use crate::context::Context;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, ReconcileFuture, Setup, SubReconciler};

/// Runs its steps in order and aggregates their outcomes. The first error stops the sequence;
/// it carries the outcome gathered so far (see [`Error::outcome`](crate::Error::outcome)).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{IntoBoxed, Sequence, SyncReconciler};
///
/// let noop = || SyncReconciler::<ConfigMap>::new("Noop").sync(|_, _| Box::pin(async { Ok(()) }));
/// let steps = Sequence::new([noop().boxed(), noop().boxed()]);
/// # let _ = steps;
/// ```
pub struct Sequence<R> {
    name: String,
    steps: Vec<BoxSubReconciler<R>>,
}

impl<R> Sequence<R> {
    /// A sequence of `steps`.
    pub fn new(steps: impl IntoIterator<Item = BoxSubReconciler<R>>) -> Self {
        Sequence {
            name: "Sequence".to_owned(),
            steps: steps.into_iter().collect(),
        }
    }

    /// The same sequence under another name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Appends a step.
    #[must_use]
    pub fn then(mut self, step: impl SubReconciler<R> + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for Sequence<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        for step in &self.steps {
            step.setup(setup);
        }
    }

    fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        Box::pin(async move {
            let mut outcome = Outcome::done();
            for step in &self.steps {
                match step.reconcile(ctx, resource).await {
                    Ok(o) => outcome = outcome.merge(o),
                    Err(e) => return Err(e.with_outcome(outcome)),
                }
            }
            Ok(outcome)
        })
    }
}
