//! The cluster's state at the end of a step, and the normal form two runs' states are compared
//! in: what only says when or in which order something happened (uids, resourceVersions,
//! times, generated name suffixes) replaced by what it stands for.

use std::collections::{BTreeMap, HashMap, HashSet};

use recon_fake::{ApiServer, RequestOrigin};
use serde_json::{Map, Value};

/// Kinds a world leaves out: records of what happened (events), leadership (leases) and the
/// scenario's own set-up (CRDs).
const LEFT_OUT: [(&str, &str); 4] = [
    ("v1", "Event"),
    ("events.k8s.io/v1", "Event"),
    ("coordination.k8s.io/v1", "Lease"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
];

/// What a uid stands for: an object's second incarnation is `ConfigMap default/web #2`.
#[derive(Debug, Clone)]
struct Identity {
    kind: String,
    namespace: Option<String>,
    name: String,
    /// How many times the name was created (at least 1).
    incarnation: usize,
    /// The place of its creation among the server's requests.
    created: usize,
}

impl Identity {
    fn words(&self, renames: &HashMap<String, String>, history: History) -> String {
        let name = renames.get(&self.name).unwrap_or(&self.name);
        let key = key_words(&self.kind, self.namespace.as_deref(), name);
        match history {
            History::Kept => format!("{key} #{}", self.incarnation),
            History::Dropped => key,
        }
    }
}

/// Whether a normal form says which incarnation of its name an object is (an object deleted
/// and made again is not the one the reference run kept), or only what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum History {
    Kept,
    Dropped,
}

/// Every object the cluster holds (events, leases and CRDs left out), as a step ended.
#[derive(Debug, Clone, Default)]
pub struct World {
    objects: Vec<Value>,
    identities: HashMap<String, Identity>,
    /// The objects the controller created (`Kind namespace/name`).
    created_by_controller: HashSet<String>,
}

impl World {
    /// The objects, ordered by API group, resource, namespace and name.
    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// The object of `kind` (in `api_version`) named `name` in `namespace`, if any.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<&Value> {
        self.objects.iter().find(|o| {
            o["apiVersion"] == api_version
                && o["kind"] == kind
                && o["metadata"]["name"] == name
                && o["metadata"]["namespace"].as_str() == namespace
        })
    }

    /// The objects of `kind`, in any version.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |o| o["kind"] == kind)
    }

    /// The server's objects now, with what their uids stand for, read from its request log.
    pub(crate) fn capture(server: &ApiServer) -> World {
        let objects: Vec<Value> = server
            .objects()
            .into_iter()
            .filter(|o| {
                !LEFT_OUT
                    .iter()
                    .any(|(v, k)| o["apiVersion"] == *v && o["kind"] == *k)
            })
            .collect();
        // Incarnations: how many times each name was created (a given object is the first).
        let mut created: HashMap<String, (usize, usize)> = HashMap::new();
        let mut created_by_controller = HashSet::new();
        for (at, request) in server.requests().iter().enumerate() {
            if request.status != 201 {
                continue;
            }
            let name = request.name.clone().or_else(|| {
                let body: Value = serde_json::from_slice(&request.response).ok()?;
                body.pointer("/metadata/name")?.as_str().map(str::to_owned)
            });
            let Some(name) = name else { continue };
            let key = key_words(&request.kind, request.namespace.as_deref(), &name);
            if request.origin == RequestOrigin::Client {
                created_by_controller.insert(key.clone());
            }
            let entry = created.entry(key).or_insert((0, at));
            entry.0 += 1;
            entry.1 = at;
        }
        let mut identities = HashMap::new();
        for object in &objects {
            let meta = &object["metadata"];
            let (Some(uid), Some(name)) = (meta["uid"].as_str(), meta["name"].as_str()) else {
                continue;
            };
            let kind = object["kind"].as_str().unwrap_or_default();
            let key = key_words(kind, meta["namespace"].as_str(), name);
            let (times, at) = created.get(&key).copied().unwrap_or((0, 0));
            let identity = Identity {
                kind: kind.to_owned(),
                namespace: meta["namespace"].as_str().map(str::to_owned),
                name: name.to_owned(),
                incarnation: times.max(1),
                created: at,
            };
            identities.insert(uid.to_owned(), identity);
        }
        World {
            objects,
            identities,
            created_by_controller,
        }
    }

    /// A copy with `change` made to every object.
    pub(crate) fn map_objects(&self, change: impl Fn(&mut Value)) -> World {
        let mut world = self.clone();
        world.objects.iter_mut().for_each(change);
        world
    }

    /// What a settled world should not hold: objects stuck deleting (a finalizer nobody
    /// removes), objects the controller created without an owner reference, or whose every
    /// owner is gone.
    pub(crate) fn leaks(&self) -> Vec<String> {
        let mut leaks = Vec::new();
        for object in &self.objects {
            let meta = &object["metadata"];
            let key = key_words(
                object["kind"].as_str().unwrap_or_default(),
                meta["namespace"].as_str(),
                meta["name"].as_str().unwrap_or_default(),
            );
            if meta.get("deletionTimestamp").is_some() {
                leaks.push(format!(
                    "{key} is stuck deleting, held by its finalizers {}",
                    meta["finalizers"]
                ));
                continue;
            }
            if !self.created_by_controller.contains(&key) {
                continue;
            }
            let owners: Vec<&str> = meta["ownerReferences"]
                .as_array()
                .map(|o| o.iter().filter_map(|r| r["uid"].as_str()).collect())
                .unwrap_or_default();
            if owners.is_empty() {
                leaks.push(format!(
                    "{key}, created by the controller, has no owner reference: nothing deletes it \
                     with what it was made for"
                ));
            } else if owners.iter().all(|uid| !self.identities.contains_key(*uid)) {
                leaks.push(format!(
                    "{key}, created by the controller, outlived its owners"
                ));
            }
        }
        leaks
    }

    /// Each object in normal form, keyed by `apiVersion kind namespace/name` (generated names
    /// as their prefix and rank).
    pub(crate) fn normalized(&self, history: History) -> BTreeMap<String, Value> {
        let renames = self.generated_names();
        let mut out = BTreeMap::new();
        for object in &self.objects {
            let mut object = object.clone();
            self.normalize_metadata(&mut object, &renames, history);
            let generation = object["metadata"]["generation"].as_i64();
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("generation");
            }
            if let Some(status) = object.get_mut("status") {
                mark_observed(status, generation);
            }
            self.normalize_strings(&mut object, &renames, history);
            out.insert(object_words(&object), object);
        }
        out
    }

    /// Names made from a `generateName`, and what they become: the prefix and the object's
    /// rank among those of that prefix by creation.
    fn generated_names(&self) -> HashMap<String, String> {
        let mut by_prefix: BTreeMap<(String, String), Vec<(usize, String)>> = BTreeMap::new();
        for object in &self.objects {
            let meta = &object["metadata"];
            let (Some(prefix), Some(name)) = (meta["generateName"].as_str(), meta["name"].as_str())
            else {
                continue;
            };
            if !name.starts_with(prefix) {
                continue;
            }
            let created = meta["uid"]
                .as_str()
                .and_then(|uid| self.identities.get(uid))
                .map_or(0, |i| i.created);
            let kind = object["kind"].as_str().unwrap_or_default().to_owned();
            by_prefix
                .entry((kind, prefix.to_owned()))
                .or_default()
                .push((created, name.to_owned()));
        }
        let mut renames = HashMap::new();
        for ((_, prefix), mut names) in by_prefix {
            names.sort();
            for (rank, (_, name)) in names.into_iter().enumerate() {
                renames.insert(name, format!("{prefix}<generated {}>", rank + 1));
            }
        }
        renames
    }

    fn normalize_metadata(
        &self,
        object: &mut Value,
        renames: &HashMap<String, String>,
        history: History,
    ) {
        let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        for field in [
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(field);
        }
        if meta.contains_key("deletionTimestamp") {
            meta.insert("deletionTimestamp".into(), "<set>".into());
        }
        if let Some(Value::Array(owners)) = meta.get_mut("ownerReferences") {
            for owner in owners.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(uid) = owner.get("uid").and_then(Value::as_str) {
                    let stands_for = self.identities.get(uid).map_or_else(
                        || "<no such object>".to_owned(),
                        |i| i.words(renames, history),
                    );
                    owner.insert("uid".into(), stands_for.into());
                }
            }
        }
    }

    /// Uids as what they stand for, generated names renamed, times as `<time>`.
    fn normalize_strings(
        &self,
        value: &mut Value,
        renames: &HashMap<String, String>,
        history: History,
    ) {
        match value {
            Value::String(text) => {
                if let Some(identity) = self.identities.get(text.as_str()) {
                    *text = identity.words(renames, history);
                } else if let Some(renamed) = renames.get(text.as_str()) {
                    *text = renamed.clone();
                } else if text.parse::<jiff::Timestamp>().is_ok() {
                    *text = "<time>".to_owned();
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|v| self.normalize_strings(v, renames, history)),
            Value::Object(map) => map
                .values_mut()
                .for_each(|v| self.normalize_strings(v, renames, history)),
            _ => {}
        }
    }
}

/// An `observedGeneration` (of the status, or of a condition) as whether it is the object's
/// generation: how many generations a history made is not what two runs are compared on.
fn mark_observed(status: &mut Value, generation: Option<i64>) {
    let mark = |map: &mut Map<String, Value>| {
        if let Some(observed) = map.get("observedGeneration").and_then(Value::as_i64) {
            let words = if Some(observed) == generation {
                "<current>"
            } else {
                "<behind>"
            };
            map.insert("observedGeneration".into(), words.into());
        }
    };
    let Some(status) = status.as_object_mut() else {
        return;
    };
    mark(status);
    if let Some(Value::Array(conditions)) = status.get_mut("conditions") {
        conditions
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(mark);
    }
}

/// `apps/v1 Deployment default/web`: an object by its version, kind, namespace and name.
pub(crate) fn object_words(object: &Value) -> String {
    let meta = &object["metadata"];
    format!(
        "{} {}",
        object["apiVersion"].as_str().unwrap_or_default(),
        key_words(
            object["kind"].as_str().unwrap_or_default(),
            meta["namespace"].as_str(),
            meta["name"].as_str().unwrap_or_default()
        )
    )
}

/// `ConfigMap default/web`.
pub(crate) fn key_words(kind: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn world(objects: Vec<Value>, identities: &[(&str, &str, &str, usize)]) -> World {
        World {
            objects,
            created_by_controller: HashSet::new(),
            identities: identities
                .iter()
                .map(|(uid, kind, name, created)| {
                    let identity = Identity {
                        kind: (*kind).to_owned(),
                        namespace: Some("d".to_owned()),
                        name: (*name).to_owned(),
                        incarnation: 1,
                        created: *created,
                    };
                    ((*uid).to_owned(), identity)
                })
                .collect(),
        }
    }

    #[test]
    fn uids_times_generations_and_generated_names_are_what_they_stand_for() {
        let w = world(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "web-x7k2q", "generateName": "web-", "namespace": "d",
                                "uid": "u2", "resourceVersion": "9", "generation": 3,
                                "creationTimestamp": "2024-01-01T00:00:00Z",
                                "ownerReferences": [{"uid": "u1", "name": "p"}, {"uid": "gone"}]},
                   "data": {"at": "2024-01-01T00:01:00Z", "self": "web-x7k2q", "owner": "u1"}}),
                json!({"apiVersion": "v1", "kind": "Thing",
                   "metadata": {"name": "p", "namespace": "d", "uid": "u1", "generation": 2},
                   "status": {"observedGeneration": 1,
                              "conditions": [{"type": "Ready", "observedGeneration": 2}]}}),
            ],
            &[("u1", "Thing", "p", 0), ("u2", "ConfigMap", "web-x7k2q", 5)],
        );
        let normal = w.normalized(History::Kept);
        assert_eq!(
            normal["v1 ConfigMap d/web-<generated 1>"],
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "web-<generated 1>", "generateName": "web-",
                                "namespace": "d", "uid": "ConfigMap d/web-<generated 1> #1",
                                "ownerReferences": [{"uid": "Thing d/p #1", "name": "p"},
                                                    {"uid": "<no such object>"}]},
                   "data": {"at": "<time>", "self": "web-<generated 1>",
                            "owner": "Thing d/p #1"}})
        );
        let without_history = w.normalized(History::Dropped);
        assert_eq!(
            without_history["v1 ConfigMap d/web-<generated 1>"]["metadata"]["uid"],
            "ConfigMap d/web-<generated 1>"
        );
        assert_eq!(
            without_history["v1 ConfigMap d/web-<generated 1>"]["data"]["owner"],
            "Thing d/p"
        );
        assert_eq!(
            normal["v1 Thing d/p"]["status"],
            json!({"observedGeneration": "<behind>",
                   "conditions": [{"type": "Ready", "observedGeneration": "<current>"}]})
        );
    }
}
