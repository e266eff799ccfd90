//! A `kube::Client` that counts, from the requests themselves, the status writes and child
//! writes one controller sends: the runner hands one to each reconciler it runs.

use std::sync::Arc;

use kube::client::Body;

use super::metrics::{Metrics, WriteResult};

/// What a controller's writes are: its own resource's status, or children of the kinds its tree
/// owns (each as `(group, plural)`).
#[derive(Debug, Clone)]
pub(crate) struct WriteClassifier {
    pub(crate) controller: String,
    pub(crate) primary: (String, String),
    pub(crate) owned: Vec<(String, String)>,
}

/// A write, as the metrics count it.
#[derive(Debug, PartialEq, Eq)]
enum Counted {
    Status,
    Child {
        resource: String,
        verb: &'static str,
    },
}

impl WriteClassifier {
    fn classify(&self, method: &http::Method, path: &str) -> Option<Counted> {
        let verb = match *method {
            http::Method::POST => "create",
            http::Method::PUT => "update",
            http::Method::PATCH => "patch",
            http::Method::DELETE => "delete",
            _ => return None,
        };
        let target = ResourcePath::parse(path)?;
        let kind = (target.group.to_owned(), target.plural.to_owned());
        match target.subresource {
            Some("status") if kind == self.primary && verb != "create" && verb != "delete" => {
                Some(Counted::Status)
            }
            None if self.owned.contains(&kind) => Some(Counted::Child {
                resource: if target.group.is_empty() {
                    target.plural.to_owned()
                } else {
                    format!("{}.{}", target.plural, target.group)
                },
                verb,
            }),
            _ => None,
        }
    }
}

/// The group, resource and subresource of a Kubernetes API path.
struct ResourcePath<'a> {
    group: &'a str,
    plural: &'a str,
    subresource: Option<&'a str>,
}

impl<'a> ResourcePath<'a> {
    fn parse(path: &'a str) -> Option<Self> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (group, mut rest) = match segments.as_slice() {
            ["api", _version, rest @ ..] => ("", rest),
            ["apis", group, _version, rest @ ..] => (*group, rest),
            _ => return None,
        };
        // `namespaces/ns/<resource>…` scopes a namespaced resource; `namespaces/ns` and its
        // subresources are the Namespace itself.
        if let ["namespaces", _, resource, ..] = rest
            && !matches!(*resource, "status" | "finalize")
        {
            rest = &rest[2..];
        }
        match rest {
            [plural] | [plural, _] => Some(ResourcePath {
                group,
                plural,
                subresource: None,
            }),
            [plural, _, subresource, ..] => Some(ResourcePath {
                group,
                plural,
                subresource: Some(subresource),
            }),
            [] => None,
        }
    }
}

/// `client`, counting in `metrics` the writes `classifier` recognises.
pub(crate) fn metered(
    client: kube::Client,
    classifier: Arc<WriteClassifier>,
    metrics: Metrics,
) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let client = client.clone();
        let counted = classifier.classify(request.method(), request.uri().path());
        let classifier = Arc::clone(&classifier);
        let metrics = metrics.clone();
        async move {
            let answer = client.send(request).await;
            if let Some(counted) = counted {
                let code = answer.as_ref().ok().map(|r| r.status().as_u16());
                match counted {
                    Counted::Status => {
                        metrics.status_written(&classifier.controller, WriteResult::of(code));
                    }
                    Counted::Child { resource, verb } => {
                        if WriteResult::of(code) == WriteResult::Success {
                            metrics.child_written(&classifier.controller, &resource, verb);
                        }
                    }
                }
            }
            answer
        }
    });
    kube::Client::new(service, namespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classifier() -> WriteClassifier {
        WriteClassifier {
            controller: "widgets".to_owned(),
            primary: ("example.com".to_owned(), "widgets".to_owned()),
            owned: vec![
                (String::new(), "configmaps".to_owned()),
                ("apps".to_owned(), "deployments".to_owned()),
            ],
        }
    }

    #[test]
    fn status_writes_are_writes_of_the_primary_status_subresource() {
        let c = classifier();
        let path = "/apis/example.com/v1/namespaces/ns/widgets/w/status";
        assert_eq!(
            c.classify(&http::Method::PATCH, path),
            Some(Counted::Status)
        );
        assert_eq!(c.classify(&http::Method::PUT, path), Some(Counted::Status));
        assert_eq!(c.classify(&http::Method::GET, path), None);
        // A finalizer patch of the resource itself is neither.
        let path = "/apis/example.com/v1/namespaces/ns/widgets/w";
        assert_eq!(c.classify(&http::Method::PATCH, path), None);
    }

    #[test]
    fn child_writes_are_writes_of_owned_kinds() {
        let c = classifier();
        assert_eq!(
            c.classify(&http::Method::POST, "/api/v1/namespaces/ns/configmaps"),
            Some(Counted::Child {
                resource: "configmaps".to_owned(),
                verb: "create"
            })
        );
        assert_eq!(
            c.classify(
                &http::Method::DELETE,
                "/apis/apps/v1/namespaces/ns/deployments/d"
            ),
            Some(Counted::Child {
                resource: "deployments.apps".to_owned(),
                verb: "delete"
            })
        );
        // Events are not children; neither is a subresource of a child.
        assert_eq!(
            c.classify(
                &http::Method::POST,
                "/apis/events.k8s.io/v1/namespaces/ns/events"
            ),
            None
        );
        assert_eq!(
            c.classify(
                &http::Method::PUT,
                "/apis/apps/v1/namespaces/ns/deployments/d/scale"
            ),
            None
        );
    }

    #[test]
    fn a_namespace_path_is_the_namespace_itself() {
        let parsed = ResourcePath::parse("/api/v1/namespaces/ns/status").unwrap();
        assert_eq!(
            (parsed.plural, parsed.subresource),
            ("namespaces", Some("status"))
        );
        let parsed = ResourcePath::parse("/api/v1/namespaces/ns/configmaps/c").unwrap();
        assert_eq!((parsed.plural, parsed.subresource), ("configmaps", None));
        assert!(ResourcePath::parse("/version").is_none());
    }
}
