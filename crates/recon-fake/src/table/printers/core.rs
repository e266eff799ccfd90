//! The core group's printers, and Lease (pkg/printers/internalversion/printers.go:
//! `printConfigMap`, `printSecret`, `printNamespace`, `printServiceAccount`, `printService`,
//! `printPod`, `printLease`, `printReplicationController`, `printPodTemplate`,
//! `printEndpoints`, `printNode`).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::super::document::{Cell, Condition, Row};
use super::super::{age, timestamp};
use super::{
    AGE, NAME, Printer, age_of, at, container_cells, format_labels, list_at, map_len, name,
    name_text_age, name_text_age_row, replicas_columns, replicas_row, str_at, text, wide,
};
use crate::wire::object::Object;

pub(super) const CONFIG_MAP: Printer = Printer {
    group: "",
    kind: "ConfigMap",
    columns: &[
        NAME,
        text(
            "Data",
            "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
        ),
        AGE,
    ],
    row: |obj, now| {
        let data = map_len(obj, &["data"]) + map_len(obj, &["binaryData"]);
        Row::new(vec![name(obj), Cell::Int(data), age_of(obj, now)])
    },
};

pub(super) const SECRET: Printer = Printer {
    group: "",
    kind: "Secret",
    columns: &[
        NAME,
        text(
            "Type",
            "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
        ),
        text(
            "Data",
            "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
        ),
        AGE,
    ],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["type"])),
            Cell::Int(map_len(obj, &["data"])),
            age_of(obj, now),
        ])
    },
};

pub(super) const NAMESPACE: Printer = Printer {
    group: "",
    kind: "Namespace",
    columns: &[NAME, text("Status", "The status of the namespace"), AGE],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["status", "phase"])),
            age_of(obj, now),
        ])
    },
};

pub(super) const SERVICE_ACCOUNT: Printer = Printer {
    group: "",
    kind: "ServiceAccount",
    columns: &[NAME, AGE],
    row: |obj, now| Row::new(vec![name(obj), age_of(obj, now)]),
};

pub(super) const LEASE: Printer = Printer {
    group: "coordination.k8s.io",
    kind: "Lease",
    columns: &[
        NAME,
        text(
            "Holder",
            "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
        ),
        AGE,
    ],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["spec", "holderIdentity"])),
            age_of(obj, now),
        ])
    },
};

pub(super) const SERVICE: Printer = Printer {
    group: "",
    kind: "Service",
    columns: &[
        NAME,
        text(
            "Type",
            "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types",
        ),
        text(
            "Cluster-IP",
            "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
        ),
        text(
            "External-IP",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",
        ),
        text(
            "Port(s)",
            "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
        ),
        AGE,
        wide(
            "Selector",
            "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
        ),
    ],
    row: service_row,
};

fn strings(values: &[Value]) -> Vec<&str> {
    values.iter().map(|v| v.as_str().unwrap_or("")).collect()
}

fn service_row(obj: &Object, now: Timestamp) -> Row {
    let cluster_ip = list_at(obj, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let ports: Vec<String> = list_at(obj, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("");
            match p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) {
                n if n > 0 => format!("{port}:{n}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_owned()
    } else {
        ports.join(",")
    };
    Row::new(vec![
        name(obj),
        Cell::text(str_at(obj, &["spec", "type"])),
        Cell::text(cluster_ip),
        Cell::text(external_ip(obj)),
        Cell::text(ports),
        age_of(obj, now),
        Cell::text(format_labels(at(obj, &["spec", "selector"]))),
    ])
}

/// `getServiceExternalIP`, wide.
fn external_ip(obj: &Object) -> String {
    let external = strings(list_at(obj, &["spec", "externalIPs"]));
    match str_at(obj, &["spec", "type"]) {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".to_owned(),
        "LoadBalancer" => {
            // `loadBalancerStatusStringer`: each ingress's IP, else its hostname, as a sorted set.
            let mut balancers: Vec<&str> = list_at(obj, &["status", "loadBalancer", "ingress"])
                .iter()
                .filter_map(|i| {
                    let field = |k: &str| i.get(k).and_then(Value::as_str).unwrap_or("");
                    [field("ip"), field("hostname")]
                        .into_iter()
                        .find(|s| !s.is_empty())
                })
                .collect();
            balancers.sort_unstable();
            balancers.dedup();
            match (balancers.is_empty(), external.is_empty()) {
                (true, true) => "<pending>".to_owned(),
                _ => balancers
                    .into_iter()
                    .chain(external)
                    .collect::<Vec<_>>()
                    .join(","),
            }
        }
        "ExternalName" => str_at(obj, &["spec", "externalName"]).to_owned(),
        _ => "<unknown>".to_owned(),
    }
}

pub(super) const POD: Printer = Printer {
    group: "",
    kind: "Pod",
    columns: &[
        NAME,
        text(
            "Ready",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        text(
            "Status",
            "The aggregate status of the containers in this pod.",
        ),
        text(
            "Restarts",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        wide(
            "IP",
            "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
        ),
        wide(
            "Node",
            "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
        ),
        wide(
            "Nominated Node",
            "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
        ),
        wide(
            "Readiness Gates",
            "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
        ),
    ],
    row: pod_row,
};

/// A container status's `lastState.terminated.finishedAt`.
fn last_finished(status: &Value) -> Option<Timestamp> {
    let finished = status
        .get("lastState")?
        .get("terminated")?
        .get("finishedAt")?
        .as_str()?;
    timestamp(finished)
}

/// A container state's `terminated` part.
fn terminated(status: &Value) -> Option<&Value> {
    status.get("state")?.get("terminated")
}

fn field_i64(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn field_str<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A terminated container's reason: its own, else its signal or exit code after `prefix`.
fn terminated_reason(t: &Value, prefix: &str) -> String {
    match (field_str(t, "reason"), field_i64(t, "signal")) {
        ("", 0) => format!("{prefix}ExitCode:{}", field_i64(t, "exitCode")),
        ("", signal) => format!("{prefix}Signal:{signal}"),
        (reason, _) => format!("{prefix}{reason}"),
    }
}

/// Whether a pod condition of `ty` is `True` (`None` when there is none).
fn condition_true(obj: &Object, ty: &str) -> Option<bool> {
    list_at(obj, &["status", "conditions"])
        .iter()
        .find(|c| field_str(c, "type") == ty)
        .map(|c| field_str(c, "status") == "True")
}

/// `printPod`: readiness, the aggregate status, restarts, and the wide columns.
fn pod_row(obj: &Object, now: Timestamp) -> Row {
    let phase = str_at(obj, &["status", "phase"]);
    let mut reason = match str_at(obj, &["status", "reason"]) {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    let gated = list_at(obj, &["status", "conditions"]).iter().any(|c| {
        field_str(c, "type") == "PodScheduled" && field_str(c, "reason") == "SchedulingGated"
    });
    if gated {
        reason = "SchedulingGated".to_owned();
    }
    let init_specs = list_at(obj, &["spec", "initContainers"]);
    let restartable = |name: &str| {
        init_specs
            .iter()
            .any(|c| field_str(c, "name") == name && field_str(c, "restartPolicy") == "Always")
    };
    let sidecars = init_specs
        .iter()
        .filter(|c| field_str(c, "restartPolicy") == "Always")
        .count();
    let total = list_at(obj, &["spec", "containers"]).len() + sidecars;
    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_sidecar_restart: Option<Timestamp> = None;
    let later = |a: Option<Timestamp>, b: Option<Timestamp>| a.max(b);

    let mut initializing = false;
    for (i, status) in list_at(obj, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        let name = field_str(status, "name");
        restarts += field_i64(status, "restartCount");
        last_restart = later(last_restart, last_finished(status));
        if restartable(name) {
            sidecar_restarts += field_i64(status, "restartCount");
            last_sidecar_restart = later(last_sidecar_restart, last_finished(status));
        }
        let term = terminated(status);
        let waiting = status
            .get("state")
            .and_then(|s| s.get("waiting"))
            .map(|w| field_str(w, "reason"));
        if term.is_some_and(|t| field_i64(t, "exitCode") == 0) {
            continue;
        }
        if restartable(name) && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = match (term, waiting) {
            (Some(t), _) => terminated_reason(t, "Init:"),
            (None, Some(w)) if !w.is_empty() && w != "PodInitializing" => format!("Init:{w}"),
            _ => format!("Init:{i}/{}", init_specs.len()),
        };
        initializing = true;
        break;
    }

    if !initializing || condition_true(obj, "Initialized") == Some(true) {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        let mut error_reason = String::new();
        for status in list_at(obj, &["status", "containerStatuses"]).iter().rev() {
            restarts += field_i64(status, "restartCount");
            last_restart = later(last_restart, last_finished(status));
            let state = status.get("state");
            let waiting = state
                .and_then(|s| s.get("waiting"))
                .map(|w| field_str(w, "reason"))
                .filter(|r| !r.is_empty());
            if let Some(w) = waiting {
                reason = w.to_owned();
            } else if let Some(t) = terminated(status) {
                reason = terminated_reason(t, "");
                if field_i64(t, "exitCode") != 0 {
                    error_reason.clone_from(&reason);
                }
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && state.and_then(|s| s.get("running")).is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" {
            let pod_ready = list_at(obj, &["status", "conditions"])
                .iter()
                .any(|c| field_str(c, "type") == "Ready" && field_str(c, "status") == "True");
            if has_running && pod_ready {
                reason = "Running".to_owned();
            } else if !error_reason.is_empty() {
                reason = error_reason;
            } else if has_running {
                reason = "NotReady".to_owned();
            }
        }
    }

    let deleting = at(obj, &["metadata", "deletionTimestamp"]).is_some_and(|d| !d.is_null());
    if deleting && str_at(obj, &["status", "reason"]) == "NodeLost" {
        reason = "Unknown".to_owned();
    } else if deleting && !matches!(phase, "Succeeded" | "Failed") {
        reason = "Terminating".to_owned();
    }

    let restarts_text = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", age::since(Some(t), now)),
        _ => restarts.to_string(),
    };
    let or_none = |s: &str| if s.is_empty() { "<none>" } else { s }.to_owned();
    let pod_ip = list_at(obj, &["status", "podIPs"])
        .first()
        .map_or("", |ip| field_str(ip, "ip"));
    let gates = list_at(obj, &["spec", "readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let true_gates = gates
            .iter()
            .filter(|g| condition_true(obj, field_str(g, "conditionType")) == Some(true))
            .count();
        format!("{true_gates}/{}", gates.len())
    };
    let mut row = Row::new(vec![
        name(obj),
        Cell::text(format!("{ready}/{total}")),
        Cell::text(reason),
        Cell::text(restarts_text),
        age_of(obj, now),
        Cell::text(or_none(pod_ip)),
        Cell::text(or_none(str_at(obj, &["spec", "nodeName"]))),
        Cell::text(or_none(str_at(obj, &["status", "nominatedNodeName"]))),
        Cell::text(readiness_gates),
    ]);
    let completed = |reason: &str, message| Condition {
        ty: "Completed",
        status: "True",
        reason: reason.to_owned(),
        message,
    };
    match phase {
        "Succeeded" => {
            row.conditions = vec![completed(phase, "The pod has completed successfully.")]
        }
        "Failed" => row.conditions = vec![completed(phase, "The pod failed.")],
        _ => {}
    }
    row
}

pub(super) const REPLICATION_CONTROLLER: Printer = Printer {
    group: "",
    kind: "ReplicationController",
    columns: &replicas_columns(
        "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
        "The number of ready replicas for this replication controller.",
        "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
    row: |obj, now| replicas_row(obj, now, format_labels(at(obj, &["spec", "selector"]))),
};

pub(super) const POD_TEMPLATE: Printer = Printer {
    group: "",
    kind: "PodTemplate",
    columns: &[
        NAME,
        text("Containers", "Names of each container in the template."),
        text(
            "Images",
            "Images referenced by each container in the template.",
        ),
        text("Pod Labels", "The labels for the pod template."),
    ],
    row: |obj, _| {
        let (containers, images) = container_cells(obj, &["template"]);
        Row::new(vec![
            name(obj),
            containers,
            images,
            Cell::text(format_labels(at(obj, &["template", "metadata", "labels"]))),
        ])
    },
};

pub(super) const ENDPOINTS: Printer = Printer {
    group: "",
    kind: "Endpoints",
    columns: &name_text_age(
        "Endpoints",
        "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
    ),
    row: |obj, now| name_text_age_row(obj, now, endpoints(obj)),
};

/// `formatEndpoints` of every port: the first three ready addresses (with each port, as
/// `net.JoinHostPort` writes them), `+ N more...` past them, `<none>` without subsets.
fn endpoints(obj: &Object) -> String {
    let subsets = list_at(obj, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut more = false;
    for subset in subsets {
        let addresses = subset
            .get("addresses")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let ip = |a: &Value| field_str(a, "ip").to_owned();
        let ports = subset
            .get("ports")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        // A headless service's subset may have no ports: its addresses alone.
        let port_numbers: Vec<Option<i64>> = if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(field_i64(p, "port"))).collect()
        };
        for port in port_numbers {
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(match port {
                    None => ip(address),
                    Some(port) if ip(address).contains(':') => format!("[{}]:{port}", ip(address)),
                    Some(port) => format!("{}:{port}", ip(address)),
                });
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

const NODE_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

pub(super) const NODE: Printer = Printer {
    group: "",
    kind: "Node",
    columns: &[
        NAME,
        text("Status", "The status of the node"),
        text("Roles", "The roles of the node"),
        AGE,
        text("Version", "Kubelet Version reported by the node."),
        wide("Internal-IP", NODE_ADDRESSES),
        wide("External-IP", NODE_ADDRESSES),
        wide(
            "OS-Image",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        ),
        wide(
            "Kernel-Version",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        ),
        wide(
            "Container-Runtime",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        ),
    ],
    row: node_row,
};

/// `printNode`: readiness (the last Ready condition), roles from the role labels, and the
/// node's reported system.
fn node_row(obj: &Object, now: Timestamp) -> Row {
    let ready = list_at(obj, &["status", "conditions"])
        .iter()
        .rfind(|c| field_str(c, "type") == "Ready");
    let mut status = vec![match ready {
        Some(c) if field_str(c, "status") == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if at(obj, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let mut roles: Vec<&str> = at(obj, &["metadata", "labels"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            Some(_) => None,
            None if k == "kubernetes.io/role" => v.as_str().filter(|v| !v.is_empty()),
            None => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    let roles = if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.join(",")
    };
    let info = |key: &str| str_at(obj, &["status", "nodeInfo", key]);
    let or_unknown = |s: &str| if s.is_empty() { "<unknown>" } else { s }.to_owned();
    let mut kernel = or_unknown(info("kernelVersion"));
    if !info("architecture").is_empty() {
        kernel = format!("{kernel} ({})", info("architecture"));
    }
    let address = |ty: &str| {
        list_at(obj, &["status", "addresses"])
            .iter()
            .find(|a| field_str(a, "type") == ty)
            .map_or("<none>", |a| field_str(a, "address"))
            .to_owned()
    };
    Row::new(vec![
        name(obj),
        Cell::text(status.join(",")),
        Cell::text(roles),
        age_of(obj, now),
        Cell::text(info("kubeletVersion")),
        Cell::text(address("InternalIP")),
        Cell::text(address("ExternalIP")),
        Cell::text(or_unknown(info("osImage"))),
        Cell::text(kernel),
        Cell::text(or_unknown(info("containerRuntimeVersion"))),
    ])
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    /// The cells of a pod with `status` and `spec`.
    fn pod_cells(status: Value, spec: Value) -> Vec<Cell> {
        let obj = json!({"metadata": {"name": "p"}, "spec": spec, "status": status});
        let now: Timestamp = "2026-01-01T01:00:00Z"
            .parse()
            .unwrap_or(Timestamp::UNIX_EPOCH);
        pod_row(obj.as_object().unwrap_or(&Object::new()), now).cells
    }

    #[test]
    fn a_pending_pod_without_statuses() {
        let cells = pod_cells(
            json!({"phase": "Pending"}),
            json!({"containers": [{"name": "c"}]}),
        );
        assert_eq!(
            cells[1..4],
            [Cell::text("0/1"), Cell::text("Pending"), Cell::text("0")]
        );
        assert_eq!(
            cells[5..],
            [
                Cell::text("<none>"),
                Cell::text("<none>"),
                Cell::text("<none>"),
                Cell::text("<none>")
            ]
        );
    }

    #[test]
    fn a_running_pod_with_a_restart() {
        let cells = pod_cells(
            json!({"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}], "containerStatuses": [{
                "name": "c", "ready": true, "restartCount": 2, "state": {"running": {}},
                "lastState": {"terminated": {"finishedAt": "2026-01-01T00:55:00Z"}}
            }]}),
            json!({"containers": [{"name": "c"}], "nodeName": "n1"}),
        );
        assert_eq!(
            cells[1..4],
            [
                Cell::text("1/1"),
                Cell::text("Running"),
                Cell::text("2 (5m ago)")
            ]
        );
        assert_eq!(cells[5..7], [Cell::text("10.0.0.5"), Cell::text("n1")]);
    }

    #[test]
    fn waiting_and_init_reasons() {
        let cells = pod_cells(
            json!({"phase": "Pending", "initContainerStatuses": [
                {"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}}
            ]}),
            json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
        );
        assert_eq!(cells[2], Cell::text("Init:0/1"));
        let cells = pod_cells(
            json!({"phase": "Pending", "containerStatuses": [
                {"name": "c", "state": {"waiting": {"reason": "ImagePullBackOff"}}}
            ]}),
            json!({"containers": [{"name": "c"}]}),
        );
        assert_eq!(cells[2], Cell::text("ImagePullBackOff"));
    }

    #[test]
    fn endpoints_show_three_addresses_with_their_ports() {
        let obj = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "ports": [{"port": 80}, {"port": 443}]}
        ]});
        assert_eq!(
            endpoints(obj.as_object().unwrap()),
            "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(endpoints(&Object::new()), "<none>");
    }

    #[test]
    fn nodes_print_readiness_and_roles() {
        let obj = json!({
            "metadata": {"name": "n", "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "False"}],
                       "nodeInfo": {"kernelVersion": "6.1", "architecture": "arm64"}}
        });
        let row = node_row(obj.as_object().unwrap(), Timestamp::UNIX_EPOCH);
        assert_eq!(
            row.cells[1..3],
            [
                Cell::text("NotReady,SchedulingDisabled"),
                Cell::text("control-plane,edge")
            ]
        );
        assert_eq!(row.cells[8], Cell::text("6.1 (arm64)"));
    }

    #[test]
    fn services_print_their_addresses_and_ports() {
        let obj = json!({"metadata": {"name": "s"}, "spec": {
            "type": "NodePort", "clusterIPs": ["10.0.0.1"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
            "selector": {"app": "web"}
        }});
        let row = service_row(obj.as_object().unwrap(), Timestamp::UNIX_EPOCH);
        assert_eq!(
            row.cells[1..5],
            [
                Cell::text("NodePort"),
                Cell::text("10.0.0.1"),
                Cell::text("<none>"),
                Cell::text("80:30080/TCP")
            ]
        );
        assert_eq!(row.cells[6], Cell::text("app=web"));
    }
}
