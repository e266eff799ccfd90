//! An open watch, as the watch cache's `cacheWatcher` keeps it: which changes it sees (its
//! namespace and selectors, `convertToWatchEvent`), in which form, and the events it sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use recon_apimachinery::json::Value;
use tokio::sync::mpsc;

use crate::clock::Clock;
use crate::registry::conversion;
use crate::registry::resource::ResourceType;
use crate::request::list_query::{ListQuery, Scope};
use crate::request::negotiate::{Format, partial_metadata};
use crate::request::watch_stream::frame;
use crate::storage::history::Change;
use crate::storage::stored::Stored;
use crate::table::{self, IncludeObject, Item, ListMeta, TableRequest, TableVersion};
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{DecodeError, decode_body, metadata_document, set_meta, with_type_meta};

/// The annotation of the BOOKMARK that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// What a change means to one watch.
pub(crate) enum Event {
    /// A frame to send; the watch goes on.
    Frame(Bytes),
    /// The watch ends, with this ERROR frame or (`None`) without a word.
    Last(Option<Bytes>),
}

/// An open watch, fed by the server after each write.
pub(crate) struct Watcher {
    pub(crate) resource: GroupResource,
    pub(crate) rt: Arc<ResourceType>,
    pub(crate) api_version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) query: ListQuery,
    /// The keys the watch reads ([`ListQuery::scope`]).
    pub(crate) scope: Scope,
    pub(crate) format: Format,
    /// With [`Format::Table`], the table's version, what its rows carry and the clock its
    /// ages count to.
    pub(crate) table: Option<WatchTable>,
    pub(crate) bookmarks: bool,
    pub(crate) sender: mpsc::UnboundedSender<Bytes>,
}

/// A watch's Table settings: every event's object is a Table of one row, its column
/// definitions written in the first only (response.go, `watchEmbeddedEncoder.doEncode`).
pub(crate) struct WatchTable {
    pub(crate) version: TableVersion,
    pub(crate) include: IncludeObject,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) headers_sent: AtomicBool,
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
    pub(crate) fn passes(&self, key: &str, stored: &Stored) -> Result<bool, DecodeError> {
        self.query.matches(&self.rt, key, stored)
    }

    /// The object stored at `key` in the form the watch asked for.
    pub(crate) fn object(&self, key: &str, stored: &Stored) -> Result<Vec<u8>, EventError> {
        let body = stored.served(key)?;
        Ok(match self.format {
            Format::Full | Format::Table(_) => self.table(self.typed(body)?, Some(body))?,
            Format::Metadata => partial_metadata(key, body)?,
        })
    }

    /// `body` in the watch's version, with its `TypeMeta`.
    fn typed(&self, body: &[u8]) -> Result<Vec<u8>, EventError> {
        let version = self.api_version.rsplit('/').next().unwrap_or_default();
        let body =
            conversion::body_in_version(&self.rt, version, body).map_err(EventError::Conversion)?;
        Ok(with_type_meta(&self.api_version, &self.rt.kind, &body))
    }

    /// The Table of one event's object when the watch asked for one (a bookmark's too:
    /// response.go transforms every event's object but a `Status`), else the object.
    fn table(&self, object: Vec<u8>, stored: Option<&[u8]>) -> Result<Vec<u8>, EventError> {
        let Some(settings) = &self.table else {
            return Ok(object);
        };
        let decoded = decode_body("", &object)?;
        let request = TableRequest {
            version: settings.version,
            include: settings.include,
            now: settings.clock.now(),
            headers: !settings.headers_sent.swap(true, Ordering::Relaxed),
        };
        let meta = ListMeta {
            resource_version: crate::wire::object::meta(&decoded)
                .and_then(|m| m.get("resourceVersion"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            ..ListMeta::default()
        };
        let version_name = self.api_version.rsplit('/').next().unwrap_or_default();
        let internal = match stored {
            Some(body) if table::prints_stored(&self.rt, version_name) => {
                Some(decode_body("", body)?)
            }
            _ => None,
        };
        let items = [Item {
            object: &decoded,
            served: &object,
            stored: internal.as_ref(),
        }];
        table::table(&self.rt, version_name, &request, &items, &meta)
            .map_err(EventError::Conversion)
    }

    /// The ERROR frame of an object the watch cannot decode.
    pub(crate) fn unreadable(e: &DecodeError) -> Bytes {
        frame("ERROR", &e.to_watch_error().to_status_json())
    }

    /// The event `change` is for this watcher, if any (`convertToWatchEvent`). etcd3's watcher
    /// decodes the new state of every change it sees, and the previous one for a removal or
    /// when selectors filter (`prepareObjs`); one that does not decode ends the watch with an
    /// ERROR event (`sendError`).
    pub(crate) fn event(&self, change: &Change) -> Option<Event> {
        if change.resource != self.resource
            || !self.in_scope(&change.key)
            || !self.scope.contains(&change.key)
        {
            return None;
        }
        match self.transform(change) {
            Ok(frame) => frame.map(Event::Frame),
            Err(e) => Some(Event::Last(e.frame())),
        }
    }

    fn transform(&self, change: &Change) -> Result<Option<Bytes>, EventError> {
        let key = &change.key;
        if !change.removed {
            change.object.served(key)?;
        }
        if let Some(previous) = &change.previous
            && (change.removed || !self.query.is_everything())
        {
            previous.served(key)?;
        }
        let now = !change.removed && self.passes(key, &change.object)?;
        let before = match &change.previous {
            Some(previous) => self.passes(key, previous)?,
            None => false,
        };
        let (kind, object) = match (now, before) {
            (true, false) => ("ADDED", self.object(key, &change.object)?),
            (true, true) => ("MODIFIED", self.object(key, &change.object)?),
            (false, true) if change.removed => ("DELETED", self.object(key, &change.object)?),
            (false, true) => {
                // Left the selection: its previous state, at this event's revision.
                let Some(previous) = change.previous.as_ref() else {
                    return Ok(None);
                };
                let mut obj = previous.decode(key)?;
                set_meta(
                    &mut obj,
                    "resourceVersion",
                    Value::String(change.revision.to_string()),
                );
                let left = Stored::new(&obj, change.revision, self.rt.stored_struct());
                ("DELETED", self.object(key, &left)?)
            }
            (false, false) => return Ok(None),
        };
        Ok(Some(frame(kind, &object)))
    }

    /// A BOOKMARK at `revision`, annotated as the end of the initial events when
    /// `initial_events_end`.
    pub(crate) fn bookmark(&self, revision: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = recon_apimachinery::json::Map::new();
        if initial_events_end {
            metadata.insert(
                "annotations".into(),
                recon_apimachinery::json!({ INITIAL_EVENTS_END: "true" }),
            );
        }
        metadata.insert(
            "resourceVersion".into(),
            Value::String(revision.to_string()),
        );
        let body = metadata_document(&metadata);
        let (api_version, kind) = match self.format {
            Format::Full | Format::Table(_) => (self.api_version.as_str(), self.rt.kind.as_str()),
            Format::Metadata => ("meta.k8s.io/v1", "PartialObjectMetadata"),
        };
        let object = with_type_meta(api_version, kind, &body);
        // A bookmark that cannot be printed goes as it is.
        let object = self.table(object.clone(), None).unwrap_or(object);
        frame("BOOKMARK", &object)
    }
}

/// Why an event's object cannot be sent, which ends the watch: it does not decode (an ERROR
/// event first, as etcd3's watcher sends), or its CRD's conversion webhook failed on it (the
/// stream just ends: kube-apiserver's watch server stops when it cannot encode an event, and
/// sends nothing more, recorded in `versions/webhook-malformed-answers`).
#[derive(Debug)]
pub(crate) enum EventError {
    Unreadable(DecodeError),
    Conversion(ApiError),
}

impl From<DecodeError> for EventError {
    fn from(e: DecodeError) -> Self {
        EventError::Unreadable(e)
    }
}

impl EventError {
    /// The ERROR frame that ends the watch, if any.
    pub(crate) fn frame(&self) -> Option<Bytes> {
        match self {
            EventError::Unreadable(e) => Some(Watcher::unreadable(e)),
            EventError::Conversion(e) => {
                tracing::debug!(error = %e.message(), "a watch ends: its event's object does not convert");
                None
            }
        }
    }
}
