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
//! - An object whose stored body does not decode ends the watch that reads it with an ERROR
//!   event, `500 InternalError` with the decoder's message, as etcd3's watcher ends on a
//!   decoding error. (The real watch cache instead stops serving the resource until the object
//!   is repaired; that is not modelled.)

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::request::call::Call;
use crate::request::list_options::ListOptions;
use crate::request::list_query::ListQuery;
use crate::request::negotiate::{Format, negotiate};
use crate::request::reply::Reply;
use crate::request::watch_stream::{WatchStream, frame};
use crate::state::State;
use crate::state::watcher::{Event, EventError, WatchTable, Watcher};
use crate::table::IncludeObject;
use crate::wire::error::ApiError;
use crate::wire::status::Reason;

/// What the apiserver uses when a watch names no `timeoutSeconds`: `--min-request-timeout`
/// (1800 s; the real server picks at random up to twice that).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

impl State {
    pub(crate) fn watch(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        // Writes that skipped the request path (seeding) reach the open watches now, so the
        // new watch, which starts after them, is not sent them again by the next notification.
        self.notify_watchers();
        let options = ListOptions::parse(call.query, true)?;
        let query = ListQuery::parse(call)?;
        let scope = query.scope(call);
        let format = negotiate(call.accept, false)?;
        let table = match format {
            Format::Table(version) => Some(WatchTable {
                version,
                include: IncludeObject::parse(call.query)?,
                clock: self.clock.clone(),
                headers_sent: AtomicBool::new(false),
            }),
            _ => None,
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        let resource = call.rt.group_resource();
        let watcher = Watcher {
            resource: resource.clone(),
            rt: call.rt.clone(),
            api_version: call.api_version(),
            namespace: call.namespace().map(str::to_owned),
            query,
            scope,
            format,
            table,
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
                if !watcher.scope.contains(key) {
                    continue;
                }
                // Initial events are read as a list is: an object that does not decode ends
                // the watch with an ERROR event, as etcd3's watcher ends on its decoding error.
                let added = stored
                    .served(key)
                    .and_then(|_| watcher.passes(key, stored))
                    .map_err(EventError::from)
                    .and_then(|passes| passes.then(|| watcher.object(key, stored)).transpose());
                match added {
                    Ok(Some(object)) => {
                        let _ = watcher.sender.send(frame("ADDED", &object));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        if let Some(error) = e.frame() {
                            let _ = watcher.sender.send(error);
                        }
                        return Ok(Reply::stream(stream));
                    }
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
                match watcher.event(change) {
                    Some(Event::Frame(event)) => {
                        let _ = watcher.sender.send(event);
                    }
                    Some(Event::Last(error)) => {
                        if let Some(error) = error {
                            let _ = watcher.sender.send(error);
                        }
                        return Ok(Reply::stream(stream));
                    }
                    None => {}
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
                        .all(|event| match event {
                            Event::Frame(event) => watcher.sender.send(event).is_ok(),
                            // The watch ends after it: kept no longer.
                            Event::Last(error) => {
                                if let Some(error) = error {
                                    let _ = watcher.sender.send(error);
                                }
                                false
                            }
                        })
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
