//! Seeding: storing objects exactly as a test describes them, as if they had been written
//! earlier (status, finalizers and a `deletionTimestamp` included, which no single request could
//! produce), while keeping the store consistent: one global revision, valid metadata, and no
//! object a real server could not hold.

use recon_apimachinery::gotime::{self, Layout};
use recon_apimachinery::json::Value;
use serde::Serialize;

use crate::api_server::ApiServer;
use crate::gotype;
use crate::handlers::validation::{validate_builtin_finalizer_names, validate_object_meta};
use crate::registry::conversion;
use crate::registry::resource::GenerationRule;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::nesting;
use crate::wire::object::{
    Object, finalizers, generation, is_terminating, meta_str, normalize_metadata, set_meta,
};

/// Why an object could not be seeded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeedError {
    /// The object does not serialise to a JSON object.
    #[error("the object to seed is not a JSON object: {0}")]
    NotAnObject(String),
    /// No served type has this `apiVersion` and `kind` (is its CRD installed?).
    #[error(
        "no served resource has apiVersion {api_version:?} and kind {kind:?} (is its CRD installed?)"
    )]
    UnknownKind {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// The object is not one a real server could hold.
    #[error("{0}")]
    Invalid(String),
    /// An object of that name already exists.
    #[error("{0}")]
    AlreadyExists(String),
    /// With [strict namespaces](crate::ApiServerBuilder::strict_namespaces), the object's
    /// namespace does not exist: seed the Namespace first.
    #[error(
        "namespaces {0:?} not found: with strict namespaces, seed the Namespace before objects in it"
    )]
    NamespaceNotFound(String),
}

impl ApiServer {
    /// Stores `object` as given, as if it had been written before the test: its status,
    /// finalizers, labels and `deletionTimestamp` are kept. The server fills what a server sets
    /// and the object lacks (uid, creationTimestamp, generation for types that keep one) and
    /// always assigns a new resourceVersion. A custom resource is pruned and defaulted by its
    /// CRD's schema, as every write and read through the API would, but not validated against
    /// it (a cluster may hold objects a newer schema refuses). A built-in is decoded into its
    /// Go type: unknown fields are dropped, and a value of the wrong type is
    /// [`SeedError::Invalid`], since no typed client could read it back. Nothing is recorded
    /// in the request log. An object nested deeper than Go's decoder reads (10000 levels) is
    /// [`SeedError::Invalid`] too; one that deep is serialised by recursion on the caller's
    /// stack (as its own drop recurses), the rest of the seeding on a stack of its own.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use kube::api::Api;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::new();
    /// server
    ///     .seed(&serde_json::json!({
    ///         "apiVersion": "v1", "kind": "ConfigMap",
    ///         "metadata": {"name": "settings", "namespace": "default", "finalizers": ["example.com/keep"],
    ///                      "deletionTimestamp": "2024-01-01T00:00:00Z"},
    ///     }))
    ///     .unwrap();
    /// let cm = Api::<ConfigMap>::default_namespaced(server.client()).get("settings").await.unwrap();
    /// assert!(cm.metadata.deletion_timestamp.is_some());
    /// assert!(server.requests().len() == 1, "only the get above is logged");
    /// # });
    /// ```
    pub fn seed(&self, object: &impl Serialize) -> Result<serde_json::Value, SeedError> {
        let value = recon_apimachinery::json::to_value(object)
            .map_err(|e| SeedError::NotAnObject(e.to_string()))?;
        let Value::Object(obj) = value else {
            return Err(SeedError::NotAnObject(value.to_string()));
        };
        // Nothing is stored that the server could not read back.
        let depth = nesting::object_depth(&obj);
        if depth > nesting::GO_MAX_DEPTH {
            return Err(SeedError::Invalid(nesting::too_deep().message().to_owned()));
        }
        self.shared.lock().seed(obj).map(serde_json::Value::from)
    }
}

impl State {
    fn seed(&mut self, mut obj: Object) -> Result<Value, SeedError> {
        let field = |o: &Object, k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let (api_version, kind) = (field(&obj, "apiVersion"), field(&obj, "kind"));
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version.clone()),
        };
        let rt = self
            .registry
            .find_kind(&group, &version, &kind)
            .ok_or_else(|| SeedError::UnknownKind {
                api_version: api_version.clone(),
                kind: kind.clone(),
            })?;
        normalize_metadata(&mut obj).map_err(|why| SeedError::Invalid(format!("{kind}: {why}")))?;
        // A custom resource is stored as the API would have stored it: pruned and defaulted
        // (not validated: a cluster may hold objects its current schema refuses).
        if let Some(schema) = rt.validation(&version) {
            schema
                .decode(&mut obj)
                .map_err(|why| SeedError::Invalid(format!("{kind}: {why}")))?;
        }
        // A built-in is stored as decoding into its Go type leaves it: unknown fields dropped,
        // a value of the wrong type refused (no typed client could read it back).
        if let Some(go_struct) = gotype::kind_struct(&group, &version, &kind) {
            gotype::decode(go_struct, &mut obj)
                .map_err(|why| SeedError::Invalid(format!("{kind}: {why}")))?;
        }
        // A built-in of another version than its storage one is stored converted, and read
        // back in its own version.
        let converts = !rt.custom && conversion::converts(&rt, &version);
        if converts {
            conversion::to_internal(&rt, &version, &mut obj);
        }
        let name = meta_str(&obj, "name").to_owned();
        if !rt.namespaced {
            set_meta(&mut obj, "namespace", Value::Null);
        }
        let mut errors = validate_object_meta(&obj, rt.namespaced, rt.name_rule);
        if !rt.custom {
            errors.extend(validate_builtin_finalizer_names(&obj));
        }
        if !errors.is_empty() {
            let err = ApiError::invalid(&rt.group_kind(), &name, &errors);
            return Err(SeedError::Invalid(err.message().to_owned()));
        }
        if is_terminating(&obj) && finalizers(&obj).is_empty() {
            return Err(SeedError::Invalid(format!(
                "{kind} {name:?} has a deletionTimestamp and no finalizers: a real server would already have deleted it"
            )));
        }
        self.admit_seed(&rt, &obj)
            .map_err(SeedError::NamespaceNotFound)?;
        let namespace = rt
            .namespaced
            .then(|| meta_str(&obj, "namespace").to_owned());
        let key = object_key(namespace.as_deref(), &name);
        if self.store.get(&rt.group_resource(), &key).is_some() {
            let err = ApiError::already_exists(&rt.group_resource(), &name);
            return Err(SeedError::AlreadyExists(err.message().to_owned()));
        }
        if meta_str(&obj, "uid").is_empty() {
            let uid = self.ids.uid();
            set_meta(&mut obj, "uid", Value::String(uid));
        }
        if meta_str(&obj, "creationTimestamp").is_empty() {
            set_meta(
                &mut obj,
                "creationTimestamp",
                Value::String(gotime::format(Layout::Time, self.clock.now())),
            );
        }
        let keeps_generation = rt.custom || rt.generation != GenerationRule::None;
        if keeps_generation && generation(&obj) == 0 {
            set_meta(&mut obj, "generation", Value::from(1));
        }
        let (_, stored) = self.store.put(&rt.group_resource(), key.clone(), obj);
        self.after_write(&rt);
        // The object as it reads back: one that does not is an error, never `null`.
        let mut served = stored
            .decode(&key)
            .map_err(|e| SeedError::Invalid(e.to_string()))?;
        if converts {
            conversion::type_as_stored(&rt, &version, &mut served);
            conversion::to_version(&rt, &version, &mut served)
                .map_err(|e| SeedError::Invalid(e.message().to_owned()))?;
        }
        served.insert("apiVersion".into(), Value::String(api_version));
        served.insert("kind".into(), Value::String(rt.kind.clone()));
        Ok(Value::Object(served))
    }
}
