//! The columns and cells of built-in kinds (pkg/printers/internalversion/printers.go,
//! `AddHandlers`; every column is served: pkg/printers/storage/storage.go asks for wide
//! output). Kinds printers.go has no handler for use the default convertor; kinds it has one
//! for that recon has not ported are refused (see [`Found::NotPorted`]).

mod admission;
mod apps;
mod autoscaling;
mod batch;
mod cluster;
mod core;
mod events;
mod flowcontrol;
mod networking;
mod rbac;
mod resource;
mod storage;

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::document::{Cell, Column, Row};
use super::{age, creation, name_of};
use crate::wire::object::Object;

/// `ObjectMeta`'s documentation of `name`, every Name column's description.
pub(crate) const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `ObjectMeta`'s documentation of `creationTimestamp`, every Age column's description.
pub(crate) const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The Name column, first in every table.
const NAME: Column<'static> = Column::new("Name", "string", "name", NAME_DESCRIPTION, 0);
/// The Age column of the printers: a string (the age, already printed).
const AGE: Column<'static> = Column::new("Age", "string", "", CREATION_TIMESTAMP_DESCRIPTION, 0);

/// A string column without a format.
const fn text(name: &'static str, description: &'static str) -> Column<'static> {
    Column::new(name, "string", "", description, 0)
}

/// An integer column.
const fn integer(name: &'static str, description: &'static str) -> Column<'static> {
    Column::new(name, "integer", "", description, 0)
}

/// The wide Containers column of the kinds with a pod template.
const CONTAINERS: Column<'static> = wide("Containers", "Names of each container in the template.");
/// The wide Images column of the kinds with a pod template.
const IMAGES: Column<'static> = wide(
    "Images",
    "Images referenced by each container in the template.",
);

/// A wide (priority 1) string column.
const fn wide(name: &'static str, description: &'static str) -> Column<'static> {
    Column::new(name, "string", "", description, 1)
}

/// The columns of a kind whose table is its name, one text column and its age.
const fn name_text_age(header: &'static str, description: &'static str) -> [Column<'static>; 3] {
    [NAME, text(header, description), AGE]
}

/// A row of [`name_text_age`]'s columns.
fn name_text_age_row(obj: &Object, now: Timestamp, value: String) -> Row {
    Row::new(vec![name(obj), Cell::text(value), age_of(obj, now)])
}

/// The columns of a replicated workload (`printReplicaSet`, `printReplicationController`):
/// the replicas desired, current and ready, the age, the template's containers and images, and
/// the selector; each column's description as its type words it.
const fn replicas_columns(
    desired: &'static str,
    current: &'static str,
    ready: &'static str,
    selector: &'static str,
) -> [Column<'static>; 8] {
    [
        NAME,
        integer("Desired", desired),
        integer("Current", current),
        integer("Ready", ready),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", selector),
    ]
}

/// A row of [`replicas_columns`]: `selector` as the kind prints its selector.
fn replicas_row(obj: &Object, now: Timestamp, selector: String) -> Row {
    let (containers, images) = container_cells(obj, &["spec", "template"]);
    Row::new(vec![
        name(obj),
        Cell::Int(int_at(obj, &["spec", "replicas"])),
        Cell::Int(int_at(obj, &["status", "replicas"])),
        Cell::Int(int_at(obj, &["status", "readyReplicas"])),
        age_of(obj, now),
        containers,
        images,
        Cell::text(selector),
    ])
}

/// One kind's handler: its columns and how a row is printed.
pub(crate) struct Printer {
    pub(crate) group: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) columns: &'static [Column<'static>],
    pub(crate) row: fn(&Object, Timestamp) -> Row,
}

/// What printers.go holds for a kind.
pub(crate) enum Found {
    Ported(&'static Printer),
    /// No handler: the default convertor prints it.
    NoHandler,
    /// A handler recon has not ported yet: the request is refused rather than answered with
    /// columns the real server does not print.
    NotPorted,
}

/// The printers ported so far.
static PRINTERS: &[Printer] = &[
    core::CONFIG_MAP,
    core::SECRET,
    core::NAMESPACE,
    core::SERVICE_ACCOUNT,
    core::SERVICE,
    core::POD,
    core::LEASE,
    core::REPLICATION_CONTROLLER,
    core::POD_TEMPLATE,
    core::ENDPOINTS,
    core::NODE,
    apps::DEPLOYMENT,
    apps::REPLICA_SET,
    apps::STATEFUL_SET,
    apps::DAEMON_SET,
    batch::JOB,
    batch::CRON_JOB,
    networking::INGRESS,
    networking::INGRESS_CLASS,
    rbac::ROLE_BINDING,
    rbac::CLUSTER_ROLE_BINDING,
    events::CORE_EVENT,
    events::EVENTS_EVENT,
    cluster::ENDPOINT_SLICE,
    cluster::POD_DISRUPTION_BUDGET,
    cluster::NETWORK_POLICY,
    cluster::STORAGE_CLASS,
    cluster::PRIORITY_CLASS,
    cluster::RUNTIME_CLASS,
    cluster::MUTATING_WEBHOOKS,
    cluster::VALIDATING_WEBHOOKS,
    storage::PERSISTENT_VOLUME,
    storage::PERSISTENT_VOLUME_CLAIM,
    flowcontrol::FLOW_SCHEMA,
    flowcontrol::PRIORITY_LEVEL,
    networking::IP_ADDRESS,
    networking::SERVICE_CIDR,
    apps::CONTROLLER_REVISION,
    autoscaling::HORIZONTAL_POD_AUTOSCALER,
    cluster::RESOURCE_QUOTA,
    cluster::CERTIFICATE_SIGNING_REQUEST,
    cluster::API_SERVICE,
    cluster::COMPONENT_STATUS,
    storage::VOLUME_ATTACHMENT,
    storage::CSI_NODE,
    storage::CSI_DRIVER,
    storage::VOLUME_ATTRIBUTES_CLASS,
    admission::VALIDATING_ADMISSION_POLICY,
    admission::MUTATING_ADMISSION_POLICY,
    resource::DEVICE_CLASS,
    resource::RESOURCE_CLAIM,
    resource::RESOURCE_CLAIM_TEMPLATE,
    resource::RESOURCE_SLICE,
    admission::VALIDATING_ADMISSION_POLICY_BINDING,
    admission::MUTATING_ADMISSION_POLICY_BINDING,
];

/// `(group, kind)` of every kind whose registry prints it with printers.go's `AddHandlers`
/// (pkg/registry/*/storage, `printerstorage.TableConvertor`), ported or not. CSIStorageCapacity
/// has a handler its registry does not use: it prints with the default convertor (recorded in
/// scenario table/storage-kinds-and-policies).
const HANDLED: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "PodTemplate"),
    ("policy", "PodDisruptionBudget"),
    ("", "ReplicationController"),
    ("apps", "ReplicaSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "Service"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "IngressClass"),
    ("apps", "StatefulSet"),
    ("", "Endpoints"),
    ("", "Node"),
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("", "Namespace"),
    ("", "Secret"),
    ("", "ServiceAccount"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "ComponentStatus"),
    ("apps", "Deployment"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("", "ConfigMap"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("certificates.k8s.io", "PodCertificateRequest"),
    ("coordination.k8s.io", "Lease"),
    ("coordination.k8s.io", "LeaseCandidate"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("apps", "ControllerRevision"),
    ("", "ResourceQuota"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("discovery.k8s.io", "EndpointSlice"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "CSIDriver"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceClaim"),
    ("resource.k8s.io", "ResourceClaimTemplate"),
    ("resource.k8s.io", "ResourceSlice"),
    ("resource.k8s.io", "ResourcePoolStatusRequest"),
    ("resource.k8s.io", "DeviceTaintRule"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("networking.k8s.io", "IPAddress"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
    ("scheduling.k8s.io", "Workload"),
    ("scheduling.k8s.io", "PodGroup"),
    // kube-aggregator's own convertor (Name, Service, Available, Age).
    ("apiregistration.k8s.io", "APIService"),
];

/// What printers.go holds for `kind` of `group`.
pub(crate) fn find(group: &str, kind: &str) -> Found {
    if let Some(printer) = PRINTERS.iter().find(|p| p.group == group && p.kind == kind) {
        return Found::Ported(printer);
    }
    if HANDLED.contains(&(group, kind)) {
        Found::NotPorted
    } else {
        Found::NoHandler
    }
}

/// The value at `path` under `obj`.
fn at<'a>(obj: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(obj.get(first)?, |v, k| v.get(*k))
}

/// The string at `path`, empty when missing.
fn str_at<'a>(obj: &'a Object, path: &[&str]) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or("")
}

/// The integer at `path`, 0 when missing.
fn int_at(obj: &Object, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// The list at `path`, empty when missing.
fn list_at<'a>(obj: &'a Object, path: &[&str]) -> &'a [Value] {
    at(obj, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The number of entries of the map at `path`.
fn map_len(obj: &Object, path: &[&str]) -> i64 {
    at(obj, path)
        .and_then(Value::as_object)
        .map_or(0, |m| i64::try_from(m.len()).unwrap_or(i64::MAX))
}

/// `translateTimestampSince` of the object's creation.
fn age_of(obj: &Object, now: Timestamp) -> Cell {
    Cell::text(age::since(creation(obj), now))
}

/// The row's first cell.
fn name(obj: &Object) -> Cell {
    Cell::text(name_of(obj))
}

/// A label map as `labels.FormatLabels` writes it: `k=v` sorted by key, joined with commas,
/// `<none>` when empty.
fn format_labels(labels: Option<&Value>) -> String {
    let Some(map) = labels.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".to_owned();
    };
    let mut pairs: Vec<(&String, &str)> = map
        .iter()
        .map(|(k, v)| (k, v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `layoutContainerCells` of the pod template at `template`: container names and images,
/// comma-joined.
fn container_cells(obj: &Object, template: &[&str]) -> (Cell, Cell) {
    let path: Vec<&str> = template
        .iter()
        .copied()
        .chain(["spec", "containers"])
        .collect();
    let containers = list_at(obj, &path);
    let field = |key: &str| {
        containers
            .iter()
            .map(|c| c.get(key).and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(",")
    };
    (Cell::text(field("name")), Cell::text(field("image")))
}

/// A `LabelSelector` as `metav1.LabelSelectorAsSelector(...).String()` writes it: requirements
/// sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-joined; no selector
/// selects nothing and writes nothing; `None` when it is malformed.
fn label_selector(selector: Option<&Value>) -> Option<String> {
    let Some(selector) = selector.and_then(Value::as_object) else {
        return Some(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for expr in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let text = match expr.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.to_owned(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return None,
        };
        requirements.push((key.to_owned(), text));
    }
    // `internalSelector` sorts its requirements by key, stably.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        requirements
            .into_iter()
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `metav1.FormatLabelSelector`: the selector, `<none>` when it writes nothing, `<error>` when
/// it is malformed.
fn format_label_selector(selector: Option<&Value>) -> String {
    match label_selector(selector) {
        None => "<error>".to_owned(),
        Some(s) if s.is_empty() => "<none>".to_owned(),
        Some(s) => s,
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn kinds_are_ported_defaulted_or_refused() {
        assert!(matches!(find("", "ConfigMap"), Found::Ported(_)));
        assert!(matches!(
            find("rbac.authorization.k8s.io", "Role"),
            Found::NoHandler
        ));
        assert!(matches!(
            find("coordination.k8s.io", "LeaseCandidate"),
            Found::NotPorted
        ));
    }

    #[test]
    fn every_ported_printer_is_a_handled_kind_with_matching_cells() {
        let now = Timestamp::UNIX_EPOCH;
        for printer in PRINTERS {
            assert!(
                HANDLED.contains(&(printer.group, printer.kind)),
                "{}",
                printer.kind
            );
            let row = (printer.row)(&Object::new(), now);
            // IPAddress rows carry an age its columns do not declare, as printers.go's do.
            let undeclared = usize::from(printer.kind == "IPAddress");
            assert_eq!(
                row.cells.len(),
                printer.columns.len() + undeclared,
                "{}",
                printer.kind
            );
            // Name comes first, but for events, where it is last.
            assert!(
                printer
                    .columns
                    .iter()
                    .any(|c| (c.name, c.format) == ("Name", "name")),
                "{}",
                printer.kind
            );
        }
    }

    #[test]
    fn selectors_are_written_sorted() {
        let selector = json!({
            "matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["b", "a"]},
                {"key": "gone", "operator": "DoesNotExist"}
            ]
        });
        assert_eq!(
            format_label_selector(Some(&selector)),
            "app=x,env in (a,b),!gone,tier=web"
        );
        assert_eq!(label_selector(None).as_deref(), Some(""));
        assert_eq!(format_label_selector(None), "<none>");
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        assert_eq!(label_selector(Some(&bad)), None);
        assert_eq!(format_label_selector(Some(&bad)), "<error>");
    }

    #[test]
    fn labels_are_sorted_pairs() {
        assert_eq!(format_labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(format_labels(Some(&json!({}))), "<none>");
        assert_eq!(format_labels(None), "<none>");
    }
}
