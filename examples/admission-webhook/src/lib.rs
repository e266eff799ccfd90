//! Admission webhooks for a `Widget` custom resource, built from recon sub-reconcilers and
//! served over HTTPS by [`WebhookServer`].
//!
//! - `/mutate` ([`mutating_webhook`]): defaults `spec.size` to 1 and labels the widget
//!   `example.com/team: <spec.team>`. kube-apiserver applies the JSON Patch it answers with.
//! - `/validate` ([`validating_webhook`]): refuses a widget larger than [`MAX_SIZE`] with
//!   `422 Invalid`; never patches.
//!
//! [`WebhookClient`] posts to the server over TLS as kube-apiserver would, trusting only the
//! certificate it is given; the demo (`src/main.rs`) and the tests use it.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use kube::CustomResource;
use recon_core::admission::{AdmissionDenied, Operation, TlsConfig, WebhookServer};
use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The label [`mutating_webhook`] sets from `spec.team`.
pub const TEAM_LABEL: &str = "example.com/team";

/// The size [`mutating_webhook`] gives a widget without one.
pub const DEFAULT_SIZE: i32 = 1;

/// The largest size [`validating_webhook`] admits.
pub const MAX_SIZE: i32 = 10;

/// The path of the mutating webhook.
pub const MUTATE_PATH: &str = "/mutate";

/// The path of the validating webhook.
pub const VALIDATE_PATH: &str = "/validate";

/// A widget: `example.com/v1`, `Widget`, namespaced.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
pub struct WidgetSpec {
    /// How big; [`DEFAULT_SIZE`] when left out, at most [`MAX_SIZE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// The team that owns it, copied to the [`TEAM_LABEL`] label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// Defaults `spec.size` and sets the team label: what the mutating webhook runs.
pub fn defaults() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("WidgetDefaults").sync(async |_ctx, widget| {
        widget.spec.size.get_or_insert(DEFAULT_SIZE);
        if let Some(team) = &widget.spec.team {
            widget
                .metadata
                .labels
                .get_or_insert_default()
                .insert(TEAM_LABEL.to_owned(), team.clone());
        }
        Ok(())
    })
}

/// Refuses a widget larger than [`MAX_SIZE`] on create and update (a delete is always
/// allowed): what the validating webhook runs.
pub fn size_limit() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("WidgetSizeLimit").sync(async |ctx, widget| {
        let deleting = ctx
            .admission()
            .is_some_and(|a| a.request().operation == Operation::Delete);
        match widget.spec.size {
            Some(size) if size > MAX_SIZE && !deleting => Err(AdmissionDenied::invalid(format!(
                "spec.size: Invalid value: {size}: must be at most {MAX_SIZE}"
            ))
            .into()),
            _ => Ok(()),
        }
    })
}

/// The mutating webhook: [`defaults`], answered with a JSON Patch.
pub fn mutating_webhook(client: kube::Client) -> AdmissionWebhookAdapter<Widget> {
    AdmissionWebhookAdapter::new(Config::new(client, "widget-defaults"), defaults())
        .named("widget-defaults")
}

/// The validating webhook: [`size_limit`].
pub fn validating_webhook(client: kube::Client) -> AdmissionWebhookAdapter<Widget> {
    AdmissionWebhookAdapter::new(Config::new(client, "widget-validation"), size_limit())
        .named("widget-validation")
        .validating()
}

/// The server for both webhooks: [`mutating_webhook`] at [`MUTATE_PATH`] and
/// [`validating_webhook`] at [`VALIDATE_PATH`].
pub fn webhook_server(tls: TlsConfig, client: kube::Client) -> WebhookServer {
    WebhookServer::new(tls)
        .route(MUTATE_PATH, mutating_webhook(client.clone()))
        .route(VALIDATE_PATH, validating_webhook(client))
}

/// What can go wrong talking to the server.
pub type ClientError = Box<dyn std::error::Error + Send + Sync>;

/// An HTTPS client for one server, as kube-apiserver calls a webhook: it trusts only the
/// certificates it is given (the `caBundle`), and checks the server's certificate for the
/// server's IP address. One connection per request.
#[derive(Clone)]
pub struct WebhookClient {
    addr: SocketAddr,
    connector: TlsConnector,
}

impl WebhookClient {
    /// A client of the server at `addr`, trusting the certificates in `ca_pem`.
    pub fn trusting(addr: SocketAddr, ca_pem: &str) -> Result<Self, ClientError> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(cert?)?;
        }
        if roots.is_empty() {
            return Err("no certificate to trust in the CA PEM".into());
        }
        Self::with_roots(addr, roots)
    }

    /// A client of the server at `addr` that trusts no certificate at all: every handshake
    /// fails.
    pub fn trusting_no_one(addr: SocketAddr) -> Result<Self, ClientError> {
        Self::with_roots(addr, RootCertStore::empty())
    }

    fn with_roots(addr: SocketAddr, roots: RootCertStore) -> Result<Self, ClientError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(WebhookClient {
            addr,
            connector: TlsConnector::from(Arc::new(config)),
        })
    }

    /// Sends `request` (its path and query are used; the host is the server's) and reads the
    /// whole response.
    pub async fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, ClientError> {
        let tcp = TcpStream::connect(self.addr).await?;
        let tls = self
            .connector
            .connect(ServerName::from(self.addr.ip()), tcp)
            .await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
        let driving = tokio::spawn(connection);
        let (mut parts, body) = request.into_parts();
        let host = http::HeaderValue::from_str(&self.addr.to_string())?;
        parts.headers.insert(http::header::HOST, host);
        let response = sender
            .send_request(http::Request::from_parts(parts, Full::new(body)))
            .await?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        drop(sender);
        driving.await??;
        Ok(http::Response::from_parts(parts, body))
    }

    /// `POST`s `body` to `path` as `application/json`.
    pub async fn post_json(
        &self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<http::Response<Bytes>, ClientError> {
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.into())?;
        self.send(request).await
    }

    /// `GET`s `path`.
    pub async fn get(&self, path: &str) -> Result<http::Response<Bytes>, ClientError> {
        self.send(http::Request::get(path).body(Bytes::new())?)
            .await
    }
}

/// The `AdmissionReview` kube-apiserver posts for `operation` (`CREATE`, `UPDATE`, `DELETE`)
/// on a widget, as JSON: `object` is the widget sent (`null` for a delete), `old_object` the
/// stored one (for an update or a delete). The name and namespace are read from whichever is
/// given.
pub fn widget_review(
    uid: &str,
    operation: &str,
    object: Option<serde_json::Value>,
    old_object: Option<serde_json::Value>,
) -> serde_json::Value {
    let subject = object.as_ref().or(old_object.as_ref());
    let meta = |field: &str| {
        subject
            .and_then(|o| o["metadata"][field].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let options = match operation {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        _ => "DeleteOptions",
    };
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "requestKind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "requestResource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "name": meta("name"),
            "namespace": meta("namespace"),
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": object,
            "oldObject": old_object,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": options},
        }
    })
}
