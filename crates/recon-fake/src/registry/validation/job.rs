//! batch/v1 Job (`pkg/apis/batch/validation`), with the options `pkg/registry/batch/job`'s
//! strategy sets in Kubernetes 1.36 (every Job feature gate is GA there):
//!
//! - create (`ValidateJob`): the generated selector and labels, the spec (`ValidateJobSpec`),
//!   the longest pod hostname of an Indexed Job;
//! - update (`ValidateJob` again, then `ValidateJobSpecUpdate`, which validates the spec a
//!   second time: the real server reports each spec error twice), then what may not change;
//! - `/status` (`ValidateJobStatusUpdate` with `getStatusValidationOptions`): counters,
//!   uncounted pods, terminal conditions, times and index lists, most rules checked only when
//!   the fields they read changed.
//!
//! CronJobs reuse [`job_spec`] for their job template (`ValidateJobTemplateSpec`).
//!
//! Values are printed as `field.Invalid` prints them: numbers and strings as such, named
//! string types, pointers and structs as `encoding/json` writes the internal Go types (whose
//! fields have no JSON tags: `{"Rules":[{"Action":"FailJob",...}]}`).

use std::collections::HashSet;

use recon_apimachinery::go_json::{go_json, go_json_string};
use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors,
};

use super::pod::{invalid_int, json_string_map, non_negative, template_spec};
use super::read::{int_at, is_set, list_at, str_at};
use super::workloads::{
    immutable_selector, json_label_selector, label_selector, selector_converts, selector_matches,
    selector_must_match,
};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::internal::{self, Source};
use crate::wire::object::{Object, meta_str};

/// `maxParallelismForIndexedJob`.
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;
/// `maxFailedIndexesForIndexedJob`.
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i64 = 100_000;
/// `completionsSoftLimit`.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
/// `parallelismLimitForHighCompletions`.
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
/// `maxFailedIndexesLimitForHighCompletions`.
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
/// `maxPodFailurePolicyRules`.
const MAX_POD_FAILURE_POLICY_RULES: usize = 20;
/// `maxPodFailurePolicyOnExitCodesValues`.
const MAX_ON_EXIT_CODES_VALUES: usize = 255;
/// `maxPodFailurePolicyOnPodConditionsPatterns`.
const MAX_ON_POD_CONDITIONS_PATTERNS: usize = 20;
/// `maxManagedByLength`.
const MAX_MANAGED_BY_LENGTH: usize = 63;
/// `maxJobSuccessPolicySucceededIndexesLimit`.
const MAX_SUCCEEDED_INDEXES_LENGTH: usize = 64 * 1024;
/// `maxSuccessPolicyRule`.
const MAX_SUCCESS_POLICY_RULES: usize = 20;

/// `batch.LegacyControllerUidLabel`.
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
/// `batch.LegacyJobNameLabel`.
const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// `batch.ControllerUidLabel`.
const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// `batch.JobNameLabel`.
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// `sets.List(supportedPodFailurePolicyActions)`, sorted.
const POD_FAILURE_POLICY_ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
/// `sets.List(supportedPodFailurePolicyOnExitCodesOperator)`.
const ON_EXIT_CODES_OPERATORS: [&str; 2] = ["In", "NotIn"];
/// `sets.List(supportedPodFailurePolicyOnPodConditionsStatus)`.
const ON_POD_CONDITIONS_STATUSES: [&str; 3] = ["False", "True", "Unknown"];

/// `jobStrategy.Validate`: `ValidateJob` after the metadata (which the handler checks) with
/// `RequirePrefixedLabels` on.
pub(super) fn validate_create(job: &Object) -> Vec<FieldError> {
    validate_job(job, true)
}

/// `jobStrategy.ValidateUpdate`: `ValidateJob` of the new Job, then `ValidateJobUpdate`
/// (after its metadata part, which the handler checks).
pub(super) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    validate_update_with_meta(new, old, Vec::new(), Vec::new())
}

/// `jobStrategy.ValidateUpdate` with the metadata errors where Go reports them: `meta`
/// (`ValidateObjectMeta`) first, `meta_update` (`ValidateObjectMetaUpdate`) between the two
/// validations of the spec.
pub(super) fn validate_update_with_meta(
    new: &Object,
    old: &Object,
    meta: Vec<FieldError>,
    meta_update: Vec<FieldError>,
) -> Vec<FieldError> {
    // validationOptionsForJob: the prefixed labels are required only of a Job that had both.
    let old_labels = template_labels(old.get("spec"));
    let had = |key: &str| old_labels.and_then(|l| l.get(key)).is_some();
    let require_prefixed_labels = had(JOB_NAME_LABEL) && had(CONTROLLER_UID_LABEL);
    let mut errors = meta;
    errors.extend(validate_job(new, require_prefixed_labels));
    errors.extend(meta_update);
    errors.extend(job_spec_update(new.get("spec"), old));
    errors
}

/// `ValidateJob` without `ValidateObjectMeta`: the generated selector, `ValidateJobSpec`, and
/// the hostname of an Indexed Job's last pod.
fn validate_job(job: &Object, require_prefixed_labels: bool) -> Vec<FieldError> {
    let spec = job.get("spec");
    let mut errors = generated_selector(job, require_prefixed_labels);
    errors.extend(job_spec_with_selector(spec, &Path::new("spec")));
    if str_at(spec, "completionMode") == "Indexed"
        && let Some(completions) = int_at(spec, "completions").filter(|c| *c > 0)
    {
        // The job controller names pods `<job>-<index>`, and uses that as their hostname.
        let name = meta_str(job, "name");
        let hostname = format!("{name}-{}", completions - 1);
        if !dns1123_label_errors(&hostname).is_empty() {
            errors.push(FieldError::invalid(
                "metadata.name",
                name,
                format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errors
}

/// The labels of the pod template of a Job spec.
fn template_labels(spec: Option<&Value>) -> Option<&Value> {
    spec.and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
}

/// `validateGeneratedSelector`: unless the selector is manual, the template carries the
/// labels `generateSelectorIfNeeded` adds (the legacy ones always, the prefixed ones when
/// required), and the selector selects them.
fn generated_selector(job: &Object, require_prefixed_labels: bool) -> Vec<FieldError> {
    let spec = job.get("spec");
    let manual = spec
        .and_then(|s| s.get("manualSelector"))
        .and_then(Value::as_bool)
        == Some(true);
    let Some(selector) = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !manual && !s.is_null())
    else {
        // A missing selector is the spec's error.
        return Vec::new();
    };
    let mut errors = Vec::new();
    let (uid, name) = (meta_str(job, "uid"), meta_str(job, "name"));
    if uid.is_empty() {
        errors.push(FieldError::required("metadata.uid", ""));
    }
    let mut expected = vec![
        (LEGACY_CONTROLLER_UID_LABEL, uid),
        (LEGACY_JOB_NAME_LABEL, name),
    ];
    if require_prefixed_labels {
        expected.extend([(CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, name)]);
    }
    let labels = template_labels(spec);
    let labels_path = Path::new("spec")
        .child("template")
        .child("metadata")
        .child("labels");
    for (key, value) in &expected {
        // apivalidation.ValidateHasLabel
        let at = labels_path.key(key);
        let detail = format!("must be '{value}'");
        match labels.and_then(|l| l.get(*key)) {
            None => errors.push(FieldError::required(at, detail)),
            Some(actual) if actual.as_str() != Some(*value) => errors.push(FieldError::new(
                ErrorType::Invalid,
                at,
                BadValue::Raw(json_string_map(labels)),
                detail,
            )),
            Some(_) => {}
        }
    }
    let expected: Map = expected
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
        .collect();
    if selector_converts(selector) && !selector_matches(selector, Some(&Value::Object(expected))) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.selector",
            BadValue::Raw(json_label_selector(Some(selector))),
            "`selector` not auto-generated",
        ));
    }
    errors
}

/// `ValidateJobSpec`: `validateJobSpec`, then the selector (required) and that it selects the
/// template's labels.
fn job_spec_with_selector(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = job_spec(spec, path);
    let selector_path = path.child("selector");
    match spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null())
    {
        None => errors.push(FieldError::required(selector_path, "")),
        Some(selector) => errors.extend(label_selector(selector, &selector_path)),
    }
    errors.extend(selector_must_match(spec, &path.child("template")));
    errors
}

/// `validateJobSpec`: the counters, `maxFailedIndexes`, `managedBy`, the completion mode and
/// what it allows, the pod failure and success policies, `podReplacementPolicy`, the template
/// and its restart policy.
pub(super) fn job_spec(spec: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ] {
        errors.extend(non_negative(spec, key, path));
    }
    let parallelism = int_at(spec, "parallelism");
    let completions = int_at(spec, "completions");
    let per_index = int_at(spec, "backoffLimitPerIndex");
    let max_failed = int_at(spec, "maxFailedIndexes");
    if max_failed.is_some() {
        errors.extend(non_negative(spec, "maxFailedIndexes", path));
        if per_index.is_none() {
            errors.push(FieldError::required(
                path.child("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(managed_by) = spec
        .and_then(|s| s.get("managedBy"))
        .and_then(Value::as_str)
    {
        let at = path.child("managedBy");
        errors.extend(domain_prefixed_path_errors(managed_by, &at));
        if managed_by.len() > MAX_MANAGED_BY_LENGTH {
            errors.push(too_long(&at, MAX_MANAGED_BY_LENGTH));
        }
    }
    let mode = spec
        .and_then(|s| s.get("completionMode"))
        .and_then(Value::as_str);
    if let Some(mode) = mode {
        if mode != "NonIndexed" && mode != "Indexed" {
            errors.push(FieldError::new(
                ErrorType::NotSupported,
                path.child("completionMode"),
                BadValue::Raw(go_json_string(mode)),
                r#"supported values: "NonIndexed", "Indexed""#,
            ));
        }
        if mode == "Indexed" {
            errors.extend(indexed_limits(
                parallelism,
                completions,
                per_index,
                max_failed,
                path,
            ));
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for (key, value) in [
            ("backoffLimitPerIndex", per_index),
            ("maxFailedIndexes", max_failed),
        ] {
            if let Some(value) = value {
                errors.push(invalid_int(
                    &path.child(key),
                    value,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    let pod_failure_policy = spec
        .and_then(|s| s.get("podFailurePolicy"))
        .filter(|p| !p.is_null());
    if let Some(policy) = pod_failure_policy {
        errors.extend(pod_failure_policy_errors(
            spec,
            policy,
            &path.child("podFailurePolicy"),
        ));
    }
    if let Some(policy) = spec
        .and_then(|s| s.get("successPolicy"))
        .filter(|p| !p.is_null())
    {
        let at = path.child("successPolicy");
        if mode == Some("Indexed") {
            errors.extend(success_policy_errors(policy, completions, &at));
        } else {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                at,
                BadValue::Raw(go_value(Some(policy), &SUCCESS_POLICY, false)),
                "requires indexed completion mode",
            ));
        }
    }
    // validatePodReplacementPolicy: only Failed beside a pod failure policy.
    if let Some(policy) = spec
        .and_then(|s| s.get("podReplacementPolicy"))
        .and_then(Value::as_str)
    {
        let supported: &[&str] = if pod_failure_policy.is_some() {
            &["Failed"]
        } else {
            &["Failed", "TerminatingOrFailed"]
        };
        if !supported.contains(&policy) {
            errors.push(not_supported_named(
                path.child("podReplacementPolicy"),
                policy,
                supported,
            ));
        }
    }
    let template_path = path.child("template");
    let template = spec.and_then(|s| s.get("template"));
    errors.extend(template_spec(template, &template_path));
    // The defaulting may have made an unset restart policy Always: both are refused.
    let restart_path = template_path.child("spec").child("restartPolicy");
    match str_at(template.and_then(|t| t.get("spec")), "restartPolicy") {
        "Always" | "" => errors.push(FieldError::required(
            restart_path,
            r#"valid values: "OnFailure", "Never""#,
        )),
        "Never" => {}
        "OnFailure" if pod_failure_policy.is_some() => errors.push(FieldError::new(
            ErrorType::Invalid,
            restart_path,
            BadValue::Raw(go_json_string("OnFailure")),
            r#"only "Never" is supported when podFailurePolicy is specified"#,
        )),
        "OnFailure" => {}
        other => errors.push(not_supported_named(
            restart_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errors
}

/// The rules of `validateJobSpec` for an Indexed Job: completions required, the bounds of
/// parallelism and `maxFailedIndexes`, and those of a Job above the completions soft limit
/// with a backoff limit per index.
fn indexed_limits(
    parallelism: Option<i64>,
    completions: Option<i64>,
    per_index: Option<i64>,
    max_failed: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if completions.is_none() {
        errors.push(FieldError::required(
            path.child("completions"),
            "when completion mode is Indexed",
        ));
    }
    if let Some(p) = parallelism.filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB) {
        errors.push(invalid_int(
            &path.child("parallelism"),
            p,
            &format!(
                "must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"
            ),
        ));
    }
    if let (Some(c), Some(m)) = (completions, max_failed)
        && m > c
    {
        errors.push(invalid_int(
            &path.child("maxFailedIndexes"),
            m,
            "must be less than or equal to completions",
        ));
    }
    if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES_FOR_INDEXED_JOB) {
        errors.push(invalid_int(
            &path.child("maxFailedIndexes"),
            m,
            &format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
        ));
    }
    if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
        let high = format!(
            "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if max_failed.is_none() {
            errors.push(FieldError::required(
                path.child("maxFailedIndexes"),
                format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        if let Some(p) = parallelism.filter(|p| *p > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS) {
            errors.push(invalid_int(
                &path.child("parallelism"),
                p,
                &format!(
                    "must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
        if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS) {
            errors.push(invalid_int(
                &path.child("maxFailedIndexes"),
                m,
                &format!(
                    "must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
    }
    errors
}

/// `validation.IsDomainPrefixedPath`: a DNS subdomain, `/`, and an HTTP path.
pub(super) fn domain_prefixed_path_errors(value: &str, path: &Path) -> Vec<FieldError> {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        return vec![FieldError::invalid(
            path,
            value,
            r#"must be a domain-prefixed path (such as "acme.io/foo")"#,
        )];
    };
    let mut errors: Vec<FieldError> = dns1123_subdomain_name_errors(host)
        .into_iter()
        .map(|message| FieldError::invalid(path, host, message))
        .collect();
    // httpPathFmt: RFC 3986 path characters.
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(path_char) {
        errors.push(FieldError::invalid(
            path,
            rest,
            r"Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errors
}

/// `field.TooLong` of a length limit.
fn too_long(path: &Path, max: usize) -> FieldError {
    FieldError::too_long(path, i64::try_from(max).unwrap_or(i64::MAX))
}

/// `field.TooMany` of a count limit.
fn too_many(path: &Path, actual: usize, max: usize) -> FieldError {
    let wide = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    FieldError::too_many(path, wide(actual), wide(max))
}

/// `field.NotSupported` of a value of a named string type, which Go prints as JSON.
fn not_supported_named(path: impl Into<String>, value: &str, supported: &[&str]) -> FieldError {
    let list: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
    FieldError::new(
        ErrorType::NotSupported,
        path,
        BadValue::Raw(go_json_string(value)),
        format!("supported values: {}", list.join(", ")),
    )
}

/// `%q` of a list of strings, as the "valid values" details print them: `["a" "b"]`.
fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[{}]", quoted.join(" "))
}

/// `validatePodFailurePolicy`: at most 20 rules, each checked against the template's
/// container names.
fn pod_failure_policy_errors(spec: Option<&Value>, policy: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rules_path = path.child("rules");
    let rules = list_at(Some(policy), "rules");
    if rules.len() > MAX_POD_FAILURE_POLICY_RULES {
        errors.push(too_many(
            &rules_path,
            rules.len(),
            MAX_POD_FAILURE_POLICY_RULES,
        ));
    }
    let pod_spec = spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"));
    let containers: HashSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|key| list_at(pod_spec, key))
        .map(|c| str_at(Some(c), "name"))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        errors.extend(pod_failure_policy_rule_errors(
            spec,
            rule,
            &rules_path.index(i),
            &containers,
        ));
    }
    errors
}

/// `validatePodFailurePolicyRule`: the action, the requirement on exit codes or on pod
/// conditions, and exactly one of the two.
fn pod_failure_policy_rule_errors(
    spec: Option<&Value>,
    rule: &Value,
    path: &Path,
    containers: &HashSet<&str>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let action_path = path.child("action");
    match str_at(Some(rule), "action") {
        "" => errors.push(FieldError::required(
            action_path,
            format!("valid values: {}", quoted_list(&POD_FAILURE_POLICY_ACTIONS)),
        )),
        "FailIndex" => {
            if !is_set(spec, "backoffLimitPerIndex") {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    action_path,
                    BadValue::Raw(go_json_string("FailIndex")),
                    "requires the backoffLimitPerIndex to be set",
                ));
            }
        }
        action if POD_FAILURE_POLICY_ACTIONS.contains(&action) => {}
        other => errors.push(not_supported_named(
            action_path,
            other,
            &POD_FAILURE_POLICY_ACTIONS,
        )),
    }
    let on_exit_codes = rule.get("onExitCodes").filter(|v| !v.is_null());
    let on_pod_conditions = list_at(Some(rule), "onPodConditions");
    if let Some(requirement) = on_exit_codes {
        errors.extend(on_exit_codes_errors(
            requirement,
            &path.child("onExitCodes"),
            containers,
        ));
    }
    if !on_pod_conditions.is_empty() {
        errors.extend(on_pod_conditions_errors(
            on_pod_conditions,
            &path.child("onPodConditions"),
        ));
    }
    let detail = match (on_exit_codes.is_some(), on_pod_conditions.is_empty()) {
        (true, false) => Some("specifying both OnExitCodes and OnPodConditions is not supported"),
        (false, true) => Some("specifying one of OnExitCodes and OnPodConditions is required"),
        _ => None,
    };
    if let Some(detail) = detail {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path,
            BadValue::Omit,
            detail,
        ));
    }
    errors
}

/// `validatePodFailurePolicyRuleOnPodConditions`: at most 20 patterns, each a qualified
/// condition type and a condition status.
fn on_pod_conditions_errors(patterns: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if patterns.len() > MAX_ON_POD_CONDITIONS_PATTERNS {
        errors.push(too_many(
            path,
            patterns.len(),
            MAX_ON_POD_CONDITIONS_PATTERNS,
        ));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let at = path.index(j);
        let ty = str_at(Some(pattern), "type");
        for message in label_key_errors(ty) {
            errors.push(FieldError::invalid(at.child("type"), ty, message));
        }
        let status_path = at.child("status");
        match str_at(Some(pattern), "status") {
            "" => errors.push(FieldError::required(
                status_path,
                format!("valid values: {}", quoted_list(&ON_POD_CONDITIONS_STATUSES)),
            )),
            status if ON_POD_CONDITIONS_STATUSES.contains(&status) => {}
            other => errors.push(not_supported_named(
                status_path,
                other,
                &ON_POD_CONDITIONS_STATUSES,
            )),
        }
    }
    errors
}

/// `validatePodFailurePolicyRuleOnExitCodes`: the operator, a container of the template, and
/// 1 to 255 distinct exit codes in order (no 0 for `In`).
fn on_exit_codes_errors(
    requirement: &Value,
    path: &Path,
    containers: &HashSet<&str>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let operator_path = path.child("operator");
    let operator = str_at(Some(requirement), "operator");
    match operator {
        "" => errors.push(FieldError::required(
            operator_path,
            format!("valid values: {}", quoted_list(&ON_EXIT_CODES_OPERATORS)),
        )),
        op if ON_EXIT_CODES_OPERATORS.contains(&op) => {}
        other => errors.push(not_supported_named(
            operator_path,
            other,
            &ON_EXIT_CODES_OPERATORS,
        )),
    }
    if let Some(name) = requirement.get("containerName").and_then(Value::as_str)
        && !containers.contains(name)
    {
        errors.push(FieldError::invalid(
            path.child("containerName"),
            name,
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = path.child("values");
    let values = list_at(Some(requirement), "values");
    let printed = || BadValue::Raw(go_value(requirement.get("values"), &INT_SLICE, false));
    if values.is_empty() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &values_path,
            printed(),
            "at least one value is required",
        ));
    } else if values.len() > MAX_ON_EXIT_CODES_VALUES {
        errors.push(too_many(
            &values_path,
            values.len(),
            MAX_ON_EXIT_CODES_VALUES,
        ));
    }
    let codes: Vec<i64> = values.iter().map(|v| v.as_i64().unwrap_or(0)).collect();
    let mut seen = HashSet::new();
    for (j, code) in codes.iter().enumerate() {
        let at = values_path.index(j);
        if operator == "In" && *code == 0 {
            errors.push(invalid_int(&at, 0, "must not be 0 for the In operator"));
        }
        if !seen.insert(*code) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                at,
                BadValue::Raw(code.to_string()),
                "",
            ));
        }
    }
    if codes.windows(2).any(|w| w[0] > w[1]) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            values_path,
            printed(),
            "must be ordered",
        ));
    }
    errors
}

/// `validateSuccessPolicy` of an Indexed Job: 1 to 20 rules, each `validateSuccessPolicyRule`.
fn success_policy_errors(policy: &Value, completions: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rules_path = path.child("rules");
    let rules = list_at(Some(policy), "rules");
    if rules.is_empty() {
        errors.push(FieldError::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > MAX_SUCCESS_POLICY_RULES {
        errors.push(too_many(&rules_path, rules.len(), MAX_SUCCESS_POLICY_RULES));
    }
    for (i, rule) in rules.iter().enumerate() {
        errors.extend(success_policy_rule_errors(
            rule,
            completions,
            &rules_path.index(i),
        ));
    }
    errors
}

/// `validateSuccessPolicyRule`: a count or a list of indexes (below completions, in order), a
/// count within completions and within the indexes listed. Go reads completions without
/// checking it is set (an Indexed Job without completions makes the real server panic);
/// here the rules that need it are skipped.
fn success_policy_rule_errors(
    rule: &Value,
    completions: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
    let count = int_at(Some(rule), "succeededCount");
    if indexes.is_none() && count.is_none() {
        errors.push(FieldError::required(
            path,
            "at least one of succeededCount or succeededIndexes must be specified",
        ));
    }
    let mut total = 0;
    if let Some(indexes) = indexes {
        let at = path.child("succeededIndexes");
        if indexes.len() > MAX_SUCCEEDED_INDEXES_LENGTH {
            errors.push(too_long(&at, MAX_SUCCEEDED_INDEXES_LENGTH));
        }
        if let Some(completions) = completions {
            match indexes_format(indexes, completions) {
                Ok(n) => total = n,
                Err(e) => errors.push(FieldError::invalid(
                    at,
                    indexes,
                    format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
    }
    if let Some(count) = count {
        let at = path.child("succeededCount");
        if count < 0 {
            errors.push(invalid_int(
                &at,
                count,
                "must be greater than or equal to 0",
            ));
        }
        if let Some(completions) = completions.filter(|c| count > *c) {
            errors.push(invalid_int(
                &at,
                count,
                &format!(
                    "must be less than or equal to {completions} (the number of specified completions)"
                ),
            ));
        }
        if indexes.is_some() && completions.is_some() && count > total {
            errors.push(invalid_int(
                &at,
                count,
                &format!(
                    "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                ),
            ));
        }
    }
    errors
}

/// `validateIndexesFormat`: comma-separated indexes and `a-b` intervals below `completions`,
/// in increasing order; the number of indexes they name.
fn indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(last) = last.filter(|l| *l >= x) {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// `parseIndexInterval`: `x` or `x-y` with `x < y < completions`.
fn index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            go_quote(interval)
        ));
    }
    let index = |text: &str| -> Result<i64, String> {
        let n = go_atoi(text).ok_or_else(|| {
            format!(
                "cannot convert string to integer for index: {}",
                go_quote(text)
            )
        })?;
        if n >= completions {
            return Err(format!("too large index: {}", go_quote(text)));
        }
        Ok(n)
    };
    let x = index(limits[0])?;
    let Some(second) = limits.get(1) else {
        return Ok((x, x));
    };
    let y = index(second)?;
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// `strconv.Atoi`: an optional sign and decimal digits that fit 64 bits.
fn go_atoi(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `validateFailedIndexesNotOverlapCompleted`: walks both interval lists in order, skipping
/// intervals that do not parse (their format is reported on its own).
fn failed_overlapping_completed(completed: &str, failed: &str, completions: i64) -> Option<String> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let completed: Vec<&str> = completed.split(',').collect();
    let failed: Vec<&str> = failed.split(',').collect();
    let (mut c_pos, mut f_pos) = (0, 0);
    let mut c = index_interval(completed[0], completions);
    let mut f = index_interval(failed[0], completions);
    while c_pos < completed.len() && f_pos < failed.len() {
        match (&c, &f) {
            (Err(_), _) => {
                c_pos += 1;
                if let Some(next) = completed.get(c_pos) {
                    c = index_interval(next, completions);
                }
            }
            (_, Err(_)) => {
                f_pos += 1;
                if let Some(next) = failed.get(f_pos) {
                    f = index_interval(next, completions);
                }
            }
            (Ok((cx, cy)), Ok((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Some(format!(
                        "failedIndexes and completedIndexes overlap at index: {}",
                        cx.max(fx)
                    ));
                }
                if cx <= fx {
                    c_pos += 1;
                    if let Some(next) = completed.get(c_pos) {
                        c = index_interval(next, completions);
                    }
                } else {
                    f_pos += 1;
                    if let Some(next) = failed.get(f_pos) {
                        f = index_interval(next, completions);
                    }
                }
            }
        }
    }
    None
}

/// `validatePodTemplateUpdate`: a running Job's template may not change. A suspended Job that
/// has not run (or was suspended since, with no pod active) may change its pods' scheduling
/// directives (node affinity, node selector, tolerations, scheduling gates), template labels
/// and annotations, and its containers' resources (the 1.36 beta gates
/// MutableSchedulingDirectivesForSuspendedJobs and MutablePodResourcesForSuspendedJobs).
fn template_update(spec: Option<&Value>, old: &Object, path: &Path) -> Vec<FieldError> {
    let template = spec.and_then(|s| s.get("template"));
    let old_spec = old.get("spec");
    let mut old_template = old_spec
        .and_then(|s| s.get("template"))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let suspended = old_spec
        .and_then(|s| s.get("suspend"))
        .and_then(Value::as_bool)
        == Some(true);
    let state = JobState::of(old);
    // shouldAllowMutablePodTemplate
    let mutable = suspended
        && (!is_set(state.status, "startTime") || state.is("Suspended"))
        && state.count("active") == 0;
    if mutable {
        take_scheduling_directives(&mut old_template, template);
    }
    let template_path = path.child("template");
    if !mutable {
        if !internal::semantic_eq("core.PodTemplateSpec", template, Some(&old_template)) {
            return vec![immutable(
                &template_path,
                internal::marshal("core.PodTemplateSpec", template, Source::Decoded),
            )];
        }
        return Vec::new();
    }
    // validatePodResourceUpdatesOnly: the containers' resources taken from the new template
    // where the lists line up by name, then the specs compared.
    let new_pod = template.and_then(|t| t.get("spec"));
    let mut old_pod = old_template
        .get("spec")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    for key in ["containers", "initContainers"] {
        let new_list = list_at(new_pod, key);
        if let Some(Value::Array(old_list)) = old_pod.get_mut(key)
            && old_list.len() == new_list.len()
        {
            for (old_c, new_c) in old_list.iter_mut().zip(new_list) {
                if str_at(Some(old_c), "name") == str_at(Some(new_c), "name")
                    && let Value::Object(c) = old_c
                {
                    match new_c.get("resources") {
                        Some(r) => c.insert("resources".into(), r.clone()),
                        None => c.remove("resources"),
                    };
                }
            }
        }
    }
    if internal::semantic_eq("core.PodSpec", new_pod, Some(&old_pod)) {
        return Vec::new();
    }
    vec![immutable(
        &template_path.child("spec"),
        internal::marshal("core.PodSpec", new_pod, Source::Decoded),
    )]
}

/// `field.Invalid(path, value, "field is immutable")` with a value already in JSON.
fn immutable(path: &Path, json: String) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        path,
        BadValue::Raw(json),
        "field is immutable",
    )
}

/// What `validatePodTemplateUpdate` copies from the new template into the old one before
/// comparing them, for a Job whose scheduling directives may change.
fn take_scheduling_directives(old_template: &mut Value, template: Option<&Value>) {
    let new_spec = template.and_then(|t| t.get("spec"));
    let new_affinity = new_spec
        .and_then(|s| s.get("affinity"))
        .filter(|a| !a.is_null());
    let Value::Object(old_t) = old_template else {
        return;
    };
    let metadata = old_t
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = metadata {
        for key in ["labels", "annotations"] {
            match template
                .and_then(|t| t.get("metadata"))
                .and_then(|m| m.get(key))
            {
                Some(v) => m.insert(key.into(), v.clone()),
                None => m.remove(key),
            };
        }
    }
    let spec = old_t
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(spec) = spec else {
        return;
    };
    let old_affinity = spec.get("affinity").filter(|a| !a.is_null()).cloned();
    match (new_affinity, old_affinity) {
        // The affinity may be cleared if it held nothing but node affinity.
        (None, Some(mut old)) => {
            if let Value::Object(a) = &mut old {
                a.remove("nodeAffinity");
                let empty = a.values().all(Value::is_null);
                if empty {
                    spec.remove("affinity");
                } else {
                    spec.insert("affinity".into(), old);
                }
            }
        }
        (Some(new), None) => {
            let node = new.get("nodeAffinity").cloned().unwrap_or(Value::Null);
            spec.insert(
                "affinity".into(),
                recon_apimachinery::json!({"nodeAffinity": node}),
            );
        }
        (Some(new), Some(mut old)) => {
            if let Value::Object(a) = &mut old {
                match new.get("nodeAffinity") {
                    Some(n) => a.insert("nodeAffinity".into(), n.clone()),
                    None => a.remove("nodeAffinity"),
                };
            }
            spec.insert("affinity".into(), old);
        }
        (None, None) => {}
    }
    for key in ["nodeSelector", "tolerations", "schedulingGates"] {
        match new_spec.and_then(|s| s.get(key)) {
            Some(v) => spec.insert(key.into(), v.clone()),
            None => spec.remove(key),
        };
    }
}

/// `ValidateJobSpecUpdate`: the spec again, `validateCompletions`, then the fields that may
/// not change.
fn job_spec_update(spec: Option<&Value>, old: &Object) -> Vec<FieldError> {
    let old_spec = old.get("spec");
    let path = Path::new("spec");
    let mut errors = job_spec_with_selector(spec, &path);
    errors.extend(completions_update(spec, old_spec, &path));
    errors.extend(immutable_selector(spec, old_spec));
    errors.extend(template_update(spec, old, &path));
    for (key, shape) in [
        ("completionMode", &STR_PTR),
        ("podFailurePolicy", &POD_FAILURE_POLICY_PTR),
        ("backoffLimitPerIndex", &INT_PTR),
        ("managedBy", &STR_PTR),
        ("successPolicy", &SUCCESS_POLICY_PTR),
    ] {
        let (new, old) = (
            spec.and_then(|s| s.get(key)),
            old_spec.and_then(|s| s.get(key)),
        );
        // apiequality.Semantic.DeepEqual: an empty list is a missing one.
        if go_value(new, shape, true) != go_value(old, shape, true) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                path.child(key),
                BadValue::Raw(go_value(new, shape, false)),
                "field is immutable",
            ));
        }
    }
    errors
}

/// `validateCompletions`: a NonIndexed Job's completions may not change; an Indexed Job's may,
/// together with parallelism.
fn completions_update(
    spec: Option<&Value>,
    old_spec: Option<&Value>,
    path: &Path,
) -> Option<FieldError> {
    let new = int_at(spec, "completions");
    if new == int_at(old_spec, "completions") {
        return None;
    }
    let at = path.child("completions");
    if str_at(spec, "completionMode") != "Indexed" {
        return Some(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(new.map_or_else(|| "null".to_owned(), |n| n.to_string())),
            "field is immutable",
        ));
    }
    // A missing one is the spec's error.
    let new = new?;
    (Some(new) != int_at(spec, "parallelism")).then(|| {
        invalid_int(
            &at,
            new,
            "can only be modified in tandem with spec.parallelism",
        )
    })
}

/// The shape of an internal Go value, to print it as `encoding/json` writes it (its fields
/// have no JSON tags, so they are named as in Go) and compare it as
/// `apiequality.Semantic.DeepEqual` does.
enum Go {
    /// A string, or a type named after one; "" when absent.
    Str,
    /// An integer; 0 when absent.
    Int,
    /// A pointer: `null` when absent.
    Ptr(&'static Go),
    /// A slice: `null` when absent, `[]` when empty.
    Slice(&'static Go),
    /// A struct: its Go field names, in order, with the JSON keys they come from.
    Struct(&'static [(&'static str, &'static str, Go)]),
}

static STR: Go = Go::Str;
static INT: Go = Go::Int;
static STR_PTR: Go = Go::Ptr(&STR);
static INT_PTR: Go = Go::Ptr(&INT);
static INT_SLICE: Go = Go::Slice(&INT);

/// `batch.PodFailurePolicyOnExitCodesRequirement`.
static ON_EXIT_CODES: Go = Go::Struct(&[
    ("ContainerName", "containerName", Go::Ptr(&STR)),
    ("Operator", "operator", Go::Str),
    ("Values", "values", Go::Slice(&INT)),
]);
/// `batch.PodFailurePolicyOnPodConditionsPattern`.
static ON_POD_CONDITION: Go =
    Go::Struct(&[("Type", "type", Go::Str), ("Status", "status", Go::Str)]);
/// `batch.PodFailurePolicyRule`.
static POD_FAILURE_POLICY_RULE: Go = Go::Struct(&[
    ("Action", "action", Go::Str),
    ("OnExitCodes", "onExitCodes", Go::Ptr(&ON_EXIT_CODES)),
    (
        "OnPodConditions",
        "onPodConditions",
        Go::Slice(&ON_POD_CONDITION),
    ),
]);
/// `*batch.PodFailurePolicy`.
static POD_FAILURE_POLICY_PTR: Go = Go::Ptr(&POD_FAILURE_POLICY);
static POD_FAILURE_POLICY: Go =
    Go::Struct(&[("Rules", "rules", Go::Slice(&POD_FAILURE_POLICY_RULE))]);
/// `batch.SuccessPolicyRule`.
static SUCCESS_POLICY_RULE: Go = Go::Struct(&[
    ("SucceededIndexes", "succeededIndexes", Go::Ptr(&STR)),
    ("SucceededCount", "succeededCount", Go::Ptr(&INT)),
]);
/// `batch.SuccessPolicy` and a pointer to one.
static SUCCESS_POLICY: Go = Go::Struct(&[("Rules", "rules", Go::Slice(&SUCCESS_POLICY_RULE))]);
static SUCCESS_POLICY_PTR: Go = Go::Ptr(&SUCCESS_POLICY);
/// `*batch.UncountedTerminatedPods`.
static UNCOUNTED_TERMINATED_PODS_PTR: Go = Go::Ptr(&UNCOUNTED_TERMINATED_PODS);
static UNCOUNTED_TERMINATED_PODS: Go = Go::Struct(&[
    ("Succeeded", "succeeded", Go::Slice(&STR)),
    ("Failed", "failed", Go::Slice(&STR)),
]);

/// `value` (a field of the decoded object, `None` when absent) as `json.Marshal` writes the
/// Go value of `shape`; with `semantic`, empty lists are written as missing ones, so that two
/// values are `Semantic.DeepEqual` when their texts are equal.
fn go_value(value: Option<&Value>, shape: &Go, semantic: bool) -> String {
    let value = value.filter(|v| !v.is_null());
    match shape {
        Go::Str => go_json_string(value.and_then(Value::as_str).unwrap_or("")),
        Go::Int => value.map_or_else(|| "0".to_owned(), go_json),
        Go::Ptr(inner) => match value {
            None => "null".to_owned(),
            Some(v) => go_value(Some(v), inner, semantic),
        },
        Go::Slice(item) => match value.and_then(Value::as_array) {
            None => "null".to_owned(),
            Some(items) if items.is_empty() && semantic => "null".to_owned(),
            Some(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|v| go_value(Some(v), item, semantic))
                    .collect();
                format!("[{}]", items.join(","))
            }
        },
        Go::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(name, key, shape)| {
                    format!(
                        "{}:{}",
                        go_json_string(name),
                        go_value(value.and_then(|v| v.get(*key)), shape, semantic)
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
    }
}

/// A Job's status and the spec its rules read.
struct JobState<'a> {
    spec: Option<&'a Value>,
    status: Option<&'a Value>,
}

impl<'a> JobState<'a> {
    fn of(job: &'a Object) -> Self {
        JobState {
            spec: job.get("spec"),
            status: job.get("status"),
        }
    }

    /// `IsConditionTrue` / `IsConditionFalse`: a condition of type `ty` with `status`.
    fn condition(&self, ty: &str, status: &str) -> bool {
        list_at(self.status, "conditions")
            .iter()
            .any(|c| str_at(Some(c), "type") == ty && str_at(Some(c), "status") == status)
    }

    fn is(&self, ty: &str) -> bool {
        self.condition(ty, "True")
    }

    /// `IsJobFinished`: Complete or Failed.
    fn finished(&self) -> bool {
        self.is("Complete") || self.is("Failed")
    }

    fn count(&self, key: &str) -> i64 {
        int_at(self.status, key).unwrap_or(0)
    }

    /// A field of the status that is a pointer in Go: `None` when unset.
    fn field(&self, key: &str) -> Option<&'a Value> {
        self.status
            .and_then(|s| s.get(key))
            .filter(|v| !v.is_null())
    }

    fn time(&self, key: &str) -> Option<&'a str> {
        self.field(key).and_then(Value::as_str)
    }
}

/// `ptr.Equal` of two times: both unset, or the same instant.
fn same_time(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => match (a.parse::<jiff::Timestamp>(), b.parse::<jiff::Timestamp>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        },
        _ => false,
    }
}

/// A `*metav1.Time` as `field.Invalid` prints it: JSON, `null` when unset.
fn time_value(time: Option<&str>) -> BadValue {
    BadValue::Raw(time.map_or_else(|| "null".to_owned(), go_json_string))
}

/// `field.Invalid` of `status.conditions`, without a value.
fn conditions_error(detail: impl Into<String>) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        "status.conditions",
        BadValue::Omit,
        detail,
    )
}

/// Which of `validateJobStatus`'s rules `getStatusValidationOptions` turns on: with
/// `JobManagedBy` (GA in 1.36) a rule is checked when a field it reads changed.
struct StatusOptions {
    reject_decreasing_succeeded: bool,
    /// Also `RejectCompletedIndexesForNonIndexedJob`, which Go sets alike.
    reject_invalid_completed_indexes: bool,
    /// Also `RejectFailedIndexesForNoBackoffLimitPerIndex`, which Go sets alike.
    reject_invalid_failed_indexes: bool,
    reject_failed_indexes_overlapping_completed: bool,
    reject_failed_without_failure_target: bool,
    reject_complete_without_success_criteria_met: bool,
    reject_finished_with_active_pods: bool,
    reject_finished_without_start_time: bool,
    reject_finished_with_uncounted_pods: bool,
    reject_start_time_update: bool,
    reject_completion_time_before_start_time: bool,
    reject_completion_time_without_complete: bool,
    reject_complete_with_failed: bool,
    reject_complete_with_failure_target: bool,
    reject_more_ready_than_active: bool,
    reject_finished_with_terminating_pods: bool,
}

impl StatusOptions {
    /// `getStatusValidationOptions`.
    fn of(new: &JobState, old: &JobState) -> Self {
        let changed = |ty: &str| old.is(ty) != new.is(ty);
        let finished = old.finished() != new.finished();
        let complete = changed("Complete");
        let failed = changed("Failed");
        let completed_indexes =
            str_at(old.status, "completedIndexes") != str_at(new.status, "completedIndexes");
        let failed_indexes = old.field("failedIndexes") != new.field("failedIndexes");
        let active = old.count("active") != new.count("active");
        let start_time = !same_time(old.time("startTime"), new.time("startTime"));
        let completion_time = !same_time(old.time("completionTime"), new.time("completionTime"));
        let uncounted = go_value(
            old.field("uncountedTerminatedPods"),
            &UNCOUNTED_TERMINATED_PODS_PTR,
            true,
        ) != go_value(
            new.field("uncountedTerminatedPods"),
            &UNCOUNTED_TERMINATED_PODS_PTR,
            true,
        );
        let ready = int_at(old.status, "ready") != int_at(new.status, "ready");
        let terminating = int_at(old.status, "terminating") != int_at(new.status, "terminating");
        let spec = new.spec;
        let suspended_with_zero_completions =
            spec.and_then(|s| s.get("suspend")).and_then(Value::as_bool) == Some(true)
                && int_at(spec, "completions") == Some(0);
        let resuming = old.condition("Suspended", "True") && new.condition("Suspended", "False");
        let indexed = str_at(spec, "completionMode") == "Indexed";
        StatusOptions {
            // An Indexed Job scaled down with parallelism = completions may lose successes.
            reject_decreasing_succeeded: !indexed
                || int_at(spec, "completions") != int_at(spec, "parallelism"),
            reject_invalid_completed_indexes: completed_indexes,
            reject_invalid_failed_indexes: failed_indexes,
            reject_failed_indexes_overlapping_completed: failed_indexes || completed_indexes,
            reject_failed_without_failure_target: failed || failed_indexes,
            reject_complete_without_success_criteria_met: complete || changed("SuccessCriteriaMet"),
            reject_finished_with_active_pods: finished || active,
            reject_finished_without_start_time: (finished || start_time)
                && !suspended_with_zero_completions,
            reject_finished_with_uncounted_pods: finished || uncounted,
            reject_start_time_update: start_time && !resuming,
            reject_completion_time_before_start_time: start_time || completion_time,
            reject_completion_time_without_complete: complete || completion_time,
            reject_complete_with_failed: complete || failed,
            reject_complete_with_failure_target: complete || changed("FailureTarget"),
            reject_more_ready_than_active: ready || active,
            reject_finished_with_terminating_pods: finished || terminating,
        }
    }
}

/// `jobStatusStrategy.ValidateUpdate`: `ValidateJobUpdateStatus` after its metadata part.
pub(super) fn validate_status_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let (new, old) = (JobState::of(new), JobState::of(old));
    let opts = StatusOptions::of(&new, &old);
    let mut errors = job_status(&new, &opts);
    // ValidateJobStatusUpdate
    for ty in ["Failed", "Complete", "FailureTarget"] {
        if old.is(ty) && !new.is(ty) {
            errors.push(conditions_error(format!(
                "cannot disable the terminal {ty}=True condition"
            )));
        }
    }
    let status = Path::new("status");
    for (key, reject) in [
        ("failed", true),
        ("succeeded", opts.reject_decreasing_succeeded),
    ] {
        if reject && new.count(key) < old.count(key) {
            errors.push(invalid_int(
                &status.child(key),
                new.count(key),
                &format!("cannot decrease the {key} counter"),
            ));
        }
    }
    let completion_time = new.time("completionTime");
    if completion_time.is_some()
        && old.time("completionTime").is_some()
        && !same_time(completion_time, old.time("completionTime"))
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            status.child("completionTime"),
            time_value(completion_time),
            "field is immutable",
        ));
    }
    let suspended = new
        .spec
        .and_then(|s| s.get("suspend"))
        .and_then(Value::as_bool)
        == Some(true);
    if opts.reject_start_time_update
        && old.time("startTime").is_some()
        && !same_time(old.time("startTime"), new.time("startTime"))
        && !suspended
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            status.child("startTime"),
            time_value(new.time("startTime")),
            "field is immutable for unsuspended job once set",
        ));
    }
    if old.is("SuccessCriteriaMet") && !new.is("SuccessCriteriaMet") {
        errors.push(conditions_error(
            "cannot disable the SuccessCriteriaMet=True condition",
        ));
    }
    if old.is("Complete") && !old.is("SuccessCriteriaMet") && new.is("SuccessCriteriaMet") {
        errors.push(conditions_error(
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
        ));
    }
    errors
}

/// `validateJobStatus`: counters, uncounted pods, then each rule `opts` turns on, in Go's
/// order.
fn job_status(job: &JobState, opts: &StatusOptions) -> Vec<FieldError> {
    let path = Path::new("status");
    let mut errors = Vec::new();
    for key in ["active", "succeeded", "failed", "ready", "terminating"] {
        errors.extend(non_negative(job.status, key, &path));
    }
    if let Some(uncounted) = job.field("uncountedTerminatedPods") {
        let at = path.child("uncountedTerminatedPods");
        let mut seen = HashSet::new();
        for key in ["succeeded", "failed"] {
            for (i, uid) in list_at(Some(uncounted), key).iter().enumerate() {
                let uid = uid.as_str().unwrap_or("");
                let p = at.child(key).index(i);
                // A types.UID, which Go prints as JSON.
                if uid.is_empty() {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        p,
                        BadValue::Raw(go_json_string(uid)),
                        "must not be empty",
                    ));
                } else if !seen.insert(uid) {
                    errors.push(FieldError::new(
                        ErrorType::Duplicate,
                        p,
                        BadValue::Raw(go_json_string(uid)),
                        "",
                    ));
                }
            }
        }
    }
    let (complete, failed) = (job.is("Complete"), job.is("Failed"));
    let failure_target = job.is("FailureTarget");
    let success_criteria_met = job.is("SuccessCriteriaMet");
    let finished = job.finished();
    if opts.reject_complete_with_failed && complete && failed {
        errors.push(conditions_error(
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if opts.reject_complete_with_failure_target && complete && failure_target {
        errors.push(conditions_error(
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let (start_time, completion_time) = (job.time("startTime"), job.time("completionTime"));
    let completion_path = path.child("completionTime");
    if opts.reject_completion_time_without_complete {
        if completion_time.is_some() && !complete {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &completion_path,
                time_value(completion_time),
                "cannot set completionTime when there is no Complete=True condition",
            ));
        }
        if completion_time.is_none() && complete {
            errors.push(FieldError::required(
                &completion_path,
                "completionTime is required for Complete jobs",
            ));
        }
    }
    if opts.reject_completion_time_before_start_time
        && let (Some(start), Some(end)) = (start_time, completion_time)
        && let (Ok(s), Ok(e)) = (
            start.parse::<jiff::Timestamp>(),
            end.parse::<jiff::Timestamp>(),
        )
        && e < s
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &completion_path,
            time_value(completion_time),
            "must be equal to or after `startTime`",
        ));
    }
    if opts.reject_failed_without_failure_target && failed && !failure_target {
        errors.push(conditions_error(
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if opts.reject_complete_without_success_criteria_met && complete && !success_criteria_met {
        errors.push(conditions_error(
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    if opts.reject_finished_with_active_pods && job.count("active") > 0 && finished {
        errors.push(invalid_int(
            &path.child("active"),
            job.count("active"),
            "active>0 is invalid for finished job",
        ));
    }
    if opts.reject_finished_without_start_time && start_time.is_none() && finished {
        errors.push(FieldError::required(
            path.child("startTime"),
            "startTime is required for finished job",
        ));
    }
    if opts.reject_finished_with_uncounted_pods
        && finished
        && let Some(uncounted) = job.field("uncountedTerminatedPods")
        && list_at(Some(uncounted), "succeeded").len() + list_at(Some(uncounted), "failed").len()
            > 0
    {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("uncountedTerminatedPods"),
            BadValue::Raw(go_value(
                Some(uncounted),
                &UNCOUNTED_TERMINATED_PODS_PTR,
                false,
            )),
            "must be empty for finished job",
        ));
    }
    let spec = job.spec;
    let completions = int_at(spec, "completions");
    let completed_indexes = str_at(job.status, "completedIndexes");
    let failed_indexes = job.field("failedIndexes").and_then(Value::as_str);
    let completed_path = path.child("completedIndexes");
    let failed_path = path.child("failedIndexes");
    if opts.reject_invalid_completed_indexes
        && let Some(completions) = completions
        && let Err(e) = indexes_format(completed_indexes, completions)
    {
        errors.push(FieldError::invalid(
            &completed_path,
            completed_indexes,
            format!("error parsing completedIndexes: {e}"),
        ));
    }
    if opts.reject_invalid_failed_indexes
        && let (Some(completions), true, Some(failed_indexes)) = (
            completions,
            is_set(spec, "backoffLimitPerIndex"),
            failed_indexes,
        )
        && let Err(e) = indexes_format(failed_indexes, completions)
    {
        // A *string here, printed as JSON.
        errors.push(FieldError::new(
            ErrorType::Invalid,
            &failed_path,
            BadValue::Raw(go_json_string(failed_indexes)),
            format!("error parsing failedIndexes: {e}"),
        ));
    }
    let indexed = str_at(spec, "completionMode") == "Indexed";
    if opts.reject_invalid_completed_indexes && !completed_indexes.is_empty() && !indexed {
        errors.push(FieldError::invalid(
            &completed_path,
            completed_indexes,
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    if opts.reject_invalid_failed_indexes
        && !is_set(spec, "backoffLimitPerIndex")
        && let Some(failed_indexes) = failed_indexes
    {
        errors.push(FieldError::invalid(
            &failed_path,
            failed_indexes,
            "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ));
    }
    if opts.reject_failed_indexes_overlapping_completed
        && let (Some(completions), Some(failed_indexes)) = (completions, failed_indexes)
        && let Some(e) =
            failed_overlapping_completed(completed_indexes, failed_indexes, completions)
    {
        errors.push(FieldError::invalid(&failed_path, failed_indexes, e));
    }
    if opts.reject_finished_with_terminating_pods
        && let Some(terminating) = int_at(job.status, "terminating").filter(|t| *t > 0)
        && finished
    {
        errors.push(invalid_int(
            &path.child("terminating"),
            terminating,
            "terminating>0 is invalid for finished job",
        ));
    }
    if opts.reject_more_ready_than_active
        && let Some(ready) = int_at(job.status, "ready").filter(|r| *r > job.count("active"))
    {
        errors.push(invalid_int(
            &path.child("ready"),
            ready,
            "cannot set more ready pods than active",
        ));
    }
    // AllowForSuccessCriteriaMetInExtendedScope is on: a NonIndexed Job, or one without a
    // success policy, may have SuccessCriteriaMet.
    if success_criteria_met && failed {
        errors.push(conditions_error(
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if success_criteria_met && failure_target {
        errors.push(conditions_error(
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if is_set(spec, "successPolicy") && !success_criteria_met && complete {
        errors.push(conditions_error(
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn index_lists_are_read_as_parse_index_interval_reads_them() {
        assert_eq!(indexes_format("", 3), Ok(0));
        assert_eq!(indexes_format("0,2-4,7", 10), Ok(5));
        assert_eq!(indexes_format("+1", 3), Ok(1));
        assert_eq!(
            indexes_format("1-2-3", 10),
            Err("the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'".to_owned())
        );
        assert_eq!(
            indexes_format("-1", 10),
            Err(r#"cannot convert string to integer for index: """#.to_owned())
        );
        assert_eq!(
            indexes_format("a", 10),
            Err(r#"cannot convert string to integer for index: "a""#.to_owned())
        );
        assert_eq!(
            indexes_format("3", 3),
            Err(r#"too large index: "3""#.to_owned())
        );
        assert_eq!(
            indexes_format("2-1", 3),
            Err("non-increasing order, previous: 2, current: 1".to_owned())
        );
        assert_eq!(
            indexes_format("0-2,2", 5),
            Err("non-increasing order, previous: 2, current: 2".to_owned())
        );
        assert_eq!(
            indexes_format("99999999999999999999", 5),
            Err(r#"cannot convert string to integer for index: "99999999999999999999""#.to_owned())
        );
    }

    #[test]
    fn overlaps_skip_intervals_that_do_not_parse() {
        assert_eq!(failed_overlapping_completed("0-2", "3-4", 5), None);
        assert_eq!(
            failed_overlapping_completed("0,3-4", "1,4", 5),
            Some("failedIndexes and completedIndexes overlap at index: 4".to_owned())
        );
        assert_eq!(
            failed_overlapping_completed("x,2", "9,2", 5),
            Some("failedIndexes and completedIndexes overlap at index: 2".to_owned())
        );
        assert_eq!(failed_overlapping_completed("", "1", 5), None);
    }

    #[test]
    fn internal_values_print_with_go_field_names() {
        let policy = json!({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]});
        assert_eq!(
            go_value(Some(&policy), &POD_FAILURE_POLICY_PTR, false),
            r#"{"Rules":[{"Action":"FailJob","OnExitCodes":{"ContainerName":null,"Operator":"In","Values":[1]},"OnPodConditions":null}]}"#
        );
        assert_eq!(go_value(None, &SUCCESS_POLICY_PTR, false), "null");
        let empty = json!({"rules": []});
        assert_eq!(
            go_value(Some(&empty), &SUCCESS_POLICY, false),
            r#"{"Rules":[]}"#
        );
        assert_eq!(
            go_value(Some(&empty), &SUCCESS_POLICY, true),
            go_value(Some(&json!({})), &SUCCESS_POLICY, true)
        );
        assert_eq!(
            go_value(Some(&json!(" <x>")), &STR_PTR, false),
            r#"" \u003cx\u003e""#
        );
    }

    #[test]
    fn domain_prefixed_paths() {
        let path = Path::new("spec").child("managedBy");
        assert!(domain_prefixed_path_errors("example.com/x", &path).is_empty());
        assert_eq!(domain_prefixed_path_errors("x", &path).len(), 1);
        assert_eq!(
            domain_prefixed_path_errors("Example.com/a b", &path).len(),
            2
        );
    }
}
