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
use crate::tree::{Reconciled, Setup, Trigger};

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
        self.reconciler.setup(&mut setup);
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
        let client = self.config.client().clone();
        let mut controller = Controller::new_with(api, wc.clone(), self.dyntype.clone())
            .with_config(
                kube::runtime::controller::Config::default()
                    .concurrency(self.max_concurrent_reconciles),
            );
        for watch in self.setup().watches() {
            let resource = watch.resource.clone();
            let others: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            controller = match watch.trigger {
                Trigger::Owner => controller.owns_with(others, resource, wc.clone()),
                Trigger::Tracked => {
                    let tracker = self.config.tracker().clone();
                    let dyntype = self.dyntype.clone();
                    let kind = resource.clone();
                    controller.watches_with(others, resource, wc.clone(), move |object| {
                        let observers = tracker.observers(&object, &kind, Timestamp::now());
                        let dyntype = dyntype.clone();
                        observers.into_iter().map(move |request| {
                            let mut reference = ObjectRef::new_with(&request.name, dyntype.clone());
                            reference.namespace = request.namespace;
                            reference
                        })
                    })
                }
            };
        }
        controller
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
        if error.0.is_durable() {
            Action::await_change()
        } else {
            Action::requeue(self.error_delay)
        }
    }

    /// The controller action for an outcome.
    pub fn action(&self, outcome: Outcome) -> Action {
        match outcome.requeue_after {
            Some(delay) if !delay.is_zero() => Action::requeue(delay),
            _ if outcome.requeue => Action::requeue(self.requeue_delay),
            _ => Action::await_change(),
        }
    }
}
