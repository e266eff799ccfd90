//! Reading what the server holds without a request: for assertions in tests, where a request
//! would show up in the log (and an async client cannot be driven from a synchronous hook).

use kube::Resource;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api_server::ApiServer;
use crate::registry::conversion;
use crate::storage::stored::object_key;
use crate::wire::object::with_type_meta;

impl ApiServer {
    /// The stored object of `kind` in `api_version` named `name` (in `namespace`, ignored for
    /// cluster-scoped kinds), as a GET of that version would return it; `None` when there is no
    /// such object or no such kind, and (logged as a warning) when its stored body does not
    /// decode, which a GET would answer with a 500. Nothing is recorded in the request log and no
    /// reactor runs. An object nested deeper than serde_json reads (128 levels), which the server
    /// stores and serves, is `None` here too (logged): a `Value` that deep recurses once a level
    /// when dropped, and a test thread's stack holds a few thousand; read it with a GET.
    ///
    /// ```
    /// use recon_fake::ApiServer;
    /// use serde_json::json;
    ///
    /// let server = ApiServer::new();
    /// server
    ///     .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///                   "metadata": {"name": "settings", "namespace": "default"}}))
    ///     .unwrap();
    /// let stored = server.stored("v1", "ConfigMap", Some("default"), "settings").unwrap();
    /// assert_eq!((&stored["kind"], &stored["metadata"]["name"]), (&json!("ConfigMap"), &json!("settings")));
    /// assert!(stored["metadata"]["uid"].is_string(), "as the server stored it");
    /// assert!(server.requests().is_empty());
    /// assert_eq!(server.stored("v1", "ConfigMap", Some("default"), "other"), None);
    /// ```
    pub fn stored(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let body = self.stored_body(api_version, kind, namespace, name)?;
        match serde_json::from_slice(&body) {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::warn!(kind, name, error = %e, "stored object does not decode");
                None
            }
        }
    }

    /// Every stored object, as a GET of its type's first served version returns it, ordered by
    /// API group, resource plural, namespace and name. Nothing is recorded in the request log.
    /// Objects that do not decode or convert are left out (logged), as in [`ApiServer::stored`].
    ///
    /// ```
    /// use recon_fake::ApiServer;
    /// use serde_json::json;
    ///
    /// let server = ApiServer::new();
    /// server
    ///     .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///                   "metadata": {"name": "settings", "namespace": "default"}}))
    ///     .unwrap();
    /// let objects = server.objects();
    /// let settings = objects.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
    /// assert_eq!(settings["metadata"]["name"], "settings");
    /// assert!(objects.iter().any(|o| o["kind"] == "Namespace" && o["metadata"]["name"] == "default"));
    /// ```
    pub fn objects(&self) -> Vec<Value> {
        let state = self.shared.lock();
        let mut objects = Vec::new();
        for rt in state.registry.all() {
            let Some(version) = rt.versions.first().map(|v| v.name.clone()) else {
                continue;
            };
            let api_version = rt.api_version(&version);
            for (key, stored) in state.store.list(&rt.group_resource(), None) {
                let body = match conversion::body_in_version(&rt, &version, &stored.body) {
                    Ok(body) => with_type_meta(&api_version, &rt.kind, &body),
                    Err(e) => {
                        tracing::warn!(key, error = %e.message(), "stored object does not convert");
                        continue;
                    }
                };
                match serde_json::from_slice(&body) {
                    Ok(value) => objects.push(value),
                    Err(e) => tracing::warn!(key, error = %e, "stored object does not decode"),
                }
            }
        }
        objects
    }

    /// The stored body as a GET of `api_version` serves it, if there is such an object.
    fn stored_body(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Vec<u8>> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let state = self.shared.lock();
        let rt = state.registry.find_kind(group, version, kind)?;
        let key = object_key(namespace.filter(|_| rt.namespaced), name);
        let stored = state.store.get(&rt.group_resource(), &key)?;
        // Through another version than the storage one, converted as a GET is.
        match conversion::body_in_version(&rt, version, &stored.body) {
            Ok(body) => Some(with_type_meta(api_version, &rt.kind, &body)),
            Err(e) => {
                tracing::warn!(kind, name, error = %e.message(), "stored object does not convert");
                None
            }
        }
    }

    /// [`ApiServer::stored`] for a typed resource: `Ok(None)` when absent, an error when the
    /// stored object does not deserialize as `K` (or does not decode at all).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_fake::ApiServer;
    /// use serde_json::json;
    ///
    /// let server = ApiServer::new();
    /// server
    ///     .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///                   "metadata": {"name": "settings", "namespace": "default"},
    ///                   "data": {"mode": "fast"}}))
    ///     .unwrap();
    /// let cm: ConfigMap = server.stored_as(Some("default"), "settings").unwrap().unwrap();
    /// assert_eq!(cm.data.unwrap()["mode"], "fast");
    /// ```
    pub fn stored_as<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, serde_json::Error>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let (api_version, kind) = (K::api_version(&()), K::kind(&()));
        self.stored_body(&api_version, &kind, namespace, name)
            .map(|body| serde_json::from_slice(&body))
            .transpose()
    }
}
