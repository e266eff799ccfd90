//! Storage: one global revision counter (etcd's), and per resource the objects ordered by their
//! storage key, each kept as the JSON bytes it is served as (and, when reading them now serves
//! something else, as they were written: see [`Store::reread`]). Two resources may share one
//! storage ([`Store::cohabit`]): each write to one is the same write to the other.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use foldhash::HashMap;

use bytes::Bytes;
use recon_apimachinery::json::Value;

use super::history::{Change, DEFAULT_HISTORY, History};
use super::labels::Labels;
use super::stored::Stored;
use crate::wire::group::GroupResource;
use crate::wire::object::{DecodeError, Object, decode_body, encode_body_as, set_meta};

/// The objects of one resource, by storage key, with an index of their labels.
#[derive(Debug, Default, Clone)]
struct Collection {
    objects: BTreeMap<String, Stored>,
    /// Label key, then label value, to the storage keys carrying it: a selector with an
    /// equality reads only those keys instead of every object. Only the label keys a list has
    /// selected on are indexed ([`Store::index_labels`]); an indexed key stays so, with no
    /// values if no object carries it.
    by_label: HashMap<String, HashMap<String, BTreeSet<String>>>,
    /// The bodies as written, of the objects whose served body differs from them (a custom
    /// resource read through a schema that changed since the write).
    written: HashMap<String, Bytes>,
    /// The keys of the objects whose body does not decode: a list over them fails, so it checks
    /// here rather than decoding every object it skips through the label index.
    unreadable: BTreeSet<String>,
}

impl Collection {
    /// Notes whether the object now stored under `key` decodes.
    fn note_readability(&mut self, key: &str, readable: bool) {
        if readable {
            self.unreadable.remove(key);
        } else {
            self.unreadable.insert(key.to_owned());
        }
    }

    /// Moves `key` in the index of each indexed label key whose value changed from `before`
    /// to `after` (`None`: no object, or none any more).
    fn reindex(&mut self, key: &str, before: Option<&Labels>, after: Option<&Labels>) {
        for (name, values) in self.by_label.iter_mut() {
            let old = before.and_then(|labels| labels.get(name));
            let new = after.and_then(|labels| labels.get(name));
            if old == new {
                continue;
            }
            if let Some(value) = old
                && let Some(keys) = values.get_mut(value)
            {
                keys.remove(key);
                if keys.is_empty() {
                    values.remove(value);
                }
            }
            if let Some(value) = new {
                match values.get_mut(value) {
                    Some(keys) => {
                        keys.insert(key.to_owned());
                    }
                    None => {
                        values.insert(value.to_owned(), BTreeSet::from([key.to_owned()]));
                    }
                }
            }
        }
    }

    /// The keys carrying the label `name=value`, if the label key `name` is indexed.
    fn labelled(&self, name: &str, value: &str) -> Option<&BTreeSet<String>> {
        static NONE: BTreeSet<String> = BTreeSet::new();
        let values = self.by_label.get(name)?;
        Some(values.get(value).unwrap_or(&NONE))
    }

    /// Indexes the label key `name`, unless it is already: every object carrying it is filed
    /// under its value.
    fn index_label(&mut self, name: &str) {
        if self.by_label.contains_key(name) {
            return;
        }
        // The keys come in order: each set is built from them at once, not searched per key.
        let mut values: HashMap<&str, Vec<String>> = HashMap::default();
        for (key, stored) in &self.objects {
            if let Some(value) = stored.labels.get(name) {
                values.entry(value).or_default().push(key.clone());
            }
        }
        let values = values
            .into_iter()
            .map(|(value, keys)| (value.to_owned(), BTreeSet::from_iter(keys)))
            .collect();
        self.by_label.insert(name.to_owned(), values);
    }
}

/// How an object of one resource reads through the resource it shares its storage with.
pub(crate) type Convert = fn(&Object) -> Object;

/// A resource whose objects are also those of `twin`, read through `convert`.
#[derive(Debug, Clone)]
struct Cohabitant {
    resource: GroupResource,
    twin: GroupResource,
    convert: Convert,
}

/// The Go struct the objects of each built-in resource are stored as.
pub(crate) type StoredStructs = HashMap<GroupResource, &'static str>;

#[derive(Debug, Clone)]
pub(crate) struct Store {
    /// etcd's revision: a fresh etcd is at 1, so the first write is revision 2 (as observed on a
    /// real server).
    revision: u64,
    collections: HashMap<GroupResource, Collection>,
    pub(crate) history: History,
    cohabitants: Vec<Cohabitant>,
    /// How built-in objects are written: an object read back from storage has lost the
    /// `apiVersion` and `kind` that say its Go struct, and so its field order.
    stored_structs: Arc<StoredStructs>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            revision: 1,
            collections: HashMap::default(),
            history: History::new(DEFAULT_HISTORY),
            cohabitants: Vec::new(),
            stored_structs: Arc::default(),
        }
    }
}

impl Store {
    /// Writes the objects of the built-in resources of `structs` as their Go structs.
    pub(crate) fn store_builtins_as(&mut self, structs: Arc<StoredStructs>) {
        self.stored_structs = structs;
    }

    /// `obj`, of `resource`, as it would be stored.
    pub(crate) fn encode(&self, resource: &GroupResource, obj: &Object) -> Bytes {
        encode_body_as(obj, self.stored_as(resource))
    }

    /// The Go struct objects of `resource` are stored as; `None` for custom resources.
    fn stored_as(&self, resource: &GroupResource) -> Option<&'static str> {
        self.stored_structs.get(resource).copied()
    }

    /// Makes `a` and `b` one storage, as kube-apiserver's cohabitating resources (core/v1 and
    /// events.k8s.io/v1 Events) are one etcd prefix read through two APIs: an object written
    /// through either is kept in both forms, at one revision, under one key, and removed from
    /// both at once. Each form is what its API serves, so reads, lists, selectors and watches
    /// of either need nothing more; each watch sees every write once, in its own form.
    pub(crate) fn cohabit(
        &mut self,
        a: GroupResource,
        b: GroupResource,
        a_to_b: Convert,
        b_to_a: Convert,
    ) {
        self.cohabitants.push(Cohabitant {
            resource: a.clone(),
            twin: b.clone(),
            convert: a_to_b,
        });
        self.cohabitants.push(Cohabitant {
            resource: b,
            twin: a,
            convert: b_to_a,
        });
    }

    /// The resource sharing `resource`'s storage and how to read an object of it there.
    fn twin(&self, resource: &GroupResource) -> Option<(GroupResource, Convert)> {
        self.cohabitants
            .iter()
            .find(|c| &c.resource == resource)
            .map(|c| (c.twin.clone(), c.convert))
    }

    /// The current revision: the resourceVersion of a list taken now.
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    /// How many objects of `resource` are stored.
    pub(crate) fn len(&self, resource: &GroupResource) -> usize {
        self.collections
            .get(resource)
            .map_or(0, |c| c.objects.len())
    }

    pub(crate) fn get(&self, resource: &GroupResource, key: &str) -> Option<&Stored> {
        self.collections.get(resource)?.objects.get(key)
    }

    /// Objects of `resource` in key order, only those of `namespace` when given.
    pub(crate) fn list<'a>(
        &'a self,
        resource: &GroupResource,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a String, &'a Stored)> + use<'a> {
        let prefix = namespace.map(|ns| format!("{ns}/"));
        self.collections
            .get(resource)
            .map(|c| &c.objects)
            .into_iter()
            .flat_map(move |objects| {
                let range: Box<dyn Iterator<Item = (&String, &Stored)>> = match &prefix {
                    Some(p) => {
                        let p = p.clone();
                        Box::new(
                            objects
                                .range(p.clone()..)
                                .take_while(move |(k, _)| k.starts_with(&p)),
                        )
                    }
                    None => Box::new(objects.iter()),
                };
                range
            })
    }

    /// Objects of `resource` whose storage key starts with `prefix`, from key `from` on, in key
    /// order.
    pub(crate) fn list_from<'a>(
        &'a self,
        resource: &GroupResource,
        prefix: &'a str,
        from: &str,
    ) -> impl Iterator<Item = (&'a String, &'a Stored)> + use<'a> {
        let from = from.max(prefix).to_owned();
        self.collections
            .get(resource)
            .into_iter()
            .flat_map(move |c| c.objects.range(from.clone()..))
            .take_while(move |(k, _)| k.starts_with(prefix))
    }

    /// Stores `served` as [`put`](Self::put) does, remembering `written` as the bytes etcd
    /// holds when they differ (storage decodes them into `served`).
    pub(crate) fn put_as_written(
        &mut self,
        resource: &GroupResource,
        key: String,
        served: Object,
        mut written: Object,
    ) -> (u64, Stored) {
        // Both get the same resourceVersion, so they differ now exactly when their bodies
        // will; comparing the values spares encoding the written one when they are the same.
        let differs = written != served;
        let (revision, stored) = self.put(resource, key.clone(), served);
        if differs {
            set_meta(
                &mut written,
                "resourceVersion",
                Value::String(revision.to_string()),
            );
            let body = self.encode(resource, &written);
            if let Some(collection) = self.collections.get_mut(resource) {
                collection.written.insert(key, body);
            }
        }
        (revision, stored)
    }

    /// The bytes written for `key` where they differ from what is served.
    pub(crate) fn written(&self, resource: &GroupResource, key: &str) -> Option<&Bytes> {
        self.collections.get(resource)?.written.get(key)
    }

    /// Writes `obj` at a new revision, which it returns along with the stored form.
    pub(crate) fn put(
        &mut self,
        resource: &GroupResource,
        key: String,
        mut obj: Object,
    ) -> (u64, Stored) {
        self.revision += 1;
        let revision = self.revision;
        set_meta(
            &mut obj,
            "resourceVersion",
            Value::String(revision.to_string()),
        );
        if let Some((twin, convert)) = self.twin(resource) {
            self.insert(&twin, key.clone(), &convert(&obj), revision);
        }
        let stored = self.insert(resource, key, &obj, revision);
        (revision, stored)
    }

    /// Keeps `obj`, which carries `revision`, under `key` and logs the change.
    fn insert(
        &mut self,
        resource: &GroupResource,
        key: String,
        obj: &Object,
        revision: u64,
    ) -> Stored {
        let stored = Stored::new(obj, revision, self.stored_as(resource));
        self.keep(resource, key, stored)
    }

    /// Keeps `stored` under `key`, indexing its labels, and logs the change.
    fn keep(&mut self, resource: &GroupResource, key: String, stored: Stored) -> Stored {
        let revision = stored.revision;
        // The resource is copied only for its first object.
        let collection = match self.collections.get_mut(resource) {
            Some(collection) => collection,
            None => self.collections.entry(resource.clone()).or_default(),
        };
        collection.note_readability(&key, stored.readable());
        // Only the indexed label keys, and only where the value changed.
        if !collection.by_label.is_empty() {
            let before = collection.objects.get(&key).map(|p| p.labels.clone());
            collection.reindex(&key, before.as_ref(), Some(&stored.labels));
        }
        collection.written.remove(&key);
        let previous = collection.objects.insert(key.clone(), stored.clone());
        self.history.push(Change {
            revision,
            resource: resource.clone(),
            key,
            object: stored.clone(),
            previous,
            removed: false,
        });
        stored
    }

    /// Serves every object of `resource` as `read` makes of its body as written, in place: the
    /// revision stays and no watch event is sent, since nothing was written. This is what
    /// decoding from etcd does after a CRD's schema changed (pruning and defaults of the new
    /// schema apply on read); the bytes as written are kept, so a later change reads them again.
    pub(crate) fn reread(&mut self, resource: &GroupResource, read: impl Fn(Object) -> Object) {
        let stored_as = self.stored_as(resource);
        let Some(collection) = self.collections.get_mut(resource) else {
            return;
        };
        for (key, stored) in collection.objects.iter_mut() {
            let written = collection
                .written
                .get(key)
                .cloned()
                .unwrap_or_else(|| stored.body.clone());
            let object = match decode_body(key, &written) {
                Ok(object) => read(object),
                Err(e) => {
                    // Every read of it fails until it is rewritten; it stays as it is.
                    tracing::warn!(resource = %resource, error = %e, "stored object not re-read");
                    continue;
                }
            };
            let served = Stored::new(&object, stored.revision, stored_as);
            if served.body == written {
                collection.written.remove(key);
            } else {
                collection.written.insert(key.clone(), written);
            }
            if served.readable() {
                collection.unreadable.remove(key);
            } else {
                collection.unreadable.insert(key.clone());
            }
            // The labels and their index stay: reading does not change metadata.
            *stored = Stored {
                labels: stored.labels.clone(),
                ..served
            };
        }
    }

    /// Indexes the label keys `names` of `resource`'s objects, those not indexed yet: from now
    /// on every write keeps their index, which [`list_labelled`](Self::list_labelled) reads.
    /// Only label keys that lists select on cost the writes an index.
    pub(crate) fn index_labels<'a>(
        &mut self,
        resource: &GroupResource,
        names: impl IntoIterator<Item = &'a str>,
    ) {
        if let Some(collection) = self.collections.get_mut(resource) {
            for name in names {
                collection.index_label(name);
            }
        }
    }

    /// Like [`list`](Self::list), narrowed to the objects carrying one `(key, value)` label of
    /// `required` (the one fewest carry) when that label key is indexed
    /// ([`index_labels`](Self::index_labels)); the caller checks the rest.
    pub(crate) fn list_labelled<'a>(
        &'a self,
        resource: &GroupResource,
        namespace: Option<&'a str>,
        required: &[(&str, &str)],
    ) -> Box<dyn Iterator<Item = (&'a String, &'a Stored)> + 'a> {
        let Some(collection) = self.collections.get(resource) else {
            return Box::new(std::iter::empty());
        };
        let smallest = required
            .iter()
            .filter_map(|(k, v)| collection.labelled(k, v))
            .min_by_key(|keys| keys.len());
        let Some(smallest) = smallest else {
            return Box::new(self.list(resource, namespace));
        };
        let prefix = namespace.map(|ns| format!("{ns}/"));
        Box::new(
            smallest
                .iter()
                .filter(move |k| prefix.as_ref().is_none_or(|p| k.starts_with(p.as_str())))
                .filter_map(|k| collection.objects.get_key_value(k)),
        )
    }

    /// Removes an object (and its form in the resource sharing the storage); the removal is a
    /// write of its own revision. Returns that revision and the object's last state, which
    /// carries it (what a DELETED event shows).
    pub(crate) fn remove(&mut self, resource: &GroupResource, key: &str) -> Option<(u64, Stored)> {
        if !self.collections.get(resource)?.objects.contains_key(key) {
            return None;
        }
        self.revision += 1;
        let revision = self.revision;
        if let Some((twin, _)) = self.twin(resource) {
            self.take(&twin, key, revision);
        }
        let removed = self.take(resource, key, revision)?;
        Some((revision, removed))
    }

    /// Drops `key` of `resource`, logging its removal at `revision`.
    fn take(&mut self, resource: &GroupResource, key: &str, revision: u64) -> Option<Stored> {
        let stored_as = self.stored_as(resource);
        let collection = self.collections.get_mut(resource)?;
        let removed = collection.objects.remove(key)?;
        collection.reindex(key, Some(&removed.labels), None);
        collection.written.remove(key);
        collection.unreadable.remove(key);
        // The object's last state carries the removal's revision; one that does not decode is
        // logged as it was, and a watch reading it fails as etcd3's does.
        let last = match removed.decode(key) {
            Ok(mut last) => {
                set_meta(
                    &mut last,
                    "resourceVersion",
                    Value::String(revision.to_string()),
                );
                Stored::new(&last, revision, stored_as)
            }
            Err(_) => Stored {
                revision,
                ..removed.clone()
            },
        };
        self.history.push(Change {
            revision,
            resource: resource.clone(),
            key: key.to_owned(),
            object: last.clone(),
            previous: Some(removed.clone()),
            removed: true,
        });
        Some(last)
    }

    /// The first object of `resource` under `prefix`, in key order, whose body does not decode.
    pub(crate) fn first_unreadable(
        &self,
        resource: &GroupResource,
        prefix: &str,
    ) -> Option<DecodeError> {
        let collection = self.collections.get(resource)?;
        let key = collection
            .unreadable
            .range(prefix.to_owned()..)
            .next()
            .filter(|k| k.starts_with(prefix))?;
        collection.objects.get(key)?.decode(key).err()
    }

    /// Stores `body` under `key` as it is, at a new revision, as a write to etcd behind the
    /// server's back would: the tests' way to hold an object whose body does not decode.
    #[cfg(test)]
    pub(crate) fn put_raw(&mut self, resource: &GroupResource, key: &str, body: &[u8]) -> u64 {
        self.revision += 1;
        let stored = Stored::raw(Bytes::copy_from_slice(body), self.revision);
        self.keep(resource, key.to_owned(), stored);
        self.revision
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn every_write_of_every_resource_bumps_one_global_revision() {
        let mut store = Store::default();
        let (cm, w) = (
            GroupResource::new("", "configmaps"),
            GroupResource::new("example.com", "widgets"),
        );
        assert_eq!(store.put(&cm, "ns/a".into(), obj(json!({}))).0, 2);
        assert_eq!(store.put(&w, "ns/a".into(), obj(json!({}))).0, 3);
        assert_eq!(store.remove(&cm, "ns/a").map(|(rev, _)| rev), Some(4));
        assert_eq!(store.revision(), 4);
    }

    #[test]
    fn listing_follows_storage_key_byte_order() {
        let mut store = Store::default();
        let cm = GroupResource::new("", "configmaps");
        for key in ["a/x", "a-b/x", "b/x"] {
            store.put(&cm, key.into(), obj(json!({})));
        }
        let keys: Vec<&str> = store.list(&cm, None).map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a-b/x", "a/x", "b/x"]);
        let keys: Vec<&str> = store
            .list(&cm, Some("a"))
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["a/x"]);
    }

    fn labelled(store: &mut Store, resource: &GroupResource, key: &str, labels: Value) {
        store.put(
            resource,
            key.into(),
            obj(json!({"metadata": {"labels": labels}})),
        );
    }

    fn keys(it: Box<dyn Iterator<Item = (&String, &Stored)> + '_>) -> Vec<String> {
        it.map(|(k, _)| k.clone()).collect()
    }

    #[test]
    fn the_label_index_follows_relabelling_and_removal() {
        let mut store = Store::default();
        let cm = GroupResource::new("", "configmaps");
        labelled(&mut store, &cm, "a/x", json!({"app": "web"}));
        labelled(
            &mut store,
            &cm,
            "b/y",
            json!({"app": "web", "tier": "front"}),
        );
        labelled(&mut store, &cm, "b/z", json!({"app": "db"}));
        // No label key is indexed yet: every object is a candidate.
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "web")])),
            ["a/x", "b/y", "b/z"]
        );
        // Indexed after the writes, from what is stored; `zone` is carried by nothing yet.
        store.index_labels(&cm, ["app", "tier", "zone"]);
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "web")])),
            ["a/x", "b/y"]
        );
        assert!(keys(store.list_labelled(&cm, None, &[("zone", "1")])).is_empty());
        assert_eq!(
            keys(store.list_labelled(&cm, Some("b"), &[("app", "web")])),
            ["b/y"]
        );
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "web"), ("tier", "front")])),
            ["b/y"]
        );

        labelled(&mut store, &cm, "a/x", json!({"app": "db"}));
        store.remove(&cm, "b/y");
        assert!(keys(store.list_labelled(&cm, None, &[("app", "web")])).is_empty());
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "db")])),
            ["a/x", "b/z"]
        );
        assert_eq!(keys(store.list_labelled(&cm, None, &[])), ["a/x", "b/z"]);

        // A label kept through a rewrite stays indexed beside one added and one dropped; a
        // label key no object carries any more stays indexed.
        labelled(&mut store, &cm, "b/z", json!({"app": "db", "tier": "back"}));
        labelled(&mut store, &cm, "b/z", json!({"app": "db", "zone": "1"}));
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "db")])),
            ["a/x", "b/z"]
        );
        assert!(keys(store.list_labelled(&cm, None, &[("tier", "back")])).is_empty());
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("zone", "1")])),
            ["b/z"]
        );
        labelled(&mut store, &cm, "b/z", json!({"app": "db"}));
        store.remove(&cm, "a/x");
        assert!(keys(store.list_labelled(&cm, None, &[("tier", "front")])).is_empty());
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("app", "db"), ("zone", "1")])),
            Vec::<String>::new()
        );
        // A key not indexed narrows nothing; beside an indexed one, the indexed one decides.
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("other", "x"), ("app", "db")])),
            ["b/z"]
        );
        assert_eq!(
            keys(store.list_labelled(&cm, None, &[("other", "x")])),
            ["b/z"]
        );
    }

    fn shouted(obj: &Object) -> Object {
        obj.iter()
            .map(|(k, v)| (k.to_uppercase(), v.clone()))
            .collect()
    }

    #[test]
    fn cohabiting_resources_share_every_write_and_removal_at_one_revision() {
        let (core, events) = (
            GroupResource::new("", "events"),
            GroupResource::new("events.k8s.io", "events"),
        );
        let mut store = Store::default();
        store.cohabit(core.clone(), events.clone(), shouted, |o| o.clone());
        let (revision, _) = store.put(&core, "ns/e".into(), obj(json!({"note": "n"})));
        let twin = store
            .get(&events, "ns/e")
            .map(|s| s.decode("ns/e").unwrap());
        assert_eq!(
            twin.map(Value::Object),
            Some(json!({"NOTE": "n", "METADATA": {"resourceVersion": "2"}}))
        );
        assert_eq!(store.revision(), revision);
        let watched: Vec<&GroupResource> = store
            .history
            .since(&events, 0)
            .map(|c| &c.resource)
            .collect();
        assert_eq!(watched, [&events]);

        assert_eq!(store.remove(&events, "ns/e").map(|(rev, _)| rev), Some(3));
        assert!(store.get(&core, "ns/e").is_none());
        let removals: Vec<(u64, bool)> = store
            .history
            .since(&core, 0)
            .map(|c| (c.revision, c.removed))
            .collect();
        assert_eq!(removals, [(2, false), (3, true)]);
        assert!(store.remove(&core, "ns/e").is_none());
    }

    #[test]
    fn a_body_that_does_not_decode_is_kept_as_it_is_and_found_by_the_lists_reading_it() {
        let mut store = Store::default();
        let cm = GroupResource::new("", "configmaps");
        store.put(
            &cm,
            "ns/good".into(),
            obj(json!({"metadata": {"name": "good"}})),
        );
        let revision = store.put_raw(&cm, "ns/bad", b"{");
        let bad = store.get(&cm, "ns/bad").unwrap();
        assert!(!bad.readable());
        assert_eq!(bad.revision, revision);
        assert_eq!(&bad.body[..], b"{");
        let error = bad.decode("ns/bad").unwrap_err();
        assert_eq!(error.key, "ns/bad");
        assert_eq!(bad.served("ns/bad").unwrap_err(), error);
        assert_eq!(store.first_unreadable(&cm, "ns/"), Some(error.clone()));
        assert_eq!(store.first_unreadable(&cm, ""), Some(error));
        assert_eq!(store.first_unreadable(&cm, "other/"), None);

        // Re-reading (a CRD's schema changed) leaves it as written.
        store.reread(&cm, |mut o| {
            o.insert("read".into(), json!(true));
            o
        });
        assert_eq!(&store.get(&cm, "ns/bad").unwrap().body[..], b"{");
        assert!(
            store
                .get(&cm, "ns/good")
                .unwrap()
                .decode("ns/good")
                .unwrap()["read"]
                == json!(true)
        );

        // Its removal logs its bytes as they were, at the removal's revision.
        let (removed_at, last) = store.remove(&cm, "ns/bad").unwrap();
        assert_eq!((last.revision, last.readable()), (removed_at, false));
        assert_eq!(store.first_unreadable(&cm, ""), None);

        // A write over it is readable again.
        store.put_raw(&cm, "ns/bad", b"[");
        store.put(&cm, "ns/bad".into(), obj(json!({})));
        assert_eq!(store.first_unreadable(&cm, ""), None);
    }

    #[test]
    fn an_object_nesting_deeper_than_go_reads_is_stored_and_known_unreadable() {
        use crate::wire::nesting::GO_MAX_DEPTH;
        // `{"a": [[...]]}`, `levels` deep in all.
        let object = |levels: usize| {
            // Not `json!([deep])`, which serialises `deep` (recursively) to copy it.
            let mut deep = Value::Null;
            for _ in 1..levels {
                deep = Value::Array(vec![deep].into());
            }
            Object::from_iter([("a".to_owned(), deep)])
        };
        let mut store = Store::default();
        let cm = GroupResource::new("", "configmaps");
        let deepest = object(GO_MAX_DEPTH);
        store.keep(&cm, "ns/deepest".to_owned(), Stored::new(&deepest, 2, None));
        drop(deepest);
        let stored = store.get(&cm, "ns/deepest").unwrap();
        assert!(stored.readable());
        stored.decode("ns/deepest").unwrap();
        let deeper = object(GO_MAX_DEPTH + 1);
        let stored = Stored::new(&deeper, 3, None);
        drop(deeper);
        assert!(!stored.readable());
        let error = stored.served("ns/deeper").unwrap_err();
        assert_eq!(error.go_message, "invalid character '[' exceeded max depth");
        let shallow = Stored::new(&obj(json!({"a": [[]]})), 2, None);
        assert!(shallow.readable());
        assert!(shallow.served("ns/a").is_ok());
    }

    #[test]
    fn stored_bodies_carry_the_new_resource_version() {
        let mut store = Store::default();
        let (_, stored) = store.put(
            &GroupResource::new("", "configmaps"),
            "ns/a".into(),
            obj(json!({"metadata": {"name": "a"}})),
        );
        assert_eq!(
            &stored.body[..],
            br#"{"metadata":{"name":"a","resourceVersion":"2"}}"#
        );
    }
}
