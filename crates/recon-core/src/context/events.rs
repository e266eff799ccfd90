//! Events about reconciled resources. Reconcilers publish through the [`EventRecorder`] of their
//! [`Config`](crate::Config): in production kube's `events::Recorder` (events.k8s.io/v1); in
//! tests an [`EventLog`] that keeps them in order, with no timestamps or generated names to
//! redact.

use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;

/// The severity of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something happened as expected.
    Normal,
    /// Something went wrong.
    Warning,
}

/// An event to publish about a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// A short `PascalCase` reason, such as `StatusUpdated`.
    pub reason: String,
    /// A human-readable description.
    pub note: Option<String>,
    /// What was done, in `PascalCase`, such as `UpdateStatus`.
    pub action: String,
}

impl Event {
    /// A Normal event.
    pub fn normal(
        reason: impl Into<String>,
        action: impl Into<String>,
        note: impl Into<String>,
    ) -> Self {
        Self::of(EventType::Normal, reason, action, note)
    }

    /// A Warning event.
    pub fn warning(
        reason: impl Into<String>,
        action: impl Into<String>,
        note: impl Into<String>,
    ) -> Self {
        Self::of(EventType::Warning, reason, action, note)
    }

    fn of(
        type_: EventType,
        reason: impl Into<String>,
        action: impl Into<String>,
        note: impl Into<String>,
    ) -> Self {
        let note = note.into();
        Event {
            type_,
            reason: reason.into(),
            note: (!note.is_empty()).then_some(note),
            action: action.into(),
        }
    }
}

/// Publishes events. Implement it with an `async fn`; the [`Config`](crate::Config) holding
/// the recorder boxes its future once per event.
///
/// ```
/// use k8s_openapi::api::core::v1::ObjectReference;
/// use recon_core::{Event, EventLog, EventRecorder};
///
/// /// Logs each event before a recorder it wraps publishes it.
/// struct Traced<T>(T);
///
/// impl<T: EventRecorder> EventRecorder for Traced<T> {
///     async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
///         tracing::info!(reason = %event.reason, "publishing");
///         self.0.publish(event, regarding).await
///     }
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let log = EventLog::default();
/// Traced(log.clone()).publish(&Event::normal("Created", "Create", ""), &ObjectReference::default()).await.unwrap();
/// assert_eq!(log.events().len(), 1);
/// # });
/// ```
pub trait EventRecorder: Send + Sync {
    /// Publishes `event` about the object `regarding` refers to.
    fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> impl Future<Output = Result<(), kube::Error>> + Send;
}

impl EventRecorder for kube::runtime::events::Recorder {
    async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
        let event = kube::runtime::events::Event {
            type_: match event.type_ {
                EventType::Normal => kube::runtime::events::EventType::Normal,
                EventType::Warning => kube::runtime::events::EventType::Warning,
            },
            reason: event.reason.clone(),
            note: event.note.clone(),
            action: event.action.clone(),
            secondary: None,
        };
        kube::runtime::events::Recorder::publish(self, &event, regarding).await
    }
}

/// An [`EventRecorder`] with its future boxed, so that a [`SharedRecorder`] can hold any.
trait BoxedRecorder: Send + Sync {
    fn publish_boxed<'a>(
        &'a self,
        event: &'a Event,
        regarding: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), kube::Error>>;
}

impl<T: EventRecorder> BoxedRecorder for T {
    fn publish_boxed<'a>(
        &'a self,
        event: &'a Event,
        regarding: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), kube::Error>> {
        Box::pin(self.publish(event, regarding))
    }
}

/// The recorder a [`Config`](crate::Config) holds: any [`EventRecorder`], shared by the
/// config's clones ([`Config::recorder`](crate::Config::recorder)).
#[derive(Clone)]
pub struct SharedRecorder(Arc<dyn BoxedRecorder>);

impl SharedRecorder {
    /// `recorder`, shared.
    pub fn new(recorder: impl EventRecorder + 'static) -> Self {
        SharedRecorder(Arc::new(recorder))
    }

    /// Publishes `event` about the object `regarding` refers to ([`EventRecorder::publish`],
    /// callable without the trait in scope).
    pub fn publish<'a>(
        &'a self,
        event: &'a Event,
        regarding: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), kube::Error>> {
        self.0.publish_boxed(event, regarding)
    }
}

impl std::fmt::Debug for SharedRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedRecorder").finish_non_exhaustive()
    }
}

impl EventRecorder for SharedRecorder {
    async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
        SharedRecorder::publish(self, event, regarding).await
    }
}

/// One event an [`EventLog`] received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// The object the event is about.
    pub regarding: ObjectReference,
    /// The event.
    pub event: Event,
}

/// An [`EventRecorder`] that keeps events in memory, in order. Clones share the log.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use recon_core::{Event, EventLog, EventRecorder};
///
/// let log = EventLog::default();
/// let regarding = Default::default();
/// log.publish(&Event::normal("Created", "Create", "created it"), &regarding).await.unwrap();
/// assert_eq!(log.events()[0].event.reason, "Created");
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    events: Arc<Mutex<Vec<RecordedEvent>>>,
}

impl EventLog {
    /// The events received so far.
    pub fn events(&self) -> Vec<RecordedEvent> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Forgets the events received so far.
    pub fn clear(&self) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl EventRecorder for EventLog {
    async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(RecordedEvent {
                regarding: regarding.clone(),
                event: event.clone(),
            });
        Ok(())
    }
}
