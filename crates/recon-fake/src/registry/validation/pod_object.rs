//! A Pod's own rules, beyond the spec rules it shares with templates ([`super::pod`]): its
//! annotations, what only a create may set (`ValidatePodCreate`), what an update through the
//! main endpoint may change (`ValidatePodUpdate`) and what `/status` may write
//! (`ValidatePodStatusUpdate`), as kube-apiserver 1.36 checks them with the options its pod
//! strategy sets (`GetValidationOptionsFromPodSpecAndMeta`; the beta gates
//! ContainerRestartRules, RestartAllContainersOnContainerExits and
//! ClearingNominatedNodeNameAfterBinding on, as by default).

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::{dns1123_subdomain_name_errors, label_key_errors};

use super::pod::{pod_spec, tolerations};
use super::pod_os;
use super::read::{int_at, is_set, list_at, str_at};
use super::service_addresses::legacy_ip_errors;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal::{self, Source};
use crate::wire::object::Object;

const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
const TOLERATIONS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/tolerations";
const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// The fields `ValidatePodUpdate`'s refusal names as the ones an update may change.
const UPDATABLE_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,\
`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),\
`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidatePodCreate`: the metadata and spec, then what a new pod may not have.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    let path = Path::new("spec");
    let mut errors = metadata_and_spec(obj, false);
    if !list_at(spec, "ephemeralContainers").is_empty() {
        errors.push(FieldError::forbidden(
            path.child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    if !str_at(spec, "nodeName").is_empty() && !list_at(spec, "schedulingGates").is_empty() {
        errors.push(FieldError::forbidden(
            path.child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errors.extend(seccomp_annotations_match_fields(obj, &path));
    errors.extend(apparmor_annotations_match_fields(obj, &path));
    errors
}

/// `ValidatePodUpdate`: the new pod as on create, its annotation changes, then which parts of
/// the spec moved: images, a shorter active deadline, added tolerations, removed scheduling
/// gates (and, while gated, added node constraints) and nothing else.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = metadata_and_spec(new, invalid_deletion_cost(old));
    errors.extend(annotation_updates(new, old));
    let path = Path::new("spec");
    let (spec, old_spec) = (new.get("spec"), old.get("spec"));
    for key in ["containers", "initContainers"] {
        let (container_errors, stop) =
            container_updates(list_at(spec, key), list_at(old_spec, key), &path.child(key));
        errors.extend(container_errors);
        if stop {
            return errors;
        }
    }
    let deadline_path = path.child("activeDeadlineSeconds");
    match (
        int_at(spec, "activeDeadlineSeconds"),
        int_at(old_spec, "activeDeadlineSeconds"),
    ) {
        (Some(new), _) if !(0..=i64::from(i32::MAX)).contains(&new) => {
            errors.push(invalid_number(
                &deadline_path,
                new,
                "must be between 0 and 2147483647, inclusive",
            ));
            return errors;
        }
        (Some(new), Some(old)) if old < new => {
            errors.push(invalid_number(
                &deadline_path,
                new,
                "must be less than or equal to previous value",
            ));
            return errors;
        }
        (None, Some(_)) => errors.push(FieldError::new(
            ErrorType::Invalid,
            deadline_path,
            BadValue::Raw("null".into()),
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    errors.extend(only_added_tolerations(
        list_at(spec, "tolerations"),
        list_at(old_spec, "tolerations"),
        &path.child("tolerations"),
    ));
    errors.extend(only_deleted_scheduling_gates(
        list_at(spec, "schedulingGates"),
        list_at(old_spec, "schedulingGates"),
        &path.child("schedulingGates"),
    ));
    let new_spec = as_converted(spec);
    let old_spec = as_converted(old_spec);
    if internal::semantic_eq("core.PodSpec", Some(&new_spec), Some(&old_spec)) {
        return errors;
    }
    let mut munged = munge_updatable(&new_spec, &old_spec);
    if !list_at(Some(&old_spec), "schedulingGates").is_empty() {
        errors.extend(gated_node_constraints(&mut munged, &old_spec, &path));
    }
    if !internal::semantic_eq("core.PodSpec", Some(&munged), Some(&old_spec)) {
        let diff = internal::diff("core.PodSpec", Some(&old_spec), Some(&munged));
        errors.push(FieldError::forbidden(
            path,
            format!("pod updates may not change fields other than {UPDATABLE_SPEC_FIELDS}\n{diff}"),
        ));
    }
    errors
}

/// `ValidatePodStatusUpdate`. The spec, owner references and deletion time are the stored
/// ones by then (the status strategy's `PrepareForUpdate`), so the rule that `spec.nodeName`
/// may not change cannot fire here.
pub(super) fn validate_status_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = annotation_updates(new, old);
    let path = Path::new("status");
    let (status, old_status) = (new.get("status"), old.get("status"));
    errors.extend(conditions(
        list_at(status, "conditions"),
        &path.child("conditions"),
    ));
    let nominated = str_at(status, "nominatedNodeName");
    let nominated_changed = nominated != str_at(old_status, "nominatedNodeName");
    if nominated_changed && !nominated.is_empty() {
        for message in dns1123_subdomain_name_errors(nominated) {
            errors.push(FieldError::invalid(
                path.child("nominatedNodeName"),
                nominated,
                message,
            ));
        }
    }
    if !str_at(old.get("spec"), "nodeName").is_empty() && !nominated.is_empty() && nominated_changed
    {
        errors.push(FieldError::forbidden(
            path.child("nominatedNodeName"),
            "may not be set on pods that are already bound to a node",
        ));
    }
    if let Some(generation) = int_at(status, "observedGeneration").filter(|g| *g < 0) {
        errors.push(invalid_number(
            &path.child("observedGeneration"),
            generation,
            "must be a non-negative integer",
        ));
    }
    let qos = str_at(status, "qosClass");
    if qos != str_at(old_status, "qosClass") {
        errors.push(FieldError::invalid(
            path.child("qosClass"),
            qos,
            "field is immutable",
        ));
    }
    let old_spec = old.get("spec");
    for (key, init) in [
        ("containerStatuses", false),
        ("initContainerStatuses", true),
    ] {
        errors.extend(state_transitions(
            list_at(status, key),
            list_at(old_status, key),
            old_spec,
            init,
            &path.child(key),
        ));
    }
    errors.extend(ephemeral_state_transitions(
        list_at(status, "ephemeralContainerStatuses"),
        list_at(old_status, "ephemeralContainerStatuses"),
        &path.child("ephemeralContainerStatuses"),
    ));
    errors.extend(pod_ips(status, old_status, &path));
    errors.extend(host_ips(status, old_status, &path));
    for key in [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ] {
        errors.extend(pod_os::container_status_users(
            list_at(status, key),
            new.get("spec"),
            &path.child(key),
        ));
    }
    errors
}

/// The status strategy's `PrepareForUpdate` beyond the generic reset: the QoS class, set at
/// creation, is kept when the request leaves it out, and so is every `observedGeneration`
/// the request leaves at zero (`preserveOldObservedGeneration`).
pub(crate) fn prepare_status_update(new: &mut Object, old: &Object) {
    let old_status = old.get("status");
    let Some(Value::Object(status)) = new.get_mut("status") else {
        return;
    };
    if status
        .get("qosClass")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        match old_status.and_then(|s| s.get("qosClass")) {
            Some(qos) => status.insert("qosClass".into(), qos.clone()),
            None => status.remove("qosClass"),
        };
    }
    let observed = |v: Option<&Value>| int_at(v, "observedGeneration").unwrap_or(0);
    if status
        .get("observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        == 0
    {
        match old_status.and_then(|s| s.get("observedGeneration")) {
            Some(g) => status.insert("observedGeneration".into(), g.clone()),
            None => status.remove("observedGeneration"),
        };
    }
    // Per type, the old conditions' generations in order: a type may repeat.
    let mut old_generations: Vec<(&str, i64)> = list_at(old_status, "conditions")
        .iter()
        .map(|c| (str_at(Some(c), "type"), observed(Some(c))))
        .collect();
    if let Some(Value::Array(conditions)) = status.get_mut("conditions") {
        for condition in conditions.iter_mut() {
            let ty = str_at(Some(condition), "type").to_owned();
            let old = old_generations
                .iter()
                .position(|(t, _)| *t == ty)
                .map_or(0, |i| old_generations.remove(i).1);
            if observed(Some(condition)) == 0
                && let Value::Object(condition) = condition
            {
                if old == 0 {
                    condition.remove("observedGeneration");
                } else {
                    condition.insert("observedGeneration".into(), Value::from(old));
                }
            }
        }
    }
}

/// `validatePodMetadataAndSpec` after the generic metadata rules: the pod's annotations, its
/// spec, service account tokens only with an account, container images without surrounding
/// space. `allow_invalid_cost` is the update option for an old pod already holding a bad
/// deletion cost.
fn metadata_and_spec(pod: &Object, allow_invalid_cost: bool) -> Vec<FieldError> {
    let spec = pod.get("spec");
    let path = Path::new("spec");
    let mut errors = pod_annotations(pod, allow_invalid_cost);
    let name = str_at(pod.get("metadata"), "name");
    errors.extend(pod_spec(spec, Some(name), &path));
    if str_at(spec, "serviceAccountName").is_empty() {
        for (vi, volume) in list_at(spec, "volumes").iter().enumerate() {
            let projected = volume.get("projected");
            for (si, source) in list_at(projected, "sources").iter().enumerate() {
                if is_set(Some(source), "serviceAccountToken") {
                    errors.push(FieldError::forbidden(
                        path.child("volumes")
                            .index(vi)
                            .child("projected")
                            .child("sources")
                            .index(si)
                            .child("serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    for key in ["containers", "initContainers"] {
        for (i, container) in list_at(spec, key).iter().enumerate() {
            errors.extend(image_whitespace(container, &path.child(key).index(i)));
        }
    }
    errors
}

/// `validateContainerOnlyForPod`.
fn image_whitespace(container: &Value, path: &Path) -> Option<FieldError> {
    let image = str_at(Some(container), "image");
    (image.trim() != image).then(|| {
        FieldError::invalid(
            path.child("image"),
            image,
            "must not have leading or trailing whitespace",
        )
    })
}

fn annotations(pod: &Object) -> Option<&Map> {
    pod.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
}

/// Whether the deletion cost annotation of `pod` is not a 32-bit integer
/// (`GetDeletionCostFromPodAnnotations`: no sign but `-`, no leading zeros).
fn invalid_deletion_cost(pod: &Object) -> bool {
    annotations(pod)
        .and_then(|a| a.get(DELETION_COST_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|v| !valid_deletion_cost(v))
}

fn valid_deletion_cost(value: &str) -> bool {
    let first_ok = match value.as_bytes().first() {
        Some(b'-' | b'1'..=b'9') => true,
        Some(b'0') => value == "0",
        _ => false,
    };
    first_ok && value.parse::<i32>().is_ok()
}

/// `ValidatePodSpecificAnnotations`. Go walks the annotations map in random order; here they
/// are walked in key order.
fn pod_annotations(pod: &Object, allow_invalid_cost: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(annotations) = annotations(pod) else {
        return errors;
    };
    let path = Path::new("metadata").child("annotations");
    let text = |key: &str| annotations.get(key).and_then(Value::as_str);
    let spec = pod.get("spec");
    if let Some(mirror) = text(MIRROR_ANNOTATION)
        && str_at(spec, "nodeName").is_empty()
    {
        errors.push(FieldError::invalid(
            path.key(MIRROR_ANNOTATION),
            mirror,
            "must set spec.nodeName if mirror pod annotation is set",
        ));
    }
    if let Some(raw) = text(TOLERATIONS_ANNOTATION).filter(|t| !t.is_empty()) {
        match serde_json::from_str::<Vec<Value>>(raw) {
            Ok(list) if !list.is_empty() => errors.extend(tolerations(
                &list
                    .iter()
                    .map(toleration_from_annotation)
                    .collect::<Vec<_>>(),
                &path.child(TOLERATIONS_ANNOTATION),
            )),
            Ok(_) => {}
            // The wording of Go's JSON errors is not reproduced (recon_fake::guide::fidelity, "Not modelled").
            Err(e) => errors.push(FieldError::invalid(
                &path,
                TOLERATIONS_ANNOTATION,
                e.to_string(),
            )),
        }
    }
    if !allow_invalid_cost
        && let Some(cost) = text(DELETION_COST_ANNOTATION)
        && !valid_deletion_cost(cost)
    {
        errors.push(FieldError::invalid(
            path.key(DELETION_COST_ANNOTATION),
            cost,
            "must be a 32bit integer",
        ));
    }
    if let Some(profile) = text(SECCOMP_POD_ANNOTATION) {
        errors.extend(seccomp_profile(
            profile,
            &path.child(SECCOMP_POD_ANNOTATION),
        ));
    }
    for (key, value) in annotations {
        let value = value.as_str().unwrap_or("");
        if key.starts_with(SECCOMP_CONTAINER_PREFIX) {
            errors.extend(seccomp_profile(value, &path.child(key)));
        }
        if let Some(container) = key.strip_prefix(APPARMOR_CONTAINER_PREFIX) {
            if !has_container(spec, container) {
                errors.push(FieldError::invalid(
                    path.key(key),
                    container,
                    "container not found",
                ));
            }
            let valid = value.is_empty()
                || value == "runtime/default"
                || value == "unconfined"
                || value.starts_with("localhost/");
            if !valid {
                errors.push(FieldError::invalid(
                    path.key(key),
                    value,
                    format!(
                        "invalid AppArmor profile name: {}",
                        go_json(&Value::from(value))
                    ),
                ));
            }
        }
    }
    errors
}

/// A toleration of the annotation, read as Go reads JSON into the internal type: field names
/// match whatever their case.
fn toleration_from_annotation(raw: &Value) -> Value {
    let mut out = Map::new();
    for key in ["key", "operator", "value", "effect", "tolerationSeconds"] {
        if let Some(v) = raw
            .as_object()
            .and_then(|m| m.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case(key)))
            .map(|(_, v)| v.clone())
        {
            out.insert(key.into(), v);
        }
    }
    Value::Object(out)
}

/// `ValidateSeccompProfile` of an annotation's value.
fn seccomp_profile(profile: &str, path: &Path) -> Vec<FieldError> {
    if matches!(profile, "runtime/default" | "docker/default" | "unconfined") {
        return Vec::new();
    }
    let Some(local) = profile.strip_prefix("localhost/") else {
        return vec![FieldError::invalid(
            path,
            profile,
            "must be a valid seccomp profile",
        )];
    };
    // validateLocalDescendingPath
    let mut errors = Vec::new();
    if local.starts_with('/') {
        errors.push(FieldError::invalid(path, local, "must be a relative path"));
    }
    if local.split('/').any(|part| part == "..") {
        errors.push(FieldError::invalid(path, local, "must not contain '..'"));
    }
    errors
}

/// Whether a container, init container or ephemeral container of `spec` is named `name`.
fn has_container(spec: Option<&Value>, name: &str) -> bool {
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|key| list_at(spec, key))
        .any(|c| str_at(Some(c), "name") == name)
}

/// Every container of `spec` with its path: init containers, containers, then ephemeral
/// containers (`VisitContainersWithPath`).
pub(super) fn containers_with_paths<'a>(
    spec: Option<&'a Value>,
    path: &Path,
) -> Vec<(&'a Value, Path)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|key| {
            list_at(spec, key)
                .iter()
                .enumerate()
                .map(move |(i, c)| (c, path.child(key).index(i)))
        })
        .collect()
}

/// `validateSeccompAnnotationsAndFields`: where an annotation and a field both name a profile,
/// they must agree.
fn seccomp_annotations_match_fields(pod: &Object, path: &Path) -> Vec<FieldError> {
    let Some(annotations) = annotations(pod) else {
        return Vec::new();
    };
    let spec = pod.get("spec");
    let mut errors = Vec::new();
    let pod_profile = spec
        .and_then(|s| s.get("securityContext"))
        .and_then(|c| c.get("seccompProfile"))
        .filter(|p| !p.is_null());
    if let (Some(profile), Some(annotation)) = (
        pod_profile,
        annotations
            .get(SECCOMP_POD_ANNOTATION)
            .and_then(Value::as_str),
    ) {
        errors.extend(seccomp_match(
            annotation,
            profile,
            &path.child("securityContext").child("seccompProfile"),
        ));
    }
    for (container, at) in containers_with_paths(spec, path) {
        let Some(profile) = container
            .get("securityContext")
            .and_then(|c| c.get("seccompProfile"))
            .filter(|p| !p.is_null())
        else {
            continue;
        };
        let key = format!(
            "{SECCOMP_CONTAINER_PREFIX}{}",
            str_at(Some(container), "name")
        );
        if let Some(annotation) = annotations.get(&key).and_then(Value::as_str) {
            errors.extend(seccomp_match(
                annotation,
                profile,
                &at.child("securityContext").child("seccompProfile"),
            ));
        }
    }
    errors
}

/// `validateSeccompAnnotationsAndFieldsMatch`.
fn seccomp_match(annotation: &str, profile: &Value, path: &Path) -> Option<FieldError> {
    let mismatch = |field: &str, what: &str| {
        Some(FieldError::forbidden(
            path.child(field),
            format!("seccomp {what} in annotation and field must match"),
        ))
    };
    match str_at(Some(profile), "type") {
        "Unconfined" if annotation != "unconfined" => mismatch("type", "type"),
        "RuntimeDefault" if !matches!(annotation, "runtime/default" | "docker/default") => {
            mismatch("type", "type")
        }
        "Localhost" => match annotation.strip_prefix("localhost/") {
            None => mismatch("type", "type"),
            Some(local)
                if profile.get("localhostProfile").and_then(Value::as_str) != Some(local) =>
            {
                mismatch("localhostProfile", "profile")
            }
            Some(_) => None,
        },
        _ => None,
    }
}

/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate`: a container's effective profile (its
/// own, else the pod's) must agree with its annotation; Windows pods are not checked.
fn apparmor_annotations_match_fields(pod: &Object, path: &Path) -> Vec<FieldError> {
    let spec = pod.get("spec");
    let Some(annotations) = annotations(pod) else {
        return Vec::new();
    };
    if str_at(spec.and_then(|s| s.get("os")), "name") == "windows" {
        return Vec::new();
    }
    fn profile_of(v: Option<&Value>) -> Option<&Value> {
        v.and_then(|v| v.get("securityContext"))
            .and_then(|c| c.get("appArmorProfile"))
            .filter(|p| !p.is_null())
    }
    let pod_profile = profile_of(spec);
    let mut errors = Vec::new();
    for (container, at) in containers_with_paths(spec, path) {
        let Some(profile) = profile_of(Some(container)).or(pod_profile) else {
            continue;
        };
        let key = format!(
            "{APPARMOR_CONTAINER_PREFIX}{}",
            str_at(Some(container), "name")
        );
        let Some(annotation) = annotations.get(&key).and_then(Value::as_str) else {
            continue;
        };
        let at = at.child("securityContext").child("appArmorProfile");
        let mismatch = |field: &str, what: &str| {
            FieldError::forbidden(
                at.child(field),
                format!("apparmor {what} in annotation and field must match"),
            )
        };
        match str_at(Some(profile), "type") {
            "Unconfined" if annotation != "unconfined" => errors.push(mismatch("type", "type")),
            "RuntimeDefault" if annotation != "runtime/default" => {
                errors.push(mismatch("type", "type"));
            }
            "Localhost" => match annotation.strip_prefix("localhost/") {
                None => errors.push(mismatch("type", "type")),
                Some(local)
                    if profile.get("localhostProfile").and_then(Value::as_str) != Some(local) =>
                {
                    errors.push(mismatch("localhostProfile", "profile"));
                }
                Some(_) => {}
            },
            _ => {}
        }
    }
    errors
}

/// `ValidatePodSpecificAnnotationUpdates`: AppArmor and mirror pod annotations may be neither
/// added, changed nor removed; then the new annotations as on create (so an error of theirs
/// is reported twice on update, as Go does).
fn annotation_updates(new: &Object, old: &Object) -> Vec<FieldError> {
    let path = Path::new("metadata").child("annotations");
    let empty = Map::new();
    let (new_annotations, old_annotations) = (
        annotations(new).unwrap_or(&empty),
        annotations(old).unwrap_or(&empty),
    );
    let guarded =
        |key: &str| key.starts_with(APPARMOR_CONTAINER_PREFIX) || key == MIRROR_ANNOTATION;
    let what = |key: &str| {
        if key == MIRROR_ANNOTATION {
            "mirror pod annotation"
        } else {
            "AppArmor annotations"
        }
    };
    let mut errors = Vec::new();
    for (key, value) in old_annotations {
        if new_annotations.get(key) != Some(value) && guarded(key) {
            errors.push(FieldError::forbidden(
                path.key(key),
                format!("may not remove or update {}", what(key)),
            ));
        }
    }
    for key in new_annotations.keys() {
        if !old_annotations.contains_key(key) && guarded(key) {
            errors.push(FieldError::forbidden(
                path.key(key),
                format!("may not add {}", what(key)),
            ));
        }
    }
    errors.extend(pod_annotations(new, invalid_deletion_cost(old)));
    errors
}

/// `ValidateContainerUpdates`: the same number of containers, each with an image; whether to
/// stop checking.
fn container_updates(new: &[Value], old: &[Value], path: &Path) -> (Vec<FieldError>, bool) {
    if new.len() != old.len() {
        return (
            vec![FieldError::forbidden(
                path,
                "pod updates may not add or remove containers",
            )],
            true,
        );
    }
    let mut errors = Vec::new();
    for (i, container) in new.iter().enumerate() {
        let at = path.index(i);
        if str_at(Some(container), "image").is_empty() {
            errors.push(FieldError::required(at.child("image"), ""));
        }
        errors.extend(image_whitespace(container, &at));
    }
    (errors, false)
}

/// `validateOnlyAddedTolerations`: every old toleration is still there (its
/// `tolerationSeconds` may change), then the new list is validated.
fn only_added_tolerations(new: &[Value], old: &[Value], path: &Path) -> Vec<FieldError> {
    // The struct's fields but `tolerationSeconds`, zero values included.
    let without_seconds =
        |t: &Value| ["key", "operator", "value", "effect"].map(|k| str_at(Some(t), k).to_owned());
    for old_toleration in old {
        let wanted = without_seconds(old_toleration);
        if !new.iter().any(|n| without_seconds(n) == wanted) {
            return vec![FieldError::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    tolerations(new, path)
}

/// `validateOnlyDeletedSchedulingGates`: no gate the old pod lacked. (Go reports them in map
/// order; here in list order.)
fn only_deleted_scheduling_gates(new: &[Value], old: &[Value], path: &Path) -> Vec<FieldError> {
    let old_names: Vec<&str> = old.iter().map(|g| str_at(Some(g), "name")).collect();
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (i, gate) in new.iter().enumerate() {
        let name = str_at(Some(gate), "name");
        if old_names.contains(&name) {
            continue;
        }
        // A name given twice is reported at its last index, as Go's map keeps it.
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = i,
            None => seen.push((name, i)),
        }
    }
    seen.into_iter()
        .map(|(name, i)| {
            FieldError::forbidden(
                path.index(i).child("name"),
                format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            )
        })
        .collect()
}

/// A v1 pod spec as the internal pod holds it: a negative grace period is 1
/// (`Convert_v1_Pod_To_core_Pod`).
fn as_converted(spec: Option<&Value>) -> Value {
    let mut spec = spec.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    if let Value::Object(m) = &mut spec
        && m.get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .is_some_and(|g| g < 0)
    {
        m.insert("terminationGracePeriodSeconds".into(), Value::from(1));
    }
    spec
}

/// `ValidatePodUpdate`'s munging: the new spec with what an update may change taken from the
/// old one (images, active deadline, scheduling gates, tolerations). Its allowance of a grace
/// period set to 1 from a negative one cannot apply: the old pod's reads 1 already.
fn munge_updatable(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    let Value::Object(m) = &mut munged else {
        return munged;
    };
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = m.get_mut(key) {
            let old_list = list_at(Some(old), key);
            for (container, old_container) in containers.iter_mut().zip(old_list) {
                if let Value::Object(c) = container {
                    match old_container.get("image") {
                        Some(image) => c.insert("image".into(), image.clone()),
                        None => c.remove("image"),
                    };
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(key) {
            Some(v) => m.insert(key.into(), v.clone()),
            None => m.remove(key),
        };
    }
    munged
}

/// The gated pod's allowances in `ValidatePodUpdate`: node selector entries and required node
/// affinity may only be added; what was allowed is taken back into `munged` from `old`.
fn gated_node_constraints(munged: &mut Value, old: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Value::Object(m) = munged else {
        return errors;
    };
    let old_selector = old.get("nodeSelector");
    if m.get("nodeSelector") != old_selector {
        let new_selector = m.get("nodeSelector");
        let kept = old_selector
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .all(|(k, v)| new_selector.and_then(|s| s.get(k)) == Some(v));
        if !kept {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("nodeSelector"),
                BadValue::Raw(new_selector.map_or_else(|| "null".into(), go_json)),
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            ));
        }
        match old_selector {
            Some(s) => m.insert("nodeSelector".into(), s.clone()),
            None => m.remove("nodeSelector"),
        };
    }
    let old_affinity = old.get("affinity");
    let old_node = old_affinity.and_then(|a| a.get("nodeAffinity"));
    let new_node = m
        .get("affinity")
        .and_then(|a| a.get("nodeAffinity"))
        .cloned();
    if new_node.as_ref() != old_node {
        errors.extend(node_affinity_mutation(
            new_node.as_ref(),
            old_node,
            &path.child("affinity").child("nodeAffinity"),
        ));
        let new_affinity = m.get("affinity").cloned();
        match (new_affinity, old_node) {
            (None, None) => {}
            (None, Some(node)) => {
                m.insert(
                    "affinity".into(),
                    recon_apimachinery::json!({"nodeAffinity": node}),
                );
            }
            (Some(affinity), _)
                if old_affinity.is_none()
                    && affinity.get("podAffinity").is_none()
                    && affinity.get("podAntiAffinity").is_none() =>
            {
                m.remove("affinity");
            }
            (Some(mut affinity), _) => {
                if let Value::Object(a) = &mut affinity {
                    match old_node {
                        Some(node) => a.insert("nodeAffinity".into(), node.clone()),
                        None => a.remove("nodeAffinity"),
                    };
                }
                m.insert("affinity".into(), affinity);
            }
        }
    }
    errors
}

/// `validateNodeAffinityMutation`: with required terms, the same number of terms, each only
/// gaining requirements.
fn node_affinity_mutation(
    new: Option<&Value>,
    old: Option<&Value>,
    path: &Path,
) -> Vec<FieldError> {
    fn required(v: Option<&Value>) -> Option<&Value> {
        v.and_then(|n| n.get("requiredDuringSchedulingIgnoredDuringExecution"))
            .filter(|r| !r.is_null())
    }
    let Some(old_required) = required(old) else {
        return Vec::new();
    };
    let old_terms = list_at(Some(old_required), "nodeSelectorTerms");
    let new_terms = list_at(required(new), "nodeSelectorTerms");
    let terms_path = path
        .child("requiredDuringSchedulingIgnoredDuringExecution")
        .child("nodeSelectorTerms");
    let terms_value = |terms: &[Value]| {
        let given = required(new).and_then(|r| r.get("nodeSelectorTerms"));
        if given.is_none_or(Value::is_null) {
            return "null".to_owned();
        }
        let list: Vec<String> = terms
            .iter()
            .map(|t| internal::marshal("core.NodeSelectorTerm", Some(t), Source::Decoded))
            .collect();
        format!("[{}]", list.join(","))
    };
    if !old_terms.is_empty() && old_terms.len() != new_terms.len() {
        return vec![FieldError::new(
            ErrorType::Invalid,
            terms_path,
            BadValue::Raw(terms_value(new_terms)),
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
        )];
    }
    let mut errors = Vec::new();
    for (i, (new_term, old_term)) in new_terms.iter().zip(old_terms).enumerate() {
        if !only_additions(new_term, old_term) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                terms_path.index(i),
                BadValue::Raw(internal::marshal(
                    "core.NodeSelectorTerm",
                    Some(new_term),
                    Source::Decoded,
                )),
                "only additions are allowed (no mutations or deletions)",
            ));
        }
    }
    errors
}

/// `validateNodeSelectorTermHasOnlyAdditions`: the old expressions and fields are the new
/// ones' first entries.
fn only_additions(new: &Value, old: &Value) -> bool {
    ["matchExpressions", "matchFields"].iter().all(|key| {
        let (new_list, old_list) = (list_at(Some(new), key), list_at(Some(old), key));
        old_list.len() <= new_list.len() && old_list.iter().zip(new_list).all(|(o, n)| o == n)
    })
}

/// `validatePodConditions`: non-negative generations; a type other than the kubelet's own is
/// a qualified name (the path says `Type`, as Go names it).
fn conditions(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, condition) in list.iter().enumerate() {
        let at = path.index(i);
        if let Some(g) = int_at(Some(condition), "observedGeneration").filter(|g| *g < 0) {
            errors.push(invalid_number(
                &at.child("observedGeneration"),
                g,
                "must be a non-negative integer",
            ));
        }
        let ty = str_at(Some(condition), "type");
        if matches!(ty, "PodScheduled" | "Ready" | "Initialized") {
            continue;
        }
        for message in label_key_errors(ty) {
            errors.push(FieldError::invalid(at.child("Type"), ty, message));
        }
    }
    errors
}

/// `ValidateContainerStateTransition` / `ValidateInitContainerStateTransition` with restart
/// policy rules on: a terminated container may run again only if it would be restarted.
fn state_transitions(
    new: &[Value],
    old: &[Value],
    spec: Option<&Value>,
    init: bool,
    path: &Path,
) -> Vec<FieldError> {
    if restarts_all_containers(spec) {
        return Vec::new();
    }
    let containers = list_at(spec, if init { "initContainers" } else { "containers" });
    let mut errors = Vec::new();
    for (i, old_status) in old.iter().enumerate() {
        let Some(old_terminated) = terminated(old_status) else {
            continue;
        };
        let name = str_at(Some(old_status), "name");
        let exit_code = int_at(Some(old_terminated), "exitCode").unwrap_or(0);
        let Some(_) = new
            .iter()
            .find(|s| str_at(Some(s), "name") == name && terminated(s).is_none())
        else {
            continue;
        };
        let allowed = containers
            .iter()
            .find(|c| str_at(Some(c), "name") == name)
            .is_some_and(|c| should_restart(c, spec, exit_code));
        if !allowed {
            errors.push(FieldError::forbidden(
                path.index(i).child("state"),
                "may not be transitioned to non-terminated state",
            ));
        }
    }
    errors
}

/// `ValidateEphemeralContainerStateTransition`: an ephemeral container never runs again.
fn ephemeral_state_transitions(new: &[Value], old: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, old_status) in old.iter().enumerate() {
        if terminated(old_status).is_none() {
            continue;
        }
        let name = str_at(Some(old_status), "name");
        for new_status in new {
            if str_at(Some(new_status), "name") == name && terminated(new_status).is_none() {
                errors.push(FieldError::forbidden(
                    path.index(i).child("state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
    errors
}

fn terminated(status: &Value) -> Option<&Value> {
    status
        .get("state")
        .and_then(|s| s.get("terminated"))
        .filter(|t| !t.is_null())
}

/// `AllContainersCouldRestart`: some container's rule restarts all of them.
fn restarts_all_containers(spec: Option<&Value>) -> bool {
    ["initContainers", "containers"]
        .iter()
        .flat_map(|key| list_at(spec, key))
        .flat_map(|c| list_at(Some(c), "restartPolicyRules"))
        .any(|rule| str_at(Some(rule), "action") == "RestartAllContainers")
}

/// `ContainerShouldRestart`: the first rule matching the exit code, else the container's own
/// policy, else the pod's (Always when unset).
fn should_restart(container: &Value, spec: Option<&Value>, exit_code: i64) -> bool {
    let by_policy = |policy: &str| match policy {
        "Always" => Some(true),
        "OnFailure" => Some(exit_code != 0),
        "Never" => Some(false),
        _ => None,
    };
    if let Some(policy) = container.get("restartPolicy").and_then(Value::as_str) {
        let rule = list_at(Some(container), "restartPolicyRules")
            .iter()
            .find(|rule| {
                let Some(codes) = rule.get("exitCodes").filter(|c| !c.is_null()) else {
                    return false;
                };
                let listed = list_at(Some(codes), "values")
                    .iter()
                    .any(|v| v.as_i64() == Some(exit_code));
                match str_at(Some(codes), "operator") {
                    "In" => listed,
                    "NotIn" => !listed,
                    _ => false,
                }
            });
        if let Some(rule) = rule
            && matches!(
                str_at(Some(rule), "action"),
                "Restart" | "RestartAllContainers"
            )
        {
            return true;
        }
        if let Some(restart) = by_policy(policy) {
            return restart;
        }
    }
    by_policy(str_at(spec, "restartPolicy")).unwrap_or(true)
}

/// `validatePodIPs`: each new address valid (old ones may stay), at most one per family.
fn pod_ips(status: Option<&Value>, old_status: Option<&Value>, path: &Path) -> Vec<FieldError> {
    ip_list(
        status,
        old_status,
        "podIPs",
        "core.PodIP",
        path.child("podIPs"),
    )
}

/// `validateHostIPs`: as pod IPs, and the first is `hostIP`.
fn host_ips(status: Option<&Value>, old_status: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let list = list_at(status, "hostIPs");
    let Some(first) = list.first() else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    let first_ip = str_at(Some(first), "ip");
    if str_at(status, "hostIP") != first_ip {
        errors.push(FieldError::invalid(
            path.child("hostIPs").index(0).child("ip"),
            first_ip,
            "must be equal to `hostIP`",
        ));
    }
    errors.extend(ip_list(
        status,
        old_status,
        "hostIPs",
        "core.HostIP",
        path.child("hostIPs"),
    ));
    errors
}

/// The address checks `validatePodIPs` and `validateHostIPs` share.
fn ip_list(
    status: Option<&Value>,
    old_status: Option<&Value>,
    key: &str,
    internal_type: &str,
    path: Path,
) -> Vec<FieldError> {
    let list = list_at(status, key);
    let old: Vec<&str> = list_at(old_status, key)
        .iter()
        .map(|ip| str_at(Some(ip), "ip"))
        .collect();
    let mut errors = Vec::new();
    for (i, ip) in list.iter().enumerate() {
        errors.extend(legacy_ip_errors(str_at(Some(ip), "ip"), &path.index(i), &old).1);
    }
    if list.len() > 1 {
        // netutils.IsDualStackIPStrings: every address parses, both families present.
        let mut families = (false, false);
        let mut unparsed = None;
        for (i, ip) in list.iter().enumerate() {
            let text = str_at(Some(ip), "ip");
            match super::service_addresses::sloppy_ip(text) {
                Some(addr) if addr.to_canonical().is_ipv4() => families.0 = true,
                Some(_) => families.1 = true,
                None => {
                    unparsed = Some(format!("invalid IP[{i}]: {text}"));
                    break;
                }
            }
        }
        if let Some(reason) = &unparsed {
            errors.push(FieldError::new(
                ErrorType::Internal,
                &path,
                BadValue::Omit,
                format!("failed to check for dual stack with error:{reason}"),
            ));
        }
        if unparsed.is_some() || !(families.0 && families.1) || list.len() > 2 {
            let items: Vec<String> = list
                .iter()
                .map(|ip| internal::marshal(internal_type, Some(ip), Source::Decoded))
                .collect();
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path,
                BadValue::Raw(format!("[{}]", items.join(","))),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    errors
}

/// `field.Invalid` with a number.
fn invalid_number(path: &Path, value: i64, detail: &str) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(value.to_string()),
        detail,
    )
}
