//! The runner's Prometheus metrics, named as controller-runtime names them where it has them, so
//! dashboards made for controller-runtime operators fit.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// controller-runtime's buckets for `controller_runtime_reconcile_time_seconds`, in seconds.
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
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
/// | `controller_runtime_reconcile_time_seconds` | `controller` | a histogram of reconcile durations |
/// | `controller_runtime_active_workers` | `controller` | reconciles under way |
/// | `recon_reconcile_errors_by_kind_total` | `controller`, `kind` | failures by kind: the API's reason (`Conflict`, `NotFound`…), `Transport`, or `Other` |
/// | `recon_status_writes_total` | `controller`, `result` | status writes, by `success`, `conflict`, `error` |
/// | `recon_child_writes_total` | `controller`, `resource`, `verb` | writes of children (kinds the tree owns), by `create`, `update`, `patch`, `delete` |
/// | `leader_election_master_status` | `name` | 1 while this replica leads the Lease `name`, else 0 |
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
    errors_by_kind: Family<ControllerKind, Counter>,
    reconcile_time: Family<ControllerLabel, Histogram, fn() -> Histogram>,
    active_workers: Family<ControllerLabel, Gauge>,
    status_writes: Family<ControllerResult, Counter>,
    child_writes: Family<ChildWrite, Counter>,
    leader: Family<LeaseLabel, Gauge>,
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

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_BUCKETS)
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
        let reconciles = Family::default();
        registry.register(
            "controller_runtime_reconcile",
            "Reconciles per controller, by how they ended",
            reconciles.clone(),
        );
        let errors = Family::default();
        registry.register(
            "controller_runtime_reconcile_errors",
            "Reconciles per controller that failed",
            errors.clone(),
        );
        let terminal_errors = Family::default();
        registry.register(
            "controller_runtime_terminal_reconcile_errors",
            "Reconciles per controller that failed durably and are not retried",
            terminal_errors.clone(),
        );
        let errors_by_kind = Family::default();
        registry.register(
            "recon_reconcile_errors_by_kind",
            "Reconciles per controller that failed, by the kind of failure",
            errors_by_kind.clone(),
        );
        let reconcile_time =
            Family::<ControllerLabel, Histogram, fn() -> Histogram>::new_with_constructor(
                reconcile_histogram,
            );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "How long reconciles per controller took",
            reconcile_time.clone(),
        );
        let active_workers = Family::default();
        registry.register(
            "controller_runtime_active_workers",
            "Reconciles per controller under way",
            active_workers.clone(),
        );
        let status_writes = Family::default();
        registry.register(
            "recon_status_writes",
            "Status writes per controller, by how they ended",
            status_writes.clone(),
        );
        let child_writes = Family::default();
        registry.register(
            "recon_child_writes",
            "Writes of child objects per controller, by resource and verb",
            child_writes.clone(),
        );
        let leader = Family::default();
        registry.register(
            "leader_election_master_status",
            "Whether this replica leads the named Lease (1) or waits (0)",
            leader.clone(),
        );
        Metrics {
            inner: Arc::new(Inner {
                registry,
                reconciles,
                errors,
                terminal_errors,
                errors_by_kind,
                reconcile_time,
                active_workers,
                status_writes,
                child_writes,
                leader,
            }),
        }
    }

    /// The metrics in the OpenMetrics text format (ending `# EOF`).
    pub fn encode_openmetrics(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.inner.registry);
        text
    }

    /// The metrics in Prometheus's text format 0.0.4, for scrapers that do not ask for
    /// OpenMetrics.
    pub fn encode_prometheus(&self) -> String {
        let mut text = String::new();
        let _ =
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.inner.registry);
        text
    }

    /// A reconcile of `controller` began: it counts as under way until the guard drops.
    pub(crate) fn reconcile_began(&self, controller: &str) -> ActiveReconcile {
        let label = ControllerLabel {
            controller: controller.to_owned(),
        };
        self.inner.active_workers.get_or_create(&label).inc();
        ActiveReconcile {
            metrics: self.clone(),
            label,
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
    label: ControllerLabel,
}

impl Drop for ActiveReconcile {
    fn drop(&mut self) {
        self.metrics
            .inner
            .active_workers
            .get_or_create(&self.label)
            .dec();
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
