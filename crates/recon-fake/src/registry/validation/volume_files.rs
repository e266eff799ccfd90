//! The volume sources that write files into the volume: secret, configMap, downwardAPI and
//! projected (`pkg/apis/core/validation/validation.go`: `validateSecretVolumeSource`,
//! `validateConfigMapVolumeSource`, `validateKeyToPath`, `validateDownwardAPIVolumeSource`,
//! `validateDownwardAPIVolumeFile` with the field and resource selectors it checks, and
//! `validateProjectedVolumeSource`), called by [`super::volume_sources`].
//!
//! Each file's path is relative, without `..`; modes are at most 0777; a downward API file
//! names one field or one container resource; a projection has one source, paths no other
//! projection writes, and service account tokens that live 10 minutes to 2^32 seconds. The
//! clusterTrustBundle and podCertificate projections are not checked: their gates
//! (`ClusterTrustBundleProjection`, `PodCertificateRequest`) are off in 1.36, and the pod
//! strategy drops them before validation.

use std::cmp::Ordering;
use std::collections::HashSet;

use recon_apimachinery::json::Value;
use recon_apimachinery::names::label_key_errors;

use super::pod::invalid_int;
use super::pod_security::local_descending_path;
use super::read::{int_at, list_at, str_at};
use crate::field::{FieldError, Path};
use crate::gotype::quantity;

/// `fileModeErrorMsg`.
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// A file mode at `key` of `v`, when set, between 0 and 0777.
fn mode(v: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    int_at(v, key)
        .filter(|m| !(0..=0o777).contains(m))
        .map(|m| invalid_int(&path.child(key), m, FILE_MODE))
}

/// `ValidateLocalNonReservedPath`: `validateLocalDescendingPath`, and no leading `..` (unless
/// the backstep check already caught it).
fn local_non_reserved_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = local_descending_path(target, path);
    if target.starts_with("..") && !target.starts_with("../") {
        errors.push(FieldError::invalid(
            path,
            target,
            "must not start with '..'",
        ));
    }
    errors
}

/// `validateKeyToPath`: a key and a path, the path local, the mode in range.
fn key_to_path(item: &Value, path: &Path) -> Vec<FieldError> {
    let i = Some(item);
    let mut errors = Vec::new();
    if str_at(i, "key").is_empty() {
        errors.push(FieldError::required(path.child("key"), ""));
    }
    let target = str_at(i, "path");
    if target.is_empty() {
        errors.push(FieldError::required(path.child("path"), ""));
    }
    errors.extend(local_non_reserved_path(target, &path.child("path")));
    errors.extend(mode(i, "mode", path));
    errors
}

/// `validateSecretVolumeSource` / `validateConfigMapVolumeSource`: a name (at `name_key`), the
/// default mode, each item.
fn named_items(source: Option<&Value>, name_key: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if str_at(source, name_key).is_empty() {
        errors.push(FieldError::required(path.child(name_key), ""));
    }
    errors.extend(mode(source, "defaultMode", path));
    let items_path = path.child("items");
    for (i, item) in list_at(source, "items").iter().enumerate() {
        errors.extend(key_to_path(item, &items_path.index(i)));
    }
    errors
}

/// `validateSecretVolumeSource`.
pub(super) fn secret(source: Option<&Value>, path: &Path) -> Vec<FieldError> {
    named_items(source, "secretName", path)
}

/// `validateConfigMapVolumeSource`.
pub(super) fn config_map(source: Option<&Value>, path: &Path) -> Vec<FieldError> {
    named_items(source, "name", path)
}

/// `validateDownwardAPIVolumeSource`: the default mode, then each file, reported (as Go does)
/// on `downwardAPI` itself, without the item's index.
pub(super) fn downward_api(source: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = mode(source, "defaultMode", path).into_iter().collect();
    for item in list_at(source, "items") {
        errors.extend(downward_api_file(item, path));
    }
    errors
}

/// The fields a downward API volume may project (`validVolumeDownwardAPIFieldPathExpressions`,
/// as `sets.List` sorts them).
const VOLUME_FIELD_PATHS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// `validateDownwardAPIVolumeFile`: a local path; a field or a container resource, not both;
/// the mode.
fn downward_api_file(file: &Value, path: &Path) -> Vec<FieldError> {
    let f = Some(file);
    let mut errors = Vec::new();
    let target = str_at(f, "path");
    if target.is_empty() {
        errors.push(FieldError::required(path.child("path"), ""));
    }
    errors.extend(local_non_reserved_path(target, &path.child("path")));
    let field_ref = file.get("fieldRef").filter(|r| !r.is_null());
    let resource_ref = file.get("resourceFieldRef").filter(|r| !r.is_null());
    match (field_ref, resource_ref) {
        (Some(field_ref), resource_ref) => {
            errors.extend(object_field_selector(
                field_ref,
                VOLUME_FIELD_PATHS,
                &path.child("fieldRef"),
            ));
            if resource_ref.is_some() {
                errors.push(FieldError::invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                ));
            }
        }
        (None, Some(resource_ref)) => errors.extend(resource_field_selector(
            resource_ref,
            &path.child("resourceFieldRef"),
        )),
        (None, None) => errors.push(FieldError::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
    errors.extend(mode(f, "mode", path));
    errors
}

/// `podshelper.ConvertDownwardAPIFieldLabel`: the internal field path of a v1 one, or Go's
/// error.
fn convert_field_label(version: &str, label: &str) -> Result<String, String> {
    if version != "v1" {
        return Err(format!("unsupported pod version: {version}"));
    }
    if let Some((path, _)) = split_subscript(label) {
        return match path {
            "metadata.annotations" | "metadata.labels" => Ok(label.to_owned()),
            _ => Err(format!("field label does not support subscript: {label}")),
        };
    }
    match label {
        "metadata.annotations"
        | "metadata.labels"
        | "metadata.name"
        | "metadata.namespace"
        | "metadata.uid"
        | "spec.nodeName"
        | "spec.restartPolicy"
        | "spec.serviceAccountName"
        | "spec.schedulerName"
        | "status.phase"
        | "status.hostIP"
        | "status.hostIPs"
        | "status.podIP"
        | "status.podIPs" => Ok(label.to_owned()),
        // Old v1 clients' name of spec.nodeName.
        "spec.host" => Ok("spec.nodeName".to_owned()),
        _ => Err(format!("field label not supported: {label}")),
    }
}

/// `fieldpath.SplitMaybeSubscriptedPath`: `path['subscript']` split in two.
fn split_subscript(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (path, subscript) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, subscript))
}

/// `validateObjectFieldSelector`: an API version and a field path, the path one Go converts
/// and one of `expressions`; a subscript of labels or annotations is a qualified name
/// (reported on the selector itself).
fn object_field_selector(selector: &Value, expressions: &[&str], path: &Path) -> Vec<FieldError> {
    let s = Some(selector);
    let version = str_at(s, "apiVersion");
    if version.is_empty() {
        return vec![FieldError::required(path.child("apiVersion"), "")];
    }
    let field_path = str_at(s, "fieldPath");
    if field_path.is_empty() {
        return vec![FieldError::required(path.child("fieldPath"), "")];
    }
    let internal = match convert_field_label(version, field_path) {
        Ok(internal) => internal,
        Err(error) => {
            return vec![FieldError::invalid(
                path.child("fieldPath"),
                field_path,
                format!("error converting fieldPath: {error}"),
            )];
        }
    };
    let mut errors = Vec::new();
    match split_subscript(&internal) {
        Some(("metadata.annotations", subscript)) => {
            let key = subscript.to_lowercase();
            for message in label_key_errors(&key) {
                errors.push(FieldError::invalid(path, &key, message));
            }
        }
        Some(("metadata.labels", subscript)) => {
            for message in label_key_errors(subscript) {
                errors.push(FieldError::invalid(path, subscript, message));
            }
        }
        Some((other, _)) => {
            errors.push(FieldError::invalid(
                path,
                other,
                "does not support subscript",
            ));
        }
        None if !expressions.contains(&internal.as_str()) => {
            errors.push(FieldError::not_supported(
                path.child("fieldPath"),
                &internal,
                expressions,
            ));
        }
        None => {}
    }
    errors
}

/// `validContainerResourceFieldPathExpressions`, as `sets.List` sorts them.
const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// The divisors `validateContainerResourceDivisor` allows for memory, storage and huge pages.
const BYTE_DIVISORS: &[&str] = &[
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// `validateContainerResourceFieldSelector` of a volume file: a container name, then a
/// resource that is a known one or a huge page size; then the divisor.
fn resource_field_selector(selector: &Value, path: &Path) -> Vec<FieldError> {
    let s = Some(selector);
    let resource = str_at(s, "resource");
    let mut errors = Vec::new();
    if str_at(s, "containerName").is_empty() {
        errors.push(FieldError::required(path.child("containerName"), ""));
    } else if resource.is_empty() {
        errors.push(FieldError::required(path.child("resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&resource) && !is_huge_pages(resource) {
        errors.push(FieldError::not_supported(
            path.child("resource"),
            resource,
            RESOURCE_FIELD_PATHS,
        ));
    }
    errors.extend(divisor(resource, s, path));
    errors
}

/// Whether a downward API resource names huge pages (`requests.hugepages-<size>`, limits too).
fn is_huge_pages(resource: &str) -> bool {
    resource.starts_with("requests.hugepages-") || resource.starts_with("limits.hugepages-")
}

/// `validateContainerResourceDivisor`: a divisor other than zero is one the resource allows
/// (compared in its canonical form), reported with the resource as the value.
fn divisor(resource: &str, selector: Option<&Value>, path: &Path) -> Option<FieldError> {
    let divisor = selector
        .and_then(|s| s.get("divisor"))
        .and_then(Value::as_str)?;
    if quantity::compare(divisor, "0") == Some(Ordering::Equal) {
        return None;
    }
    let canonical = quantity::canonical(divisor).unwrap_or_else(|_| divisor.to_owned());
    let (allowed, what): (&[&str], &str) = match resource {
        "limits.cpu" | "requests.cpu" => (
            &["1m", "1"],
            "only divisor's values 1m and 1 are supported with the cpu resource",
        ),
        "limits.memory" | "requests.memory" => (
            BYTE_DIVISORS,
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are \
             supported with the memory resource",
        ),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => (
            BYTE_DIVISORS,
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are \
             supported with the local ephemeral storage resource",
        ),
        _ if is_huge_pages(resource) => (
            BYTE_DIVISORS,
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are \
             supported with the hugepages resource",
        ),
        _ => return None,
    };
    (!allowed.contains(&canonical.as_str()))
        .then(|| FieldError::invalid(path.child("divisor"), resource, what))
}

/// `validateProjectedVolumeSource`: the default mode, then `validateProjectionSources`.
pub(super) fn projected(source: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = mode(source, "defaultMode", path).into_iter().collect();
    errors.extend(projection_sources(source, path));
    errors
}

/// `validateProjectionSources`: each source's contents, one kind of source each, and no path
/// written twice (reported on `projected`, with the secret's or config map's name as the
/// value, or the path for downward API files). Service account token paths are not among the
/// paths compared, and Go reports their errors on `projected.path`.
fn projection_sources(projected: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut all_paths: HashSet<&str> = HashSet::new();
    for (i, source) in list_at(projected, "sources").iter().enumerate() {
        let source_path = path.child("sources").index(i);
        let mut kinds = 0;
        for (key, name_key) in [("secret", "name"), ("configMap", "name")] {
            let Some(files) = source.get(key).filter(|s| !s.is_null()) else {
                continue;
            };
            kinds += 1;
            let at = source_path.child(key);
            let name = str_at(Some(files), name_key);
            if name.is_empty() {
                errors.push(FieldError::required(at.child(name_key), ""));
            }
            let items_path = at.child("items");
            for (j, item) in list_at(Some(files), "items").iter().enumerate() {
                errors.extend(key_to_path(item, &items_path.index(j)));
                let target = str_at(Some(item), "path");
                if !target.is_empty() && !all_paths.insert(target) {
                    errors.push(FieldError::invalid(
                        path,
                        name,
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(files) = source.get("downwardAPI").filter(|s| !s.is_null()) {
            kinds += 1;
            let at = source_path.child("downwardAPI");
            for file in list_at(Some(files), "items") {
                errors.extend(downward_api_file(file, &at));
                let target = str_at(Some(file), "path");
                if !target.is_empty() && !all_paths.insert(target) {
                    errors.push(FieldError::invalid(
                        path,
                        target,
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(token) = source.get("serviceAccountToken").filter(|s| !s.is_null()) {
            kinds += 1;
            errors.extend(service_account_token(token, &source_path, path));
        }
        if kinds > 1 {
            errors.push(FieldError::forbidden(
                &source_path,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errors
}

/// A projected service account token: an expiry between 10 minutes and 2^32 seconds (the
/// defaulting gives one hour), and a local path. (Go lets an update keep a non-local path an
/// old spec already holds, `AllowNonLocalProjectedTokenPath`; here no object can hold one.)
fn service_account_token(token: &Value, source_path: &Path, projected: &Path) -> Vec<FieldError> {
    let t = Some(token);
    let mut errors = Vec::new();
    let expiry_path = source_path
        .child("serviceAccountToken")
        .child("expirationSeconds");
    let expiry = int_at(t, "expirationSeconds").unwrap_or(0);
    if expiry < 10 * 60 {
        errors.push(invalid_int(
            &expiry_path,
            expiry,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiry > 1 << 32 {
        errors.push(invalid_int(
            &expiry_path,
            expiry,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let target = str_at(t, "path");
    if target.is_empty() {
        errors.push(FieldError::required(projected.child("path"), ""));
    } else {
        errors.extend(local_non_reserved_path(target, &projected.child("path")));
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn field_paths_convert_as_go_converts_them() {
        assert_eq!(
            convert_field_label("v1", "spec.host"),
            Ok("spec.nodeName".into())
        );
        assert_eq!(
            convert_field_label("v1", "metadata.name['x']"),
            Err("field label does not support subscript: metadata.name['x']".into())
        );
        assert_eq!(
            convert_field_label("v2", "metadata.name"),
            Err("unsupported pod version: v2".into())
        );
        assert_eq!(
            split_subscript("metadata.labels['a']"),
            Some(("metadata.labels", "a"))
        );
        assert_eq!(split_subscript("['a']"), None);
    }

    #[test]
    fn paths_are_local_and_do_not_start_with_backsteps() {
        let path = Path::new("p");
        assert!(local_non_reserved_path("a/b", &path).is_empty());
        assert_eq!(
            texts(&local_non_reserved_path("..a", &path)),
            [r#"p: Invalid value: "..a": must not start with '..'"#]
        );
        assert_eq!(local_non_reserved_path("../a", &path).len(), 1);
        assert_eq!(local_non_reserved_path("/a/../b", &path).len(), 2);
    }

    #[test]
    fn a_cpu_divisor_is_one_or_a_thousandth() {
        let path = Path::new("r");
        let selector =
            |d: &str| json!({"containerName": "c", "resource": "limits.cpu", "divisor": d});
        assert!(resource_field_selector(&selector("1000m"), &path).is_empty());
        assert!(resource_field_selector(&selector("0"), &path).is_empty());
        assert_eq!(
            texts(&resource_field_selector(&selector("2"), &path)),
            [
                r#"r.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource"#
            ]
        );
    }
}
