//! The Windows options of security contexts (`windowsOptions`), as
//! `pkg/apis/core/validation` checks them whatever the pod's OS:
//! `validateWindowsSecurityContextOptions` (the gMSA credential spec and its name, the
//! `runAsUserName` format) and `validateWindowsHostProcessPod` (HostProcess containers all or
//! none, on the host network).
//!
//! The options are pointers to strings in Go, which `field.Invalid` quotes as JSON
//! (`"a\u003cb"`, not Go's `%q`).

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::dns1123_subdomain_name_errors;

use super::pod_object::containers_with_paths;
use crate::field::{BadValue, ErrorType, FieldError, Path};

/// `maxGMSACredentialSpecLengthInKiB`: the bound of a credential spec's contents.
const MAX_CREDENTIAL_SPEC_KIB: usize = 64;
/// `maxRunAsUserNameDomainLength`: a domain must be shorter, in bytes.
const MAX_DOMAIN_LENGTH: usize = 256;
/// `maxRunAsUserNameUserLength`: the longest user name, in bytes.
const MAX_USER_LENGTH: usize = 104;

/// `field.Invalid` of a `*string` at `path`: the value quoted as JSON.
fn invalid(path: &Path, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(go_json_string(value)),
        detail,
    )
}

/// The string at `key` of `v` when it is set (a non-nil `*string`).
fn set_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().unwrap_or(""))
}

/// `validateWindowsSecurityContextOptions` of the options `options` at `path`: the credential
/// spec's name is a DNS subdomain (it names a GMSACredentialSpec), the spec itself neither
/// empty nor over 64 KiB, and `runAsUserName` a well-formed `[DOMAIN\]USER`.
pub(super) fn security_context_options(options: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let Some(options) = options.filter(|o| o.is_object()) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if let Some(name) = set_str(options, "gmsaCredentialSpecName") {
        let at = path.child("gmsaCredentialSpecName");
        for message in dns1123_subdomain_name_errors(name) {
            errors.push(invalid(&at, name, message));
        }
    }
    if let Some(spec) = set_str(options, "gmsaCredentialSpec") {
        let at = path.child("gmsaCredentialSpec");
        if spec.is_empty() {
            errors.push(invalid(
                &at,
                spec,
                "gmsaCredentialSpec cannot be an empty string",
            ));
        } else if spec.len() > MAX_CREDENTIAL_SPEC_KIB * 1024 {
            errors.push(invalid(
                &at,
                spec,
                format!("gmsaCredentialSpec size must be under {MAX_CREDENTIAL_SPEC_KIB} KiB"),
            ));
        }
    }
    if let Some(name) = set_str(options, "runAsUserName") {
        let at = path.child("runAsUserName");
        errors.extend(
            run_as_user_name_errors(name)
                .into_iter()
                .map(|message| invalid(&at, name, message)),
        );
    }
    errors
}

/// The messages of `validateWindowsSecurityContextOptions` for a `runAsUserName`, in its
/// order: the first three end the checks; the domain and user checks are independent.
fn run_as_user_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["runAsUserName cannot be an empty string".to_owned()];
    }
    // `[[:cntrl:]]` is ASCII's control characters only.
    if name.chars().any(|c| c.is_ascii_control()) {
        return vec!["runAsUserName cannot contain control characters".to_owned()];
    }
    let parts: Vec<&str> = name.split('\\').collect();
    let (domain, user) = match parts.as_slice() {
        [user] => (None, *user),
        [domain, user] => (Some(*domain), *user),
        _ => return vec!["runAsUserName cannot contain more than one backslash".to_owned()],
    };
    let mut errors = Vec::new();
    if domain.is_some_and(|d| d.len() >= MAX_DOMAIN_LENGTH) {
        errors.push(format!(
            "runAsUserName's Domain length must be under {MAX_DOMAIN_LENGTH} characters"
        ));
    }
    if domain.is_some_and(|d| !is_netbios_name(d) && !is_dns_name(d)) {
        errors.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format".into());
    }
    if user.is_empty() {
        errors.push("runAsUserName's User cannot be empty".into());
    } else if user.len() > MAX_USER_LENGTH {
        errors.push(format!(
            "runAsUserName's User length must not be longer than {MAX_USER_LENGTH} characters"
        ));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        errors.push("runAsUserName's User cannot contain only periods or spaces".into());
    }
    if user.chars().any(|c| USER_FORBIDDEN.contains(c)) {
        errors.push(format!(
            "runAsUserName's User cannot contain the following characters: {USER_FORBIDDEN}"
        ));
    }
    errors
}

/// `invalidUserNameCharsRegex`'s characters, in the order Go's message lists them.
const USER_FORBIDDEN: &str = "\"/\\:;|=,+*?<>@[]";

/// Characters a NetBIOS domain name may not hold (`validNetBiosRegex`); it may not start with
/// a '.' either.
const NETBIOS_FORBIDDEN: &str = "\\/:*?\"<>|";

/// `validNetBiosRegex`: 1 to 15 characters (runes, as Go's regexp counts), none of
/// `NETBIOS_FORBIDDEN`, not starting with '.'.
fn is_netbios_name(domain: &str) -> bool {
    let count = domain.chars().count();
    (1..=15).contains(&count)
        && !domain.starts_with('.')
        && !domain.chars().any(|c| NETBIOS_FORBIDDEN.contains(c))
}

/// `validWindowsUserDomainDNSRegex`: dot-separated labels of 1 to 63 ASCII letters, digits
/// and '-', each starting and ending with a letter or digit (upper case allowed, no overall
/// length bound).
fn is_dns_name(domain: &str) -> bool {
    domain.split('.').all(|label| {
        let bytes = label.as_bytes();
        match (bytes.first(), bytes.last()) {
            (Some(first), Some(last)) => {
                bytes.len() <= 63
                    && first.is_ascii_alphanumeric()
                    && last.is_ascii_alphanumeric()
                    && bytes
                        .iter()
                        .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
            }
            _ => false,
        }
    })
}

/// The `hostProcess` option of the security context of `v` (a pod spec or a container), when
/// set.
fn host_process(v: Option<&Value>) -> Option<bool> {
    v.and_then(|v| v.get("securityContext"))
        .and_then(|sc| sc.get("windowsOptions"))
        .and_then(|o| o.get("hostProcess"))
        .and_then(Value::as_bool)
}

/// `validateWindowsHostProcessPod` of the pod spec `spec` at `path`: a container's
/// `hostProcess` equals the pod's where both are set; if any container is a HostProcess
/// container (set on it, or inherited from the pod) all are, and the pod is on the host
/// network. (The API server allows privileged containers, so they are not refused.)
pub(super) fn host_process_pod(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let pod = host_process(spec);
    let mut errors = Vec::new();
    let (mut containers, mut host_process_containers) = (0, 0);
    for (container, at) in containers_with_paths(spec, path) {
        containers += 1;
        let own = host_process(Some(container));
        if let (Some(pod), Some(own)) = (pod, own)
            && pod != own
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                at.child("securityContext")
                    .child("windowsOptions")
                    .child("hostProcess"),
                BadValue::Raw(own.to_string()),
                format!("pod hostProcess value must be identical if both are specified, was {pod}"),
            ));
        }
        if own.or(pod) == Some(true) {
            host_process_containers += 1;
        }
    }
    if host_process_containers == 0 {
        return errors;
    }
    if host_process_containers != containers {
        errors.push(FieldError::invalid(
            path,
            "",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        ));
    }
    let host_network = spec
        .and_then(|s| s.get("hostNetwork"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !host_network {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("hostNetwork"),
            BadValue::Raw("false".to_owned()),
            "hostNetwork must be true if pod contains any hostProcess containers",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_with_a_domain_check_both_parts() {
        assert!(run_as_user_name_errors("NT AUTHORITY\\NETWORK SERVICE").is_empty());
        assert!(run_as_user_name_errors("contoso.com\\user").is_empty());
        assert!(run_as_user_name_errors("A_B\\user").is_empty());
        assert_eq!(
            run_as_user_name_errors("bad:dom\\..").len(),
            2,
            "the domain and the user are checked independently"
        );
        assert_eq!(
            run_as_user_name_errors("\\user"),
            vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"]
        );
    }

    #[test]
    fn user_name_lengths_count_bytes() {
        assert!(run_as_user_name_errors(&"u".repeat(104)).is_empty());
        assert_eq!(run_as_user_name_errors(&"é".repeat(53)).len(), 1);
    }

    #[test]
    fn netbios_names_count_characters() {
        assert!(is_netbios_name("ÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉ"));
        assert!(!is_netbios_name("ABCDEFGHIJKLMNOP"));
        assert!(!is_netbios_name(".A"));
        assert!(is_netbios_name("A."));
    }

    #[test]
    fn credential_specs_over_64_kib_are_refused() {
        let options = recon_apimachinery::json!({"gmsaCredentialSpec": "x".repeat(64 * 1024 + 1)});
        let errors = security_context_options(Some(&options), &Path::new("o"));
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .to_string()
                .ends_with("gmsaCredentialSpec size must be under 64 KiB")
        );
        let options = recon_apimachinery::json!({"gmsaCredentialSpec": "x".repeat(64 * 1024)});
        assert!(security_context_options(Some(&options), &Path::new("o")).is_empty());
    }
}
