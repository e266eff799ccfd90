//! The request context every hook receives: the config, the request, a stash, and the request
//! time, all fixed for one reconcile. Below it, what it carries: the [`Request`], the
//! [`Config`] (clients, the [`EventRecorder`], the [`Tracker`]) and the [`Stash`]; and the
//! context's reads that track what they read.

mod config;
mod events;
mod request;
mod stash;
mod tracked_reads;
mod tracker;

pub use config::Config;
pub use events::{Event, EventLog, EventRecorder, EventType, RecordedEvent, SharedRecorder};
pub use request::Request;
pub use stash::{Stash, StashError, Stasher};
pub use tracker::{DEFAULT_LEASE, Reference, TrackError, TrackRequest, Tracker};

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;

use crate::admission::Admission;

/// The context of one reconcile, passed to every sub-reconciler and hook.
///
/// ```
/// use recon_core::{Config, Context, Request, Stasher};
///
/// # async fn demo(client: kube::Client) {
/// let config = Config::new(client, "demo");
/// let ctx = Context::new(config, Request::namespaced("default", "w1"))
///     .at("2024-05-01T10:00:00Z".parse().unwrap());
/// const SEEN: Stasher<bool> = Stasher::new("seen");
/// SEEN.store(&ctx, true);
/// assert_eq!(ctx.now().to_string(), "2024-05-01T10:00:00Z");
/// # }
/// ```
#[derive(Debug)]
pub struct Context {
    config: Config,
    original_config: Config,
    stash: Arc<Stash>,
    now: Timestamp,
    request: Request,
    admission: Option<Arc<Admission>>,
}

impl Context {
    /// A fresh context for `request`, timed now.
    pub fn new(config: Config, request: Request) -> Self {
        Context {
            original_config: config.clone(),
            config,
            stash: Arc::default(),
            now: Timestamp::now(),
            request,
            admission: None,
        }
    }

    /// The same context with its request time fixed at `now` (tests pin it).
    #[must_use]
    pub fn at(mut self, now: Timestamp) -> Self {
        self.now = now;
        self
    }

    /// A context for a sub-tree that works with `config` (another cluster, other credentials):
    /// the same request, request time and stash; [`Context::original_config`] stays the config
    /// the reconcile started with.
    ///
    /// ```
    /// use recon_core::{Config, Context, Request, Stasher};
    ///
    /// # async fn demo(main: kube::Client, remote: kube::Client) {
    /// let ctx = Context::new(Config::new(main, "demo"), Request::namespaced("default", "w"));
    /// let remote_ctx = ctx.with_config(Config::new(remote, "demo"));
    /// const SEEN: Stasher<bool> = Stasher::new("seen");
    /// SEEN.store(&remote_ctx, true);
    /// assert_eq!(SEEN.retrieve(&ctx), Ok(true), "one stash");
    /// assert_eq!(remote_ctx.now(), ctx.now());
    /// # }
    /// ```
    pub fn with_config(&self, config: Config) -> Context {
        Context {
            config,
            original_config: self.original_config.clone(),
            stash: Arc::clone(&self.stash),
            now: self.now,
            request: self.request.clone(),
            admission: self.admission.clone(),
        }
    }

    /// The same context handling the admission exchange `admission` (what
    /// [`AdmissionWebhookAdapter`](crate::AdmissionWebhookAdapter) builds).
    #[must_use]
    pub fn with_admission(mut self, admission: Arc<Admission>) -> Self {
        self.admission = Some(admission);
        self
    }

    /// The admission exchange, when the tree runs in an admission webhook: the request being
    /// admitted and the response being built. `None` in a reconcile.
    pub fn admission(&self) -> Option<&Admission> {
        self.admission.as_deref()
    }

    /// The config in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The config the reconcile started with (the one that read the reconciled resource), even
    /// where a sub-tree works with another.
    pub fn original_config(&self) -> &Config {
        &self.original_config
    }

    /// The request time: the same instant for the whole reconcile.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// What is being reconciled.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The request's stash.
    pub fn stash(&self) -> &Stash {
        &self.stash
    }

    /// Publishes `event` about `regarding` with the original config's recorder. A failure to
    /// publish is logged, not returned: events are advisory.
    pub async fn publish(&self, regarding: &ObjectReference, event: Event) {
        if let Err(err) = self
            .original_config
            .recorder()
            .publish(&event, regarding)
            .await
        {
            tracing::warn!(reason = %event.reason, error = %err, "failed to publish event");
        }
    }
}

impl AsRef<Stash> for Context {
    fn as_ref(&self) -> &Stash {
        &self.stash
    }
}
