//! kube-apiserver's CRD registration controller
//! (`pkg/controlplane/controller/crdregistration/crdregistration_controller.go`), with the
//! autoregister controller that writes what it asks for (`kube-aggregator/pkg/controllers/
//! autoregister`): every version a CustomResourceDefinition serves gets a local APIService
//! `<version>.<group>`, labelled as automanaged, with group priority 1000 and version priority
//! 100; one whose version no CRD serves any more is deleted. An APIService of that name that
//! is not automanaged is left alone. Run after each write to a CRD, as its informer would have
//! caught up.

use std::collections::BTreeMap;

use http::Method;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::client_service::InternalRequest;
use crate::state::State;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, meta_str};

/// The label autoregister marks the APIServices it manages with, and its value for those it
/// keeps in sync for as long as they are wanted.
const MANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";
const MANAGED_CONTINUOUSLY: &str = "true";

const APISERVICES_PATH: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

impl State {
    /// Brings the CRDs' APIServices in line with the versions the stored CRDs serve.
    pub(crate) fn register_crd_versions(&mut self) {
        let desired = self.served_crd_versions();
        let apiservices = GroupResource::new("apiregistration.k8s.io", "apiservices");
        // Only the managed ones are read whole: the labels are known without decoding, and the
        // others (the built-in groups', a user's) are only in the way of a name.
        let current: BTreeMap<String, Object> = self
            .store
            .list(&apiservices, None)
            .filter_map(|(key, stored)| {
                let managed = stored.label(MANAGED_LABEL) == Some(MANAGED_CONTINUOUSLY);
                let apiservice = match managed {
                    true => stored.decode(key).ok()?,
                    // What does not decode is not in the lister, managed or not.
                    false if !stored.readable() => return None,
                    false => Object::new(),
                };
                Some((key.clone(), apiservice))
            })
            .collect();
        for (name, spec) in &desired {
            match current.get(name) {
                None => {
                    let body = json!({
                        "apiVersion": "apiregistration.k8s.io/v1",
                        "kind": "APIService",
                        "metadata": {"name": name, "labels": {MANAGED_LABEL: MANAGED_CONTINUOUSLY}},
                        "spec": spec,
                    });
                    self.send(Method::POST, APISERVICES_PATH.to_owned(), body);
                }
                Some(apiservice) if is_managed(apiservice) && !same_spec(apiservice, spec) => {
                    let mut updated = apiservice.clone();
                    updated.insert("apiVersion".into(), json!("apiregistration.k8s.io/v1"));
                    updated.insert("kind".into(), json!("APIService"));
                    updated.insert("spec".into(), spec.clone());
                    self.send(
                        Method::PUT,
                        format!("{APISERVICES_PATH}/{name}"),
                        Value::Object(updated),
                    );
                }
                Some(_) => {}
            }
        }
        for (name, apiservice) in &current {
            if desired.contains_key(name) || !is_managed(apiservice) {
                continue;
            }
            // Only CRD versions are managed continuously; the built-in groups' APIServices are
            // managed once, at start.
            let body = json!({"preconditions": {"uid": meta_str(apiservice, "uid")}});
            self.send(Method::DELETE, format!("{APISERVICES_PATH}/{name}"), body);
        }
    }

    /// The APIService each served version of each stored CRD asks for, by name. A CRD being
    /// deleted still serves its versions until it is gone.
    fn served_crd_versions(&mut self) -> BTreeMap<String, Value> {
        let crds = GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions");
        self.crd_lister.catch_up(self.store.list(&crds, None));
        let mut desired = BTreeMap::new();
        for crd in self.crd_lister.decoded() {
            let spec = crd.get("spec");
            let group = spec
                .and_then(|s| s.get("group"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let versions = spec
                .and_then(|s| s.get("versions"))
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for version in versions {
                if version.get("served").and_then(Value::as_bool) != Some(true) {
                    continue;
                }
                let name = version.get("name").and_then(Value::as_str).unwrap_or("");
                desired.insert(
                    format!("{name}.{group}"),
                    json!({
                        "group": group,
                        "version": name,
                        "groupPriorityMinimum": 1000,
                        "versionPriority": 100,
                    }),
                );
            }
        }
        desired
    }

    fn send(&mut self, method: Method, path: String, body: Value) {
        self.serve_internal(
            None,
            InternalRequest {
                method,
                path: &path,
                query: "",
                content_type: "application/json",
                user_agent: super::LOOPBACK_USER_AGENT,
                body: body.to_string().into_bytes(),
            },
        );
    }
}

fn is_managed(apiservice: &Object) -> bool {
    apiservice
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(MANAGED_LABEL))
        .and_then(Value::as_str)
        == Some(MANAGED_CONTINUOUSLY)
}

/// `reflect.DeepEqual` of the stored spec and the wanted one, which sets only four fields.
fn same_spec(apiservice: &Object, wanted: &Value) -> bool {
    let Some(spec) = apiservice.get("spec").and_then(Value::as_object) else {
        return false;
    };
    spec.iter().all(|(key, value)| match wanted.get(key) {
        Some(w) => w == value,
        None => match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::String(s) => s.is_empty(),
            _ => false,
        },
    }) && wanted
        .as_object()
        .is_some_and(|w| w.keys().all(|k| spec.contains_key(k)))
}
