//! What a pod's operating system (`spec.os.name`) allows (`pkg/apis/core/validation`:
//! `validateOS`, `validateLinux`, `validateWindows`, and `validateContainerStatusUsers` for
//! the user a container's status reports).
//!
//! A linux pod may not carry Windows options; a windows pod may not set the Linux-only fields
//! of its security contexts, nor `hostUsers`, `hostPID` or `hostIPC`. "Set" is Go's non-nil: a
//! field present in the request, even `false` or `{}`, except where Go tests a plain bool
//! (`hostPID`, `hostIPC`) or a length (`sysctls`). Not modelled: an empty list is dropped when
//! the object is decoded, so `supplementalGroups: []`, which Go's non-nil slice refuses on a
//! windows pod, is accepted here.

use recon_apimachinery::json::Value;

use super::pod_object::containers_with_paths;
use super::pod_security::{id_error, id_in_range};
use super::read::{is_set, list_at, str_at};
use crate::field::{FieldError, Path};

const SUPPORTED: &[&str] = &["linux", "windows"];
const WINDOWS: &str = "cannot be set for a windows pod";
const LINUX: &str = "windows options cannot be set for a linux pod";

/// The pod security context fields `validateWindows` forbids, in its order, with where each
/// is reported: the internal security context also holds the pod's host namespace flags,
/// which Go reports at the spec's level.
enum PodField {
    /// `spec.securityContext.<key>`, forbidden when set.
    Context(&'static str),
    /// `spec.<key>`, forbidden when set (a pointer in Go).
    Spec(&'static str),
    /// `spec.<key>`, forbidden when true (a plain bool in Go).
    SpecFlag(&'static str),
    /// `spec.securityContext.<key>`, forbidden when not empty.
    ContextList(&'static str),
}

const WINDOWS_POD_FIELDS: &[PodField] = &[
    PodField::Context("appArmorProfile"),
    PodField::Context("seLinuxOptions"),
    PodField::Spec("hostUsers"),
    PodField::SpecFlag("hostPID"),
    PodField::SpecFlag("hostIPC"),
    PodField::Context("seccompProfile"),
    PodField::Context("fsGroup"),
    PodField::Context("fsGroupChangePolicy"),
    PodField::ContextList("sysctls"),
    PodField::Spec("shareProcessNamespace"),
    PodField::Context("runAsUser"),
    PodField::Context("runAsGroup"),
    PodField::Context("supplementalGroups"),
    PodField::Context("supplementalGroupsPolicy"),
    PodField::Context("seLinuxChangePolicy"),
];

/// The container security context fields `validateWindows` forbids, in its order.
const WINDOWS_CONTAINER_FIELDS: &[&str] = &[
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
];

/// The end of `ValidatePodSpec` for a pod spec with an `os`: `validateOS` (a name, one of
/// linux and windows), then, only when it passes, `validateLinux` or `validateWindows`.
/// `spec_path` is the spec's path; the OS errors are under its `os`.
pub(super) fn validate(spec: Option<&Value>, spec_path: &Path) -> Vec<FieldError> {
    let Some(os) = spec.and_then(|s| s.get("os")).filter(|o| o.is_object()) else {
        return Vec::new();
    };
    let os_path = spec_path.child("os");
    match str_at(Some(os), "name") {
        "" => vec![FieldError::required(os_path.child("name"), "")],
        "linux" => linux(spec, spec_path),
        "windows" => windows(spec, spec_path),
        other => vec![FieldError::not_supported(os_path, other, SUPPORTED)],
    }
}

/// `validateLinux`: no Windows options, neither the pod's nor any container's.
fn linux(spec: Option<&Value>, spec_path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if is_set(
        spec.and_then(|s| s.get("securityContext")),
        "windowsOptions",
    ) {
        errors.push(FieldError::forbidden(
            spec_path.child("securityContext").child("windowsOptions"),
            LINUX,
        ));
    }
    for (container, path) in containers_with_paths(spec, spec_path) {
        if is_set(container.get("securityContext"), "windowsOptions") {
            errors.push(FieldError::forbidden(
                path.child("securityContext").child("windowsOptions"),
                LINUX,
            ));
        }
    }
    errors
}

/// `validateWindows`: none of the Linux-only fields of the pod's security context, then of
/// each container's (init, regular, ephemeral).
fn windows(spec: Option<&Value>, spec_path: &Path) -> Vec<FieldError> {
    let sc = spec.and_then(|s| s.get("securityContext"));
    let sc_path = spec_path.child("securityContext");
    let mut errors = Vec::new();
    for field in WINDOWS_POD_FIELDS {
        let (forbidden, path) = match field {
            PodField::Context(key) => (is_set(sc, key), sc_path.child(key)),
            PodField::Spec(key) => (is_set(spec, key), spec_path.child(key)),
            PodField::SpecFlag(key) => (
                spec.and_then(|s| s.get(*key)).and_then(Value::as_bool) == Some(true),
                spec_path.child(key),
            ),
            PodField::ContextList(key) => (!list_at(sc, key).is_empty(), sc_path.child(key)),
        };
        if forbidden {
            errors.push(FieldError::forbidden(path, WINDOWS));
        }
    }
    for (container, path) in containers_with_paths(spec, spec_path) {
        let sc = container.get("securityContext");
        let sc_path = path.child("securityContext");
        for key in WINDOWS_CONTAINER_FIELDS {
            if is_set(sc, key) {
                errors.push(FieldError::forbidden(sc_path.child(key), WINDOWS));
            }
        }
    }
    errors
}

/// `validateContainerStatusUsers` of the statuses at `path`: the user a container runs as
/// (`user.linux`) may not be reported for a windows pod; for a pod of any other OS (linux
/// when unset) its user, group and supplemental group IDs are valid IDs.
pub(super) fn container_status_users(
    statuses: &[Value],
    spec: Option<&Value>,
    path: &Path,
) -> Vec<FieldError> {
    let os = spec
        .and_then(|s| s.get("os"))
        .filter(|o| o.is_object())
        .map_or("linux", |os| str_at(Some(os), "name"));
    let mut errors = Vec::new();
    for (i, status) in statuses.iter().enumerate() {
        let Some(user) = status.get("user").filter(|u| !u.is_null()) else {
            continue;
        };
        let linux_path = path.index(i).child("user").child("linux");
        match os {
            "windows" if is_set(Some(user), "linux") => {
                errors.push(FieldError::forbidden(linux_path, WINDOWS));
            }
            "linux" => errors.extend(linux_container_user(
                user.get("linux").filter(|l| !l.is_null()),
                &linux_path,
            )),
            _ => {}
        }
    }
    errors
}

/// `validateLinuxContainerUser`: uid, gid and each supplemental group a valid ID (`uid` and
/// `gid` are plain integers in Go, so an absent one is 0 and valid).
fn linux_container_user(user: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let Some(user) = user else {
        return Vec::new();
    };
    let u = Some(user);
    let mut errors: Vec<FieldError> = ["uid", "gid"]
        .into_iter()
        .filter_map(|key| id_in_range(u, key, path))
        .collect();
    let groups = path.child("supplementalGroups");
    for (i, gid) in list_at(u, "supplementalGroups").iter().enumerate() {
        errors.extend(id_error(gid.as_i64(), &groups.index(i)));
    }
    errors
}
