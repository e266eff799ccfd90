//! Tables for a plain kube-rs controller: the `reconcile` function and error policy
//! `Controller::run` calls, `async fn(Arc<K>, Arc<C>) -> Result<Action, E>` and
//! `fn(Arc<K>, &E, Arc<C>) -> Action`, tested unchanged.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use jiff::Timestamp;
use kube::Resource;
use kube::runtime::controller::Action;
use recon_core::{Error, Outcome, Request};
use recon_fake::ApiServer;
use serde::de::DeserializeOwned;

use crate::env::TestEnv;
use crate::error_policy::{ErrorPolicy, NoErrorPolicy};
use crate::tables::RootReconciler;

/// A kube-rs controller's `reconcile` function, error policy and context, run by a reconciler
/// table ([`ReconcilerTests`](crate::ReconcilerTests),
/// [`ReconcilerTestSuite`](crate::ReconcilerTestSuite)) as `Controller::run` runs them: the
/// case's `request` names the object, which is read from the case's cluster and handed to
/// `reconcile` with the context.
///
/// - An object the cluster does not hold is not reconciled (a controller only runs for objects
///   in its cache); the case's result is then "nothing to do".
/// - `Action::requeue(d)` is the result `requeueAfter: d`; `Action::await_change()` is nothing
///   to do.
/// - An `Err` is the case's `error`, and `error_policy`'s `Action` for it is the case's
///   `result`: "a 500 on the status patch is retried in 5 minutes" is one case, expecting both.
/// - Events published with kube's `Recorder` are written to the cluster as `Event` objects;
///   tables read them as `events` (type, reason, note, action, ...), not as creates or patches.
/// - The case's `now` does not reach the functions (they read the real clock).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, Patch, PatchParams};
/// use kube::runtime::controller::Action;
/// use recon_core::{Outcome, Request};
/// use recon_testing::{ErrorSpec, FailureSpec, PatchRef, ReactorSpec, ReconcilerTests, TestCase,
///     kube_controller};
/// use serde_json::json;
///
/// struct Data { client: kube::Client }
///
/// async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Data>) -> Result<Action, kube::Error> {
///     let api: Api<ConfigMap> = Api::default_namespaced(ctx.client.clone());
///     let labels = json!({"metadata": {"labels": {"seen": "yes"}}});
///     api.patch("c", &PatchParams::default(), &Patch::Merge(&labels)).await?;
///     Ok(Action::await_change())
/// }
///
/// fn error_policy(_cm: Arc<ConfigMap>, _error: &kube::Error, _ctx: Arc<Data>) -> Action {
///     Action::requeue(Duration::from_secs(300))
/// }
///
/// ReconcilerTests::new()
///     .case("a 500 on the patch is retried in 5 minutes",
///         TestCase::reconcile(Request::namespaced("default", "c"))
///             .given(&json!({"apiVersion": "v1", "kind": "ConfigMap",
///                            "metadata": {"name": "c", "namespace": "default"}}))
///             .reactor(ReactorSpec::new("patch", "configmaps", FailureSpec::Internal("etcd".into())))
///             .expect_patch(PatchRef::merge("ConfigMap", Some("default"), "c",
///                 json!({"metadata": {"labels": {"seen": "yes"}}})))
///             .expect_error(ErrorSpec::api(500, "InternalError").message("etcd"))
///             .expect_result(Outcome::requeue_after(Duration::from_secs(300))))
///     .run(|env| kube_controller(env, reconcile, error_policy, Arc::new(Data { client: env.client() })));
/// ```
pub fn kube_controller<K, C, F, Fut, E, P>(
    env: &TestEnv,
    reconcile: F,
    error_policy: P,
    context: Arc<C>,
) -> KubeController<K, C, F, P>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Action, E>> + Send,
    E: std::error::Error + Send + Sync + 'static,
    P: Fn(Arc<K>, &E, Arc<C>) -> Action + Send + Sync,
{
    kube_controller_async(
        env,
        reconcile,
        error_policy,
        futures::future::ready(context),
    )
}

/// [`kube_controller`] with a context built by an `async fn`, as a controller's `main` builds
/// it (`State::to_context(client).await`): the future runs once, on the table's runtime, before
/// the case's first reconcile. Do not `block_on` it in the factory instead: the factory runs
/// on the table's runtime, where blocking on a future that needs it never returns.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::runtime::controller::Action;
/// use recon_core::Request;
/// use recon_testing::{ReconcilerTests, TestCase, kube_controller_async};
/// use serde_json::json;
///
/// struct Data { namespaces: usize }
///
/// async fn context(client: kube::Client) -> Arc<Data> {
///     let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
///     let namespaces = api.list(&Default::default()).await.map_or(0, |l| l.items.len());
///     Arc::new(Data { namespaces })
/// }
/// async fn reconcile(_cm: Arc<ConfigMap>, data: Arc<Data>) -> Result<Action, kube::Error> {
///     assert!(data.namespaces > 0, "default, kube-system, ...");
///     Ok(Action::await_change())
/// }
/// fn error_policy(_cm: Arc<ConfigMap>, _e: &kube::Error, _data: Arc<Data>) -> Action {
///     Action::await_change()
/// }
///
/// ReconcilerTests::new()
///     .case("the context was built before the reconcile",
///         TestCase::reconcile(Request::namespaced("default", "c"))
///             .given(&json!({"apiVersion": "v1", "kind": "ConfigMap",
///                            "metadata": {"name": "c", "namespace": "default"}})))
///     .run(|env| kube_controller_async(env, reconcile, error_policy, context(env.client())));
/// ```
pub fn kube_controller_async<K, C, F, Fut, E, P, Ctx>(
    env: &TestEnv,
    reconcile: F,
    error_policy: P,
    context: Ctx,
) -> KubeController<K, C, F, P>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Action, E>> + Send,
    E: std::error::Error + Send + Sync + 'static,
    P: Fn(Arc<K>, &E, Arc<C>) -> Action + Send + Sync,
    Ctx: Future<Output = Arc<C>> + Send + 'static,
{
    KubeController {
        server: env.server().clone(),
        reconcile,
        error_policy,
        context: context.boxed().shared(),
        kind: PhantomData,
    }
}

/// A kube-rs `reconcile` function and its context, without the error policy: as
/// [`kube_controller`], but a case that fails expects only its error (not the requeue that
/// follows it).
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
    KubeController {
        server: env.server().clone(),
        reconcile,
        error_policy: NoErrorPolicy,
        context: futures::future::ready(context).boxed().shared(),
        kind: PhantomData,
    }
}

/// What [`kube_controller`] builds: a kube-rs controller's functions as a table's reconciler.
pub struct KubeController<K, C, F, P> {
    server: ApiServer,
    reconcile: F,
    error_policy: P,
    /// Built once, by the first reconcile that needs it.
    context: Shared<BoxFuture<'static, Arc<C>>>,
    kind: PhantomData<fn() -> K>,
}

/// What [`kube_reconcile`] builds: a controller without an error policy.
pub type KubeReconcile<K, C, F> = KubeController<K, C, F, NoErrorPolicy>;

impl<K, C, F, P> fmt::Debug for KubeController<K, C, F, P>
where
    K: Resource<DynamicType = ()>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeController")
            .field("kind", &K::kind(&()))
            .finish_non_exhaustive()
    }
}

impl<K, C, F, Fut, E, P> RootReconciler for KubeController<K, C, F, P>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Action, E>> + Send,
    E: std::error::Error + Send + Sync + 'static,
    P: ErrorPolicy<K, E, C> + Send + Sync,
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
            let object = Arc::new(object);
            let context = self.context.clone().await;
            match (self.reconcile)(Arc::clone(&object), Arc::clone(&context)).await {
                Ok(action) => outcome_of(&action),
                Err(error) => {
                    let requeue = self.error_policy.on_error(object, &error, context);
                    let requeue = match requeue {
                        Some(action) => outcome_of(&action)?,
                        None => Outcome::done(),
                    };
                    Err(Error::new(error).with_outcome(requeue))
                }
            }
        })
    }

    fn requeues_on_error(&self) -> bool {
        P::DECIDES
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
