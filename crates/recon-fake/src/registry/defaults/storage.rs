//! storage.k8s.io (`pkg/apis/storage/v1/defaults.go`) and resource.k8s.io
//! (`pkg/apis/resource/v1/defaults.go`).

use recon_apimachinery::json;

use super::{default_nil, default_zero, field, field_or_new, items};
use crate::wire::object::Object;

/// `SetDefaults_StorageClass`.
pub(super) fn storage_class(obj: &mut Object) {
    default_nil(obj, "reclaimPolicy", "Delete");
    default_nil(obj, "volumeBindingMode", "Immediate");
}

/// `SetDefaults_CSIDriver`.
pub(super) fn csi_driver(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_nil(spec, "attachRequired", true);
    default_nil(spec, "podInfoOnMount", false);
    default_nil(spec, "storageCapacity", false);
    default_nil(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
    let no_modes = spec
        .get("volumeLifecycleModes")
        .and_then(|m| m.as_array())
        .is_none_or(|m| m.is_empty());
    if no_modes {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
    default_nil(spec, "requiresRepublish", false);
    default_nil(spec, "seLinuxMount", false);
}

/// `SetDefaults_ExactDeviceRequest` and `SetDefaults_DeviceSubRequest` of each request of a
/// claim's spec: one device unless the request says how many; and the generated default of
/// their tolerations' operator, `Equal`.
pub(super) fn resource_claim_spec(spec: &mut Object) {
    let Some(devices) = field(spec, "devices") else {
        return;
    };
    for request in items(devices, "requests") {
        if let Some(exactly) = field(request, "exactly") {
            device_count(exactly);
            toleration_operators(exactly);
        }
        for sub in items(request, "firstAvailable") {
            device_count(sub);
            toleration_operators(sub);
        }
    }
}

/// The tolerations of an allocated claim's results, their operator `Equal` by default
/// (`SetObjectDefaults_ResourceClaim`).
pub(super) fn resource_claim_status(status: &mut Object) {
    let Some(devices) = field(status, "allocation").and_then(|a| field(a, "devices")) else {
        return;
    };
    for result in items(devices, "results") {
        toleration_operators(result);
    }
}

fn toleration_operators(owner: &mut Object) {
    for toleration in items(owner, "tolerations") {
        default_zero(toleration, "operator", "Equal");
    }
}

fn device_count(request: &mut Object) {
    default_zero(request, "allocationMode", "ExactCount");
    if request.get("allocationMode").and_then(|m| m.as_str()) == Some("ExactCount") {
        default_zero(request, "count", 1);
    }
}
