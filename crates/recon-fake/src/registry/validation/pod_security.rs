//! Security contexts of pods and containers (`pkg/apis/core/validation/validation.go`:
//! `validatePodSpecSecurityContext`, `ValidateSecurityContext` and the profile and sysctl
//! checks they share).
//!
//! Checked: user and group ID ranges, sysctl names (and namespaced ones beside `hostNetwork` or
//! `hostIPC`), `shareProcessNamespace` beside `hostPID`, the fsGroup change, supplemental
//! groups and SELinux change policies, seccomp and AppArmor profile types with their localhost
//! profiles, the proc mount type, and privilege escalation turned off beside privileged or
//! `CAP_SYS_ADMIN`, and the Windows options ([`super::windows_options`]). Not checked: the
//! length limit of AppArmor localhost profiles. `runAsNonRoot` beside
//! `runAsUser: 0` is not refused by the API server (the kubelet refuses to start such a
//! container), so it is not checked here either.

use std::collections::HashSet;

use recon_apimachinery::json::Value;

use super::pod::{invalid_int, underscored_label};
use super::read::{int_at, is_set, list_at, str_at};
use super::windows_options;
use crate::field::{BadValue, ErrorType, FieldError, Path};

/// `validation.InclusiveRangeError(0, math.MaxInt32)`, the message of `IsValidUserID` and
/// `IsValidGroupID`.
const ID_RANGE: &str = "must be between 0 and 2147483647, inclusive";

/// `IsValidUserID` / `IsValidGroupID` of the integer at `key` of `v`, when it is set.
pub(super) fn id_in_range(v: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    id_error(int_at(v, key), &path.child(key))
}

/// `IsValidUserID` / `IsValidGroupID` of `id`, when there is one, reported at `path`.
pub(super) fn id_error(id: Option<i64>, path: &Path) -> Option<FieldError> {
    id.filter(|id| !(0..=i64::from(i32::MAX)).contains(id))
        .map(|id| invalid_int(path, id, ID_RANGE))
}

/// `validatePodSpecSecurityContext` of the pod spec `spec`: IDs (fsGroup, runAsUser,
/// runAsGroup, supplemental groups), one process namespace beside the host's, sysctls, the
/// fsGroup change policy, the seccomp and AppArmor profiles, the supplemental groups and
/// SELinux change policies. The internal security context Go checks also holds the pod's host
/// namespace flags (`hostNetwork`, `hostPID`, ...), so it is never nil and these are read from
/// the spec.
pub(super) fn pod_security_context(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let sc = spec
        .and_then(|s| s.get("securityContext"))
        .filter(|sc| sc.is_object());
    let host = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_bool) == Some(true);
    let mut errors: Vec<FieldError> = ["fsGroup", "runAsUser", "runAsGroup"]
        .into_iter()
        .filter_map(|key| id_in_range(sc, key, path))
        .collect();
    let groups_path = path.child("supplementalGroups");
    for (i, gid) in list_at(sc, "supplementalGroups").iter().enumerate() {
        errors.extend(id_error(gid.as_i64(), &groups_path.index(i)));
    }
    if host("shareProcessNamespace") && host("hostPID") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("shareProcessNamespace"),
            BadValue::Raw("true".to_owned()),
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    errors.extend(sysctls(
        list_at(sc, "sysctls"),
        host("hostNetwork"),
        host("hostIPC"),
        &path.child("sysctls"),
    ));
    errors.extend(policy(
        sc,
        "fsGroupChangePolicy",
        &["Always", "OnRootMismatch"],
        path,
    ));
    errors.extend(seccomp_profile(
        sc.and_then(|sc| sc.get("seccompProfile")),
        &path.child("seccompProfile"),
    ));
    errors.extend(windows_options::security_context_options(
        sc.and_then(|sc| sc.get("windowsOptions")),
        &path.child("windowsOptions"),
    ));
    errors.extend(app_armor_profile(
        sc.and_then(|sc| sc.get("appArmorProfile")),
        &path.child("appArmorProfile"),
    ));
    errors.extend(policy(
        sc,
        "supplementalGroupsPolicy",
        &["Merge", "Strict"],
        path,
    ));
    // validateSELinuxChangePolicy: with `AllowOnlyRecursiveSELinuxChangePolicy`, as the server
    // decides on create, only Recursive.
    errors.extend(policy(sc, "seLinuxChangePolicy", &["Recursive"], path));
    errors
}

/// `validateFSGroupChangePolicy`, `validateSupplementalGroupsPolicy`: the policy at `key` of
/// `sc`, when set, is one of `supported`.
fn policy(sc: Option<&Value>, key: &str, supported: &[&str], path: &Path) -> Option<FieldError> {
    let value = str_at(sc, key);
    (is_set(sc, key) && !supported.contains(&value))
        .then(|| FieldError::not_supported(path.child(key), value, supported))
}

/// `ValidateSecurityContext` of a container: runAsUser and runAsGroup, the proc mount, the
/// seccomp profile, privilege escalation, the AppArmor profile. (`privileged` is allowed: the
/// API server runs with `--allow-privileged`.)
pub(super) fn container_security_context(
    sc: Option<&Value>,
    host_users: bool,
    path: &Path,
) -> Vec<FieldError> {
    let Some(sc_value) = sc.filter(|sc| sc.is_object()) else {
        return Vec::new();
    };
    let mut errors: Vec<FieldError> = ["runAsUser", "runAsGroup"]
        .into_iter()
        .filter_map(|key| id_in_range(sc, key, path))
        .collect();
    // ValidateProcMountType, then Unmasked needs a user namespace of its own.
    if is_set(sc, "procMount") {
        let proc_mount = str_at(sc, "procMount");
        let proc_path = path.child("procMount");
        if !["Default", "Unmasked"].contains(&proc_mount) {
            errors.push(FieldError::not_supported(
                &proc_path,
                proc_mount,
                &["Default", "Unmasked"],
            ));
        }
        if host_users && proc_mount == "Unmasked" {
            errors.push(FieldError::invalid(
                proc_path,
                proc_mount,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    errors.extend(seccomp_profile(
        sc.and_then(|sc| sc.get("seccompProfile")),
        &path.child("seccompProfile"),
    ));
    let flag = |key: &str| sc.and_then(|sc| sc.get(key)).and_then(Value::as_bool);
    if flag("allowPrivilegeEscalation") == Some(false) {
        if flag("privileged") == Some(true) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path,
                BadValue::Raw(go_security_context(sc_value)),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let added = list_at(sc.and_then(|sc| sc.get("capabilities")), "add");
        for _ in added.iter().filter(|c| c.as_str() == Some("CAP_SYS_ADMIN")) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path,
                BadValue::Raw(go_security_context(sc_value)),
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    errors.extend(windows_options::security_context_options(
        sc.and_then(|sc| sc.get("windowsOptions")),
        &path.child("windowsOptions"),
    ));
    errors.extend(app_armor_profile(
        sc.and_then(|sc| sc.get("appArmorProfile")),
        &path.child("appArmorProfile"),
    ));
    errors
}

/// A container's security context as `field.Invalid` prints it: the JSON of the internal Go
/// struct, which has no JSON tags, so Go's field names in declaration order, unset pointers
/// `null`.
fn go_security_context(sc: &Value) -> String {
    let get = |key: &str| sc.get(key).filter(|v| !v.is_null());
    let scalar = |key: &str| get(key).map_or_else(|| "null".to_owned(), Value::to_string);
    let fields = [
        (
            "Capabilities",
            go_struct(
                get("capabilities"),
                &[("Add", "add"), ("Drop", "drop")],
                false,
            ),
        ),
        ("Privileged", scalar("privileged")),
        (
            "SELinuxOptions",
            go_struct(
                get("seLinuxOptions"),
                &[
                    ("User", "user"),
                    ("Role", "role"),
                    ("Type", "type"),
                    ("Level", "level"),
                ],
                true,
            ),
        ),
        (
            "WindowsOptions",
            go_struct(
                get("windowsOptions"),
                &[
                    ("GMSACredentialSpecName", "gmsaCredentialSpecName"),
                    ("GMSACredentialSpec", "gmsaCredentialSpec"),
                    ("RunAsUserName", "runAsUserName"),
                    ("HostProcess", "hostProcess"),
                ],
                false,
            ),
        ),
        ("RunAsUser", scalar("runAsUser")),
        ("RunAsGroup", scalar("runAsGroup")),
        ("RunAsNonRoot", scalar("runAsNonRoot")),
        ("ReadOnlyRootFilesystem", scalar("readOnlyRootFilesystem")),
        (
            "AllowPrivilegeEscalation",
            scalar("allowPrivilegeEscalation"),
        ),
        ("ProcMount", scalar("procMount")),
        ("SeccompProfile", go_profile(get("seccompProfile"))),
        ("AppArmorProfile", go_profile(get("appArmorProfile"))),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("\"{name}\":{value}"))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A seccomp or AppArmor profile as the JSON of its internal Go struct: `Type` always,
/// `LocalhostProfile` a pointer.
fn go_profile(profile: Option<&Value>) -> String {
    let Some(profile) = profile else {
        return "null".to_owned();
    };
    let kind = Value::String(str_at(Some(profile), "type").to_owned());
    let localhost = profile
        .get("localhostProfile")
        .filter(|v| !v.is_null())
        .map_or_else(|| "null".to_owned(), Value::to_string);
    format!("{{\"Type\":{kind},\"LocalhostProfile\":{localhost}}}")
}

/// The JSON of an internal Go struct with the fields `(Go name, JSON key)`: absent fields are
/// `""` when they are plain strings in Go (`strings`), `null` when pointers or slices.
fn go_struct(v: Option<&Value>, fields: &[(&str, &str)], strings: bool) -> String {
    let Some(v) = v else {
        return "null".to_owned();
    };
    let zero = if strings { "\"\"" } else { "null" };
    let body: Vec<String> = fields
        .iter()
        .map(|(name, key)| {
            let value = v
                .get(*key)
                .filter(|v| !v.is_null())
                .map_or_else(|| zero.to_owned(), Value::to_string);
            format!("\"{name}\":{value}")
        })
        .collect();
    format!("{{{}}}", body.join(","))
}

/// `SysctlContainSlashFmt` as `regexp.String()` prints it, anchored.
const SYSCTL_REGEX: &str =
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

/// `IsValidSysctlName`: at most 253 characters, segments of `[a-z0-9]([-_a-z0-9]*[a-z0-9])?`
/// joined by '.' or '/'.
fn is_valid_sysctl_name(name: &str) -> bool {
    name.len() <= 253 && name.split(['.', '/']).all(underscored_label)
}

/// `sysctl.NormalizeName`: a name whose first separator is '/' has its '/' and '.' swapped.
fn normalize_sysctl_name(name: &str) -> String {
    match name.find(['.', '/']) {
        Some(i) if name.as_bytes().get(i) == Some(&b'/') => name
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect(),
        _ => name.to_owned(),
    }
}

/// The Linux namespace a sysctl belongs to (`sysctl.GetNamespace`): `Some(true)` for the network
/// namespace, `Some(false)` for IPC, `None` for neither. A name with '*' is read up to it.
fn sysctl_in_net_namespace(name: &str) -> Option<bool> {
    let normalized = normalize_sysctl_name(name);
    let name = normalized.split('*').next().unwrap_or("");
    const IPC_NAMES: &[&str] = &[
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.shm",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.msg",
    ];
    if IPC_NAMES.contains(&name) || name.starts_with("fs.mqueue.") {
        Some(false)
    } else if name.starts_with("net.") {
        Some(true)
    } else {
        None
    }
}

/// `validateSysctls`: each name required, well formed, and not repeated; then
/// (`ValidateHostSysctl`, checked on create) none of a namespace shared with the host.
fn sysctls(list: &[Value], host_network: bool, host_ipc: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, sysctl) in list.iter().enumerate() {
        let name = str_at(Some(sysctl), "name");
        let name_path = path.index(i).child("name");
        if name.is_empty() {
            errors.push(FieldError::required(name_path, ""));
        } else if !is_valid_sysctl_name(name) {
            errors.push(FieldError::invalid(
                name_path,
                name,
                format!("must have at most 253 characters and match regex {SYSCTL_REGEX}"),
            ));
        } else if names.contains(name) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                name_path,
                BadValue::Str(name.to_owned()),
                "",
            ));
        }
        match sysctl_in_net_namespace(name) {
            Some(true) if host_network => errors.push(FieldError::invalid(
                path.index(i).child("name"),
                name,
                "may not be specified when 'hostNetwork' is true",
            )),
            Some(false) if host_ipc => errors.push(FieldError::invalid(
                path.index(i).child("name"),
                name,
                "may not be specified when 'hostIPC' is true",
            )),
            _ => {}
        }
        names.insert(name);
    }
    errors
}

/// `validateLocalDescendingPath`: relative, without a `..` element.
pub(super) fn local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if target.starts_with('/') {
        errors.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errors.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errors
}

const PROFILE_TYPES: &[&str] = &["Localhost", "RuntimeDefault", "Unconfined"];

/// `validateSeccompProfileField`: a supported type; a localhost profile, relative and
/// descending, exactly when the type is Localhost.
fn seccomp_profile(profile: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let Some(profile) = profile.filter(|p| p.is_object()) else {
        return Vec::new();
    };
    let p = Some(profile);
    let mut errors = Vec::new();
    // validateSeccompProfileType
    match str_at(p, "type") {
        "" => errors.push(FieldError::required(
            path.child("type"),
            "type is required when seccompProfile is set",
        )),
        kind if !PROFILE_TYPES.contains(&kind) => errors.push(FieldError::not_supported(
            path.child("type"),
            kind,
            PROFILE_TYPES,
        )),
        _ => {}
    }
    let localhost_path = path.child("localhostProfile");
    let localhost = p
        .and_then(|p| p.get("localhostProfile"))
        .filter(|v| !v.is_null());
    match (str_at(p, "type"), localhost) {
        ("Localhost", None) => errors.push(FieldError::required(
            localhost_path,
            "must be set when seccomp type is Localhost",
        )),
        ("Localhost", Some(local)) => {
            errors.extend(local_descending_path(
                local.as_str().unwrap_or(""),
                &localhost_path,
            ));
        }
        (_, Some(_)) => errors.push(FieldError::new(
            ErrorType::Invalid,
            localhost_path,
            BadValue::Raw(go_profile(Some(profile))),
            "can only be set when seccomp type is Localhost",
        )),
        (_, None) => {}
    }
    errors
}

/// `ValidateAppArmorProfileField`: a supported type; a localhost profile, not blank nor padded,
/// exactly when the type is Localhost.
fn app_armor_profile(profile: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let Some(profile) = profile.filter(|p| p.is_object()) else {
        return Vec::new();
    };
    let p = Some(profile);
    let localhost_path = path.child("localhostProfile");
    let localhost = p
        .and_then(|p| p.get("localhostProfile"))
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().unwrap_or(""));
    const REQUIRED: &str = "must be set when AppArmor type is Localhost";
    match (str_at(p, "type"), localhost) {
        ("Localhost", None) => vec![FieldError::required(localhost_path, REQUIRED)],
        ("Localhost", Some(local)) if local.trim() != local => vec![FieldError::invalid(
            localhost_path,
            local,
            "must not be padded with whitespace",
        )],
        ("Localhost", Some("")) => vec![FieldError::required(localhost_path, REQUIRED)],
        ("Localhost", Some(_)) => Vec::new(),
        ("RuntimeDefault" | "Unconfined", Some(local)) => vec![FieldError::invalid(
            localhost_path,
            local,
            "can only be set when AppArmor type is Localhost",
        )],
        ("RuntimeDefault" | "Unconfined", None) => Vec::new(),
        ("", _) => vec![FieldError::required(
            path.child("type"),
            "type is required when appArmorProfile is set",
        )],
        (kind, _) => vec![FieldError::not_supported(
            path.child("type"),
            kind,
            PROFILE_TYPES,
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_are_dotted_or_slashed_segments() {
        assert!(is_valid_sysctl_name("kernel.shm_rmid_forced"));
        assert!(is_valid_sysctl_name("net/ipv4/ip_forward"));
        assert!(!is_valid_sysctl_name("Kernel.Bad*"));
        assert!(!is_valid_sysctl_name("kernel..x"));
        assert!(!is_valid_sysctl_name("-kernel"));
    }

    #[test]
    fn sysctls_belong_to_the_network_or_ipc_namespace() {
        assert_eq!(sysctl_in_net_namespace("net/ipv4/ip_forward"), Some(true));
        assert_eq!(
            sysctl_in_net_namespace("kernel.shm_rmid_forced"),
            Some(false)
        );
        assert_eq!(sysctl_in_net_namespace("fs.mqueue.msg_max"), Some(false));
        assert_eq!(sysctl_in_net_namespace("kernel.domainname"), None);
    }

    #[test]
    fn security_contexts_print_as_their_go_structs() {
        let sc = recon_apimachinery::json!({"privileged": true, "allowPrivilegeEscalation": false});
        assert_eq!(
            go_security_context(&sc),
            r#"{"Capabilities":null,"Privileged":true,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,"AllowPrivilegeEscalation":false,"ProcMount":null,"SeccompProfile":null,"AppArmorProfile":null}"#
        );
    }
}
