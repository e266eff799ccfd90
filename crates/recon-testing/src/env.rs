//! The world one test case runs in: fresh in-memory API servers with the case's objects, the
//! configs a reconciler is built from, and the event logs.

use std::collections::BTreeMap;
use std::sync::Mutex;

use jiff::Timestamp;
use recon_core::{Config, EventLog, TrackRequest, Tracker};
use recon_fake::{ApiServer, Identity, ManualClock};
use serde_json::Value;

use crate::case::AppliedGiven;
use crate::rbac::OperatorRbac;
use crate::reactors::ReactorSpec;

/// The seed of every case's identifiers: two runs of a case give the same uids and names.
const ID_SEED: u64 = 0x0072_6563_6f6e;

/// One in-memory cluster of a case.
#[derive(Debug, Clone)]
pub struct Cluster {
    server: ApiServer,
    reader: ApiServer,
    /// Whom the config's clients act as (`None`: the server's administrator).
    identity: Option<Identity>,
    events: EventLog,
    tracker: Tracker,
}

/// The servers the clusters of a table start from, one per request time: built with the
/// table's CRDs (and the RBAC manifest the code under test runs under) installed the first
/// time a case needs it, then forked for each cluster. A fork is what a fresh build would be
/// (same identifiers, same resourceVersions) at the cost of a copy.
pub(crate) struct Templates<'a> {
    crds: &'a [Value],
    rbac: Option<&'a OperatorRbac>,
    built: Mutex<Vec<(Timestamp, ApiServer)>>,
}

impl<'a> Templates<'a> {
    pub(crate) fn new(crds: &'a [Value], rbac: Option<&'a OperatorRbac>) -> Self {
        Templates {
            crds,
            rbac,
            built: Mutex::new(Vec::new()),
        }
    }

    /// A fresh server at `now` with the CRDs installed.
    fn server(&self, now: Timestamp) -> Result<ApiServer, String> {
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        let template = match built.iter().find(|(at, _)| *at == now) {
            Some((_, template)) => template,
            None => {
                let template = ApiServer::builder()
                    .clock(ManualClock::new(now))
                    .seed(ID_SEED)
                    .build();
                seed(&template, "crds", self.crds)?;
                if let Some(rbac) = self.rbac {
                    seed(&template, "the RBAC manifest", rbac.objects())?;
                }
                built.push((now, template));
                &built[built.len() - 1].1
            }
        };
        Ok(template.fork(ManualClock::new(now)))
    }
}

fn seed(server: &ApiServer, what: &str, objects: &[Value]) -> Result<(), String> {
    for (i, object) in objects.iter().enumerate() {
        server
            .seed(&with_given_uid(object))
            .map_err(|e| format!("{what}[{i}]: {e}"))?;
    }
    Ok(())
}

/// `object` with the uid [`crate::given_uid`] derives, when it has a name and no uid.
fn with_given_uid(object: &Value) -> std::borrow::Cow<'_, Value> {
    let meta = &object["metadata"];
    let named = meta["name"].as_str().is_some_and(|n| !n.is_empty());
    let has_uid = meta["uid"].as_str().is_some_and(|u| !u.is_empty());
    if !named || has_uid || !meta.is_object() {
        return std::borrow::Cow::Borrowed(object);
    }
    let uid = crate::owner::derived_uid(object);
    let mut object = object.clone();
    object["metadata"]["uid"] = Value::String(uid);
    std::borrow::Cow::Owned(object)
}

/// Metadata the server sets, left out of the apply that makes a given object's managedFields
/// (a `resourceVersion` would be a precondition; the others are not the manager's to own).
const SERVER_METADATA: [&str; 7] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Stores each of `applied` with the managedFields its manager's apply leaves: the server's
/// own apply computes them, creating the object by the manager's apply on a fork of `server`
/// (as the manager would have created it: a stored object without managedFields would keep
/// fields of `"before-first-apply"`), and they are stored with the given object, its server
/// fields (uid, timestamps, ...) as given. The fork's requests are not the case's.
async fn seed_applied(
    server: &ApiServer,
    now: Timestamp,
    applied: &[AppliedGiven],
) -> Result<(), String> {
    for (i, given) in applied.iter().enumerate() {
        let what = format!("givenApplied[{i}] (manager {:?})", given.manager);
        let mut object = given.object.clone();
        let Some(meta) = object["metadata"].as_object_mut() else {
            return Err(format!("{what}: the object has no metadata"));
        };
        if meta.contains_key("managedFields") {
            return Err(format!(
                "{what}: the object spells out managedFields; give it in `given` instead"
            ));
        }
        let scratch = server.fork(ManualClock::new(now));
        let managed = apply_as(&scratch, &given.manager, &given.object)
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        meta.insert("managedFields".to_owned(), managed);
        seed(server, &what, std::slice::from_ref(&object))?;
    }
    Ok(())
}

/// Applies `object` as `manager` (and its status to `/status`, when the kind has that
/// subresource and the object a status); the managedFields the server then stores.
async fn apply_as(server: &ApiServer, manager: &str, object: &Value) -> Result<Value, String> {
    use kube::api::{Patch, PatchParams};

    let client = server.setup_client();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = object["metadata"]["namespace"].as_str();
    let (api, _, caps) = crate::dynamic_api::api_for(&client, api_version, kind, namespace)
        .await
        .map_err(|e| format!("no resource serves {api_version} {kind}: {}", message(e)))?;
    let mut body = object.clone();
    if let Some(meta) = body["metadata"].as_object_mut() {
        for field in SERVER_METADATA {
            meta.remove(field);
        }
    }
    let has_status_subresource = caps.subresources.iter().any(|(r, _)| r.plural == "status");
    let status = match body.as_object_mut() {
        Some(fields) if has_status_subresource => fields.remove("status"),
        _ => None,
    };
    let params = PatchParams::apply(manager).force();
    let mut stored = api
        .patch(name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| format!("apply: {}", message(e)))?;
    if let Some(status) = status {
        let mut status_body = serde_json::json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name},
            "status": status,
        });
        if let Some(ns) = namespace {
            status_body["metadata"]["namespace"] = Value::from(ns);
        }
        stored = api
            .patch_status(name, &params, &Patch::Apply(&status_body))
            .await
            .map_err(|e| format!("status apply: {}", message(e)))?;
    }
    serde_json::to_value(stored.metadata.managed_fields.unwrap_or_default())
        .map_err(|e| format!("managedFields: {e}"))
}

/// The server's message of an API error (its Display carries the whole `Status`).
fn message(error: kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => other.to_string(),
    }
}

/// What a cluster starts with.
pub(crate) struct Givens<'a> {
    pub(crate) given: &'a [Value],
    pub(crate) given_applied: &'a [AppliedGiven],
    pub(crate) api_given: &'a [Value],
    pub(crate) reactors: &'a [ReactorSpec],
    pub(crate) tracks: &'a [TrackRequest],
    /// The case's own service account and manifest, stored here (the table's is in the
    /// template already).
    pub(crate) run_as: Option<&'a OperatorRbac>,
}

impl Cluster {
    /// A cluster with `crds` installed, then the `given` objects stored (and `api_given`, which
    /// only the config's API reader sees), the `given_applied` ones stored and applied by their
    /// managers, the given tracks made, and the `reactors` armed.
    pub(crate) async fn new(
        templates: &Templates<'_>,
        now: Timestamp,
        givens: Givens<'_>,
    ) -> Result<Cluster, String> {
        let Givens {
            given,
            given_applied,
            api_given,
            reactors,
            tracks,
            run_as,
        } = givens;
        let server = templates.server(now)?;
        if let Some(rbac) = run_as {
            seed(&server, "the case's RBAC manifest", rbac.objects())?;
        }
        seed(&server, "given", given)?;
        seed_applied(&server, now, given_applied).await?;
        let reader = if api_given.is_empty() {
            server.clone()
        } else {
            let reader = templates.server(now)?;
            seed(&reader, "apiGiven", api_given)?;
            reader
        };
        for (i, reactor) in reactors.iter().enumerate() {
            reactor
                .install(&server)
                .map_err(|e| format!("reactors[{i}]: {e}"))?;
        }
        // Given tracks are the state before the reconcile, not what it did.
        let tracker = Tracker::default().recording();
        for (i, track) in tracks.iter().enumerate() {
            tracker
                .track(track.reference.clone(), &track.tracker, now)
                .map_err(|e| format!("givenTracks[{i}]: {e}"))?;
        }
        tracker.clear_requests();
        Ok(Cluster {
            server,
            reader,
            identity: run_as.or(templates.rbac).map(OperatorRbac::identity),
            events: EventLog::default(),
            tracker,
        })
    }

    /// The tracker of this cluster's config (recording: its requests are what the case
    /// tracked).
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// The in-memory API server.
    pub fn server(&self) -> &ApiServer {
        &self.server
    }

    /// The events published through this cluster's config.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// A config for reconcilers: the server's client, the reader (a separate server when the
    /// case has `apiGiven` objects), the event log, and the tracker. The clients act as the
    /// table's service account when it runs under one ([`OperatorRbac`]).
    pub fn config(&self) -> Config {
        let client = |server: &ApiServer| match &self.identity {
            Some(identity) => server.client_as(identity.clone()),
            None => server.client(),
        };
        Config::new(client(&self.server), "recon-testing")
            .with_api_reader(client(&self.reader))
            .with_recorder(self.events.clone())
            .with_tracker(self.tracker.clone())
    }
}

/// What a case's factory and hooks see: the default cluster, the additional ones by name, the
/// request time, and the case's metadata.
#[derive(Debug, Clone)]
pub struct TestEnv {
    pub(crate) default: Cluster,
    pub(crate) additional: BTreeMap<String, Cluster>,
    pub(crate) now: Timestamp,
    pub(crate) metadata: BTreeMap<String, Value>,
}

impl TestEnv {
    /// The default cluster's config.
    pub fn config(&self) -> Config {
        self.default.config()
    }

    /// A kube client of the default cluster, for a plain kube-rs controller's context.
    pub fn client(&self) -> kube::Client {
        self.default.config().client().clone()
    }

    /// The config of an additional cluster (`additionalConfigs` of the case).
    pub fn config_named(&self, name: &str) -> Option<Config> {
        self.additional.get(name).map(Cluster::config)
    }

    /// The default cluster's in-memory API server (to add reactors in a `prepare` hook).
    pub fn server(&self) -> &ApiServer {
        self.default.server()
    }

    /// An additional cluster.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.additional.get(name)
    }

    /// The default cluster's event log.
    pub fn events(&self) -> &EventLog {
        self.default.events()
    }

    /// The request time of the case.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The case's `metadata[key]`: what the factory needs to know to build this case's
    /// reconciler, when one table's cases need different ones.
    pub fn metadata(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }
}
