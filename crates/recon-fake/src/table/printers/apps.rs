//! The apps group's printers (pkg/printers/internalversion/printers.go: `printDeployment`,
//! `printReplicaSet`, `printStatefulSet`, `printDaemonSet`, `printControllerRevision`).

use super::super::document::{Cell, Row};
use super::{
    AGE, CONTAINERS, IMAGES, NAME, Printer, age_of, at, container_cells, format_label_selector,
    format_labels, int_at, integer, label_selector, list_at, name, replicas_columns, replicas_row,
    text, wide,
};

pub(super) const REPLICA_SET: Printer = Printer {
    group: "apps",
    kind: "ReplicaSet",
    columns: &replicas_columns(
        "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
        "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
        "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
    row: |obj, now| {
        replicas_row(
            obj,
            now,
            format_label_selector(at(obj, &["spec", "selector"])),
        )
    },
};

pub(super) const STATEFUL_SET: Printer = Printer {
    group: "apps",
    kind: "StatefulSet",
    columns: &[
        NAME,
        text("Ready", "Number of the pod with ready state"),
        AGE,
        CONTAINERS,
        IMAGES,
    ],
    row: |obj, now| {
        let (containers, images) = container_cells(obj, &["spec", "template"]);
        Row::new(vec![
            name(obj),
            Cell::text(format!(
                "{}/{}",
                int_at(obj, &["status", "readyReplicas"]),
                int_at(obj, &["spec", "replicas"])
            )),
            age_of(obj, now),
            containers,
            images,
        ])
    },
};

pub(super) const DAEMON_SET: Printer = Printer {
    group: "apps",
    kind: "DaemonSet",
    columns: &[
        NAME,
        integer(
            "Desired",
            "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
        ),
        integer(
            "Current",
            "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
        ),
        integer(
            "Ready",
            "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
        ),
        integer(
            "Up-to-date",
            "The total number of nodes that are running updated daemon pod",
        ),
        integer(
            "Available",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
        ),
        text(
            "Node Selector",
            "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        wide(
            "Selector",
            "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        ),
    ],
    row: |obj, now| {
        let (containers, images) = container_cells(obj, &["spec", "template"]);
        let status = |key: &str| Cell::Int(int_at(obj, &["status", key]));
        Row::new(vec![
            name(obj),
            status("desiredNumberScheduled"),
            status("currentNumberScheduled"),
            status("numberReady"),
            status("updatedNumberScheduled"),
            status("numberAvailable"),
            Cell::text(format_labels(at(
                obj,
                &["spec", "template", "spec", "nodeSelector"],
            ))),
            age_of(obj, now),
            containers,
            images,
            Cell::text(format_label_selector(at(obj, &["spec", "selector"]))),
        ])
    },
};

pub(super) const DEPLOYMENT: Printer = Printer {
    group: "apps",
    kind: "Deployment",
    columns: &[
        NAME,
        text("Ready", "Number of the pod with ready state"),
        text(
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
        ),
        text(
            "Available",
            "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        wide(
            "Selector",
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
        ),
    ],
    row: |obj, now| {
        let (containers, images) = container_cells(obj, &["spec", "template"]);
        Row::new(vec![
            name(obj),
            Cell::text(format!(
                "{}/{}",
                int_at(obj, &["status", "readyReplicas"]),
                int_at(obj, &["spec", "replicas"])
            )),
            Cell::Int(int_at(obj, &["status", "updatedReplicas"])),
            Cell::Int(int_at(obj, &["status", "availableReplicas"])),
            age_of(obj, now),
            containers,
            images,
            Cell::text(
                label_selector(at(obj, &["spec", "selector"]))
                    .unwrap_or_else(|| "<invalid>".to_owned()),
            ),
        ])
    },
};

pub(super) const CONTROLLER_REVISION: Printer = Printer {
    group: "apps",
    kind: "ControllerRevision",
    columns: &[
        NAME,
        text("Controller", "Controller of the object"),
        text(
            "Revision",
            "Revision indicates the revision of the state represented by Data.",
        ),
        AGE,
    ],
    row: |obj, now| {
        // The controlling owner as `kind.group/name`, lowercased (`formatResourceName`).
        let controller = list_at(obj, &["metadata", "ownerReferences"])
            .iter()
            .find(|o| {
                o.get("controller")
                    .and_then(recon_apimachinery::json::Value::as_bool)
                    == Some(true)
            })
            .map_or_else(
                || "<none>".to_owned(),
                |o| {
                    let field = |k: &str| {
                        o.get(k)
                            .and_then(recon_apimachinery::json::Value::as_str)
                            .unwrap_or("")
                    };
                    let group = match field("apiVersion").split_once('/') {
                        Some((group, _)) => group,
                        None => "",
                    };
                    let kind = match (field("kind"), group) {
                        ("", "") => return field("name").to_owned(),
                        (kind, "") => kind.to_owned(),
                        (kind, group) => format!("{kind}.{group}"),
                    };
                    format!("{}/{}", kind.to_lowercase(), field("name"))
                },
            );
        Row::new(vec![
            name(obj),
            Cell::text(controller),
            Cell::Int(int_at(obj, &["revision"])),
            age_of(obj, now),
        ])
    },
};

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn deployments_print_replicas_and_template() {
        let obj = json!({
            "metadata": {"name": "d"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"spec": {"containers": [
                        {"name": "a", "image": "i:1"}, {"name": "b", "image": "i:2"}]}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 2}
        });
        let row = (DEPLOYMENT.row)(obj.as_object().unwrap(), jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(
            row.cells[1..4],
            [Cell::text("1/3"), Cell::Int(2), Cell::Int(0)]
        );
        assert_eq!(
            row.cells[5..],
            [
                Cell::text("a,b"),
                Cell::text("i:1,i:2"),
                Cell::text("app=d")
            ]
        );
    }
}
