//! The `tower::Service` behind `kube::Client`: reads a request, lets reactors act, routes it to
//! the verb handlers, records it, and writes the response.

#[cfg(test)]
mod proptests;

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::{HeaderValue, Method, Request, Response, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use recon_apimachinery::go_quote;

use crate::authz::impersonation::{Impersonation, impersonate};
use crate::authz::{Checked, forbidden, request_info};
use crate::controllers::apiextensions::schedule_crd_finalizer;
use crate::handlers::admission::{Admission, run_mutate_hooks};
use crate::handlers::check_body_size;
use crate::reactor::{MutateHook, Target, react};
use crate::record::{Common, LoggedAccess, Own, RequestLog, RequestOrigin};
use crate::registry::resource::{DeleteBehavior, ResourceType, Serving};
use crate::request::call::Call;
use crate::request::reply::{Body, Reply};
use crate::request::route::{Query, ResourcePath, Route, Verb, parse_path};
use crate::request::watch_stream::WatchStream;
use crate::state::State;
use crate::user::{ADMIN, UserInfo};
use crate::wire::error::ApiError;

/// The response body type of the service.
pub(crate) type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// The state every client of one server shares.
pub(crate) struct Shared {
    state: Mutex<State>,
}

impl Shared {
    pub(crate) fn new(state: State) -> Self {
        Shared {
            state: Mutex::new(state),
        }
    }

    /// The state; a panic in another request does not make it unusable.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// How many times a request's mutating hooks may run before the server gives up on an object
/// that other requests keep changing under them.
const MAX_ADMISSION_ROUNDS: usize = 16;

/// One client's connection to the server.
#[derive(Clone)]
pub(crate) struct FakeService {
    pub(crate) shared: Arc<Shared>,
    pub(crate) origin: RequestOrigin,
    /// Headers every request of this client carries (impersonation).
    pub(crate) headers: Arc<Vec<(http::HeaderName, HeaderValue)>>,
}

impl tower::Service<Request<kube::client::Body>> for FakeService {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<kube::client::Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

/// The request headers the server reads.
struct Headers {
    content_type: Option<String>,
    accept: String,
    user_agent: String,
    impersonation: Impersonation,
}

/// A request, read and routed.
struct Incoming {
    method: Method,
    path: String,
    query_string: String,
    query: Query,
    content_type: Option<String>,
    accept: String,
    user_agent: String,
    impersonation: Impersonation,
    body: Bytes,
    route: Route,
    verb: Verb,
    /// Whom the request acts as, what it asks and whether it may: decided once, when it is
    /// first served (a request served in several admission rounds is authorized once).
    access: OnceLock<Result<Checked, ApiError>>,
}

impl Incoming {
    fn new(method: Method, path: &str, query_string: &str, headers: Headers, body: Bytes) -> Self {
        let route = parse_path(path);
        let query = Query::parse(query_string);
        let has_name = matches!(&route, Route::Resource(r) if r.name.is_some());
        let verb = match &route {
            Route::Discovery(_) => Verb::of_non_resource(&method),
            _ => Verb::of(&method, has_name, query.flag("watch")),
        };
        Incoming {
            verb,
            method,
            path: path.to_owned(),
            query_string: query_string.to_owned(),
            query,
            content_type: headers.content_type,
            accept: headers.accept,
            user_agent: headers.user_agent,
            impersonation: headers.impersonation,
            body,
            route,
            access: OnceLock::new(),
        }
    }

    fn resource(&self) -> Option<&ResourcePath> {
        match &self.route {
            Route::Resource(r) => Some(r),
            Route::Discovery(_) | Route::Unknown => None,
        }
    }

    fn target(&self) -> Option<Target<'_>> {
        let r = self.resource()?;
        let name = match (&r.name, self.verb) {
            (Some(name), _) => Some(name.clone()),
            (None, Verb::Create) => {
                serde_json::from_slice::<recon_apimachinery::json::Value>(&self.body)
                    .ok()
                    .and_then(|b| b.get("metadata")?.get("name")?.as_str().map(str::to_owned))
            }
            (None, _) => None,
        };
        Some(Target {
            verb: self.verb,
            group: &r.group,
            resource: &r.plural,
            subresource: r.subresource.as_deref(),
            namespace: r.namespace.as_deref(),
            name,
        })
    }

    /// Logs this request, answered with `status`, `response` and `warnings`; `kind` is the
    /// kind its resource served before it was served, `served` whether the server served it
    /// (not a reactor).
    fn log(
        mut self,
        log: &mut RequestLog,
        origin: RequestOrigin,
        kind: Option<&ResourceType>,
        served: bool,
        (status, response, warnings): (u16, Body, &[String]),
    ) {
        let access = match self.access.into_inner() {
            Some(Ok(checked)) => LoggedAccess::Decided(checked.into_access()),
            Some(Err(_)) => LoggedAccess::Undecided,
            // Served without a check: the administrator's own request.
            None if served && !self.impersonation.is_requested() => LoggedAccess::Administrator,
            None => LoggedAccess::Undecided,
        };
        let own = Own {
            path: std::mem::take(&mut self.path),
            query: std::mem::take(&mut self.query_string),
            name: match &mut self.route {
                Route::Resource(r) => r.name.take(),
                Route::Discovery(_) | Route::Unknown => None,
            },
            // A copy at its exact size: the client's buffer, kept as it is, may be up to twice
            // as large, and the log keeps every body for the server's life.
            body: Bytes::copy_from_slice(&self.body),
            status,
            response,
            warnings: warnings.to_vec(),
        };
        let r = match &self.route {
            Route::Resource(r) => Some(r),
            Route::Discovery(_) | Route::Unknown => None,
        };
        let common = Common {
            origin,
            method: &self.method,
            verb: self.verb,
            group: r.map_or("", |r| &r.group),
            version: r.map_or("", |r| &r.version),
            resource: r.map_or("", |r| &r.plural),
            kind: kind.map_or("", |t| &t.kind),
            namespace: r.and_then(|r| r.namespace.as_deref()),
            subresource: r.and_then(|r| r.subresource.as_deref()),
            content_type: self.content_type.as_deref(),
            user_agent: &self.user_agent,
        };
        log.push(common, access, own);
    }
}

fn header_str(parts: &http::request::Parts, name: header::HeaderName) -> Option<String> {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl FakeService {
    async fn handle(self, request: Request<kube::client::Body>) -> Response<ResponseBody> {
        let (mut parts, body) = request.into_parts();
        for (name, value) in self.headers.iter() {
            parts.headers.append(name.clone(), value.clone());
        }
        // kube's request bodies are in memory: collecting them cannot fail.
        let body = body.collect_bytes().await.unwrap_or_default();
        let incoming = Incoming::new(
            parts.method.clone(),
            parts.uri.path(),
            parts.uri.query().unwrap_or(""),
            Headers {
                // Go reads any header bytes; a value that is not text must still reach the media
                // type parser and be refused there, not pass as a missing header.
                content_type: parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
                accept: header_str(&parts, header::ACCEPT).unwrap_or_default(),
                user_agent: header_str(&parts, header::USER_AGENT).unwrap_or_default(),
                impersonation: Impersonation::from_headers(&parts.headers),
            },
            body,
        );

        let (injected, hooks) = match self.origin {
            RequestOrigin::Client => self.run_reactors(&incoming).await,
            _ => (None, Vec::new()),
        };
        let mut state = self.shared.lock();
        let kind = state.kind_of(&incoming);
        let served = injected.is_none();
        let reply = match injected {
            Some(reply) => reply,
            None if hooks.is_empty() => state.serve(&incoming),
            None => {
                let (reply, locked) = self.serve_admitted(state, &incoming, &hooks);
                state = locked;
                reply
            }
        };
        // The log keeps the body in its parts (sharing the stored bytes); the client gets it
        // joined.
        let body = reply.body.to_bytes();
        state.log_request(
            self.origin,
            incoming,
            kind,
            served,
            (reply.status, reply.body, &reply.warnings),
        );
        let finalize = state.take_crd_finalizer_run();
        drop(state);
        if finalize {
            // The CRD finalizer runs on its own, after this response (as the real one does).
            schedule_crd_finalizer(&self.shared);
        }
        match reply.stream {
            Some(stream) => watch_response(stream),
            None => into_response(reply.status, body, reply.warnings, reply.content_type),
        }
    }

    /// Serves a request that has mutating hooks, in rounds (see [`Admission`]): each round runs
    /// the handler under the lock, and when it parks an object the hooks run on it with the
    /// lock released. Returns the reply with the lock held again.
    fn serve_admitted<'s>(
        &'s self,
        mut state: MutexGuard<'s, State>,
        incoming: &Incoming,
        hooks: &[MutateHook],
    ) -> (Reply, MutexGuard<'s, State>) {
        state.admission = Admission::Pending;
        for _ in 0..MAX_ADMISSION_ROUNDS {
            let reply = state.serve(incoming);
            let Some(input) = state.admission.take_wanted() else {
                state.admission = Admission::NoHooks;
                return (reply, state);
            };
            drop(state);
            let output = run_mutate_hooks(hooks, &input);
            state = self.shared.lock();
            state.admission = Admission::Answered { input, output };
        }
        state.admission = Admission::NoHooks;
        let err = ApiError::internal(&format!(
            "the object changed under its mutating admission hooks {MAX_ADMISSION_ROUNDS} times"
        ));
        (err.into(), state)
    }

    /// Runs the `before` hooks of matching reactors; returns the injected failure, if any, and
    /// the mutating admission hooks for the request.
    async fn run_reactors(&self, incoming: &Incoming) -> (Option<Reply>, Vec<MutateHook>) {
        if self.shared.lock().reactors.is_empty() {
            return (None, Vec::new());
        }
        let Some(target) = incoming.target() else {
            return (None, Vec::new());
        };
        let reactions = react(&mut self.shared.lock().reactors, &target);
        for hook in reactions.before {
            let client = kube::Client::new(
                FakeService {
                    shared: self.shared.clone(),
                    origin: RequestOrigin::Reactor,
                    headers: Arc::default(),
                },
                "default",
            );
            if AssertUnwindSafe(hook(client)).catch_unwind().await.is_err() {
                let failed = ApiError::internal("a reactor's before hook panicked").into();
                return (Some(failed), Vec::new());
            }
        }
        (reactions.failure.map(Reply::from), reactions.mutate)
    }
}

/// Go's `http.NotFound`: what the apiserver answers for paths nothing serves.
fn page_not_found() -> Reply {
    Reply::json(404, b"404 page not found\n".to_vec())
}

fn watch_response(stream: WatchStream) -> Response<ResponseBody> {
    let mut response = Response::new(stream.into_body());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn into_response(
    status: u16,
    body: Bytes,
    warnings: Vec<String>,
    content_type: Option<&'static str>,
) -> Response<ResponseBody> {
    let content_type = match content_type {
        Some(declared) => declared,
        None if body.first() == Some(&b'{') => "application/json",
        None => "text/plain; charset=utf-8",
    };
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() =
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    for warning in warnings {
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {}", go_quote(&warning))) {
            headers.append(header::WARNING, value);
        }
    }
    response
}

impl State {
    /// Serves a request, then sends what it changed to the open watches.
    fn serve(&mut self, incoming: &Incoming) -> Reply {
        let reply = if !incoming.impersonation.is_requested() {
            // The administrator may do anything: what it asks is worked out only when the log
            // is read.
            self.route(incoming, &ADMIN)
        } else {
            match incoming.access.get_or_init(|| self.check_access(incoming)) {
                Ok(checked) if checked.decision.allowed => {
                    self.route(incoming, &checked.attributes.user)
                }
                Ok(checked) => forbidden(&checked.attributes, &checked.decision.reason).into(),
                Err(refused) => refused.clone().into(),
            }
        };
        self.notify_watchers();
        reply
    }

    /// Whom an impersonating request acts as (the administrator, which every client is, asks
    /// to act as someone) and whether the authorizer allows what it asks, as kube-apiserver's
    /// filters decide before routing; an impersonation refused is the error. The
    /// administrator's own requests need no check ([`administrator_access`] says what they ask).
    ///
    /// [`administrator_access`]: crate::authz::administrator_access
    fn check_access(&self, incoming: &Incoming) -> Result<Checked, ApiError> {
        let user = impersonate(&ADMIN, &incoming.impersonation)?;
        let attributes =
            request_info::attributes(user, &incoming.method, &incoming.path, &incoming.query);
        let decision = self.authorize(&attributes);
        Ok(Checked {
            attributes,
            decision,
        })
    }

    /// Routes a request by `user` to its handler.
    fn route(&mut self, incoming: &Incoming, user: &UserInfo) -> Reply {
        let path = match &incoming.route {
            Route::Resource(path) => path,
            Route::Discovery(document) => {
                return self.discover(document, &incoming.method, &incoming.accept, &incoming.path);
            }
            Route::Unknown => return self.not_found(&incoming.path),
        };
        let Some(rt) = self.registry.find(&path.group, &path.version, &path.plural) else {
            return self.not_found(&incoming.path);
        };
        if let Err(reply) = check_route(&rt, path, incoming.verb, &incoming.method) {
            return reply;
        }
        let subresource = path
            .subresource
            .as_deref()
            .filter(|sub| rt.discovery.subresources.iter().any(|s| s.name == *sub));
        // Every subresource but `status` (and some kinds' `status`), and the kinds that store
        // nothing but answer a create (reviews, bindings), are served without a table convertor: a Table is
        // refused, or left out of what the request accepts.
        let tableless = matches!(path.subresource.as_deref(), Some("scale" | "finalize"))
            || (path.subresource.as_deref() == Some("status")
                && crate::table::status_without_table(&rt))
            || subresource.is_some()
            || rt.serving == Serving::CreateOnly;
        let without_table = if tableless {
            match crate::table::refuse_for_subresource(
                &rt,
                path.subresource.as_deref(),
                &incoming.accept,
            ) {
                Ok(accept) => accept,
                Err(e) => return e.into(),
            }
        } else {
            None
        };
        let accept = without_table.as_deref().unwrap_or(&incoming.accept);
        if let Err(e) = crate::table::check_printable(&rt, &path.version, accept) {
            return e.into();
        }
        let call = Call {
            path,
            rt,
            query: &incoming.query,
            content_type: incoming.content_type.as_deref().unwrap_or(""),
            accept,
            user_agent: &incoming.user_agent,
            user,
            body: &incoming.body,
            now: self.clock.now(),
        };
        // Every handler that reads a body reads it through the size limit first (a patch
        // checks its content type before).
        let reads_body = matches!(
            incoming.verb,
            Verb::Create | Verb::Update | Verb::Delete | Verb::DeleteCollection
        );
        if reads_body && let Err(e) = check_body_size(call.body) {
            return e.into();
        }
        if path.subresource.as_deref() == Some("scale") {
            return self.scale(&call, incoming.verb).unwrap_or_else(Reply::from);
        }
        let result = match incoming.verb {
            _ if call.rt.serving != Serving::Stored => self.serve_unstored(&call, incoming.verb),
            verb if subresource.is_some() => {
                self.serve_subresource(&call, verb, subresource.unwrap_or_default())
            }
            Verb::Get => self.get(&call),
            Verb::List => self.list(&call),
            Verb::Create => self.create(&call),
            Verb::Update => self.replace(&call),
            Verb::Patch => self.patch(&call),
            Verb::Delete => self.delete(&call),
            Verb::DeleteCollection => self.delete_collection(&call),
            Verb::Watch => self.watch(&call),
            Verb::Other => Err(ApiError::method_not_supported(
                &call.rt.group_resource(),
                &incoming.method.as_str().to_lowercase(),
            )),
        };
        result.unwrap_or_else(Reply::from)
    }

    /// A path nothing serves: kube-apiserver's router answers a `Status` under `/api` and the
    /// compiled-in groups; everything else falls through to Go's plain-text `404 page not found`.
    pub(crate) fn not_found(&self, path: &str) -> Reply {
        let mut segments = path.trim_start_matches('/').split('/');
        let routed = match (segments.next(), segments.next()) {
            (Some("api"), _) => true,
            (Some("apis"), Some(group)) => self.registry.is_builtin_group(group),
            _ => false,
        };
        if routed {
            ApiError::no_route().into()
        } else {
            page_not_found()
        }
    }
}

/// Whether the type's router serves `verb` on this path: scope (a namespaced type without a
/// namespace serves only list and watch; a cluster-scoped one has no namespaced paths),
/// subresources (`/status` and `/scale` serve get, update and patch where the type has them), and path shape.
/// The CRD handler and the compiled-in router word their refusals differently.
fn check_route(
    rt: &ResourceType,
    path: &ResourcePath,
    verb: Verb,
    method: &Method,
) -> Result<(), Reply> {
    let not_found = || -> Reply {
        if rt.custom {
            page_not_found()
        } else {
            ApiError::no_route().into()
        }
    };
    let not_allowed = |verb_name: &str| -> Reply {
        if rt.custom {
            ApiError::method_not_supported(&rt.group_resource(), verb_name).into()
        } else {
            ApiError::method_not_routed().into()
        }
    };
    let across_namespaces = rt.namespaced && path.namespace.is_none();
    if (across_namespaces && !matches!(verb, Verb::List | Verb::Watch))
        || (!rt.namespaced && path.namespace.is_some())
    {
        return Err(not_found());
    }
    let has_name = path.name.is_some();
    if rt.serving != Serving::Stored {
        return check_unstored_route(rt, has_name, verb);
    }
    if let Some(info) = path
        .subresource
        .as_deref()
        .and_then(|sub| rt.discovery.subresources.iter().find(|s| s.name == sub))
    {
        // The installer routes the subresource for the methods of its verbs only.
        return if info.verbs.contains(&verb.as_str()) {
            Ok(())
        } else {
            Err(ApiError::method_not_routed().into())
        };
    }
    if path.subresource.as_deref() == Some("finalize") && rt.delete == DeleteBehavior::Namespace {
        // `namespaces/{name}/finalize` is registered for PUT only (`FinalizeREST`).
        return match verb {
            Verb::Update => Ok(()),
            _ => Err(ApiError::method_not_routed().into()),
        };
    }
    if let Some(sub) = path.subresource.as_deref() {
        let served = match sub {
            "status" => rt.has_status(&path.version),
            "scale" => rt.has_scale(&path.version),
            _ => false,
        };
        if !served {
            // The CRD handler answers that the object is not found; the built-in router has no route.
            return Err(if rt.custom {
                ApiError::not_found(&rt.group_resource(), path.name.as_deref().unwrap_or("")).into()
            } else {
                ApiError::no_route().into()
            });
        }
        return match verb {
            Verb::Get | Verb::Update | Verb::Patch => Ok(()),
            Verb::Create => Err(not_allowed("create")),
            Verb::Delete => Err(not_allowed("delete")),
            _ => Err(not_allowed(&method.as_str().to_lowercase())),
        };
    }
    match verb {
        // The CRD handler creates from a POST to an object path too; the router does not route it.
        Verb::Create if has_name && !rt.custom => Err(ApiError::method_not_routed().into()),
        Verb::Update | Verb::Patch if !has_name => Err(if rt.custom {
            ApiError::bad_request("name must be provided").into()
        } else {
            ApiError::method_not_routed().into()
        }),
        Verb::Other if !rt.custom => Err(ApiError::method_not_routed().into()),
        _ => Ok(()),
    }
}

/// The routes of a resource whose storage keeps nothing: a collection path for `create` and
/// `list`, an object path for `get`, each only where the storage has the verb; a method not
/// served on a path that exists is a 405.
fn check_unstored_route(rt: &ResourceType, has_name: bool, verb: Verb) -> Result<(), Reply> {
    let serves = |v: &str| rt.discovery.verbs.contains(&v);
    let path_exists = if has_name {
        serves("get")
    } else {
        serves("create") || serves("list")
    };
    if !path_exists {
        return Err(ApiError::no_route().into());
    }
    let served = match verb {
        Verb::Create => serves("create") && !has_name,
        Verb::Get => serves("get"),
        // The list route takes `watch=true` too; the storage then refuses it.
        Verb::List | Verb::Watch => serves("list"),
        _ => false,
    };
    if served {
        Ok(())
    } else {
        Err(ApiError::method_not_routed().into())
    }
}

/// A request the server sends itself (set-up, its controllers): served by the same handlers as
/// a client's, without reactors.
pub(crate) struct InternalRequest<'a> {
    pub(crate) method: Method,
    pub(crate) path: &'a str,
    pub(crate) query: &'a str,
    pub(crate) content_type: &'a str,
    pub(crate) user_agent: &'a str,
    pub(crate) body: Vec<u8>,
}

impl State {
    /// Serves `request` as if it had come over the wire (so watches, history and managedFields
    /// see an ordinary write); logs it under `origin` when given.
    pub(crate) fn serve_internal(
        &mut self,
        origin: Option<RequestOrigin>,
        request: InternalRequest<'_>,
    ) -> Reply {
        let incoming = Incoming::new(
            request.method,
            request.path,
            request.query,
            Headers {
                content_type: Some(request.content_type.to_owned()),
                accept: "application/json".to_owned(),
                user_agent: request.user_agent.to_owned(),
                impersonation: Impersonation::default(),
            },
            Bytes::from(request.body),
        );
        let kind = self.kind_of(&incoming);
        // A controller's request has no hooks, even while it serves one of a client that has.
        let admission = std::mem::take(&mut self.admission);
        let reply = self.serve(&incoming);
        self.admission = admission;
        if let Some(origin) = origin {
            self.log_request(
                origin,
                incoming,
                kind,
                true,
                (reply.status, reply.body.clone(), &reply.warnings),
            );
        }
        reply
    }

    /// The type of a request's resource, for the log (none when not logging), resolved before
    /// serving: deleting a CRD can take its type away.
    fn kind_of(&self, incoming: &Incoming) -> Option<Arc<ResourceType>> {
        if !self.recording {
            return None;
        }
        incoming
            .resource()
            .and_then(|r| self.registry.get(&r.group, &r.plural))
    }

    /// Logs a request with its answer: status, body and `Warning`s.
    fn log_request(
        &mut self,
        origin: RequestOrigin,
        incoming: Incoming,
        kind: Option<Arc<ResourceType>>,
        served: bool,
        answer: (u16, Body, &[String]),
    ) {
        if self.recording {
            incoming.log(&mut self.log, origin, kind.as_deref(), served, answer);
        }
    }
}
