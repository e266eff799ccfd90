//! The built-in kinds the server knows without a CRD, with the rules of their registry
//! strategies (kubernetes `pkg/registry/<group>/<resource>/strategy.go` and `storage/storage.go`,
//! as of Kubernetes 1.35), and what discovery lists about them (verbs, short names, categories,
//! storage version).
//!
//! API defaults live in [`super::defaults`], type-specific validation in
//! [`super::validation`], the two Event APIs' shared storage in [`super::events`]; Service
//! addresses and node ports in `state::service_allocation`.

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

mod admission;
mod cluster;
mod core;
mod reviews;
mod storage;

use super::resource::{
    DeleteBehavior, DiscoveryInfo, FieldLabels, FieldSchema, GcPolicy, GenerationRule,
    ResourceType, ServedVersion, Serving, StatusWrite, StorageVersion, SubresourceInfo, TypeHooks,
    UnsupportedField,
};
use super::storage_hash::storage_version_hash;
use super::validation;
use crate::wire::object::{meta_mut, meta_str, meta_value};

/// `Status = XStatus{}` in `PrepareForCreate`: `status` as Go writes that type when zero (its
/// fields without `omitempty` appear).
macro_rules! status_on_create {
    ($($status:tt)+) => {
        TypeHooks {
            prepare_create: Some(|obj| {
                obj.insert("status".into(), json!($($status)+));
            }),
            ..TypeHooks::default()
        }
    };
}

/// Every built-in type (discovery sorts them its own way).
pub(crate) fn builtin_types() -> Vec<ResourceType> {
    let mut types = everyday_types();
    types.extend(core::types());
    types.extend(admission::types());
    types.extend(cluster::types());
    types.extend(reviews::types());
    types.extend(storage::types());
    types
}

/// The kinds controllers read and write every day: workloads, their configuration, RBAC,
/// events, leases and CRDs.
fn everyday_types() -> Vec<ResourceType> {
    vec![
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                prepare_create: Some(empty_null_data),
                prepare_update: Some(|new, _| empty_null_data(new)),
                ..TypeHooks::default()
            },
            ..builtin("", "v1", "ConfigMap", "configmaps", true).short_names(&["cm"])
        },
        ResourceType {
            field_labels: FieldLabels::with(&[("type", &["type"])]),
            ..builtin("", "v1", "Secret", "secrets", true)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            create_on_update: true,
            // `ValidateServiceCreate` (pkg/apis/core/validation/validation.go): the feature
            // gate `RelaxedServiceNameValidation` (beta, on by default from 1.36) names
            // Services by `NameIsDNSLabel`, not `ValidateServiceName` (DNS-1035).
            name_rule: NameRule::DnsLabel,
            delete_returns_object: true,
            field_labels: FieldLabels::with(&[
                ("spec.clusterIP", &["spec", "clusterIP"]),
                ("spec.type", &["spec", "type"]),
            ]),
            hooks: TypeHooks {
                prepare_update: Some(keep_allocated_service_fields),
                ..status_on_create!({"loadBalancer": {}})
            },
            ..with_status(builtin("", "v1", "Service", "services", true))
                .short_names(&["svc"])
                .categories(&["all"])
                .subresources(SERVICE_SUBRESOURCES)
        },
        ResourceType {
            delete_returns_object: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("", "v1", "ServiceAccount", "serviceaccounts", true)
                .short_names(&["sa"])
                .subresources(SERVICE_ACCOUNT_SUBRESOURCES)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            name_rule: NameRule::DnsLabel,
            delete_returns_object: true,
            delete: DeleteBehavior::Namespace,
            field_labels: FieldLabels {
                no_namespace: true,
                ..FieldLabels::with(&[("status.phase", &["status", "phase"])])
            },
            hooks: TypeHooks {
                prepare_create: Some(prepare_namespace),
                prepare_update: Some(|new, old| {
                    // Only /finalize may change spec.finalizers.
                    let old_finalizers = old.get("spec").and_then(|s| s.get("finalizers")).cloned();
                    let spec = new.entry("spec").or_insert_with(|| json!({}));
                    if let Some(spec) = spec.as_object_mut() {
                        match old_finalizers {
                            Some(f) => spec.insert("finalizers".into(), f),
                            None => spec.remove("finalizers"),
                        };
                    }
                    label_namespace_name(new);
                }),
                ..TypeHooks::default()
            },
            ..with_status(builtin("", "v1", "Namespace", "namespaces", false))
                .short_names(&["ns"])
                .verbs(NAMESPACE_VERBS)
        },
        ResourceType {
            status_write: reset(&["spec"], &["ownerReferences"]),
            generation: GenerationRule::Spec { annotations: false },
            delete_returns_object: true,
            field_labels: FieldLabels::with(&[
                ("spec.nodeName", &["spec", "nodeName"]),
                ("spec.restartPolicy", &["spec", "restartPolicy"]),
                ("spec.schedulerName", &["spec", "schedulerName"]),
                ("spec.serviceAccountName", &["spec", "serviceAccountName"]),
                ("spec.hostNetwork", &["spec", "hostNetwork"]),
                ("status.phase", &["status", "phase"]),
                ("status.podIP", &["status", "podIP"]),
                ("status.nominatedNodeName", &["status", "nominatedNodeName"]),
            ]),
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    default_pod_admission(obj);
                    apparmor_annotations_to_fields(obj);
                    let qos = pod_qos_class(obj);
                    obj.insert(
                        "status".into(),
                        json!({"phase": "Pending", "qosClass": qos}),
                    );
                    scheduling_gated_condition(obj);
                }),
                prepare_update: Some(|new, old| {
                    keep_pod_priority(new, old);
                    default_toleration_seconds(new);
                }),
                prepare_status_update: Some(validation::prepare_pod_status_update),
                grace_period: Some(pod_grace_period),
                ..TypeHooks::default()
            },
            ..with_status(builtin("", "v1", "Pod", "pods", true))
                .short_names(&["po"])
                .categories(&["all"])
                .subresources(POD_SUBRESOURCES)
        },
        ResourceType {
            create_on_update: true,
            name_rule: NameRule::PathSegment,
            gc: GcPolicy::Unsupported,
            field_labels: FieldLabels::with(&event_fields()),
            ..builtin("", "v1", "Event", "events", true).short_names(&["ev"])
        },
        ResourceType {
            status_write: reset(&["spec"], &["labels"]),
            generation: GenerationRule::Spec { annotations: true },
            field_labels: FieldLabels::default_conversion(),
            hooks: status_on_create!({}),
            ..with_scale(with_status(builtin(
                "apps",
                "v1",
                "Deployment",
                "deployments",
                true,
            )))
            .short_names(&["deploy"])
            .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            name_rule: NameRule::DnsLabel,
            field_labels: FieldLabels::default_conversion(),
            hooks: status_on_create!({"availableReplicas": 0, "replicas": 0}),
            ..with_scale(with_status(builtin(
                "apps",
                "v1",
                "StatefulSet",
                "statefulsets",
                true,
            )))
            .short_names(&["sts"])
            .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert(
                        "status".into(),
                        json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
                               "numberMisscheduled": 0, "numberReady": 0}),
                    );
                    set_template_generation(obj, 1);
                }),
                prepare_update: Some(|new, old| {
                    let previous = template_generation(old);
                    let changed = new.get("spec").and_then(|s| s.get("template"))
                        != old.get("spec").and_then(|s| s.get("template"));
                    set_template_generation(new, if changed { previous + 1 } else { previous });
                }),
                ..TypeHooks::default()
            },
            ..with_status(builtin("apps", "v1", "DaemonSet", "daemonsets", true))
                .short_names(&["ds"])
                .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            gc: GcPolicy::OrphanDependents,
            field_labels: FieldLabels {
                unsupported: UnsupportedField::NotSupportedForJob,
                ..FieldLabels::with(&[("status.successful", &["status", "succeeded"])])
            },
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), json!({}));
                    generate_job_selector(obj);
                }),
                ..TypeHooks::default()
            },
            ..with_status(builtin("batch", "v1", "Job", "jobs", true)).categories(&["all"])
        },
        ResourceType {
            // `podtemplate` strategy: generation 1, +1 when the template changes.
            generation: GenerationRule::AllButMetadata,
            delete_returns_object: true,
            ..builtin("", "v1", "PodTemplate", "podtemplates", true)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::with(&[("status.replicas", &["status", "replicas"])]),
            hooks: status_on_create!({"replicas": 0}),
            // The legacy group's default: dependents are orphaned.
            gc: GcPolicy::OrphanDependents,
            ..with_scale(with_status(builtin(
                "",
                "v1",
                "ReplicationController",
                "replicationcontrollers",
                true,
            )))
            .short_names(&["rc"])
            .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::with(&[("status.replicas", &["status", "replicas"])]),
            hooks: status_on_create!({"replicas": 0}),
            ..with_scale(with_status(builtin(
                "apps",
                "v1",
                "ReplicaSet",
                "replicasets",
                true,
            )))
            .short_names(&["rs"])
            .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            hooks: status_on_create!({}),
            ..with_status(builtin("batch", "v1", "CronJob", "cronjobs", true))
                .short_names(&["cj"])
                .categories(&["all"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                // `PrepareForCreate` empties the status (its `Pending` phase is a default,
                // added as storage decodes it); the `StorageObjectInUseProtection` admission
                // plugin's finalizer.
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), json!({}));
                    add_finalizer(obj, "kubernetes.io/pvc-protection");
                    prepare_claim_data_sources(obj, None);
                }),
                prepare_update: Some(|new, old| prepare_claim_data_sources(new, Some(old))),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "",
                "v1",
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                true,
            ))
            .short_names(&["pvc"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            hooks: status_on_create!({"loadBalancer": {}}),
            ..with_status(builtin(
                "networking.k8s.io",
                "v1",
                "Ingress",
                "ingresses",
                true,
            ))
            .short_names(&["ing"])
        },
        ResourceType {
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "networking.k8s.io",
                "v1",
                "NetworkPolicy",
                "networkpolicies",
                true,
            )
            .short_names(&["netpol"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            hooks: status_on_create!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}),
            ..with_status(builtin(
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
                true,
            ))
            .short_names(&["pdb"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                convert: Some(super::hpa::convert),
                ..status_on_create!({"currentMetrics": null, "desiredReplicas": 0})
            },
            ..with_status(
                builtin(
                    "autoscaling",
                    "v2",
                    "HorizontalPodAutoscaler",
                    "horizontalpodautoscalers",
                    true,
                )
                .also_served_at("v1", super::hpa::convert_value),
            )
            .short_names(&["hpa"])
            .categories(&["all"])
        },
        ResourceType {
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("rbac.authorization.k8s.io", "v1", "Role", "roles", true)
        },
        ResourceType {
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "RoleBinding",
                "rolebindings",
                true,
            )
        },
        ResourceType {
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRole",
                "clusterroles",
                false,
            )
        },
        ResourceType {
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "rbac.authorization.k8s.io",
                "v1",
                "ClusterRoleBinding",
                "clusterrolebindings",
                false,
            )
        },
        ResourceType {
            create_on_update: true,
            field_labels: FieldLabels::with(&events_v1_fields()),
            ..builtin("events.k8s.io", "v1", "Event", "events", true)
                .short_names(&["ev"])
                // Stored with core/v1 Events (cohabitating resources): it hashes as `/v1/Event`.
                .stored_as("", "v1", "Event")
        },
        ResourceType {
            create_on_update: true,
            unconditional_update: false,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("coordination.k8s.io", "v1", "Lease", "leases", true)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            unconditional_update: false,
            delete: DeleteBehavior::CustomResourceDefinition,
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                prepare_create: Some(super::crd::prepare_create),
                prepare_update: Some(super::crd::prepare_update),
                validate: Some(super::crd::validate),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                "customresourcedefinitions",
                false,
            ))
            .short_names(&["crd", "crds"])
            .categories(&["api-extensions"])
            // `apiextensions-apiserver/pkg/apiserver/apiserver.go` keeps v1beta1 as the
            // storage version.
            .stored_at("v1beta1")
        },
    ]
}

/// The verbs of the proxy subresources: every method is passed on.
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// What `pods/*` serves besides `status`: the kubelet's streams (attach, exec, log,
/// port-forward, proxy), scheduling (`binding`), `eviction`, and the writes of fields the main
/// resource keeps (`ephemeralcontainers`, `resize`).
const POD_SUBRESOURCES: &[SubresourceInfo] = &[
    SubresourceInfo::own("attach", "PodAttachOptions", &["create", "get"]),
    SubresourceInfo::own("binding", "Binding", &["create"]),
    SubresourceInfo::own("ephemeralcontainers", "Pod", &["get", "patch", "update"]),
    SubresourceInfo::other("eviction", ("policy", "v1", "Eviction"), &["create"]),
    SubresourceInfo::own("exec", "PodExecOptions", &["create", "get"]),
    SubresourceInfo::own("log", "Pod", &["get"]),
    SubresourceInfo::own("portforward", "PodPortForwardOptions", &["create", "get"]),
    SubresourceInfo::own("proxy", "PodProxyOptions", PROXY_VERBS),
    SubresourceInfo::own("resize", "Pod", &["get", "patch", "update"]),
];

const SERVICE_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::own(
    "proxy",
    "ServiceProxyOptions",
    PROXY_VERBS,
)];

/// `serviceaccounts/token`: a `TokenRequest` for the account.
const SERVICE_ACCOUNT_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::other(
    "token",
    ("authentication.k8s.io", "v1", "TokenRequest"),
    &["create"],
)];

/// A built-in type with the rules most strategies share.
fn builtin(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> ResourceType {
    ResourceType {
        group: group.to_owned(),
        versions: vec![ServedVersion {
            name: version.to_owned(),
            status: false,
            // Converted once per process, by the first write that needs it.
            schema: Some(FieldSchema::builtin(
                if group.is_empty() {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                },
                kind,
            )),
            scale: false,
            validation: None,
            columns: None,
        }],
        kind: kind.to_owned(),
        list_kind: format!("{kind}List"),
        plural: plural.to_owned(),
        singular: kind.to_lowercase(),
        namespaced,
        custom: false,
        status_write: StatusWrite::OnlyStatus,
        generation: GenerationRule::None,
        unconditional_update: true,
        create_on_update: false,
        name_rule: NameRule::DnsSubdomain,
        delete_returns_object: false,
        gc: GcPolicy::DeleteDependents,
        delete: DeleteBehavior::Standard,
        field_labels: FieldLabels::default(),
        hooks: TypeHooks::default(),
        discovery: DiscoveryInfo {
            verbs: BUILTIN_VERBS,
            storage_version_hash: Some(storage_version_hash(group, version, kind)),
            ..DiscoveryInfo::default()
        },
        serving: Serving::Stored,
        internal_group: None,
        storage: None,
        field_versions: None,
    }
}

/// The verbs discovery lists for a built-in resource with the full generic store: the
/// installer's verbs, sorted.
const BUILTIN_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Namespace storage has no `DeleteCollection`, so discovery lists no `deletecollection`.
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// What discovery lists about a built-in beyond its names (the `ShortNamesProvider`,
/// `CategoriesProvider` and storage version of its REST storage).
impl ResourceType {
    /// The type is served at `version` too, converting to and from its first version, which it
    /// is stored at (its `hooks.convert` converts objects, `convert` what field management
    /// compares).
    fn also_served_at(mut self, version: &str, convert: crate::apply::Converter) -> Self {
        let mut served = builtin(&self.group, version, &self.kind, &self.plural, true).versions;
        let stored = self.versions.first().map(|v| v.name.clone());
        self.versions.append(&mut served);
        self.storage = stored.map(|name| StorageVersion {
            name,
            schema: None,
            webhook: None,
        });
        let schemas = self.versions.iter().filter_map(|v| {
            let schema = v.schema.as_ref()?.get();
            Some((self.api_version(&v.name), schema))
        });
        self.field_versions = Some(std::sync::Arc::new(
            crate::apply::ServedSchemas::new(schemas.collect::<Vec<_>>()).converting(convert),
        ));
        self
    }

    fn short_names(mut self, names: &[&str]) -> Self {
        self.discovery.short_names = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    fn categories(mut self, categories: &[&str]) -> Self {
        self.discovery.categories = categories.iter().map(|c| (*c).to_owned()).collect();
        self
    }

    fn verbs(mut self, verbs: &'static [&'static str]) -> Self {
        self.discovery.verbs = verbs;
        self
    }

    fn subresources(mut self, subresources: &'static [SubresourceInfo]) -> Self {
        self.discovery.subresources = subresources;
        self
    }

    /// A resource whose storage keeps nothing: it serves only `verbs`, and discovery lists no
    /// storage version for it.
    fn serving(mut self, serving: Serving, verbs: &'static [&'static str]) -> Self {
        self.serving = serving;
        self.discovery.verbs = verbs;
        self.discovery.storage_version_hash = None;
        self
    }

    /// The kind is stored at another version of its group, which its storage version hash
    /// names.
    fn stored_at(mut self, version: &str) -> Self {
        self.discovery.storage_version_hash =
            Some(storage_version_hash(&self.group, version, &self.kind));
        self
    }

    /// The kind is stored as another group/version/kind, which its storage version hash names,
    /// and decoded into that group's internal type.
    fn stored_as(mut self, group: &str, version: &str, kind: &str) -> Self {
        self.discovery.storage_version_hash = Some(storage_version_hash(group, version, kind));
        self.internal_group = Some(group.to_owned());
        self
    }
}

fn with_status(mut t: ResourceType) -> ResourceType {
    for v in &mut t.versions {
        v.status = true;
    }
    t
}

/// A type serving `/scale` (an `autoscaling/v1` `Scale`) at every version.
fn with_scale(mut t: ResourceType) -> ResourceType {
    for v in &mut t.versions {
        v.scale = true;
    }
    t
}

fn reset(fields: &'static [&'static str], metadata: &'static [&'static str]) -> StatusWrite {
    StatusWrite::Reset { fields, metadata }
}

impl FieldLabels {
    /// A type with its own field-label conversion function and these extra labels.
    fn with(extra: &[(&str, &[&str])]) -> Self {
        FieldLabels {
            extra: extra
                .iter()
                .map(|(label, path)| {
                    (
                        (*label).to_owned(),
                        path.iter().map(|p| (*p).to_owned()).collect(),
                    )
                })
                .collect(),
            ..FieldLabels::default()
        }
    }

    /// A type without a conversion function of its own.
    fn default_conversion() -> Self {
        FieldLabels {
            unsupported: UnsupportedField::DefaultConversion,
            ..FieldLabels::default()
        }
    }
}

fn event_fields() -> Vec<(&'static str, &'static [&'static str])> {
    const PATHS: [(&str, &[&str]); 7] = [
        ("involvedObject.kind", &["involvedObject", "kind"]),
        ("involvedObject.namespace", &["involvedObject", "namespace"]),
        ("involvedObject.name", &["involvedObject", "name"]),
        ("involvedObject.uid", &["involvedObject", "uid"]),
        (
            "involvedObject.apiVersion",
            &["involvedObject", "apiVersion"],
        ),
        (
            "involvedObject.resourceVersion",
            &["involvedObject", "resourceVersion"],
        ),
        ("involvedObject.fieldPath", &["involvedObject", "fieldPath"]),
    ];
    let mut fields: Vec<(&str, &[&str])> = PATHS.to_vec();
    fields.extend([
        ("reason", &["reason"][..]),
        ("reportingComponent", &["reportingComponent"][..]),
        ("source", &["source", "component"][..]),
        ("type", &["type"][..]),
    ]);
    fields
}

/// events.k8s.io/v1 names the involved object `regarding` and the reporter `reportingController`.
fn events_v1_fields() -> Vec<(&'static str, &'static [&'static str])> {
    const PATHS: [(&str, &[&str]); 7] = [
        ("regarding.kind", &["regarding", "kind"]),
        ("regarding.namespace", &["regarding", "namespace"]),
        ("regarding.name", &["regarding", "name"]),
        ("regarding.uid", &["regarding", "uid"]),
        ("regarding.apiVersion", &["regarding", "apiVersion"]),
        (
            "regarding.resourceVersion",
            &["regarding", "resourceVersion"],
        ),
        ("regarding.fieldPath", &["regarding", "fieldPath"]),
    ];
    let mut fields: Vec<(&str, &[&str])> = PATHS.to_vec();
    fields.extend([
        ("reason", &["reason"][..]),
        ("reportingController", &["reportingController"][..]),
        ("type", &["type"][..]),
    ]);
    fields
}

/// Namespace `PrepareForCreate` (+ `Canonicalize`): phase Active, the `kubernetes` finalizer,
/// and the name label.
/// A ConfigMap's `data` is a Go `map[string]string`: a null value decodes as the empty string
/// (Go's JSON decoder leaves the zero value), so a typed client can read it back.
fn empty_null_data(obj: &mut Map) {
    if let Some(Value::Object(data)) = obj.get_mut("data") {
        for v in data.values_mut().filter(|v| v.is_null()) {
            *v = Value::String(String::new());
        }
    }
}

fn prepare_namespace(obj: &mut Map) {
    obj.insert("status".into(), json!({"phase": "Active"}));
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == "kubernetes")
        {
            list.push(json!("kubernetes"));
        }
    }
    label_namespace_name(obj);
}

/// Namespace `Canonicalize`: every write carries the `kubernetes.io/metadata.name` label.
fn label_namespace_name(obj: &mut Map) {
    let name = meta_str(obj, "name").to_owned();
    let labels = meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
    }
}

/// What kube-apiserver's default admission plugins set on a new Pod: `ServiceAccount` (the
/// `default` account; its token volume is not modelled), `Priority` (priority 0, preempting
/// lower priorities, without a priority class) and `DefaultTolerationSeconds` (5 minutes on
/// not-ready and unreachable nodes).
fn default_pod_admission(pod: &mut Map) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let unset = |spec: &Map, key: &str| {
        spec.get(key)
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    };
    if unset(spec, "serviceAccountName") {
        spec.insert("serviceAccountName".into(), json!("default"));
    }
    let account = spec["serviceAccountName"].clone();
    spec.insert("serviceAccount".into(), account);
    if spec.get("priority").is_none_or(Value::is_null) && unset(spec, "priorityClassName") {
        spec.insert("priority".into(), json!(0));
    }
    if unset(spec, "preemptionPolicy") {
        spec.insert("preemptionPolicy".into(), json!("PreemptLowerPriority"));
    }
    default_toleration_seconds(pod);
}

/// What the claim strategy's `PrepareForCreate` and `PrepareForUpdate` do to data sources
/// (`pkg/api/persistentvolumeclaim`): a reference to another namespace is dropped
/// (CrossNamespaceVolumeDataSource is off) unless the old claim had a reference; without a
/// reference, a data source other than a claim or a volume snapshot is dropped unless the old
/// claim had a source; then a lone data source or local reference is copied to the other.
fn prepare_claim_data_sources(claim: &mut Map, old: Option<&Map>) {
    let old_spec = old.and_then(|o| o.get("spec"));
    let old_has = |key: &str| {
        old_spec
            .and_then(|s| s.get(key))
            .is_some_and(|v| !v.is_null())
    };
    let Some(Value::Object(spec)) = claim.get_mut("spec") else {
        return;
    };
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let set = |spec: &Map, key: &str| spec.get(key).is_some_and(|v| !v.is_null());
    if !text(spec.get("dataSourceRef"), "namespace").is_empty() && !old_has("dataSourceRef") {
        spec.remove("dataSourceRef");
    }
    if !(old_has("dataSource") || old_has("dataSourceRef") || set(spec, "dataSourceRef")) {
        let source = spec.get("dataSource");
        let (group, kind) = (text(source, "apiGroup"), text(source, "kind"));
        let kept = (kind == "PersistentVolumeClaim" && group.is_empty())
            || (kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io");
        if !kept {
            spec.remove("dataSource");
        }
    }
    let copy = |from: &Value| {
        let mut to = Map::new();
        for key in ["apiGroup", "kind", "name"] {
            if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
                to.insert(key.into(), v.clone());
            }
        }
        Value::Object(to)
    };
    match (set(spec, "dataSource"), set(spec, "dataSourceRef")) {
        (true, false) => {
            let copied = copy(&spec["dataSource"]);
            spec.insert("dataSourceRef".into(), copied);
        }
        (false, true) if text(spec.get("dataSourceRef"), "namespace").is_empty() => {
            let copied = copy(&spec["dataSourceRef"]);
            spec.insert("dataSource".into(), copied);
        }
        _ => {}
    }
}

/// The pod strategy's `applySchedulingGatedCondition` on create: a pod with scheduling gates
/// starts with a `PodScheduled` condition saying so, dated as the pod (`UpdatePodCondition`
/// stamps the current time).
fn scheduling_gated_condition(pod: &mut Map) {
    let gated = pod
        .get("spec")
        .and_then(|s| s.get("schedulingGates"))
        .and_then(Value::as_array)
        .is_some_and(|gates| !gates.is_empty());
    if !gated {
        return;
    }
    let now = meta_value(pod, "creationTimestamp")
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(Value::Object(status)) = pod.get_mut("status") {
        status.insert(
            "conditions".into(),
            json!([{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
                    "lastTransitionTime": now, "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}]),
        );
    }
}

/// The `Priority` admission plugin on update: a pod keeps the priority and preemption policy
/// it was given at creation when the update leaves them out.
fn keep_pod_priority(new: &mut Map, old: &Map) {
    let old_spec = old.get("spec");
    let Some(Value::Object(spec)) = new.get_mut("spec") else {
        return;
    };
    for key in ["priority", "preemptionPolicy"] {
        if spec.get(key).is_none_or(Value::is_null)
            && let Some(kept) = old_spec.and_then(|s| s.get(key)).filter(|v| !v.is_null())
        {
            spec.insert(key.into(), kept.clone());
        }
    }
}

/// The `DefaultTolerationSeconds` admission plugin, on create and update: a pod tolerates
/// not-ready and unreachable nodes for 5 minutes unless it has a toleration for that taint
/// (its key, or none, with effect NoExecute, or none) already.
fn default_toleration_seconds(pod: &mut Map) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = tolerations.as_array_mut() else {
        return;
    };
    let text = |t: &Value, key: &str| t.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = list.iter().any(|t| {
            let (k, effect) = (text(t, "key"), text(t, "effect"));
            (k == key || k.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        });
        if !tolerated {
            list.push(
                json!({"effect": "NoExecute", "key": key, "operator": "Exists",
                             "tolerationSeconds": 300}),
            );
        }
    }
}

/// Appends `finalizer` to the object's finalizers unless it is there.
fn add_finalizer(obj: &mut Map, finalizer: &str) {
    let meta = meta_mut(obj);
    let list = meta.entry("finalizers").or_insert_with(|| json!([]));
    if let Some(list) = list.as_array_mut()
        && !list.iter().any(|f| f.as_str() == Some(finalizer))
    {
        list.push(json!(finalizer));
    }
}

/// `patchAllocatedValues` of the Service REST storage: an update keeps the addresses, families
/// and node ports allocated before when the new object leaves them out.
fn keep_allocated_service_fields(new: &mut Map, old: &Map) {
    let (Some(new_spec), Some(old_spec)) = (
        new.get_mut("spec").and_then(Value::as_object_mut),
        old.get("spec").and_then(Value::as_object),
    ) else {
        return;
    };
    let unset = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v.as_str() == Some(""));
    if unset(new_spec.get("clusterIP")) {
        for key in ["clusterIP", "clusterIPs"] {
            if let Some(value) = old_spec.get(key) {
                new_spec.insert(key.to_owned(), value.clone());
            }
        }
    }
    for key in ["ipFamilies", "ipFamilyPolicy"] {
        if unset(new_spec.get(key))
            && let Some(value) = old_spec.get(key)
        {
            new_spec.insert(key.to_owned(), value.clone());
        }
    }
    let old_ports: Vec<&Value> = old_spec
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let ports = new_spec.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
        if !unset(port.get("nodePort")) {
            continue;
        }
        let same = old_ports.iter().find(|old| {
            old.get("port") == port.get("port") && old.get("protocol") == port.get("protocol")
        });
        if let Some(node_port) = same.and_then(|old| old.get("nodePort")) {
            port.insert("nodePort".into(), node_port.clone());
        }
    }
    normalize_cluster_ips(new_spec, old_spec);
}

/// `normalizeClusterIPs` of the Service storage on update, before validation: a client that
/// writes only `clusterIP` (an older one) changes or clears `clusterIPs` with it, so
/// validation sees the addresses it asked for.
fn normalize_cluster_ips(new: &mut Map, old: &Map) {
    let ip = |m: &Map| {
        m.get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let ips = |m: &Map| {
        m.get("clusterIPs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (old_ip, new_ip) = (ip(old), ip(new));
    if !ips(old).is_empty() && ips(new).is_empty() && old_ip == new_ip {
        new.insert("clusterIPs".into(), Value::Array(ips(old).into()));
    }
    if old_ip != new_ip && ips(old) == ips(new) {
        if new_ip.is_empty() {
            new.remove("clusterIPs");
        } else {
            new.insert("clusterIPs".into(), json!([new_ip]));
        }
    }
}

/// The pod strategy's `applyAppArmorVersionSkew` on create: a container with a deprecated
/// AppArmor annotation and no profile of its own gets the profile the annotation names, unless
/// it is invalid or the pod's own. (Its deprecation warning is not sent.)
fn apparmor_annotations_to_fields(pod: &mut Map) {
    const PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
    let annotations = meta_value(pod, "annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(Value::Object(spec)) = pod.get_mut("spec") else {
        return;
    };
    let os = spec
        .get("os")
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str);
    if os == Some("windows") {
        return;
    }
    let pod_profile = spec
        .get("securityContext")
        .and_then(|c| c.get("appArmorProfile"))
        .cloned();
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(Value::Array(containers)) = spec.get_mut(key) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let name = container.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(annotation) = annotations
                .get(&format!("{PREFIX}{name}"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let has_own = container
                .get("securityContext")
                .and_then(|c| c.get("appArmorProfile"))
                .is_some_and(|p| !p.is_null());
            // ApparmorFieldForAnnotation, kept only where ValidateAppArmorProfileField passes.
            let profile = match annotation {
                "unconfined" => Some(json!({"type": "Unconfined"})),
                "runtime/default" => Some(json!({"type": "RuntimeDefault"})),
                other => other
                    .strip_prefix("localhost/")
                    .filter(|p| !p.is_empty() && p.trim() == *p && p.len() <= 4095)
                    .map(|p| json!({"type": "Localhost", "localhostProfile": p})),
            };
            let Some(profile) = profile.filter(|p| !has_own && Some(p) != pod_profile.as_ref())
            else {
                continue;
            };
            let context = container
                .entry("securityContext")
                .or_insert_with(|| Value::Object(Map::new()));
            if !context.is_object() {
                *context = Value::Object(Map::new());
            }
            if let Value::Object(context) = context {
                context.insert("appArmorProfile".into(), profile);
            }
        }
    }
}

/// `qos.GetPodQOS`: BestEffort without any cpu/memory request or limit; Guaranteed when every
/// container limits both and requests nothing different; Burstable otherwise.
pub(crate) fn pod_qos_class(pod: &Map) -> &'static str {
    let spec = pod.get("spec");
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.and_then(|s| s.get(*k)).and_then(Value::as_array))
        .flatten()
        .collect();
    let resources = |c: &Value, kind: &str, res: &str| {
        c.get("resources")
            .and_then(|r| r.get(kind))
            .and_then(|m| m.get(res))
            .cloned()
    };
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        for res in ["cpu", "memory"] {
            let (request, limit) = (resources(c, "requests", res), resources(c, "limits", res));
            any |= request.is_some() || limit.is_some();
            match (request, limit) {
                (_, None) => guaranteed = false,
                (Some(r), Some(l)) if r != l => guaranteed = false,
                _ => {}
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Pod `CheckGracefulDelete`: the requested period, else `terminationGracePeriodSeconds`
/// (30 when unset); 0 for unscheduled or finished pods; negative periods become 1.
fn pod_grace_period(pod: &Map, requested: Option<i64>) -> i64 {
    let spec = pod.get("spec");
    let mut period = requested.unwrap_or_else(|| {
        spec.and_then(|s| s.get("terminationGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(30)
    });
    let node = spec
        .and_then(|s| s.get("nodeName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let phase = pod
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str);
    if node.is_empty() || matches!(phase, Some("Failed" | "Succeeded")) {
        period = 0;
    }
    if period < 0 { 1 } else { period }
}

const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

fn template_generation(obj: &Map) -> i64 {
    meta_value(obj, "annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// DaemonSet's `spec.templateGeneration`, which apps/v1 carries as an annotation.
fn set_template_generation(obj: &mut Map, generation: i64) {
    let annotations = meta_mut(obj)
        .entry("annotations")
        .or_insert_with(|| json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(
            TEMPLATE_GENERATION.into(),
            Value::String(generation.to_string()),
        );
    }
}

/// Job `generateSelectorIfNeeded`: unless `spec.manualSelector`, label the pod template with the
/// job's name and uid and select on the uid. Labels and a selector label the user already set
/// are kept: validation (`validateGeneratedSelector`) reports them if they differ.
fn generate_job_selector(job: &mut Map) {
    let manual = job
        .get("spec")
        .and_then(|s| s.get("manualSelector"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if manual {
        return;
    }
    let (name, uid) = (
        meta_str(job, "name").to_owned(),
        meta_str(job, "uid").to_owned(),
    );
    let spec = job.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if let Some(template) = template.as_object_mut() {
        let labels = meta_mut(template)
            .entry("labels")
            .or_insert_with(|| json!({}));
        if labels.is_null() {
            *labels = json!({});
        }
        if let Some(labels) = labels.as_object_mut() {
            for (key, value) in [
                ("job-name", &name),
                ("batch.kubernetes.io/job-name", &name),
                ("controller-uid", &uid),
                ("batch.kubernetes.io/controller-uid", &uid),
            ] {
                labels
                    .entry(key)
                    .or_insert_with(|| Value::String(value.clone()));
            }
        }
    }
    let selector = spec.entry("selector").or_insert_with(|| json!({}));
    if selector.is_null() {
        *selector = json!({});
    }
    let Some(selector) = selector.as_object_mut() else {
        return;
    };
    let match_labels = selector.entry("matchLabels").or_insert_with(|| json!({}));
    if match_labels.is_null() {
        *match_labels = json!({});
    }
    if let Some(match_labels) = match_labels.as_object_mut() {
        match_labels
            .entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| Value::String(uid));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn pods_without_resources_are_best_effort() {
        assert_eq!(
            pod_qos_class(&obj(json!({"spec": {"containers": [{"name": "a"}]}}))),
            "BestEffort"
        );
    }

    #[test]
    fn pods_limiting_cpu_and_memory_everywhere_are_guaranteed() {
        let pod = obj(
            json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}),
        );
        assert_eq!(pod_qos_class(&pod), "Guaranteed");
    }

    #[test]
    fn pods_with_only_requests_are_burstable() {
        let pod = obj(
            json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}}),
        );
        assert_eq!(pod_qos_class(&pod), "Burstable");
    }

    #[test]
    fn unscheduled_pods_are_deleted_without_grace() {
        assert_eq!(pod_grace_period(&obj(json!({"spec": {}})), Some(30)), 0);
        assert_eq!(
            pod_grace_period(&obj(json!({"spec": {"nodeName": "n"}})), None),
            30
        );
        assert_eq!(
            pod_grace_period(&obj(json!({"spec": {"nodeName": "n"}})), Some(-5)),
            1
        );
    }

    #[test]
    fn every_builtin_is_unique_by_group_and_plural() {
        let types = builtin_types();
        for (i, a) in types.iter().enumerate() {
            for b in &types[i + 1..] {
                assert!(
                    a.group != b.group || a.plural != b.plural,
                    "{} twice",
                    a.plural
                );
            }
        }
    }
}
