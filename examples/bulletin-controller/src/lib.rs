//! A kube-rs controller written the way kube's reference controller is, with no recon in it:
//! a finalizer (kube's `finalizer` helper), events through kube's `Recorder`, Prometheus
//! metrics, an error policy, a context built by an `async fn`, and server-side apply without
//! force. For each `Bulletin` it applies a ConfigMap `<name>-bulletin` (owned by the
//! `Bulletin`) holding the message for its audience, and applies the status; an archived
//! `Bulletin` keeps its ConfigMap empty. Deleting one records a `Withdrawn` event before the
//! finalizer goes. Its tests run [`reconcile`] unchanged in recon-testing tables, the whole
//! controller until it settles, and under perturbation exploration (`tests/bulletin`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::{Client, CustomResource, Resource, ResourceExt};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What a `Bulletin` asks for: a message posted for an audience, until archived.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "examples.recon.dev",
    version = "v1",
    kind = "Bulletin",
    namespaced,
    status = "BulletinStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct BulletinSpec {
    /// The message posted.
    pub message: String,
    /// Who it is for; the cluster's default audience when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// An archived bulletin is no longer posted.
    #[serde(default)]
    pub archived: bool,
}

/// What the controller last did.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulletinStatus {
    /// Whether the message is posted.
    pub posted: bool,
    /// The audience it is posted for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
}

/// The field manager of the controller's writes (and the controller its events report).
pub const MANAGER: &str = "bulletin-controller";

/// The finalizer that makes a deletion wait for the `Withdrawn` event.
pub const FINALIZER: &str = "bulletins.examples.recon.dev/withdraw";

/// The ConfigMap (in the controller's namespace) whose `audience` key is the default audience.
pub const DEFAULTS: &str = "bulletin-defaults";

/// The audience when neither the `Bulletin` nor the defaults name one.
pub const EVERYONE: &str = "everyone";

/// How long after a failed reconcile the controller tries again.
pub const RETRY: Duration = Duration::from_secs(300);

/// The controller's Prometheus metrics.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Reconciles run.
    pub reconciles: Counter,
    /// Reconciles failed, by error kind.
    pub failures: Family<Vec<(String, String)>, Counter>,
    /// How long reconciles take, in seconds.
    pub duration: Histogram,
}

impl Metrics {
    /// The metrics, registered in `registry` as `bulletin_*`.
    pub fn new(registry: &mut Registry) -> Metrics {
        let metrics = Metrics {
            reconciles: Counter::default(),
            failures: Family::default(),
            duration: Histogram::new(exponential_buckets(0.01, 2.0, 10)),
        };
        let sub = registry.sub_registry_with_prefix("bulletin");
        sub.register("reconciles", "Reconciles run", metrics.reconciles.clone());
        sub.register("failures", "Reconciles failed", metrics.failures.clone());
        sub.register(
            "reconcile_duration_seconds",
            "How long reconciles take",
            metrics.duration.clone(),
        );
        metrics
    }
}

/// What [`reconcile`] is given besides the object.
pub struct Context {
    /// The client it writes with.
    pub client: Client,
    /// The recorder it publishes events with.
    pub recorder: Recorder,
    /// The audience of bulletins that name none, read at start.
    pub default_audience: String,
    /// Its metrics.
    pub metrics: Metrics,
}

impl Context {
    /// The context: reads the default audience from the ConfigMap [`DEFAULTS`] in `namespace`
    /// ([`EVERYONE`] when there is none). A transient failure (429, 5xx, a connection error)
    /// is retried with backoff: the controller must not die of one (its perturbation test
    /// found that it did).
    pub async fn new(
        client: Client,
        namespace: &str,
        registry: &mut Registry,
    ) -> Result<Context, kube::Error> {
        let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
        let mut backoff = Duration::from_secs(1);
        let defaults = loop {
            match api.get_opt(DEFAULTS).await {
                Err(e) if transient(&e) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
                result => break result?,
            }
        };
        let default_audience = defaults
            .and_then(|c| c.data?.remove("audience"))
            .unwrap_or_else(|| EVERYONE.to_owned());
        let reporter = Reporter {
            controller: MANAGER.to_owned(),
            instance: None,
        };
        Ok(Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            default_audience,
            metrics: Metrics::new(registry),
        })
    }
}

/// Whether a failed request may succeed if sent again.
fn transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The `Bulletin` has no message.
    #[error("Bulletin {0} has an empty message")]
    EmptyMessage(String),
    /// A request failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed.
    #[error("finalizer: {0}")]
    Finalizer(#[from] Box<finalizer::Error<Error>>),
}

impl Error {
    /// The `error` label of [`Metrics::failures`].
    pub fn kind(&self) -> &'static str {
        match self {
            Error::EmptyMessage(_) => "empty_message",
            Error::Kube(_) => "kube",
            Error::Finalizer(_) => "finalizer",
        }
    }
}

/// The name of a `Bulletin`'s ConfigMap.
pub fn config_map_name(bulletin: &Bulletin) -> String {
    format!("{}-bulletin", bulletin.name_any())
}

/// Posts (or archives) a `Bulletin` and, once it is deleted, withdraws it, as
/// `Controller::run` calls it.
pub async fn reconcile(bulletin: Arc<Bulletin>, context: Arc<Context>) -> Result<Action, Error> {
    context.metrics.reconciles.inc();
    let started = Instant::now();
    let namespace = bulletin.namespace().unwrap_or_default();
    let api = Api::<Bulletin>::namespaced(context.client.clone(), &namespace);
    let result = finalizer(&api, FINALIZER, bulletin, |event| async {
        match event {
            finalizer::Event::Apply(bulletin) => post(&bulletin, &context).await,
            finalizer::Event::Cleanup(bulletin) => withdraw(&bulletin, &context).await,
        }
    })
    .await
    .map_err(|e| match e {
        // The reconcile's own error, not wrapped again.
        finalizer::Error::ApplyFailed(e) | finalizer::Error::CleanupFailed(e) => e,
        other => Error::Finalizer(Box::new(other)),
    });
    context
        .metrics
        .duration
        .observe(started.elapsed().as_secs_f64());
    result
}

/// Applies the ConfigMap and the status, and records what changed.
async fn post(bulletin: &Bulletin, context: &Context) -> Result<Action, Error> {
    let (namespace, name) = (
        bulletin.namespace().unwrap_or_default(),
        bulletin.name_any(),
    );
    let message = bulletin.spec.message.trim();
    if message.is_empty() {
        return Err(Error::EmptyMessage(name));
    }
    let audience = bulletin
        .spec
        .audience
        .clone()
        .unwrap_or_else(|| context.default_audience.clone());
    let posted = !bulletin.spec.archived;
    let data = posted.then(|| {
        BTreeMap::from([
            ("message".to_owned(), message.to_owned()),
            ("audience".to_owned(), audience.clone()),
        ])
    });
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(config_map_name(bulletin)),
            namespace: Some(namespace.clone()),
            owner_references: bulletin.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data,
        ..ConfigMap::default()
    };
    // Without force: a field another manager owns is a conflict to report, not to take.
    let apply = PatchParams::apply(MANAGER);
    Api::<ConfigMap>::namespaced(context.client.clone(), &namespace)
        .patch(
            &config_map_name(bulletin),
            &apply,
            &Patch::Apply(&config_map),
        )
        .await?;
    let status = BulletinStatus {
        posted,
        audience: posted.then_some(audience),
    };
    if bulletin.status.as_ref() != Some(&status) {
        let body = json!({"apiVersion": "examples.recon.dev/v1", "kind": "Bulletin",
                          "status": status});
        Api::<Bulletin>::namespaced(context.client.clone(), &namespace)
            .patch_status(&name, &apply, &Patch::Apply(&body))
            .await?;
        let (reason, action, note) = if posted {
            ("Posted", "Posting", format!("Posted {message:?}"))
        } else {
            ("Archived", "Archiving", "Archived".to_owned())
        };
        record(context, bulletin, reason, action, note).await?;
    }
    Ok(Action::await_change())
}

/// Publishes a Normal event about `bulletin`.
async fn record(
    context: &Context,
    bulletin: &Bulletin,
    reason: &str,
    action: &str,
    note: String,
) -> Result<(), kube::Error> {
    let event = Event {
        type_: EventType::Normal,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: None,
    };
    context
        .recorder
        .publish(&event, &bulletin.object_ref(&()))
        .await
}

/// Records the withdrawal; the ConfigMap goes with its owner.
async fn withdraw(bulletin: &Bulletin, context: &Context) -> Result<Action, Error> {
    let note = format!("Withdrew {}", bulletin.name_any());
    record(context, bulletin, "Withdrawn", "Withdrawing", note).await?;
    Ok(Action::await_change())
}

/// What `Controller::run` does after a failed reconcile: count it, try again in [`RETRY`].
pub fn error_policy(_bulletin: Arc<Bulletin>, error: &Error, context: Arc<Context>) -> Action {
    context
        .metrics
        .failures
        .get_or_create(&vec![("error".to_owned(), error.kind().to_owned())])
        .inc();
    Action::requeue(RETRY)
}
