//! `AggregateReconciler`: the root of a tree that keeps one named object as other state says
//! it should be (a ConfigMap summarising many resources, a webhook configuration, ...).

use std::time::Duration;

use futures::stream::{self, BoxStream};
use futures::{FutureExt, StreamExt};
use jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use super::Tree;
use super::around::{AfterHook, BeforeHook, after_hook, before_hook};
use crate::children::{BoxedManager, ObjectManager, Parent};
use crate::combinators::Sequence;
use crate::context::{Config, Context, Request, Tracker};
use crate::error::Error;
use crate::object_api::ObjectApi;
use crate::outcome::Outcome;
use crate::tree::{
    AsyncStep, AsyncStep0, BoxSubReconciler, IntoOutcome, Reconciled, Setup, SubReconciler, Trigger,
};

type DesiredHook<R> = Box<dyn Fn(&Context, R) -> Result<Option<R>, Error> + Send + Sync>;

/// The root of a tree for one object, named by its request: the object is synthesised from
/// other state rather than written by users.
///
/// One reconcile of its request (others are ignored): read the object (when missing, start
/// from an empty one with the request's namespace and name); if it is being deleted, stop;
/// run the sub-reconcilers on it (they may read other objects, tracking them); ask
/// `desired_resource` for the object it should be (`None`: it should not exist; by default
/// what the sub-reconcilers made); then the [`ObjectManager`] creates, updates or deletes it.
/// The manager's own tracks are dropped: the aggregate's watches already cover it. No status
/// is written.
///
/// [`AggregateReconciler::run`] keeps it so: it reconciles at start and again whenever the
/// object, an object the tree tracks, or an object the aggregate owns changes.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{AggregateReconciler, Config, Request, UpdatingObjectManager};
///
/// # async fn demo(client: kube::Client) {
/// let aggregate = AggregateReconciler::<ConfigMap>::new(
///     Config::new(client, "inventory"),
///     Request::namespaced("default", "inventory"),
///     UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
///         current.data = desired.data.clone()
///     }),
/// )
/// .desired_resource(|_ctx, mut inventory| {
///     inventory.data = Some([("owner".to_owned(), "inventory-controller".to_owned())].into());
///     Ok(Some(inventory))
/// });
/// aggregate.reconcile().await.unwrap();
/// # }
/// ```
pub struct AggregateReconciler<R: Reconciled> {
    tree: Tree<R>,
    request: Request,
    desired: DesiredHook<R>,
    manager: Box<dyn BoxedManager<R, R>>,
    error_delay: Duration,
    before: Option<BeforeHook>,
    after: Option<AfterHook>,
}

impl<R: Reconciled> AggregateReconciler<R>
where
    R::DynamicType: Default,
{
    /// An aggregate reconciler keeping the object `request` names through `manager`.
    pub fn new(
        config: Config,
        request: Request,
        manager: impl ObjectManager<R, R> + 'static,
    ) -> Self {
        Self::new_with(config, R::DynamicType::default(), request, manager)
    }
}

impl<R: Reconciled> AggregateReconciler<R> {
    /// [`AggregateReconciler::new`] for a kind known at runtime.
    pub fn new_with(
        config: Config,
        dyntype: R::DynamicType,
        request: Request,
        manager: impl ObjectManager<R, R> + 'static,
    ) -> Self {
        AggregateReconciler {
            tree: Tree::new("AggregateReconciler", config, dyntype, Sequence::new([])),
            request,
            desired: Box::new(|_, resource| Ok(Some(resource))),
            manager: Box::new(manager),
            error_delay: Duration::from_secs(5),
            before: None,
            after: None,
        }
    }

    /// The same reconciler under another name (for logs).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.tree.name = name.into();
        self
    }

    /// The sub-reconcilers that build the object (none by default).
    #[must_use]
    pub fn reconciler(mut self, reconciler: impl SubReconciler<R> + 'static) -> Self {
        self.tree.reconciler = BoxSubReconciler::new(reconciler);
        self
    }

    /// What the object should be, given what the sub-reconcilers made of it (`None`: it
    /// should not exist). By default, what they made.
    #[must_use]
    pub fn desired_resource(
        mut self,
        desired: impl Fn(&Context, R) -> Result<Option<R>, Error> + Send + Sync + 'static,
    ) -> Self {
        self.desired = Box::new(desired);
        self
    }

    /// Runs before the object is read (reconciler.io's `BeforeReconcile`), an `async fn` or an
    /// async closure of the context (see [`AsyncStep0`]) returning `()` or an [`Outcome`]: it may stash values
    /// for the tree; its outcome is merged with the reconcile's; its error ends the reconcile
    /// at once (a quiet one as a requeue).
    #[must_use]
    pub fn before_reconcile<T, F>(mut self, hook: F) -> Self
    where
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep0<'a, T> + 'static,
    {
        self.before = Some(before_hook(hook));
        self
    }

    /// Sees what the reconcile returns and returns it, or something else, in its place
    /// (reconciler.io's `AfterReconcile`), an `async fn` or an async closure of the context
    /// and that result (see [`AsyncStep`]); a quiet error it returns still becomes a requeue.
    #[must_use]
    pub fn after_reconcile<F>(mut self, hook: F) -> Self
    where
        F: for<'a> AsyncStep<'a, Result<Outcome, Error>, Outcome> + 'static,
    {
        self.after = Some(after_hook(hook));
        self
    }

    /// How long [`AggregateReconciler::run`] waits before retrying a failed reconcile
    /// (default 5s).
    #[must_use]
    pub fn error_delay(mut self, delay: Duration) -> Self {
        self.error_delay = delay;
        self
    }

    /// The reconciler's name.
    pub fn name(&self) -> &str {
        &self.tree.name
    }

    /// Its config.
    pub fn config(&self) -> &Config {
        &self.tree.config
    }

    /// The request it keeps.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The watches the tree and the manager declare.
    pub fn setup(&self) -> Setup {
        let mut setup = Setup::default();
        self.tree.reconciler.setup(&mut setup);
        self.manager.setup(&mut setup);
        setup
    }

    /// Reconciles its object now.
    pub async fn reconcile(&self) -> Result<Outcome, Error> {
        self.reconcile_in(&Context::new(
            self.tree.config.clone(),
            self.request.clone(),
        ))
        .await
    }

    /// Reconciles its object with the request time fixed at `now`.
    pub async fn reconcile_at(&self, now: Timestamp) -> Result<Outcome, Error> {
        self.reconcile_in(&Context::new(self.tree.config.clone(), self.request.clone()).at(now))
            .await
    }

    /// Reconciles within an existing context; a context for another request does nothing.
    pub async fn reconcile_in(&self, ctx: &Context) -> Result<Outcome, Error> {
        if ctx.request() != &self.request {
            return Ok(Outcome::done());
        }
        let before = match &self.before {
            Some(before) => match before(ctx).await {
                Ok(outcome) => outcome,
                Err(err) => return quiet_as_requeue(Err(err)),
            },
            None => Outcome::done(),
        };
        let result = match self.reconcile_object(ctx).await {
            Ok(outcome) => Ok(before.merge(outcome)),
            Err(err) => Err(err.with_outcome(before)),
        };
        let result = match &self.after {
            Some(after) => after(ctx, result).await,
            None => result,
        };
        quiet_as_requeue(result)
    }

    async fn reconcile_object(&self, ctx: &Context) -> Result<Outcome, Error> {
        let request = &self.request;
        let reader = ObjectApi::<R>::new(
            ctx.config().client(),
            &self.tree.dyntype,
            request.namespace.as_deref(),
            &request.name,
        );
        let actual = match reader.get().await {
            Ok(resource) => Some(resource),
            Err(kube::Error::Api(status)) if status.code == 404 => None,
            Err(err) => return Err(err.into()),
        };
        let mut resource = match &actual {
            Some(resource) => resource.clone(),
            None => self.empty()?,
        };
        if resource.meta().deletion_timestamp.is_some() {
            return Ok(Outcome::done());
        }
        let outcome = match self.tree.reconciler.reconcile(ctx, &mut resource).await {
            Ok(outcome) => outcome,
            Err(err) if err.is_halt() => err.outcome(),
            Err(err) => return Err(err),
        };
        let desired = (self.desired)(ctx, resource.clone()).map_err(|e| e.with_outcome(outcome))?;
        // The manager's tracks (of the aggregate itself) are dropped: its watch covers them.
        let untracked = ctx.with_config(
            ctx.config()
                .clone()
                .with_tracker(Tracker::new(Duration::ZERO)),
        );
        let parent = Parent {
            resource: &mut resource,
            dyntype: &self.tree.dyntype,
        };
        self.manager
            .manage_boxed(&untracked, parent, actual, desired)
            .await
            .map_err(|e| e.with_outcome(outcome))?;
        Ok(outcome)
    }

    /// The object as it is before it exists: the request's namespace and name, nothing else.
    fn empty(&self) -> Result<R, Error> {
        let mut metadata = json!({"name": self.request.name});
        if let Some(ns) = &self.request.namespace {
            metadata["namespace"] = json!(ns);
        }
        let empty = json!({
            "apiVersion": R::api_version(&self.tree.dyntype),
            "kind": R::kind(&self.tree.dyntype),
            "metadata": metadata,
        });
        serde_json::from_value(empty).map_err(|e| {
            Error::msg(format!(
                "{}: cannot start from an empty {} (its type needs more than a name): {e}",
                self.tree.name,
                R::kind(&self.tree.dyntype)
            ))
        })
    }

    /// Keeps the object as desired until the returned future is dropped: reconciles at once,
    /// then whenever the object, an object the tree tracks (for this request) or an object the
    /// aggregate owns changes, after a requeue's delay, and `error_delay` after a failure
    /// (durable failures wait for a change). Changes that arrive during a reconcile are
    /// folded into one more reconcile.
    pub async fn run(self, wc: watcher::Config) {
        let mut triggers = self.triggers(wc);
        loop {
            let wait = match self.reconcile().await {
                Ok(outcome) => match outcome.requeue_after {
                    Some(delay) if !delay.is_zero() => Some(delay),
                    _ if outcome.requeue => Some(Duration::from_secs(1)),
                    _ => None,
                },
                Err(err) => {
                    tracing::warn!(reconciler = %self.tree.name, error = %err, "reconcile failed");
                    (!err.is_durable()).then_some(self.error_delay)
                }
            };
            let next = triggers.next();
            let more = match wait {
                Some(delay) => {
                    tokio::select! {
                        more = next => more.is_some(),
                        () = tokio::time::sleep(delay) => true,
                    }
                }
                None => next.await.is_some(),
            };
            if !more {
                return;
            }
            // A burst of changes is one more reconcile.
            while let Some(Some(())) = triggers.next().now_or_never() {}
        }
    }

    /// A stream that yields whenever something relevant to the request changes.
    fn triggers(&self, wc: watcher::Config) -> BoxStream<'static, ()> {
        let client = self.tree.config.client().clone();
        let request = self.request.clone();
        // Every namespace, narrowed to the name: `Api::namespaced_with` needs a static scope.
        let own: Api<R> = Api::all_with(client.clone(), &self.tree.dyntype);
        let own_config = wc
            .clone()
            .fields(&format!("metadata.name={}", request.name));
        let namespace = request.namespace.clone();
        let mut streams: Vec<BoxStream<'static, ()>> = vec![
            watcher(own, own_config)
                .default_backoff()
                .touched_objects()
                .filter_map(move |o| {
                    let hit = o.is_ok_and(|o| o.meta().namespace == namespace);
                    async move { hit.then_some(()) }
                })
                .boxed(),
        ];
        let owner_kind = R::kind(&self.tree.dyntype).into_owned();
        for watch in self.setup().watches() {
            let kind = watch.resource.clone();
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind);
            let events = watcher(api, wc.clone()).default_backoff().touched_objects();
            let request = request.clone();
            let relevant: BoxStream<'static, ()> = match watch.trigger {
                Trigger::Tracked => {
                    let tracker = self.tree.config.tracker().clone();
                    events
                        .filter_map(move |o| {
                            let hit = o.ok().is_some_and(|o| {
                                tracker
                                    .observers(&o, &kind, Timestamp::now())
                                    .contains(&request)
                            });
                            async move { hit.then_some(()) }
                        })
                        .boxed()
                }
                Trigger::Owner => {
                    let owner_kind = owner_kind.clone();
                    events
                        .filter_map(move |o| {
                            let hit = o.ok().is_some_and(|o| {
                                o.metadata.namespace == request.namespace
                                    && o.metadata
                                        .owner_references
                                        .iter()
                                        .flatten()
                                        .any(|r| r.kind == owner_kind && r.name == request.name)
                            });
                            async move { hit.then_some(()) }
                        })
                        .boxed()
                }
            };
            streams.push(relevant);
        }
        stream::select_all(streams).boxed()
    }
}

/// What reconciler.io's `AggregateReconciler` returns for a quiet error: no failure, a
/// requeue (a halt, durable errors among them, has let the reconcile finish already).
fn quiet_as_requeue(result: Result<Outcome, Error>) -> Result<Outcome, Error> {
    match result {
        Err(err) if err.is_quiet() => Ok(Outcome::requeue()),
        other => other,
    }
}
