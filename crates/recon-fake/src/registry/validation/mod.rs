//! Validation of built-in kinds: what each kind's registry strategy checks beyond the generic
//! metadata rules (`handlers::validation`), on create (`Validate`), on update
//! (`ValidateUpdate`: the same checks on the new object, then what may not change) and through
//! `/status` (`ValidateStatusUpdate`), as `pkg/apis/<group>/validation` of kube-apiserver 1.36
//! words it: the same field paths, messages and order of `details.causes`.
//!
//! - [`pod`]: pod specs and templates (containers, ports, probes, volumes, ...), Pods and
//!   PodTemplates; [`pod_security`]: their security contexts; [`windows_options`]: the
//!   Windows options in them; [`pod_os`]: what a linux or windows pod may set;
//!   [`user_namespaces`]: pods with `hostUsers: false`; [`pod_object`]: a Pod's own
//!   annotations, create-only fields, what an update may change and its status;
//! - [`volume_sources`]: what each pod volume's source holds; [`volume_files`]: the sources
//!   that write files (secret, configMap, downwardAPI, projected);
//! - [`probe_handlers`]: containers' probes and lifecycle hooks;
//! - [`workloads`]: apps/v1 and CronJobs; [`job`]: Jobs;
//! - [`core_v1`]: the other core/v1 kinds, and Events of both core/v1 and events.k8s.io/v1,
//!   handed to [`service`]: Services; [`config_map_secret`]: ConfigMaps and Secrets;
//!   [`namespace`]: Namespaces; [`events`]: Events; [`claim`]: PersistentVolumeClaims;
//!   [`replication_controller`]: ReplicationControllers; [`ports`]: port numbers and names;
//! - [`rbac`]: Roles, ClusterRoles and their bindings; [`networking`]: NetworkPolicies and
//!   Ingresses; [`disruption_budget`]: PodDisruptionBudgets; [`autoscaling`]:
//!   HorizontalPodAutoscalers; [`lease`]: Leases;
//! - [`cluster`]: Nodes, PersistentVolumes, PriorityClasses, StorageClasses, the admission
//!   webhook configurations, PriorityLevelConfigurations, FlowSchemas, IngressClasses,
//!   RuntimeClasses;
//! - [`admission_policy`]: the validating and mutating admission policies and their bindings
//!   (their CEL expressions compiled);
//! - [`quota`]: ResourceQuotas and LimitRanges; [`controller_revision`]: ControllerRevisions;
//!   [`certificates`]: CertificateSigningRequests; [`aggregator`]: APIServices;
//!   [`networking_ips`]: IPAddresses and ServiceCIDRs; [`storage`]: VolumeAttributesClasses
//!   and CSIStorageCapacities; [`csi`]: CSIDrivers and CSINodes; [`volume_attachment`]:
//!   VolumeAttachments;
//! - [`resource_claims`]: resource.k8s.io's ResourceClaims and ResourceClaimTemplates (and the
//!   device requests, selectors and configurations the others share); [`device_class`]:
//!   DeviceClasses; [`resource_slice`]: ResourceSlices; [`conditions`]: `metav1.Condition`
//!   lists.
//!
//! Each function gets the object as decoded and defaulted (a JSON object whose fields have
//! their Go types) and returns its errors in the order the real server reports them.

mod admission_policy;
mod aggregator;
mod autoscaling;
mod certificates;
mod claim;
mod cluster;
mod conditions;
mod config_map_secret;
mod controller_revision;
mod core_v1;
mod csi;
mod device_class;
mod disruption_budget;
mod endpoints;
mod events;
mod job;
mod lease;
mod namespace;
mod networking;
mod networking_ips;
mod pod;
mod pod_object;
mod pod_os;
mod pod_security;
mod ports;
mod probe_handlers;
mod quota;
mod rbac;
mod read;
mod replication_controller;
mod resource_claims;
mod resource_slice;
mod service;
mod service_addresses;
mod storage;
mod user_namespaces;
mod volume_attachment;
mod volume_files;
mod volume_sources;
mod windows_options;
mod workloads;

pub(crate) use pod_object::prepare_status_update as prepare_pod_status_update;
pub(crate) use resource_claims::drop_deallocated_devices;
pub(crate) use workloads::{
    label_selector_requirement, selector_converts, selector_matches, selector_matches_labels,
};

use crate::field::FieldError;
use crate::wire::object::Object;

/// Which file validates a `group` `kind`.
enum Family {
    Pod,
    Core,
    Workloads,
    Rbac,
    DisruptionBudget,
    Autoscaling,
    Lease,
    Networking,
    /// A kind with no checks of its own.
    Unchecked,
    Cluster,
    Endpoints,
    Quota,
    ControllerRevision,
    Certificates,
    Aggregator,
    NetworkingIps,
    Storage,
    Csi,
    VolumeAttachment,
    ResourceClaims,
    DeviceClass,
    ResourceSlice,
    AdmissionPolicy,
}

impl Family {
    fn of(group: &str, kind: &str) -> Family {
        if cluster::handles(group, kind) {
            return Family::Cluster;
        }
        if endpoints::handles(group, kind) {
            return Family::Endpoints;
        }
        if quota::handles(group, kind) {
            return Family::Quota;
        }
        if controller_revision::handles(group, kind) {
            return Family::ControllerRevision;
        }
        if certificates::handles(group, kind) {
            return Family::Certificates;
        }
        if aggregator::handles(group, kind) {
            return Family::Aggregator;
        }
        if networking_ips::handles(group, kind) {
            return Family::NetworkingIps;
        }
        if storage::handles(group, kind) {
            return Family::Storage;
        }
        if csi::handles(group, kind) {
            return Family::Csi;
        }
        if volume_attachment::handles(group, kind) {
            return Family::VolumeAttachment;
        }
        if resource_claims::handles(group, kind) {
            return Family::ResourceClaims;
        }
        if device_class::handles(group, kind) {
            return Family::DeviceClass;
        }
        if resource_slice::handles(group, kind) {
            return Family::ResourceSlice;
        }
        if admission_policy::handles(group, kind) {
            return Family::AdmissionPolicy;
        }
        match (group, kind) {
            ("", "Pod" | "PodTemplate") => Family::Pod,
            ("" | "events.k8s.io", _) => Family::Core,
            ("apps" | "batch", _) => Family::Workloads,
            ("rbac.authorization.k8s.io", _) => Family::Rbac,
            ("policy", "PodDisruptionBudget") => Family::DisruptionBudget,
            ("autoscaling", "HorizontalPodAutoscaler") => Family::Autoscaling,
            ("coordination.k8s.io", "Lease") => Family::Lease,
            ("networking.k8s.io", _) => Family::Networking,
            _ => Family::Unchecked,
        }
    }
}

/// The type-specific errors of creating `obj`, a `group` `kind`.
pub(crate) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match Family::of(group, kind) {
        Family::Pod => pod::validate_create(kind, obj),
        Family::Core => core_v1::validate_create(group, kind, obj),
        Family::Workloads => workloads::validate_create(kind, obj),
        Family::Rbac => rbac::validate_create(kind, obj),
        Family::DisruptionBudget => disruption_budget::validate(obj),
        Family::Autoscaling => autoscaling::validate_create(obj),
        Family::Lease => lease::validate(obj),
        Family::Networking => networking::validate(kind, obj, None),
        Family::Unchecked => Vec::new(),
        Family::Cluster => cluster::validate_create(group, kind, obj),
        Family::Endpoints => endpoints::validate_create(kind, obj),
        Family::Quota => quota::validate_create(kind, obj),
        Family::ControllerRevision => controller_revision::validate_create(obj),
        Family::Certificates => certificates::validate_create(obj),
        Family::Aggregator => aggregator::validate(obj),
        Family::NetworkingIps => networking_ips::validate_create(kind, obj),
        Family::Storage => storage::validate_create(kind, obj),
        Family::Csi => csi::validate_create(kind, obj),
        Family::VolumeAttachment => volume_attachment::validate(obj),
        Family::ResourceClaims => resource_claims::validate_create(kind, obj),
        Family::DeviceClass => device_class::validate_create(obj),
        Family::ResourceSlice => resource_slice::validate_create(obj),
        Family::AdmissionPolicy => admission_policy::validate_create(kind, obj),
    }
}

/// The type-specific errors of updating `old` to `new` through the main endpoint.
pub(crate) fn validate_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match Family::of(group, kind) {
        Family::Pod => pod::validate_update(kind, new, old),
        Family::Core => core_v1::validate_update(group, kind, new, old),
        Family::Workloads => workloads::validate_update(kind, new, old),
        Family::Rbac => rbac::validate_update(kind, new, old),
        Family::DisruptionBudget => disruption_budget::validate(new),
        Family::Autoscaling => autoscaling::validate_update(new, old),
        Family::Lease => lease::validate(new),
        Family::Networking => networking::validate(kind, new, Some(old)),
        Family::Unchecked => Vec::new(),
        Family::Cluster => cluster::validate_update(group, kind, new, old),
        Family::Endpoints => endpoints::validate_update(kind, new, old),
        Family::Quota => quota::validate_update(kind, new, old),
        Family::ControllerRevision => controller_revision::validate_update(new, old),
        Family::Certificates => certificates::validate_update(new, old, None),
        Family::Aggregator => aggregator::validate(new),
        Family::NetworkingIps => networking_ips::validate_update(kind, new, old),
        Family::Storage => storage::validate_update(kind, new, old),
        Family::Csi => csi::validate_update(kind, new, old),
        Family::VolumeAttachment => volume_attachment::validate_update(new, old),
        Family::ResourceClaims => resource_claims::validate_update(kind, new, old),
        Family::DeviceClass => device_class::validate_update(new, old),
        Family::ResourceSlice => resource_slice::validate_update(new, old),
        Family::AdmissionPolicy => admission_policy::validate_update(kind, new, old),
    }
}

/// The type-specific errors of updating `old` to `new` through `/status`.
pub(crate) fn validate_status_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match Family::of(group, kind) {
        Family::Pod => pod::validate_status_update(kind, new, old),
        Family::Core => core_v1::validate_status_update(group, kind, new, old),
        Family::Workloads => workloads::validate_status_update(kind, new, old),
        Family::Autoscaling => autoscaling::validate_status_update(new),
        Family::Rbac
        | Family::DisruptionBudget
        | Family::Lease
        | Family::Networking
        | Family::Unchecked => Vec::new(),
        Family::Cluster => cluster::validate_status_update(group, kind, new, old),
        Family::Endpoints => Vec::new(),
        Family::Quota => quota::validate_status_update(kind, new),
        Family::ControllerRevision => Vec::new(),
        Family::Certificates => certificates::validate_update(new, old, Some("status")),
        Family::Aggregator => aggregator::validate_status(new),
        Family::NetworkingIps | Family::Storage | Family::Csi => Vec::new(),
        // The status strategy runs the update's validation.
        Family::VolumeAttachment => volume_attachment::validate_update(new, old),
        // ResourceClaims are the only kind of these with a status.
        Family::ResourceClaims => resource_claims::validate_status_update(new, old),
        Family::DeviceClass | Family::ResourceSlice => Vec::new(),
        Family::AdmissionPolicy => admission_policy::validate_status_update(kind, new),
    }
}

/// The `Warning`s the strategy of a `group` `kind` gives about `obj` when it is created or
/// updated (`WarningsOnCreate` / `WarningsOnUpdate`), beyond the generic ones: a ResourceSlice's
/// upper-case driver name; an admission policy's, binding's or webhook configuration's name in
/// the reserved `.static.k8s.io` suffix.
pub(crate) fn warnings(group: &str, kind: &str, obj: &Object) -> Vec<String> {
    let webhook_configuration = group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
        );
    match Family::of(group, kind) {
        Family::ResourceSlice => resource_slice::warnings(obj),
        Family::AdmissionPolicy => admission_policy::static_suffix_warnings(obj),
        _ if webhook_configuration => admission_policy::static_suffix_warnings(obj),
        _ => Vec::new(),
    }
}

/// The metadata errors a strategy may place among its own: `ValidateObjectMeta`'s and
/// `ValidateObjectMetaUpdate`'s (core's: the kube finalizer names included).
pub(crate) type MetaErrors<'a> = &'a dyn Fn() -> (Vec<FieldError>, Vec<FieldError>);

/// The whole `ValidateUpdate` of the strategies (main endpoint, or the `subresource` written
/// through) that place the metadata errors among their own rather than first: StatefulSet's
/// status, Job's update and status, CertificateSigningRequest's update, status and approval,
/// ResourceClaimTemplate's and ResourceSlice's update.
/// `None` for the others, which the handler composes as metadata errors, then
/// [`validate_update`] or [`validate_status_update`].
pub(crate) fn validate_update_placing_meta(
    group: &str,
    kind: &str,
    subresource: Option<&str>,
    new: &Object,
    old: &Object,
    meta: MetaErrors<'_>,
) -> Option<Vec<FieldError>> {
    match (group, kind, subresource) {
        // ValidateStatefulSetStatusUpdate: the status, the metadata update, the collision count.
        ("apps", "StatefulSet", Some("status")) => {
            Some(workloads::stateful_set_status_update(new, old, meta().1))
        }
        // ValidateJob (metadata first), then ValidateJobUpdate (metadata update first).
        ("batch", "Job", None) => {
            let (meta, meta_update) = meta();
            Some(job::validate_update_with_meta(new, old, meta, meta_update))
        }
        // ValidateJobUpdateStatus: the metadata update, then the status.
        ("batch", "Job", Some("status")) => {
            let mut errors = meta().1;
            errors.extend(job::validate_status_update(new, old));
            Some(errors)
        }
        // validateCertificateSigningRequestUpdate: the metadata, the request, the update rules,
        // then the metadata update.
        ("certificates.k8s.io", "CertificateSigningRequest", _) => {
            let (meta, meta_update) = meta();
            let mut errors = meta;
            errors.extend(certificates::validate_update(new, old, subresource));
            errors.extend(meta_update);
            Some(errors)
        }
        // The template strategy's ValidateUpdate: ValidateResourceClaimTemplate (metadata,
        // then the template), then ValidateResourceClaimTemplateUpdate (metadata update, then
        // the spec as before).
        ("resource.k8s.io", "ResourceClaimTemplate", None) => {
            let (meta, meta_update) = meta();
            let mut errors = meta;
            errors.extend(resource_claims::validate_create(kind, new));
            errors.extend(meta_update);
            errors.extend(resource_claims::immutable_template_spec(new, old));
            Some(errors)
        }
        // ValidateResourceSliceUpdate: the metadata update (no `ValidateObjectMeta`), then the
        // spec.
        ("resource.k8s.io", "ResourceSlice", None) => {
            let mut errors = meta().1;
            errors.extend(resource_slice::validate_update(new, old));
            Some(errors)
        }
        _ => None,
    }
}
