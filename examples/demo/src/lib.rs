//! recon's demo: the example operators ([`function_operator`], [`gateway_operator`]) under
//! kube's `Controller`, and the [`admission_webhook`]s over HTTPS, against recon's in-memory
//! API server or a real cluster. [`run`] plays a scenario (create, edit, delete), printing what
//! happens through `tracing` as it happens (each reconcile with the writes it sent and the
//! events it published), and returns a [`Summary`] with the transcript of what it printed.

pub mod cli;
pub mod failover;
mod kubelet;
pub mod logging;
mod observe;
mod operators;
mod output;
mod scenario;
mod summary;
mod tap;
mod target;
pub mod versions;

use std::time::Duration;

pub use output::Line;
pub use scenario::{NAMESPACE, run};
pub use summary::{StepReport, Summary};
pub use target::{Target, forbidden_requests};

/// How long the demo waits for a cluster to get where a step wants it.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A request failed.
    #[error("{step}: {}", explain(.source))]
    Kube {
        /// What the demo was doing.
        step: String,
        /// The failure.
        source: kube::Error,
    },
    /// A step did not reach its state in time.
    #[error("gave up waiting for {what} after {}s", WAIT.as_secs())]
    Timeout {
        /// What was awaited.
        what: String,
    },
    /// Waiting failed.
    #[error("{what}: {message}")]
    Wait {
        /// What was awaited.
        what: String,
        /// Why it failed.
        message: String,
    },
    /// The webhook server failed.
    #[error("the admission webhooks: {0}")]
    Webhook(String),
}

impl DemoError {
    pub(crate) fn kube(step: &str, source: kube::Error) -> Self {
        DemoError::Kube {
            step: step.to_owned(),
            source,
        }
    }
}

/// A failed request as the API server worded it; kube's own text dumps the whole `Status`.
fn explain(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        // No Status in the answer: a server that does not serve the API at all (an
        // apiextensions-apiserver has no namespaces or Deployments, say).
        kube::Error::Api(_) => {
            "the API server answered with an error and no Status: does it serve this API?"
                .to_owned()
        }
        other => other.to_string(),
    }
}
