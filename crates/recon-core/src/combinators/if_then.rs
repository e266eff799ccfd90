//! `IfThen`: one of two sub-reconcilers, chosen by a condition on the resource.

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

type Condition<R> = Box<dyn Fn(&Context, &R) -> bool + Send + Sync>;

/// Runs `then` when the condition holds, else `otherwise` (or nothing, successfully).
///
/// The condition is a plain function of the context and the resource, evaluated once per
/// reconcile. Both branches declare their watches in [`SubReconciler::setup`], since either
/// may run.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Config, Context, IfThen, Request, SubReconciler, SyncReconciler};
///
/// let label = |value: &'static str| {
///     SyncReconciler::<ConfigMap>::new(value).sync_with(value, async |_, &value, cm| {
///         cm.metadata.labels.get_or_insert_default().insert("state".into(), value.into());
///         Ok(())
///     })
/// };
/// let branch = IfThen::new("HasData", |_ctx, cm: &ConfigMap| cm.data.is_some(), label("filled"))
///     .otherwise(label("empty"));
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// branch.reconcile(&ctx, &mut cm).await.unwrap();
/// assert_eq!(cm.metadata.labels.unwrap()["state"], "empty");
/// # });
/// ```
pub struct IfThen<R> {
    name: String,
    condition: Condition<R>,
    then: BoxSubReconciler<R>,
    otherwise: Option<BoxSubReconciler<R>>,
}

impl<R: Send + Sync + 'static> IfThen<R> {
    /// Runs `then` when `condition` holds.
    pub fn new(
        name: impl Into<String>,
        condition: impl Fn(&Context, &R) -> bool + Send + Sync + 'static,
        then: impl SubReconciler<R> + 'static,
    ) -> Self {
        IfThen {
            name: name.into(),
            condition: Box::new(condition),
            then: BoxSubReconciler::new(then),
            otherwise: None,
        }
    }

    /// Runs `otherwise` when the condition does not hold.
    #[must_use]
    pub fn otherwise(mut self, otherwise: impl SubReconciler<R> + 'static) -> Self {
        self.otherwise = Some(BoxSubReconciler::new(otherwise));
        self
    }
}

impl<R: Send + Sync> SubReconciler<R> for IfThen<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.then.setup(setup);
        if let Some(otherwise) = &self.otherwise {
            otherwise.setup(setup);
        }
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        if (self.condition)(ctx, resource) {
            self.then.reconcile(ctx, resource).await
        } else if let Some(otherwise) = &self.otherwise {
            otherwise.reconcile(ctx, resource).await
        } else {
            Ok(Outcome::done())
        }
    }
}
