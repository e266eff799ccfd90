//! Volumes, claims and the storage.k8s.io kinds (pkg/printers/internalversion/printers.go:
//! `printPersistentVolume`, `printPersistentVolumeClaim`, `printVolumeAttachment`,
//! `printCSINode`, `printCSIDriver`, `printVolumeAttributesClass`;
//! access modes and classes as pkg/apis/core/helper/helpers.go writes them).

use recon_apimachinery::json::Value;

use super::super::document::Column;
use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, integer, list_at, name, str_at, text, wide};
use crate::wire::object::Object;

/// The annotation a volume's or claim's class is read from before its spec.
const BETA_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// `GetAccessModesAsString`: the modes present, abbreviated, in a fixed order.
fn access_modes(modes: &[Value]) -> String {
    let has = |mode: &str| modes.iter().any(|m| m.as_str() == Some(mode));
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| has(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The class annotation if set (even empty), else `spec.storageClassName`.
fn class(obj: &Object) -> String {
    match at(obj, &["metadata", "annotations", BETA_CLASS]).and_then(Value::as_str) {
        Some(class) => class.to_owned(),
        None => str_at(obj, &["spec", "storageClassName"]).to_owned(),
    }
}

/// A quantity as its `String()` writes it: as stored (canonical), `0` when missing.
fn quantity(obj: &Object, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_str)
        .unwrap_or("0")
        .to_owned()
}

/// The phase, or `Terminating` once deletion began.
fn phase(obj: &Object) -> String {
    let deleting = at(obj, &["metadata", "deletionTimestamp"]).is_some_and(|d| !d.is_null());
    if deleting {
        "Terminating".to_owned()
    } else {
        str_at(obj, &["status", "phase"]).to_owned()
    }
}

/// A pointer field written as is, `<unset>` when nil.
fn or_unset(obj: &Object, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_str)
        .unwrap_or("<unset>")
        .to_owned()
}

pub(super) const PERSISTENT_VOLUME: Printer = Printer {
    group: "",
    kind: "PersistentVolume",
    columns: &[
        NAME,
        text(
            "Capacity",
            "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
        ),
        text(
            "Access Modes",
            "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes",
        ),
        text(
            "Reclaim Policy",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming",
        ),
        text(
            "Status",
            "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase",
        ),
        text(
            "Claim",
            "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding",
        ),
        text("StorageClass", "StorageClass of the pv"),
        text("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
        text(
            "Reason",
            "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
        ),
        AGE,
        wide(
            "VolumeMode",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.",
        ),
    ],
    row: |obj, now| {
        let claim = match at(obj, &["spec", "claimRef"]).filter(|c| c.is_object()) {
            Some(c) => {
                let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
                format!("{}/{}", field("namespace"), field("name"))
            }
            None => String::new(),
        };
        Row::new(vec![
            name(obj),
            Cell::text(quantity(obj, &["spec", "capacity", "storage"])),
            Cell::text(access_modes(list_at(obj, &["spec", "accessModes"]))),
            Cell::text(str_at(obj, &["spec", "persistentVolumeReclaimPolicy"])),
            Cell::text(phase(obj)),
            Cell::text(claim),
            Cell::text(class(obj)),
            Cell::text(or_unset(obj, &["spec", "volumeAttributesClassName"])),
            Cell::text(str_at(obj, &["status", "reason"])),
            age_of(obj, now),
            Cell::text(or_unset(obj, &["spec", "volumeMode"])),
        ])
    },
};

pub(super) const PERSISTENT_VOLUME_CLAIM: Printer = Printer {
    group: "",
    kind: "PersistentVolumeClaim",
    columns: &[
        NAME,
        text(
            "Status",
            "phase represents the current phase of PersistentVolumeClaim.",
        ),
        text(
            "Volume",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
        ),
        text(
            "Capacity",
            "capacity represents the actual resources of the underlying volume.",
        ),
        text(
            "Access Modes",
            "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
        ),
        text("StorageClass", "StorageClass of the pvc"),
        text("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
        AGE,
        wide(
            "VolumeMode",
            "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
        ),
    ],
    row: |obj, now| {
        let volume = str_at(obj, &["spec", "volumeName"]);
        // Capacity and access modes are the bound volume's, shown once it is bound.
        let (capacity, modes) = if volume.is_empty() {
            (String::new(), String::new())
        } else {
            (
                quantity(obj, &["status", "capacity", "storage"]),
                access_modes(list_at(obj, &["status", "accessModes"])),
            )
        };
        Row::new(vec![
            name(obj),
            Cell::text(phase(obj)),
            Cell::text(volume),
            Cell::text(capacity),
            Cell::text(modes),
            Cell::text(class(obj)),
            Cell::text(or_unset(obj, &["spec", "volumeAttributesClassName"])),
            age_of(obj, now),
            Cell::text(or_unset(obj, &["spec", "volumeMode"])),
        ])
    },
};

/// A boolean column.
const fn boolean(name: &'static str, description: &'static str) -> Column<'static> {
    Column::new(name, "boolean", "", description, 0)
}

/// The bool at `path`, `default` when unset.
fn bool_at(obj: &Object, path: &[&str], default: bool) -> Cell {
    Cell::Bool(at(obj, path).and_then(Value::as_bool).unwrap_or(default))
}

pub(super) const VOLUME_ATTACHMENT: Printer = Printer {
    group: "storage.k8s.io",
    kind: "VolumeAttachment",
    columns: &[
        NAME,
        Column::new(
            "Attacher",
            "string",
            "name",
            "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
            0,
        ),
        text(
            "PV",
            "persistentVolumeName represents the name of the persistent volume to attach.",
        ),
        text(
            "Node",
            "nodeName represents the node that the volume should be attached to.",
        ),
        boolean(
            "Attached",
            "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
        ),
        AGE,
    ],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["spec", "attacher"])),
            Cell::text(str_at(obj, &["spec", "source", "persistentVolumeName"])),
            Cell::text(str_at(obj, &["spec", "nodeName"])),
            bool_at(obj, &["status", "attached"], false),
            age_of(obj, now),
        ])
    },
};

pub(super) const CSI_NODE: Printer = Printer {
    group: "storage.k8s.io",
    kind: "CSINode",
    columns: &[
        NAME,
        integer(
            "Drivers",
            "Drivers indicates the number of CSI drivers registered on the node",
        ),
        AGE,
    ],
    row: |obj, now| {
        let drivers = list_at(obj, &["spec", "drivers"]).len();
        Row::new(vec![
            name(obj),
            Cell::Int(i64::try_from(drivers).unwrap_or(i64::MAX)),
            age_of(obj, now),
        ])
    },
};

pub(super) const CSI_DRIVER: Printer = Printer {
    group: "storage.k8s.io",
    kind: "CSIDriver",
    columns: &[
        NAME,
        boolean(
            "AttachRequired",
            "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.",
        ),
        boolean(
            "PodInfoOnMount",
            "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.",
        ),
        boolean(
            "StorageCapacity",
            "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.",
        ),
        text(
            "TokenRequests",
            "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.",
        ),
        boolean(
            "RequiresRepublish",
            "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.",
        ),
        text(
            "Modes",
            "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.",
        ),
        AGE,
    ],
    row: |obj, now| {
        let joined = |path: &[&str], field: Option<&str>| {
            list_at(obj, path)
                .iter()
                .map(|v| match field {
                    Some(f) => v.get(f).and_then(Value::as_str).unwrap_or(""),
                    None => v.as_str().unwrap_or(""),
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        // Audiences of the token requests, `<unset>` when there are none at all.
        let tokens = match at(obj, &["spec", "tokenRequests"]).filter(|t| t.is_array()) {
            Some(_) => joined(&["spec", "tokenRequests"], Some("audience")),
            None => "<unset>".to_owned(),
        };
        let modes = match joined(&["spec", "volumeLifecycleModes"], None) {
            m if m.is_empty() => "<none>".to_owned(),
            m => m,
        };
        Row::new(vec![
            name(obj),
            bool_at(obj, &["spec", "attachRequired"], true),
            bool_at(obj, &["spec", "podInfoOnMount"], false),
            bool_at(obj, &["spec", "storageCapacity"], false),
            Cell::text(tokens),
            bool_at(obj, &["spec", "requiresRepublish"], false),
            Cell::text(modes),
            age_of(obj, now),
        ])
    },
};

pub(super) const VOLUME_ATTRIBUTES_CLASS: Printer = Printer {
    group: "storage.k8s.io",
    kind: "VolumeAttributesClass",
    columns: &[
        NAME,
        text(
            "DriverName",
            "Name of the CSI driver This field is immutable.",
        ),
        AGE,
    ],
    row: |obj, now| {
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["driverName"])),
            age_of(obj, now),
        ])
    },
};

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn access_modes_are_abbreviated_in_order() {
        let modes = json!(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]);
        assert_eq!(access_modes(modes.as_array().unwrap()), "RWO,RWX");
        assert_eq!(access_modes(&[]), "");
    }

    #[test]
    fn a_claims_class_comes_from_the_beta_annotation_first() {
        let obj = json!({"metadata": {"annotations": {BETA_CLASS: ""}},
                         "spec": {"storageClassName": "fast"}});
        assert_eq!(class(obj.as_object().unwrap()), "");
        let obj = json!({"spec": {"storageClassName": "fast"}});
        assert_eq!(class(obj.as_object().unwrap()), "fast");
    }
}
