//! The server's state behind its lock, and the request/reply shapes the verb handlers share.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::clock::{Clock, format_time};
use crate::handlers::watch::{WatchStream, Watcher};
use crate::ids::IdGenerator;
use crate::reactor::{MutateHook, Reactor};
use crate::record::RecordedRequest;
use crate::registry::Registry;
use crate::registry::resource::ResourceType;
use crate::request::route::{Query, ResourcePath};
use crate::schema::CustomResourceSchema;
use crate::storage::store::Store;
use crate::storage::stored::{Stored, object_key};
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{DecodeContext, Object, decode_body, with_type_meta};

/// Everything the server knows, guarded by one lock: requests are served one at a time, as etcd
/// serialises writes.
pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) registry: Registry,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: IdGenerator,
    pub(crate) log: Vec<RecordedRequest>,
    /// Whether requests are appended to `log`.
    pub(crate) recording: bool,
    pub(crate) reactors: Vec<Reactor>,
    /// The mutating admission hooks of the request being served.
    pub(crate) mutations: Vec<MutateHook>,
    /// Set while the CRD controllers run, so their own writes do not re-enter them.
    pub(crate) in_controllers: bool,
    pub(crate) watchers: Vec<Watcher>,
    /// The revision up to which changes have been sent to watchers.
    pub(crate) notified: u64,
    /// Whether the `NamespaceLifecycle` admission plugin runs (C11).
    pub(crate) strict_namespaces: bool,
    /// The schema each custom resource is read from storage with: its CRD's storage version's.
    pub(crate) read_schemas: HashMap<GroupResource, Arc<CustomResourceSchema>>,
}

/// One resource request, routed and typed.
pub(crate) struct Call<'a> {
    pub(crate) path: &'a ResourcePath,
    pub(crate) rt: Arc<ResourceType>,
    pub(crate) query: &'a Query,
    pub(crate) content_type: &'a str,
    pub(crate) accept: &'a str,
    pub(crate) user_agent: &'a str,
    pub(crate) body: &'a [u8],
}

impl Call<'_> {
    pub(crate) fn api_version(&self) -> String {
        self.rt.api_version(&self.path.version)
    }

    /// The namespace an object of this request lives in (`None` for cluster-scoped types).
    pub(crate) fn namespace(&self) -> Option<&str> {
        if self.rt.namespaced {
            self.path.namespace.as_deref()
        } else {
            None
        }
    }

    pub(crate) fn name(&self) -> &str {
        self.path.name.as_deref().unwrap_or("")
    }

    pub(crate) fn key(&self) -> String {
        object_key(self.namespace(), self.name())
    }

    pub(crate) fn decode_context(&self) -> DecodeContext<'_> {
        DecodeContext {
            kind: &self.rt.kind,
            version: &self.path.version,
        }
    }

    /// Whether the request carries `dryRun=All` (any other value is rejected earlier).
    pub(crate) fn dry_run(&self) -> bool {
        self.query.all("dryRun").any(|v| v == "All")
    }

    /// Whether this request's version serves `/status`.
    pub(crate) fn has_status(&self) -> bool {
        self.rt.has_status(&self.path.version)
    }

    /// A stored body as this request's version serves it.
    pub(crate) fn object_response(&self, body: &[u8]) -> Vec<u8> {
        with_type_meta(&self.api_version(), &self.rt.kind, body)
    }
}

/// What a handler answers.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) warnings: Vec<String>,
    /// The events of a watch, which follow the (empty) body.
    pub(crate) stream: Option<WatchStream>,
    /// The `Content-Type` when it is not the one the body implies (JSON, or Go's plain text).
    pub(crate) content_type: Option<&'static str>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: Vec<u8>) -> Self {
        Reply {
            status,
            body,
            warnings: Vec::new(),
            stream: None,
            content_type: None,
        }
    }

    /// A body of a media type of its own, such as aggregated discovery's.
    pub(crate) fn typed(content_type: &'static str, body: Vec<u8>) -> Self {
        Reply {
            content_type: Some(content_type),
            ..Reply::json(200, body)
        }
    }

    pub(crate) fn stream(stream: WatchStream) -> Self {
        Reply {
            stream: Some(stream),
            ..Reply::json(200, Vec::new())
        }
    }

    pub(crate) fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }
}

impl From<ApiError> for Reply {
    fn from(err: ApiError) -> Self {
        Reply::json(err.code(), err.to_status_json())
    }
}

impl State {
    pub(crate) fn new(clock: Arc<dyn Clock>, ids: IdGenerator) -> Self {
        State {
            store: Store::default(),
            registry: Registry::with_builtins(),
            clock,
            ids,
            log: Vec::new(),
            recording: true,
            reactors: Vec::new(),
            mutations: Vec::new(),
            in_controllers: false,
            watchers: Vec::new(),
            notified: 0,
            strict_namespaces: false,
            read_schemas: HashMap::new(),
        }
    }

    /// `metav1.Now()` as it is written on the wire.
    pub(crate) fn now(&self) -> Value {
        Value::String(format_time(self.clock.now()))
    }

    /// The stored object `key` of `rt`, decoded.
    pub(crate) fn load(&self, rt: &ResourceType, key: &str) -> Option<(Object, Stored)> {
        let stored = self.store.get(&rt.group_resource(), key)?;
        Some((decode_body(&stored.body), stored.clone()))
    }

    /// The object a request names, decoded as that request's version serves it (stored bodies
    /// carry no `apiVersion` / `kind`).
    pub(crate) fn load_typed(&self, call: &Call<'_>) -> Option<(Object, Stored)> {
        let (mut obj, stored) = self.load(&call.rt, &call.key())?;
        obj.insert("apiVersion".into(), Value::String(call.api_version()));
        obj.insert("kind".into(), Value::String(call.rt.kind.clone()));
        Some((obj, stored))
    }
}
