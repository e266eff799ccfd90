//! A `ResourceReconciler` as the runner runs it: a fresh controller each leadership term (a
//! `kube::runtime::Controller`, or the reconciler's watches fed to `kube::runtime::applier`
//! through a queue the runner counts), its reconciles timed and counted, its writes metered.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use kube::api::Api;
use kube::runtime::controller::{Action, Error as ControllerError};
use kube::runtime::utils::StreamBackoff;
use kube::runtime::watcher::{self, DefaultBackoff};
use kube::runtime::{Controller, applier};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::metered_client::{WriteClassifier, metered};
use super::metrics::{Metrics, QueueKey, ReconcileResult};
use crate::context::Request;
use crate::error::Error;
use crate::root::{ReconcileFailed, ResourceReconciler};
use crate::tree::{Reconciled, Trigger};

/// Builds a term's `Controller` for a reconciler.
pub(crate) type MakeController<R> =
    Box<dyn Fn(&ResourceReconciler<R>) -> Controller<R> + Send + Sync>;

/// A controller the runner can start and stop, whatever its resource type.
pub(crate) trait Managed: Send + Sync {
    /// One leadership term: watches and reconciles until `stop` fires, then lets the reconciles
    /// under way finish. Sends on `synced` once the controller's cache has listed its objects.
    fn term(
        &self,
        stop: oneshot::Receiver<()>,
        synced: oneshot::Sender<()>,
    ) -> BoxFuture<'static, ()>;
}

/// How each term's controller is made.
pub(crate) enum Build<R: Reconciled>
where
    R::DynamicType: Eq + Hash,
{
    /// By the user, as a `kube::runtime::Controller`, whose queue the runner cannot see.
    Controller(MakeController<R>),
    /// By the runner, from the watches [`ResourceReconciler::controller`] would make, fed to
    /// `kube::runtime::applier` through a queue the runner counts.
    Watches(Box<(Api<R>, watcher::Config)>),
}

impl<R: Reconciled> Build<R>
where
    R::DynamicType: Eq + Hash,
{
    /// Whether the runner sees the controller's queue.
    pub(crate) fn sees_the_queue(&self) -> bool {
        matches!(self, Build::Watches(_))
    }
}

pub(crate) struct ManagedController<R: Reconciled>
where
    R::DynamicType: Eq + Hash + Debug + Unpin,
{
    context: Arc<TermContext<R>>,
    build: Build<R>,
}

struct TermContext<R: Reconciled> {
    name: String,
    reconciler: ResourceReconciler<R>,
    metrics: Metrics,
}

impl<R: Reconciled> ManagedController<R>
where
    R::DynamicType: Eq + Hash + Debug + Unpin,
{
    /// Runs `reconciler`, writing through a client that counts its status and child writes.
    pub(crate) fn new(
        mut reconciler: ResourceReconciler<R>,
        build: Build<R>,
        metrics: Metrics,
    ) -> Self {
        let name = reconciler.name().to_owned();
        let owned = reconciler
            .setup()
            .watches()
            .iter()
            .filter(|w| w.trigger == Trigger::Owner)
            .map(|w| (w.resource.group.clone(), w.resource.plural.clone()))
            .collect();
        let classifier = WriteClassifier {
            controller: name.clone(),
            primary: (
                R::group(&reconciler.tree.dyntype).into_owned(),
                R::plural(&reconciler.tree.dyntype).into_owned(),
            ),
            owned,
        };
        let client = metered(
            reconciler.tree.config.client().clone(),
            Arc::new(classifier),
            metrics.clone(),
        );
        reconciler.tree.config.replace_client(client);
        ManagedController {
            context: Arc::new(TermContext {
                name,
                reconciler,
                metrics,
            }),
            build,
        }
    }
}

impl<R: Reconciled> Managed for ManagedController<R>
where
    R::DynamicType: Eq + Hash + Debug + Unpin,
{
    fn term(
        &self,
        stop: oneshot::Receiver<()>,
        synced: oneshot::Sender<()>,
    ) -> BoxFuture<'static, ()> {
        let context = Arc::clone(&self.context);
        let stopped = async move {
            let _ = stop.await;
        };
        let (store, results) = match &self.build {
            Build::Controller(make) => {
                let controller = make(&context.reconciler);
                let store = controller.store();
                let results = controller
                    .graceful_shutdown_on(stopped)
                    .run(reconcile, error_policy, Arc::clone(&context))
                    .boxed();
                (store, results)
            }
            Build::Watches(watches) => {
                let (api, wc) = watches.as_ref().clone();
                let (store, triggers) = context.reconciler.triggers(api, wc);
                let config = context.reconciler.controller_config();
                let counting = Arc::clone(&context);
                // As `Controller::run` feeds `applier`: the triggers backed off after a watch
                // error, each reconcile on a task of its own, and no new work once stopped.
                let queue = StreamBackoff::new(triggers, DefaultBackoff::default())
                    .inspect_ok(move |request| {
                        let key = key(&request.obj_ref.namespace, &request.obj_ref.name);
                        counting.metrics.queued(&counting.name, key);
                    })
                    .take_until(stopped);
                let spawn = |object, context| Spawned(tokio::spawn(reconcile(object, context)));
                let results = applier(
                    spawn,
                    error_policy,
                    Arc::clone(&context),
                    store.clone(),
                    queue,
                    config,
                )
                .boxed();
                (store, results)
            }
        };
        Box::pin(async move {
            let sync = async move {
                if store.wait_until_ready().await.is_ok() {
                    let _ = synced.send(());
                }
            };
            let run = results.for_each(move |result| {
                match result {
                    // Due, but gone from the cache: it leaves the queue without a reconcile.
                    Err(ControllerError::ObjectNotFound(gone)) => {
                        let key = key(&gone.namespace, &gone.name);
                        context.metrics.dequeued(&context.name, &key);
                    }
                    // Failed reconciles are logged by the error policy; this is the rest: a
                    // watch that failed.
                    Err(err) => {
                        tracing::debug!(controller = %context.name, error = %err, "controller");
                    }
                    Ok(_) => {}
                }
                futures::future::ready(())
            });
            futures::join!(sync, run);
        })
    }
}

/// A reconcile on a task of its own, cancelled when dropped (as `Controller::run` runs them).
struct Spawned(JoinHandle<Result<Action, ReconcileFailed>>);

impl Future for Spawned {
    type Output = Result<Action, ReconcileFailed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(|joined| {
            // Panics are caught inside; only a cancellation ends the task early.
            joined.unwrap_or_else(|err| Err(ReconcileFailed(Error::msg(err.to_string()))))
        })
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An object's key in the queue metrics.
fn key(namespace: &Option<String>, name: &str) -> QueueKey {
    (namespace.clone(), name.to_owned())
}

async fn reconcile<R: Reconciled>(
    object: Arc<R>,
    context: Arc<TermContext<R>>,
) -> Result<Action, ReconcileFailed> {
    let meta = object.meta();
    let queued = key(&meta.namespace, meta.name.as_deref().unwrap_or_default());
    context.metrics.dequeued(&context.name, &queued);
    let _active = context.metrics.reconcile_began(&context.name);
    let began = Instant::now();
    let request = Request {
        namespace: meta.namespace.clone(),
        name: meta.name.clone().unwrap_or_default(),
    };
    // A panic is caught and becomes a failure, retried as one (controller-runtime's
    // `RecoverPanic`, on by default): left alone it would end this controller's term while the
    // replica kept the Lease.
    let outcome = match AssertUnwindSafe(context.reconciler.reconcile(&request))
        .catch_unwind()
        .await
    {
        Ok(outcome) => outcome,
        Err(panic) => {
            context.metrics.reconcile_panicked(&context.name);
            let message = panic_message(panic.as_ref());
            tracing::error!(controller = %context.name, panic = %message, "a reconcile panicked");
            Err(Error::msg(format!("panic: {message} [recovered]")))
        }
    };
    let (result, failure) = match &outcome {
        Ok(o) if o.requeue_after.is_some_and(|d| !d.is_zero()) => {
            (ReconcileResult::RequeueAfter, None)
        }
        Ok(o) if o.requeue => (ReconcileResult::Requeue, None),
        Ok(_) => (ReconcileResult::Success, None),
        Err(err) => (
            ReconcileResult::Error,
            Some((failure_kind(err), err.is_durable())),
        ),
    };
    context
        .metrics
        .reconcile_ended(&context.name, result, began.elapsed(), failure);
    let next = match &outcome {
        Ok(outcome) => context.reconciler.requeue_delay(*outcome),
        Err(err) => context.reconciler.retry_delay(err),
    };
    if let Some(delay) = next {
        context.metrics.requeued(&context.name, queued, delay);
    }
    match outcome {
        Ok(outcome) => Ok(context.reconciler.action(outcome)),
        Err(err) => Err(ReconcileFailed(err)),
    }
}

fn error_policy<R: Reconciled>(
    object: Arc<R>,
    error: &ReconcileFailed,
    context: Arc<TermContext<R>>,
) -> Action {
    context.reconciler.error_action(&object, error)
}

/// What a panic said, as Go's `%v` of a recovered value prints it.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a value that is not a string".to_owned()
    }
}

/// The `kind` label of a failure: the API server's reason, `Transport` when no answer came,
/// `Other` for the reconciler's own errors.
fn failure_kind(err: &Error) -> String {
    if let Some(status) = err.as_api_error() {
        return if status.reason.is_empty() {
            format!("HTTP{}", status.code)
        } else {
            status.reason.clone()
        };
    }
    if err.find::<kube::Error>().is_some() {
        "Transport".to_owned()
    } else {
        "Other".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_by_the_api_reason() {
        let conflict = kube::Error::Api(
            kube::core::Status::failure("the object has been modified", "Conflict")
                .with_code(409)
                .boxed(),
        );
        assert_eq!(failure_kind(&Error::new(conflict)), "Conflict");
        assert_eq!(failure_kind(&Error::msg("no image")), "Other");
    }
}
