//! `WebhookServer`: an HTTPS server (hyper over rustls) for one or more admission webhooks,
//! with a health endpoint, a request size limit, a deadline for reading a request's body and
//! graceful shutdown bounded by a grace period.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::handler::{AdmissionHandler, BoxedAdmissionHandler, respond_boxed};
use super::tls::TlsConfig;
use crate::conversion::{ConversionHandler, respond_conversion};

/// The path of the health endpoint: `GET /healthz` answers `200 OK` with the body `ok` while
/// the server accepts connections (for a readiness or liveness probe with `scheme: HTTPS`).
///
/// ```
/// assert_eq!(recon_core::admission::HEALTH_PATH, "/healthz");
/// ```
pub const HEALTH_PATH: &str = "/healthz";

/// The largest request body a [`WebhookServer`] reads unless told otherwise: 8 MiB. A larger
/// one is answered `413 Payload Too Large`. (kube-apiserver's own limit on a request is 3 MiB,
/// and a review carries the object twice on an update.)
///
/// ```
/// assert_eq!(recon_core::admission::DEFAULT_MAX_BODY_SIZE, 8 << 20);
/// ```
pub const DEFAULT_MAX_BODY_SIZE: usize = 8 * 1024 * 1024;

/// How long a [`WebhookServer`] waits for a request's whole body unless told otherwise: 10
/// seconds, counted from the end of the headers. A body not read in time is answered
/// `408 Request Timeout` and the connection is closed.
///
/// kube-apiserver gives up on a webhook after the configuration's `timeoutSeconds`, 10 seconds
/// by default (30 at most), and it sends the whole review at once: a body still incomplete
/// after as long as kube-apiserver waits for the whole call comes from a stalled or hostile
/// client, not from kube-apiserver.
///
/// ```
/// use std::time::Duration;
///
/// assert_eq!(recon_core::admission::DEFAULT_BODY_READ_TIMEOUT, Duration::from_secs(10));
/// ```
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`RunningWebhookServer::shutdown`] lets requests under way finish unless told
/// otherwise: 25 seconds. The connections still open after it are closed.
///
/// It covers a call at kube-apiserver's default webhook timeout (10 seconds) with room to
/// spare, and ends before Kubernetes' default `terminationGracePeriodSeconds` (30 seconds)
/// would kill the pod, leaving the process a few seconds to exit cleanly.
///
/// ```
/// use std::time::Duration;
///
/// assert_eq!(recon_core::admission::DEFAULT_SHUTDOWN_GRACE_PERIOD, Duration::from_secs(25));
/// ```
pub const DEFAULT_SHUTDOWN_GRACE_PERIOD: Duration = Duration::from_secs(25);

/// How long a client has to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request's headers once it started.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the accept loop rests after failing to accept (out of file descriptors, say).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Why a [`WebhookServer`] cannot start.
///
/// ```
/// use recon_core::admission::WebhookServerError;
///
/// let err = WebhookServerError::DuplicateRoute { path: "/mutate".into() };
/// assert_eq!(err.to_string(), "the path /mutate is routed twice");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookServerError {
    /// No webhook was routed.
    #[error("no webhook is routed: add one with WebhookServer::route")]
    NoRoutes,
    /// A route's path is not an absolute path.
    #[error("cannot route {path:?}: {reason}")]
    InvalidPath {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two webhooks were routed at the same path.
    #[error("the path {path} is routed twice")]
    DuplicateRoute {
        /// The path.
        path: String,
    },
    /// A webhook was routed at [`HEALTH_PATH`].
    #[error("cannot route {path}: it is the health endpoint")]
    ReservedPath {
        /// The path.
        path: String,
    },
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// An HTTPS server for admission webhooks: each route is a path kube-apiserver posts
/// `AdmissionReview`s to (the `path` of the webhook configuration's `clientConfig`), answered
/// by an [`AdmissionHandler`], such as an
/// [`AdmissionWebhookAdapter`](crate::AdmissionWebhookAdapter) of any resource type.
///
/// - A request to a route is answered by [`respond`](crate::admission::respond): `POST` with an `application/json`
///   `AdmissionReview`, or an HTTP error with a `Status` body.
/// - `GET` [`HEALTH_PATH`] (`/healthz`) answers `200 OK` with `ok`.
/// - Any other path answers `404 Not Found` with a `Status` body; a body larger than the
///   limit ([`DEFAULT_MAX_BODY_SIZE`] unless [`max_body_size`](Self::max_body_size) says
///   otherwise), `413 Payload Too Large`; a body not read in time
///   ([`DEFAULT_BODY_READ_TIMEOUT`] unless [`body_read_timeout`](Self::body_read_timeout)
///   says otherwise), `408 Request Timeout`, and the connection is closed.
/// - It speaks HTTP/1.1 over TLS, each connection in a task of its own. A failed handshake
///   or a broken connection is logged and the server carries on.
/// - [`start`](Self::start) binds and serves in the background, and
///   [`RunningWebhookServer::shutdown`] stops it gracefully: no new connections, requests
///   under way are answered, and the connections still open after the grace period
///   ([`DEFAULT_SHUTDOWN_GRACE_PERIOD`] unless
///   [`shutdown_grace_period`](Self::shutdown_grace_period) says otherwise) are closed, then
///   it returns. [`serve_with_shutdown`](Self::serve_with_shutdown) does both around a signal.
///
/// Routes are checked when the server starts: each path starts with `/`, has no query or
/// fragment, is not [`HEALTH_PATH`], and is routed once; otherwise starting fails with a
/// [`WebhookServerError`].
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::admission::{SelfSignedCertificate, WebhookServer};
/// use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let noop = || SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
/// let defaulter = AdmissionWebhookAdapter::new(Config::new(client.clone(), "defaulter"), noop());
/// let validator = AdmissionWebhookAdapter::new(Config::new(client, "validator"), noop()).validating();
///
/// let tls = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap().tls_config().unwrap();
/// let server = WebhookServer::new(tls)
///     .route("/mutate", defaulter)
///     .route("/validate", validator)
///     .start("127.0.0.1:0".parse().unwrap())
///     .await
///     .unwrap();
/// assert_ne!(server.local_addr().port(), 0);
/// server.shutdown().await;
/// # });
/// ```
pub struct WebhookServer {
    tls: TlsConfig,
    routes: Vec<(String, Endpoint)>,
    max_body_size: usize,
    body_read_timeout: Duration,
    shutdown_grace_period: Duration,
}

impl WebhookServer {
    /// A server with no routes yet, serving HTTPS with `tls`.
    ///
    /// ```
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// let tls = SelfSignedCertificate::generate(&["webhook.default.svc"]).unwrap().tls_config().unwrap();
    /// let server = WebhookServer::new(tls);
    /// # let _ = server;
    /// ```
    pub fn new(tls: TlsConfig) -> Self {
        WebhookServer {
            tls,
            routes: Vec::new(),
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            shutdown_grace_period: DEFAULT_SHUTDOWN_GRACE_PERIOD,
        }
    }

    /// The same server, answering requests to `path` with `handler`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = recon_fake::ApiServer::new().client();
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
    /// let server = WebhookServer::new(tls)
    ///     .route("/mutate-configmaps", AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop));
    /// # let _ = server;
    /// # });
    /// ```
    #[must_use]
    pub fn route(self, path: impl Into<String>, handler: impl AdmissionHandler + 'static) -> Self {
        self.route_shared(path, Arc::new(handler))
    }

    /// The same server, answering requests to `path` with a handler shared with others (served
    /// at two paths, say).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = recon_fake::ApiServer::new().client();
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// # let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
    /// let webhook = Arc::new(AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop));
    /// let server = WebhookServer::new(tls)
    ///     .route_shared("/v1/mutate", Arc::clone(&webhook))
    ///     .route_shared("/v2/mutate", webhook);
    /// # let _ = server;
    /// # });
    /// ```
    #[must_use]
    pub fn route_shared(
        mut self,
        path: impl Into<String>,
        handler: Arc<impl AdmissionHandler + 'static>,
    ) -> Self {
        self.routes
            .push((path.into(), Endpoint::Admission(handler)));
        self
    }

    /// The same server, answering kube-apiserver's `ConversionReview`s at `path` with
    /// `handler` (a [`Conversion`](crate::conversion::Conversion)): the URL of a CRD's
    /// `conversion.webhook.clientConfig`.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// use recon_core::conversion::Conversion;
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let server = WebhookServer::new(tls).conversion("/convert", Conversion::<ConfigMap>::hub());
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn conversion(
        mut self,
        path: impl Into<String>,
        handler: impl ConversionHandler + 'static,
    ) -> Self {
        self.routes
            .push((path.into(), Endpoint::Conversion(Arc::new(handler))));
        self
    }

    /// The same server, answering bodies larger than `bytes` with `413 Payload Too Large`.
    ///
    /// ```
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let server = WebhookServer::new(tls).max_body_size(1024 * 1024);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body_size = bytes;
        self
    }

    /// The same server, giving a client `timeout` to send a request's whole body, counted from
    /// the end of its headers ([`DEFAULT_BODY_READ_TIMEOUT`] unless told otherwise).
    ///
    /// A body not read in time is answered `408 Request Timeout` with a `Status` body and
    /// `Connection: close`, and the connection is closed: the rest of the body may still
    /// arrive, so the connection cannot carry another request (RFC 9110, section 15.5.9). The
    /// handler is not called. Keep it at or under the webhook configuration's
    /// `timeoutSeconds`: kube-apiserver stops waiting after that anyway.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let server = WebhookServer::new(tls).body_read_timeout(Duration::from_secs(5));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The same server, letting requests under way finish for at most `grace_period` once
    /// [`RunningWebhookServer::shutdown`] is called (or `serve_with_shutdown`'s signal
    /// completes), then closing the connections still open ([`DEFAULT_SHUTDOWN_GRACE_PERIOD`]
    /// unless told otherwise). A request cut off this way gets no answer; its handler is
    /// dropped at its next `.await`. `Duration::ZERO` closes every connection at once.
    ///
    /// Keep it under the pod's `terminationGracePeriodSeconds`, so that shutting down
    /// returns before the pod is killed.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let server = WebhookServer::new(tls).shutdown_grace_period(Duration::from_secs(15));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn shutdown_grace_period(mut self, grace_period: Duration) -> Self {
        self.shutdown_grace_period = grace_period;
        self
    }

    /// Listens on `addr` (port 0 picks a free port: see
    /// [`RunningWebhookServer::local_addr`]) and serves in a background task until
    /// [`RunningWebhookServer::shutdown`], or until the handle is dropped. Needs a Tokio
    /// runtime.
    ///
    /// ```
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer, WebhookServerError};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// let err = WebhookServer::new(tls).start("127.0.0.1:0".parse().unwrap()).await.unwrap_err();
    /// assert!(matches!(err, WebhookServerError::NoRoutes));
    /// # });
    /// ```
    pub async fn start(self, addr: SocketAddr) -> Result<RunningWebhookServer, WebhookServerError> {
        let routes = checked_routes(self.routes)?;
        let bind_error = |source| WebhookServerError::Bind { addr, source };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        let mut paths: Vec<&str> = routes.keys().map(String::as_str).collect();
        paths.sort_unstable();
        tracing::info!(%local_addr, routes = ?paths, "the webhook server listens");
        let router = Arc::new(Router {
            routes,
            max_body_size: self.max_body_size,
            body_read_timeout: self.body_read_timeout,
        });
        let (stop, stopping) = watch::channel(false);
        let acceptor = TlsAcceptor::from(self.tls.server_config());
        let task = tokio::spawn(accept_loop(
            listener,
            acceptor,
            router,
            stopping,
            self.shutdown_grace_period,
        ));
        Ok(RunningWebhookServer {
            local_addr,
            stop,
            task,
        })
    }

    /// Listens on `addr` and serves until `signal` completes, then shuts down gracefully
    /// (see [`RunningWebhookServer::shutdown`]: within the
    /// [`shutdown_grace_period`](Self::shutdown_grace_period)) and returns.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = recon_fake::ApiServer::new().client();
    /// # let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// # let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
    /// # let webhook = AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop);
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let serving = tokio::spawn(
    ///     WebhookServer::new(tls)
    ///         .route("/mutate", webhook)
    ///         .serve_with_shutdown("127.0.0.1:0".parse().unwrap(), async {
    ///             let _ = stopped.await; // or tokio::signal::ctrl_c()
    ///         }),
    /// );
    /// stop.send(()).unwrap();
    /// serving.await.unwrap().unwrap();
    /// # });
    /// ```
    pub async fn serve_with_shutdown(
        self,
        addr: SocketAddr,
        signal: impl Future<Output = ()>,
    ) -> Result<(), WebhookServerError> {
        let running = self.start(addr).await?;
        signal.await;
        running.shutdown().await;
        Ok(())
    }
}

impl fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<(&str, &str)> = self
            .routes
            .iter()
            .map(|(path, endpoint)| (path.as_str(), endpoint.name()))
            .collect();
        f.debug_struct("WebhookServer")
            .field("routes", &routes)
            .field("max_body_size", &self.max_body_size)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("shutdown_grace_period", &self.shutdown_grace_period)
            .finish_non_exhaustive()
    }
}

/// A [`WebhookServer`] serving in the background, from [`WebhookServer::start`].
///
/// Dropping it stops the server as [`shutdown`](Self::shutdown) does, without waiting.
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
/// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// # let tls = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap().tls_config().unwrap();
/// # let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
/// # let webhook = AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop);
/// let server = WebhookServer::new(tls)
///     .route("/mutate", webhook)
///     .start("127.0.0.1:0".parse().unwrap())
///     .await
///     .unwrap();
/// println!("serving on https://{}/mutate", server.local_addr());
/// server.shutdown().await;
/// # });
/// ```
#[derive(Debug)]
pub struct RunningWebhookServer {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl RunningWebhookServer {
    /// The address the server listens on (with the port picked, if asked for port 0).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = recon_fake::ApiServer::new().client();
    /// # let tls = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap().tls_config().unwrap();
    /// # let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
    /// # let webhook = AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop);
    /// let server = WebhookServer::new(tls).route("/mutate", webhook)
    ///     .start("127.0.0.1:0".parse().unwrap()).await.unwrap();
    /// assert!(server.local_addr().ip().is_loopback());
    /// # server.shutdown().await;
    /// # });
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops the server gracefully: it stops accepting connections (and closes the idle
    /// ones), lets the requests under way be answered, and returns once every connection is
    /// closed. Connections still open after the
    /// [`shutdown_grace_period`](WebhookServer::shutdown_grace_period) are closed without an
    /// answer, so a stalled client or handler cannot hold it up longer. The stop is signalled
    /// when the returned future is first polled.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    /// # use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let client = recon_fake::ApiServer::new().client();
    /// # let tls = SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap().tls_config().unwrap();
    /// # let noop = SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
    /// # let webhook = AdmissionWebhookAdapter::new(Config::new(client, "cm"), noop);
    /// let server = WebhookServer::new(tls).route("/mutate", webhook)
    ///     .start("127.0.0.1:0".parse().unwrap()).await.unwrap();
    /// let addr = server.local_addr();
    /// server.shutdown().await;
    /// assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "no longer listening");
    /// # });
    /// ```
    pub async fn shutdown(self) {
        self.stop.send_replace(true);
        if let Err(e) = self.task.await {
            tracing::error!(error = %e, "the webhook server's accept loop failed");
        }
    }
}

/// What answers at a path.
#[derive(Clone)]
enum Endpoint {
    Admission(Arc<dyn BoxedAdmissionHandler>),
    Conversion(Arc<dyn ConversionHandler>),
}

impl Endpoint {
    fn name(&self) -> &str {
        match self {
            Endpoint::Admission(handler) => handler.name(),
            Endpoint::Conversion(handler) => handler.kind(),
        }
    }
}

/// The routes by path, checked.
fn checked_routes(
    routes: Vec<(String, Endpoint)>,
) -> Result<HashMap<String, Endpoint>, WebhookServerError> {
    if routes.is_empty() {
        return Err(WebhookServerError::NoRoutes);
    }
    let mut checked = HashMap::with_capacity(routes.len());
    for (path, handler) in routes {
        let invalid = |reason| WebhookServerError::InvalidPath {
            path: path.clone(),
            reason,
        };
        if !path.starts_with('/') {
            return Err(invalid("a path starts with '/'"));
        }
        if path.contains(['?', '#']) {
            return Err(invalid("a path has no query or fragment"));
        }
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid("a path has no spaces or control characters"));
        }
        if path == HEALTH_PATH {
            return Err(WebhookServerError::ReservedPath { path });
        }
        if checked.contains_key(&path) {
            return Err(WebhookServerError::DuplicateRoute { path });
        }
        checked.insert(path, handler);
    }
    Ok(checked)
}

/// What a connection needs to answer requests.
struct Router {
    routes: HashMap<String, Endpoint>,
    max_body_size: usize,
    body_read_timeout: Duration,
}

impl Router {
    /// Answers one request.
    async fn answer<B>(&self, request: http::Request<B>) -> http::Response<Full<Bytes>>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let path = request.uri().path();
        if path == HEALTH_PATH {
            return health(request.method());
        }
        let Some(endpoint) = self.routes.get(path) else {
            return failure(
                http::StatusCode::NOT_FOUND,
                "NotFound",
                format!("no webhook at {path}"),
            );
        };
        let endpoint = endpoint.clone();
        let (parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body_size as u64) {
            return self.too_large();
        }
        let reading = Limited::new(body, self.max_body_size).collect();
        let Ok(read) = tokio::time::timeout(self.body_read_timeout, reading).await else {
            return self.timed_out();
        };
        let body = match read {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return self.too_large(),
            Err(e) => {
                return failure(
                    http::StatusCode::BAD_REQUEST,
                    "BadRequest",
                    format!("cannot read the body: {e}"),
                );
            }
        };
        let request = http::Request::from_parts(parts, body);
        let response = match &endpoint {
            Endpoint::Admission(handler) => respond_boxed(handler.as_ref(), request).await,
            Endpoint::Conversion(handler) => respond_conversion(handler.as_ref(), request),
        };
        response.map(Full::new)
    }

    fn too_large(&self) -> http::Response<Full<Bytes>> {
        failure(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            format!("the body is larger than {} bytes", self.max_body_size),
        )
    }

    /// The answer to a body not read within the deadline. The connection is closed after it:
    /// what is left of the body may still arrive and cannot be told from a next request
    /// (hyper does not reuse a connection whose request body was not read to the end either).
    fn timed_out(&self) -> http::Response<Full<Bytes>> {
        let mut response = failure(
            http::StatusCode::REQUEST_TIMEOUT,
            "Timeout",
            format!("the body was not read within {:?}", self.body_read_timeout),
        );
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        response
    }
}

fn health(method: &http::Method) -> http::Response<Full<Bytes>> {
    if method == http::Method::GET || method == http::Method::HEAD {
        let mut response = http::Response::new(Full::new(Bytes::from_static(b"ok")));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return response;
    }
    let mut response = failure(
        http::StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        format!("{HEALTH_PATH} takes GET, not {method}"),
    );
    response.headers_mut().insert(
        http::header::ALLOW,
        http::HeaderValue::from_static("GET, HEAD"),
    );
    response
}

/// An HTTP error with a `metav1.Status` body, as [`respond`] writes them.
fn failure(code: http::StatusCode, reason: &str, message: String) -> http::Response<Full<Bytes>> {
    crate::webhook_http::failure(code, reason, message).map(Full::new)
}

/// Completes once the server is told to stop (or its handle is gone).
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    // An error means the handle was dropped: stop as well.
    let _ = stopping.wait_for(|stop| *stop).await;
}

/// Accepts connections until told to stop, then waits for the open ones to close, for at most
/// `grace_period`; those still open then are closed.
async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    router: Arc<Router>,
    mut stopping: watch::Receiver<bool>,
    grace_period: Duration,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stopped(&mut stopping) => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let serve = serve_connection(
                        tcp,
                        peer,
                        acceptor.clone(),
                        Arc::clone(&router),
                        stopping.clone(),
                    );
                    connections.spawn(serve);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            Some(done) = connections.join_next(), if !connections.is_empty() => {
                log_panic(done);
            }
        }
    }
    drop(listener);
    tracing::info!(
        open_connections = connections.len(),
        "the webhook server stopped accepting connections"
    );
    let draining = async {
        while let Some(done) = connections.join_next().await {
            log_panic(done);
        }
    };
    if tokio::time::timeout(grace_period, draining).await.is_err() {
        tracing::warn!(
            open_connections = connections.len(),
            ?grace_period,
            "closing the webhook connections still open after the shutdown grace period"
        );
        // Aborts each connection's task (dropping its socket) and waits for them to end.
        connections.shutdown().await;
    }
    tracing::info!("the webhook server stopped");
}

fn log_panic(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        tracing::error!(error = %e, "a webhook connection task failed");
    }
}

/// Serves one connection: the TLS handshake, then HTTP/1.1 requests until the client closes
/// it or the server stops.
async fn serve_connection(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    router: Arc<Router>,
    mut stopping: watch::Receiver<bool>,
) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(%peer, error = %e, "cannot set TCP_NODELAY");
    }
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp));
    let tls = tokio::select! {
        () = stopped(&mut stopping) => return,
        shaken = handshake => match shaken {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => {
                tracing::warn!(%peer, error = %e, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::warn!(%peer, "TLS handshake timed out");
                return;
            }
        },
    };
    let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let router = Arc::clone(&router);
        async move {
            let method = request.method().clone();
            let path = request.uri().path().to_owned();
            let response = router.answer(request).await;
            tracing::debug!(%peer, %method, %path, status = response.status().as_u16(), "answered");
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let connection = builder.serve_connection(TokioIo::new(tls), service);
    let mut connection = std::pin::pin!(connection);
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = stopped(&mut stopping) => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = served {
        tracing::debug!(%peer, error = %e, "the connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;
    use jiff::Timestamp;
    use serde_json::{Value, json};

    use super::*;
    use crate::admission::{Admission, AdmissionResponse, SelfSignedCertificate};

    /// Allows everything, and says so in a warning naming itself.
    struct Allow(&'static str);

    impl AdmissionHandler for Allow {
        fn name(&self) -> &str {
            self.0
        }

        fn is_mutating(&self) -> bool {
            false
        }

        async fn handle_at(&self, admission: Admission, _now: Timestamp) -> AdmissionResponse {
            AdmissionResponse::allow(admission.request().uid.clone())
                .with_warning(format!("allowed by {}", self.0))
        }
    }

    /// Tells the test it was called, then answers once `release` turns `true` (or its sender
    /// is dropped).
    struct Held {
        started: tokio::sync::mpsc::UnboundedSender<()>,
        release: watch::Receiver<bool>,
    }

    impl AdmissionHandler for Held {
        fn name(&self) -> &str {
            "held"
        }

        fn is_mutating(&self) -> bool {
            false
        }

        async fn handle_at(&self, admission: Admission, _now: Timestamp) -> AdmissionResponse {
            let _ = self.started.send(());
            let mut release = self.release.clone();
            let _ = release.wait_for(|go| *go).await;
            AdmissionResponse::allow(admission.request().uid.clone())
        }
    }

    fn allow(name: &'static str) -> Endpoint {
        Endpoint::Admission(Arc::new(Allow(name)))
    }

    fn router(max_body_size: usize) -> Router {
        let routes = checked_routes(vec![
            ("/mutate".to_owned(), allow("mutate")),
            ("/validate".to_owned(), allow("validate")),
            (
                "/convert".to_owned(),
                Endpoint::Conversion(Arc::new(crate::conversion::Conversion::<
                    k8s_openapi::api::core::v1::ConfigMap,
                >::hub())),
            ),
        ])
        .unwrap();
        Router {
            routes,
            max_body_size,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
        }
    }

    fn certificate() -> SelfSignedCertificate {
        SelfSignedCertificate::generate(&["127.0.0.1"]).unwrap()
    }

    fn tls() -> TlsConfig {
        certificate().tls_config().unwrap()
    }

    /// A TLS connection to the server at `addr`, trusting `certificate`, to write raw HTTP on.
    async fn connect(
        addr: SocketAddr,
        certificate: &SelfSignedCertificate,
    ) -> tokio_rustls::client::TlsStream<TcpStream> {
        use rustls_pki_types::pem::PemObject as _;

        let mut roots = rustls::RootCertStore::empty();
        let cert =
            rustls_pki_types::CertificateDer::from_pem_slice(certificate.cert_pem().as_bytes())
                .unwrap();
        roots.add(cert).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(addr).await.unwrap();
        let name = rustls_pki_types::ServerName::from(addr.ip());
        connector.connect(name, tcp).await.unwrap()
    }

    /// Writes the headers of a `POST /mutate` announcing a 1000-byte body, and 13 bytes of it.
    async fn send_a_partial_body(tls: &mut tokio_rustls::client::TlsStream<TcpStream>) {
        let request = "POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\n\
                       content-type: application/json\r\ncontent-length: 1000\r\n\r\n\
                       {\"apiVersion\"";
        tokio::io::AsyncWriteExt::write_all(tls, request.as_bytes())
            .await
            .unwrap();
        tokio::io::AsyncWriteExt::flush(tls).await.unwrap();
    }

    /// Writes a whole `POST /mutate` of [`review`].
    async fn send_a_review(tls: &mut tokio_rustls::client::TlsStream<TcpStream>) {
        let body = review().to_string();
        let request = format!(
            "POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(tls, request.as_bytes())
            .await
            .unwrap();
        tokio::io::AsyncWriteExt::flush(tls).await.unwrap();
    }

    /// Everything the server sends until it closes the connection (a TLS connection closed
    /// without `close_notify` ends in an error; what came before it counts).
    async fn read_until_closed(tls: &mut tokio_rustls::client::TlsStream<TcpStream>) -> String {
        let mut received = Vec::new();
        let reading = tokio::io::AsyncReadExt::read_to_end(tls, &mut received);
        // Only a guard against a hang: the deadlines under test are far shorter.
        let _ = tokio::time::timeout(HANG_GUARD, reading)
            .await
            .expect("the server did not close the connection");
        String::from_utf8_lossy(&received).into_owned()
    }

    /// How long a test waits before calling a server hung: far longer than the deadlines the
    /// tests set, so it never decides a test that works.
    const HANG_GUARD: Duration = Duration::from_secs(30);

    /// A deadline the tests set, short so they are quick.
    const SHORT: Duration = Duration::from_millis(200);

    fn review() -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "c", "namespace": "default", "operation": "CREATE",
                "userInfo": {"username": "admin"},
                "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
            }
        })
    }

    fn post(path: &str, body: impl Into<Bytes>) -> http::Request<Full<Bytes>> {
        http::Request::post(path)
            .header("content-type", "application/json")
            .body(Full::new(body.into()))
            .unwrap()
    }

    async fn body_json(response: http::Response<Full<Bytes>>) -> Value {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn check(paths: &[&str]) -> Result<(), WebhookServerError> {
        let routes = paths
            .iter()
            .map(|p| ((*p).to_owned(), allow("x")))
            .collect();
        checked_routes(routes).map(|_| ())
    }

    #[test]
    fn a_path_routed_twice_is_an_error() {
        let err = check(&["/mutate", "/validate", "/mutate"]).unwrap_err();
        assert!(
            matches!(&err, WebhookServerError::DuplicateRoute { path } if path == "/mutate"),
            "{err}"
        );
    }

    #[test]
    fn a_path_must_be_absolute_without_query() {
        for (path, reason) in [
            ("mutate", "a path starts with '/'"),
            ("", "a path starts with '/'"),
            ("/mutate?x=1", "a path has no query or fragment"),
            ("/mu tate", "a path has no spaces or control characters"),
        ] {
            match check(&[path]) {
                Err(WebhookServerError::InvalidPath { path: p, reason: r }) => {
                    assert_eq!((p.as_str(), r), (path, reason));
                }
                other => panic!("{path:?}: expected InvalidPath, got {other:?}"),
            }
        }
        check(&["/", "/a/b-c_d.e"]).unwrap();
    }

    #[test]
    fn the_health_path_and_no_routes_are_errors() {
        assert!(matches!(
            check(&["/healthz"]),
            Err(WebhookServerError::ReservedPath { .. })
        ));
        assert!(matches!(check(&[]), Err(WebhookServerError::NoRoutes)));
    }

    #[tokio::test]
    async fn a_route_error_is_reported_by_start_before_binding() {
        let err = WebhookServer::new(tls())
            .route("/a", Allow("a"))
            .route("b", Allow("b"))
            .start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot route \"b\": a path starts with '/'"
        );
    }

    #[tokio::test]
    async fn a_conversion_route_answers_conversion_reviews() {
        let router = router(DEFAULT_MAX_BODY_SIZE);
        let conversion = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c-1", "desiredAPIVersion": "v1", "objects": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]}
        });
        let response = router
            .answer(post("/convert", conversion.to_string()))
            .await;
        assert_eq!(response.status(), http::StatusCode::OK);
        let body = body_json(response).await;
        assert_eq!(body["kind"], "ConversionReview");
        assert_eq!(body["response"]["uid"], "c-1");
        assert_eq!(
            body["response"]["convertedObjects"][0]["metadata"]["name"],
            "c"
        );
        // An admission review sent to it is not a conversion review.
        let response = router.answer(post("/convert", review().to_string())).await;
        assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn requests_are_routed_by_path() {
        let router = router(DEFAULT_MAX_BODY_SIZE);
        for path in ["/mutate", "/validate"] {
            let response = router.answer(post(path, review().to_string())).await;
            assert_eq!(response.status(), http::StatusCode::OK);
            let body = body_json(response).await;
            assert_eq!(body["response"]["uid"], "u-1");
            assert_eq!(
                body["response"]["warnings"],
                json!([format!("allowed by {}", &path[1..])])
            );
        }
    }

    #[tokio::test]
    async fn a_route_answers_as_respond_does() {
        let router = router(DEFAULT_MAX_BODY_SIZE);
        let get = http::Request::get("/mutate")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = router.answer(get).await;
        assert_eq!(response.status(), http::StatusCode::METHOD_NOT_ALLOWED);
        let response = router.answer(post("/mutate", "{")).await;
        assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn healthz_answers_ok() {
        let router = router(DEFAULT_MAX_BODY_SIZE);
        let get = http::Request::get(HEALTH_PATH)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = router.answer(get).await;
        assert_eq!(response.status(), http::StatusCode::OK);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "ok");
        let response = router.answer(post(HEALTH_PATH, "{}")).await;
        assert_eq!(response.status(), http::StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(response.headers()[http::header::ALLOW], "GET, HEAD");
    }

    #[tokio::test]
    async fn an_unknown_path_is_a_not_found_status() {
        let router = router(DEFAULT_MAX_BODY_SIZE);
        let response = router.answer(post("/other", review().to_string())).await;
        assert_eq!(response.status(), http::StatusCode::NOT_FOUND);
        assert_eq!(
            response.headers()[http::header::CONTENT_TYPE],
            "application/json"
        );
        assert_eq!(
            body_json(response).await,
            json!({
                "apiVersion": "v1", "kind": "Status", "status": "Failure",
                "message": "no webhook at /other", "reason": "NotFound", "code": 404,
            })
        );
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_too_large() {
        let body = review().to_string();
        let router = router(body.len() - 1);
        // Declared too large up front.
        let mut declared = post("/mutate", body.clone());
        declared.headers_mut().insert(
            http::header::CONTENT_LENGTH,
            http::HeaderValue::from(body.len()),
        );
        let response = router.answer(declared).await;
        assert_eq!(response.status(), http::StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(body_json(response).await["code"], 413);
        // Found too large while reading (no content-length).
        let stream = futures::stream::iter(
            body.as_bytes()
                .chunks(64)
                .map(|c| Ok::<_, Infallible>(http_body::Frame::data(Bytes::copy_from_slice(c))))
                .collect::<Vec<_>>(),
        );
        let request = http::Request::post("/mutate")
            .header("content-type", "application/json")
            .body(http_body_util::StreamBody::new(stream))
            .unwrap();
        let response = router.answer(request).await;
        assert_eq!(response.status(), http::StatusCode::PAYLOAD_TOO_LARGE);
        // At the limit is fine.
        let router = self::router(body.len());
        let response = router.answer(post("/mutate", body)).await;
        assert_eq!(response.status(), http::StatusCode::OK);
    }

    #[tokio::test]
    async fn serve_with_shutdown_returns_once_signalled() {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(
            WebhookServer::new(tls())
                .route("/mutate", Allow("mutate"))
                .serve_with_shutdown("127.0.0.1:0".parse().unwrap(), async {
                    let _ = stopped.await;
                }),
        );
        stop.send(()).unwrap();
        serving.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_busy_port_is_a_bind_error() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = WebhookServer::new(tls())
            .route("/mutate", Allow("mutate"))
            .start(addr)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, WebhookServerError::Bind { addr: a, .. } if *a == addr),
            "{err}"
        );
    }

    #[tokio::test]
    async fn shutdown_closes_the_listener_and_ignores_a_plain_tcp_client() {
        let server = WebhookServer::new(tls())
            .route("/mutate", Allow("mutate"))
            .start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let addr = server.local_addr();
        // Not TLS: the handshake fails, and the server carries on.
        let mut plain = TcpStream::connect(addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut plain, b"GET /healthz HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut plain, &mut answer)
            .await
            .ok();
        assert!(
            !answer.starts_with(b"HTTP/1.1 200"),
            "answered over plain TCP"
        );
        server.shutdown().await;
        assert!(TcpStream::connect(addr).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_not_read_in_time_is_a_request_timeout() {
        let mut router = router(DEFAULT_MAX_BODY_SIZE);
        router.body_read_timeout = SHORT;
        // 13 bytes, then nothing more, ever.
        let stalled = futures::stream::iter([Ok::<_, Infallible>(http_body::Frame::data(
            Bytes::from_static(b"{\"apiVersion\""),
        ))])
        .chain(futures::stream::pending());
        let request = http::Request::post("/mutate")
            .header("content-type", "application/json")
            .header("content-length", "1000")
            .body(http_body_util::StreamBody::new(stalled))
            .unwrap();
        // The clock is paused: it jumps to the earlier of the two deadlines.
        let response = tokio::time::timeout(HANG_GUARD, router.answer(request))
            .await
            .expect("the body was waited for without a deadline");
        assert_eq!(response.status(), http::StatusCode::REQUEST_TIMEOUT);
        assert_eq!(response.headers()[http::header::CONNECTION], "close");
        assert_eq!(
            body_json(response).await,
            json!({
                "apiVersion": "v1", "kind": "Status", "status": "Failure",
                "message": "the body was not read within 200ms", "reason": "Timeout", "code": 408,
            })
        );
    }

    #[tokio::test]
    async fn a_stalled_body_is_answered_408_and_its_connection_closed() {
        let certificate = certificate();
        let server = WebhookServer::new(certificate.tls_config().unwrap())
            .route("/mutate", Allow("mutate"))
            .body_read_timeout(SHORT)
            .start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mut tls = connect(server.local_addr(), &certificate).await;
        send_a_partial_body(&mut tls).await;
        let answer = read_until_closed(&mut tls).await;
        assert!(
            answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
            "{answer}"
        );
        assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
        assert!(answer.contains(r#""reason":"Timeout""#), "{answer}");
        tokio::time::timeout(HANG_GUARD, server.shutdown())
            .await
            .expect("shutdown hung");
    }

    #[tokio::test]
    async fn shutdown_closes_a_connection_stalled_in_its_body_after_the_grace_period() {
        let certificate = certificate();
        let server = WebhookServer::new(certificate.tls_config().unwrap())
            .route("/mutate", Allow("mutate"))
            // Only the grace period can end the stalled request.
            .body_read_timeout(Duration::from_secs(3600))
            .shutdown_grace_period(SHORT)
            .start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let addr = server.local_addr();
        let mut tls = connect(addr, &certificate).await;
        send_a_partial_body(&mut tls).await;
        // Lets the server read the headers, so the request is under way when it is told to
        // stop (were it not, the connection would be idle and closed at once: the test would
        // pass without showing anything).
        tokio::time::sleep(SHORT).await;
        tokio::time::timeout(HANG_GUARD, server.shutdown())
            .await
            .expect("shutdown hung on a stalled body");
        assert_eq!(read_until_closed(&mut tls).await, "", "answered");
        assert!(TcpStream::connect(addr).await.is_err());
    }

    #[tokio::test]
    async fn serve_with_shutdown_is_bounded_by_the_grace_period_too() {
        let certificate = certificate();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (started, mut handler_started) = tokio::sync::mpsc::unbounded_channel();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        // Kept, never sent: the handler never answers.
        let (_release, released) = watch::channel(false);
        let never = Held {
            started,
            release: released,
        };
        let serving = tokio::spawn(
            WebhookServer::new(certificate.tls_config().unwrap())
                .route("/mutate", never)
                .shutdown_grace_period(SHORT)
                .serve_with_shutdown(addr, async {
                    let _ = stopped.await;
                }),
        );
        let mut tls = loop {
            // The server may not listen yet.
            if TcpStream::connect(addr).await.is_ok() {
                break connect(addr, &certificate).await;
            }
            tokio::task::yield_now().await;
        };
        send_a_review(&mut tls).await;
        handler_started.recv().await.unwrap();
        stop.send(()).unwrap();
        tokio::time::timeout(HANG_GUARD, serving)
            .await
            .expect("serve_with_shutdown hung on a handler that never answers")
            .unwrap()
            .unwrap();
        assert_eq!(read_until_closed(&mut tls).await, "", "answered");
    }

    #[tokio::test]
    async fn shutdown_lets_a_request_under_way_be_answered() {
        let certificate = certificate();
        let (started, mut handler_started) = tokio::sync::mpsc::unbounded_channel();
        let (release, released) = watch::channel(false);
        let held = Held {
            started,
            release: released,
        };
        let server = WebhookServer::new(certificate.tls_config().unwrap())
            .route("/mutate", held)
            .shutdown_grace_period(HANG_GUARD)
            .start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let mut tls = connect(server.local_addr(), &certificate).await;
        send_a_review(&mut tls).await;
        handler_started.recv().await.unwrap();
        let mut shutting_down = std::pin::pin!(server.shutdown());
        // Polled once, it has told the server to stop; then the handler answers.
        assert!(futures::poll!(shutting_down.as_mut()).is_pending());
        release.send_replace(true);
        let answer = read_until_closed(&mut tls).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains(r#""uid":"u-1""#), "{answer}");
        tokio::time::timeout(HANG_GUARD, shutting_down)
            .await
            .expect("shutdown hung");
    }
}
