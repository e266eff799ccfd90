//! kube-controller-manager's root CA publisher
//! (`pkg/controller/certificates/rootcacertpublisher/publisher.go`), opt-in
//! ([`ApiServerBuilder::publish_root_ca`](crate::ApiServerBuilder::publish_root_ca)): every
//! active namespace holds the ConfigMap `kube-root-ca.crt` with the cluster's CA bundle
//! (`ca.crt`) and a description; one deleted is created again, one changed is put back. Run
//! after each write to a Namespace or a ConfigMap, as its informers would have caught up; a
//! server built with it publishes into its boot namespaces as it starts.

use http::Method;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::client::Controller;
use crate::client_service::InternalRequest;
use crate::record::RequestOrigin;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, meta_str};

/// `RootCACertConfigMapName`.
pub(crate) const CONFIG_MAP: &str = "kube-root-ca.crt";

const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";

/// The description the publisher annotates the ConfigMap with, as kube-controller-manager 1.36
/// words it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
when using internal endpoints such as the internal service IP or kubernetes.default.svc. No \
other usage is guaranteed across distributions of Kubernetes clusters.";

/// The in-memory cluster's CA: a self-signed certificate made for recon (no server uses its
/// key; a client has nothing to verify in memory).
const ROOT_CA: &str = include_str!("../../data/root-ca.crt");

impl State {
    /// `syncNamespace` for every active namespace; requests logged under `origin` when given.
    pub(crate) fn publish_root_ca(&mut self, origin: Option<RequestOrigin>) {
        let namespaces = GroupResource::new("", "namespaces");
        let active: Vec<String> = self
            .store
            .list(&namespaces, None)
            .filter_map(|(key, stored)| stored.decode(key).ok())
            .filter(|ns| {
                ns.get("status")
                    .and_then(|s| s.get("phase"))
                    .and_then(Value::as_str)
                    == Some("Active")
            })
            .map(|ns| meta_str(&ns, "name").to_owned())
            .collect();
        for namespace in active {
            self.publish_root_ca_in(&namespace, origin);
        }
    }

    fn publish_root_ca_in(&mut self, namespace: &str, origin: Option<RequestOrigin>) {
        let config_maps = GroupResource::new("", "configmaps");
        let key = object_key(Some(namespace), CONFIG_MAP);
        let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
        let current = self
            .store
            .get(&config_maps, &key)
            .map(|stored| stored.decode(&key));
        let (method, path, body) = match current {
            None => {
                let body = json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": CONFIG_MAP,
                        "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION},
                    },
                    "data": {"ca.crt": ROOT_CA},
                });
                (Method::POST, collection, body)
            }
            // One the informer cannot read is left as it is.
            Some(Err(_)) => return,
            Some(Ok(config_map)) if is_published(&config_map) => return,
            Some(Ok(mut config_map)) => {
                config_map.insert("apiVersion".into(), json!("v1"));
                config_map.insert("kind".into(), json!("ConfigMap"));
                config_map.insert("data".into(), json!({"ca.crt": ROOT_CA}));
                let metadata = config_map.entry("metadata").or_insert_with(|| json!({}));
                if let Some(metadata) = metadata.as_object_mut() {
                    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
                    if !annotations.is_object() {
                        *annotations = json!({});
                    }
                    annotations[DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
                }
                (
                    Method::PUT,
                    format!("{collection}/{CONFIG_MAP}"),
                    Value::Object(config_map),
                )
            }
        };
        self.serve_internal(
            origin,
            InternalRequest {
                method,
                path: &path,
                query: "",
                content_type: "application/json",
                user_agent: Controller::RootCaPublisher.user_agent(),
                body: body.to_string().into_bytes(),
            },
        );
    }
}

/// The data is the bundle alone and the description is there (`reflect.DeepEqual` of the data,
/// a non-empty annotation).
fn is_published(config_map: &Object) -> bool {
    let data_is_bundle = config_map
        .get("data")
        .and_then(Value::as_object)
        .is_some_and(|data| {
            data.len() == 1 && data.get("ca.crt").and_then(Value::as_str) == Some(ROOT_CA)
        });
    let described = config_map
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    data_is_bundle && described
}
