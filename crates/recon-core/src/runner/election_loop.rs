//! The leader election loop: client-go's `tryAcquireOrRenew`, `acquire`, `renew` and `release`
//! on a Lease, timed by Tokio's clock (which a test can pause and advance).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::{Duration, Instant};

use super::election_settings::{JITTER_FACTOR, LeaderElection};
use super::metrics::Metrics;
use super::probes::Probes;

/// What a replica knows of the election.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Leadership {
    /// This replica holds the Lease and reconciles.
    pub leading: bool,
    /// The holder this replica last saw in the Lease (itself when leading); `None` before the
    /// first read, or when nobody holds it.
    pub holder: Option<String>,
}

/// Where the runner is, as the elector needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Campaign, lead, renew.
    Running,
    /// Shutting down: stop campaigning, but a leader keeps renewing while its reconciles drain.
    Draining,
    /// The controllers have stopped: hand the Lease back and end.
    Release,
}

pub(crate) struct Elector {
    api: Api<Lease>,
    settings: LeaderElection,
    /// The Lease as last read or written: its resourceVersion guards the next update, so two
    /// candidates cannot both take it.
    lease: Option<Lease>,
    /// The Lease's spec as last seen, and when this replica saw it change.
    observed: Option<(LeaseSpec, Instant)>,
    /// When the last try that took or renewed the Lease began: the renew deadline counts from
    /// there, so the leader stops before any other replica can see the Lease expire.
    renewed_at: Option<Instant>,
    /// Told of each renewal, for `/healthz`.
    probes: Probes,
    /// Counts renewals that had to read the Lease first.
    metrics: Metrics,
}

impl Elector {
    pub(crate) fn new(
        settings: LeaderElection,
        client: kube::Client,
        probes: Probes,
        metrics: Metrics,
    ) -> Self {
        let client = settings.client.clone().unwrap_or(client);
        Elector {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            lease: None,
            observed: None,
            renewed_at: None,
            probes,
            metrics,
        }
    }

    /// Campaigns, leads and renews until told to release, publishing each change to `state`.
    /// A leader that cannot renew within the renew deadline, or sees another holder, stops
    /// leading at once and campaigns again. If the runner's handle is dropped, it stops without
    /// releasing.
    pub(crate) async fn run(
        mut self,
        state: watch::Sender<Leadership>,
        mut phase: watch::Receiver<Phase>,
    ) {
        loop {
            // A candidate.
            loop {
                if *phase.borrow() != Phase::Running {
                    return;
                }
                let acquired = self.attempt(self.settings.renew_deadline).await;
                self.publish(&state, acquired);
                if acquired {
                    self.probes.renewed();
                    tracing::info!(lease = %self.describe(), identity = %self.settings.identity, "acquired the lease; leading");
                    break;
                }
                let wait = jittered(self.settings.retry_period);
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    changed = phase.changed() => if changed.is_err() {
                        // The runner's handle was dropped: stop.
                        return;
                    },
                }
            }
            // The leader: renew every retry period; give up when a renewal does not succeed
            // within the renew deadline (client-go's `renew`).
            loop {
                if *phase.borrow() == Phase::Release {
                    self.release().await;
                    self.publish(&state, false);
                    return;
                }
                if !self.renew().await {
                    tracing::warn!(lease = %self.describe(), identity = %self.settings.identity, "could not renew the lease; no longer leading");
                    break;
                }
                self.probes.renewed();
                self.publish(&state, true);
                let release = tokio::select! {
                    () = tokio::time::sleep(self.settings.retry_period) => false,
                    released = phase.wait_for(|p| *p == Phase::Release) => released.is_ok(),
                };
                if !release && phase.has_changed().is_err() {
                    // The runner's handle was dropped, its reconciles cancelled without waiting:
                    // stop renewing, and let the Lease expire rather than hand it over while
                    // one may still be finishing.
                    self.publish(&state, false);
                    return;
                }
            }
            // Not leading any more, whatever the Lease said last: the next try reads it again.
            self.lease = None;
            self.publish(&state, false);
        }
    }

    /// Tries, every retry period, until a try succeeds (true) or the renew deadline passes or
    /// another replica is seen holding the Lease (false).
    ///
    /// The deadline counts from the start of the last successful try, not from the first
    /// failed one as client-go's does: a replica saw that write no earlier than it was sent, so
    /// it cannot take the Lease over before `leaseDuration` after it, and the leader has given
    /// up `leaseDuration - renewDeadline` before that for every timing `check` accepts.
    /// client-go's leader may still be trying `renewDeadline + retryPeriod` after its last
    /// success, past `leaseDuration` when the two add up to more.
    async fn renew(&mut self) -> bool {
        let deadline = self.renewed_at.unwrap_or_else(Instant::now) + self.settings.renew_deadline;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if self.attempt(left).await {
                return true;
            }
            if self.holder().is_some_and(|h| h != self.settings.identity) {
                return false;
            }
            tokio::time::sleep_until((Instant::now() + self.settings.retry_period).min(deadline))
                .await;
        }
    }

    /// One `tryAcquireOrRenew`, abandoned after `limit`.
    async fn attempt(&mut self, limit: Duration) -> bool {
        let began = Instant::now();
        match tokio::time::timeout(limit, self.try_acquire_or_renew()).await {
            Ok(Ok(done)) => {
                if done {
                    self.renewed_at = Some(began);
                }
                done
            }
            // A conflict is another candidate winning a race; anything else (RBAC, a missing
            // namespace, an unreachable server) is worth an operator's attention, as client-go
            // logs it.
            Ok(Err(kube::Error::Api(status))) if status.code == 409 => {
                tracing::debug!(lease = %self.describe(), error = %status.message, "another replica wrote the lease first");
                false
            }
            Ok(Err(err)) => {
                tracing::warn!(lease = %self.describe(), error = %err, "a lease request failed");
                false
            }
            Err(_) => {
                tracing::debug!(lease = %self.describe(), "a lease request took too long");
                false
            }
        }
    }

    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        // client-go writes its record's `LeaderTransitions` (an int, 0 on a new Lease).
        let mut record = LeaseSpec {
            holder_identity: Some(self.settings.identity.clone()),
            lease_duration_seconds: Some(self.settings.lease_seconds()),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        };
        // The fast path: the leader updates the Lease it last wrote, without reading it first.
        if self.is_leader()
            && self.lease_valid()
            && let (Some((observed, _)), Some(lease)) = (&self.observed, self.lease.clone())
        {
            record.acquire_time = observed.acquire_time.clone();
            record.lease_transitions = observed.lease_transitions;
            if self.update(lease, record.clone()).await.is_ok() {
                return Ok(true);
            }
        }
        let current = match self.api.get_opt(&self.settings.lease).await? {
            Some(current) => current,
            None => {
                let mut lease = Lease::default();
                lease.metadata.name = Some(self.settings.lease.clone());
                lease.spec = Some(record.clone());
                let created = self.api.create(&PostParams::default(), &lease).await?;
                self.observe(record, created);
                return Ok(true);
            }
        };
        let spec = current.spec.clone().unwrap_or_default();
        if self.observed.as_ref().is_none_or(|(seen, _)| *seen != spec) {
            self.observed = Some((spec.clone(), Instant::now()));
        }
        let held = spec
            .holder_identity
            .as_deref()
            .is_some_and(|h| !h.is_empty());
        if held && self.lease_valid() && !self.is_leader() {
            return Ok(false);
        }
        if self.is_leader() {
            record.acquire_time = spec.acquire_time;
            record.lease_transitions = spec.lease_transitions;
            self.metrics.slowpath_exercised(&self.settings.lease);
        } else {
            record.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        self.update(current, record).await?;
        Ok(true)
    }

    /// Hands the Lease back as client-go does: no holder, a one-second duration, the
    /// transitions kept. Only the leader does.
    async fn release(&mut self) {
        if !self.settings.release_on_shutdown || !self.is_leader() {
            return;
        }
        let limit = self.settings.renew_deadline;
        let lease = self.describe();
        let released = async {
            let current = self.api.get(&self.settings.lease).await?;
            let transitions = current.spec.as_ref().and_then(|s| s.lease_transitions);
            let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
            self.update(
                current,
                LeaseSpec {
                    lease_duration_seconds: Some(1),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: transitions,
                    ..LeaseSpec::default()
                },
            )
            .await
        };
        match tokio::time::timeout(limit, released).await {
            Ok(Ok(())) => tracing::info!(%lease, "released the lease"),
            Ok(Err(err)) => tracing::warn!(%lease, error = %err, "could not release the lease"),
            Err(_) => tracing::warn!(%lease, "releasing the lease took too long"),
        }
    }

    /// Replaces `lease` (as last read or written) with `record`, guarded by its resourceVersion.
    async fn update(&mut self, mut lease: Lease, record: LeaseSpec) -> Result<(), kube::Error> {
        lease.spec = Some(record.clone());
        let written = self
            .api
            .replace(&self.settings.lease, &PostParams::default(), &lease)
            .await?;
        self.observe(record, written);
        Ok(())
    }

    fn observe(&mut self, record: LeaseSpec, written: Lease) {
        self.observed = Some((record, Instant::now()));
        self.lease = Some(written);
    }

    fn holder(&self) -> Option<String> {
        let (spec, _) = self.observed.as_ref()?;
        spec.holder_identity.clone().filter(|h| !h.is_empty())
    }

    fn is_leader(&self) -> bool {
        self.holder().as_deref() == Some(self.settings.identity.as_str())
    }

    /// client-go's `isLeaseValid`: the duration the Lease itself states, counted from when this
    /// replica saw it change.
    fn lease_valid(&self) -> bool {
        self.observed.as_ref().is_some_and(|(spec, seen)| {
            let seconds = u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0);
            *seen + Duration::from_secs(seconds) > Instant::now()
        })
    }

    /// Publishes whether this replica leads (what the runner acts on: the Lease may still name
    /// it after it gave up) and the holder it saw, itself only when leading.
    fn publish(&self, state: &watch::Sender<Leadership>, leading: bool) {
        let holder = self
            .holder()
            .filter(|h| leading || *h != self.settings.identity);
        let now = Leadership { leading, holder };
        state.send_if_modified(|old| {
            let changed = *old != now;
            *old = now;
            changed
        });
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.settings.namespace, self.settings.lease)
    }
}

/// `period` plus up to 1.2 times it, at random (client-go's `wait.Jitter`).
fn jittered(period: Duration) -> Duration {
    let random = RandomState::new().hash_one(Instant::now());
    let fraction = (random % 1_000_000) as f64 / 1_000_000.0;
    period + period.mul_f64(JITTER_FACTOR * fraction)
}
