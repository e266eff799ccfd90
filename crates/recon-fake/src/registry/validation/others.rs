//! networking.k8s.io, policy, autoscaling, rbac.authorization.k8s.io and coordination.k8s.io
//! (`pkg/apis/<group>/validation`).

use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, path_segment_errors,
};
use serde_json::{Value, json};

use super::core::{port_name_errors, port_num_errors};
use super::read::{list_at, str_at};
use crate::field::Path;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::Object;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

pub(super) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match (group, kind) {
        (RBAC_GROUP, "Role") => validate_rules(obj, true),
        (RBAC_GROUP, "ClusterRole") => validate_cluster_role(obj),
        (RBAC_GROUP, "RoleBinding") => validate_binding(obj, true),
        (RBAC_GROUP, "ClusterRoleBinding") => validate_binding(obj, false),
        ("policy", "PodDisruptionBudget") => validate_pdb(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => validate_hpa(obj, None),
        ("coordination.k8s.io", "Lease") => validate_lease(obj),
        ("networking.k8s.io", "NetworkPolicy") => validate_network_policy(obj),
        ("networking.k8s.io", "Ingress") => validate_ingress(obj, None),
        _ => Vec::new(),
    }
}

pub(super) fn validate_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    let mut errors = match (group, kind) {
        ("networking.k8s.io", "Ingress") => validate_ingress(new, Some(old)),
        // ValidateHorizontalPodAutoscalerUpdate, with what the old one allows.
        ("autoscaling", "HorizontalPodAutoscaler") => validate_hpa(new, Some(old)),
        _ => validate_create(group, kind, new),
    };
    // `ValidateRoleBindingUpdate`, `ValidateClusterRoleBindingUpdate`.
    if group == RBAC_GROUP
        && matches!(kind, "RoleBinding" | "ClusterRoleBinding")
        && new.get("roleRef") != old.get("roleRef")
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "roleRef",
            BadValue::Raw(role_ref_json(new)),
            "cannot change roleRef",
        ));
    }
    errors
}

pub(super) fn validate_status_update(
    group: &str,
    kind: &str,
    new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    match (group, kind) {
        // ValidateHorizontalPodAutoscalerStatusUpdate: two counters, and not the spec (which
        // the status strategy keeps as it was).
        ("autoscaling", "HorizontalPodAutoscaler") => {
            let status = new.get("status");
            ["currentReplicas", "desiredReplicas"]
                .into_iter()
                .filter_map(|key| {
                    let n = status.and_then(|s| s.get(key)).and_then(Value::as_i64)?;
                    (n < 0).then(|| {
                        FieldError::new(
                            ErrorType::Invalid,
                            Path::new("status").child(key),
                            raw_int(n),
                            "must be greater than or equal to 0",
                        )
                    })
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// An integer field printed as `field.Error` prints numbers.
fn raw_int(n: i64) -> BadValue {
    BadValue::Raw(n.to_string())
}

/// `ValidateRole` / the rules of `ValidateClusterRole`: `ValidatePolicyRule` for each.
fn validate_rules(obj: &Object, namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rules = obj.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errors.extend(policy_rule_errors(
            rule,
            namespaced,
            &Path::new("rules").index(i),
        ));
    }
    errors
}

/// `ValidatePolicyRule`.
fn policy_rule_errors(rule: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rule = Some(rule);
    if list_at(rule, "verbs").is_empty() {
        errors.push(FieldError::required(
            path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = list_at(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let value = BadValue::Raw(Value::Array(urls.to_vec()).to_string());
        if namespaced {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("nonResourceURLs"),
                value.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| !list_at(rule, k).is_empty())
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child("nonResourceURLs"),
                value,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errors;
    }
    if list_at(rule, "apiGroups").is_empty() {
        errors.push(FieldError::required(
            path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_at(rule, "resources").is_empty() {
        errors.push(FieldError::required(
            path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errors
}

/// `ValidateClusterRole`: the rules, then an aggregation rule needs selectors.
fn validate_cluster_role(obj: &Object) -> Vec<FieldError> {
    let mut errors = validate_rules(obj, false);
    if let Some(rule) = obj.get("aggregationRule").filter(|v| !v.is_null())
        && list_at(Some(rule), "clusterRoleSelectors").is_empty()
    {
        errors.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    errors
}

/// The internal `rbac.RoleRef` (no JSON tags) as `field.Error` prints it.
fn role_ref_json(obj: &Object) -> String {
    let role_ref = obj.get("roleRef");
    format!(
        "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
        json!(str_at(role_ref, "apiGroup")),
        json!(str_at(role_ref, "kind")),
        json!(str_at(role_ref, "name")),
    )
}

/// `ValidateRoleBinding` (namespaced) and `ValidateClusterRoleBinding`.
fn validate_binding(obj: &Object, namespaced: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let role_ref = obj.get("roleRef");
    let group = str_at(role_ref, "apiGroup");
    if group != RBAC_GROUP {
        errors.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[RBAC_GROUP],
        ));
    }
    let kind = str_at(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errors.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = str_at(role_ref, "name");
    if name.is_empty() {
        errors.push(FieldError::required("roleRef.name", ""));
    } else {
        for message in path_segment_errors(name, false) {
            errors.push(FieldError::invalid("roleRef.name", name, message));
        }
    }
    let subjects = obj.get("subjects").and_then(Value::as_array);
    for (i, subject) in subjects.into_iter().flatten().enumerate() {
        errors.extend(subject_errors(
            subject,
            namespaced,
            &Path::new("subjects").index(i),
        ));
    }
    errors
}

/// `ValidateRoleBindingSubject`.
fn subject_errors(subject: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let subject = Some(subject);
    let name = str_at(subject, "name");
    if name.is_empty() {
        errors.push(FieldError::required(path.child("name"), ""));
    }
    let group = str_at(subject, "apiGroup");
    match str_at(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for message in dns1123_subdomain_name_errors(name) {
                    errors.push(FieldError::invalid(path.child("name"), name, message));
                }
            }
            if !group.is_empty() {
                errors.push(FieldError::not_supported(
                    path.child("apiGroup"),
                    group,
                    &[""],
                ));
            }
            if !namespaced && str_at(subject, "namespace").is_empty() {
                errors.push(FieldError::required(path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != RBAC_GROUP {
                errors.push(FieldError::not_supported(
                    path.child("apiGroup"),
                    group,
                    &[RBAC_GROUP],
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errors
}

/// An `intstr.IntOrString` as `field.Error` prints it: a number, or a quoted string.
fn int_or_string_value(v: &Value) -> BadValue {
    match v {
        Value::String(s) => BadValue::Str(s.clone()),
        other => BadValue::Raw(other.to_string()),
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of apps validation.
fn int_or_percent_errors(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match v {
        Value::String(s) => {
            let digits = s.strip_suffix('%').unwrap_or("");
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    int_or_string_value(v),
                    "a valid percent string must be a numeric string followed by an ending '%' \
                     (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
            } else if digits.parse::<u64>().map_or(true, |p| p > 100) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    int_or_string_value(v),
                    "must not be greater than 100%",
                ));
            }
        }
        other => {
            let n = other.as_i64().unwrap_or(0);
            if n < 0 {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    raw_int(n),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    errors
}

/// `ValidatePodDisruptionBudgetSpec` (the selector's own rules aside).
fn validate_pdb(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let field = |key: &str| spec.and_then(|s| s.get(key)).filter(|v| !v.is_null());
    let (min, max) = (field("minAvailable"), field("maxUnavailable"));
    if min.is_some() && max.is_some() {
        // The internal spec (no JSON tags) is the value.
        let null = Value::Null;
        let value = format!(
            "{{\"MinAvailable\":{},\"Selector\":{},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
            min.unwrap_or(&null),
            field("selector").unwrap_or(&null),
            max.unwrap_or(&null),
            field("unhealthyPodEvictionPolicy").unwrap_or(&null),
        );
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec",
            BadValue::Raw(value),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if let Some(min) = min {
        errors.extend(int_or_percent_errors(min, "spec.minAvailable"));
    }
    if let Some(max) = max {
        errors.extend(int_or_percent_errors(max, "spec.maxUnavailable"));
    }
    if let Some(policy) = field("unhealthyPodEvictionPolicy") {
        let policy = policy.as_str().unwrap_or("");
        if policy != "AlwaysAllow" && policy != "IfHealthyBudget" {
            errors.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errors
}

/// `CrossVersionObjectReferenceValidationOptions`.
#[derive(Clone, Copy)]
struct RefOptions {
    /// The apiVersion may name no group.
    allow_empty_group: bool,
    /// The apiVersion is not checked at all.
    allow_invalid_api_version: bool,
}

/// `HorizontalPodAutoscalerSpecValidationOptions`.
struct HpaOptions {
    min_replicas_lower_bound: i64,
    scale_target: RefOptions,
    object_metrics: RefOptions,
}

impl HpaOptions {
    /// `validationOptionsForHorizontalPodAutoscaler` (`HPAScaleToZero` is off in 1.36): what
    /// an update may keep of the old HPA (`old`) that a create would refuse.
    fn of(new: &Object, old: Option<&Object>) -> Self {
        let old_spec = old.and_then(|o| o.get("spec"));
        fn target(spec: Option<&Value>) -> (&str, &str) {
            let t = spec.and_then(|s| s.get("scaleTargetRef"));
            (str_at(t, "apiVersion"), str_at(t, "kind"))
        }
        let new_target = target(new.get("spec"));
        let mut scale_target = RefOptions {
            allow_empty_group: false,
            allow_invalid_api_version: false,
        };
        if old.is_some() && target(old_spec) == new_target {
            // An update that keeps the target's kind and apiVersion does not check them.
            scale_target.allow_invalid_api_version = true;
        } else if new_target.1 == "ReplicationController" {
            // The only scalable kind of the core group may leave the group out.
            scale_target.allow_empty_group = true;
        }
        let mut object_metrics = RefOptions {
            allow_empty_group: true,
            allow_invalid_api_version: false,
        };
        // Object metrics the old HPA already had with an invalid apiVersion are tolerated.
        object_metrics.allow_invalid_api_version = list_at(old_spec, "metrics").iter().any(|m| {
            let object = m.get("object").filter(|o| !o.is_null());
            str_at(Some(m), "type") == "Object"
                && object.is_some_and(|o| {
                    let described = o.get("describedObject");
                    api_version_error(str_at(described, "apiVersion"), object_metrics).is_some()
                })
        });
        let old_min = old_spec
            .and_then(|s| s.get("minReplicas"))
            .and_then(Value::as_i64);
        HpaOptions {
            min_replicas_lower_bound: if old_min == Some(0) { 0 } else { 1 },
            scale_target,
            object_metrics,
        }
    }
}

/// `validateHorizontalPodAutoscalerSpec`: replica bounds, the scale target, the metrics and
/// the behavior, with the options of a create (`old` is `None`) or an update.
fn validate_hpa(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let opts = HpaOptions::of(obj, old);
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let int = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_i64);
    let min = int("minReplicas");
    let max = int("maxReplicas").unwrap_or(0);
    let lower = opts.min_replicas_lower_bound;
    if let Some(min) = min.filter(|m| *m < lower) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.minReplicas",
            raw_int(min),
            format!("must be greater than or equal to {lower}"),
        ));
    }
    if max == 0 {
        errors.push(FieldError::required(
            "spec.maxReplicas",
            "must be set and greater than 0",
        ));
    } else if max < 0 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.maxReplicas",
            raw_int(max),
            "must be greater than or equal to 1",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.maxReplicas",
            raw_int(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errors.extend(cross_version_ref_errors(
        spec.and_then(|s| s.get("scaleTargetRef")),
        &Path::new("spec").child("scaleTargetRef"),
        opts.scale_target,
    ));
    errors.extend(metrics_errors(spec, min, opts.object_metrics));
    errors.extend(behavior_errors(spec));
    errors
}

/// `ValidateCrossVersionObjectReference`, with the strategy's options.
fn cross_version_ref_errors(
    target: Option<&Value>,
    path: &Path,
    opts: RefOptions,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in ["kind", "name"] {
        let value = str_at(target, key);
        if value.is_empty() {
            errors.push(FieldError::required(path.child(key), ""));
        } else {
            for message in path_segment_errors(value, false) {
                errors.push(FieldError::invalid(path.child(key), value, message));
            }
        }
    }
    let api_version = str_at(target, "apiVersion");
    if let Some(message) = api_version_error(api_version, opts) {
        errors.push(FieldError::invalid(
            path.child("apiVersion"),
            api_version,
            message,
        ));
    }
    errors
}

/// `ValidateAPIVersion`: `schema.ParseGroupVersion`, then the group is required unless allowed
/// to be empty.
fn api_version_error(api_version: &str, opts: RefOptions) -> Option<String> {
    if opts.allow_invalid_api_version {
        return None;
    }
    let no_group = "apiVersion must specify API group".to_owned();
    match api_version.matches('/').count() {
        0 => (!opts.allow_empty_group).then_some(no_group),
        1 => (api_version.starts_with('/') && !opts.allow_empty_group).then_some(no_group),
        _ => Some(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// `validateMetrics`: each metric, then scaling to zero needs an Object or External metric.
fn metrics_errors(spec: Option<&Value>, min: Option<i64>, opts: RefOptions) -> Vec<FieldError> {
    let path = Path::new("spec").child("metrics");
    let metrics = list_at(spec, "metrics");
    let mut errors = Vec::new();
    for (i, metric) in metrics.iter().enumerate() {
        errors.extend(metric_spec_errors(metric, &path.index(i), opts));
    }
    let external = metrics
        .iter()
        .any(|m| matches!(str_at(Some(m), "type"), "Object" | "External"));
    if min == Some(0) && !external {
        errors.push(FieldError::forbidden(
            &path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errors
}

/// `validateMetricSpec`: a known type, the source it names, and no other source. An unknown
/// type is reported twice, as the real one reports it.
fn metric_spec_errors(metric: &Value, path: &Path, opts: RefOptions) -> Vec<FieldError> {
    const TYPES: [&str; 5] = [
        "ContainerResource",
        "External",
        "Object",
        "Pods",
        "Resource",
    ];
    // The sources in the order they are checked, with the type naming each.
    const SOURCES: [(&str, &str); 5] = [
        ("object", "Object"),
        ("external", "External"),
        ("pods", "Pods"),
        ("resource", "Resource"),
        ("containerResource", "ContainerResource"),
    ];
    let mut errors = Vec::new();
    let ty = str_at(Some(metric), "type");
    let type_path = path.child("type");
    if ty.is_empty() {
        errors.push(FieldError::required(
            &type_path,
            "must specify a metric source type",
        ));
    }
    if !TYPES.contains(&ty) {
        errors.push(FieldError::not_supported(&type_path, ty, &TYPES));
    }
    let present: Vec<&str> = SOURCES
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| metric.get(*key).is_some_and(|v| !v.is_null()))
        .collect();
    // Only the first source present is validated.
    if let Some(first) = present.first()
        && let Some(source) = metric.get(*first)
    {
        let source_path = path.child(first);
        errors.extend(match *first {
            "object" => object_source_errors(source, &source_path, opts),
            "external" => external_source_errors(source, &source_path),
            "pods" => pods_source_errors(source, &source_path),
            "resource" => resource_source_errors(source, &source_path, false),
            _ => resource_source_errors(source, &source_path, true),
        });
    }
    let expected = SOURCES.iter().find(|(_, t)| *t == ty).map(|(key, _)| *key);
    match expected {
        Some(key) if !present.contains(&key) => errors.push(FieldError::required(
            path.child(key),
            "must populate information for the given metric source",
        )),
        Some(_) => {}
        None => errors.push(FieldError::not_supported(&type_path, ty, &TYPES)),
    }
    if present.len() > 1 {
        // Go ranges over a set here; its order is not fixed, so sorted is as good as any.
        let mut others: Vec<&str> = present
            .iter()
            .copied()
            .filter(|key| Some(*key) != expected)
            .collect();
        others.sort_unstable();
        for key in others {
            errors.push(FieldError::forbidden(
                path.child(key),
                "must populate the given metric source only",
            ));
        }
    }
    errors
}

/// The sign of a quantity as written (`Quantity.Sign`): -1, 0 or 1; `None` if it is not one.
fn quantity_sign(text: &str) -> Option<i32> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let mantissa: &str = rest
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap_or("");
    if !mantissa.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if mantissa.bytes().all(|b| b == b'0' || b == b'.') {
        return Some(0);
    }
    Some(if negative { -1 } else { 1 })
}

/// `validateMetricTarget`.
fn metric_target_errors(target: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ty = str_at(target, "type");
    if ty.is_empty() {
        errors.push(FieldError::required(
            path.child("type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errors.push(FieldError::invalid(
            path.child("type"),
            ty,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        let Some(quantity) = target.and_then(|t| t.get(key)).filter(|v| !v.is_null()) else {
            continue;
        };
        let text = quantity
            .as_str()
            .map_or_else(|| quantity.to_string(), str::to_owned);
        if quantity_sign(&text) != Some(1) {
            errors.push(FieldError::invalid(
                path.child(key),
                &text,
                "must be positive",
            ));
        }
    }
    if let Some(utilization) = target
        .and_then(|t| t.get("averageUtilization"))
        .and_then(Value::as_i64)
        .filter(|u| *u < 1)
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("averageUtilization"),
            raw_int(utilization),
            "must be greater than 0",
        ));
    }
    errors
}

/// `validateMetricIdentifier`.
fn metric_identifier_errors(metric: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let name = str_at(metric, "name");
    if name.is_empty() {
        return vec![FieldError::required(
            path.child("name"),
            "must specify a metric name",
        )];
    }
    path_segment_errors(name, false)
        .into_iter()
        .map(|message| FieldError::invalid(path.child("name"), name, message))
        .collect()
}

fn target_has(source: &Value, key: &str) -> bool {
    source
        .get("target")
        .and_then(|t| t.get(key))
        .is_some_and(|v| !v.is_null())
}

/// `validateObjectSource`.
fn object_source_errors(source: &Value, path: &Path, opts: RefOptions) -> Vec<FieldError> {
    let mut errors = cross_version_ref_errors(
        source.get("describedObject"),
        &path.child("describedObject"),
        opts,
    );
    errors.extend(metric_identifier_errors(
        source.get("metric"),
        &path.child("metric"),
    ));
    errors.extend(metric_target_errors(
        source.get("target"),
        &path.child("target"),
    ));
    if !target_has(source, "value") && !target_has(source, "averageValue") {
        errors.push(FieldError::required(
            path.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errors
}

/// `validateExternalSource`.
fn external_source_errors(source: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = metric_identifier_errors(source.get("metric"), &path.child("metric"));
    errors.extend(metric_target_errors(
        source.get("target"),
        &path.child("target"),
    ));
    let (value, average) = (
        target_has(source, "value"),
        target_has(source, "averageValue"),
    );
    if !value && !average {
        errors.push(FieldError::required(
            path.child("target").child("averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errors.push(FieldError::forbidden(
            path.child("target").child("value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errors
}

/// `validatePodsSource`.
fn pods_source_errors(source: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = metric_identifier_errors(source.get("metric"), &path.child("metric"));
    errors.extend(metric_target_errors(
        source.get("target"),
        &path.child("target"),
    ));
    if !target_has(source, "averageValue") {
        errors.push(FieldError::required(
            path.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errors
}

/// `validateResourceName` (core/v1): a qualified name; unprefixed, a standard resource (huge
/// pages included, with or without `requests.`).
pub(super) fn resource_name_errors(name: &str) -> Vec<String> {
    const STANDARD: [&str; 20] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let mut errors = label_key_errors(name);
    if errors.is_empty()
        && !name.contains('/')
        && !STANDARD.contains(&name)
        && !name.starts_with("hugepages-")
        && !name.starts_with("requests.hugepages-")
    {
        errors.push("must be a standard resource type or fully qualified".to_owned());
    }
    errors
}

/// `helper.IsExtendedResourceName`: outside `kubernetes.io/`, not `requests.`-prefixed, and a
/// qualified name once prefixed with `requests.` (the name quota gives it).
pub(super) fn is_extended_resource_name(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native
        && !name.starts_with("requests.")
        && label_key_errors(&format!("requests.{name}")).is_empty()
}

/// `ValidateContainerResourceName` (core/v1): [`resource_name_errors`]; unprefixed, one a
/// container can request; prefixed outside `kubernetes.io/`, an extended resource name.
pub(super) fn container_resource_name_errors(name: &str) -> Vec<String> {
    let mut errors = resource_name_errors(name);
    if !name.contains('/') {
        let for_containers = ["cpu", "memory", "ephemeral-storage"].contains(&name)
            || name.starts_with("hugepages-");
        if !for_containers {
            errors.push("must be a standard resource for containers".to_owned());
        }
    } else if !name.contains("kubernetes.io/") && !is_extended_resource_name(name) {
        errors.push("doesn't follow extended resource name standard".to_owned());
    }
    errors
}

/// `validateResourceSource`, and with `container` `validateContainerResourceSource`.
fn resource_source_errors(source: &Value, path: &Path, container: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(Some(source), "name");
    if name.is_empty() {
        errors.push(FieldError::required(
            path.child("name"),
            "must specify a resource name",
        ));
    } else if container {
        for message in container_resource_name_errors(name) {
            errors.push(FieldError::invalid(path.child("name"), name, message));
        }
    }
    if container {
        let name = str_at(Some(source), "container");
        if name.is_empty() {
            errors.push(FieldError::required(
                path.child("container"),
                "must specify a container",
            ));
        }
        for message in dns1123_label_errors(name)
            .into_iter()
            .filter(|_| !name.is_empty())
        {
            errors.push(FieldError::invalid(path.child("container"), name, message));
        }
    }
    errors.extend(metric_target_errors(
        source.get("target"),
        &path.child("target"),
    ));
    let (utilization, average) = (
        target_has(source, "averageUtilization"),
        target_has(source, "averageValue"),
    );
    if !utilization && !average {
        errors.push(FieldError::required(
            path.child("target").child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errors.push(FieldError::forbidden(
            path.child("target").child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errors
}

/// `validateBehavior`: the scale-up rules, then the scale-down ones.
fn behavior_errors(spec: Option<&Value>) -> Vec<FieldError> {
    let Some(behavior) = spec
        .and_then(|s| s.get("behavior"))
        .filter(|b| !b.is_null())
    else {
        return Vec::new();
    };
    let path = Path::new("spec").child("behavior");
    let mut errors = Vec::new();
    for key in ["scaleUp", "scaleDown"] {
        if let Some(rules) = behavior.get(key).filter(|r| !r.is_null()) {
            errors.extend(scaling_rules_errors(rules, &path.child(key)));
        }
    }
    errors
}

/// `validateScalingRules` (`MaxStabilizationWindowSeconds` is an hour).
fn scaling_rules_errors(rules: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let window_path = path.child("stabilizationWindowSeconds");
    if let Some(window) = rules
        .get("stabilizationWindowSeconds")
        .and_then(Value::as_i64)
    {
        if window < 0 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &window_path,
                raw_int(window),
                "must be greater than or equal to zero",
            ));
        }
        if window > 3600 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &window_path,
                raw_int(window),
                "must be less than or equal to 3600",
            ));
        }
    }
    if let Some(policy) = rules.get("selectPolicy").and_then(Value::as_str)
        && !matches!(policy, "Disabled" | "Max" | "Min")
    {
        errors.push(FieldError::not_supported(
            path.child("selectPolicy"),
            policy,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies_path = path.child("policies");
    let policies = list_at(Some(rules), "policies");
    if policies.is_empty() {
        errors.push(FieldError::required(
            &policies_path,
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        errors.extend(scaling_policy_errors(policy, &policies_path.index(i)));
    }
    // `ValidateNonnegativeQuantity` of the tolerance.
    if let Some(tolerance) = rules.get("tolerance").and_then(Value::as_str)
        && quantity_sign(tolerance) == Some(-1)
    {
        errors.push(FieldError::invalid(
            path.child("tolerance"),
            tolerance,
            "must be greater than or equal to 0",
        ));
    }
    errors
}

/// `validateScalingPolicy` (`MaxPeriodSeconds` is half an hour).
fn scaling_policy_errors(policy: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ty = str_at(Some(policy), "type");
    if !matches!(ty, "Pods" | "Percent") {
        errors.push(FieldError::not_supported(
            path.child("type"),
            ty,
            &["Percent", "Pods"],
        ));
    }
    let int = |key: &str| policy.get(key).and_then(Value::as_i64).unwrap_or(0);
    let (value, period) = (int("value"), int("periodSeconds"));
    if value <= 0 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("value"),
            raw_int(value),
            "must be greater than zero",
        ));
    }
    if period <= 0 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("periodSeconds"),
            raw_int(period),
            "must be greater than zero",
        ));
    }
    if period > 1800 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("periodSeconds"),
            raw_int(period),
            "must be less than or equal to 1800",
        ));
    }
    errors
}

/// `ValidateLeaseSpec`.
fn validate_lease(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let int = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_i64);
    if let Some(duration) = int("leaseDurationSeconds").filter(|d| *d <= 0) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.leaseDurationSeconds",
            raw_int(duration),
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = int("leaseTransitions").filter(|t| *t < 0) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.leaseTransitions",
            raw_int(transitions),
            "must be greater than or equal to 0",
        ));
    }
    // `preferredHolder` and `strategy` belong to the CoordinatedLeaderElection feature, off in
    // 1.36: the strategy drops them before validation, so their rule never fires.
    errors
}

/// `ValidateNetworkPolicySpec`: ports, peers and policy types (the selectors' and IP blocks'
/// own rules are not checked here).
fn validate_network_policy(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let spec_path = Path::new("spec");
    for (direction, peers_key) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list_at(spec, direction).iter().enumerate() {
            let rule_path = spec_path.child(direction).index(i);
            for (j, port) in list_at(Some(rule), "ports").iter().enumerate() {
                errors.extend(network_policy_port_errors(
                    port,
                    &rule_path.child("ports").index(j),
                ));
            }
            for (j, peer) in list_at(Some(rule), peers_key).iter().enumerate() {
                errors.extend(network_policy_peer_errors(
                    peer,
                    &rule_path.child(peers_key).index(j),
                ));
            }
        }
    }
    let types = list_at(spec, "policyTypes");
    let types_path = spec_path.child("policyTypes");
    if types.len() > 2 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &types_path,
            BadValue::Raw(Value::Array(types.to_vec()).to_string()),
            "may not specify more than two policyTypes",
        ));
        return errors;
    }
    for (i, ty) in types.iter().enumerate() {
        let ty = ty.as_str().unwrap_or("");
        if ty != "Ingress" && ty != "Egress" {
            errors.push(FieldError::not_supported(
                types_path.index(i),
                ty,
                &["Ingress", "Egress"],
            ));
        }
    }
    errors
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port_errors(port: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str)
        && !["TCP", "UDP", "SCTP"].contains(&protocol)
    {
        errors.push(FieldError::not_supported_named(
            path.child("protocol"),
            protocol,
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    let end_path = path.child("endPort");
    match port.get("port").filter(|v| !v.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &end_path,
                    raw_int(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for message in port_name_errors(name) {
                errors.push(FieldError::invalid(path.child("port"), name, message));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            for message in port_num_errors(number) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path.child("port"),
                    raw_int(number),
                    message,
                ));
            }
            if let Some(end) = end {
                if end < number {
                    // The real one prints `port` as the value.
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &end_path,
                        raw_int(number),
                        "must be greater than or equal to `port`",
                    ));
                }
                for message in port_num_errors(end) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &end_path,
                        raw_int(end),
                        message,
                    ));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &end_path,
                    raw_int(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errors
}

/// `ValidateNetworkPolicyPeer`: one kind of peer, an IP block alone.
fn network_policy_peer_errors(peer: &Value, path: &Path) -> Vec<FieldError> {
    let set = |key: &str| peer.get(key).is_some_and(|v| !v.is_null());
    let count = ["podSelector", "namespaceSelector", "ipBlock"]
        .iter()
        .filter(|k| set(k))
        .count();
    if count == 0 {
        vec![FieldError::required(path, "must specify a peer")]
    } else if count > 1 && set("ipBlock") {
        vec![FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateIngressSpec`: rules or a default backend, hosts, paths, backends and TLS (wildcard
/// rule hosts are not checked here); `old` on update.
fn validate_ingress(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let spec_path = Path::new("spec");
    let rules = list_at(spec, "rules");
    let backend = spec
        .and_then(|s| s.get("defaultBackend"))
        .filter(|v| !v.is_null());
    if rules.is_empty() && backend.is_none() {
        let value = if spec.and_then(|s| s.get("rules")).is_some() {
            "[]"
        } else {
            "null"
        };
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec",
            BadValue::Raw(value.to_owned()),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = backend {
        errors.extend(ingress_backend_errors(
            backend,
            &spec_path.child("defaultBackend"),
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = spec_path.child("rules").index(i);
        let host = str_at(Some(rule), "host");
        if !host.is_empty() && !host.contains('*') {
            if host.parse::<std::net::IpAddr>().is_ok() {
                errors.push(FieldError::invalid(
                    rule_path.child("host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            for message in dns1123_subdomain_name_errors(host) {
                errors.push(FieldError::invalid(rule_path.child("host"), host, message));
            }
        }
        let Some(http) = rule.get("http").filter(|v| !v.is_null()) else {
            continue;
        };
        let http_path = rule_path.child("http");
        let paths = list_at(Some(http), "paths");
        if paths.is_empty() {
            errors.push(FieldError::required(http_path.child("paths"), ""));
        }
        for (j, path) in paths.iter().enumerate() {
            errors.extend(ingress_path_errors(
                path,
                &http_path.child("paths").index(j),
            ));
        }
    }
    errors.extend(ingress_tls_errors(spec, old));
    if let Some(class) = spec
        .and_then(|s| s.get("ingressClassName"))
        .and_then(Value::as_str)
    {
        for message in dns1123_subdomain_name_errors(class) {
            errors.push(FieldError::invalid(
                spec_path.child("ingressClassName"),
                class,
                message,
            ));
        }
    }
    errors
}

/// `validateTLSSecretName`: an empty name is not checked.
fn tls_secret_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return Vec::new();
    }
    dns1123_subdomain_name_errors(name)
}

/// `validation.IsWildcardDNS1123Subdomain`: `*.` then a DNS subdomain, 253 characters at most.
fn wildcard_subdomain_errors(host: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if host.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    // Only the form is checked here, the length was above.
    let valid = host.strip_prefix("*.").is_some_and(|rest| {
        !rest.is_empty()
            && dns1123_subdomain_name_errors(rest)
                .iter()
                .all(|m| m.starts_with("must be no more than"))
    });
    if !valid {
        errors.push(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS \
             subdomain, which must consist of lower case alphanumeric characters, '-' or '.' \
             and end with an alphanumeric character (e.g. '*.example.com', regex used for \
             validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned(),
        );
    }
    errors
}

/// `validateIngressTLS`: each host a DNS subdomain, or a wildcard when it has a `*`; each
/// secret name a DNS subdomain, unless the old Ingress already had an invalid one
/// (`allowInvalidSecretName`, for objects stored before the rule).
fn ingress_tls_errors(spec: Option<&Value>, old: Option<&Object>) -> Vec<FieldError> {
    let allow_invalid_secret = list_at(old.and_then(|o| o.get("spec")), "tls")
        .iter()
        .any(|tls| !tls_secret_name_errors(str_at(Some(tls), "secretName")).is_empty());
    let mut errors = Vec::new();
    let path = Path::new("spec").child("tls");
    for (i, tls) in list_at(spec, "tls").iter().enumerate() {
        for (j, host) in list_at(Some(tls), "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            let messages = if host.contains('*') {
                wildcard_subdomain_errors(host)
            } else {
                dns1123_subdomain_name_errors(host)
            };
            for message in messages {
                errors.push(FieldError::invalid(
                    path.index(i).child("hosts").index(j),
                    host,
                    message,
                ));
            }
        }
        if allow_invalid_secret {
            continue;
        }
        let secret = str_at(Some(tls), "secretName");
        for message in tls_secret_name_errors(secret) {
            errors.push(FieldError::invalid(
                path.index(i).child("secretName"),
                secret,
                message,
            ));
        }
    }
    errors
}

/// `validateHTTPIngressPath`.
fn ingress_path_errors(path: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(ty) = path.get("pathType").filter(|v| !v.is_null()) else {
        return vec![FieldError::required(
            at.child("pathType"),
            "pathType must be specified",
        )];
    };
    let value = str_at(Some(path), "path");
    let path_path = at.child("path");
    let absolute = || FieldError::invalid(&path_path, value, "must be an absolute path");
    match ty.as_str().unwrap_or("") {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errors.push(absolute());
            }
            if !value.is_empty() {
                for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(sequence) {
                        errors.push(FieldError::invalid(
                            &path_path,
                            value,
                            format!("must not contain '{sequence}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        errors.push(FieldError::invalid(
                            &path_path,
                            value,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.push(absolute());
            }
        }
        other => errors.push(FieldError::not_supported(
            at.child("pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    let backend = path.get("backend").unwrap_or(&Value::Null);
    errors.extend(ingress_backend_errors(backend, &at.child("backend")));
    errors
}

/// `validateIngressBackend`: a resource or a service, and a service's name and port.
fn ingress_backend_errors(backend: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let resource = backend.get("resource").filter(|v| !v.is_null());
    let service = backend.get("service").filter(|v| !v.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(_), None) => {}
        (None, Some(service)) => {
            let service_path = path.child("service");
            let name = str_at(Some(service), "name");
            if name.is_empty() {
                errors.push(FieldError::required(service_path.child("name"), ""));
            } else {
                // RelaxedServiceNameValidation is on in 1.36: a DNS-1123 label, as Services
                // are named (not DNS-1035 as before).
                for message in dns1123_label_errors(name) {
                    errors.push(FieldError::invalid(
                        service_path.child("name"),
                        name,
                        message,
                    ));
                }
            }
            let port = service.get("port");
            let port_name = str_at(port, "name");
            let number = port
                .and_then(|p| p.get("number"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let port_path = service_path.child("port");
            if !port_name.is_empty() && number != 0 {
                errors.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !port_name.is_empty() {
                for message in port_name_errors(port_name) {
                    errors.push(FieldError::invalid(
                        port_path.child("name"),
                        port_name,
                        message,
                    ));
                }
            } else if number != 0 {
                for message in port_num_errors(number) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        port_path.child("number"),
                        raw_int(number),
                        message,
                    ));
                }
            } else {
                errors.push(FieldError::required(
                    path,
                    "port name or number is required",
                ));
            }
        }
        (None, None) => errors.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_at_most_100() {
        assert!(int_or_percent_errors(&json!("50%"), "p").is_empty());
        assert_eq!(int_or_percent_errors(&json!("150%"), "p").len(), 1);
        assert_eq!(int_or_percent_errors(&json!("x"), "p").len(), 1);
        assert_eq!(int_or_percent_errors(&json!(-1), "p").len(), 1);
    }

    #[test]
    fn quantity_signs_follow_the_mantissa() {
        assert_eq!(quantity_sign("0"), Some(0));
        assert_eq!(quantity_sign("0.0Mi"), Some(0));
        assert_eq!(quantity_sign("-100m"), Some(-1));
        assert_eq!(quantity_sign("1e3"), Some(1));
        assert_eq!(quantity_sign("x"), None);
        assert_eq!(quantity_sign(""), None);
    }

    #[test]
    fn wildcard_hosts_start_with_star_dot() {
        assert!(wildcard_subdomain_errors("*.example.com").is_empty());
        assert_eq!(wildcard_subdomain_errors("a.*.com").len(), 1);
        assert_eq!(wildcard_subdomain_errors("*.").len(), 1);
    }
}
