//! Watch: newline-delimited JSON events on a long-lived response, as the apiserver's watch cache
//! (k8s.io/apiserver `pkg/storage/cacher`) serves them.
//!
//! - Start: synthetic ADDED events for what exists when `resourceVersion` is unset or `"0"` (or
//!   `sendInitialEvents=true`, followed by a BOOKMARK annotated `k8s.io/initial-events-end` when
//!   bookmarks are allowed); otherwise every retained change after the given revision.
//! - A revision older than the retained history opens the stream with 200 and a single ERROR
//!   event: `410 Expired`, `too old resource version: N (M)`.
//! - Selectors follow `cacheWatcher.convertToWatchEvent`: an object that starts matching arrives
//!   as ADDED, one that stops matching as DELETED carrying its previous state with the event's
//!   revision.
//! - No-op writes store nothing and so send nothing; the stream ends after `timeoutSeconds`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::handlers::read::{Format, ListQuery, negotiate, partial_metadata};
use crate::registry::resource::ResourceType;
use crate::request::list_options::ListOptions;
use crate::service::ResponseBody;
use crate::state::{Call, Reply, State};
use crate::storage::history::Change;
use crate::storage::stored::Stored;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{decode_body, encode_body, set_meta, with_type_meta};
use crate::wire::status::Reason;

/// What the apiserver uses when a watch names no `timeoutSeconds`: `--min-request-timeout`
/// (1800 s; the real server picks at random up to twice that).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// The annotation of the BOOKMARK that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// An open watch, fed by the server after each write.
pub(crate) struct Watcher {
    resource: GroupResource,
    rt: Arc<ResourceType>,
    api_version: String,
    namespace: Option<String>,
    query: ListQuery,
    format: Format,
    bookmarks: bool,
    sender: mpsc::UnboundedSender<Bytes>,
}

/// The event stream of a watch response.
#[derive(Debug)]
pub(crate) struct WatchStream {
    receiver: mpsc::UnboundedReceiver<Bytes>,
    timeout: Duration,
}

impl WatchStream {
    /// The response body: events as they come, until the timeout or until the server drops the
    /// watch.
    pub(crate) fn into_body(self) -> ResponseBody {
        let events = futures::stream::unfold(self.receiver, |mut receiver| async move {
            let event = receiver.recv().await?;
            Some((Ok::<_, Infallible>(Frame::data(event)), receiver))
        });
        let deadline = tokio::time::sleep(self.timeout);
        StreamBody::new(events.take_until(deadline)).boxed_unsync()
    }
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

    fn passes(&self, key: &str, stored: &Stored) -> bool {
        self.query.matches(&self.rt, key, stored)
    }

    fn object(&self, body: &[u8]) -> Vec<u8> {
        match self.format {
            Format::Full => with_type_meta(&self.api_version, &self.rt.kind, body),
            Format::Metadata => partial_metadata(body),
        }
    }

    /// The event `change` is for this watcher, if any (`convertToWatchEvent`).
    fn event(&self, change: &Change) -> Option<Bytes> {
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

    fn bookmark(&self, revision: u64, initial_events_end: bool) -> Bytes {
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

/// One event line: `{"type":…,"object":…}` and a newline.
fn frame(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + kind.len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

impl State {
    pub(crate) fn watch(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let options = ListOptions::parse(call.query, true)?;
        let query = ListQuery::parse(call)?;
        let format = negotiate(call.accept, false)?;
        let (sender, receiver) = mpsc::unbounded_channel();
        let resource = call.rt.group_resource();
        let watcher = Watcher {
            resource: resource.clone(),
            rt: call.rt.clone(),
            api_version: call.api_version(),
            namespace: call.namespace().map(str::to_owned),
            query,
            format,
            bookmarks: options.allow_bookmarks,
            sender,
        };
        let revision = self.store.revision();
        let timeout = options
            .timeout_seconds
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        let stream = WatchStream { receiver, timeout };

        if options.initial_events() {
            for (key, stored) in self.store.list(&resource, watcher.namespace.as_deref()) {
                if watcher.passes(key, stored) {
                    let _ = watcher
                        .sender
                        .send(frame("ADDED", &watcher.object(&stored.body)));
                }
            }
            if options.send_initial_events == Some(true) && watcher.bookmarks {
                let _ = watcher.sender.send(watcher.bookmark(revision, true));
            }
        } else if let Some(from) = options.resource_version {
            let oldest = self.store.history.oldest(&resource);
            if from < oldest {
                // The cacher fails such a watch in the stream, not with an HTTP error.
                let expired = ApiError::new(
                    410,
                    Reason::Expired,
                    format!("too old resource version: {from} ({oldest})"),
                );
                let _ = watcher
                    .sender
                    .send(frame("ERROR", &expired.to_status_json()));
                return Ok(Reply::stream(stream));
            }
            for change in self.store.history.since(&resource, from) {
                if let Some(event) = watcher.event(change) {
                    let _ = watcher.sender.send(event);
                }
            }
        }
        self.watchers.push(watcher);
        Ok(Reply::stream(stream))
    }

    /// Sends the changes made since the last call to every open watch, and forgets watches whose
    /// reader is gone or whose resource is no longer served.
    pub(crate) fn notify_watchers(&mut self) {
        let revision = self.store.revision();
        if !self.watchers.is_empty() && revision > self.notified {
            let registry = &self.registry;
            let history = &self.store.history;
            let notified = self.notified;
            self.watchers.retain(|watcher| {
                let served = registry
                    .get(&watcher.resource.group, &watcher.resource.resource)
                    .is_some();
                served
                    && history
                        .all_since(notified)
                        .filter_map(|change| watcher.event(change))
                        .all(|event| watcher.sender.send(event).is_ok())
            });
        }
        self.watchers.retain(|w| !w.sender.is_closed());
        self.notified = revision;
    }

    /// Sends a BOOKMARK at the current revision to every watch that allows them.
    pub(crate) fn send_bookmarks(&mut self) {
        let revision = self.store.revision();
        self.watchers.retain(|watcher| {
            !watcher.bookmarks
                || watcher
                    .sender
                    .send(watcher.bookmark(revision, false))
                    .is_ok()
        });
    }

    /// Ends every open watch, as an apiserver restart does.
    pub(crate) fn close_watches(&mut self) {
        self.watchers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_json_line() {
        assert_eq!(
            &frame("ADDED", br#"{"a":1}"#)[..],
            b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n"
        );
    }
}
