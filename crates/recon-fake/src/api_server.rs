//! `ApiServer`: the handle tests hold. It hands out `kube::Client`s, exposes the request log,
//! and registers reactors.

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};

use crate::client_service::{FakeService, Shared};
use crate::clock::{Clock, SystemClock};
use crate::identity::Identity;
use crate::ids::IdGenerator;
use crate::reactor_builder::ReactorBuilder;
use crate::record::{RecordedRequest, RequestOrigin};
use crate::registry::conversion_webhook::ConversionWebhook;
use crate::request::route::Verb;
use crate::state::State;
use crate::storage::history::{DEFAULT_HISTORY, History};

/// An in-memory Kubernetes API server that behaves like kube-apiserver.
///
/// Clones share the same server. Clients from [`client`](Self::client) are real `kube::Client`s,
/// so `Api<K>`, `kube::runtime` helpers and anything else built on kube-rs run unchanged.
///
/// ```
/// # async fn demo() -> Result<(), kube::Error> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
/// use recon_fake::ApiServer;
///
/// let server = ApiServer::new();
/// let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// let created = configmaps.create(&PostParams::default(), &cm).await?;
/// assert!(created.metadata.uid.is_some());
/// assert_eq!(created.metadata.resource_version, Some(server.resource_version().to_string()));
/// # Ok(())
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone)]
pub struct ApiServer {
    pub(super) shared: Arc<Shared>,
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl ApiServer {
    /// A server with the built-in kinds, the four initial namespaces, the system clock and
    /// random identifiers.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder, to make the clock and identifiers deterministic.
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }

    /// A `kube::Client` talking to this server, with `default` as its default namespace.
    ///
    /// Must be called within a Tokio runtime (`kube::Client::new` spawns its request buffer).
    pub fn client(&self) -> kube::Client {
        self.client_from(RequestOrigin::Client, Vec::new())
    }

    /// A `kube::Client` whose requests act as `identity` (impersonating it, as `kubectl --as`
    /// does): each is authorized, before anything else, as kube-apiserver's RBAC authorizer
    /// authorizes it, from the Roles, ClusterRoles and bindings stored in the server (the
    /// bootstrap ones included); one its roles do not allow is the real 403, naming the user,
    /// verb, resource and namespace. Its requests are logged as [`RequestOrigin::Client`]'s.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, ListParams};
    /// use recon_fake::{ApiServer, Identity};
    ///
    /// let server = ApiServer::new();
    /// let operator = server.client_as(Identity::service_account("default", "operator"));
    /// let err = Api::<ConfigMap>::default_namespaced(operator)
    ///     .list(&ListParams::default())
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 403 && s.message ==
    ///     "configmaps is forbidden: User \"system:serviceaccount:default:operator\" cannot list \
    ///      resource \"configmaps\" in API group \"\" in the namespace \"default\""));
    /// # });
    /// ```
    pub fn client_as(&self, identity: Identity) -> kube::Client {
        self.client_from(RequestOrigin::Client, identity.headers())
    }

    /// A client for arranging a scenario (what a test or a demo does as the cluster's user or
    /// its other controllers): its requests are served like any other and recorded with
    /// [`RequestOrigin::Setup`], apart from those of the code under test.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, PostParams};
    /// use recon_fake::{ApiServer, RequestOrigin};
    ///
    /// let server = ApiServer::new();
    /// let user: Api<ConfigMap> = Api::default_namespaced(server.setup_client());
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("settings".into());
    /// user.create(&PostParams::default(), &cm).await.unwrap();
    /// assert_eq!(server.requests()[0].origin, RequestOrigin::Setup);
    /// # });
    /// ```
    pub fn setup_client(&self) -> kube::Client {
        self.client_from(RequestOrigin::Setup, Vec::new())
    }

    fn client_from(
        &self,
        origin: RequestOrigin,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
    ) -> kube::Client {
        kube::Client::new(
            FakeService {
                shared: self.shared.clone(),
                origin,
                headers: Arc::new(headers),
            },
            "default",
        )
    }

    /// Every request served so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().log.to_records()
    }

    /// Forgets the requests served so far (the stored objects stay).
    pub fn clear_requests(&self) {
        self.shared.lock().log.clear();
    }

    /// The current resourceVersion: the revision of the last write, of any object of any type.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.revision()
    }

    /// Forgets the change history up to now, as etcd's compaction does: a watch from an older
    /// resourceVersion then gets the in-stream `410 Expired` error, and a continue token taken
    /// before now gets `410 Expired`. `kube::runtime::watcher` answers the 410 by listing again.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use futures::StreamExt;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, WatchEvent, WatchParams};
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::new();
    /// let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    /// let before = server.resource_version().to_string();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("settings".into());
    /// api.create(&Default::default(), &cm).await?;
    /// server.compact_history();
    /// let mut events = api.watch(&WatchParams::default(), &before).await?.boxed();
    /// let Some(Ok(WatchEvent::Error(status))) = events.next().await else { panic!("expected an error event") };
    /// assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn compact_history(&self) {
        let mut state = self.shared.lock();
        let revision = state.store.revision();
        state.store.history.compact(revision);
    }

    /// Sends a BOOKMARK event at the current resourceVersion to every open watch that allows
    /// bookmarks (`allowWatchBookmarks=true`, which `kube::runtime::watcher` always sends). A real
    /// server sends them about once a minute; tests send them when they want them.
    pub fn send_bookmarks(&self) {
        self.shared.lock().send_bookmarks();
    }

    /// Ends every open watch stream, as an apiserver restart does; watchers reconnect from their
    /// last resourceVersion.
    pub fn close_watches(&self) {
        self.shared.lock().close_watches();
    }

    /// Starts a reactor for `verb` requests on `resource` (a plural such as `"widgets"`).
    ///
    /// ```
    /// # async fn demo() {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::Api;
    /// use recon_fake::{ApiServer, Failure, Verb};
    ///
    /// let server = ApiServer::new();
    /// server.on(Verb::Get, "configmaps").name("settings").once().fail(Failure::Internal("etcd is down".into()));
    /// let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    /// let err = api.get("settings").await.unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 500));
    /// assert!(api.get("settings").await.unwrap_err().to_string().contains("not found"));
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo());
    /// ```
    pub fn on(&self, verb: Verb, resource: &str) -> ReactorBuilder<'_> {
        ReactorBuilder::new(&self.shared, verb, resource)
    }

    /// Removes every reactor.
    pub fn clear_reactors(&self) {
        self.shared.lock().reactors.clear();
    }

    /// Serves the conversion webhook of the CRD `crd_name` (`<plural>.<group>`) in-process: when
    /// the CRD says `conversion.strategy: Webhook`, every object read or written through another
    /// version than the storage one is converted by `webhook` (sent the `ConversionReview` the
    /// real server would POST), and what it answers is checked as the real server checks it: a
    /// webhook that fails, answers an HTTP error, or returns the wrong objects makes the request a
    /// 500 with kube-apiserver's message. Without a webhook registered, such a CRD's conversions
    /// fail as an unreachable webhook's do.
    ///
    /// ```
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::new();
    /// server.serve_conversion("shapes.example.com", |review: &[u8]| {
    ///     // A webhook that refuses everything, as kube-apiserver would see it.
    ///     let review: serde_json::Value = serde_json::from_slice(review).unwrap();
    ///     let answer = serde_json::json!({
    ///         "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
    ///         "response": {"uid": review["request"]["uid"], "convertedObjects": [],
    ///             "result": {"status": "Failure", "message": "not today"}}
    ///     });
    ///     http::Response::new(answer.to_string().into_bytes())
    /// });
    /// ```
    pub fn serve_conversion(&self, crd_name: &str, webhook: impl ConversionWebhook) {
        let (plural, group) = crd_name.split_once('.').unwrap_or((crd_name, ""));
        self.shared
            .lock()
            .registry
            .serve_conversion(group, plural, Arc::new(webhook));
    }

    /// A new, independent server holding a copy of this one as it is now: its objects, its
    /// types (CRDs included) and the counters that name the next write, so the fork's next
    /// resourceVersion and `metadata.uid` are the ones this server would have given. It keeps
    /// time with `clock`. What belongs to the running server stays behind: open watches,
    /// reactors and the request log (the fork's starts empty).
    ///
    /// Seeding a cluster once and forking it per test costs a copy instead of a rebuild; a
    /// fork of a server built with a [`seed`](ApiServerBuilder::seed) behaves exactly as a
    /// server built and seeded the same way.
    ///
    /// ```
    /// # async fn demo() -> Result<(), kube::Error> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, DeleteParams};
    /// use recon_fake::{ApiServer, ManualClock};
    ///
    /// let now = "2024-05-01T10:00:00Z".parse().unwrap();
    /// let template = ApiServer::builder().clock(ManualClock::new(now)).seed(7).build();
    /// template.seed(&serde_json::json!({
    ///     "apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "settings", "namespace": "default"},
    /// })).unwrap();
    ///
    /// let fork = template.fork(ManualClock::new(now));
    /// let api: Api<ConfigMap> = Api::default_namespaced(fork.client());
    /// api.delete("settings", &DeleteParams::default()).await?;
    ///
    /// let original: Api<ConfigMap> = Api::default_namespaced(template.client());
    /// assert!(original.get_opt("settings").await?.is_some());
    /// assert!(api.get_opt("settings").await?.is_none());
    /// assert_eq!(fork.requests().len(), 2); // its delete and get, none of the template's
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn fork(&self, clock: impl Clock) -> ApiServer {
        let state = self.shared.lock().fork(Arc::new(clock));
        ApiServer {
            shared: Arc::new(Shared::new(state)),
        }
    }

    /// Installs a CRD the way a cluster does: by creating the `CustomResourceDefinition` through
    /// the API. The type is served once this returns, and the CRD is returned as stored then
    /// (Established). The request is logged with [`RequestOrigin::Setup`].
    ///
    /// With `#[derive(CustomResource)]`, pass `Widget::crd()`.
    pub async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition, kube::Error> {
        let client = self.setup_client();
        let body = serde_json::to_vec(crd).map_err(kube::Error::SerdeError)?;
        let create = kube::core::Request::new(CRDS_PATH)
            .create(&PostParams::default(), body)
            .map_err(kube::Error::BuildRequest)?;
        // The create's answer is not decoded (a CRD's schema makes that costly): the CRD is
        // read back once, served.
        client.request_text(create).await?;
        let api: Api<CustomResourceDefinition> = Api::all(client);
        api.get(crd.metadata.name.as_deref().unwrap_or_default())
            .await
    }
}

/// Where CRDs are created.
const CRDS_PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Configures an [`ApiServer`].
///
/// ```
/// use recon_fake::{ApiServer, ManualClock};
///
/// let clock = ManualClock::new("2024-05-01T10:00:00Z".parse().unwrap());
/// let server = ApiServer::builder().clock(clock.clone()).seed(42).build();
/// # let _ = server;
/// ```
pub struct ApiServerBuilder {
    clock: Arc<dyn Clock>,
    seed: Option<u64>,
    record_requests: bool,
    history: usize,
    strict_namespaces: bool,
    boot_objects: bool,
    publish_root_ca: bool,
}

impl Default for ApiServerBuilder {
    fn default() -> Self {
        ApiServerBuilder {
            clock: Arc::new(SystemClock),
            seed: None,
            record_requests: true,
            history: DEFAULT_HISTORY,
            strict_namespaces: false,
            boot_objects: true,
            publish_root_ca: false,
        }
    }
}

impl ApiServerBuilder {
    /// The clock for creation and deletion timestamps.
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Seeds uid and `generateName` generation: the same seed and requests give the same ids.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Whether to keep the request log ([`ApiServer::requests`]); on by default. Turn it off for
    /// long-running servers whose requests nobody reads, so the log does not grow without bound.
    pub fn record_requests(mut self, record: bool) -> Self {
        self.record_requests = record;
        self
    }

    /// How many changes the server keeps for watches and continue tokens (10,000 by default).
    /// Older ones are forgotten, as etcd compacts its history: a watch from before them gets
    /// `410 Expired`. See also [`ApiServer::compact_history`].
    pub fn watch_history(mut self, changes: usize) -> Self {
        self.history = changes;
        self
    }

    /// Whether namespaces are enforced as kube-apiserver's `NamespaceLifecycle` admission plugin
    /// enforces them; off by default, so objects can be created in any namespace.
    ///
    /// When on: creating a namespaced object (POST, a server-side apply or PUT that creates,
    /// `dryRun` included) in a namespace that does not exist is `404 namespaces "x" not found`,
    /// and in a namespace being terminated `403 Forbidden` (`unable to create new content in
    /// namespace x because it is being terminated`, cause `NamespaceTerminating`); updating an
    /// object whose namespace is gone is that 404 too. Deletes and reads are never refused,
    /// except that the immortal namespaces `default`, `kube-system` and `kube-public` (which
    /// the server creates, with `kube-node-lease`) cannot be deleted. Seeding
    /// ([`ApiServer::seed`]) an object into a missing namespace is an error.
    ///
    /// ```
    /// # async fn demo() {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, PostParams};
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::builder().strict_namespaces(true).build();
    /// let api: Api<ConfigMap> = Api::namespaced(server.client(), "missing");
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("settings".into());
    /// let err = api.create(&PostParams::default(), &cm).await.unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 404 && s.message == r#"namespaces "missing" not found"#));
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo());
    /// ```
    pub fn strict_namespaces(mut self, strict: bool) -> Self {
        self.strict_namespaces = strict;
        self
    }

    /// Whether the server starts with the objects kube-apiserver creates as it boots (on by
    /// default): the Service `default/kubernetes` with its Endpoints and EndpointSlice, the
    /// bootstrap RBAC roles and bindings (`cluster-admin`, `admin`, `edit`, `view`, the
    /// `system:*` ones), the priority classes `system-cluster-critical` and
    /// `system-node-critical`, API priority and fairness's flow schemas and priority levels, and
    /// the local APIServices. Off, the cluster has only its four namespaces.
    ///
    /// ```
    /// # async fn demo() -> Result<(), kube::Error> {
    /// use k8s_openapi::api::core::v1::Service;
    /// use k8s_openapi::api::rbac::v1::ClusterRole;
    /// use kube::Api;
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::new();
    /// let services: Api<Service> = Api::namespaced(server.client(), "default");
    /// let kubernetes = services.get("kubernetes").await?;
    /// assert_eq!(kubernetes.spec.unwrap().cluster_ip.as_deref(), Some("10.0.0.1"));
    /// let roles: Api<ClusterRole> = Api::all(server.client());
    /// assert!(roles.get_opt("cluster-admin").await?.is_some());
    ///
    /// let bare = ApiServer::builder().boot_objects(false).build();
    /// let roles: Api<ClusterRole> = Api::all(bare.client());
    /// assert!(roles.get_opt("cluster-admin").await?.is_none());
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn boot_objects(mut self, boot: bool) -> Self {
        self.boot_objects = boot;
        self
    }

    /// Runs kube-controller-manager's root CA publisher (off by default): every active
    /// namespace holds the ConfigMap `kube-root-ca.crt` with the cluster's CA bundle under
    /// `ca.crt`, created as the namespace is, created again if deleted and put back if
    /// changed, as a cluster's controller manager keeps it. Its writes are logged as
    /// [`RequestOrigin::Controller`](crate::RequestOrigin::Controller)'s; those into the
    /// namespaces the server boots with are made as it starts, unlogged.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    /// use kube::api::{Api, PostParams};
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::builder().publish_root_ca(true).build();
    /// let mut team = Namespace::default();
    /// team.metadata.name = Some("team".into());
    /// Api::<Namespace>::all(server.client())
    ///     .create(&PostParams::default(), &team)
    ///     .await?;
    /// let bundle = Api::<ConfigMap>::namespaced(server.client(), "team")
    ///     .get("kube-root-ca.crt")
    ///     .await?;
    /// assert!(bundle.data.unwrap()["ca.crt"].starts_with("-----BEGIN CERTIFICATE-----"));
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn publish_root_ca(mut self, publish: bool) -> Self {
        self.publish_root_ca = publish;
        self
    }

    /// The server.
    pub fn build(self) -> ApiServer {
        let ids = match self.seed {
            Some(seed) => IdGenerator::from_seed(seed),
            None => IdGenerator::from_entropy(),
        };
        let mut state = State::new(self.clock, ids);
        state.recording = self.record_requests;
        state.store.history = History::new(self.history);
        state.strict_namespaces = self.strict_namespaces;
        state.boot(self.boot_objects);
        state.root_ca_publisher = self.publish_root_ca;
        if self.publish_root_ca {
            state.publish_root_ca(None);
        }
        ApiServer {
            shared: Arc::new(Shared::new(state)),
        }
    }
}
