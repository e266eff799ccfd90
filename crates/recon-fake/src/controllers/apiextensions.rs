//! The apiextensions controllers, as a real server runs them after a CRD is written. Naming and
//! establishing run here right after each write. The CRD finalizer
//! (`customresourcecleanup.apiextensions.k8s.io`, upstream `pkg/controller/finalizer/
//! crd_finalizer.go`) runs after the response, as the real one runs on its own: a CRD's DELETE
//! answers with the CRD marked (`Terminating`, `InstanceDeletionPending`); then the finalizer
//! writes `InstanceDeletionInProgress`, deletes every instance with ordinary deletes, waits for
//! those held by their own finalizers, and once none is left writes `InstanceDeletionCompleted`
//! and drops its finalizer, which deletes the CRD.

use std::sync::Arc;
use std::time::Duration;

use recon_apimachinery::json::Value;

use super::LOOPBACK_MANAGER;
use super::crd_lister::Listing;
use super::crd_naming::{self, Names};
use crate::client_service::Shared;
use crate::handlers::delete::Deleted;
use crate::handlers::field_manager::FieldManager;
use crate::registry::crd::{
    CLEANUP_FINALIZER, condition, condition_equivalent, resource_type, set_condition,
    storage_schema,
};
use crate::registry::resource::ResourceType;
use crate::request::delete_options::DeleteOptions;
use crate::schema::CustomResourceSchema;
use crate::state::State;
use crate::wire::group::GroupResource;
use crate::wire::object::{DecodeError, Object, finalizers, is_terminating, meta_str, set_meta};

/// The CustomResourceDefinition type, whose writes the controllers follow.
const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

/// The status of a CRD's condition of type `kind`, if it has one.
fn condition_status<'a>(obj: &'a Object, kind: &str) -> Option<&'a str> {
    condition(obj, kind)?.get("status")?.as_str()
}

/// How long after the response that gave it work the CRD finalizer runs, on the Tokio clock (a
/// paused clock runs it only once every task waits).
pub(crate) const CRD_FINALIZER_LATENCY: Duration = Duration::from_millis(10);

/// How long the CRD finalizer waits for the instances it deleted to go (`wait.PollImmediate`'s
/// minute) before it says `InstanceDeletionCheck` and starts over.
const CRD_FINALIZER_WAIT: Duration = Duration::from_secs(60);

/// Runs the CRD finalizer on the current Tokio runtime, [`CRD_FINALIZER_LATENCY`] from now;
/// without a runtime it stays due, for the next request or [`crate::ApiServer::finalize_crds`].
pub(crate) fn schedule_crd_finalizer(shared: &Arc<Shared>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        shared.lock().crd_finalizer_scheduled = false;
        return;
    };
    let shared = shared.clone();
    runtime.spawn(async move {
        tokio::time::sleep(CRD_FINALIZER_LATENCY).await;
        let mut state = shared.lock();
        state.crd_finalizer_scheduled = false;
        state.run_crd_finalizer();
        let wait = state
            .crd_wait_deadline
            .filter(|_| !state.crd_wait_scheduled);
        if let Some(deadline) = wait {
            state.crd_wait_scheduled = true;
            drop(state);
            schedule_crd_wait_timeout(&shared, deadline);
        }
    });
}

/// At `deadline`, if the finalizer still waits then, it gives up waiting: the waiting CRDs say
/// `InstanceDeletionCheck`, and the finalizer runs again (as the real one is requeued).
fn schedule_crd_wait_timeout(shared: &Arc<Shared>, deadline: tokio::time::Instant) {
    let shared = shared.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(deadline).await;
        let mut state = shared.lock();
        match state.crd_wait_deadline {
            Some(due) if due == deadline => {}
            // The wait this task was for ended, and another began since: wait for that one.
            Some(later) => {
                drop(state);
                schedule_crd_wait_timeout(&shared, later);
                return;
            }
            None => {
                state.crd_wait_scheduled = false;
                return;
            }
        }
        state.crd_wait_scheduled = false;
        state.crd_wait_deadline = None;
        state.crd_wait_timed_out();
        if state.take_crd_finalizer_run() {
            drop(state);
            schedule_crd_finalizer(&shared);
        }
    });
}

impl State {
    /// Runs what a real server runs after a write: the in-process controllers of built-in
    /// kinds ([`super::apiserver`]), the ClusterRole aggregation and the root CA publisher when it
    /// is on; for CRDs, the naming and establishing controllers. A
    /// CRD marked for deletion, or a change to an instance of a terminating CRD, makes the
    /// CRD finalizer due: it runs after the response ([`State::take_crd_finalizer_run`]).
    pub(crate) fn after_write(&mut self, rt: &ResourceType) {
        if !self.in_controllers && !rt.custom {
            self.in_controllers = true;
            self.run_apiserver_controllers(&rt.group, &rt.plural);
            if self.root_ca_publisher
                && rt.group.is_empty()
                && matches!(rt.plural.as_str(), "namespaces" | "configmaps")
            {
                self.publish_root_ca(Some(crate::record::RequestOrigin::Controller));
            }
            if rt.group == "rbac.authorization.k8s.io" && rt.plural == "clusterroles" {
                self.aggregate_cluster_roles(Some(crate::record::RequestOrigin::Controller));
            }
            self.in_controllers = false;
        }
        if self.in_controllers {
            return;
        }
        if rt.custom && self.registry.is_terminating(&rt.group, &rt.plural) {
            self.crd_finalizer_due = true;
        }
        if !(rt.group == GROUP && rt.plural == PLURAL) {
            return;
        }
        self.in_controllers = true;
        self.reconcile_crds_until_settled();
        self.in_controllers = false;
    }

    /// Passes of the naming and establishing controllers until one changes nothing (bounded, as
    /// each CRD moves forward).
    fn reconcile_crds_until_settled(&mut self) {
        for _ in 0..16 {
            if !self.reconcile_crds() {
                break;
            }
        }
    }

    /// An `UpdateStatus` of a CRD by the apiextensions controllers: the managedFields their
    /// loopback client's write records (manager `kube-apiserver`, subresource `status`), then
    /// the object stored.
    fn put_crd_status(&mut self, crd_type: &ResourceType, key: String, mut crd: Object) {
        let gr = crd_type.group_resource();
        let old = self.store.get(&gr, &key).and_then(|stored| {
            match self.crd_lister.at(&key, stored.revision) {
                Some(listed) => Some(listed.clone()),
                None => stored.decode(&key).ok(),
            }
        });
        if let Some(mut old) = old {
            FieldManager::for_controller(crd_type, "status", LOOPBACK_MANAGER, self.clock.now())
                .record_update(Some(&mut old), &mut crd);
        }
        self.store.put(&gr, key, crd);
    }

    /// Whether a run of the CRD finalizer should be scheduled now that a response is built: it
    /// has work and no run is scheduled yet (the caller schedules it).
    pub(crate) fn take_crd_finalizer_run(&mut self) -> bool {
        if !self.crd_finalizer_due || self.crd_finalizer_scheduled {
            return false;
        }
        self.crd_finalizer_scheduled = true;
        true
    }

    /// The CRD finalizer's work, now: every CRD marked for deletion moves as far as it can (gone,
    /// or waiting on instances held by their finalizers). Watchers are sent what it wrote.
    pub(crate) fn run_crd_finalizer(&mut self) {
        self.crd_finalizer_due = false;
        let Some(crd_type) = self.registry.get(GROUP, PLURAL) else {
            return;
        };
        let marked: Vec<(String, Object)> = self
            .store
            .list(&crd_type.group_resource(), None)
            .filter_map(|(key, stored)| Some((key.clone(), stored.decode(key).ok()?)))
            .filter(|(_, crd)| is_terminating(crd))
            .collect();
        self.in_controllers = true;
        let mut waiting = false;
        let gr = crd_type.group_resource();
        let before = self.store.len(&gr);
        for (key, crd) in marked {
            waiting |= self.finalize_crd(&crd_type, key, crd);
        }
        // A CRD the finalizer removed frees its names: the naming controller checks the other
        // CRDs of its group again (`naming_controller.go`, `requeueAllOtherGroupCRDs`).
        if self.store.len(&gr) != before {
            self.reconcile_crds_until_settled();
        }
        // A CRD the finalizer removed takes its versions' APIServices with it.
        self.register_crd_versions();
        self.in_controllers = false;
        if !waiting {
            self.crd_wait_deadline = None;
        } else if self.crd_wait_deadline.is_none() {
            self.crd_wait_deadline = Some(tokio::time::Instant::now() + CRD_FINALIZER_WAIT);
        }
        self.notify_watchers();
    }

    /// The finalizer's minute of waiting is over with instances left: each CRD still waiting
    /// says so, and is finalized again.
    fn crd_wait_timed_out(&mut self) {
        let Some(crd_type) = self.registry.get(GROUP, PLURAL) else {
            return;
        };
        let gr = crd_type.group_resource();
        let now = self.now();
        let waiting: Vec<(String, Object)> = self
            .store
            .list(&gr, None)
            .filter_map(|(key, stored)| Some((key.clone(), stored.decode(key).ok()?)))
            .filter(|(_, crd)| {
                is_terminating(crd) && finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER)
            })
            .collect();
        for (key, mut crd) in waiting {
            let Some(t) = resource_type(&crd) else {
                continue;
            };
            let Some(served) = self.registry.get(&t.group, &t.plural).filter(|s| s.custom) else {
                continue;
            };
            if self
                .store
                .list(&served.group_resource(), None)
                .next()
                .is_none()
            {
                continue;
            }
            set_condition(
                &mut crd,
                "Terminating",
                "True",
                "InstanceDeletionCheck",
                "could not confirm zero CustomResources remaining: context deadline exceeded",
                &now,
            );
            self.put_crd_status(&crd_type, key, crd);
            self.crd_finalizer_due = true;
        }
        self.notify_watchers();
    }

    /// One pass over every CRD; returns whether anything was written. A CRD the last pass left
    /// as it was is skipped while it and the names its group has accepted stay as they were.
    fn reconcile_crds(&mut self) -> bool {
        let Some(crd_type) = self.registry.get(GROUP, PLURAL) else {
            return false;
        };
        let crds = crd_type.group_resource();
        self.crd_lister.catch_up(self.store.list(&crds, None));
        let mut served = Vec::new();
        let mut changed = false;
        for (key, listing) in self.crd_lister.pass() {
            let crd = match listing {
                Listing::Settled { group, plural } => {
                    served.push((group, plural));
                    continue;
                }
                Listing::Check(Ok(crd)) => crd,
                Listing::Check(Err(e)) => {
                    // The CRD informer keeps what it read before: the type stays served as it
                    // was and nothing is done with the CRD. A CRD is named `<plural>.<group>`.
                    tracing::warn!(error = %e, "CRD controllers skip a CRD they cannot read");
                    if let Some((plural, group)) = key.split_once('.') {
                        served.push((group.to_owned(), plural.to_owned()));
                    }
                    continue;
                }
            };
            // The type is read once per CRD and pass: every step below serves the same one.
            let Some(t) = resource_type(&crd) else {
                if is_terminating(&crd) && finalizers(&crd).iter().any(|f| f == CLEANUP_FINALIZER) {
                    self.crd_finalizer_due = true;
                }
                continue;
            };
            served.push((t.group.clone(), t.plural.clone()));
            if is_terminating(&crd) {
                // The CR handler refuses creates from now on; the finalizer runs later.
                self.registry.mark_terminating(&t.group, &t.plural);
                if finalizers(&crd).iter().any(|f| f == CLEANUP_FINALIZER) {
                    self.crd_finalizer_due = true;
                }
            } else {
                let (group, plural) = (t.group.clone(), t.plural.clone());
                if self.establish_crd(&crd_type, key.clone(), &crd, t) {
                    changed = true;
                    // The CRDs after it see what it accepted (upstream's mutation cache).
                    self.crd_lister.catch_up(self.store.list(&crds, None));
                } else {
                    self.crd_lister.settle(&key, &group, &plural);
                }
            }
        }
        self.registry
            .retain_custom(|group, plural| served.iter().any(|(g, p)| g == group && p == plural));
        changed
    }

    /// The naming controller (`naming_controller.go`): the names that are free are accepted, and
    /// NamesAccepted says whether all were; then the establishing controller
    /// (`establishing_controller.go`): once they are, the type `t` is served and the CRD marked
    /// Established. Returns whether it wrote.
    fn establish_crd(
        &mut self,
        crd_type: &Arc<ResourceType>,
        key: String,
        crd: &Object,
        t: ResourceType,
    ) -> bool {
        let now = self.now();
        let accepted = Names::accepted(crd);
        if Names::requested(crd) != accepted {
            let naming = crd_naming::calculate(crd, &self.crd_lister.group_names(&t.group));
            let (status, reason, message) = match naming.conflict {
                None => ("True", "NoConflicts", "no conflicts found".to_owned()),
                Some((reason, message)) => ("False", reason, message),
            };
            if naming.names != accepted
                || !condition_equivalent(crd, "NamesAccepted", status, reason, &message)
            {
                let mut crd = crd.clone();
                if let Some(st) = crd.get_mut("status").and_then(Value::as_object_mut) {
                    st.insert("acceptedNames".into(), naming.names.to_json());
                }
                set_condition(&mut crd, "NamesAccepted", status, reason, &message, &now);
                // Established as it was (false, `NotAccepted`, when it was not there), or
                // `Installing` once the names are accepted and it is not yet.
                let established = condition_status(&crd, "Established");
                if status == "True" && established != Some("True") {
                    set_condition(
                        &mut crd,
                        "Established",
                        "False",
                        "Installing",
                        "the initial names have been accepted",
                        &now,
                    );
                } else if established.is_none() {
                    set_condition(
                        &mut crd,
                        "Established",
                        "False",
                        "NotAccepted",
                        "not all names are accepted",
                        &now,
                    );
                }
                self.put_crd_status(crd_type, key, crd);
                return true;
            }
        }
        if condition_status(crd, "NamesAccepted") != Some("True") {
            return false;
        }
        let served = t.group_resource();
        let read_schema = storage_schema(crd, &t);
        self.registry.serve_custom(t);
        self.reread_on_schema_change(&served, read_schema);
        let wrote = condition_status(crd, "Established") != Some("True");
        if wrote {
            let mut crd = crd.clone();
            set_condition(
                &mut crd,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                &now,
            );
            self.put_crd_status(crd_type, key, crd);
        }
        // The resource's watch cache is filled now: older revisions are too old for it.
        let revision = self.store.revision();
        self.store.history.start(&served, revision);
        wrote
    }

    /// Storage decodes custom resources with the storage version's schema, pruning and
    /// defaulting what it reads. When that schema changes, every stored object is served as
    /// reading it now gives (objects written before a `default` was added show it), without a
    /// write. The real server rebuilds the resource's storage and watch cache then.
    fn reread_on_schema_change(
        &mut self,
        resource: &GroupResource,
        schema: Option<Arc<CustomResourceSchema>>,
    ) {
        if self.read_schemas.get(resource) == schema.as_ref() {
            return;
        }
        match &schema {
            Some(s) => {
                self.read_schemas.insert(resource.clone(), s.clone());
            }
            None => {
                self.read_schemas.remove(resource);
            }
        }
        self.store.reread(resource, |mut obj| {
            if let Some(schema) = &schema {
                // What cannot be coerced is served as written, as the real server's storage
                // decoder drops only what it cannot read.
                let _ = schema.decode(&mut obj);
            }
            obj
        });
    }

    /// The CRD finalizer's `sync`: write `InstanceDeletionInProgress`, delete every instance,
    /// and once none is left drop the cleanup finalizer (which deletes the CRD when it was the
    /// last one). An instance held by its own finalizers keeps the CRD waiting, in progress:
    /// then it returns true.
    fn finalize_crd(&mut self, crd_type: &Arc<ResourceType>, key: String, mut crd: Object) -> bool {
        if !finalizers(&crd).iter().any(|f| f == CLEANUP_FINALIZER) {
            return false;
        }
        let now = self.now();
        let gr = crd_type.group_resource();
        let Some(t) = resource_type(&crd) else {
            return false;
        };
        let served = self.registry.get(&t.group, &t.plural).filter(|s| s.custom);
        self.registry.mark_terminating(&t.group, &t.plural);
        if let Some(served) = &served {
            let before = crd.clone();
            set_condition(
                &mut crd,
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
                &now,
            );
            if crd != before {
                self.put_crd_status(crd_type, key.clone(), crd.clone());
            }
            let listed: Result<Vec<(Option<String>, String)>, DecodeError> = self
                .store
                .list(&served.group_resource(), None)
                .map(|(key, s)| {
                    let o = s.decode(key)?;
                    let ns = Some(meta_str(&o, "namespace").to_owned()).filter(|n| !n.is_empty());
                    Ok((ns, meta_str(&o, "name").to_owned()))
                })
                .collect();
            let instances = match listed {
                Ok(instances) => instances,
                Err(e) => {
                    // `deleteInstances`: the list fails, the condition says so, the CRD is
                    // kept and tried again on its next change.
                    set_condition(
                        &mut crd,
                        "Terminating",
                        "True",
                        "InstanceDeletionFailed",
                        &format!("could not list instances: {}", e.go_message),
                        &now,
                    );
                    self.put_crd_status(crd_type, key, crd);
                    return false;
                }
            };
            let mut remaining = 0;
            for (ns, name) in instances {
                let gone = matches!(
                    self.delete_one(served, ns.as_deref(), &name, &DeleteOptions::default()),
                    Ok(Deleted::Removed { .. }) | Err(_)
                );
                if !gone {
                    remaining += 1;
                }
            }
            if remaining > 0 {
                // The real finalizer polls for a minute, then says `InstanceDeletionCheck` and
                // tries again; here it looks again on the next change to an instance, and
                // gives up at the minute ([`CRD_FINALIZER_WAIT`]).
                return true;
            }
            set_condition(
                &mut crd,
                "Terminating",
                "False",
                "InstanceDeletionCompleted",
                "removed all instances",
                &now,
            );
        } else {
            set_condition(
                &mut crd,
                "Terminating",
                "False",
                "NeverEstablished",
                "resource was never established",
                &now,
            );
        }
        let list: Vec<String> = finalizers(&crd)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .collect();
        if list.is_empty() {
            // The instances' watchers see them go before the type stops being served.
            self.notify_watchers();
            self.store.remove(&gr, &key);
            self.registry.remove_custom(&t.group, &t.plural);
            self.store.history.stop(&t.group_resource());
        } else {
            set_meta(&mut crd, "finalizers", Value::from(list));
            self.put_crd_status(crd_type, key, crd);
        }
        false
    }
}
