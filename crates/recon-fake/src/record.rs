//! The request log: every request the server received, with the exact bytes sent and answered,
//! in the order they were served.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use http::Method;
use serde_json::Value;

use crate::authz::{Access, AccessTarget};
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
/// bytes they serve ([`Body`]). A request is compared with the latest shapes through borrowed
/// parts, so one alike costs no copy; entries are made whole again when the log is read.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestLog {
    entries: Vec<LoggedRequest>,
    /// The shapes of the latest entries, most recent last: where the next one is looked for.
    recent: Vec<Arc<Shape>>,
}

/// How many recent shapes a new entry is compared with.
const RECENT_SHAPES: usize = 8;

/// What a request shares with those alike, borrowed from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Common<'r> {
    pub(crate) origin: RequestOrigin,
    pub(crate) method: &'r Method,
    pub(crate) verb: Verb,
    pub(crate) group: &'r str,
    pub(crate) version: &'r str,
    pub(crate) resource: &'r str,
    pub(crate) kind: &'r str,
    pub(crate) namespace: Option<&'r str>,
    pub(crate) subresource: Option<&'r str>,
    pub(crate) content_type: Option<&'r str>,
    pub(crate) user_agent: &'r str,
}

/// What the log keeps of a request's access (in a shape, a decided access without its name).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LoggedAccess {
    /// Not decided: the impersonation was refused, or a reactor answered first.
    Undecided,
    /// The administrator's own request (no impersonation), which every check allows: what it
    /// asked depends on its method, path and query alone, and is worked out when read.
    Administrator,
    /// What the authorizer was asked, and its answer.
    Decided(Access),
}

/// What is each request's own.
#[derive(Debug, Clone)]
pub(crate) struct Own {
    pub(crate) path: String,
    pub(crate) query: String,
    pub(crate) name: Option<String>,
    pub(crate) body: Bytes,
    pub(crate) status: u16,
    pub(crate) response: Body,
    pub(crate) warnings: Vec<String>,
}

/// The parts of [`Common`], owned; the access without its name.
#[derive(Debug, Clone)]
struct Shape {
    origin: RequestOrigin,
    method: Method,
    verb: Verb,
    group: String,
    version: String,
    resource: String,
    kind: String,
    namespace: Option<String>,
    subresource: Option<String>,
    content_type: Option<String>,
    user_agent: String,
    access: LoggedAccess,
}

/// One entry: its shape, and what is its own.
#[derive(Debug, Clone)]
struct LoggedRequest {
    shape: Arc<Shape>,
    own: Own,
    /// The name in a decided access's target (the object's, or a non-resource path).
    access_name: String,
}

impl RequestLog {
    /// Appends a request: what it shares with others alike, its access, and its own parts.
    pub(crate) fn push(&mut self, common: Common<'_>, mut access: LoggedAccess, own: Own) {
        let access_name = match &mut access {
            LoggedAccess::Decided(Access {
                target:
                    AccessTarget::Resource { name, .. } | AccessTarget::NonResource { path: name },
                ..
            }) => std::mem::take(name),
            LoggedAccess::Undecided | LoggedAccess::Administrator => String::new(),
        };
        let shape = match self
            .recent
            .iter()
            .rposition(|s| s.is(&common) && s.access == access)
        {
            Some(i) => self.recent[i].clone(),
            None => {
                if self.recent.len() == RECENT_SHAPES {
                    self.recent.remove(0);
                }
                let shape = Arc::new(Shape::of(common, access));
                self.recent.push(shape.clone());
                shape
            }
        };
        self.entries.push(LoggedRequest {
            shape,
            own,
            access_name,
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

impl Shape {
    fn of(s: Common<'_>, access: LoggedAccess) -> Shape {
        Shape {
            origin: s.origin,
            method: s.method.clone(),
            verb: s.verb,
            group: s.group.to_owned(),
            version: s.version.to_owned(),
            resource: s.resource.to_owned(),
            kind: s.kind.to_owned(),
            namespace: s.namespace.map(str::to_owned),
            subresource: s.subresource.map(str::to_owned),
            content_type: s.content_type.map(str::to_owned),
            user_agent: s.user_agent.to_owned(),
            access,
        }
    }

    /// Whether a request sharing `s` is alike (its access aside).
    fn is(&self, s: &Common<'_>) -> bool {
        self.origin == s.origin
            && self.method == s.method
            && self.verb == s.verb
            && self.group == s.group
            && self.version == s.version
            && self.resource == s.resource
            && self.kind == s.kind
            && self.namespace.as_deref() == s.namespace
            && self.subresource.as_deref() == s.subresource
            && self.content_type.as_deref() == s.content_type
            && self.user_agent == s.user_agent
    }
}

impl LoggedRequest {
    fn to_recorded(&self) -> RecordedRequest {
        let shape = &*self.shape;
        let own = &self.own;
        let access = match &shape.access {
            LoggedAccess::Undecided => None,
            LoggedAccess::Administrator => Some(crate::authz::administrator_access(
                &shape.method,
                &own.path,
                &own.query,
            )),
            LoggedAccess::Decided(access) => {
                let mut access = access.clone();
                let (AccessTarget::Resource { name, .. }
                | AccessTarget::NonResource { path: name }) = &mut access.target;
                name.clone_from(&self.access_name);
                Some(access)
            }
        };
        RecordedRequest {
            origin: shape.origin,
            method: shape.method.clone(),
            path: own.path.clone(),
            query: own.query.clone(),
            verb: shape.verb,
            group: shape.group.clone(),
            version: shape.version.clone(),
            resource: shape.resource.clone(),
            kind: shape.kind.clone(),
            namespace: shape.namespace.clone(),
            name: own.name.clone(),
            subresource: shape.subresource.clone(),
            content_type: shape.content_type.clone(),
            user_agent: shape.user_agent.clone(),
            body: own.body.clone(),
            status: own.status,
            response: own.response.to_bytes(),
            warnings: own.warnings.clone(),
            access,
        }
    }
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

    /// Logs `r` as the server would: its shared parts borrowed, the rest its own.
    fn push(log: &mut RequestLog, r: &RecordedRequest, access: LoggedAccess, answer: &str) {
        let common = Common {
            origin: r.origin,
            method: &r.method,
            verb: r.verb,
            group: &r.group,
            version: &r.version,
            resource: &r.resource,
            kind: &r.kind,
            namespace: r.namespace.as_deref(),
            subresource: r.subresource.as_deref(),
            content_type: r.content_type.as_deref(),
            user_agent: &r.user_agent,
        };
        let own = Own {
            path: r.path.clone(),
            query: r.query.clone(),
            name: r.name.clone(),
            body: r.body.clone(),
            status: r.status,
            response: Body::from(answer.as_bytes().to_vec()),
            warnings: r.warnings.clone(),
        };
        log.push(common, access, own);
    }

    fn decided(r: &RecordedRequest) -> LoggedAccess {
        LoggedAccess::Decided(r.access.clone().expect("an access"))
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
            push(&mut log, r, decided(r), &format!("answer {i}"));
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

    #[test]
    fn the_administrators_access_is_worked_out_when_read_and_an_undecided_one_is_none() {
        let mut log = RequestLog::default();
        let r = request("a", Verb::Update, "{}");
        push(&mut log, &r, LoggedAccess::Administrator, "");
        push(&mut log, &r, LoggedAccess::Undecided, "");
        push(&mut log, &r, decided(&r), "");
        let read = log.to_records();
        let admin = &*crate::user::ADMIN;
        let expected = Access {
            user: admin.username.clone(),
            groups: admin.groups.clone(),
            ..r.access.clone().expect("an access")
        };
        assert_eq!(read[0].access.as_ref(), Some(&expected));
        assert_eq!(read[1].access, None);
        assert_eq!(read[2].access, r.access);
        // Alike but for their access: three shapes.
        assert!(!Arc::ptr_eq(&log.entries[0].shape, &log.entries[1].shape));
        assert!(!Arc::ptr_eq(&log.entries[1].shape, &log.entries[2].shape));
    }
}
