//! autoscaling: HorizontalPodAutoscalers (`pkg/apis/autoscaling/validation`).

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_label_errors, path_segment_errors};

use super::quota::container_resource_name_errors;
use super::read::{list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// The errors of creating a HorizontalPodAutoscaler.
pub(super) fn validate_create(obj: &Object) -> Vec<FieldError> {
    validate_hpa(obj, None)
}

/// `ValidateHorizontalPodAutoscalerUpdate`, with what the old one allows.
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    validate_hpa(new, Some(old))
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`: two counters, and not the spec (which the
/// status strategy keeps as it was).
pub(super) fn validate_status_update(new: &Object) -> Vec<FieldError> {
    let status = new.get("status");
    ["currentReplicas", "desiredReplicas"]
        .into_iter()
        .filter_map(|key| {
            let n = status.and_then(|s| s.get(key)).and_then(Value::as_i64)?;
            (n < 0).then(|| {
                FieldError::new(
                    ErrorType::Invalid,
                    Path::new("status").child(key),
                    BadValue::int(n),
                    "must be greater than or equal to 0",
                )
            })
        })
        .collect()
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
            BadValue::int(min),
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
            BadValue::int(max),
            "must be greater than or equal to 1",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.maxReplicas",
            BadValue::int(max),
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
            BadValue::int(utilization),
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
    errors.extend(target_errors(
        source,
        path,
        (
            "averageValue",
            "must set either a target value for metric or a per-pod target",
        ),
        (
            "value",
            "may not set both a target value for metric and a per-pod target",
        ),
    ));
    errors
}

/// `validateMetricTarget` of a source's target, then one of two kinds of target set: `missing`
/// names the field a target with neither is reported at (and the message), `both` the other
/// one, where a target with both is reported.
fn target_errors(
    source: &Value,
    path: &Path,
    missing: (&str, &str),
    both: (&str, &str),
) -> Vec<FieldError> {
    let target = path.child("target");
    let mut errors = metric_target_errors(source.get("target"), &target);
    let (first, second) = (target_has(source, missing.0), target_has(source, both.0));
    if !first && !second {
        errors.push(FieldError::required(target.child(missing.0), missing.1));
    }
    if first && second {
        errors.push(FieldError::forbidden(target.child(both.0), both.1));
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
    errors.extend(target_errors(
        source,
        path,
        (
            "averageUtilization",
            "must set either a target raw value or a target utilization",
        ),
        (
            "averageValue",
            "may not set both a target raw value and a target utilization",
        ),
    ));
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
                BadValue::int(window),
                "must be greater than or equal to zero",
            ));
        }
        if window > 3600 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &window_path,
                BadValue::int(window),
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
            BadValue::int(value),
            "must be greater than zero",
        ));
    }
    if period <= 0 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("periodSeconds"),
            BadValue::int(period),
            "must be greater than zero",
        ));
    }
    if period > 1800 {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("periodSeconds"),
            BadValue::int(period),
            "must be less than or equal to 1800",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantity_signs_follow_the_mantissa() {
        assert_eq!(quantity_sign("0"), Some(0));
        assert_eq!(quantity_sign("0.0Mi"), Some(0));
        assert_eq!(quantity_sign("-100m"), Some(-1));
        assert_eq!(quantity_sign("1e3"), Some(1));
        assert_eq!(quantity_sign("x"), None);
        assert_eq!(quantity_sign(""), None);
    }
}
