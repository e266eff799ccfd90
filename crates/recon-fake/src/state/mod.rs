//! The server's state behind its lock: storage, the registry, the open watches, the request log
//! and what reactors registered.

pub(crate) mod service_allocation;
pub(crate) mod watcher;

use std::collections::HashMap;
use std::sync::Arc;

use recon_apimachinery::json::Value;

use recon_apimachinery::gotime::{self, Layout};

use crate::authz::lister::RbacLister;
use crate::clock::Clock;
use crate::controllers::clusterrole_aggregation::ClusterRoleLister;
use crate::controllers::crd_lister::CrdLister;
use crate::handlers::admission::Admission;
use crate::ids::IdGenerator;
use crate::reactor::Reactor;
use crate::record::RequestLog;
use crate::registry::resource::ResourceType;
use crate::registry::{Registry, conversion, events};
use crate::request::call::Call;
use crate::schema::CustomResourceSchema;
use crate::storage::by_revision::ByRevision;
use crate::storage::store::Store;
use crate::storage::stored::Stored;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{DecodeError, Object};
use service_allocation::Allocation;
use watcher::Watcher;

/// Everything the server knows, guarded by one lock: requests are served one at a time, as etcd
/// serialises writes.
pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) registry: Registry,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: IdGenerator,
    pub(crate) log: RequestLog,
    /// Whether requests are appended to `log`.
    pub(crate) recording: bool,
    pub(crate) reactors: Vec<Reactor>,
    /// Where the request being served stands with its mutating admission hooks.
    pub(crate) admission: Admission,
    /// Set while the CRD controllers run, so their own writes do not re-enter them.
    pub(crate) in_controllers: bool,
    /// Whether the CRD finalizer has work: a CRD marked for deletion, or a change to an instance
    /// of one it waits on. It runs after the response ([`State::take_crd_finalizer_run`]).
    pub(crate) crd_finalizer_due: bool,
    /// Whether a run of the CRD finalizer is already scheduled on the runtime.
    pub(crate) crd_finalizer_scheduled: bool,
    /// When the CRD finalizer, waiting on instances held by their finalizers, gives up waiting
    /// (a minute after it began, on the Tokio clock), and whether a task waits for it.
    pub(crate) crd_wait_deadline: Option<tokio::time::Instant>,
    pub(crate) crd_wait_scheduled: bool,
    pub(crate) watchers: Vec<Watcher>,
    /// The revision up to which changes have been sent to watchers.
    pub(crate) notified: u64,
    /// Whether the `NamespaceLifecycle` admission plugin runs (C11).
    pub(crate) strict_namespaces: bool,
    /// Whether kube-controller-manager's root CA publisher runs ([`State::publish_root_ca`]).
    pub(crate) root_ca_publisher: bool,
    /// The schema each custom resource is read from storage with: its CRD's storage version's.
    pub(crate) read_schemas: HashMap<GroupResource, Arc<CustomResourceSchema>>,
    /// What the ClusterRole aggregation controller has read of the ClusterRoles.
    pub(crate) cluster_role_lister: ClusterRoleLister,
    /// What the CRD controllers have read of the CRDs.
    pub(crate) crd_lister: CrdLister,
    /// The addresses and ports each stored Service holds.
    pub(crate) service_allocations: ByRevision<Allocation>,
    /// What the APIService availability controller has read of the APIServices (`None`: one
    /// that does not decode).
    pub(crate) apiservice_lister: ByRevision<Option<Arc<Object>>>,
    /// What the RBAC authorizer has read of the bindings and roles.
    pub(crate) rbac_lister: RbacLister,
}

impl State {
    pub(crate) fn new(clock: Arc<dyn Clock>, ids: IdGenerator) -> Self {
        let mut store = Store::default();
        store.cohabit(
            GroupResource::new("", "events"),
            GroupResource::new("events.k8s.io", "events"),
            events::core_to_events_v1,
            events::events_v1_to_core,
        );
        store.store_builtins_as(crate::registry::STORED_STRUCTS.clone());
        State {
            store,
            registry: Registry::with_builtins(),
            clock,
            ids,
            log: RequestLog::default(),
            recording: true,
            reactors: Vec::new(),
            admission: Admission::NoHooks,
            in_controllers: false,
            crd_finalizer_due: false,
            crd_finalizer_scheduled: false,
            crd_wait_deadline: None,
            crd_wait_scheduled: false,
            watchers: Vec::new(),
            notified: 0,
            strict_namespaces: false,
            root_ca_publisher: false,
            read_schemas: HashMap::new(),
            cluster_role_lister: ClusterRoleLister::default(),
            crd_lister: CrdLister::default(),
            service_allocations: ByRevision::default(),
            apiservice_lister: ByRevision::default(),
            rbac_lister: RbacLister::default(),
        }
    }

    /// A copy of what is stored and served, and of the counters that name the next write (the
    /// revision, the identifier generator), keeping time with `clock`. What belongs to the
    /// running server stays with it: open watches, reactors and the request log.
    pub(crate) fn fork(&self, clock: Arc<dyn Clock>) -> Self {
        State {
            store: self.store.clone(),
            registry: self.registry.clone(),
            clock,
            ids: self.ids.clone(),
            log: RequestLog::default(),
            recording: self.recording,
            reactors: Vec::new(),
            admission: Admission::NoHooks,
            in_controllers: false,
            crd_finalizer_due: self.crd_finalizer_due,
            crd_finalizer_scheduled: false,
            crd_wait_deadline: self.crd_wait_deadline,
            crd_wait_scheduled: false,
            watchers: Vec::new(),
            notified: self.notified,
            strict_namespaces: self.strict_namespaces,
            root_ca_publisher: self.root_ca_publisher,
            read_schemas: self.read_schemas.clone(),
            cluster_role_lister: ClusterRoleLister::default(),
            crd_lister: self.crd_lister.clone(),
            service_allocations: self.service_allocations.clone(),
            apiservice_lister: self.apiservice_lister.clone(),
            rbac_lister: RbacLister::default(),
        }
    }

    /// `metav1.Now()` as it is written on the wire.
    pub(crate) fn now(&self) -> Value {
        Value::String(gotime::format(Layout::Time, self.clock.now()))
    }

    /// The stored object `key` of `rt`, decoded; `Ok(None)` when there is none.
    pub(crate) fn load(
        &self,
        rt: &ResourceType,
        key: &str,
    ) -> Result<Option<(Object, Stored)>, DecodeError> {
        let Some(stored) = self.store.get(&rt.group_resource(), key) else {
            return Ok(None);
        };
        Ok(Some((stored.decode(key)?, stored.clone())))
    }

    /// The object a request names, decoded as that request's version serves it (stored bodies
    /// carry no `apiVersion` / `kind`). A body that does not decode fails the request as the
    /// real server's read of it does ([`DecodeError::to_api_error`]).
    pub(crate) fn load_typed(&self, call: &Call<'_>) -> Result<Option<(Object, Stored)>, ApiError> {
        let Some((mut obj, stored)) = self
            .load(&call.rt, &call.key())
            .map_err(|e| e.to_api_error())?
        else {
            return Ok(None);
        };
        conversion::to_version(&call.rt, &call.path.version, &mut obj)?;
        obj.insert("apiVersion".into(), Value::String(call.api_version()));
        obj.insert("kind".into(), Value::String(call.rt.kind.clone()));
        Ok(Some((obj, stored)))
    }
}
