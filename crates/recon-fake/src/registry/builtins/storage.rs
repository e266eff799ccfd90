//! storage.k8s.io/v1 (classes, CSI drivers and nodes, capacities, attachments) and
//! resource.k8s.io/v1, dynamic resource allocation (`pkg/registry/<group>/<resource>`).

use super::{builtin, reset, with_status};
use crate::registry::resource::{FieldLabels, GenerationRule, ResourceType};

pub(super) fn types() -> Vec<ResourceType> {
    let storage = |kind: &str, plural: &str, namespaced: bool| ResourceType {
        field_labels: FieldLabels::default_conversion(),
        ..builtin("storage.k8s.io", "v1", kind, plural, namespaced)
    };
    let resource = |kind: &str, plural: &str, namespaced: bool| ResourceType {
        generation: GenerationRule::Spec { annotations: false },
        field_labels: FieldLabels::default_conversion(),
        ..builtin("resource.k8s.io", "v1", kind, plural, namespaced)
    };
    vec![
        storage("CSIDriver", "csidrivers", false),
        storage("CSINode", "csinodes", false),
        storage("CSIStorageCapacity", "csistoragecapacities", true),
        storage("StorageClass", "storageclasses", false).short_names(&["sc"]),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            ..with_status(storage("VolumeAttachment", "volumeattachments", false))
        },
        storage("VolumeAttributesClass", "volumeattributesclasses", false).short_names(&["vac"]),
        resource("DeviceClass", "deviceclasses", false),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            ..with_status(resource("ResourceClaim", "resourceclaims", true))
        },
        resource("ResourceClaimTemplate", "resourceclaimtemplates", true),
        resource("ResourceSlice", "resourceslices", false),
    ]
}
