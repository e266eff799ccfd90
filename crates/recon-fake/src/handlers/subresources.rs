//! The subresources a built-in serves besides `status` and `scale` (the `SubresourceInfo`s its
//! type lists), and the resources whose storage keeps nothing (`Serving::CreateOnly`,
//! `Serving::ReadOnly`): each routed to its handler.
//!
//! The kubelet's streams (`attach`, `exec`, `portforward`, `log`, `proxy`) need a node: the
//! in-memory server has none, so it answers as kube-apiserver does for a pod that has no host
//! (`pkg/registry/core/pod/strategy.go`, `ResourceLocation` and `streamLocation`).

use super::access_reviews::AccessReview;
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::request::route::Verb;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;

impl State {
    /// Serves `verb` on the subresource `sub` of `call`'s object; the router has checked that
    /// the subresource serves the verb.
    pub(crate) fn serve_subresource(
        &mut self,
        call: &Call<'_>,
        verb: Verb,
        sub: &str,
    ) -> Result<Reply, ApiError> {
        match (call.rt.group.as_str(), call.rt.plural.as_str(), sub) {
            ("", "pods", "attach" | "exec" | "portforward") => {
                let pod = self.parent(call)?;
                Err(no_host(call.name(), &pod))
            }
            ("", "pods", "log") => {
                let pod = self.parent(call)?;
                match node_name(&pod) {
                    // A pod never scheduled has no container to read from: an empty answer.
                    None => Ok(Reply::json(204, Vec::new())),
                    Some(node) => Err(no_kubelet(&node)),
                }
            }
            ("", "pods", "proxy") => {
                let pod = self.parent(call)?;
                match pod_ip(&pod) {
                    // `pod.ResourceLocation` refuses a pod without an address.
                    None => Err(ApiError::bad_request("address not allowed")),
                    Some(_) => Err(no_kubelet(&node_name(&pod).unwrap_or_default())),
                }
            }
            ("", "pods", "eviction") => self.evict(call),
            ("", "pods", "binding") => self.bind(call, false),
            ("", "pods", "ephemeralcontainers" | "resize") => self.write_pod_part(call, verb, sub),
            ("", "serviceaccounts", "token") => self.request_token(call),
            ("", "services", "proxy") => {
                self.parent(call)?;
                // `service.ResourceLocation` looks for a ready endpoint of the service; none
                // answers as if the service did not exist.
                Err(ApiError::not_found(&call.rt.group_resource(), call.name()))
            }
            // `/approval` reads and writes the request itself; its strategy keeps all but the
            // conditions (`Endpoint::Approval`).
            ("certificates.k8s.io", "certificatesigningrequests", "approval") => match verb {
                Verb::Get => self.get(call),
                Verb::Update => self.replace(call),
                _ => self.patch(call),
            },
            ("", "nodes", "proxy") => {
                self.parent(call)?;
                Err(no_kubelet(call.name()))
            }
            _ => Err(ApiError::internal(&format!(
                "the in-memory server does not serve {}/{sub} yet",
                call.rt.plural
            ))),
        }
    }

    /// Serves a resource whose storage keeps nothing; the router has checked the verb.
    pub(crate) fn serve_unstored(
        &mut self,
        call: &Call<'_>,
        verb: Verb,
    ) -> Result<Reply, ApiError> {
        match (call.rt.group.as_str(), call.rt.plural.as_str(), verb) {
            ("", "bindings", Verb::Create) => return self.bind(call, true),
            ("authentication.k8s.io", "tokenreviews", Verb::Create) => {
                return self.review_token(call);
            }
            ("", "componentstatuses", verb) => return self.component_statuses(call, verb),
            ("authentication.k8s.io", "selfsubjectreviews", Verb::Create) => {
                return self.review_self(call);
            }
            ("authorization.k8s.io", plural, Verb::Create) => {
                let review = match plural {
                    "subjectaccessreviews" => AccessReview::Subject,
                    "localsubjectaccessreviews" => AccessReview::Local,
                    "selfsubjectaccessreviews" => AccessReview::SelfSubject,
                    _ => return self.review_own_rules(call),
                };
                return self.review_access(call, review);
            }
            _ => {}
        }
        Err(ApiError::internal(&format!(
            "the in-memory server does not serve {} yet",
            call.rt.group_resource()
        )))
    }

    /// The stored object a subresource request is about, decoded; 404 naming it when missing.
    pub(crate) fn parent(
        &self,
        call: &Call<'_>,
    ) -> Result<recon_apimachinery::json::Map, ApiError> {
        let resource: GroupResource = call.rt.group_resource();
        let key = call.key();
        let stored = self
            .store
            .get(&resource, &key)
            .ok_or_else(|| ApiError::not_found(&resource, call.name()))?;
        crate::wire::object::decode_body(&key, &stored.body).map_err(|e| e.to_api_error())
    }
}

fn node_name(pod: &recon_apimachinery::json::Map) -> Option<String> {
    pod.get("spec")?
        .get("nodeName")?
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

fn pod_ip(pod: &recon_apimachinery::json::Map) -> Option<&str> {
    pod.get("status")?
        .get("podIP")?
        .as_str()
        .filter(|ip| !ip.is_empty())
}

/// `streamLocation`: a stream needs the node the pod runs on.
fn no_host(name: &str, pod: &recon_apimachinery::json::Map) -> ApiError {
    match node_name(pod) {
        None => ApiError::bad_request(format!("pod {name} does not have a host assigned")),
        Some(node) => no_kubelet(&node),
    }
}

/// What the in-memory server answers where kube-apiserver would dial a kubelet: it runs none.
fn no_kubelet(node: &str) -> ApiError {
    ApiError::new(
        503,
        crate::wire::status::Reason::ServiceUnavailable,
        format!(
            "no kubelet runs node {node:?} in the in-memory server: streams, logs and proxies through a node are not served"
        ),
    )
}
