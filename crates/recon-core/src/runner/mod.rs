//! Running an operator in production: [`Runner`] starts several [`ResourceReconciler`]
//! controllers, the admission webhook server and the `/metrics`, `/healthz` and `/readyz`
//! endpoints in one process, elects a leader among the replicas on a Lease, and shuts down
//! gracefully on SIGTERM or ctrl-c. Feature `runner`.
//!
//! # Leader election
//!
//! [`LeaderElection`] follows client-go's `leaderelection` package, which controller-runtime's
//! manager uses, on a `coordination.k8s.io/v1` Lease: same record, same timings (15 s lease,
//! 10 s renew deadline, 2 s retry), same decisions. A replica counts a Lease as expired from
//! when it saw the Lease change on its own clock, never from the times written in it; each
//! takeover is an update guarded by the resourceVersion it read, so two candidates cannot both
//! win. Time is Tokio's: a test pauses it and advances it (`tokio::time::pause`), and a
//! failover that takes 15 s in production takes no time in a test.
//!
//! recon does not use kube-lease-manager: it decides from the holder's `renewTime` against the
//! local wall clock (so a clock that runs ahead takes the Lease early), renews with patches that
//! no resourceVersion guards, and reads the wall clock directly, which no test can advance.
//!
//! # Metrics
//!
//! [`Metrics`] names its metrics as controller-runtime does where it has them
//! (`controller_runtime_reconcile_total`, `controller_runtime_reconcile_time_seconds`,
//! `workqueue_work_duration_seconds`, `leader_election_master_status`…), with its labels and
//! buckets, exported at zero from the start, so existing dashboards and alerts fit, and adds
//! recon's own (status writes and conflicts, child writes). A reconcile that panics is caught,
//! counted and retried as a failure, as controller-runtime's `RecoverPanic` does. The runner counts writes from the requests its
//! reconcilers send, through a client it puts in each reconciler's [`Config`](crate::Config).
//!
//! # Scope and limitations
//!
//! - The runner does not shard: the leader reconciles every object. Replicas add availability,
//!   not throughput.
//! - A replica that stops leading cancels its reconciles at their next `.await`, and campaigns
//!   again; controller-runtime exits the process instead. A reconcile cancelled halfway leaves
//!   what it wrote, as a crash would: reconcilers are level-triggered.
//! - Leader election does not fence: a leader cut off from the API server stops at its renew
//!   deadline by its own clock, counted from the start of its last successful renewal, which
//!   is `leaseDuration - renewDeadline` before any other replica may see the Lease expire (5 s
//!   with the defaults). client-go counts the deadline from its first failed renewal and so
//!   keeps a retry period less. Clocks that run at very different rates break this, as they
//!   break client-go's.
//! - A dropped [`RunningRunner`] cancels its reconciles at once and stops renewing; the Lease
//!   expires as after a crash.
//!
//! [`ResourceReconciler`]: crate::ResourceReconciler

mod election_loop;
mod election_settings;
mod endpoints;
mod managed;
mod metered_client;
mod metrics;
mod probes;
mod process;
mod signal;

pub use election_loop::Leadership;
pub use election_settings::{ElectionSettingsError, LeaderElection};
pub use metrics::{Metrics, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};
pub use process::{DEFAULT_DRAIN_DEADLINE, Drained, Runner, RunnerError, RunningRunner};
pub use signal::shutdown_signal;
