//! What `/healthz` and `/readyz` answer: the runner's state, checked as named checks the way
//! kube-apiserver and controller-runtime list them (`[+]name ok`, `[-]name failed: why`).

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::time::{Duration, Instant};

/// kube-controller-manager's tolerance for an overdue lease in its health check
/// (`NewLeaderHealthzAdaptor(20 * time.Second)`).
pub(crate) const LEASE_HEALTH_TOLERANCE: Duration = Duration::from_secs(20);

/// The runner's state, as the probes read it. Clones share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Probes {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// This replica runs the controllers (leads, or runs without an election).
    leading: bool,
    /// With an election: the lease duration, and when the leader last renewed.
    lease: Option<(Duration, Option<Instant>)>,
    /// Every controller's cache listed its objects, in this leadership term.
    synced: bool,
    /// The webhook server, when there is one: listening yet.
    webhooks: Option<bool>,
    shutting_down: bool,
}

/// One check's result.
pub(crate) type Check = (&'static str, Result<(), String>);

impl Probes {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn elect_with(&self, lease_duration: Duration) {
        self.state().lease = Some((lease_duration, None));
    }

    pub(crate) fn set_leading(&self, leading: bool) {
        let mut state = self.state();
        state.leading = leading;
        if !leading {
            state.synced = false;
        }
    }

    pub(crate) fn renewed(&self) {
        if let Some((_, renewed)) = &mut self.state().lease {
            *renewed = Some(Instant::now());
        }
    }

    pub(crate) fn set_synced(&self) {
        self.state().synced = true;
    }

    #[cfg(feature = "webhook-server")]
    pub(crate) fn expect_webhooks(&self) {
        self.state().webhooks = Some(false);
    }

    #[cfg(feature = "webhook-server")]
    pub(crate) fn webhooks_listening(&self) {
        self.state().webhooks = Some(true);
    }

    pub(crate) fn shutting_down(&self) {
        self.state().shutting_down = true;
    }

    /// `/readyz`: ready to serve, once its caches synced when it reconciles.
    pub(crate) fn readiness(&self) -> Vec<Check> {
        let state = self.state();
        let mut checks = vec![(
            "shutdown",
            if state.shutting_down {
                Err("the runner is shutting down".to_owned())
            } else {
                Ok(())
            },
        )];
        checks.push((
            "informer-sync",
            if state.leading && !state.synced {
                Err("the controllers' caches have not synced yet".to_owned())
            } else {
                Ok(())
            },
        ));
        if let Some(listening) = state.webhooks {
            checks.push((
                "webhook",
                if listening {
                    Ok(())
                } else {
                    Err("the webhook server is not listening yet".to_owned())
                },
            ));
        }
        checks
    }

    /// `/healthz`: alive; a leader whose renewals stopped long ago is stuck (client-go's
    /// `HealthzAdaptor`).
    pub(crate) fn liveness(&self) -> Vec<Check> {
        let state = self.state();
        let mut checks: Vec<Check> = vec![("ping", Ok(()))];
        if let Some((lease_duration, renewed)) = state.lease {
            let overdue = state.leading
                && renewed.is_some_and(|at| at.elapsed() > lease_duration + LEASE_HEALTH_TOLERANCE);
            checks.push((
                "leaderElection",
                if overdue {
                    Err("the lease has not been renewed for longer than its duration".to_owned())
                } else {
                    Ok(())
                },
            ));
        }
        checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(checks: &[Check]) -> Vec<&'static str> {
        checks
            .iter()
            .filter(|(_, r)| r.is_err())
            .map(|(n, _)| *n)
            .collect()
    }

    #[test]
    fn a_leader_is_ready_once_synced_and_a_standby_at_once() {
        let probes = Probes::default();
        probes.elect_with(Duration::from_secs(15));
        assert!(
            failed(&probes.readiness()).is_empty(),
            "a standby has nothing to sync"
        );
        probes.set_leading(true);
        assert_eq!(failed(&probes.readiness()), ["informer-sync"]);
        probes.set_synced();
        assert!(failed(&probes.readiness()).is_empty());
        // A new term syncs again.
        probes.set_leading(false);
        probes.set_leading(true);
        assert_eq!(failed(&probes.readiness()), ["informer-sync"]);
    }

    #[cfg(feature = "webhook-server")]
    #[test]
    fn webhooks_and_shutdown_gate_readiness() {
        let probes = Probes::default();
        probes.expect_webhooks();
        assert_eq!(failed(&probes.readiness()), ["webhook"]);
        probes.webhooks_listening();
        assert!(failed(&probes.readiness()).is_empty());
        probes.shutting_down();
        assert_eq!(failed(&probes.readiness()), ["shutdown"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_that_stopped_renewing_is_unhealthy() {
        let probes = Probes::default();
        probes.elect_with(Duration::from_secs(15));
        probes.set_leading(true);
        probes.renewed();
        tokio::time::advance(Duration::from_secs(35)).await;
        assert!(
            failed(&probes.liveness()).is_empty(),
            "15 s + 20 s is tolerated"
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(failed(&probes.liveness()), ["leaderElection"]);
        probes.set_leading(false);
        assert!(
            failed(&probes.liveness()).is_empty(),
            "a standby renews nothing"
        );
    }
}
