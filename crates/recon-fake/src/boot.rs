//! The cluster kube-apiserver makes as it boots: its namespaces, the Service `default/kubernetes`
//! with its Endpoints and EndpointSlice (`pkg/controlplane/reconcilers`), the bootstrap RBAC
//! policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`: `cluster-admin`, `admin`, `edit`,
//! `view`, the `system:*` roles and their bindings), the system priority classes, API priority
//! and fairness's configuration and the local APIServices, recorded from kube-apiserver 1.36
//! (`data/boot-objects.json`, written by `xtask/record-boot-objects.py`). Each is created as a
//! request would create it, so it has a uid, a resourceVersion and its defaults.

use std::sync::{Arc, LazyLock};

use http::Method;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::client_service::InternalRequest;
use crate::clock::ManualClock;
use crate::ids::IdGenerator;
use crate::state::State;
use crate::storage::store::Store;

/// The recorded objects, `{"kubernetes": "<version>", "objects": [...]}`.
const BOOT_OBJECTS: &str = include_str!("../data/boot-objects.json");

/// The namespaces kube-apiserver creates (`pkg/controlplane/controller/systemnamespaces`).
pub(crate) const NAMESPACES: [&str; 4] =
    ["default", "kube-node-lease", "kube-public", "kube-system"];

/// Where the `kubernetes` Service's endpoints say the server listens: kube-apiserver's default
/// secure port on the address it advertises. Endpoints validation refuses a loopback address
/// (kube-apiserver advertising 127.0.0.1 never gets its endpoints written), so the in-memory
/// cluster advertises a routable one, as a cluster's API server does its host's: 192.0.2.1, of
/// the range kept for documentation (RFC 5737).
pub(crate) const ADVERTISE_ADDRESS: &str = "192.0.2.1";
pub(crate) const SECURE_PORT: u16 = 6443;

/// When the boot objects were created, in every server (2024-01-01T00:00:00Z, in seconds
/// since the epoch): one instant, so that runs with a manual clock and a seed stay
/// reproducible.
const BOOT_TIME: i64 = 1_704_067_200;

/// The seed of the boot objects' uids.
const BOOT_SEED: u64 = 0x6b75_6265_2d61_7069;

/// A booted cluster's storage, made once per process (creating its ~180 objects through the
/// handlers costs far more than copying them) and copied into each new server.
static BOOTED: LazyLock<Store> = LazyLock::new(|| {
    let clock = ManualClock::new(
        jiff::Timestamp::from_second(BOOT_TIME).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    );
    let mut state = State::new(Arc::new(clock), IdGenerator::from_seed(BOOT_SEED));
    state.recording = false;
    state.boot_here(true);
    state.store
});

impl State {
    /// Starts the cluster as kube-apiserver boots it: its namespaces, and with `objects` the
    /// rest (a copy of [`BOOTED`]). The history keeps its own limit.
    pub(crate) fn boot(&mut self, objects: bool) {
        if !objects {
            self.boot_here(false);
            return;
        }
        let limit = self.store.history.limit();
        self.store = BOOTED.clone();
        self.store.history.set_limit(limit);
        self.notified = self.store.revision();
    }

    /// Creates what kube-apiserver creates as it boots; only the namespaces when `objects` is
    /// off.
    fn boot_here(&mut self, objects: bool) {
        for name in NAMESPACES {
            self.create_internal(
                "/api/v1/namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
            );
        }
        if !objects {
            return;
        }
        self.create_kubernetes_service();
        // Read once per process: only the booted store of `BOOTED` is made this way.
        let recorded: Value = serde_json::from_str(BOOT_OBJECTS).unwrap_or(Value::Null);
        for obj in recorded["objects"].as_array().into_iter().flatten() {
            if let Some(path) = self.collection_path(obj) {
                self.post_internal(&path, obj.to_string().into_bytes());
            }
        }
    }

    /// The Service through which pods reach the API server, at the first address of the
    /// service range, and the endpoints kube-apiserver's lease reconciler keeps for it.
    fn create_kubernetes_service(&mut self) {
        let labels = json!({"component": "apiserver", "provider": "kubernetes"});
        self.create_internal(
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "kubernetes", "labels": labels},
                "spec": {"clusterIP": "10.0.0.1", "sessionAffinity": "None", "type": "ClusterIP",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": SECURE_PORT}]}}),
        );
        self.create_internal(
            "/api/v1/namespaces/default/endpoints",
            json!({"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes",
                    "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": ADVERTISE_ADDRESS}],
                    "ports": [{"name": "https", "port": SECURE_PORT, "protocol": "TCP"}]}]}),
        );
        self.create_internal(
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "kubernetes",
                    "labels": {"kubernetes.io/service-name": "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [ADVERTISE_ADDRESS], "conditions": {"ready": true}}],
                "ports": [{"name": "https", "port": SECURE_PORT, "protocol": "TCP"}]}),
        );
    }

    /// The collection a recorded object is created in, from its `apiVersion`, `kind` and
    /// namespace.
    fn collection_path(&self, obj: &Value) -> Option<String> {
        let api_version = obj["apiVersion"].as_str()?;
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let rt = self
            .registry
            .find_kind(group, version, obj["kind"].as_str()?)?;
        let root = if group.is_empty() { "/api" } else { "/apis" };
        Some(match obj["metadata"]["namespace"].as_str() {
            Some(ns) => format!("{root}/{api_version}/namespaces/{ns}/{}", rt.plural),
            None => format!("{root}/{api_version}/{}", rt.plural),
        })
    }

    /// Creates `body` with a POST to `path`, unlogged.
    fn create_internal(&mut self, path: &str, body: Value) {
        self.post_internal(path, body.to_string().into_bytes());
    }

    /// POSTs the JSON `body` to `path`, unlogged, as kube-apiserver's loopback client (its
    /// field manager).
    fn post_internal(&mut self, path: &str, body: Vec<u8>) {
        self.serve_internal(
            None,
            InternalRequest {
                method: Method::POST,
                path,
                query: "",
                content_type: "application/json",
                user_agent: crate::controllers::LOOPBACK_USER_AGENT,
                body,
            },
        );
    }
}
