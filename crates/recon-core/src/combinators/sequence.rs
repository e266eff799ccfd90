//! `Sequence`: sub-reconcilers in order, stopping at the first error.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, IntoSteps, Setup, SubReconciler};

/// Runs its steps in order and aggregates their outcomes. The first error stops the sequence;
/// it carries the outcome gathered so far (see [`Error::outcome`](crate::Error::outcome)).
///
/// Steps of different types go in a tuple, [`Sequence::of`]; a list built at run time, boxed,
/// in [`Sequence::new`].
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Context, Error, IfThen, IntoBoxed, Sequence, SyncReconciler};
///
/// async fn noop(_: &Context, _: &mut ConfigMap) -> Result<(), Error> {
///     Ok(())
/// }
///
/// let step = || SyncReconciler::<ConfigMap>::new("Noop").sync(noop);
/// let labelled = |_: &_, cm: &ConfigMap| cm.metadata.labels.is_some();
/// let steps = Sequence::of((step(), IfThen::new("IfLabelled", labelled, step()), step()));
///
/// let per_name = ["a", "b"].map(|name| SyncReconciler::<ConfigMap>::new(name).sync(noop));
/// let steps_per_name = Sequence::new(per_name.map(IntoBoxed::boxed));
/// # let _ = (steps, steps_per_name);
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

    /// A sequence of `steps`, a tuple of up to 16 sub-reconcilers of any types (see
    /// [`IntoSteps`]), each boxed here.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Context, Error, Outcome, Sequence, SubReconciler, SyncReconciler};
    ///
    /// async fn mark(_: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
    ///     cm.data.get_or_insert_default().insert("marked".into(), "true".into());
    ///     Ok(())
    /// }
    ///
    /// let steps = Sequence::of((
    ///     SyncReconciler::<ConfigMap>::new("Mark").sync(mark),
    ///     SyncReconciler::<ConfigMap>::new("Later")
    ///         .sync(async |_, _| Ok(Outcome::requeue())),
    /// ));
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # use recon_core::{Config, Request};
    /// # let ctx = Context::new(Config::new(recon_fake::ApiServer::new().client(), "demo"), Request::namespaced("default", "cm"));
    /// # let mut cm = ConfigMap::default();
    /// # assert_eq!(steps.reconcile(&ctx, &mut cm).await.unwrap(), Outcome::requeue());
    /// # assert_eq!(cm.data.unwrap()["marked"], "true");
    /// # });
    /// ```
    pub fn of(steps: impl IntoSteps<R>) -> Self {
        Sequence::new(steps.into_steps())
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
        self.steps.push(BoxSubReconciler::new(step));
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

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let mut outcome = Outcome::done();
        for step in &self.steps {
            match step.reconcile(ctx, resource).await {
                Ok(o) => outcome = outcome.merge(o),
                Err(e) => return Err(e.with_outcome(outcome)),
            }
        }
        Ok(outcome)
    }
}
