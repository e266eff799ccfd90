//! A `ResourceReconciler` as the runner runs it: a fresh `kube::runtime::Controller` each
//! leadership term, its reconciles timed and counted, its writes metered.

use std::fmt::Debug;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::metered_client::{WriteClassifier, metered};
use super::metrics::{Metrics, ReconcileResult};
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

pub(crate) struct ManagedController<R: Reconciled>
where
    R::DynamicType: Eq + Hash + Debug + Unpin,
{
    context: Arc<TermContext<R>>,
    make: MakeController<R>,
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
        make: MakeController<R>,
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
                R::group(&reconciler.dyntype).into_owned(),
                R::plural(&reconciler.dyntype).into_owned(),
            ),
            owned,
        };
        let client = metered(
            reconciler.config.client().clone(),
            Arc::new(classifier),
            metrics.clone(),
        );
        reconciler.config.replace_client(client);
        ManagedController {
            context: Arc::new(TermContext {
                name,
                reconciler,
                metrics,
            }),
            make,
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
        let controller = (self.make)(&self.context.reconciler);
        let store = controller.store();
        let context = Arc::clone(&self.context);
        Box::pin(async move {
            let sync = async move {
                if store.wait_until_ready().await.is_ok() {
                    let _ = synced.send(());
                }
            };
            let name = context.name.clone();
            let run = controller
                .graceful_shutdown_on(async move {
                    let _ = stop.await;
                })
                .run(reconcile, error_policy, context)
                .for_each(move |result| {
                    if let Err(err) = result {
                        // Failed reconciles are logged by the error policy; this is the rest:
                        // a watch that failed, an object gone from the cache.
                        tracing::debug!(controller = %name, error = %err, "controller");
                    }
                    futures::future::ready(())
                });
            futures::join!(sync, run);
        })
    }
}

async fn reconcile<R: Reconciled>(
    object: Arc<R>,
    context: Arc<TermContext<R>>,
) -> Result<Action, ReconcileFailed> {
    let _active = context.metrics.reconcile_began(&context.name);
    let began = Instant::now();
    let meta = object.meta();
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
