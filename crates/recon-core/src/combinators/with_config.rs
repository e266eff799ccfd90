//! `WithConfig`: a sub-tree that works with another config (another cluster, other
//! credentials).

use crate::context::{Config, Context};
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

type ConfigHook = Box<dyn Fn(&Context) -> Result<Config, Error> + Send + Sync>;

/// Runs a nested sub-reconciler with the config a hook returns, through
/// [`Context::with_config`]: the nested reconciler's [`Context::config`] is the new one, while
/// the stash, the request, the request time and [`Context::original_config`] (the config that
/// read the resource, which the root also writes status with) stay those of the reconcile.
///
/// The hook runs on every reconcile; its error ends the reconcile before the nested reconciler
/// runs. [`SubReconciler::setup`] forwards to the nested reconciler (the controller's watches
/// are on its own cluster).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
/// use recon_fake::ApiServer;
/// use recon_core::{Config, Context, Request, SubReconciler, SyncReconciler, WithConfig};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (home, away) = (ApiServer::new(), ApiServer::new());
/// let remote = Config::new(away.client(), "widget-controller");
/// // Copies the config map into the config in effect: the remote cluster.
/// let mirror = SyncReconciler::<ConfigMap>::new("Mirror").sync(async |ctx, cm| {
///     let api = Api::<ConfigMap>::namespaced(ctx.config().client().clone(), "default");
///     api.create(&PostParams::default(), cm).await?;
///     Ok(())
/// });
/// let step = WithConfig::new("Remote", move |_ctx| Ok(remote.clone()), mirror);
///
/// let ctx = Context::new(Config::new(home.client(), "widget-controller"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("cm".into());
/// step.reconcile(&ctx, &mut cm).await.unwrap();
/// let in_cluster = |server: &ApiServer| Api::<ConfigMap>::namespaced(server.client(), "default");
/// assert!(in_cluster(&away).get_opt("cm").await.unwrap().is_some());
/// assert!(in_cluster(&home).get_opt("cm").await.unwrap().is_none());
/// # });
/// ```
pub struct WithConfig<R> {
    name: String,
    config: ConfigHook,
    reconciler: BoxSubReconciler<R>,
}

impl<R: Send + Sync + 'static> WithConfig<R> {
    /// Runs `reconciler` with the config `config` returns.
    pub fn new(
        name: impl Into<String>,
        config: impl Fn(&Context) -> Result<Config, Error> + Send + Sync + 'static,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        WithConfig {
            name: name.into(),
            config: Box::new(config),
            reconciler: BoxSubReconciler::new(reconciler),
        }
    }
}

impl<R: Send + Sync> SubReconciler<R> for WithConfig<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let config = (self.config)(ctx)?;
        let ctx = ctx.with_config(config);
        self.reconciler.reconcile(&ctx, resource).await
    }
}
