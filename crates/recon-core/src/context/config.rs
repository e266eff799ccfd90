//! What reconcilers work with: the client, a reader, the event recorder, and the tracker.

use super::events::{EventRecorder, SharedRecorder};
use super::tracker::Tracker;

/// The dependencies of a reconciler tree, reachable from every hook through
/// [`Context::config`](crate::Context::config).
///
/// ```
/// # async fn demo(client: kube::Client) {
/// use recon_core::{Config, EventLog};
///
/// let events = EventLog::default();
/// let config = Config::new(client.clone(), "widget-controller").with_recorder(events.clone());
/// # let _ = config;
/// # }
/// ```
#[derive(Clone)]
pub struct Config {
    client: kube::Client,
    api_reader: kube::Client,
    recorder: SharedRecorder,
    tracker: Tracker,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config").finish_non_exhaustive()
    }
}

impl Config {
    /// A config whose events are published as events.k8s.io/v1 Events reported by `controller`.
    pub fn new(client: kube::Client, controller: &str) -> Self {
        let reporter = kube::runtime::events::Reporter {
            controller: controller.to_owned(),
            instance: None,
        };
        let recorder = kube::runtime::events::Recorder::new(client.clone(), reporter);
        Config {
            api_reader: client.clone(),
            client,
            recorder: SharedRecorder::new(recorder),
            tracker: Tracker::default(),
        }
    }

    /// The same config publishing events through `recorder`.
    #[must_use]
    pub fn with_recorder(mut self, recorder: impl EventRecorder + 'static) -> Self {
        self.recorder = SharedRecorder::new(recorder);
        self
    }

    /// The same config reading through `reader` (for example a client for a read replica or with
    /// other credentials); by default reads use the client.
    #[must_use]
    pub fn with_api_reader(mut self, reader: kube::Client) -> Self {
        self.api_reader = reader;
        self
    }

    /// The same config tracking with `tracker` (by default a tracker of its own, with
    /// [`DEFAULT_LEASE`](crate::DEFAULT_LEASE)); share one tracker between the configs of a
    /// controller so that its watches can find the observers.
    #[must_use]
    pub fn with_tracker(mut self, tracker: Tracker) -> Self {
        self.tracker = tracker;
        self
    }

    /// Writes go through `client` from now on (the runner's metered client); the API reader and
    /// the recorder keep theirs.
    #[cfg(feature = "runner")]
    pub(crate) fn replace_client(&mut self, client: kube::Client) {
        self.client = client;
    }

    /// The tracker.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// The client for writes (and reads, unless an API reader is set).
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The client for reads that must see the latest state.
    pub fn api_reader(&self) -> &kube::Client {
        &self.api_reader
    }

    /// The event recorder.
    pub fn recorder(&self) -> &SharedRecorder {
        &self.recorder
    }
}
