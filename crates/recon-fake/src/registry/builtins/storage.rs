//! storage.k8s.io/v1 (classes, CSI drivers and nodes, capacities, attachments) and
//! resource.k8s.io/v1, dynamic resource allocation (`pkg/registry/<group>/<resource>`).

use super::{builtin, reset, with_status};
use crate::registry::resource::{FieldLabels, GenerationRule, ResourceType, TypeHooks};

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
                    obj.insert("status".into(), serde_json::json!({"attached": false}));
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
            ..with_status(resource("ResourceClaim", "resourceclaims", true))
        },
        resource("ResourceClaimTemplate", "resourceclaimtemplates", true),
        generation(resource("ResourceSlice", "resourceslices", false)),
    ]
}
