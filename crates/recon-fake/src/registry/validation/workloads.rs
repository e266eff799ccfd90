//! apps/v1 and batch/v1: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob
//! (`pkg/apis/apps/validation`, `pkg/apis/batch/validation`).
//!
//! The apps kinds are checked here (selectors, templates, counters, strategies, what may not
//! change); CronJobs for their schedule, policies and job template; Jobs in [`super::job`],
//! which shares the selector helpers below.

use recon_apimachinery::json::Value;
use recon_apimachinery::names::{dns1123_label_errors, label_key_errors, label_value_errors};

use super::job;
use super::pod::{invalid_int, json_string_map, labels, non_negative, template_spec};
use super::read::{int_at, is_set, list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    let spec = obj.get("spec");
    let path = Path::new("spec");
    match kind {
        "Deployment" => deployment_spec(spec, &path),
        "ReplicaSet" => replica_set_spec(spec, &path),
        "DaemonSet" => daemon_set_spec(spec, &path),
        "StatefulSet" => stateful_set_spec(spec, &path),
        "Job" => job::validate_create(obj),
        "CronJob" => cron_job_spec(spec, None, &path),
        _ => Vec::new(),
    }
}

pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    let (spec, old_spec) = (new.get("spec"), old.get("spec"));
    let path = Path::new("spec");
    match kind {
        // ValidateDeploymentUpdate / ValidateReplicaSetUpdate: the spec, then the selector
        // may not change.
        "Deployment" | "ReplicaSet" => {
            let mut errors = if kind == "Deployment" {
                deployment_spec(spec, &path)
            } else {
                replica_set_spec(spec, &path)
            };
            errors.extend(immutable_selector(spec, old_spec));
            errors
        }
        // ValidateDaemonSetUpdate: the selector may not change, then the spec.
        "DaemonSet" => {
            let mut errors = immutable_selector(spec, old_spec);
            errors.extend(daemon_set_spec(spec, &path));
            errors
        }
        "StatefulSet" => stateful_set_update(spec, old_spec),
        "Job" => job::validate_update(new, old),
        // ValidateCronJobUpdate
        "CronJob" => cron_job_spec(spec, old_spec, &path),
        _ => Vec::new(),
    }
}

pub(super) fn validate_status_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    let (status, old_status) = (new.get("status"), old.get("status"));
    let path = Path::new("status");
    match kind {
        // ValidateDeploymentStatusUpdate (its collisionCount rule is the same as below)
        "Deployment" => {
            let mut errors = status_counters(status, &path, &DEPLOYMENT_STATUS);
            errors.extend(collision_count_decremented(status, old_status));
            errors
        }
        // ValidateReplicaSetStatusUpdate
        "ReplicaSet" => status_counters(status, &path, &REPLICA_SET_STATUS),
        // ValidateDaemonSetStatusUpdate
        "DaemonSet" => {
            let mut errors = daemon_set_status(status, &path);
            errors.extend(collision_count_decremented(status, old_status));
            errors
        }
        "StatefulSet" => stateful_set_status_update(new, old, Vec::new()),
        "Job" => job::validate_status_update(new, old),
        _ => Vec::new(),
    }
}

/// `ValidateImmutableField` for `spec.selector`.
pub(super) fn immutable_selector(
    spec: Option<&Value>,
    old_spec: Option<&Value>,
) -> Vec<FieldError> {
    let new = spec.and_then(|s| s.get("selector"));
    let old = old_spec.and_then(|s| s.get("selector"));
    if new == old {
        return Vec::new();
    }
    vec![FieldError::new(
        ErrorType::Invalid,
        Path::new("spec").child("selector"),
        BadValue::Raw(json_label_selector(new)),
        "field is immutable",
    )]
}

/// A `*metav1.LabelSelector` as `field.Invalid` prints it: JSON in the struct's field order
/// (`matchLabels`, then `matchExpressions`; empty ones left out), `null` for none.
pub(super) fn json_label_selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return "null".to_owned();
    };
    let mut fields = Vec::new();
    if selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
    {
        fields.push(format!(
            r#""matchLabels":{}"#,
            json_string_map(selector.get("matchLabels"))
        ));
    }
    let expressions = list_at(Some(selector), "matchExpressions");
    if !expressions.is_empty() {
        let items: Vec<String> = expressions
            .iter()
            .map(|e| {
                let quote = recon_apimachinery::go_json::go_json_string;
                let mut item = format!(
                    r#"{{"key":{},"operator":{}"#,
                    quote(str_at(Some(e), "key")),
                    quote(str_at(Some(e), "operator"))
                );
                let values = list_at(Some(e), "values");
                if !values.is_empty() {
                    let values: Vec<String> = values
                        .iter()
                        .map(|v| quote(v.as_str().unwrap_or("")))
                        .collect();
                    item.push_str(&format!(r#","values":[{}]"#, values.join(",")));
                }
                item.push('}');
                item
            })
            .collect();
        fields.push(format!(r#""matchExpressions":[{}]"#, items.join(",")));
    }
    format!("{{{}}}", fields.join(","))
}

/// `ValidateLabelSelector` with strict label values: the match labels, then each expression.
pub(super) fn label_selector(selector: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels_path = path.child("matchLabels");
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            for message in label_key_errors(key) {
                errors.push(FieldError::invalid(&labels_path, key, message));
            }
            let value = value.as_str().unwrap_or("");
            for message in label_value_errors(value) {
                errors.push(FieldError::invalid(&labels_path, value, message));
            }
        }
    }
    let expressions_path = path.child("matchExpressions");
    for (i, expression) in list_at(Some(selector), "matchExpressions")
        .iter()
        .enumerate()
    {
        errors.extend(label_selector_requirement(
            expression,
            &expressions_path.index(i),
            false,
        ));
    }
    errors
}

/// `ValidateLabelSelectorRequirement` with strict label values; an operator it does not know is
/// an error unless `unknown_operators` (`AllowUnknownOperatorInRequirement`).
pub(crate) fn label_selector_requirement(
    expression: &Value,
    at: &Path,
    unknown_operators: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let e = Some(expression);
    let values = list_at(e, "values");
    match str_at(e, "operator") {
        "In" | "NotIn" => {
            if values.is_empty() {
                errors.push(FieldError::required(
                    at.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errors.push(FieldError::forbidden(
                    at.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        _ if unknown_operators => {}
        other => errors.push(FieldError::invalid(
            at.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    let key = str_at(e, "key");
    for message in label_key_errors(key) {
        errors.push(FieldError::invalid(at.child("key"), key, message));
    }
    for (j, value) in values.iter().enumerate() {
        let value = value.as_str().unwrap_or("");
        for message in label_value_errors(value) {
            errors.push(FieldError::invalid(
                at.child("values").index(j),
                value,
                message,
            ));
        }
    }
    errors
}

/// Whether a selector has no requirements (`labels.Selector.Empty`, and the "empty selector"
/// rules).
fn selector_is_empty(selector: &Value) -> bool {
    let labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map_or(0, recon_apimachinery::json::Map::len);
    labels + list_at(Some(selector), "matchExpressions").len() == 0
}

/// Whether `metav1.LabelSelectorAsSelector` takes `selector`: it refuses what strict
/// `ValidateLabelSelector` does (bad keys, values or operators, missing or extra values).
pub(crate) fn selector_converts(selector: &Value) -> bool {
    label_selector(selector, &Path::new("spec")).is_empty()
}

/// The selector of `spec` when `metav1.LabelSelectorAsSelector` refuses it.
fn unconvertible_selector(spec: Option<&Value>) -> Option<&Value> {
    spec.and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null() && !selector_converts(s))
}

/// Whether `selector` (`metav1.LabelSelectorAsSelector`) selects `labels`.
pub(crate) fn selector_matches(selector: &Value, labels: Option<&Value>) -> bool {
    selector_matches_labels(selector, |key| {
        labels.and_then(|l| l.get(key)).and_then(Value::as_str)
    })
}

/// [`selector_matches`] on labels read through `label` (a key's value, if set).
pub(crate) fn selector_matches_labels<'a>(
    selector: &Value,
    label: impl Fn(&str) -> Option<&'a str>,
) -> bool {
    let labels_match = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    labels_match
        && list_at(Some(selector), "matchExpressions").iter().all(|e| {
            let key = str_at(Some(e), "key");
            let values = list_at(Some(e), "values");
            let within = |v: &str| values.iter().any(|x| x.as_str() == Some(v));
            match (str_at(Some(e), "operator"), label(key)) {
                ("In", Some(v)) => within(v),
                ("NotIn", Some(v)) => !within(v),
                ("NotIn", None) | ("Exists", Some(_)) | ("DoesNotExist", None) => true,
                _ => false,
            }
        })
}

/// The selector of a controller's spec: `Required` when missing, its own errors, and the
/// "empty selector is invalid for `what`" rule.
fn required_selector(spec: Option<&Value>, path: &Path, what: &str) -> Vec<FieldError> {
    let selector_path = path.child("selector");
    let Some(selector) = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null())
    else {
        return vec![FieldError::required(selector_path, "")];
    };
    let mut errors = label_selector(selector, &selector_path);
    if selector_is_empty(selector) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &selector_path,
            BadValue::Raw(json_label_selector(Some(selector))),
            format!("empty selector is invalid for {what}"),
        ));
    }
    errors
}

/// The template-matches-selector rule shared by the apps kinds.
pub(super) fn selector_must_match(
    spec: Option<&Value>,
    template_path: &Path,
) -> Option<FieldError> {
    let selector = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null());
    let labels = spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"));
    // No selector selects nothing (`labels.Nothing`), an empty one everything, unchecked; one
    // that does not convert is reported (or not) by the caller.
    if let Some(selector) = selector
        && (selector_is_empty(selector)
            || !selector_converts(selector)
            || selector_matches(selector, labels))
    {
        return None;
    }
    Some(FieldError::new(
        ErrorType::Invalid,
        template_path.child("metadata").child("labels"),
        BadValue::Raw(json_string_map(labels)),
        "`selector` does not match template `labels`",
    ))
}

/// What controllers of long-running pods ask of their template's pod spec: restart Always and
/// no active deadline.
fn long_running_template(
    spec: Option<&Value>,
    template_path: &Path,
    kind: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let pod_spec = spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"));
    let spec_path = template_path.child("spec");
    let restart = str_at(pod_spec, "restartPolicy");
    if restart != "Always" {
        errors.push(FieldError::not_supported(
            spec_path.child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if is_set(pod_spec, "activeDeadlineSeconds") {
        errors.push(FieldError::forbidden(
            spec_path.child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errors
}

/// `ValidatePodTemplateSpecForReplicaSet`, reached only when the selector converts (else
/// "invalid label selector" and the template goes unchecked).
fn replica_set_template(spec: Option<&Value>, path: &Path, kind: &str) -> Vec<FieldError> {
    if let Some(selector) = unconvertible_selector(spec) {
        return vec![FieldError::new(
            ErrorType::Invalid,
            path.child("selector"),
            BadValue::Raw(json_label_selector(Some(selector))),
            "invalid label selector",
        )];
    }
    let template_path = path.child("template");
    let mut errors: Vec<FieldError> = selector_must_match(spec, &template_path)
        .into_iter()
        .collect();
    errors.extend(template_spec(
        spec.and_then(|s| s.get("template")),
        &template_path,
    ));
    errors.extend(long_running_template(spec, &template_path, kind));
    errors
}

/// `ValidateDeploymentSpec`.
fn deployment_spec(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = non_negative(spec, "replicas", path).into_iter().collect();
    errors.extend(required_selector(spec, path, "deployment"));
    errors.extend(replica_set_template(spec, path, "ReplicaSet"));
    errors.extend(deployment_strategy(
        spec.and_then(|s| s.get("strategy")),
        &path.child("strategy"),
    ));
    errors.extend(non_negative(spec, "minReadySeconds", path));
    errors.extend(non_negative(spec, "revisionHistoryLimit", path));
    if let Some(deadline) = int_at(spec, "progressDeadlineSeconds") {
        errors.extend(non_negative(spec, "progressDeadlineSeconds", path));
        if deadline <= int_at(spec, "minReadySeconds").unwrap_or(0) {
            errors.push(invalid_int(
                &path.child("progressDeadlineSeconds"),
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errors
}

/// An `intstr.IntOrString` as validation reads it: an integer, or a percentage string.
enum IntOrPercent<'a> {
    Int(i64),
    Str(&'a str),
}

impl<'a> IntOrPercent<'a> {
    fn of(value: Option<&'a Value>) -> IntOrPercent<'a> {
        match value {
            Some(Value::String(s)) => IntOrPercent::Str(s),
            other => IntOrPercent::Int(other.and_then(Value::as_i64).unwrap_or(0)),
        }
    }

    /// The percentage, when the value is a valid one (`getPercentValue`).
    fn percent(&self) -> Option<i64> {
        match self {
            IntOrPercent::Str(s) => s
                .strip_suffix('%')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse().ok()),
            IntOrPercent::Int(_) => None,
        }
    }

    /// `getIntOrPercentValue`: the percentage or the integer (0 for other strings).
    fn value(&self) -> i64 {
        match self {
            IntOrPercent::Int(n) => *n,
            IntOrPercent::Str(_) => self.percent().unwrap_or(0),
        }
    }

    /// Go's `%v` of the value as `field.Invalid` prints an `IntOrString`.
    fn bad_value(&self) -> BadValue {
        match self {
            IntOrPercent::Int(n) => BadValue::Raw(n.to_string()),
            IntOrPercent::Str(s) => BadValue::Str((*s).to_owned()),
        }
    }
}

/// `ValidatePositiveIntOrPercent`.
fn positive_int_or_percent(value: &IntOrPercent, path: &Path) -> Option<FieldError> {
    match value {
        IntOrPercent::Int(n) if *n < 0 => {
            Some(invalid_int(path, *n, "must be greater than or equal to 0"))
        }
        IntOrPercent::Str(_) if value.percent().is_none() => Some(FieldError::new(
            ErrorType::Invalid,
            path,
            value.bad_value(),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )),
        _ => None,
    }
}

/// `IsNotMoreThan100Percent`.
fn not_above_100_percent(value: &IntOrPercent, path: &Path) -> Option<FieldError> {
    value.percent().filter(|p| *p > 100).map(|_| {
        FieldError::new(
            ErrorType::Invalid,
            path,
            value.bad_value(),
            "must not be greater than 100%",
        )
    })
}

/// `ValidateDeploymentStrategy` and `ValidateRollingUpdateDeployment`.
fn deployment_strategy(strategy: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rolling = strategy
        .and_then(|s| s.get("rollingUpdate"))
        .filter(|r| !r.is_null());
    match str_at(strategy, "type") {
        "Recreate" if rolling.is_some() => {
            errors.push(FieldError::forbidden(
                path.child("rollingUpdate"),
                "may not be specified when strategy `type` is 'Recreate'",
            ));
        }
        "RollingUpdate" => {
            let Some(rolling) = rolling else {
                errors.push(FieldError::required(
                    path.child("rollingUpdate"),
                    "this should be defaulted and never be nil",
                ));
                return errors;
            };
            let at = path.child("rollingUpdate");
            let unavailable = IntOrPercent::of(rolling.get("maxUnavailable"));
            let surge = IntOrPercent::of(rolling.get("maxSurge"));
            errors.extend(positive_int_or_percent(
                &unavailable,
                &at.child("maxUnavailable"),
            ));
            errors.extend(positive_int_or_percent(&surge, &at.child("maxSurge")));
            if unavailable.value() == 0 && surge.value() == 0 {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    at.child("maxUnavailable"),
                    unavailable.bad_value(),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            errors.extend(not_above_100_percent(
                &unavailable,
                &at.child("maxUnavailable"),
            ));
        }
        _ => {}
    }
    errors
}

/// `ValidateReplicaSetSpec`.
fn replica_set_spec(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = non_negative(spec, "replicas", path).into_iter().collect();
    errors.extend(non_negative(spec, "minReadySeconds", path));
    errors.extend(required_selector(spec, path, "deployment"));
    errors.extend(replica_set_template(spec, path, "ReplicaSet"));
    errors
}

/// `ValidateDaemonSetSpec`.
fn daemon_set_spec(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let selector_path = path.child("selector");
    let selector = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null());
    let mut errors = selector
        .map(|s| label_selector(s, &selector_path))
        .unwrap_or_default();
    let template_path = path.child("template");
    let labels = spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"));
    // A missing selector selects nothing, so it matches no labels.
    if selector.is_none_or(|s| {
        selector_converts(s) && !selector_is_empty(s) && !selector_matches(s, labels)
    }) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            template_path.child("metadata").child("labels"),
            BadValue::Raw(json_string_map(labels)),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(selector) = selector.filter(|s| selector_is_empty(s)) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &selector_path,
            BadValue::Raw(json_label_selector(Some(selector))),
            "empty selector is invalid for daemonset",
        ));
    }
    errors.extend(template_spec(
        spec.and_then(|s| s.get("template")),
        &template_path,
    ));
    errors.extend(long_running_template(spec, &template_path, "DaemonSet"));
    errors.extend(non_negative(spec, "minReadySeconds", path));
    errors.extend(non_negative(spec, "templateGeneration", path));
    errors.extend(daemon_set_strategy(
        spec.and_then(|s| s.get("updateStrategy")),
        &path.child("updateStrategy"),
    ));
    errors.extend(non_negative(spec, "revisionHistoryLimit", path));
    errors
}

/// `ValidateDaemonSetUpdateStrategy` and `ValidateRollingUpdateDaemonSet`.
fn daemon_set_strategy(strategy: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if str_at(strategy, "type") != "RollingUpdate" {
        return errors;
    }
    let Some(rolling) = strategy
        .and_then(|s| s.get("rollingUpdate"))
        .filter(|r| !r.is_null())
    else {
        errors.push(FieldError::required(path.child("rollingUpdate"), ""));
        return errors;
    };
    let at = path.child("rollingUpdate");
    let unavailable = IntOrPercent::of(rolling.get("maxUnavailable"));
    let surge = IntOrPercent::of(rolling.get("maxSurge"));
    errors.extend(positive_int_or_percent(
        &unavailable,
        &at.child("maxUnavailable"),
    ));
    errors.extend(positive_int_or_percent(&surge, &at.child("maxSurge")));
    errors.extend(not_above_100_percent(
        &unavailable,
        &at.child("maxUnavailable"),
    ));
    errors.extend(not_above_100_percent(&surge, &at.child("maxSurge")));
    match (unavailable.value() != 0, surge.value() != 0) {
        (true, true) => errors.push(FieldError::new(
            ErrorType::Invalid,
            at.child("maxSurge"),
            surge.bad_value(),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => errors.push(FieldError::required(
            at.child("maxUnavailable"),
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    errors
}

/// `ValidateStatefulSetSpec`, as far as the policies, counters, service name, selector and
/// template go.
fn stateful_set_spec(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    stateful_set_spec_with(spec, path, true)
}

/// `ValidateStatefulSetSpec`; `check_service_name` is false on update
/// (`AllowInvalidServiceName`: the name is immutable, an old invalid one is tolerated).
fn stateful_set_spec_with(
    spec: Option<&Value>,
    path: &Path,
    check_service_name: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match str_at(spec, "podManagementPolicy") {
        "OrderedReady" | "Parallel" => {}
        "" => errors.push(FieldError::required(path.child("podManagementPolicy"), "")),
        other => errors.push(FieldError::invalid(
            path.child("podManagementPolicy"),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errors.extend(non_negative(spec, "replicas", path));
    errors.extend(non_negative(spec, "minReadySeconds", path));
    let service = str_at(spec, "serviceName");
    if check_service_name && !service.is_empty() {
        for message in dns1123_label_errors(service) {
            errors.push(FieldError::invalid(
                path.child("serviceName"),
                service,
                message,
            ));
        }
    }
    errors.extend(required_selector(spec, path, "statefulset"));
    let template_path = path.child("template");
    // ValidatePodTemplateSpecForStatefulSet, only when the selector converts.
    if let Some(selector) = unconvertible_selector(spec) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("selector"),
            BadValue::Raw(json_label_selector(Some(selector))),
            "",
        ));
    } else {
        errors.extend(selector_must_match(spec, &template_path));
        let template = spec.and_then(|s| s.get("template"));
        errors.extend(template_spec(template, &template_path));
        // The template's labels are checked a second time here.
        errors.extend(labels(
            template
                .and_then(|t| t.get("metadata"))
                .and_then(|m| m.get("labels")),
            &template_path.child("labels"),
        ));
    }
    errors.extend(long_running_template(spec, &template_path, "StatefulSet"));
    errors
}

/// The spec fields of a StatefulSet an update may change (`ValidateStatefulSetUpdate`).
const STATEFUL_SET_MUTABLE: &[&str] = &[
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
];

/// `ValidateStatefulSetUpdate`: the new spec, then nothing but the mutable fields may change.
fn stateful_set_update(spec: Option<&Value>, old_spec: Option<&Value>) -> Vec<FieldError> {
    let path = Path::new("spec");
    let mut errors = stateful_set_spec_with(spec, &path, false);
    let rest = |s: Option<&Value>| {
        let mut s = s.and_then(Value::as_object).cloned().unwrap_or_default();
        s.retain(|k, _| !STATEFUL_SET_MUTABLE.contains(&k.as_str()));
        s
    };
    if rest(spec) != rest(old_spec) {
        errors.push(FieldError::forbidden(
            path,
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
             'template', 'updateStrategy', 'revisionHistoryLimit', \
             'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errors
}

/// `validateCronJobSpec`: the schedule (its time zone rule relaxed on update when the old one
/// had one), the counters and policies, then the job template (`ValidateJobTemplateSpec`).
fn cron_job_spec(spec: Option<&Value>, old_spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let schedule = str_at(spec, "schedule");
    let schedule_path = path.child("schedule");
    if schedule.is_empty() {
        errors.push(FieldError::required(&schedule_path, ""));
    } else {
        // validateScheduleFormat
        if let Err(message) = parse_cron_schedule(schedule) {
            errors.push(FieldError::invalid(&schedule_path, schedule, message));
        }
        let allow_tz = old_spec.is_some_and(|o| str_at(Some(o), "schedule").contains("TZ"));
        if schedule.contains("TZ") {
            if !allow_tz {
                errors.push(FieldError::invalid(
                    &schedule_path,
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                ));
            } else if is_set(spec, "timeZone") {
                errors.push(FieldError::invalid(
                    &schedule_path,
                    schedule,
                    "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                ));
            }
        }
    }
    errors.extend(non_negative(spec, "startingDeadlineSeconds", path));
    let time_zone = spec.and_then(|s| s.get("timeZone"));
    if old_spec.is_none_or(|o| o.get("timeZone") != time_zone) {
        errors.extend(
            time_zone
                .and_then(Value::as_str)
                .and_then(|tz| time_zone_error(tz, &path.child("timeZone"))),
        );
    }
    let policy_path = path.child("concurrencyPolicy");
    match str_at(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errors.push(FieldError::required(policy_path, "")),
        other => errors.push(FieldError::not_supported(
            policy_path,
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    let template_path = path.child("jobTemplate").child("spec");
    let job = spec
        .and_then(|s| s.get("jobTemplate"))
        .and_then(|t| t.get("spec"));
    errors.extend(job::job_spec(job, &template_path));
    if let Some(selector) = job.and_then(|j| j.get("selector")).filter(|s| !s.is_null()) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            template_path.child("selector"),
            BadValue::Raw(json_label_selector(Some(selector))),
            "`selector` will be auto-generated",
        ));
    }
    if job
        .and_then(|j| j.get("manualSelector"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        errors.push(FieldError::new(
            ErrorType::NotSupported,
            template_path.child("manualSelector"),
            BadValue::Raw("true".to_owned()),
            r#"supported values: "nil", "false""#,
        ));
    }
    errors.extend(non_negative(spec, "successfulJobsHistoryLimit", path));
    errors.extend(non_negative(spec, "failedJobsHistoryLimit", path));
    errors
}

/// `validateTimeZone`, as far as the name's shape goes (whether the time zone database knows
/// it is not checked).
fn time_zone_error(time_zone: &str, path: &Path) -> Option<FieldError> {
    let invalid = |message: String| Some(FieldError::invalid(path, time_zone, message));
    if time_zone.is_empty() {
        return invalid("timeZone must be nil or non-empty string".to_owned());
    }
    let bad_part = |part: &str| {
        part == "."
            || part == ".."
            || part.starts_with('-')
            || part.is_empty()
            || part.len() > 14
            || !part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
    };
    if time_zone.split('/').any(bad_part) {
        return invalid(format!("unknown time zone {time_zone}"));
    }
    if time_zone.eq_ignore_ascii_case("Local") {
        return invalid(
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
                .to_owned(),
        );
    }
    None
}

/// One field of a cron schedule: its bounds and, for months and weekdays, its names.
struct CronField {
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

/// The five fields of a standard schedule (robfig/cron v3 `ParseStandard`).
const CRON_FIELDS: [CronField; 5] = [
    CronField {
        min: 0,
        max: 59,
        names: &[],
    },
    CronField {
        min: 0,
        max: 23,
        names: &[],
    },
    CronField {
        min: 1,
        max: 31,
        names: &[],
    },
    CronField {
        min: 1,
        max: 12,
        names: &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
    },
    CronField {
        min: 0,
        max: 6,
        names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    },
];

/// Whether robfig/cron v3's standard parser takes `schedule`, with its error text when not.
/// A leading `TZ=`/`CRON_TZ=` is skipped (its location is not looked up), and `@every`
/// durations are only checked for their shape.
fn parse_cron_schedule(schedule: &str) -> Result<(), String> {
    let mut spec = schedule;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        spec = spec.split_once(' ').map_or("", |(_, rest)| rest.trim());
    }
    if let Some(descriptor) = spec.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ => match descriptor.strip_prefix("every ") {
                Some(duration)
                    if recon_apimachinery::gotime::parse_duration(duration).is_some() =>
                {
                    Ok(())
                }
                Some(duration) => Err(format!(
                    "failed to parse duration {spec}: time: invalid duration {}",
                    recon_apimachinery::go_quote(duration)
                )),
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != CRON_FIELDS.len() {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(&CRON_FIELDS) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            cron_range(expr, bounds)?;
        }
    }
    Ok(())
}

/// robfig/cron `getRange`: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn cron_range(expr: &str, bounds: &CronField) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = cron_int_or_name(low_and_high[0], bounds.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, cron_int_or_name(low_and_high[1], bounds.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = cron_int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// robfig/cron `parseIntOrName`: a month or weekday name (any case), else a number.
fn cron_int_or_name(expr: &str, names: &[&str]) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        // Months count from 1, weekdays from 0 (Sunday).
        let first = if names.len() == 12 { 1 } else { 0 };
        return Ok(first + i as u64);
    }
    cron_int(expr)
}

/// robfig/cron `mustParseInt`, with `strconv.Atoi`'s error text.
fn cron_int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            recon_apimachinery::go_quote(expr)
        ));
    }
    let Ok(n) = expr.parse::<i64>() else {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
            recon_apimachinery::go_quote(expr)
        ));
    };
    u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
}

/// `ValidateStatefulSetStatusUpdate`: the status, then the metadata update's errors
/// (`meta_update`), then the collision count.
pub(super) fn stateful_set_status_update(
    new: &Object,
    old: &Object,
    meta_update: Vec<FieldError>,
) -> Vec<FieldError> {
    let status = new.get("status");
    let mut errors = status_counters(status, &Path::new("status"), &STATEFUL_SET_STATUS);
    errors.extend(meta_update);
    errors.extend(collision_count_decremented(status, old.get("status")));
    errors
}

/// The counters of a controller's status: those that may not be negative, those that may not
/// exceed `replicas`, and the wording of "available may not exceed ready".
pub(super) struct StatusRules {
    non_negative: &'static [&'static str],
    within_replicas: &'static [&'static str],
    ready_message: &'static str,
}

/// `ValidateDeploymentStatus`.
const DEPLOYMENT_STATUS: StatusRules = StatusRules {
    non_negative: &[
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ],
    within_replicas: &["updatedReplicas", "readyReplicas", "availableReplicas"],
    ready_message: "cannot be greater than readyReplicas",
};

/// `ValidateReplicaSetStatus`.
const REPLICA_SET_STATUS: StatusRules = StatusRules {
    non_negative: &[
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
        "terminatingReplicas",
    ],
    within_replicas: &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
    ready_message: "cannot be greater than readyReplicas",
};

/// `ValidateReplicationControllerStatus`: a ReplicaSet's, without terminating replicas.
pub(super) const REPLICATION_CONTROLLER_STATUS: StatusRules = StatusRules {
    non_negative: &[
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ],
    within_replicas: &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
    ready_message: "cannot be greater than readyReplicas",
};

/// `ValidateStatefulSetStatus`.
const STATEFUL_SET_STATUS: StatusRules = StatusRules {
    non_negative: &[
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "observedGeneration",
        "collisionCount",
    ],
    within_replicas: &[
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ],
    ready_message: "cannot be greater than status.readyReplicas",
};

/// A status checked by `rules`.
pub(super) fn status_counters(
    status: Option<&Value>,
    path: &Path,
    rules: &StatusRules,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in rules.non_negative {
        errors.extend(non_negative(status, key, path));
    }
    let count = |key| int_at(status, key).unwrap_or(0);
    for key in rules.within_replicas {
        if count(key) > count("replicas") {
            errors.push(invalid_int(
                &path.child(key),
                count(key),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if count("availableReplicas") > count("readyReplicas") {
        errors.push(invalid_int(
            &path.child("availableReplicas"),
            count("availableReplicas"),
            rules.ready_message,
        ));
    }
    errors
}

/// `validateDaemonSetStatus`: every counter non-negative.
fn daemon_set_status(status: Option<&Value>, path: &Path) -> Vec<FieldError> {
    [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "collisionCount",
    ]
    .iter()
    .filter_map(|key| non_negative(status, key, path))
    .collect()
}

/// `apivalidation.IsDecremented` for `status.collisionCount`: an error when it went down (or
/// away).
fn collision_count_decremented(status: Option<&Value>, old: Option<&Value>) -> Option<FieldError> {
    let old = int_at(old, "collisionCount")?;
    let new = int_at(status, "collisionCount");
    if new.is_some_and(|n| n >= old) {
        return None;
    }
    Some(invalid_int(
        &Path::new("status").child("collisionCount"),
        new.unwrap_or(0),
        "cannot be decremented",
    ))
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn selectors_match_labels_and_expressions() {
        let selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "canary", "operator": "DoesNotExist"}
        ]});
        assert!(selector_matches(
            &selector,
            Some(&json!({"app": "web", "tier": "b"}))
        ));
        assert!(!selector_matches(
            &selector,
            Some(&json!({"app": "web", "tier": "c"}))
        ));
        assert!(!selector_matches(&selector, None));
    }

    #[test]
    fn cron_schedules_are_read_as_robfig_cron_reads_them() {
        assert_eq!(parse_cron_schedule("*/5 * * * *"), Ok(()));
        assert_eq!(parse_cron_schedule("0 0 1 jan-mar MON"), Ok(()));
        assert_eq!(parse_cron_schedule("@hourly"), Ok(()));
        assert_eq!(parse_cron_schedule("@every 1h30m"), Ok(()));
        assert_eq!(
            parse_cron_schedule("61 * * * *"),
            Err("end of range (61) above maximum (59): 61".to_owned())
        );
        assert_eq!(
            parse_cron_schedule("* * *"),
            Err("expected exactly 5 fields, found 3: [* * *]".to_owned())
        );
        assert_eq!(
            parse_cron_schedule("x * * * *"),
            Err(
                r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#
                    .to_owned()
            )
        );
        assert_eq!(
            parse_cron_schedule("5-1 * * * *"),
            Err("beginning of range (5) beyond end of range (1): 5-1".to_owned())
        );
    }

    #[test]
    fn percentages_are_read_as_go_reads_them() {
        let value = json!("25%");
        assert_eq!(IntOrPercent::of(Some(&value)).value(), 25);
        let value = json!("x%");
        assert_eq!(IntOrPercent::of(Some(&value)).percent(), None);
        assert_eq!(IntOrPercent::of(None).value(), 0);
    }
}
