//! Tables for a plain kube-rs controller: the `reconcile` function `Controller::run` calls,
//! `async fn(Arc<K>, Arc<C>) -> Result<Action, E>`, tested unchanged.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::Timestamp;
use kube::Resource;
use kube::runtime::controller::Action;
use recon_core::fake::ApiServer;
use recon_core::{Error, Outcome, Request};
use serde::de::DeserializeOwned;

use crate::env::TestEnv;
use crate::tables::RootReconciler;

/// A kube-rs `reconcile` function and its context, run by a reconciler table
/// ([`ReconcilerTests`](crate::ReconcilerTests), [`ReconcilerTestSuite`](crate::ReconcilerTestSuite))
/// as `Controller::run` runs it: the case's `request` names the object, which is read from the
/// case's cluster and handed to `reconcile` with the context.
///
/// - An object the cluster does not hold is not reconciled (a controller only runs for objects
///   in its cache); the case's result is then "nothing to do".
/// - `Action::requeue(d)` is the result `requeueAfter: d`; `Action::await_change()` is nothing
///   to do. An `Err` is the case's error, matched by its `Display` text.
/// - Events published with kube's `Recorder` are written to the cluster as `Event` objects;
///   tables read them as `events` (type, reason, note), not as creates or patches.
/// - The case's `now` does not reach the function (it reads the real clock).
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::runtime::controller::Action;
/// use recon_core::{Outcome, Request};
/// use recon_testing::{ReconcilerTests, TestCase, kube_reconcile};
/// use serde_json::json;
///
/// struct Data;
///
/// async fn reconcile(cm: Arc<ConfigMap>, _ctx: Arc<Data>) -> Result<Action, kube::Error> {
///     let hourly = std::time::Duration::from_secs(3600);
///     Ok(if cm.data.is_some() { Action::await_change() } else { Action::requeue(hourly) })
/// }
///
/// ReconcilerTests::new()
///     .case("a config map without data is looked at again in an hour",
///         TestCase::reconcile(Request::namespaced("default", "c"))
///             .given(&json!({"apiVersion": "v1", "kind": "ConfigMap",
///                            "metadata": {"name": "c", "namespace": "default"}}))
///             .expect_result(Outcome::requeue_after(std::time::Duration::from_secs(3600))))
///     .run(|env| kube_reconcile(env, reconcile, Arc::new(Data)));
/// ```
pub fn kube_reconcile<K, C, F, Fut, E>(
    env: &TestEnv,
    reconcile: F,
    context: Arc<C>,
) -> KubeReconcile<K, C, F>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Action, E>> + Send,
    E: std::error::Error + Send + Sync + 'static,
{
    KubeReconcile {
        server: env.server().clone(),
        reconcile,
        context,
        kind: PhantomData,
    }
}

/// What [`kube_reconcile`] builds: a kube-rs `reconcile` function as a table's reconciler.
pub struct KubeReconcile<K, C, F> {
    server: ApiServer,
    reconcile: F,
    context: Arc<C>,
    kind: PhantomData<fn() -> K>,
}

impl<K, C, F> fmt::Debug for KubeReconcile<K, C, F>
where
    K: Resource<DynamicType = ()>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeReconcile")
            .field("kind", &K::kind(&()))
            .finish_non_exhaustive()
    }
}

impl<K, C, F, Fut, E> RootReconciler for KubeReconcile<K, C, F>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Action, E>> + Send,
    E: std::error::Error + Send + Sync + 'static,
{
    fn reconcile_request<'a>(
        &'a self,
        request: &'a Request,
        _now: Timestamp,
    ) -> BoxFuture<'a, Result<Outcome, Error>> {
        Box::pin(async move {
            let stored = self
                .server
                .stored_as::<K>(request.namespace.as_deref(), &request.name)
                .map_err(|e| {
                    Error::msg(format!(
                        "the stored {} {request} does not read as {}: {e}",
                        K::kind(&()),
                        std::any::type_name::<K>()
                    ))
                })?;
            let Some(object) = stored else {
                return Ok(Outcome::done());
            };
            let action = (self.reconcile)(Arc::new(object), Arc::clone(&self.context))
                .await
                .map_err(Error::new)?;
            outcome_of(&action)
        })
    }
}

/// The outcome an `Action` asks for. kube keeps its delay private; its `Debug` form
/// (`Action { requeue_after: Some(30s) }`) is the only way to read it.
fn outcome_of(action: &Action) -> Result<Outcome, Error> {
    let shown = format!("{action:?}");
    let unreadable = || Error::msg(format!("recon-testing cannot read the action {shown}"));
    let inner = shown
        .strip_prefix("Action { requeue_after: ")
        .and_then(|s| s.strip_suffix(" }"))
        .ok_or_else(unreadable)?;
    if inner == "None" {
        return Ok(Outcome::done());
    }
    let delay = inner
        .strip_prefix("Some(")
        .and_then(|s| s.strip_suffix(')'))
        .and_then(parse_debug_duration)
        .ok_or_else(unreadable)?;
    Ok(Outcome::requeue_after(delay))
}

/// A `Duration` from its `Debug` form: a decimal number and one of `s`, `ms`, `µs`, `ns`.
fn parse_debug_duration(s: &str) -> Option<Duration> {
    let (number, nanos_per_unit) = [
        ("ns", 1u128),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ]
    .into_iter()
    .find_map(|(unit, scale)| s.strip_suffix(unit).map(|n| (n, scale)))?;
    let (whole, fraction) = match number.split_once('.') {
        Some((_, "")) => return None,
        Some(parts) => parts,
        None => (number, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
        return None;
    }
    let whole: u128 = whole.parse().ok()?;
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let fraction_nanos = fraction_value * nanos_per_unit / 10u128.pow(fraction.len() as u32);
    let nanos = whole
        .checked_mul(nanos_per_unit)?
        .checked_add(fraction_nanos)?;
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_reads_back_as_the_outcome_it_asks_for() {
        for delay in [
            Duration::from_secs(30),
            Duration::from_millis(1500),
            Duration::from_millis(100),
            Duration::from_micros(7),
            Duration::from_nanos(1),
            Duration::new(3600, 1),
            Duration::new(u64::MAX / 2, 999_999_999),
        ] {
            let outcome = outcome_of(&Action::requeue(delay)).expect("readable");
            assert_eq!(outcome, Outcome::requeue_after(delay), "{delay:?}");
        }
        assert_eq!(
            outcome_of(&Action::await_change()).expect("readable"),
            Outcome::done()
        );
    }

    #[test]
    fn a_duration_that_is_not_debug_output_is_refused() {
        for s in ["", "s", "1.s", ".5s", "1x", "-1s", "1.0000000001s", "1e3s"] {
            assert_eq!(parse_debug_duration(s), None, "{s}");
        }
    }
}
