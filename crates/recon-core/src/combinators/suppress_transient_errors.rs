//! `SuppressTransientErrors`: the first few consecutive failures of a resource are retried
//! quietly, without touching its status.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use jiff::{SignedDuration, Timestamp};
use kube::Resource;

use crate::context::Context;
use crate::error::Error;
use crate::error::ErrorKind;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

/// The number of consecutive failures from which errors pass through, unless set otherwise.
pub const DEFAULT_THRESHOLD: u32 = 3;

/// How long the failure count of a resource that stopped failing (or was deleted) is kept,
/// unless set otherwise: 24 hours.
pub const DEFAULT_FORGET_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The longest time between two sweeps of forgotten counts: sweeping scans every count, so it
/// runs at most this often rather than on every failure.
const SWEEP_INTERVAL: SignedDuration = SignedDuration::from_hours(1);

/// Hides transient failures of a nested sub-reconciler until they persist.
///
/// Failures are counted per resource (its uid) and generation. While a resource's count of
/// consecutive failures is below the threshold (default [`DEFAULT_THRESHOLD`]), its error is
/// returned marked [`ErrorKind::SkipStatusUpdate`] and [`ErrorKind::Quiet`]: the root leaves
/// the status alone (no flapping `Ready` condition for a blip) and requeues without reporting
/// a failure. The threshold-th consecutive failure, and any after it, pass through unchanged.
///
/// The count of a resource starts again on success, on an error that is already quiet (a halt
/// or a durable error: nothing transient to hide), on a new generation of the resource, and
/// once the resource has not failed for [`forget_after`](Self::forget_after) (default 24h,
/// measured with [`Context::now`]). Counts not touched for that long are dropped, so deleted
/// resources are forgotten; only the latest generation of each resource is kept.
///
/// One instance keeps the counts across reconciles: build it once for the controller. It is
/// safe to share between concurrent reconciles.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Config, Context, Error, Request, SubReconciler, SuppressTransientErrors, SyncReconciler};
///
/// let flaky = SyncReconciler::<ConfigMap>::new("Flaky")
///     .sync(async |_, _| Err::<(), _>(Error::msg("upstream timed out")));
/// let patient = SuppressTransientErrors::new("Patient", flaky).threshold(2);
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// cm.metadata.uid = Some("1234".into());
/// let first = patient.reconcile(&ctx, &mut cm).await.unwrap_err();
/// assert!(first.is_quiet() && first.is_skip_status_update(), "hidden");
/// let second = patient.reconcile(&ctx, &mut cm).await.unwrap_err();
/// assert!(!second.is_quiet(), "the second failure in a row surfaces");
/// assert_eq!(patient.tracked_resources(), 1);
/// # });
/// ```
pub struct SuppressTransientErrors<R> {
    name: String,
    reconciler: BoxSubReconciler<R>,
    threshold: u32,
    forget_after: SignedDuration,
    counters: Mutex<Counters>,
}

#[derive(Default)]
struct Counters {
    /// By resource uid (or request, for a resource without one): one generation each.
    by_resource: HashMap<String, Count>,
    last_sweep: Option<Timestamp>,
}

struct Count {
    generation: Option<i64>,
    failures: u32,
    last_failure: Timestamp,
}

impl<R: Resource + Send + Sync + 'static> SuppressTransientErrors<R> {
    /// Suppresses the transient errors of `reconciler`.
    pub fn new(name: impl Into<String>, reconciler: impl SubReconciler<R> + 'static) -> Self {
        SuppressTransientErrors {
            name: name.into(),
            reconciler: BoxSubReconciler::new(reconciler),
            threshold: DEFAULT_THRESHOLD,
            forget_after: SignedDuration::try_from(DEFAULT_FORGET_AFTER)
                .unwrap_or(SignedDuration::MAX),
            counters: Mutex::default(),
        }
    }

    /// The count of consecutive failures from which errors pass through (0 or 1: none is
    /// suppressed).
    #[must_use]
    pub fn threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self
    }

    /// How long after its last failure a resource's count is forgotten.
    #[must_use]
    pub fn forget_after(mut self, after: std::time::Duration) -> Self {
        self.forget_after = SignedDuration::try_from(after).unwrap_or(SignedDuration::MAX);
        self
    }
}

impl<R> SuppressTransientErrors<R> {
    /// How many resources have a failure count (for metrics, and to see counts forgotten).
    pub fn tracked_resources(&self) -> usize {
        self.lock().by_resource.len()
    }

    fn lock(&self) -> MutexGuard<'_, Counters> {
        // A panic elsewhere cannot leave the counts inconsistent: each update is one statement.
        self.counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts a failure of `key` at `generation`; the count including it.
    fn count_failure(&self, key: String, generation: Option<i64>, now: Timestamp) -> u32 {
        let forget_after = self.forget_after;
        let stale = |at: Timestamp| now.duration_since(at) >= forget_after;
        let mut counters = self.lock();
        let due = counters
            .last_sweep
            .is_none_or(|last| now.duration_since(last) >= SWEEP_INTERVAL.min(forget_after));
        if due {
            counters.by_resource.retain(|_, c| !stale(c.last_failure));
            counters.last_sweep = Some(now);
        }
        let count = counters.by_resource.entry(key).or_insert(Count {
            generation,
            failures: 0,
            last_failure: now,
        });
        if count.generation != generation || stale(count.last_failure) {
            count.generation = generation;
            count.failures = 0;
        }
        count.failures = count.failures.saturating_add(1);
        count.last_failure = now;
        count.failures
    }

    fn forget(&self, key: &str) {
        self.lock().by_resource.remove(key);
    }
}

impl<R: Resource + Send + Sync> SubReconciler<R> for SuppressTransientErrors<R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        // The resource as received: the nested reconciler may copy a newer generation
        // into it, but the failure belongs to the generation reconciled.
        let meta = resource.meta();
        let key = match &meta.uid {
            Some(uid) => uid.clone(),
            None => format!("request:{}", ctx.request()),
        };
        let generation = meta.generation;
        match self.reconciler.reconcile(ctx, resource).await {
            Err(err) if !err.is_quiet() => {
                let failures = self.count_failure(key, generation, ctx.now());
                if failures < self.threshold {
                    tracing::debug!(
                        reconciler = %self.name,
                        request = %ctx.request(),
                        failures,
                        error = %err,
                        "transient error suppressed"
                    );
                    Err(err.with(ErrorKind::SkipStatusUpdate).with(ErrorKind::Quiet))
                } else {
                    Err(err)
                }
            }
            other => {
                self.forget(&key);
                other
            }
        }
    }
}
