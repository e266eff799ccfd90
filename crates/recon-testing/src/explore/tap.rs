//! The controller's connection to the server: a `tower::Service` in front of the in-memory
//! server that records every request and watch event in the run's trace and plays the
//! schedule's perturbation on the one it targets (a restart, a failure, a concurrent writer, a
//! stale view, a dropped or late event).

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use futures::future::BoxFuture;
use http::{Request as HttpRequest, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use kube::client::Body;
use recon_fake::{ApiError, ApiServer, Reason};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::perturbation::{Failure, Perturbation};
use super::trace::{Entry, Event, Request, Route};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub(crate) type TapBody = UnsyncBoxBody<Bytes, BoxError>;

/// The annotation the concurrent writer sets on the object the controller is about to write.
pub const CONCURRENT_ANNOTATION: &str = "explore.recon.dev/concurrent-writer";

/// The field manager of the concurrent writer.
const CONCURRENT_MANAGER: &str = "concurrent-writer";

/// What the tap asks of the run driving the controller.
#[derive(Debug)]
pub(crate) enum Signal {
    /// Stop the controller and start a fresh one; `stale` when its cache is to lag.
    Restart { why: String, stale: bool },
    /// The controller sent more requests than one step allows: it does not settle.
    Exhausted,
}

/// A restarted controller's view of the past, until `until`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stale {
    pub(crate) generation: u32,
    pub(crate) revision: u64,
    pub(crate) until: Instant,
}

/// The object the concurrent writer changed, and whether its change landed.
#[derive(Debug, Clone)]
pub(crate) struct ConcurrentWrite {
    pub(crate) route: Route,
    /// The uid of the object it changed, when the change landed.
    pub(crate) uid: Option<String>,
}

/// What the run and its taps share.
pub(crate) struct Run {
    pub(crate) plan: Option<Perturbation>,
    pub(crate) trace: Vec<Entry>,
    requests: usize,
    writes: usize,
    events: usize,
    /// The controller now running: requests of an older one never complete.
    pub(crate) generation: u32,
    pub(crate) stale: Option<Stale>,
    /// Requests sent while settling the current step.
    pub(crate) step_requests: usize,
    pub(crate) request_budget: usize,
    exhausted: bool,
    /// When a write last changed what the server stores.
    pub(crate) last_change: Instant,
    /// The revision before the user's last action (what a stale view shows).
    pub(crate) action_revision: u64,
    pub(crate) concurrent: Option<ConcurrentWrite>,
    lag: Duration,
    signals: UnboundedSender<Signal>,
    /// Watch streams being filtered, ended with their controller.
    pub(crate) watch_tasks: Vec<JoinHandle<()>>,
}

impl Run {
    pub(crate) fn new(
        plan: Option<Perturbation>,
        request_budget: usize,
        lag: Duration,
        signals: UnboundedSender<Signal>,
    ) -> Self {
        Run {
            plan,
            trace: Vec::new(),
            requests: 0,
            writes: 0,
            events: 0,
            generation: 0,
            stale: None,
            step_requests: 0,
            request_budget,
            exhausted: false,
            last_change: Instant::now(),
            action_revision: 0,
            concurrent: None,
            lag,
            signals,
            watch_tasks: Vec::new(),
        }
    }

    /// A new step begins: its own request budget.
    pub(crate) fn begin_step(&mut self) {
        self.step_requests = 0;
        self.exhausted = false;
        self.last_change = Instant::now();
    }

    fn signal(&self, signal: Signal) {
        // The run ends before the receiver is dropped; nothing to do if it already has.
        let _ = self.signals.send(signal);
    }
}

/// Locks the run, whatever a panicking holder left.
pub(crate) fn lock(run: &Mutex<Run>) -> MutexGuard<'_, Run> {
    run.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the schedule does to one request.
enum Fate {
    Serve,
    RestartBefore,
    RestartAfter { stale: bool },
    Fail(Failure),
    Concurrent(usize),
}

/// One controller generation's connection to the server.
#[derive(Clone)]
pub(crate) struct Tap {
    pub(crate) run: Arc<Mutex<Run>>,
    pub(crate) server: ApiServer,
    pub(crate) inner: kube::Client,
    pub(crate) generation: u32,
}

impl tower::Service<HttpRequest<Body>> for Tap {
    type Response = Response<TapBody>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequest<Body>) -> Self::Future {
        Box::pin(self.clone().serve(request))
    }
}

impl Tap {
    async fn serve(self, request: HttpRequest<Body>) -> Result<Response<TapBody>, BoxError> {
        let (mut parts, body) = request.into_parts();
        let method = parts.method.as_str().to_owned();
        let query = parts.uri.query().unwrap_or_default().to_owned();
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let param = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let watch = matches!(param("watch"), Some("true" | "1"));
        let write = matches!(method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE");
        // A list or a streaming list (a watch sending initial events) at `resourceVersion=0`
        // may be served by the watch cache.
        let streaming = watch && param("sendInitialEvents") == Some("true");
        let cached =
            method == "GET" && (!watch || streaming) && param("resourceVersion") == Some("0");
        let mut entry = Request {
            generation: self.generation,
            index: 0,
            write: None,
            method,
            route: Route::parse(parts.uri.path()),
            watch,
            selectors: format!(
                "{} {}",
                param("labelSelector").unwrap_or_default(),
                param("fieldSelector").unwrap_or_default()
            ),
            named: None,
            status: 0,
            changed: false,
            cached,
            perturbed: None,
        };
        let decided = self.decide(&mut entry, write);
        let Some((fate, stale)) = decided else {
            return futures::future::pending().await;
        };

        match fate {
            Fate::RestartBefore => {
                entry.perturbed = Some("restart: the write never left".to_owned());
                self.restart(entry, false);
                return futures::future::pending().await;
            }
            Fate::Fail(failure @ (Failure::Internal | Failure::Throttled)) => {
                let response = failed(failure);
                entry.status = response.status().as_u16();
                entry.perturbed = Some("failed once".to_owned());
                self.record(Entry::Request(entry));
                return Ok(response);
            }
            Fate::Concurrent(w) => {
                let uid = self.write_concurrently(&entry.route, w).await;
                entry.perturbed = Some(if uid.is_some() {
                    "another writer changed the object just before".to_owned()
                } else {
                    "another writer tried to change the object first, and could not".to_owned()
                });
                lock(&self.run).concurrent = Some(ConcurrentWrite {
                    route: object_route(&entry.route),
                    uid,
                });
            }
            _ => {}
        }

        // A stale list is the list at the past revision; a stale streaming list is the state
        // at that revision as initial events, then a watch from there.
        let mut past_state = Vec::new();
        if let Some(stale) = stale.filter(|_| cached) {
            let past = if streaming {
                self.initial_events_at(parts.uri.path(), &pairs, stale.revision)
                    .await
                    .map(|lines| past_state = lines)
            } else {
                Some(())
            };
            if past.is_some() {
                let mut rewritten: Vec<(String, String)> = pairs
                    .iter()
                    .filter(|(k, _)| {
                        !matches!(
                            k.as_str(),
                            "resourceVersion" | "resourceVersionMatch" | "sendInitialEvents"
                        )
                    })
                    .cloned()
                    .collect();
                rewritten.push(("resourceVersion".into(), stale.revision.to_string()));
                if !streaming {
                    rewritten.push(("resourceVersionMatch".into(), "Exact".into()));
                }
                let query = form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(rewritten)
                    .finish();
                let uri = format!("{}?{query}", parts.uri.path());
                parts.uri = uri.parse()?;
                entry.perturbed = Some(format!(
                    "served from the past, at resourceVersion {}",
                    stale.revision
                ));
            }
        }

        let before = self.server.resource_version();
        let response = self
            .inner
            .send(HttpRequest::from_parts(parts, body))
            .await?;
        let changed = write && self.server.resource_version() != before;
        entry.status = response.status().as_u16();
        entry.changed = changed;
        if changed && !super::run::is_record(&entry) {
            lock(&self.run).last_change = Instant::now();
        }
        let (parts, body) = response.into_parts();
        if watch && entry.status == 200 {
            let collection = format!("{} {}", entry.route.api_version, entry.route.resource);
            self.record(Entry::Request(entry));
            let body = self.filter_watch(body, collection, past_state);
            return Ok(Response::from_parts(parts, body));
        }
        let bytes = body.collect().await?.to_bytes();
        if entry.method == "POST" && entry.route.name.is_none() {
            entry.named = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v.pointer("/metadata/name")?.as_str().map(str::to_owned));
        }
        match fate {
            Fate::RestartAfter { stale } => {
                entry.perturbed = Some("restart: the write landed, its answer was lost".into());
                self.restart(entry, stale);
                futures::future::pending().await
            }
            Fate::Fail(Failure::Timeout) => {
                entry.perturbed = Some(format!(
                    "landed (answered {}), but the controller got a timeout",
                    entry.status
                ));
                let response = failed(Failure::Timeout);
                entry.status = response.status().as_u16();
                self.record(Entry::Request(entry));
                Ok(response)
            }
            _ => {
                self.record(Entry::Request(entry));
                Ok(Response::from_parts(parts, full(bytes)))
            }
        }
    }

    /// Numbers the request and picks what the schedule does to it; `None` when it is never to
    /// be answered (its controller was stopped, or the step's requests are spent).
    fn decide(&self, entry: &mut Request, write: bool) -> Option<(Fate, Option<Stale>)> {
        let mut run = lock(&self.run);
        if run.generation != self.generation {
            return None;
        }
        run.step_requests += 1;
        if run.step_requests > run.request_budget {
            if !run.exhausted {
                run.exhausted = true;
                run.signal(Signal::Exhausted);
            }
            return None;
        }
        entry.index = run.requests;
        run.requests += 1;
        if write {
            entry.write = Some(run.writes);
            run.writes += 1;
        }
        let fate = match run.plan {
            Some(Perturbation::RestartBefore(w)) if entry.write == Some(w) => Fate::RestartBefore,
            Some(Perturbation::RestartAfter(w)) if entry.write == Some(w) => {
                Fate::RestartAfter { stale: false }
            }
            Some(Perturbation::StaleRestart(w)) if entry.write == Some(w) => {
                Fate::RestartAfter { stale: true }
            }
            Some(Perturbation::ConcurrentWrite(w)) if entry.write == Some(w) => Fate::Concurrent(w),
            Some(Perturbation::Fail(n, failure)) if entry.index == n => Fate::Fail(failure),
            _ => Fate::Serve,
        };
        let stale = run
            .stale
            .filter(|s| s.generation == self.generation && Instant::now() < s.until);
        Some((fate, stale))
    }

    fn record(&self, entry: Entry) {
        lock(&self.run).trace.push(entry);
    }

    fn restart(&self, entry: Request, stale: bool) {
        let why = format!(
            "{} {}",
            entry.words(),
            entry.perturbed.as_deref().unwrap_or("")
        );
        let mut run = lock(&self.run);
        run.trace.push(Entry::Request(entry));
        run.signal(Signal::Restart { why, stale });
    }

    /// Another writer's merge patch of the object `route` names, as the next write would
    /// find it: an annotation only it sets. The uid of the object it changed, if it did.
    async fn write_concurrently(&self, route: &Route, write: usize) -> Option<String> {
        let route = object_route(route);
        let (Some(name), false) = (&route.name, route.api_version.is_empty()) else {
            return None;
        };
        let prefix = if route.api_version.contains('/') {
            "apis"
        } else {
            "api"
        };
        let namespace = route
            .namespace
            .as_ref()
            .map(|ns| format!("/namespaces/{ns}"))
            .unwrap_or_default();
        let uri = format!(
            "/{prefix}/{}{namespace}/{}/{name}?fieldManager={CONCURRENT_MANAGER}",
            route.api_version, route.resource
        );
        let patch = serde_json::json!({
            "metadata": {"annotations": {CONCURRENT_ANNOTATION: format!("write-{}", write + 1)}}
        });
        let request = HttpRequest::patch(uri)
            .header(header::CONTENT_TYPE, "application/merge-patch+json")
            .body(Body::from(patch.to_string().into_bytes()));
        let response = self.server.setup_client().send(request.ok()?).await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let body = response.into_body().collect().await.ok()?.to_bytes();
        let object: Value = serde_json::from_slice(&body).ok()?;
        object.pointer("/metadata/uid")?.as_str().map(str::to_owned)
    }

    /// The initial events of a streaming list at `revision` (its objects as ADDED, then the
    /// bookmark that ends them, as the watch cache sends them), or `None` when the server no
    /// longer has that revision.
    async fn initial_events_at(
        &self,
        path: &str,
        pairs: &[(String, String)],
        revision: u64,
    ) -> Option<Vec<Vec<u8>>> {
        let mut query: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| k == "labelSelector" || k == "fieldSelector")
            .cloned()
            .collect();
        query.push(("resourceVersion".into(), revision.to_string()));
        query.push(("resourceVersionMatch".into(), "Exact".into()));
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(query)
            .finish();
        let request = HttpRequest::get(format!("{path}?{query}"))
            .body(Body::empty())
            .ok()?;
        let response = self.inner.send(request).await.ok()?;
        if response.status() != StatusCode::OK {
            return None;
        }
        let bytes = response.into_body().collect().await.ok()?.to_bytes();
        let list: Value = serde_json::from_slice(&bytes).ok()?;
        let api_version = list["apiVersion"].clone();
        let kind = list["kind"].as_str()?.strip_suffix("List")?.to_owned();
        let line = |event: Value| format!("{event}\n").into_bytes();
        let mut lines = Vec::new();
        for mut item in list["items"].as_array().cloned().unwrap_or_default() {
            // A list's items may leave out what a watch event's object carries.
            if let Some(object) = item.as_object_mut() {
                object.insert("kind".into(), kind.clone().into());
                object.insert("apiVersion".into(), api_version.clone());
            }
            lines.push(line(serde_json::json!({"type": "ADDED", "object": item})));
        }
        // apiserver/pkg/storage/cacher: the bookmark that ends a streaming list's initial
        // events carries the `k8s.io/initial-events-end` annotation.
        lines.push(line(serde_json::json!({"type": "BOOKMARK", "object": {
            "kind": kind, "apiVersion": api_version,
            "metadata": {"resourceVersion": revision.to_string(),
                         "annotations": {"k8s.io/initial-events-end": "true"}}}})));
        Some(lines)
    }

    /// Passes a watch stream's events on one by one, as the schedule says, after `first`
    /// (lines delivered as they are).
    fn filter_watch(&self, mut body: Body, collection: String, first: Vec<Vec<u8>>) -> TapBody {
        let (mut tx, rx) = futures::channel::mpsc::channel::<Result<Frame<Bytes>, BoxError>>(8);
        let tap = self.clone();
        let lag = lock(&self.run).lag;
        let task = tokio::spawn(async move {
            let mut buffer: Vec<u8> = Vec::new();
            // An event held to be folded into the next one of its object: the line, the
            // object, and when it is delivered anyway.
            let mut held: Option<(Vec<u8>, String, Instant)> = None;
            for line in first {
                if tx.send(Ok(Frame::data(Bytes::from(line)))).await.is_err() {
                    return;
                }
            }
            loop {
                let next = match &held {
                    Some((_, _, until)) => tokio::select! {
                        frame = body.frame() => Some(frame),
                        () = tokio::time::sleep_until(*until) => None,
                    },
                    None => Some(body.frame().await),
                };
                let frame = match next {
                    // Nothing came behind it in time: it arrives late instead.
                    None => {
                        if let Some((line, ..)) = held.take()
                            && tx.send(Ok(Frame::data(Bytes::from(line)))).await.is_err()
                        {
                            return;
                        }
                        continue;
                    }
                    Some(Some(Ok(frame))) => frame,
                    Some(Some(Err(e))) => {
                        let _ = tx.send(Err(Box::new(e) as BoxError)).await;
                        return;
                    }
                    Some(None) => break,
                };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buffer.extend_from_slice(&data);
                while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    let (pass, object) = tap.on_event(&line, &collection).await;
                    match pass {
                        Pass::Deliver => {
                            // The held event goes first, unless this one replaces it.
                            let before = held.take().filter(|(_, o, _)| *o != object);
                            for line in before.map(|(l, ..)| l).into_iter().chain([line]) {
                                if tx.send(Ok(Frame::data(Bytes::from(line)))).await.is_err() {
                                    return;
                                }
                            }
                        }
                        Pass::Hold => held = Some((line, object, Instant::now() + lag)),
                        Pass::End => return,
                    }
                }
            }
            let rest = held.take().map(|(l, ..)| l).into_iter().chain([buffer]);
            for line in rest.filter(|l| !l.is_empty()) {
                let _ = tx.send(Ok(Frame::data(Bytes::from(line)))).await;
            }
        });
        lock(&self.run).watch_tasks.push(task);
        StreamBody::new(rx).boxed_unsync()
    }

    /// What becomes of one line of a watch, and the object its event is about.
    async fn on_event(&self, line: &[u8], collection: &str) -> (Pass, String) {
        let Ok(event) = serde_json::from_slice::<Value>(line) else {
            return (Pass::Deliver, String::new());
        };
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        if !matches!(kind.as_str(), "ADDED" | "MODIFIED" | "DELETED") {
            return (Pass::Deliver, String::new());
        }
        let meta = &event["object"]["metadata"];
        let text = |field: &str| meta[field].as_str().unwrap_or_default().to_owned();
        let object = match text("namespace") {
            ns if ns.is_empty() => text("name"),
            ns => format!("{ns}/{}", text("name")),
        };
        let mut entry = Event {
            generation: self.generation,
            index: 0,
            collection: collection.to_owned(),
            kind,
            object: object.clone(),
            revision: text("resourceVersion").parse().unwrap_or_default(),
            perturbed: None,
        };
        let (pass, hold) = {
            let mut run = lock(&self.run);
            if run.generation != self.generation {
                return (Pass::End, object);
            }
            entry.index = run.events;
            run.events += 1;
            let stale = run
                .stale
                .filter(|s| s.generation == self.generation && Instant::now() < s.until);
            let (pass, hold) = match run.plan {
                Some(Perturbation::DropEvent(n)) if n == entry.index => {
                    entry.perturbed =
                        Some("dropped: the watch ended, its history compacted".into());
                    self.server.compact_history();
                    (Pass::End, None)
                }
                Some(Perturbation::DelayEvent(n)) if n == entry.index => {
                    entry.perturbed = Some(format!("delivered {} s late", run.lag.as_secs()));
                    (Pass::Deliver, Some(Instant::now() + run.lag))
                }
                Some(Perturbation::CoalesceEvent(n)) if n == entry.index => {
                    entry.perturbed = Some(format!(
                        "held for the object's next event, which replaces it (delivered {} s \
                         late if none comes)",
                        run.lag.as_secs()
                    ));
                    (Pass::Hold, None)
                }
                _ => match stale {
                    Some(s) => {
                        entry.perturbed = Some("held back by the stale view".into());
                        (Pass::Deliver, Some(s.until))
                    }
                    None => (Pass::Deliver, None),
                },
            };
            run.trace.push(Entry::Event(entry));
            (pass, hold)
        };
        if let Some(until) = hold {
            tokio::time::sleep_until(until).await;
        }
        (pass, object)
    }
}

/// What becomes of one watch event.
enum Pass {
    Deliver,
    /// Held until the next line: dropped if that is an event of the same object.
    Hold,
    End,
}

/// The object a request addresses, without its subresource.
fn object_route(route: &Route) -> Route {
    Route {
        subresource: None,
        ..route.clone()
    }
}

fn full(bytes: Bytes) -> TapBody {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// The answer of an injected failure, as kube-apiserver words it.
fn failed(failure: Failure) -> Response<TapBody> {
    let (status, content_type, body, retry_after) = match failure {
        // apimachinery/pkg/api/errors/errors.go: NewInternalError.
        Failure::Internal => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "application/json",
            ApiError::internal("injected by the exploration").to_status_json(),
            None,
        ),
        // apiserver/pkg/server/filters/maxinflight.go: tooManyRequests, a plain-text body
        // (the priority-and-fairness filter answers the same way).
        Failure::Throttled => (
            StatusCode::TOO_MANY_REQUESTS,
            "text/plain; charset=utf-8",
            b"Too many requests, please try again later.\n".to_vec(),
            Some("1"),
        ),
        // apiserver/pkg/server/filters/timeout.go: NewTimeoutError once the deadline passes.
        Failure::Timeout => (
            StatusCode::GATEWAY_TIMEOUT,
            "application/json",
            ApiError::new(
                504,
                Reason::Timeout,
                "Timeout: request did not complete within requested timeout - context deadline \
                 exceeded",
            )
            .to_status_json(),
            None,
        ),
    };
    let mut response = Response::new(full(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    if let Some(seconds) = retry_after {
        headers.insert(
            header::RETRY_AFTER,
            header::HeaderValue::from_static(seconds),
        );
    }
    response
}
