//! `Always`: every sub-reconciler runs, whatever the others return.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

/// Runs every step, in order, even after errors; the errors are joined (quiet only if all are)
/// and the outcomes aggregated.
pub struct Always<R> {
    name: String,
    steps: Vec<BoxSubReconciler<R>>,
}

impl<R> Always<R> {
    /// `steps`, each always run.
    pub fn new(steps: impl IntoIterator<Item = BoxSubReconciler<R>>) -> Self {
        Always {
            name: "Always".to_owned(),
            steps: steps.into_iter().collect(),
        }
    }

    /// The same under another name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for Always<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        for step in &self.steps {
            step.setup(setup);
        }
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let mut outcome = Outcome::done();
        let mut errors = Vec::new();
        for step in &self.steps {
            match step.reconcile(ctx, resource).await {
                Ok(o) => outcome = outcome.merge(o),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(outcome)
        } else {
            Err(Error::join(errors).with_outcome(outcome))
        }
    }
}
