//! How a replica takes part in leader election: the Lease it competes for, who it is, and the
//! timings, checked as client-go's `NewLeaderElector` checks them.

use std::time::Duration;

/// client-go's `JitterFactor`: a candidate waits between one and 2.2 retry periods between
/// tries, and the renew deadline must leave room for one such wait.
pub(crate) const JITTER_FACTOR: f64 = 1.2;

/// Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection`
/// package runs it (and so controller-runtime's manager): the replica holding the Lease
/// reconciles, the others wait to take it over.
///
/// A replica decides from when *it* saw the Lease change, never from the times written in it,
/// so clocks that disagree between nodes do not matter (only their rates must roughly agree).
///
/// ```
/// use std::time::Duration;
/// use recon_core::runner::LeaderElection;
///
/// let election = LeaderElection::new("function-operator", "operators", "pod-a")
///     .lease_duration(Duration::from_secs(15))
///     .renew_deadline(Duration::from_secs(10))
///     .retry_period(Duration::from_secs(2));
/// assert!(election.check().is_ok());
/// ```
#[derive(Clone)]
pub struct LeaderElection {
    pub(crate) lease: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
    pub(crate) lease_duration: Duration,
    pub(crate) renew_deadline: Duration,
    pub(crate) retry_period: Duration,
    pub(crate) client: Option<kube::Client>,
    pub(crate) release_on_shutdown: bool,
}

impl LeaderElection {
    /// Competes for the Lease `lease` in `namespace` as `identity` (a pod name, unique among the
    /// replicas), with controller-runtime's timings: a 15 s lease, renewed within 10 s, tried every
    /// 2 s.
    pub fn new(
        lease: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaderElection {
            lease: lease.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            client: None,
            release_on_shutdown: true,
        }
    }

    /// How long the others wait, from the last change they saw, before taking the Lease over.
    /// Whole seconds: the Lease stores `leaseDurationSeconds`.
    #[must_use]
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader may go without renewing before it gives up leading, counted from
    /// the start of its last renewal that succeeded. Shorter than the lease duration: the
    /// leader stops at least `leaseDuration - renewDeadline` before another replica may take
    /// the Lease, for every timing [`check`](Self::check) accepts.
    ///
    /// client-go counts it from the first renewal that failed, a retry period after the last
    /// success, so its real margin is `leaseDuration - renewDeadline - retryPeriod`, which is
    /// negative when the two add up past the lease (3 s, 2 s, 1.5 s passes its checks). With
    /// recon the same timings give up a retry period sooner, and keep the margin.
    #[must_use]
    pub fn renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// How often the leader renews and a candidate tries (a candidate adds up to 1.2 times this
    /// at random, so replicas do not try in step).
    #[must_use]
    pub fn retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// The client for the Lease; by default the runner's. A client of its own lets the Lease be
    /// reached with other credentials, or a test cut it off from the API server alone.
    #[must_use]
    pub fn client(mut self, client: kube::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Whether a leader shutting down hands the Lease back (default), so another replica takes
    /// over at once instead of after the lease duration. Only safe when the process stops
    /// reconciling before it releases, which the runner makes sure of.
    #[must_use]
    pub fn release_on_shutdown(mut self, release: bool) -> Self {
        self.release_on_shutdown = release;
        self
    }

    /// The identity this replica holds the Lease under.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The Lease's name.
    pub fn lease(&self) -> &str {
        &self.lease
    }

    /// Checks the settings as client-go's `NewLeaderElector` does.
    pub fn check(&self) -> Result<(), ElectionSettingsError> {
        let fail = |reason: &str| {
            Err(ElectionSettingsError {
                lease: format!("{}/{}", self.namespace, self.lease),
                reason: reason.to_owned(),
            })
        };
        if self.lease.is_empty() || self.namespace.is_empty() {
            return fail("the Lease needs a name and a namespace");
        }
        if self.identity.is_empty() {
            return fail("the identity is empty");
        }
        if self.retry_period.is_zero() {
            return fail("retryPeriod must be greater than zero");
        }
        if self.lease_duration < Duration::from_secs(1) || self.lease_duration.subsec_nanos() != 0 {
            return fail("leaseDuration must be a whole number of seconds, at least one");
        }
        if i32::try_from(self.lease_duration.as_secs()).is_err() {
            return fail("leaseDuration must fit leaseDurationSeconds (an int32)");
        }
        if self.lease_duration <= self.renew_deadline {
            return fail("leaseDuration must be greater than renewDeadline");
        }
        if self.renew_deadline <= self.retry_period.mul_f64(JITTER_FACTOR) {
            return fail("renewDeadline must be greater than retryPeriod*JitterFactor (1.2)");
        }
        Ok(())
    }

    pub(crate) fn lease_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

impl std::fmt::Debug for LeaderElection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElection")
            .field("lease", &format_args!("{}/{}", self.namespace, self.lease))
            .field("identity", &self.identity)
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("own_client", &self.client.is_some())
            .field("release_on_shutdown", &self.release_on_shutdown)
            .finish()
    }
}

/// Leader election settings that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("leader election on the Lease {lease}: {reason}")]
pub struct ElectionSettingsError {
    /// `namespace/name` of the Lease.
    pub lease: String,
    /// What is wrong.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn election() -> LeaderElection {
        LeaderElection::new("op", "ns", "a")
    }

    #[test]
    fn controller_runtime_timings_pass_client_go_checks() {
        assert_eq!(election().check(), Ok(()));
    }

    #[test]
    fn a_renew_deadline_as_long_as_the_lease_is_refused() {
        let err = election()
            .renew_deadline(Duration::from_secs(15))
            .check()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "leader election on the Lease ns/op: leaseDuration must be greater than renewDeadline"
        );
    }

    #[test]
    fn a_renew_deadline_within_one_jittered_retry_is_refused() {
        // 10 s <= 1.2 * 9 s.
        let err = election()
            .retry_period(Duration::from_secs(9))
            .check()
            .unwrap_err();
        assert!(err.reason.contains("JitterFactor"), "{err}");
    }

    #[test]
    fn lease_durations_are_whole_seconds() {
        let err = election()
            .lease_duration(Duration::from_millis(15_500))
            .check()
            .unwrap_err();
        assert!(err.reason.contains("whole number of seconds"), "{err}");
    }

    #[test]
    fn an_empty_identity_is_refused() {
        let err = LeaderElection::new("op", "ns", "").check().unwrap_err();
        assert_eq!(err.reason, "the identity is empty");
    }
}
