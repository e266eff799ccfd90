//! The apiextensions controllers, as a real server runs them after a CRD is written, run here
//! right after each write: accept the names, establish the type, and on deletion remove every
//! instance before the CRD itself goes (`customresourcecleanup.apiextensions.k8s.io`).

use std::sync::Arc;

use recon_apimachinery::go_quote;
use serde_json::Value;

use crate::handlers::delete::Deleted;
use crate::registry::crd::{
    CLEANUP_FINALIZER, requested_names, resource_type, set_condition, storage_schema,
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
    obj.get("status")?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?
        .get("status")?
        .as_str()
}

impl State {
    /// Runs what a real server runs after a write: the in-process controllers of built-in
    /// kinds ([`super::apiserver`]); for CRDs and for instances of a terminating CRD, the
    /// apiextensions controllers.
    pub(crate) fn after_write(&mut self, rt: &ResourceType) {
        if !self.in_controllers && !rt.custom {
            self.in_controllers = true;
            self.run_apiserver_controllers(&rt.group, &rt.plural);
            self.in_controllers = false;
        }
        let is_crd = rt.group == GROUP && rt.plural == PLURAL;
        if self.in_controllers
            || !(is_crd || (rt.custom && self.registry.is_terminating(&rt.group, &rt.plural)))
        {
            return;
        }
        self.in_controllers = true;
        // Each pass may write; stop when a pass changes nothing (bounded, as each CRD moves forward).
        for _ in 0..16 {
            if !self.reconcile_crds() {
                break;
            }
        }
        self.in_controllers = false;
    }

    /// One pass over every CRD; returns whether anything was written.
    fn reconcile_crds(&mut self) -> bool {
        let Some(crd_type) = self.registry.get(GROUP, PLURAL) else {
            return false;
        };
        let mut crds: Vec<(String, Object)> = Vec::new();
        let mut served = Vec::new();
        for (key, stored) in self.store.list(&crd_type.group_resource(), None) {
            match stored.decode(key) {
                Ok(crd) => crds.push((key.clone(), crd)),
                Err(e) => {
                    // The CRD informer keeps what it read before: the type stays served as it
                    // was and nothing is done with the CRD. A CRD is named `<plural>.<group>`.
                    tracing::warn!(error = %e, "CRD controllers skip a CRD they cannot read");
                    if let Some((plural, group)) = key.split_once('.') {
                        served.push((group.to_owned(), plural.to_owned()));
                    }
                }
            }
        }
        let mut changed = false;
        for (key, crd) in crds {
            if let Some(t) = resource_type(&crd) {
                served.push((t.group.clone(), t.plural.clone()));
            }
            changed |= if is_terminating(&crd) {
                self.finalize_crd(&crd_type, key, crd)
            } else {
                self.establish_crd(&crd_type, key, crd)
            };
        }
        self.registry
            .retain_custom(|group, plural| served.iter().any(|(g, p)| g == group && p == plural));
        changed
    }

    /// Naming and establishing controllers: accept the names (unless another CRD of the group
    /// holds them), then mark the CRD Established and serve its type.
    fn establish_crd(
        &mut self,
        crd_type: &Arc<ResourceType>,
        key: String,
        mut crd: Object,
    ) -> bool {
        let Some(t) = resource_type(&crd) else {
            return false;
        };
        let now = self.now();
        let conflict = self.registry.custom_in_group(&t.group).find_map(|other| {
            if other.plural == t.plural {
                return None;
            }
            if other.kind == t.kind {
                Some(("KindConflict", t.kind.clone()))
            } else if other.singular == t.plural {
                Some(("PluralConflict", t.plural.clone()))
            } else {
                None
            }
        });
        if let Some((reason, name)) = conflict {
            if condition_status(&crd, "NamesAccepted") == Some("False") {
                return false;
            }
            set_condition(
                &mut crd,
                "NamesAccepted",
                "False",
                reason,
                &format!("{} is already in use", go_quote(&name)),
                &now,
            );
            set_condition(
                &mut crd,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
                &now,
            );
            self.store.put(&crd_type.group_resource(), key, crd);
            return true;
        }
        let names = requested_names(&crd);
        let accepted = crd.get("status").and_then(|s| s.get("acceptedNames"));
        if accepted != Some(&names) || condition_status(&crd, "NamesAccepted") != Some("True") {
            if let Some(status) = crd.get_mut("status").and_then(Value::as_object_mut) {
                status.insert("acceptedNames".into(), names);
            }
            set_condition(
                &mut crd,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
                &now,
            );
            if condition_status(&crd, "Established") != Some("True") {
                set_condition(
                    &mut crd,
                    "Established",
                    "False",
                    "Installing",
                    "the initial names have been accepted",
                    &now,
                );
            }
            self.store.put(&crd_type.group_resource(), key, crd);
            return true;
        }
        let served = t.group_resource();
        let read_schema = storage_schema(&crd, &t);
        self.registry.serve_custom(t);
        self.reread_on_schema_change(&served, read_schema);
        let wrote = condition_status(&crd, "Established") != Some("True");
        if wrote {
            set_condition(
                &mut crd,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                &now,
            );
            self.store.put(&crd_type.group_resource(), key, crd);
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

    /// The CRD finalizer: delete every instance, then drop the cleanup finalizer (which deletes
    /// the CRD when it was the last one).
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
            let reason = crd
                .get("status")
                .and_then(|s| s.get("conditions"))
                .and_then(Value::as_array)
                .and_then(|l| l.iter().find(|c| c["type"] == "Terminating"))
                .and_then(|c| c.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if reason == "InstanceDeletionPending" {
                set_condition(
                    &mut crd,
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                    &now,
                );
                self.store.put(&gr, key, crd);
                return true;
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
                    let before = crd.clone();
                    set_condition(
                        &mut crd,
                        "Terminating",
                        "True",
                        "InstanceDeletionFailed",
                        &format!("could not list instances: {}", e.go_message),
                        &now,
                    );
                    if crd != before {
                        self.store.put(&gr, key, crd);
                    }
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
                return false;
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
            self.store.remove(&gr, &key);
            self.registry.remove_custom(&t.group, &t.plural);
            self.store.history.stop(&t.group_resource());
        } else {
            set_meta(&mut crd, "finalizers", Value::from(list));
            self.store.put(&gr, key, crd);
        }
        true
    }
}
