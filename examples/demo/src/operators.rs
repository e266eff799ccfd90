//! The operators under kube's `Controller`, as the demo watches them: each reconcile is printed
//! as one block with the writes it sent and the events it published, the writes are counted by
//! step, and the scenario can wait until the operators have nothing left to do.
//!
//! Each operator writes through its own tapped client (see [`crate::tap`]) and reconciles one
//! object at a time (the controller's concurrency is 1), so every request it sends belongs to the
//! reconcile under way. Its controller watches through another, untapped client: the watches are
//! kube's machinery, not the reconciles' doing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::{controller, watcher};
use kube::{Api, Resource, ResourceExt};
use recon_core::{
    Config, Event, EventRecorder, EventType, Reconciled, ResourceReconciler, Tracker,
};
use recon_fake::ApiServer;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::observe::lock;
use crate::output::Output;
use crate::tap::{Sent, tap};

/// How long [`Activity::settle`] waits at most: past it the scenario goes on anyway.
const SETTLE: Duration = Duration::from_secs(10);

/// On a cluster, which keeps writing on its own (its Deployment controller), the operators are
/// taken as done once no reconcile has begun or ended for this long.
const QUIET_ON_A_CLUSTER: Duration = Duration::from_secs(1);

/// What the operators do, shared by all of them and the scenario.
#[derive(Clone)]
pub(crate) struct Activity {
    state: Arc<Mutex<State>>,
    output: Output,
    /// The in-memory server: its resourceVersion tells whether anything at all was written since
    /// a reconcile began. `None` on a cluster.
    server: Option<ApiServer>,
}

#[derive(Default)]
struct State {
    /// The reconcile under way, by operator.
    under_way: BTreeMap<&'static str, Reconcile>,
    /// The last reconcile that ended, by operator.
    last: BTreeMap<&'static str, Finished>,
    /// When a reconcile last began or ended.
    last_change: Option<Instant>,
    /// The writes sent since the step began, as `VERB resource` → count.
    step_writes: BTreeMap<String, usize>,
    /// `Normal Created`…: the type and reason of every event the operators published.
    events: BTreeSet<String>,
}

struct Reconcile {
    /// `Gateway edge`.
    object: String,
    /// The server's resourceVersion when it began (in memory).
    began_at: Option<u64>,
    entries: Vec<Entry>,
}

struct Finished {
    began_at: Option<u64>,
    wrote: bool,
}

/// A request the reconcile sent, an event it published, or both: kube's `Recorder` sends one
/// request per event.
struct Entry {
    sent: Option<Sent>,
    event: Option<Published>,
}

/// An event as the operator published it: its own note, which the request does not carry when
/// kube's `Recorder` counts it as a repeat of an earlier event (a PATCH of that event's series).
struct Published {
    line: String,
    error: Option<String>,
}

impl Activity {
    pub(crate) fn new(output: Output, server: Option<ApiServer>) -> Self {
        Activity {
            state: Arc::default(),
            output,
            server,
        }
    }

    /// The writes the operators sent since the last call.
    pub(crate) fn take_step_writes(&self) -> BTreeMap<String, usize> {
        std::mem::take(&mut lock(&self.state).step_writes)
    }

    /// The type and reason of every event the operators published.
    pub(crate) fn events(&self) -> BTreeSet<String> {
        lock(&self.state).events.clone()
    }

    /// Waits until the operators are done with what the scenario did: no reconcile under way, the
    /// last one of each operator wrote nothing, and the latest began after the last write anyone
    /// made (in memory, where every write moves the server's resourceVersion, and every write an
    /// operator watches makes it reconcile again). On a cluster: no reconcile under way, the last
    /// one of each wrote nothing, and none began or ended for [`QUIET_ON_A_CLUSTER`]. At most
    /// [`SETTLE`].
    pub(crate) async fn settle(&self) {
        let deadline = Instant::now() + SETTLE;
        while !self.settled() {
            if Instant::now() >= deadline {
                tracing::debug!(
                    "the operators were still busy after {}s; going on",
                    SETTLE.as_secs()
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn settled(&self) -> bool {
        let state = lock(&self.state);
        let idle = state.under_way.is_empty()
            && !state.last.is_empty()
            && state.last.values().all(|l| !l.wrote);
        if !idle {
            return false;
        }
        match &self.server {
            Some(server) => {
                let latest = state.last.values().filter_map(|l| l.began_at).max();
                latest == Some(server.resource_version())
            }
            None => state
                .last_change
                .is_some_and(|t| t.elapsed() >= QUIET_ON_A_CLUSTER),
        }
    }
}

/// One operator, as the demo watches it. `name` is the controller name its events report.
#[derive(Clone)]
pub(crate) struct Operator {
    name: &'static str,
    activity: Activity,
}

impl Operator {
    pub(crate) fn new(name: &'static str, activity: &Activity) -> Self {
        Operator {
            name,
            activity: activity.clone(),
        }
    }

    /// The operator's config: writes through a client that reports each request, events through
    /// kube's `Recorder` on that client, printed as published.
    pub(crate) fn config(&self, client: kube::Client) -> Config {
        let this = self.clone();
        let client = tap(client, Arc::new(move |sent| this.sent(sent)));
        let reporter = Reporter {
            controller: self.name.to_owned(),
            instance: None,
        };
        let recorder = PrintedRecorder {
            inner: Recorder::new(client.clone(), reporter),
            operator: self.clone(),
        };
        Config::new(client, self.name).with_recorder(recorder)
    }

    fn sent(&self, sent: Sent) {
        let mut state = lock(&self.activity.state);
        if sent.is_write() {
            *state.step_writes.entry(sent.what()).or_insert(0) += 1;
        }
        match state.under_way.get_mut(self.name) {
            Some(reconcile) => reconcile.entries.push(Entry {
                sent: Some(sent),
                event: None,
            }),
            None if sent.is_write() => {
                drop(state);
                let line = format!(
                    "{} wrote outside a reconcile: {}",
                    self.name,
                    sent.describe()
                );
                self.activity.output.note(line);
            }
            None => {}
        }
    }

    /// An event published: it goes with the event request it sent, the last one of the reconcile
    /// without its event yet (the operator publishes one event at a time).
    fn published(&self, event: &Event, regarding: &ObjectReference, error: Option<String>) {
        let type_ = match event.type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let line = format!(
            "event {type_} {} on {} {}: {}",
            event.reason,
            regarding.kind.as_deref().unwrap_or("?"),
            regarding.name.as_deref().unwrap_or("?"),
            event.note.as_deref().unwrap_or("")
        );
        let published = Published { line, error };
        let mut state = lock(&self.activity.state);
        if published.error.is_none() {
            state.events.insert(format!("{type_} {}", event.reason));
        }
        let Some(reconcile) = state.under_way.get_mut(self.name) else {
            drop(state);
            self.activity.output.note(published.line);
            return;
        };
        let request = reconcile.entries.iter_mut().rev().find(|e| {
            e.event.is_none() && e.sent.as_ref().is_some_and(|s| s.series_count.is_some())
        });
        match request {
            Some(entry) => entry.event = Some(published),
            None => reconcile.entries.push(Entry {
                sent: None,
                event: Some(published),
            }),
        }
    }

    fn begin(&self, object: String) {
        let began_at = self
            .activity
            .server
            .as_ref()
            .map(ApiServer::resource_version);
        let mut state = lock(&self.activity.state);
        state.last_change = Some(Instant::now());
        state.under_way.insert(
            self.name,
            Reconcile {
                object,
                began_at,
                entries: Vec::new(),
            },
        );
    }

    fn end(&self, error: Option<String>) {
        let mut state = lock(&self.activity.state);
        state.last_change = Some(Instant::now());
        let Some(reconcile) = state.under_way.remove(self.name) else {
            return;
        };
        let wrote = reconcile
            .entries
            .iter()
            .any(|e| e.sent.as_ref().is_some_and(Sent::is_write));
        // Printed before the state is released: once `settle` sees the reconcile ended, its block
        // is out, and the scenario's next line comes after it.
        let (text, with_reads) = render(&reconcile, wrote, error.as_deref());
        self.activity
            .output
            .reconcile(&reconcile.object, wrote, text, with_reads);
        state.last.insert(
            self.name,
            Finished {
                began_at: reconcile.began_at,
                wrote,
            },
        );
    }
}

/// The block of a reconcile, without and with its reads:
///
/// ```text
/// reconcile Function hello:
///   POST deployments hello → 201
///   event Normal Created on Function hello: Created Deployment "hello" (series repeat: count 3)
/// ```
fn render(reconcile: &Reconcile, wrote: bool, error: Option<&str>) -> (String, String) {
    let header = match (error, wrote) {
        (Some(error), _) => format!("reconcile {} failed: {error}", reconcile.object),
        (None, true) => format!("reconcile {}:", reconcile.object),
        (None, false) => format!("reconcile {}: no writes", reconcile.object),
    };
    let mut text = header.clone();
    let mut with_reads = header;
    for entry in &reconcile.entries {
        let (line, is_write) = match (&entry.event, &entry.sent) {
            (Some(event), sent) => (describe_event(event, sent.as_ref()), true),
            (None, Some(sent)) => (sent.describe(), sent.is_write()),
            (None, None) => continue,
        };
        if is_write {
            text.push_str(&format!("\n  {line}"));
        }
        with_reads.push_str(&format!("\n  {line}"));
    }
    (text, with_reads)
}

/// An event as published, and how: a new event, a repeat that kube's `Recorder` folded into the
/// series of an earlier one (same type, reason, action and object; the note may differ), or not
/// published at all.
fn describe_event(event: &Published, sent: Option<&Sent>) -> String {
    let how = match (sent, &event.error) {
        (_, Some(error)) => format!(" (not published: {error})"),
        (None, None) => String::new(),
        (Some(sent), None) => match (&sent.outcome, sent.series_count) {
            (Ok(code), _) if !(200..300).contains(code) => format!(" (not published: {code})"),
            (Err(err), _) => format!(" (not published: {err})"),
            (_, Some(Some(count))) => format!(" (series repeat: count {count})"),
            _ => String::new(),
        },
    };
    format!("{}{how}", event.line)
}

/// kube's `Recorder`, telling the operator what each event said.
struct PrintedRecorder {
    inner: Recorder,
    operator: Operator,
}

impl EventRecorder for PrintedRecorder {
    async fn publish(&self, event: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
        let result = EventRecorder::publish(&self.inner, event, regarding).await;
        let error = result.as_ref().err().map(ToString::to_string);
        self.operator.published(event, regarding, error);
        result
    }
}

/// Runs the operator `reconciler` makes under kube's `Controller`, for the objects of
/// `namespace`, until `stopping` turns true: one reconcile at a time, each printed as it ends.
/// The reconciles write through a config whose client reports each request; the controller
/// watches through `client` itself (its watches are kube's machinery, not a reconcile's doing).
/// Both configs share a tracker, so that a change to what a reconcile tracked reaches the
/// controller.
pub(crate) fn start<R>(
    operator: Operator,
    reconciler: fn(Config) -> ResourceReconciler<R>,
    client: &kube::Client,
    namespace: &str,
    mut stopping: watch::Receiver<bool>,
) -> JoinHandle<()>
where
    R: Reconciled
        + Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Debug
        + Unpin,
{
    let tracker = Tracker::default();
    let watches =
        reconciler(Config::new(client.clone(), operator.name).with_tracker(tracker.clone()));
    let reconciler = reconciler(operator.config(client.clone()).with_tracker(tracker));
    let controller = watches
        .controller(
            Api::namespaced(client.clone(), namespace),
            watcher::Config::default(),
        )
        .with_config(controller::Config::default().concurrency(1))
        .graceful_shutdown_on(async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        });
    let reconcile = move |object: Arc<R>, this: Arc<ResourceReconciler<R>>| {
        let operator = operator.clone();
        async move {
            operator.begin(format!("{} {}", R::kind(&()), object.name_any()));
            let result = ResourceReconciler::reconcile_object(object, this).await;
            operator.end(result.as_ref().err().map(ToString::to_string));
            result
        }
    };
    tokio::spawn(
        controller
            .run(
                reconcile,
                ResourceReconciler::error_policy,
                Arc::new(reconciler),
            )
            .for_each(|result| async move {
                if let Err(err) = result {
                    tracing::debug!("controller: {err}");
                }
            }),
    )
}
