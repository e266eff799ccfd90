//! Volumes and claims (pkg/printers/internalversion/printers.go: `printPersistentVolume`,
//! `printPersistentVolumeClaim`; access modes and classes as pkg/apis/core/helper/helpers.go
//! writes them).

use serde_json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, list_at, name, str_at, text, wide};
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
