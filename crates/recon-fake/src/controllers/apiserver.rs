//! Controllers kube-apiserver runs in-process beside the CRD ones, run here right after each
//! write that concerns them, as a real server's would have caught up:
//!
//! - kube-aggregator's APIService availability (`pkg/controllers/status/remote`): a local
//!   APIService is available (its strategy says so on create); one backed by a Service is not
//!   while the Service or its endpoint slices are missing. The in-memory server reaches no backend, so an APIService whose
//!   Service has endpoints keeps the status it has.
//! - API priority and fairness's configuration controller
//!   (`apiserver/pkg/util/flowcontrol/apf_controller.go`): a FlowSchema's `Dangling` condition
//!   says whether the priority level it names exists.

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use std::sync::Arc;

use crate::registry::crd::{condition_kept, set_condition};
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, meta_str};

const APISERVICES: (&str, &str) = ("apiregistration.k8s.io", "apiservices");
const FLOW_SCHEMAS: (&str, &str) = ("flowcontrol.apiserver.k8s.io", "flowschemas");
const PRIORITY_LEVELS: (&str, &str) = (
    "flowcontrol.apiserver.k8s.io",
    "prioritylevelconfigurations",
);

fn resource((group, plural): (&str, &str)) -> GroupResource {
    GroupResource::new(group, plural)
}

impl State {
    /// Runs the in-process controllers a write to `group`/`plural` concerns.
    pub(crate) fn run_apiserver_controllers(&mut self, group: &str, plural: &str) {
        match (group, plural) {
            ("apiregistration.k8s.io", "apiservices")
            | ("", "services")
            | ("discovery.k8s.io", "endpointslices") => {
                self.check_apiservices();
            }
            ("apiextensions.k8s.io", "customresourcedefinitions") => {
                self.register_crd_versions();
            }
            ("flowcontrol.apiserver.k8s.io", "flowschemas" | "prioritylevelconfigurations") => {
                self.check_flow_schemas();
            }
            _ => {}
        }
    }

    /// Each APIService's `Available` condition, where the in-memory server can tell. It runs
    /// after every write of a Service or an EndpointSlice: each APIService is decoded once per
    /// revision (the controller's lister) and copied only to be written.
    fn check_apiservices(&mut self) {
        let services = resource(APISERVICES);
        self.apiservice_lister
            .catch_up(self.store.list(&services, None), |key, stored| {
                stored.decode(key).ok().map(Arc::new)
            });
        let listed: Vec<(String, Arc<Object>)> = self
            .apiservice_lister
            .iter()
            .filter_map(|(key, apiservice)| Some((key.clone(), apiservice.clone()?)))
            .filter(|(_, apiservice)| meta_str(apiservice, "deletionTimestamp").is_empty())
            .collect();
        for (key, apiservice) in listed {
            let Some((status, reason, message)) = self.availability(&apiservice) else {
                continue;
            };
            if condition_kept(&apiservice, "Available", status, reason, &message) {
                continue;
            }
            let mut apiservice = Object::clone(&apiservice);
            let before = apiservice.get("status").cloned();
            set_condition(
                &mut apiservice,
                "Available",
                status,
                reason,
                &message,
                &self.now(),
            );
            if apiservice.get("status") != before.as_ref() {
                self.store.put(&services, key, apiservice);
            }
        }
    }

    /// `Available` of one APIService: `None` when it depends on reaching its backend.
    fn availability(&self, apiservice: &Object) -> Option<(&'static str, &'static str, String)> {
        let Some(service) = apiservice
            .get("spec")
            .and_then(|s| s.get("service"))
            .filter(|s| !s.is_null())
        else {
            return Some((
                "True",
                "Local",
                "Local APIServices are always available".to_owned(),
            ));
        };
        let text = |key: &str| service.get(key).and_then(Value::as_str).unwrap_or("");
        let (namespace, name) = (text("namespace"), text("name"));
        let key = object_key(Some(namespace), name);
        if self
            .store
            .get(&GroupResource::new("", "services"), &key)
            .is_none()
        {
            return Some((
                "False",
                "ServiceNotFound",
                format!("service/{name} in {} is not present", go_quote(namespace)),
            ));
        }
        let slices = GroupResource::new("discovery.k8s.io", "endpointslices");
        let has_slice = self
            .store
            .list(&slices, Some(namespace))
            .any(|(key, stored)| {
                stored.decode(key).is_ok_and(|slice| {
                    slice
                        .get("metadata")
                        .and_then(|m| m.get("labels"))
                        .and_then(|l| l.get("kubernetes.io/service-name"))
                        .and_then(Value::as_str)
                        == Some(name)
                })
            });
        if !has_slice {
            return Some((
                "False",
                "EndpointsNotFound",
                format!(
                    "cannot find endpointslices for service/{name} in {}",
                    go_quote(namespace)
                ),
            ));
        }
        None
    }

    /// Each FlowSchema's `Dangling` condition.
    fn check_flow_schemas(&mut self) {
        let schemas = resource(FLOW_SCHEMAS);
        let levels = resource(PRIORITY_LEVELS);
        for (key, mut schema) in self.decoded(&schemas) {
            let level = schema
                .get("spec")
                .and_then(|s| s.get("priorityLevelConfiguration"))
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let (status, reason, message) = if self.store.get(&levels, &level).is_some() {
                let message = format!(
                    "This FlowSchema references the PriorityLevelConfiguration object named {} and it exists",
                    go_quote(&level)
                );
                ("False", "Found", message)
            } else {
                let message = format!(
                    "This FlowSchema references the PriorityLevelConfiguration object named {} but there is no such object",
                    go_quote(&level)
                );
                ("True", "NotFound", message)
            };
            let before = schema.get("status").cloned();
            set_condition(
                &mut schema,
                "Dangling",
                status,
                reason,
                &message,
                &self.now(),
            );
            if schema.get("status") != before.as_ref() {
                self.store.put(&schemas, key, schema);
            }
        }
    }

    /// Every stored object of `resource` that decodes, with its key, not being deleted.
    fn decoded(&self, resource: &GroupResource) -> Vec<(String, Object)> {
        self.store
            .list(resource, None)
            .filter_map(|(key, stored)| Some((key.clone(), stored.decode(key).ok()?)))
            .filter(|(_, obj)| meta_str(obj, "deletionTimestamp").is_empty())
            .collect()
    }
}
