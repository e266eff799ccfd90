//! Pods in a user namespace of their own (`hostUsers: false`), as `validateHostUsers` of
//! `pkg/apis/core/validation` checks them with kube-apiserver 1.36's options: such a pod shares
//! none of the host's network, PID and IPC namespaces, and no container has volume devices.
//!
//! The options that would allow the host network (the alpha gate
//! UserNamespacesHostNetworkSupport, off by default) or volume devices are only ever granted
//! to an update of an object that already had them, which validation never let in: they are
//! not modelled. An unmasked `/proc` is allowed only here ([`super::pod_security`]); 1.36
//! does not restrict the volume types.

use recon_apimachinery::json::Value;

use super::pod_object::containers_with_paths;
use super::read::list_at;
use crate::field::{FieldError, Path};

const FORBIDDEN: &str = "when `hostUsers` is false";

/// `validateHostUsers` of the pod spec `spec` at `path`; nothing unless `hostUsers` is false.
/// Go names the PID and IPC flags by their internal field names (`spec.HostPID`).
pub(super) fn host_users(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let flag = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_bool);
    if flag("hostUsers") != Some(false) {
        return Vec::new();
    }
    let mut errors: Vec<FieldError> = [
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ]
    .into_iter()
    .filter(|(key, _)| flag(key) == Some(true))
    .map(|(_, reported)| FieldError::forbidden(path.child(reported), FORBIDDEN))
    .collect();
    // Volume devices support neither idmap mounts nor a chown of their contents.
    for (container, at) in containers_with_paths(spec, path) {
        if !list_at(Some(container), "volumeDevices").is_empty() {
            errors.push(FieldError::forbidden(at.child("volumeDevices"), FORBIDDEN));
        }
    }
    errors
}
