//! The controllers: what a cluster runs beside kube-apiserver, here run by the server itself,
//! writing through the same handlers as any client.
//!
//! - [`apiextensions`]: the CRD controllers (the naming controller's rules in [`crd_naming`],
//!   what they have read of the CRDs in [`crd_lister`]), and [`apiserver`]: kube-apiserver's other
//!   in-process ones (APIService availability, API priority and fairness, an APIService per
//!   served CRD version: [`crd_registration`]), run right after each
//!   write, as a real server's would have caught up; but the CRD finalizer runs after the
//!   response, on its own ([`ApiServer::finalize_crds`]);
//! - [`garbage_collector`], [`namespace_controller`]: kube-controller-manager's, run by the
//!   opt-in step below; [`root_ca_publisher`], kube-controller-manager's too, opt-in when the
//!   server is built, then run after each write that concerns it; [`clusterrole_aggregation`],
//!   which every cluster runs, after each write to a ClusterRole; [`client`] is how they send their requests, [`report`] what the step
//!   reports.
//!
//! The opt-in garbage-collection step (O3): [`ApiServer::collect_garbage`] runs, synchronously
//! and until nothing changes, what kube-controller-manager's garbage collector and namespace
//! controller would do, and reports every write they made.
//!
//! A real apiserver only records deletion intent (D7: the `orphan` and `foregroundDeletion`
//! finalizers, a namespace's `Terminating` phase); the controllers act on it later. So the fake,
//! like controller-runtime's, does nothing of the kind on its own: a test calls this step where a
//! cluster's controllers would have caught up.

pub(crate) mod apiextensions;
pub(crate) mod apiserver;
pub(crate) mod client;
pub(crate) mod clusterrole_aggregation;
pub(crate) mod crd_lister;
pub(crate) mod crd_naming;
pub(crate) mod crd_registration;
pub(crate) mod garbage_collector;
pub(crate) mod namespace_controller;
pub(crate) mod report;
pub(crate) mod root_ca_publisher;

use crate::api_server::ApiServer;
use crate::state::State;
use report::GarbageCollection;

/// The field manager of kube-apiserver's own controllers' writes: its loopback client's
/// User-Agent ([`LOOPBACK_USER_AGENT`]) starts with it.
pub(crate) const LOOPBACK_MANAGER: &str = "kube-apiserver";

/// The User-Agent of kube-apiserver's loopback client, which its own controllers and boot
/// hooks write with.
pub(crate) const LOOPBACK_USER_AGENT: &str =
    "kube-apiserver/v1.36.2 (linux/amd64) kubernetes/recon";

/// Passes after which a collection stops even if the last one still changed something (each pass
/// moves every chain of owners at least one step, so real object graphs finish far sooner).
const MAX_PASSES: usize = 100;

impl ApiServer {
    /// Runs kube-controller-manager's garbage collector and namespace controller until they have
    /// nothing left to do, and reports what they wrote. Nothing of this happens unless a test
    /// calls it (O3), as on a cluster it happens asynchronously, after the request that asked
    /// for it.
    ///
    /// - Objects whose every owner reference is dangling (no owner of that name, or one with
    ///   another uid; a namespaced owner is looked up in the dependent's namespace, so a
    ///   cross-namespace reference is dangling, O2) are deleted, in the background unless their
    ///   own finalizers ask otherwise. An object with a live owner loses its dangling references.
    /// - An owner deleted with `Foreground` has its dependents deleted and loses
    ///   `foregroundDeletion` once no dependent with `blockOwnerDeletion: true` is left; one
    ///   deleted with `Orphan` has its dependents' references to it removed, then loses `orphan`.
    /// - A terminating Namespace has its content deleted; once it is empty, `kubernetes` is
    ///   removed from its `spec.finalizers`, which deletes it.
    ///
    /// Every write is an ordinary request (watch events, resourceVersions and managedFields as
    /// for any client), logged with [`RequestOrigin::Controller`](crate::RequestOrigin::Controller).
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, DeleteParams, PostParams};
    /// use recon_fake::ApiServer;
    /// use serde_json::json;
    ///
    /// let server = ApiServer::new();
    /// let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    /// let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owner"}}))?;
    /// let owner = api.create(&PostParams::default(), &owner).await?;
    /// let dependent: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "dependent",
    ///     "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}}))?;
    /// api.create(&PostParams::default(), &dependent).await?;
    ///
    /// api.delete("owner", &DeleteParams::default()).await?;
    /// assert!(api.get_opt("dependent").await?.is_some(), "nothing is collected before the step");
    /// let report = server.collect_garbage();
    /// assert_eq!(report.removed()[0].name, "dependent");
    /// assert!(api.get_opt("dependent").await?.is_none());
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn collect_garbage(&self) -> GarbageCollection {
        self.shared.lock().collect_garbage()
    }
}

impl ApiServer {
    /// Runs the CRD finalizer's pending work now, as the real apiextensions finalizer would
    /// have caught up, and sends the watches what it wrote.
    ///
    /// A CRD's DELETE answers with the CRD marked for deletion (a `deletionTimestamp`, the
    /// `customresourcecleanup.apiextensions.k8s.io` finalizer, the `Terminating` condition with
    /// reason `InstanceDeletionPending`; creates of its custom resources are refused from then
    /// on). The finalizer runs afterwards, on its own: on a task of the current Tokio runtime
    /// about 10 ms (of Tokio's clock) after the response, so on a paused clock only once every
    /// task waits. It writes `InstanceDeletionInProgress`, deletes every instance (ordinary
    /// deletes: their watchers see them go, their own finalizers are respected), and once none
    /// is left writes `InstanceDeletionCompleted` and removes its finalizer, which deletes the
    /// CRD. An instance held by a finalizer keeps the CRD terminating, in progress, until it
    /// goes. This method is for a test that wants that done before its next request, without
    /// waiting for the task.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    /// use kube::api::{Api, DeleteParams};
    /// use recon_fake::ApiServer;
    ///
    /// let server = ApiServer::new();
    /// let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "widgets.example.com"},
    ///     "spec": {"group": "example.com", "scope": "Namespaced",
    ///         "names": {"plural": "widgets", "kind": "Widget"},
    ///         "versions": [{"name": "v1", "served": true, "storage": true,
    ///             "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))?;
    /// server.install_crd(&crd).await?;
    /// let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    /// crds.delete("widgets.example.com", &DeleteParams::default()).await?;
    ///
    /// server.finalize_crds();
    /// assert!(crds.get_opt("widgets.example.com").await?.is_none());
    /// # Ok(())
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn finalize_crds(&self) {
        self.shared.lock().run_crd_finalizer();
    }
}

impl State {
    /// Both controllers, pass after pass, until a pass writes nothing.
    fn collect_garbage(&mut self) -> GarbageCollection {
        let mut report = GarbageCollection::default();
        for _ in 0..MAX_PASSES {
            let before = self.store.revision();
            self.garbage_collector_pass(&mut report.actions);
            self.namespace_controller_pass(&mut report.actions);
            if self.store.revision() == before {
                break;
            }
        }
        report
    }
}
