//! Running a [`ResourceReconciler`] under `kube::runtime::Controller`.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use jiff::Timestamp;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, watcher};

use super::resource::ResourceReconciler;
use crate::context::Request;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{Reconciled, Setup, SubReconciler, Trigger};

/// One of the streams of objects to reconcile that [`ResourceReconciler::triggers`] returns.
#[cfg(feature = "runner")]
pub(crate) type Triggers<R> = futures::stream::BoxStream<
    'static,
    Result<kube::runtime::controller::ReconcileRequest<R>, kube::runtime::watcher::Error>,
>;

/// The error a [`ResourceReconciler`] hands `kube::runtime::Controller` (which wants a
/// `std::error::Error`).
#[derive(Debug)]
pub struct ReconcileFailed(pub Error);

impl std::fmt::Display for ReconcileFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ReconcileFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .cause()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

impl<R: Reconciled> ResourceReconciler<R> {
    /// The watches the tree declares (see [`SubReconciler::setup`](crate::SubReconciler::setup)).
    pub fn setup(&self) -> Setup {
        let mut setup = Setup::default();
        self.tree.reconciler.setup(&mut setup);
        setup
    }

    /// A `kube::runtime::Controller` for the resources `api` reaches, also watching what the
    /// tree declares: objects it owns (a change reconciles their controller owner) and objects
    /// it tracks (a change reconciles whoever the config's [`Tracker`](crate::Tracker) says
    /// observes them). Those watches cover every namespace.
    ///
    /// ```no_run
    /// # async fn demo(reconciler: recon_core::ResourceReconciler<k8s_openapi::api::apps::v1::Deployment>, client: kube::Client) {
    /// use std::sync::Arc;
    /// use futures::StreamExt;
    /// use kube::runtime::watcher;
    /// use recon_core::ResourceReconciler;
    ///
    /// reconciler
    ///     .controller(kube::Api::all(client), watcher::Config::default())
    ///     .run(ResourceReconciler::reconcile_object, ResourceReconciler::error_policy, Arc::new(reconciler))
    ///     .for_each(|_| async {})
    ///     .await;
    /// # }
    /// ```
    pub fn controller(&self, api: Api<R>, wc: watcher::Config) -> Controller<R>
    where
        R::DynamicType: Eq + Hash + Debug + Unpin,
    {
        let client = self.tree.config.client().clone();
        let mut controller = Controller::new_with(api, wc.clone(), self.tree.dyntype.clone())
            .with_config(self.controller_config());
        for watch in self.setup().watches() {
            let resource = watch.resource.clone();
            let others: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            controller = match watch.trigger {
                Trigger::Owner => controller.owns_with(others, resource, wc.clone()),
                Trigger::Tracked => {
                    let observers = self.observers_of(resource.clone());
                    controller.watches_with(others, resource, wc.clone(), observers)
                }
            };
        }
        controller
    }

    /// The cache and the trigger stream [`controller`](Self::controller)'s controller is made
    /// of, watching the same objects: the runner feeds them to `kube::runtime::applier` itself,
    /// so that it sees each object queued.
    #[cfg(feature = "runner")]
    pub(crate) fn triggers(
        &self,
        api: Api<R>,
        wc: watcher::Config,
    ) -> (
        kube::runtime::reflector::Store<R>,
        futures::stream::SelectAll<Triggers<R>>,
    )
    where
        R::DynamicType: Eq + Hash + Debug + Unpin,
    {
        use futures::StreamExt;
        use kube::core::PartialObjectMeta;
        use kube::runtime::controller::{trigger_owners, trigger_self, trigger_with};
        use kube::runtime::reflector::{reflector, store::Writer};
        use kube::runtime::{WatchStreamExt, watcher};

        let client = self.tree.config.client().clone();
        let writer = Writer::<R>::new(self.tree.dyntype.clone());
        let store = writer.as_reader();
        let mut triggers = futures::stream::SelectAll::new();
        let primary = reflector(writer, watcher(api, wc.clone())).applied_objects();
        triggers.push(trigger_self(primary, self.tree.dyntype.clone()).boxed());
        for watch in self.setup().watches() {
            let resource = watch.resource.clone();
            triggers.push(match watch.trigger {
                Trigger::Owner => {
                    // Metadata only, as `Controller::owns_with` watches children.
                    let children: Api<PartialObjectMeta<DynamicObject>> =
                        Api::all_with(client.clone(), &resource);
                    let children = watcher(children, wc.clone()).touched_objects();
                    trigger_owners(children, self.tree.dyntype.clone(), resource).boxed()
                }
                Trigger::Tracked => {
                    let others: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
                    let others = watcher(others, wc.clone()).touched_objects();
                    trigger_with(others, self.observers_of(resource)).boxed()
                }
            });
        }
        (store, triggers)
    }

    /// kube's controller settings: the reconciles run at once.
    pub(crate) fn controller_config(&self) -> kube::runtime::controller::Config {
        kube::runtime::controller::Config::default().concurrency(self.max_concurrent_reconciles)
    }

    /// The resources to reconcile when an object of the tracked kind `kind` changes: those the
    /// config's tracker says observe it.
    fn observers_of(
        &self,
        kind: kube::api::ApiResource,
    ) -> impl Fn(DynamicObject) -> Vec<ObjectRef<R>> + Send + Sync + 'static {
        let tracker = self.tree.config.tracker().clone();
        let dyntype = self.tree.dyntype.clone();
        move |object| {
            let observers = tracker.observers(&object, &kind, Timestamp::now());
            observers
                .into_iter()
                .map(|request| {
                    let mut reference = ObjectRef::new_with(&request.name, dyntype.clone());
                    reference.namespace = request.namespace;
                    reference
                })
                .collect()
        }
    }

    /// The reconcile function for `Controller::run`: reconciles the object the controller
    /// hands over (read again, fresh) and turns the [`Outcome`] into an `Action`.
    ///
    /// ```no_run
    /// # async fn demo(reconciler: recon_core::ResourceReconciler<k8s_openapi::api::core::v1::ConfigMap>, client: kube::Client) {
    /// use std::sync::Arc;
    /// use futures::StreamExt;
    /// use kube::runtime::{Controller, watcher};
    /// use recon_core::ResourceReconciler;
    ///
    /// let api = kube::Api::<k8s_openapi::api::core::v1::ConfigMap>::all(client);
    /// Controller::new(api, watcher::Config::default())
    ///     .run(ResourceReconciler::reconcile_object, ResourceReconciler::error_policy, Arc::new(reconciler))
    ///     .for_each(|_| async {})
    ///     .await;
    /// # }
    /// ```
    pub async fn reconcile_object(
        object: Arc<R>,
        this: Arc<Self>,
    ) -> Result<Action, ReconcileFailed> {
        let meta = object.meta();
        let request = Request {
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
        };
        match this.reconcile(&request).await {
            Ok(outcome) => Ok(this.action(outcome)),
            Err(err) => Err(ReconcileFailed(err)),
        }
    }

    /// The error policy for `Controller::run`: retry after the reconciler's error delay, or wait
    /// for a change when the error is durable.
    pub fn error_policy(object: Arc<R>, error: &ReconcileFailed, this: Arc<Self>) -> Action {
        this.error_action(&object, error)
    }

    /// What [`error_policy`](Self::error_policy) decides, without the `Arc`s.
    pub(crate) fn error_action(&self, object: &R, error: &ReconcileFailed) -> Action {
        tracing::warn!(
            reconciler = %self.name(),
            name = object.meta().name.as_deref().unwrap_or_default(),
            error = %error,
            "reconcile failed"
        );
        self.retry_delay(&error.0)
            .map_or_else(Action::await_change, Action::requeue)
    }

    /// When a failed reconcile is tried again: after the error delay, or on the next change
    /// when the error is durable.
    pub(crate) fn retry_delay(&self, error: &Error) -> Option<std::time::Duration> {
        (!error.is_durable()).then_some(self.error_delay)
    }

    /// The controller action for an outcome.
    pub fn action(&self, outcome: Outcome) -> Action {
        self.requeue_delay(outcome)
            .map_or_else(Action::await_change, Action::requeue)
    }

    /// When the next reconcile after `outcome` comes, if it asks for one.
    pub(crate) fn requeue_delay(&self, outcome: Outcome) -> Option<std::time::Duration> {
        match outcome.requeue_after {
            Some(delay) if !delay.is_zero() => Some(delay),
            _ if outcome.requeue => Some(self.requeue_delay),
            _ => None,
        }
    }
}
