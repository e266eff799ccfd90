//! `/metrics`, `/healthz` and `/readyz` over plain HTTP/1.1, for Prometheus and the kubelet.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::metrics::{Metrics, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};
use super::probes::{Check, Probes};

/// How long a client gets to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long open connections get to finish once the endpoints stop.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

struct Endpoints {
    metrics: Metrics,
    probes: Probes,
}

/// Binds `addr` and serves until `stop` turns true. Returns the address bound (port 0 picks one).
pub(crate) async fn serve(
    addr: SocketAddr,
    metrics: Metrics,
    probes: Probes,
    stop: watch::Receiver<bool>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    tracing::info!(%local, "serving /metrics, /healthz and /readyz");
    let endpoints = Arc::new(Endpoints { metrics, probes });
    Ok((local, tokio::spawn(accept_loop(listener, endpoints, stop))))
}

async fn accept_loop(
    listener: TcpListener,
    endpoints: Arc<Endpoints>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stopped(&mut stop) => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    let endpoints = Arc::clone(&endpoints);
                    connections.spawn(async move {
                        let service = service_fn(move |request| {
                            let endpoints = Arc::clone(&endpoints);
                            async move { Ok::<_, Infallible>(endpoints.answer(&request)) }
                        });
                        // A client that never finishes its headers is dropped.
                        let served = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(HEADER_READ_TIMEOUT)
                            .serve_connection(TokioIo::new(tcp), service)
                            .await;
                        if let Err(e) = served {
                            tracing::debug!(error = %e, "an endpoints connection failed");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a connection to the endpoints");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let draining = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(CLOSE_GRACE, draining).await.is_err() {
        connections.shutdown().await;
    }
}

async fn stopped(stop: &mut watch::Receiver<bool>) {
    // An error means the sender is gone: stop as well.
    let _ = stop.wait_for(|s| *s).await;
}

impl Endpoints {
    fn answer<B>(&self, request: &http::Request<B>) -> http::Response<Full<Bytes>> {
        if request.method() != http::Method::GET && request.method() != http::Method::HEAD {
            let mut response = text(
                http::StatusCode::METHOD_NOT_ALLOWED,
                "only GET and HEAD\n".to_owned(),
            );
            response.headers_mut().insert(
                http::header::ALLOW,
                http::HeaderValue::from_static("GET, HEAD"),
            );
            return response;
        }
        let verbose = request.uri().query().is_some_and(|q| {
            q.split('&')
                .any(|pair| pair == "verbose" || pair.starts_with("verbose="))
        });
        match request.uri().path() {
            "/metrics" => self.metrics(request),
            "/healthz" | "/livez" => probe("healthz", &self.probes.liveness(), verbose),
            "/readyz" => probe("readyz", &self.probes.readiness(), verbose),
            path => text(
                http::StatusCode::NOT_FOUND,
                format!("nothing at {path}; try /metrics, /healthz or /readyz\n"),
            ),
        }
    }

    /// OpenMetrics to a scraper that asks for it, Prometheus's text format otherwise.
    fn metrics<B>(&self, request: &http::Request<B>) -> http::Response<Full<Bytes>> {
        let openmetrics = request
            .headers()
            .get_all(http::header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("application/openmetrics-text"));
        let (body, content_type) = if openmetrics {
            (self.metrics.encode_openmetrics(), OPENMETRICS_CONTENT_TYPE)
        } else {
            (self.metrics.encode_prometheus(), PROMETHEUS_CONTENT_TYPE)
        };
        let mut response = http::Response::new(Full::new(Bytes::from(body)));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(content_type),
        );
        response
    }
}

/// `ok` when every check passes (each listed with `?verbose`); else 500 with every check listed.
fn probe(name: &str, checks: &[Check], verbose: bool) -> http::Response<Full<Bytes>> {
    let healthy = checks.iter().all(|(_, result)| result.is_ok());
    if healthy && !verbose {
        return text(http::StatusCode::OK, "ok".to_owned());
    }
    let mut body = String::new();
    for (check, result) in checks {
        match result {
            Ok(()) => body.push_str(&format!("[+]{check} ok\n")),
            Err(why) => body.push_str(&format!("[-]{check} failed: {why}\n")),
        }
    }
    if healthy {
        body.push_str(&format!("{name} check passed\n"));
        text(http::StatusCode::OK, body)
    } else {
        body.push_str(&format!("{name} check failed\n"));
        text(http::StatusCode::INTERNAL_SERVER_ERROR, body)
    }
}

fn text(code: http::StatusCode, body: String) -> http::Response<Full<Bytes>> {
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = code;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response.headers_mut().insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    response
}
