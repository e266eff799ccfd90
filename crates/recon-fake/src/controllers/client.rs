//! The requests kube-controller-manager's controllers send, as the in-memory server's own
//! controllers send them: through the ordinary handlers ([`State::serve_internal`]), so
//! validation, managedFields, resourceVersions, history and watch events are those of any API
//! write. They are logged with [`RequestOrigin::Controller`] and never meet reactors.

use std::sync::Arc;

use http::Method;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::report::ObjectId;
use crate::client_service::InternalRequest;
use crate::record::RequestOrigin;
use crate::registry::resource::ResourceType;
use crate::request::reply::Reply;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::object::{DecodeError, Object, meta_str};
use crate::wire::status::Reason;

/// One kube-controller-manager controller: its requests carry its User-Agent, whose first
/// segment (`kube-controller-manager`) is the field manager of its writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Controller {
    GarbageCollector,
    Namespace,
    RootCaPublisher,
    ClusterRoleAggregation,
}

impl Controller {
    /// client-go's default User-Agent with the controller's name appended (`rest.AddUserAgent`).
    pub(crate) fn user_agent(self) -> &'static str {
        match self {
            Controller::GarbageCollector => {
                "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/recon/generic-garbage-collector"
            }
            Controller::Namespace => {
                "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/recon/namespace-controller"
            }
            Controller::ClusterRoleAggregation => {
                "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/recon/clusterrole-aggregation-controller"
            }
            Controller::RootCaPublisher => {
                "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/recon/root-ca-cert-publisher"
            }
        }
    }
}

/// A stored object a controller acts on: its type, storage key and decoded body.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) rt: Arc<ResourceType>,
    pub(crate) key: String,
    pub(crate) obj: Object,
}

impl Target {
    pub(crate) fn namespace(&self) -> Option<&str> {
        Some(meta_str(&self.obj, "namespace")).filter(|ns| self.rt.namespaced && !ns.is_empty())
    }

    pub(crate) fn name(&self) -> &str {
        meta_str(&self.obj, "name")
    }

    pub(crate) fn uid(&self) -> &str {
        meta_str(&self.obj, "uid")
    }

    pub(crate) fn id(&self) -> ObjectId {
        ObjectId {
            api_version: self.rt.api_version(request_version(&self.rt)),
            kind: self.rt.kind.clone(),
            namespace: self.namespace().map(str::to_owned),
            name: self.name().to_owned(),
            uid: self.uid().to_owned(),
        }
    }

    /// The object's URL, with `subresource` appended when given.
    fn path(&self, subresource: Option<&str>) -> String {
        let mut path = format!(
            "{}/{}",
            collection_path(&self.rt, self.namespace()),
            self.name()
        );
        if let Some(sub) = subresource {
            path.push('/');
            path.push_str(sub);
        }
        path
    }

    /// The object with the `apiVersion` and `kind` its URL serves, as a PUT body.
    pub(crate) fn typed(&self) -> Object {
        let mut obj = self.obj.clone();
        let api_version = self.rt.api_version(request_version(&self.rt));
        obj.insert("apiVersion".into(), Value::String(api_version));
        obj.insert("kind".into(), Value::String(self.rt.kind.clone()));
        obj
    }
}

/// The error a refused write answered with.
pub(crate) fn refusal(reply: &Reply) -> ApiError {
    let Ok(status) = serde_json::from_slice::<Value>(&reply.body.to_bytes()) else {
        // Not a Status: its text is the message, rather than none.
        let text = String::from_utf8_lossy(&reply.body.to_bytes()).into_owned();
        return ApiError::new(reply.status, Reason::Unknown, text);
    };
    let text = |k: &str| status.get(k).and_then(Value::as_str).unwrap_or("");
    let reason = text("reason").parse().unwrap_or(Reason::Unknown);
    ApiError::new(reply.status, reason, text("message"))
}

/// The version controllers' requests use: the first the type serves.
fn request_version(rt: &ResourceType) -> &str {
    rt.versions.first().map_or("", |v| v.name.as_str())
}

/// The URL of `rt`'s objects (in `namespace`).
fn collection_path(rt: &ResourceType, namespace: Option<&str>) -> String {
    let mut path = if rt.group.is_empty() {
        format!("/api/{}", request_version(rt))
    } else {
        format!("/apis/{}/{}", rt.group, request_version(rt))
    };
    if let Some(ns) = namespace {
        path.push_str("/namespaces/");
        path.push_str(ns);
    }
    path.push('/');
    path.push_str(&rt.plural);
    path
}

impl State {
    /// The stored object `key` of `rt`, if it is still the one with `uid`. One that no longer
    /// decodes is left alone, as a controller whose GET of it fails retries it later.
    pub(crate) fn reload(&self, rt: &Arc<ResourceType>, key: &str, uid: &str) -> Option<Target> {
        let (obj, _) = match self.load(rt, key) {
            Ok(loaded) => loaded?,
            Err(e) => {
                tracing::warn!(resource = %rt.group_resource(), error = %e, "controller skips an object it cannot read");
                return None;
            }
        };
        (meta_str(&obj, "uid") == uid).then(|| Target {
            rt: rt.clone(),
            key: key.to_owned(),
            obj,
        })
    }

    /// Whether `target` is gone from storage (or replaced by another object of its name). One
    /// that no longer decodes is still there.
    pub(crate) fn is_removed(&self, target: &Target) -> bool {
        match self.load(&target.rt, &target.key) {
            Ok(Some((obj, _))) => meta_str(&obj, "uid") != target.uid(),
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// Every stored object of `rt` (in `namespace` when given) that decodes, in key order: what
    /// a controller's informer holds. One that does not decode is skipped and logged: the
    /// informer's relist fails, and it keeps working from what it read before.
    pub(crate) fn known_targets(
        &self,
        rt: &Arc<ResourceType>,
        namespace: Option<&str>,
    ) -> Vec<Target> {
        self.store
            .list(&rt.group_resource(), namespace)
            .filter_map(|(key, stored)| match stored.decode(key) {
                Ok(obj) => Some(Target {
                    rt: rt.clone(),
                    key: key.clone(),
                    obj,
                }),
                Err(e) => {
                    tracing::warn!(resource = %rt.group_resource(), error = %e, "controller skips an object it cannot read");
                    None
                }
            })
            .collect()
    }

    /// Every stored object of `rt` (in `namespace` when given), in key order, as a controller's
    /// list reads them: one that does not decode fails the list, as it fails the real one.
    pub(crate) fn targets(
        &self,
        rt: &Arc<ResourceType>,
        namespace: Option<&str>,
    ) -> Result<Vec<Target>, DecodeError> {
        self.store
            .list(&rt.group_resource(), namespace)
            .map(|(key, stored)| {
                Ok(Target {
                    rt: rt.clone(),
                    key: key.clone(),
                    obj: stored.decode(key)?,
                })
            })
            .collect()
    }

    /// DELETE of `target` with a uid precondition and `propagationPolicy` (`deleteObject`).
    pub(crate) fn controller_delete(
        &mut self,
        by: Controller,
        target: &Target,
        propagation: &str,
    ) -> Reply {
        let options = json!({
            "kind": "DeleteOptions", "apiVersion": "v1",
            "preconditions": {"uid": target.uid()},
            "propagationPolicy": propagation,
        });
        self.controller_send(by, Method::DELETE, target.path(None), options)
    }

    /// DELETE of the collection of `rt` in `namespace` with `propagationPolicy: Background`, as
    /// the namespace controller's `deleteCollection` sends it.
    pub(crate) fn controller_delete_collection(
        &mut self,
        rt: &Arc<ResourceType>,
        namespace: &str,
    ) -> Reply {
        let collection = collection_path(rt, Some(namespace));
        let options =
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"});
        self.controller_send(Controller::Namespace, Method::DELETE, collection, options)
    }

    /// A JSON merge patch of `target`'s metadata, locked on the resourceVersion read (as the
    /// garbage collector's `removeFinalizer` and `deleteOwnerRefJSONMergePatch` send).
    pub(crate) fn controller_patch_metadata(
        &mut self,
        by: Controller,
        target: &Target,
        mut metadata: Object,
    ) -> Reply {
        let rv = meta_str(&target.obj, "resourceVersion").to_owned();
        metadata.insert("resourceVersion".into(), Value::String(rv));
        let patch = json!({"metadata": metadata});
        let path = target.path(None);
        let body = patch.to_string().into_bytes();
        self.serve_internal(
            Some(RequestOrigin::Controller),
            InternalRequest {
                method: Method::PATCH,
                path: &path,
                query: "",
                content_type: "application/merge-patch+json",
                user_agent: by.user_agent(),
                body,
            },
        )
    }

    /// PUT of `object` (as read, with changes) to `target`'s `subresource`.
    pub(crate) fn controller_put(
        &mut self,
        by: Controller,
        target: &Target,
        subresource: &str,
        object: Object,
    ) -> Reply {
        let path = target.path(Some(subresource));
        self.controller_send(by, Method::PUT, path, Value::Object(object))
    }

    fn controller_send(
        &mut self,
        by: Controller,
        method: Method,
        path: String,
        body: Value,
    ) -> Reply {
        self.serve_internal(
            Some(RequestOrigin::Controller),
            InternalRequest {
                method,
                path: &path,
                query: "",
                content_type: "application/json",
                user_agent: by.user_agent(),
                body: body.to_string().into_bytes(),
            },
        )
    }
}
