//! storage.k8s.io/v1 (classes, CSI drivers and nodes, capacities, attachments) and
//! resource.k8s.io/v1, dynamic resource allocation (`pkg/registry/<group>/<resource>`).

use recon_apimachinery::json::{Map, Value};

use super::{builtin, reset, with_status};
use crate::registry::resource::{
    FieldLabels, GenerationRule, ResourceType, TypeHooks, UnsupportedField,
};

pub(super) fn types() -> Vec<ResourceType> {
    // The storages of these two groups answer a delete with the object (but capacities').
    let storage = |kind: &str, plural: &str, namespaced: bool| ResourceType {
        field_labels: FieldLabels::default_conversion(),
        delete_returns_object: true,
        ..builtin("storage.k8s.io", "v1", kind, plural, namespaced)
    };
    let resource = |kind: &str, plural: &str, namespaced: bool| ResourceType {
        field_labels: FieldLabels::default_conversion(),
        delete_returns_object: true,
        ..builtin("resource.k8s.io", "v1", kind, plural, namespaced)
    };
    // Device classes and slices count generations of their `spec`; claims do not.
    let generation = |t: ResourceType| ResourceType {
        generation: GenerationRule::Spec { annotations: false },
        ..t
    };
    vec![
        storage("CSIDriver", "csidrivers", false),
        storage("CSINode", "csinodes", false),
        ResourceType {
            delete_returns_object: false,
            ..storage("CSIStorageCapacity", "csistoragecapacities", true)
        },
        storage("StorageClass", "storageclasses", false).short_names(&["sc"]),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            // `volumeAttachmentStrategy.PrepareForCreate`: the status starts as its zero value.
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert(
                        "status".into(),
                        recon_apimachinery::json!({"attached": false}),
                    );
                }),
                ..TypeHooks::default()
            },
            ..with_status(storage("VolumeAttachment", "volumeattachments", false))
        },
        ResourceType {
            hooks: TypeHooks {
                // The `StorageObjectInUseProtection` admission plugin's finalizer.
                prepare_create: Some(|obj| {
                    super::add_finalizer(obj, "kubernetes.io/vac-protection");
                }),
                ..TypeHooks::default()
            },
            ..storage("VolumeAttributesClass", "volumeattributesclasses", false)
                .short_names(&["vac"])
        },
        generation(resource("DeviceClass", "deviceclasses", false)),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            // `resourceclaimStrategy.PrepareForCreate`: the status starts as its zero value.
            hooks: TypeHooks {
                prepare_create: Some(|obj| {
                    obj.insert("status".into(), recon_apimachinery::json!({}));
                }),
                prepare_status_update: Some(crate::registry::validation::drop_deallocated_devices),
                ..TypeHooks::default()
            },
            ..with_status(resource("ResourceClaim", "resourceclaims", true))
        },
        resource("ResourceClaimTemplate", "resourceclaimtemplates", true),
        ResourceType {
            hooks: TypeHooks {
                prepare_create: Some(|obj| drop_alpha_device_fields(obj, None)),
                prepare_update: Some(|new, old| drop_alpha_device_fields(new, Some(old))),
                stamp: Some(stamp_taint_times),
                ..TypeHooks::default()
            },
            // pkg/apis/resource/v1/conversion.go: a slice is selected by its node and driver,
            // not by a namespace.
            field_labels: FieldLabels {
                no_namespace: true,
                unsupported: UnsupportedField::NotSupportedFor(
                    "resource.k8s.io/v1, Kind=ResourceSlice",
                ),
                ..FieldLabels::with(&[
                    ("spec.nodeName", &["spec", "nodeName"]),
                    ("spec.driver", &["spec", "driver"]),
                ])
            },
            ..generation(resource("ResourceSlice", "resourceslices", false))
        },
    ]
}

/// `SetDefaults_DeviceTaint` (`pkg/apis/resource/v1/defaults.go`): a device taint without
/// `timeAdded` was added now (the decoder's clock, whole seconds).
fn stamp_taint_times(obj: &mut Map, _old: Option<&Map>, now: &Value) {
    let devices = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("devices"))
        .and_then(Value::as_array_mut);
    for device in devices.into_iter().flatten() {
        let taints = device.get_mut("taints").and_then(Value::as_array_mut);
        for taint in taints
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if taint.get("timeAdded").is_none_or(Value::is_null) {
                taint.insert("timeAdded".into(), now.clone());
            }
        }
    }
}

/// The list-typed attributes of a device (`DRAListTypeAttributes`, alpha and off in 1.36).
const LIST_ATTRIBUTES: [&str; 4] = ["bools", "ints", "strings", "versions"];

/// `dropDisableDRAListTypeAttributesFields` and `dropDisabledDRANodeAllocatableResourcesFields`
/// (pkg/registry/resource/resourceslice/strategy.go): with their alpha gates off, a slice's
/// devices lose list-typed attributes and node allocatable resource mappings, unless the
/// stored slice already uses them.
fn drop_alpha_device_fields(obj: &mut Map, old: Option<&Map>) {
    let devices_of = |o: &Map| -> Vec<Value> {
        o.get("spec")
            .and_then(|s| s.get("devices"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let old_devices = old.map(devices_of).unwrap_or_default();
    let lists_in_use = old_devices.iter().any(|d| {
        d.get("attributes")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .any(|(_, a)| LIST_ATTRIBUTES.iter().any(|k| a.get(*k).is_some()))
    });
    let mappings_in_use = old_devices.iter().any(|d| {
        d.get("nodeAllocatableResourceMappings")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    });
    let devices = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("devices"))
        .and_then(Value::as_array_mut);
    for device in devices
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if !mappings_in_use {
            device.remove("nodeAllocatableResourceMappings");
        }
        if lists_in_use {
            continue;
        }
        let attributes = device.get_mut("attributes").and_then(Value::as_object_mut);
        for attribute in attributes
            .into_iter()
            .flat_map(|a| a.values_mut())
            .filter_map(Value::as_object_mut)
        {
            for key in LIST_ATTRIBUTES {
                attribute.remove(key);
            }
        }
    }
}
