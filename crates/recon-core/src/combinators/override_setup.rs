//! `OverrideSetup`: replaces the watches a sub-reconciler declares.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

type SetupHook = Box<dyn Fn(&mut Setup) + Send + Sync>;

/// Reconciles with a nested sub-reconciler (if any) but declares watches with its own setup
/// closure (if any) instead of the nested reconciler's: the nested
/// [`SubReconciler::setup`] is never called. Use it to drop watches a reused sub-tree declares,
/// or to declare watches for a tree that cannot say them itself.
///
/// Without a nested reconciler, reconciling does nothing and succeeds.
///
/// ```
/// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// use recon_core::{OverrideSetup, Setup, SubReconciler, SyncReconciler};
///
/// let inner = SyncReconciler::<ConfigMap>::new("Inner").sync(async |_, _| Ok(()));
/// let step = OverrideSetup::new("SecretsOnly")
///     .reconciler(inner)
///     .setup_with(|setup| setup.tracks::<Secret>());
/// let mut setup = Setup::default();
/// step.setup(&mut setup);
/// assert_eq!(setup.watches().len(), 1);
/// assert_eq!(setup.watches()[0].resource.kind, "Secret");
/// ```
pub struct OverrideSetup<R> {
    name: String,
    reconciler: Option<BoxSubReconciler<R>>,
    setup: Option<SetupHook>,
}

impl<R: Send + Sync + 'static> OverrideSetup<R> {
    /// No nested reconciler and no watches yet.
    pub fn new(name: impl Into<String>) -> Self {
        OverrideSetup {
            name: name.into(),
            reconciler: None,
            setup: None,
        }
    }

    /// The sub-reconciler that reconciles (its own setup is ignored).
    #[must_use]
    pub fn reconciler(mut self, reconciler: impl SubReconciler<R> + 'static) -> Self {
        self.reconciler = Some(BoxSubReconciler::new(reconciler));
        self
    }

    /// The closure declaring the watches, in place of the nested reconciler's.
    #[must_use]
    pub fn setup_with(mut self, setup: impl Fn(&mut Setup) + Send + Sync + 'static) -> Self {
        self.setup = Some(Box::new(setup));
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for OverrideSetup<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        if let Some(declare) = &self.setup {
            declare(setup);
        }
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        match &self.reconciler {
            Some(reconciler) => reconciler.reconcile(ctx, resource).await,
            None => Ok(Outcome::done()),
        }
    }
}
