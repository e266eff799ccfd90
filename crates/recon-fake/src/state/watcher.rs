//! An open watch, as the watch cache's `cacheWatcher` keeps it: which changes it sees (its
//! namespace and selectors, `convertToWatchEvent`), in which form, and the events it sends.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::registry::resource::ResourceType;
use crate::request::list_query::ListQuery;
use crate::request::negotiate::{Format, partial_metadata};
use crate::request::watch_stream::frame;
use crate::storage::history::Change;
use crate::storage::stored::Stored;
use crate::wire::group::GroupResource;
use crate::wire::object::{decode_body, encode_body, set_meta, with_type_meta};

/// The annotation of the BOOKMARK that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// An open watch, fed by the server after each write.
pub(crate) struct Watcher {
    pub(crate) resource: GroupResource,
    pub(crate) rt: Arc<ResourceType>,
    pub(crate) api_version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) query: ListQuery,
    pub(crate) format: Format,
    pub(crate) bookmarks: bool,
    pub(crate) sender: mpsc::UnboundedSender<Bytes>,
}

impl Watcher {
    fn in_scope(&self, key: &str) -> bool {
        match &self.namespace {
            Some(ns) => key
                .strip_prefix(ns.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
            None => true,
        }
    }

    /// Whether the object stored at `key` passes the watch's selectors.
    pub(crate) fn passes(&self, key: &str, stored: &Stored) -> bool {
        self.query.matches(&self.rt, key, stored)
    }

    /// A stored body in the form the watch asked for.
    pub(crate) fn object(&self, body: &[u8]) -> Vec<u8> {
        match self.format {
            Format::Full => with_type_meta(&self.api_version, &self.rt.kind, body),
            Format::Metadata => partial_metadata(body),
        }
    }

    /// The event `change` is for this watcher, if any (`convertToWatchEvent`).
    pub(crate) fn event(&self, change: &Change) -> Option<Bytes> {
        if change.resource != self.resource || !self.in_scope(&change.key) {
            return None;
        }
        let now = !change.removed && self.passes(&change.key, &change.object);
        let before = change
            .previous
            .as_ref()
            .is_some_and(|p| self.passes(&change.key, p));
        let (kind, object) = match (now, before) {
            (true, false) => ("ADDED", self.object(&change.object.body)),
            (true, true) => ("MODIFIED", self.object(&change.object.body)),
            (false, true) if change.removed => ("DELETED", self.object(&change.object.body)),
            (false, true) => {
                // Left the selection: its previous state, at this event's revision.
                let previous = change.previous.as_ref()?;
                let mut obj = decode_body(&previous.body);
                set_meta(
                    &mut obj,
                    "resourceVersion",
                    Value::String(change.revision.to_string()),
                );
                ("DELETED", self.object(&encode_body(&obj)))
            }
            (false, false) => return None,
        };
        Some(frame(kind, &object))
    }

    /// A BOOKMARK at `revision`, annotated as the end of the initial events when
    /// `initial_events_end`.
    pub(crate) fn bookmark(&self, revision: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = serde_json::Map::new();
        if initial_events_end {
            metadata.insert(
                "annotations".into(),
                serde_json::json!({ INITIAL_EVENTS_END: "true" }),
            );
        }
        metadata.insert(
            "resourceVersion".into(),
            Value::String(revision.to_string()),
        );
        let body =
            serde_json::to_vec(&serde_json::json!({ "metadata": metadata })).unwrap_or_default();
        let (api_version, kind) = match self.format {
            Format::Full => (self.api_version.as_str(), self.rt.kind.as_str()),
            Format::Metadata => ("meta.k8s.io/v1", "PartialObjectMetadata"),
        };
        frame("BOOKMARK", &with_type_meta(api_version, kind, &body))
    }
}
