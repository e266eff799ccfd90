//! [`Runner`]: the controllers, the webhook server and the endpoints of one operator process,
//! started together and stopped together.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use kube::runtime::{Controller, watcher};
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::election_loop::{Elector, Leadership, Phase};
use super::election_settings::{ElectionSettingsError, LeaderElection};
use super::endpoints;
use super::managed::{Build, Managed, ManagedController};
use super::metrics::Metrics;
use super::probes::Probes;
use crate::root::ResourceReconciler;
use crate::tree::Reconciled;

/// controller-runtime's default `GracefulShutdownTimeout`.
pub const DEFAULT_DRAIN_DEADLINE: Duration = Duration::from_secs(30);

/// The controllers of one operator process, with what runs beside them: leader election on a
/// Lease, an admission webhook server, and `/metrics`, `/healthz`, `/readyz`.
///
/// - Without leader election every controller runs from the start. With it, they run only while
///   this replica leads; a replica that stops leading cancels its reconciles at once, draining
///   for shutdown or not, then campaigns again. A leader that cannot renew stops
///   `leaseDuration - renewDeadline` before any other replica may take the Lease (see
///   [`LeaderElection::renew_deadline`]), so no two replicas reconcile at once.
/// - The webhook server and the endpoints serve on every replica, leader or not.
/// - Each leadership term builds its controllers afresh: their caches list again.
/// - Shutting down (SIGTERM or ctrl-c with [`run_until_signalled`](Self::run_until_signalled)):
///   `/readyz` fails, the controllers take no new work and finish the reconciles under way
///   (cancelled after the drain deadline, or at once if the Lease is lost meanwhile), the
///   webhook server stops, a leader releases the Lease so another replica takes over at once,
///   and the endpoints stop last.
///
/// ```no_run
/// # async fn demo(client: kube::Client, reconciler: recon_core::ResourceReconciler<k8s_openapi::api::core::v1::ConfigMap>) -> Result<(), recon_core::runner::RunnerError> {
/// use kube::runtime::watcher;
/// use recon_core::runner::{LeaderElection, Runner};
///
/// let pod = std::env::var("POD_NAME").unwrap_or_else(|_| "local".to_owned());
/// Runner::new(client.clone())
///     .controller(reconciler, kube::Api::all(client), watcher::Config::default())
///     .leader_election(LeaderElection::new("config-operator", "operators", pod))
///     .endpoints("0.0.0.0:8080".parse().unwrap())
///     .run_until_signalled()
///     .await
/// # }
/// ```
pub struct Runner {
    client: kube::Client,
    controllers: Vec<PendingController>,
    election: Option<LeaderElection>,
    endpoints: Option<SocketAddr>,
    #[cfg(feature = "webhook-server")]
    webhooks: Option<(crate::admission::WebhookServer, SocketAddr)>,
    metrics: Metrics,
    drain_deadline: Duration,
}

impl Runner {
    /// A runner with nothing to run yet; `client` reaches the Lease.
    pub fn new(client: kube::Client) -> Self {
        Runner {
            client,
            controllers: Vec::new(),
            election: None,
            endpoints: None,
            #[cfg(feature = "webhook-server")]
            webhooks: None,
            metrics: Metrics::new(),
            drain_deadline: DEFAULT_DRAIN_DEADLINE,
        }
    }

    /// Runs `reconciler` on what [`ResourceReconciler::controller`]'s controller watches: the
    /// resources `api` reaches, and the watches the tree declares. The runner feeds them to
    /// `kube::runtime::applier` as `Controller::run` does, through a queue it counts for the
    /// `workqueue_*` metrics.
    #[must_use]
    pub fn controller<R>(
        self,
        reconciler: ResourceReconciler<R>,
        api: Api<R>,
        wc: watcher::Config,
    ) -> Self
    where
        R: Reconciled,
        R::DynamicType: Eq + Hash + Debug + Unpin,
    {
        self.add(reconciler, Build::Watches(Box::new((api, wc))))
    }

    /// Runs `reconciler` under the controller `make` builds, once per leadership term (to watch
    /// more, or set kube's other controller options). The runner cannot see the queue of a
    /// controller built so: `workqueue_depth`, `workqueue_adds_total` and
    /// `workqueue_queue_duration_seconds` are not exported for it.
    #[must_use]
    pub fn controller_with<R>(
        self,
        reconciler: ResourceReconciler<R>,
        make: impl Fn(&ResourceReconciler<R>) -> Controller<R> + Send + Sync + 'static,
    ) -> Self
    where
        R: Reconciled,
        R::DynamicType: Eq + Hash + Debug + Unpin,
    {
        self.add(reconciler, Build::Controller(Box::new(make)))
    }

    fn add<R>(mut self, reconciler: ResourceReconciler<R>, build: Build<R>) -> Self
    where
        R: Reconciled,
        R::DynamicType: Eq + Hash + Debug + Unpin,
    {
        // Built when the runner starts, with the metrics it has then, whenever they were set.
        self.controllers.push(PendingController {
            name: reconciler.name().to_owned(),
            max_concurrent: reconciler.max_concurrent_reconciles,
            sees_the_queue: build.sees_the_queue(),
            build: Box::new(move |metrics| {
                Arc::new(ManagedController::new(reconciler, build, metrics))
            }),
        });
        self
    }

    /// Reconciles only while this replica holds the Lease `election` names.
    #[must_use]
    pub fn leader_election(mut self, election: LeaderElection) -> Self {
        self.election = Some(election);
        self
    }

    /// Serves `/metrics`, `/healthz` and `/readyz` over HTTP on `addr` (port 0 picks a free one).
    #[must_use]
    pub fn endpoints(mut self, addr: SocketAddr) -> Self {
        self.endpoints = Some(addr);
        self
    }

    /// Serves admission webhooks on `addr`, on every replica.
    #[cfg(feature = "webhook-server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
    #[must_use]
    pub fn webhooks(mut self, server: crate::admission::WebhookServer, addr: SocketAddr) -> Self {
        self.webhooks = Some((server, addr));
        self
    }

    /// Keeps its metrics in `metrics` (by default metrics of its own), for example to register
    /// the operator's own in the same registry.
    #[must_use]
    pub fn metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// How long reconciles under way get to finish once shutdown begins (default 30 s, as
    /// controller-runtime's); past it they are cancelled.
    #[must_use]
    pub fn drain_deadline(mut self, deadline: Duration) -> Self {
        self.drain_deadline = deadline;
        self
    }

    /// Starts everything and returns at once; [`RunningRunner::shutdown`] stops it.
    pub async fn start(self) -> Result<RunningRunner, RunnerError> {
        if self.controllers.is_empty() && !self.serves_webhooks() {
            return Err(RunnerError::NothingToRun);
        }
        let mut names: Vec<&str> = self.controllers.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(RunnerError::DuplicateController {
                name: pair[0].to_owned(),
            });
        }
        if let Some(election) = &self.election {
            election.check()?;
        }
        for controller in &self.controllers {
            self.metrics.controller_started(
                &controller.name,
                controller.max_concurrent,
                controller.sees_the_queue,
            );
        }
        let probes = Probes::default();
        let (stop_endpoints, endpoints_stopped) = watch::channel(false);
        let endpoints = match self.endpoints {
            Some(addr) => {
                let (bound, task) = endpoints::serve(
                    addr,
                    self.metrics.clone(),
                    probes.clone(),
                    endpoints_stopped,
                )
                .await
                .map_err(|source| RunnerError::Bind { addr, source })?;
                Some((bound, task))
            }
            None => None,
        };
        #[cfg(feature = "webhook-server")]
        let webhooks = match self.webhooks {
            Some((server, addr)) => {
                probes.expect_webhooks();
                let running = server.start(addr).await?;
                probes.webhooks_listening();
                Some(running)
            }
            None => None,
        };
        let (phase, phase_seen) = watch::channel(Phase::Running);
        let (leadership, leader) = match self.election {
            Some(election) => {
                let lease = election.lease.clone();
                probes.elect_with(election.lease_duration);
                let (state, leadership) = watch::channel(Leadership::default());
                self.metrics.election_started(&lease);
                let elector = Elector::new(
                    election,
                    self.client.clone(),
                    probes.clone(),
                    self.metrics.clone(),
                );
                let task = tokio::spawn(elector.run(state, phase_seen));
                tokio::spawn(report_leadership(
                    leadership.clone(),
                    lease,
                    self.metrics.clone(),
                ));
                (leadership, Leader::Elected(task))
            }
            None => {
                let (always, leadership) = watch::channel(Leadership {
                    leading: true,
                    holder: None,
                });
                (
                    leadership,
                    Leader::Always {
                        _keeps_open: always,
                    },
                )
            }
        };
        let (stop, stopping) = watch::channel(false);
        let supervisor = tokio::spawn(supervise(
            self.controllers
                .into_iter()
                .map(|c| (c.build)(self.metrics.clone()))
                .collect(),
            leadership.clone(),
            stopping,
            probes.clone(),
            self.drain_deadline,
        ));
        Ok(RunningRunner {
            leadership,
            endpoints_addr: endpoints.as_ref().map(|(addr, _)| *addr),
            #[cfg(feature = "webhook-server")]
            webhooks_addr: webhooks.as_ref().map(|w| w.local_addr()),
            metrics: self.metrics,
            stop,
            tasks: Tasks {
                supervisor,
                leader,
                phase,
                probes,
                #[cfg(feature = "webhook-server")]
                webhooks,
                endpoints: endpoints.map(|(_, task)| (stop_endpoints, task)),
            },
        })
    }

    /// Runs until `signal` resolves, then shuts down as [`RunningRunner::shutdown`] does.
    pub async fn run_until(self, signal: impl Future<Output = ()>) -> Result<(), RunnerError> {
        let running = self.start().await?;
        signal.await;
        running.shutdown().await;
        Ok(())
    }

    /// Runs until SIGTERM (what the kubelet sends a pod it stops) or ctrl-c, then shuts down.
    pub async fn run_until_signalled(self) -> Result<(), RunnerError> {
        self.run_until(super::signal::shutdown_signal()).await
    }

    fn serves_webhooks(&self) -> bool {
        #[cfg(feature = "webhook-server")]
        {
            self.webhooks.is_some()
        }
        #[cfg(not(feature = "webhook-server"))]
        {
            false
        }
    }
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.controllers.iter().map(|c| c.name.as_str()).collect();
        f.debug_struct("Runner")
            .field("controllers", &names)
            .field("election", &self.election)
            .field("endpoints", &self.endpoints)
            .field("drain_deadline", &self.drain_deadline)
            .finish_non_exhaustive()
    }
}

/// A controller added to a runner, built when it starts.
struct PendingController {
    name: String,
    max_concurrent: u16,
    sees_the_queue: bool,
    build: Box<dyn FnOnce(Metrics) -> Arc<dyn Managed> + Send>,
}

/// A started [`Runner`]. [`shutdown`](Self::shutdown) stops it gracefully; dropping it stops it
/// at once instead: reconciles are cancelled, the endpoints and webhooks close, and a leader
/// stops renewing and leaves its Lease to expire (another replica takes over after the lease
/// duration, as after a crash).
#[derive(Debug)]
pub struct RunningRunner {
    leadership: watch::Receiver<Leadership>,
    endpoints_addr: Option<SocketAddr>,
    #[cfg(feature = "webhook-server")]
    webhooks_addr: Option<SocketAddr>,
    metrics: Metrics,
    stop: watch::Sender<bool>,
    tasks: Tasks,
}

#[derive(Debug)]
struct Tasks {
    supervisor: JoinHandle<Drained>,
    leader: Leader,
    phase: watch::Sender<Phase>,
    probes: Probes,
    #[cfg(feature = "webhook-server")]
    webhooks: Option<crate::admission::RunningWebhookServer>,
    endpoints: Option<(watch::Sender<bool>, JoinHandle<()>)>,
}

/// Who decides that this replica leads.
#[derive(Debug)]
enum Leader {
    /// The elector's task, which owns the leadership channel.
    Elected(JoinHandle<()>),
    /// Nobody: it always leads (kept, so the channel stays open).
    Always {
        _keeps_open: watch::Sender<Leadership>,
    },
}

/// How a shutdown went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Drained {
    /// Every reconcile under way finished (or none was).
    Finished,
    /// Some were still running when they had to stop, and were cancelled: at the drain
    /// deadline, or at once when the Lease was lost during the drain.
    Cancelled,
}

impl RunningRunner {
    /// Whether this replica leads, and who does: a receiver that sees each change. Without
    /// leader election it always leads.
    pub fn leadership(&self) -> watch::Receiver<Leadership> {
        self.leadership.clone()
    }

    /// Where `/metrics`, `/healthz` and `/readyz` are served, when they are.
    pub fn endpoints_addr(&self) -> Option<SocketAddr> {
        self.endpoints_addr
    }

    /// Where the webhook server listens, when there is one.
    #[cfg(feature = "webhook-server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
    pub fn webhooks_addr(&self) -> Option<SocketAddr> {
        self.webhooks_addr
    }

    /// The runner's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Shuts down: readiness fails, the controllers drain (up to the deadline), the webhook
    /// server stops, a leader releases the Lease, the endpoints stop.
    pub async fn shutdown(self) -> Drained {
        let tasks = self.tasks;
        tasks.probes.shutting_down();
        tasks.phase.send_replace(Phase::Draining);
        self.stop.send_replace(true);
        let drained = tasks.supervisor.await.unwrap_or_else(|e| {
            tracing::error!(error = %e, "the runner's supervisor failed");
            Drained::Cancelled
        });
        #[cfg(feature = "webhook-server")]
        if let Some(webhooks) = tasks.webhooks {
            webhooks.shutdown().await;
        }
        tasks.phase.send_replace(Phase::Release);
        if let Leader::Elected(elector) = tasks.leader
            && let Err(e) = elector.await
        {
            tracing::error!(error = %e, "the leader election failed");
        }
        if let Some((stop, task)) = tasks.endpoints {
            stop.send_replace(true);
            let _ = task.await;
        }
        tracing::info!(?drained, "the runner stopped");
        drained
    }
}

/// What ends a leadership term.
enum TermEnd {
    /// The runner is shutting down: drain.
    Shutdown,
    /// This replica no longer leads: stop at once, before another replica may start.
    LostLease,
    /// The runner's handle was dropped: stop at once.
    Dropped,
}

/// Runs the controllers in each term this replica leads, until told to stop.
///
/// No reconcile outlives this replica's leadership: a lost Lease cancels the reconciles under
/// way at once, whether the term was running or draining for shutdown (controller-runtime
/// cancels its reconcilers' context as soon as leadership is lost), and so does a dropped
/// handle.
async fn supervise(
    controllers: Vec<Arc<dyn Managed>>,
    mut leadership: watch::Receiver<Leadership>,
    mut stop: watch::Receiver<bool>,
    probes: Probes,
    drain_deadline: Duration,
) -> Drained {
    loop {
        let elector_gone = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => return Drained::Finished,
            led = leadership.wait_for(|l| l.leading) => led.is_err(),
        };
        if elector_gone {
            // Nothing will lead again.
            let _ = stop.wait_for(|s| *s).await;
            return Drained::Finished;
        }
        probes.set_leading(true);
        let mut terms = JoinSet::new();
        let mut stops = Vec::with_capacity(controllers.len());
        let mut syncs = Vec::with_capacity(controllers.len());
        for controller in &controllers {
            let (stop_term, term_stopped) = oneshot::channel();
            let (synced, sync_seen) = oneshot::channel();
            stops.push(stop_term);
            syncs.push(sync_seen);
            terms.spawn(controller.term(term_stopped, synced));
        }
        let sync_probes = probes.clone();
        let syncing = tokio::spawn(async move {
            for sync in syncs {
                if sync.await.is_err() {
                    return;
                }
            }
            sync_probes.set_synced();
        });
        tracing::info!(
            controllers = controllers.len(),
            "leading: the controllers start"
        );
        let ended = tokio::select! {
            biased;
            // A closed channel is a dropped handle, not a shutdown.
            stopped = stop.wait_for(|s| *s) => if stopped.is_ok() {
                TermEnd::Shutdown
            } else {
                TermEnd::Dropped
            },
            _ = leadership.wait_for(|l| !l.leading) => TermEnd::LostLease,
        };
        syncing.abort();
        match ended {
            TermEnd::LostLease => {
                terms.shutdown().await;
                probes.set_leading(false);
                tracing::warn!("no longer leading: the controllers were stopped");
                continue;
            }
            TermEnd::Dropped => {
                terms.shutdown().await;
                tracing::warn!("the runner was dropped: its reconciles were cancelled");
                return Drained::Cancelled;
            }
            TermEnd::Shutdown => {}
        }
        for stop_term in stops {
            let _ = stop_term.send(());
        }
        let drained = {
            let draining = async { while terms.join_next().await.is_some() {} };
            tokio::select! {
                biased;
                _ = leadership.wait_for(|l| !l.leading) => Err(TermEnd::LostLease),
                // Only a dropped handle ends this wait.
                _ = stop.wait_for(|_| false) => Err(TermEnd::Dropped),
                finished = tokio::time::timeout(drain_deadline, draining) => finished.map_err(|_| TermEnd::Shutdown),
            }
        };
        return match drained {
            Ok(()) => Drained::Finished,
            Err(why) => {
                match why {
                    TermEnd::LostLease => tracing::warn!(
                        "the Lease was lost while draining: the reconciles under way were cancelled"
                    ),
                    TermEnd::Dropped => tracing::warn!(
                        "the runner was dropped while draining: its reconciles were cancelled"
                    ),
                    TermEnd::Shutdown => tracing::warn!(
                        ?drain_deadline,
                        "reconciles still under way at the drain deadline were cancelled"
                    ),
                }
                terms.shutdown().await;
                Drained::Cancelled
            }
        };
    }
}

/// Keeps `leader_election_master_status` and the log up to date with the election.
async fn report_leadership(
    mut leadership: watch::Receiver<Leadership>,
    lease: String,
    metrics: Metrics,
) {
    loop {
        let now = leadership.borrow_and_update().clone();
        metrics.leading(&lease, now.leading);
        if leadership.changed().await.is_err() {
            return;
        }
    }
}

/// Why a runner could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// Neither controllers nor webhooks were given.
    #[error("the runner has no controllers and no webhooks to run")]
    NothingToRun,
    /// Two controllers share a name, which their metrics could not tell apart.
    #[error("two controllers are named {name:?}; name one with ResourceReconciler::named")]
    DuplicateController {
        /// The name.
        name: String,
    },
    /// The leader election settings cannot work.
    #[error(transparent)]
    Election(#[from] ElectionSettingsError),
    /// The endpoints could not listen.
    #[error("cannot serve /metrics, /healthz and /readyz on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The webhook server could not start.
    #[cfg(feature = "webhook-server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
    #[error(transparent)]
    Webhooks(#[from] crate::admission::WebhookServerError),
}
