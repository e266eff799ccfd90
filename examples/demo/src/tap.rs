//! A `kube::Client` that reports every request it sends: the demo gives one to each operator, so
//! each request is known to come from that operator, and (the operator reconciling one object at
//! a time) from the reconcile under way. It works alike on the in-memory server and a cluster.

use std::sync::Arc;

use bytes::Bytes;
use kube::client::Body;
use serde_json::Value;

use crate::observe::describe_conditions;

/// One request an operator sent, and the answer.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// `POST`, `PATCH`…
    pub(crate) method: String,
    /// The resource, with its subresource: `deployments`, `gateways/status`.
    pub(crate) resource: String,
    /// The object named in the URL, or for a create in the body.
    pub(crate) name: Option<String>,
    /// A watch (a long-running GET).
    pub(crate) watch: bool,
    /// The status code, or why no answer came.
    pub(crate) outcome: Result<u16, String>,
    /// After a status write: the conditions the server stored.
    pub(crate) conditions: Option<String>,
    /// For an event write: `None` for a new event, the series count for a repeat (kube's
    /// `Recorder` publishes a repeat as a PATCH of the series' first event).
    pub(crate) series_count: Option<Option<i64>>,
}

impl Sent {
    /// Whether it changes something: everything but reads.
    pub(crate) fn is_write(&self) -> bool {
        matches!(self.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
    }

    /// `POST deployments`: what the summary counts.
    pub(crate) fn what(&self) -> String {
        format!("{} {}", self.method, self.resource)
    }

    /// `POST deployments edge → 201`, and the stored conditions after a status write.
    pub(crate) fn describe(&self) -> String {
        let mut line = self.what();
        if let Some(name) = &self.name {
            line.push(' ');
            line.push_str(name);
        }
        if self.watch {
            line.push_str(" (watch)");
        }
        match &self.outcome {
            Ok(code) => line.push_str(&format!(" → {code}")),
            Err(err) => line.push_str(&format!(" → no answer: {err}")),
        }
        if let Some(conditions) = &self.conditions {
            line.push_str(&format!("; now {conditions}"));
        }
        line
    }
}

/// `client`, reporting each request it sends to `report` once answered.
pub(crate) fn tap(client: kube::Client, report: Arc<dyn Fn(Sent) + Send + Sync>) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let client = client.clone();
        let report = Arc::clone(&report);
        async move {
            let method = request.method().as_str().to_owned();
            let path = request.uri().path().to_owned();
            let query = request.uri().query().unwrap_or_default().to_owned();
            // kube's request bodies are whole buffers: copying one reads no stream.
            let body = match request.body().try_clone() {
                Some(body) => body.collect_bytes().await.unwrap_or_default(),
                None => Bytes::new(),
            };
            let mut sent = Sent::new(&method, &path, &query, &body);
            let response = match client.send(request).await {
                Ok(response) => response,
                Err(err) => {
                    sent.outcome = Err(err.to_string());
                    report(sent);
                    return Err(err);
                }
            };
            sent.outcome = Ok(response.status().as_u16());
            // A status write answers with the object as stored: its conditions are what the
            // write did. Only such answers are read (a watch's must stream through untouched).
            let response = if sent.resource.ends_with("/status")
                && sent.is_write()
                && response.status().is_success()
            {
                let (parts, body) = response.into_parts();
                let bytes = match body.collect_bytes().await {
                    Ok(bytes) => bytes,
                    Err(err) => {
                        sent.outcome = Err(format!("the answer broke off: {err}"));
                        report(sent);
                        return Err(err);
                    }
                };
                let stored: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                sent.conditions = Some(describe_conditions(&stored)).filter(|c| !c.is_empty());
                http::Response::from_parts(parts, Body::from(bytes))
            } else {
                response
            };
            report(sent);
            Ok::<_, kube::Error>(response)
        }
    });
    kube::Client::new(service, namespace)
}

impl Sent {
    fn new(method: &str, path: &str, query: &str, body: &[u8]) -> Self {
        let (resource, mut name) = resource_of(path);
        let body: Value = serde_json::from_slice(body).unwrap_or_default();
        if name.is_none() && method == "POST" {
            name = body
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let series_count = (resource == "events").then(|| {
            (method == "PATCH")
                .then(|| body.pointer("/series/count").and_then(Value::as_i64))
                .flatten()
        });
        Sent {
            method: method.to_owned(),
            resource,
            name,
            watch: query
                .split('&')
                .any(|pair| pair == "watch=true" || pair == "watch=1"),
            // Until the answer comes.
            outcome: Err("not answered".to_owned()),
            conditions: None,
            series_count,
        }
    }
}

/// The resource (with its subresource) and the object name of a Kubernetes API path:
/// `/apis/apps/v1/namespaces/ns/deployments/edge` is `deployments` and `edge`. Another path
/// (`/version`) is its own resource.
fn resource_of(path: &str) -> (String, Option<String>) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segments.first() {
        Some(&"api") => segments.get(2..),
        Some(&"apis") => segments.get(3..),
        _ => None,
    };
    let Some(mut rest) = rest.filter(|r| !r.is_empty()) else {
        return (path.to_owned(), None);
    };
    // `namespaces/ns/…` scopes a namespaced resource; `namespaces/ns` and
    // `namespaces/ns/status` are a namespace itself.
    if rest[0] == "namespaces" && rest.len() >= 3 && !matches!(rest[2], "status" | "finalize") {
        rest = &rest[2..];
    }
    let resource = match rest.get(2) {
        Some(subresource) => format!("{}/{subresource}", rest[0]),
        None => rest[0].to_owned(),
    };
    (resource, rest.get(1).map(|s| (*s).to_owned()))
}
