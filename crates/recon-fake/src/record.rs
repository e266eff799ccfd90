//! The request log: every request the server received, with the exact bytes sent and answered,
//! in the order they were served.

use std::fmt;

use bytes::Bytes;

use crate::request::reply::Body;
use http::Method;
use serde_json::Value;

use crate::request::route::Verb;

/// Who sent a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestOrigin {
    /// A client from [`ApiServer::client`](crate::ApiServer::client): the code under test.
    Client,
    /// The client a reactor's `before` hook was given: a simulated concurrent writer.
    Reactor,
    /// The server's own set-up helpers, such as [`ApiServer::install_crd`](crate::ApiServer::install_crd),
    /// and [`ApiServer::setup_client`](crate::ApiServer::setup_client).
    Setup,
    /// The controllers [`ApiServer::collect_garbage`](crate::ApiServer::collect_garbage) runs:
    /// the garbage collector and the namespace controller of kube-controller-manager.
    Controller,
}

/// One request as the server received it, and what it answered.
///
/// ```
/// # async fn demo() -> Result<(), kube::Error> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
/// use recon_fake::{ApiServer, Verb};
///
/// let server = ApiServer::new();
/// let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// api.create(&PostParams::default(), &cm).await?;
///
/// let create = &server.requests()[0];
/// assert_eq!((create.verb, create.resource.as_str(), create.status), (Verb::Create, "configmaps", 201));
/// assert_eq!(create.body_json().unwrap()["metadata"]["name"], "settings");
/// # Ok(())
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// Who sent it.
    pub origin: RequestOrigin,
    /// The HTTP method.
    pub method: Method,
    /// The URL path, e.g. `/api/v1/namespaces/default/configmaps/settings`.
    pub path: String,
    /// The raw query string (without `?`), as the client wrote it.
    pub query: String,
    /// The Kubernetes verb.
    pub verb: Verb,
    /// The API group (empty for the core group and for non-resource paths).
    pub group: String,
    /// The API version (empty for non-resource paths).
    pub version: String,
    /// The resource plural (empty for non-resource paths).
    pub resource: String,
    /// The kind the resource serves (empty when the server does not serve it).
    pub kind: String,
    /// The namespace of the URL, if any.
    pub namespace: Option<String>,
    /// The object name of the URL, if any.
    pub name: Option<String>,
    /// The subresource (`status`), if any.
    pub subresource: Option<String>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The `User-Agent` header, empty when none was sent (kube-apiserver's audit log keeps it
    /// too): tells apart clients that share a server, such as two replicas of an operator.
    pub user_agent: String,
    /// The request body, byte for byte.
    pub body: Bytes,
    /// The response status code.
    pub status: u16,
    /// The response body, byte for byte.
    pub response: Bytes,
    /// The `Warning` headers of the response, as their text: `unknown field "spec.colour"`
    /// for a field the schema does not declare, which the server dropped.
    pub warnings: Vec<String>,
    /// Whom the request acted as, what it asked as the authorizer reads it, and whether that
    /// was allowed; `None` for a request whose impersonation was refused, or one a reactor
    /// answered before the server.
    pub access: Option<crate::Access>,
}

impl RecordedRequest {
    /// The request body parsed as JSON, if it is JSON.
    pub fn body_json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The response body parsed as JSON, if it is JSON.
    pub fn response_json(&self) -> Option<Value> {
        serde_json::from_slice(&self.response).ok()
    }

    /// The first value of a query parameter, decoded.
    pub fn query_param(&self, key: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }

    /// Whether the request wrote nothing it could have (a dry run).
    pub fn is_dry_run(&self) -> bool {
        self.query_param("dryRun").as_deref() == Some("All")
            || self
                .body_json()
                .and_then(|b| b.get("dryRun").cloned())
                .is_some_and(|d| d == serde_json::json!(["All"]))
    }
}

impl fmt::Display for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.query.is_empty() && self.query != "&" {
            write!(f, "?{}", self.query.trim_start_matches('&'))?;
        }
        write!(f, " -> {}", self.status)
    }
}

/// A request as the log keeps it: the response body in its parts, sharing the stored bytes it
/// serves (see [`Body`]); joined when the log is read.
#[derive(Debug, Clone)]
pub(crate) struct LoggedRequest {
    /// The request, its `response` left empty.
    pub(crate) request: RecordedRequest,
    pub(crate) response: Body,
}

impl LoggedRequest {
    /// The request with its response.
    pub(crate) fn to_recorded(&self) -> RecordedRequest {
        RecordedRequest {
            response: self.response.to_bytes(),
            ..self.request.clone()
        }
    }
}
