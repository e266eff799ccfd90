//! The runner's Prometheus metrics, named as controller-runtime names them where it has them, so
//! dashboards made for controller-runtime operators fit.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// controller-runtime's buckets for `controller_runtime_reconcile_time_seconds`, in seconds.
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// How a reconcile can end, as `controller_runtime_reconcile_total`'s `result` says it; each is
/// exported at zero from the start, as controller-runtime's `initMetrics` does, so that the
/// first of each is an increase Prometheus sees.
const RESULTS: [ReconcileResult; 4] = [
    ReconcileResult::Error,
    ReconcileResult::RequeueAfter,
    ReconcileResult::Requeue,
    ReconcileResult::Success,
];

/// The `Content-Type` of [`Metrics::encode_openmetrics`].
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The `Content-Type` of [`Metrics::encode_prometheus`].
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The metrics a [`Runner`](super::Runner) keeps, in a Prometheus registry:
///
/// | metric | labels | counts |
/// |---|---|---|
/// | `controller_runtime_reconcile_total` | `controller`, `result` | reconciles, by `success`, `error`, `requeue`, `requeue_after` |
/// | `controller_runtime_reconcile_errors_total` | `controller` | reconciles that failed |
/// | `controller_runtime_terminal_reconcile_errors_total` | `controller` | failures marked durable (not retried) |
/// | `controller_runtime_reconcile_panics_total` | `controller` | reconciles that panicked (the panic is caught and counts as a failure, `panic: … [recovered]`) |
/// | `controller_runtime_reconcile_time_seconds` | `controller` | a histogram of reconcile durations |
/// | `controller_runtime_max_concurrent_reconciles` | `controller` | the most reconciles it runs at once ([`ResourceReconciler::max_concurrent_reconciles`](crate::ResourceReconciler::max_concurrent_reconciles); 0 is no limit) |
/// | `controller_runtime_active_workers` | `controller` | reconciles under way |
/// | `workqueue_depth` | `controller`, `name`, `priority` | objects due for a reconcile that has not begun |
/// | `workqueue_adds_total` | `controller`, `name` | objects that became due (one already due is not added again) |
/// | `workqueue_queue_duration_seconds` | `controller`, `name` | a histogram of how long an object waited, due, before its reconcile began |
/// | `workqueue_work_duration_seconds` | `controller`, `name` | a histogram of how long processing an item took |
/// | `workqueue_unfinished_work_seconds` | `controller`, `name` | the seconds the reconciles under way have run, added up |
/// | `workqueue_longest_running_processor_seconds` | `controller`, `name` | the seconds the longest-running reconcile under way has run |
/// | `workqueue_retries_total` | `controller`, `name` | items put back after a failure or a requeue without delay |
/// | `recon_reconcile_errors_by_kind_total` | `controller`, `kind` | failures by kind: the API's reason (`Conflict`, `NotFound`…), `Transport`, or `Other` |
/// | `recon_status_writes_total` | `controller`, `result` | status writes, by `success`, `conflict`, `error` |
/// | `recon_child_writes_total` | `controller`, `resource`, `verb` | writes of children (kinds the tree owns), by `create`, `update`, `patch`, `delete` |
/// | `leader_election_master_status` | `name` | 1 while this replica leads the Lease `name`, else 0 |
/// | `leader_election_slowpath_total` | `name` | renewals that had to read the Lease first (the leader's own update was refused) |
///
/// Every counter and gauge of a controller is exported, at zero, from the moment the runner
/// starts, as controller-runtime's are: Prometheus's `rate()` and `increase()` see no increase
/// in a series' first sample, so a counter that appeared only on its first increment would hide
/// the first failure after every restart. The names, labels and buckets are
/// controller-runtime's (the workqueue histogram's are client-go's, 10 ns to 1,000 s).
///
/// The workqueue's depth, adds and queue duration are known for the controllers the runner
/// builds ([`Runner::controller`](super::Runner::controller)), whose queue it feeds; a
/// `kube::runtime::Controller` given through
/// [`Runner::controller_with`](super::Runner::controller_with) keeps its queue to itself, and
/// those three are not exported for it. An object counts as due from when a watch event
/// names it, or when the delay its last reconcile asked for has passed, as client-go's queue
/// counts an `Add` (immediately, or at the end of an `AddAfter`).
///
/// Clones share the same metrics.
///
/// ```
/// use prometheus_client::metrics::counter::Counter;
/// use prometheus_client::registry::Registry;
/// use recon_core::runner::Metrics;
///
/// // The operator's own metrics go in the same registry, registered first.
/// let mut registry = Registry::default();
/// let resyncs = Counter::<u64>::default();
/// registry.register("my_operator_resyncs", "Full resyncs the operator ran", resyncs.clone());
/// let metrics = Metrics::with_registry(registry);
/// resyncs.inc();
/// // A runner given `metrics` adds its own samples as it reconciles.
/// assert!(metrics.encode_prometheus().contains("my_operator_resyncs_total 1"));
/// ```
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    reconciles: Family<ControllerResult, Counter>,
    errors: Family<ControllerLabel, Counter>,
    terminal_errors: Family<ControllerLabel, Counter>,
    panics: Family<ControllerLabel, Counter>,
    errors_by_kind: Family<ControllerKind, Counter>,
    reconcile_time: Family<ControllerLabel, Histogram, fn() -> Histogram>,
    max_concurrent: Family<ControllerLabel, Gauge>,
    active_workers: Family<ControllerLabel, Gauge>,
    work_duration: Family<QueueLabel, Histogram, fn() -> Histogram>,
    unfinished_work: Family<QueueLabel, Gauge<f64, AtomicU64>>,
    longest_running: Family<QueueLabel, Gauge<f64, AtomicU64>>,
    retries: Family<QueueLabel, Counter>,
    status_writes: Family<ControllerResult, Counter>,
    child_writes: Family<ChildWrite, Counter>,
    leader: Family<LeaseLabel, Gauge>,
    slowpath: Family<LeaseLabel, Counter>,
    /// When each reconcile under way began, per controller: the workqueue's unfinished-work
    /// gauges are worked out from them when the metrics are read.
    under_way: Mutex<HashMap<String, HashMap<u64, Instant>>>,
    next_reconcile: AtomicU64,
    depth: Family<DepthLabel, Gauge>,
    adds: Family<QueueLabel, Counter>,
    queue_duration: Family<QueueLabel, Histogram, fn() -> Histogram>,
    /// What each observed controller's queue holds.
    queues: Mutex<HashMap<String, Queue>>,
}

/// An object a controller reconciles: its namespace and name.
pub(crate) type QueueKey = (Option<String>, String);

/// A controller's queue as client-go's workqueue would count it.
#[derive(Default)]
struct Queue {
    items: HashMap<QueueKey, Queued>,
}

/// One object in a [`Queue`].
#[derive(Default)]
struct Queued {
    /// Due since then (counted in the depth).
    due_since: Option<Instant>,
    /// Due at that time, later: a requeue with a delay (client-go's `AddAfter`).
    due_at: Option<Instant>,
}

impl Queued {
    /// Makes a requeue whose time has come due, and says whether it did.
    fn ripen(&mut self, now: Instant) -> bool {
        match self.due_at {
            Some(at) if self.due_since.is_none() && at <= now => {
                self.due_since = Some(at);
                self.due_at = None;
                true
            }
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerResult {
    controller: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerKind {
    controller: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChildWrite {
    controller: String,
    resource: String,
    verb: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabel {
    name: String,
}

/// `workqueue_depth`'s labels: a queue's, and its priority (controller-runtime's queues without
/// priorities write it empty).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabel {
    controller: String,
    name: String,
    priority: String,
}

impl DepthLabel {
    fn of(controller: &str) -> Self {
        DepthLabel {
            controller: controller.to_owned(),
            name: controller.to_owned(),
            priority: String::new(),
        }
    }
}

/// A workqueue's labels: controller-runtime names each controller's queue after it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabel {
    controller: String,
    name: String,
}

impl QueueLabel {
    fn of(controller: &str) -> Self {
        QueueLabel {
            controller: controller.to_owned(),
            name: controller.to_owned(),
        }
    }
}

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_BUCKETS)
}

/// client-go's workqueue buckets: `ExponentialBuckets(10e-9, 10, 12)`.
fn work_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1e-8, 10.0, 12))
}

/// How a reconcile ended, as `controller_runtime_reconcile_total`'s `result` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReconcileResult {
    Success,
    Error,
    Requeue,
    RequeueAfter,
}

impl ReconcileResult {
    fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteResult {
    Success,
    Conflict,
    Error,
}

impl WriteResult {
    /// From the HTTP status of the answer, or `None` when none came.
    pub(crate) fn of(status: Option<u16>) -> Self {
        match status {
            Some(200..=299) => WriteResult::Success,
            Some(409) => WriteResult::Conflict,
            _ => WriteResult::Error,
        }
    }

    fn label(self) -> &'static str {
        match self {
            WriteResult::Success => "success",
            WriteResult::Conflict => "conflict",
            WriteResult::Error => "error",
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The runner's metrics in a registry of their own.
    pub fn new() -> Self {
        Self::with_registry(Registry::default())
    }

    /// The runner's metrics added to `registry`, which may hold the operator's own: one
    /// `/metrics` serves them all.
    pub fn with_registry(mut registry: Registry) -> Self {
        // Each metric `name: "series", made, "help"`: made, registered, and kept as `name`.
        macro_rules! registered {
            ($($name:ident: $series:literal, $made:expr, $help:literal;)*) => {
                $(
                    let $name = $made;
                    registry.register($series, $help, $name.clone());
                )*
            };
        }
        registered! {
            reconciles: "controller_runtime_reconcile", Family::default(),
                "Reconciles per controller, by how they ended";
            errors: "controller_runtime_reconcile_errors", Family::default(),
                "Reconciles per controller that failed";
            terminal_errors: "controller_runtime_terminal_reconcile_errors", Family::default(),
                "Reconciles per controller that failed durably and are not retried";
            errors_by_kind: "recon_reconcile_errors_by_kind", Family::default(),
                "Reconciles per controller that failed, by the kind of failure";
            panics: "controller_runtime_reconcile_panics", Family::default(),
                "Reconciles per controller that panicked";
            reconcile_time: "controller_runtime_reconcile_time_seconds",
                Family::new_with_constructor(reconcile_histogram as fn() -> Histogram),
                "How long reconciles per controller took";
            max_concurrent: "controller_runtime_max_concurrent_reconciles", Family::default(),
                "The most reconciles per controller under way at once (0: no limit)";
            active_workers: "controller_runtime_active_workers", Family::default(),
                "Reconciles per controller under way";
            depth: "workqueue_depth", Family::default(),
                "Objects due for a reconcile that has not begun";
            adds: "workqueue_adds", Family::default(),
                "Objects that became due for a reconcile";
            queue_duration: "workqueue_queue_duration_seconds",
                Family::new_with_constructor(work_histogram as fn() -> Histogram),
                "How long an object waited, due, before its reconcile began";
            work_duration: "workqueue_work_duration_seconds",
                Family::new_with_constructor(work_histogram as fn() -> Histogram),
                "How long processing an item from the workqueue took";
            unfinished_work: "workqueue_unfinished_work_seconds", Family::default(),
                "Seconds of work under way that work_duration has not seen yet, added up";
            longest_running: "workqueue_longest_running_processor_seconds", Family::default(),
                "Seconds the longest-running item under way has run";
            retries: "workqueue_retries", Family::default(),
                "Items the workqueue took back to retry";
            status_writes: "recon_status_writes", Family::default(),
                "Status writes per controller, by how they ended";
            child_writes: "recon_child_writes", Family::default(),
                "Writes of child objects per controller, by resource and verb";
            leader: "leader_election_master_status", Family::default(),
                "Whether this replica leads the named Lease (1) or waits (0)";
            slowpath: "leader_election_slowpath", Family::default(),
                "Lease renewals that had to read the Lease first";
        }
        Metrics {
            inner: Arc::new(Inner {
                registry,
                reconciles,
                errors,
                terminal_errors,
                panics,
                errors_by_kind,
                reconcile_time,
                max_concurrent,
                active_workers,
                work_duration,
                unfinished_work,
                longest_running,
                retries,
                status_writes,
                child_writes,
                leader,
                slowpath,
                under_way: Mutex::default(),
                next_reconcile: AtomicU64::new(0),
                depth,
                adds,
                queue_duration,
                queues: Mutex::default(),
            }),
        }
    }

    /// The metrics in the OpenMetrics text format (ending `# EOF`).
    pub fn encode_openmetrics(&self) -> String {
        self.measure_under_way();
        self.ripen_requeues();
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.inner.registry);
        text
    }

    /// The metrics in Prometheus's text format 0.0.4, for scrapers that do not ask for
    /// OpenMetrics.
    pub fn encode_prometheus(&self) -> String {
        self.measure_under_way();
        self.ripen_requeues();
        let mut text = String::new();
        let _ =
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.inner.registry);
        text
    }

    /// Exports `controller`'s series at zero (controller-runtime's `initMetrics`), with the
    /// most reconciles it runs at once; those of its queue too when the runner sees it.
    pub(crate) fn controller_started(
        &self,
        controller: &str,
        max_concurrent: u16,
        queue_seen: bool,
    ) {
        // A series exists once created: the guards `get_or_create` returns are dropped at once.
        let label = ControllerLabel {
            controller: controller.to_owned(),
        };
        for result in RESULTS {
            drop(self.inner.reconciles.get_or_create(&ControllerResult {
                controller: controller.to_owned(),
                result: result.label(),
            }));
        }
        drop(self.inner.errors.get_or_create(&label));
        drop(self.inner.terminal_errors.get_or_create(&label));
        drop(self.inner.panics.get_or_create(&label));
        self.inner
            .max_concurrent
            .get_or_create(&label)
            .set(i64::from(max_concurrent));
        drop(self.inner.active_workers.get_or_create(&label));
        let queue = QueueLabel::of(controller);
        drop(self.inner.work_duration.get_or_create(&queue));
        drop(self.inner.unfinished_work.get_or_create(&queue));
        drop(self.inner.longest_running.get_or_create(&queue));
        drop(self.inner.retries.get_or_create(&queue));
        if queue_seen {
            drop(self.inner.depth.get_or_create(&DepthLabel::of(controller)));
            drop(self.inner.adds.get_or_create(&queue));
            drop(self.inner.queue_duration.get_or_create(&queue));
            self.queues().entry(controller.to_owned()).or_default();
        }
    }

    fn queues(&self) -> std::sync::MutexGuard<'_, HashMap<String, Queue>> {
        self.inner
            .queues
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one object added to `controller`'s queue.
    fn add(&self, controller: &str) {
        self.inner
            .adds
            .get_or_create(&QueueLabel::of(controller))
            .inc();
        self.inner
            .depth
            .get_or_create(&DepthLabel::of(controller))
            .inc();
    }

    /// A watch event asked for a reconcile of `key` now.
    pub(crate) fn queued(&self, controller: &str, key: QueueKey) {
        self.requeued(controller, key, Duration::ZERO);
    }

    /// A reconcile of `key` asked for the next one after `delay` (zero: now).
    pub(crate) fn requeued(&self, controller: &str, key: QueueKey, delay: Duration) {
        let now = Instant::now();
        let mut queues = self.queues();
        let Some(queue) = queues.get_mut(controller) else {
            return;
        };
        let item = queue.items.entry(key).or_default();
        let mut added = item.ripen(now);
        if item.due_since.is_none() {
            if delay.is_zero() {
                item.due_since = Some(now);
                // kube's scheduler keeps the earliest time asked for.
                item.due_at = None;
                added = true;
            } else {
                let at = now + delay;
                item.due_at = Some(item.due_at.map_or(at, |due| due.min(at)));
            }
        }
        drop(queues);
        if added {
            self.add(controller);
        }
    }

    /// The reconcile of `key` begins (or would have, had the object still been in the cache):
    /// it leaves the queue.
    pub(crate) fn dequeued(&self, controller: &str, key: &QueueKey) {
        let now = Instant::now();
        let mut queues = self.queues();
        let Some(queue) = queues.get_mut(controller) else {
            return;
        };
        let (ripened, since) = match queue.items.remove(key) {
            Some(mut item) => (item.ripen(now), item.due_since),
            None => (false, None),
        };
        drop(queues);
        if ripened {
            self.add(controller);
        }
        let queue = QueueLabel::of(controller);
        let waited = match since {
            Some(since) => {
                self.inner
                    .depth
                    .get_or_create(&DepthLabel::of(controller))
                    .dec();
                now.duration_since(since)
            }
            // Due through a path the runner does not see: added and taken at once.
            None => {
                self.inner.adds.get_or_create(&queue).inc();
                Duration::ZERO
            }
        };
        self.inner
            .queue_duration
            .get_or_create(&queue)
            .observe(waited.as_secs_f64());
    }

    /// Counts the requeues whose delay has passed as added, as client-go adds them when their
    /// `AddAfter` fires.
    fn ripen_requeues(&self) {
        let now = Instant::now();
        let mut ripened = Vec::new();
        for (controller, queue) in self.queues().iter_mut() {
            for item in queue.items.values_mut() {
                if item.ripen(now) {
                    ripened.push(controller.clone());
                }
            }
        }
        for controller in ripened {
            self.add(&controller);
        }
    }

    /// A reconcile of `controller` began: it counts as under way until the guard drops.
    pub(crate) fn reconcile_began(&self, controller: &str) -> ActiveReconcile {
        let id = self.inner.next_reconcile.fetch_add(1, Ordering::Relaxed);
        self.under_way()
            .entry(controller.to_owned())
            .or_default()
            .insert(id, Instant::now());
        ActiveReconcile {
            metrics: self.clone(),
            controller: controller.to_owned(),
            id,
        }
    }

    /// A reconcile of `controller` panicked.
    pub(crate) fn reconcile_panicked(&self, controller: &str) {
        self.inner
            .panics
            .get_or_create(&ControllerLabel {
                controller: controller.to_owned(),
            })
            .inc();
    }

    fn under_way(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<u64, Instant>>> {
        // The map stays whole whatever panicked while it was held.
        self.inner
            .under_way
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets the gauges of the reconciles under way now: how many, and the unfinished-work ones
    /// (client-go works those out every half second; here each read of the metrics does).
    fn measure_under_way(&self) {
        let now = Instant::now();
        for (controller, began) in self.under_way().iter() {
            let label = ControllerLabel {
                controller: controller.clone(),
            };
            let count = i64::try_from(began.len()).unwrap_or(i64::MAX);
            self.inner.active_workers.get_or_create(&label).set(count);
            let running = began.values().map(|b| now.duration_since(*b).as_secs_f64());
            let (total, longest) = running.fold((0.0, 0.0), |(total, longest): (f64, f64), s| {
                (total + s, longest.max(s))
            });
            let queue = QueueLabel::of(controller);
            self.inner.unfinished_work.get_or_create(&queue).set(total);
            self.inner
                .longest_running
                .get_or_create(&queue)
                .set(longest);
        }
    }

    /// A reconcile of `controller` ended after `took`: `failure` is the kind of failure and
    /// whether it is durable.
    pub(crate) fn reconcile_ended(
        &self,
        controller: &str,
        result: ReconcileResult,
        took: Duration,
        failure: Option<(String, bool)>,
    ) {
        let label = ControllerLabel {
            controller: controller.to_owned(),
        };
        self.inner
            .reconciles
            .get_or_create(&ControllerResult {
                controller: controller.to_owned(),
                result: result.label(),
            })
            .inc();
        self.inner
            .reconcile_time
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        let queue = QueueLabel::of(controller);
        self.inner
            .work_duration
            .get_or_create(&queue)
            .observe(took.as_secs_f64());
        // client-go counts a retry at each `AddRateLimited`: controller-runtime's answer to a
        // failure that is not terminal, and to a requeue without a delay.
        let retried = match &failure {
            Some((_, durable)) => !durable,
            None => result == ReconcileResult::Requeue,
        };
        if retried {
            self.inner.retries.get_or_create(&queue).inc();
        }
        if let Some((kind, durable)) = failure {
            self.inner.errors.get_or_create(&label).inc();
            if durable {
                self.inner.terminal_errors.get_or_create(&label).inc();
            }
            self.inner
                .errors_by_kind
                .get_or_create(&ControllerKind {
                    controller: controller.to_owned(),
                    kind,
                })
                .inc();
        }
    }

    pub(crate) fn status_written(&self, controller: &str, result: WriteResult) {
        self.inner
            .status_writes
            .get_or_create(&ControllerResult {
                controller: controller.to_owned(),
                result: result.label(),
            })
            .inc();
    }

    pub(crate) fn child_written(&self, controller: &str, resource: &str, verb: &'static str) {
        self.inner
            .child_writes
            .get_or_create(&ChildWrite {
                controller: controller.to_owned(),
                resource: resource.to_owned(),
                verb,
            })
            .inc();
    }

    pub(crate) fn leading(&self, lease: &str, leading: bool) {
        self.inner
            .leader
            .get_or_create(&LeaseLabel {
                name: lease.to_owned(),
            })
            .set(i64::from(leading));
    }

    /// Exports the Lease's election series (at zero) before the election begins.
    pub(crate) fn election_started(&self, lease: &str) {
        self.leading(lease, false);
        drop(self.inner.slowpath.get_or_create(&LeaseLabel {
            name: lease.to_owned(),
        }));
    }

    /// The leader renewed the Lease `lease` by reading it first (client-go's
    /// `slowpathExercised`).
    pub(crate) fn slowpath_exercised(&self, lease: &str) {
        self.inner
            .slowpath
            .get_or_create(&LeaseLabel {
                name: lease.to_owned(),
            })
            .inc();
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// A reconcile under way, counted in `controller_runtime_active_workers` until dropped (also when
/// the reconcile is cancelled).
pub(crate) struct ActiveReconcile {
    metrics: Metrics,
    controller: String,
    id: u64,
}

impl Drop for ActiveReconcile {
    fn drop(&mut self) {
        if let Some(began) = self.metrics.under_way().get_mut(&self.controller) {
            began.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconcile_is_counted_timed_and_its_failure_classified() {
        let metrics = Metrics::new();
        {
            let _active = metrics.reconcile_began("widgets");
            assert!(
                metrics
                    .encode_prometheus()
                    .contains("controller_runtime_active_workers{controller=\"widgets\"} 1")
            );
        }
        metrics.reconcile_ended(
            "widgets",
            ReconcileResult::Error,
            Duration::from_millis(30),
            Some(("Conflict".to_owned(), false)),
        );
        let text = metrics.encode_openmetrics();
        for line in [
            "controller_runtime_active_workers{controller=\"widgets\"} 0",
            "controller_runtime_reconcile_total{controller=\"widgets\",result=\"error\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"widgets\"} 1",
            "recon_reconcile_errors_by_kind_total{controller=\"widgets\",kind=\"Conflict\"} 1",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.025\",controller=\"widgets\"} 0",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.05\",controller=\"widgets\"} 1",
            "controller_runtime_reconcile_time_seconds_count{controller=\"widgets\"} 1",
        ] {
            assert!(text.contains(line), "no {line} in\n{text}");
        }
        assert!(!text.contains("terminal_reconcile_errors_total{"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn write_results_follow_the_answer() {
        assert_eq!(WriteResult::of(Some(200)), WriteResult::Success);
        assert_eq!(WriteResult::of(Some(201)), WriteResult::Success);
        assert_eq!(WriteResult::of(Some(409)), WriteResult::Conflict);
        assert_eq!(WriteResult::of(Some(422)), WriteResult::Error);
        assert_eq!(WriteResult::of(None), WriteResult::Error);
    }
}
