//! The request log: every request the server received, with the exact bytes sent and answered,
//! in the order they were served.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use http::Method;
use serde_json::Value;

use crate::authz::AccessTarget;
use crate::request::reply::Body;
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

/// The request log. Requests mostly differ in their path, name, query and bodies: what else a
/// request is (verb, resource, kind, namespace, headers, who sent it and as whom) is kept once,
/// in a shape shared by the entries alike in all that; the response bodies share the stored
/// bytes they serve ([`Body`]). Entries are made whole again when the log is read.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestLog {
    entries: Vec<LoggedRequest>,
    /// The shapes of the latest entries, most recent last: where the next one is looked for.
    recent: Vec<Arc<RecordedRequest>>,
}

/// How many recent shapes a new entry is compared with.
const RECENT_SHAPES: usize = 8;

/// One entry: its shape, and what is its own.
#[derive(Debug, Clone)]
struct LoggedRequest {
    /// The request with the fields below left empty.
    shape: Arc<RecordedRequest>,
    path: String,
    query: String,
    name: Option<String>,
    /// The name in the access's target (the object's, or a non-resource path).
    access_name: String,
    body: Bytes,
    status: u16,
    response: Body,
    warnings: Vec<String>,
}

impl RequestLog {
    /// Appends `request`, answered with `response`.
    pub(crate) fn push(&mut self, mut request: RecordedRequest, response: Body) {
        let path = std::mem::take(&mut request.path);
        let query = std::mem::take(&mut request.query);
        let name = request.name.take();
        let body = std::mem::take(&mut request.body);
        let warnings = std::mem::take(&mut request.warnings);
        let access_name = match request.access.as_mut().map(|a| &mut a.target) {
            Some(AccessTarget::Resource { name, .. }) => std::mem::take(name),
            Some(AccessTarget::NonResource { path }) => std::mem::take(path),
            None => String::new(),
        };
        let status = std::mem::replace(&mut request.status, 0);
        let shape = match self.recent.iter().rposition(|s| same_shape(s, &request)) {
            Some(i) => self.recent[i].clone(),
            None => {
                if self.recent.len() == RECENT_SHAPES {
                    self.recent.remove(0);
                }
                let shape = Arc::new(request);
                self.recent.push(shape.clone());
                shape
            }
        };
        self.entries.push(LoggedRequest {
            shape,
            path,
            query,
            name,
            access_name,
            body,
            status,
            response,
            warnings,
        });
    }

    /// Every request, whole.
    pub(crate) fn to_records(&self) -> Vec<RecordedRequest> {
        self.entries
            .iter()
            .map(LoggedRequest::to_recorded)
            .collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.recent.clear();
    }
}

impl LoggedRequest {
    fn to_recorded(&self) -> RecordedRequest {
        let mut access = self.shape.access.clone();
        match access.as_mut().map(|a| &mut a.target) {
            Some(AccessTarget::Resource { name, .. }) => name.clone_from(&self.access_name),
            Some(AccessTarget::NonResource { path }) => path.clone_from(&self.access_name),
            None => {}
        }
        RecordedRequest {
            path: self.path.clone(),
            query: self.query.clone(),
            name: self.name.clone(),
            body: self.body.clone(),
            status: self.status,
            response: self.response.to_bytes(),
            warnings: self.warnings.clone(),
            access,
            ..(*self.shape).clone()
        }
    }
}

/// Whether two requests stripped of what is each one's own are alike.
fn same_shape(a: &RecordedRequest, b: &RecordedRequest) -> bool {
    a.origin == b.origin
        && a.method == b.method
        && a.verb == b.verb
        && a.group == b.group
        && a.version == b.version
        && a.resource == b.resource
        && a.kind == b.kind
        && a.namespace == b.namespace
        && a.subresource == b.subresource
        && a.content_type == b.content_type
        && a.user_agent == b.user_agent
        && a.access == b.access
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::Access;

    fn request(name: &str, verb: Verb, body: &str) -> RecordedRequest {
        RecordedRequest {
            origin: RequestOrigin::Client,
            method: Method::PUT,
            path: format!("/api/v1/namespaces/default/configmaps/{name}"),
            query: "fieldManager=m".into(),
            verb,
            group: String::new(),
            version: "v1".into(),
            resource: "configmaps".into(),
            kind: "ConfigMap".into(),
            namespace: Some("default".into()),
            name: Some(name.into()),
            subresource: None,
            content_type: Some("application/json".into()),
            user_agent: "kube-rs".into(),
            body: Bytes::from(body.to_owned()),
            status: 200,
            response: Bytes::new(),
            warnings: vec![format!("warning about {name}")],
            access: Some(Access {
                user: "admin".into(),
                groups: vec!["system:masters".into()],
                verb: "update".into(),
                target: AccessTarget::Resource {
                    namespace: "default".into(),
                    group: String::new(),
                    resource: "configmaps".into(),
                    subresource: String::new(),
                    name: name.into(),
                },
                allowed: true,
            }),
        }
    }

    #[test]
    fn entries_read_back_whole_and_alike_ones_share_a_shape() {
        let mut log = RequestLog::default();
        let sent = [
            request("a", Verb::Update, "{\"a\":1}"),
            request("b", Verb::Update, "{\"b\":2}"),
            request("c", Verb::Patch, "{}"),
        ];
        for (i, r) in sent.iter().enumerate() {
            log.push(r.clone(), Body::from(format!("answer {i}").into_bytes()));
        }
        let read = log.to_records();
        for (i, (read, sent)) in read.iter().zip(&sent).enumerate() {
            let expected = RecordedRequest {
                response: Bytes::from(format!("answer {i}")),
                ..sent.clone()
            };
            assert_eq!(format!("{read:?}"), format!("{expected:?}"));
        }
        assert!(Arc::ptr_eq(&log.entries[0].shape, &log.entries[1].shape));
        assert!(!Arc::ptr_eq(&log.entries[1].shape, &log.entries[2].shape));
        log.clear();
        assert!(log.to_records().is_empty());
    }
}
