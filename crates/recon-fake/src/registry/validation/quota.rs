//! ResourceQuotas (`ValidateResourceQuota`, `ValidateResourceQuotaUpdate`,
//! `ValidateResourceQuotaStatusUpdate`) and LimitRanges (`ValidateLimitRange`) of
//! `pkg/apis/core/validation/validation.go`, with the resource and scope lists of
//! `pkg/apis/core/helper/helpers.go`, as `pkg/registry/core/resourcequota/strategy.go` and
//! `pkg/registry/core/limitrange/strategy.go` run them: a quota's status is dropped on create and
//! kept on update, so only `/status` sees it; a limit range is validated alike on create and
//! update.
//!
//! Go walks the maps of resources in a random order; the errors of one map come here in the
//! order of its keys. Not done: the warning a quota gets on create when a request exceeds its
//! limit, and the name kube-apiserver gives a limit range created without one.

use std::cmp::Ordering;

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::label_key_errors;

use super::claim::non_negative;
use super::cluster::string_list_json;
use super::read::{list_at, str_at};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::quantity;
use crate::wire::object::Object;

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

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("", "ResourceQuota" | "LimitRange"))
}

/// The type-specific errors of creating `obj`.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    if kind == "LimitRange" {
        return limit_range(obj);
    }
    // ValidateResourceQuota: the spec, then the status (which the strategy has emptied).
    let mut errors = quota_spec(obj.get("spec"));
    errors.extend(quota_status(obj.get("status")));
    errors
}

/// The type-specific errors of updating `old` to `new`.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    if kind == "LimitRange" {
        return limit_range(new);
    }
    // ValidateResourceQuotaUpdate: the spec, then scopes the same as a set.
    let mut errors = quota_spec(new.get("spec"));
    fn scope_set(obj: &Object) -> Vec<&str> {
        let mut list: Vec<&str> = list_at(obj.get("spec"), "scopes")
            .iter()
            .map(|s| s.as_str().unwrap_or(""))
            .collect();
        list.sort_unstable();
        list.dedup();
        list
    }
    if scope_set(new) != scope_set(old) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.scopes",
            BadValue::Raw(scope_list_json(new.get("spec"))),
            "field is immutable",
        ));
    }
    errors
}

/// The type-specific errors of updating `old` to `new` through `/status`.
pub(super) fn validate_status_update(kind: &str, new: &Object) -> Vec<FieldError> {
    if kind == "LimitRange" {
        return Vec::new();
    }
    // ValidateResourceQuotaStatusUpdate (the resource version is always set here).
    quota_status(new.get("status"))
}

/// `standardQuotaResources`.
const QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// `integerResources`: counted, never fractional.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `IsStandardResourceQuotaScope`.
const SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "VolumeAttributesClass",
    "CrossNamespacePodAffinity",
];

/// The scope pairs a quota may not hold both of.
const CONFLICTING_SCOPES: [(&str, &str); 2] = [
    ("BestEffort", "NotBestEffort"),
    ("Terminating", "NotTerminating"),
];

/// The scopes that only `Exists` may select.
const EXISTS_ONLY_SCOPES: [&str; 5] = [
    "BestEffort",
    "NotBestEffort",
    "Terminating",
    "NotTerminating",
    "CrossNamespacePodAffinity",
];

/// `IsStandardQuotaResourceName`: huge pages count too, requested or not.
fn is_quota_resource(name: &str) -> bool {
    QUOTA_RESOURCES.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// `IsResourceQuotaScopeValidForResource`.
fn scope_fits(scope: &str, resource: &str) -> bool {
    const POD_COMPUTE: [&str; 6] = [
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ];
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => {
            resource == "persistentvolumeclaims" || resource == "requests.storage"
        }
        _ => true,
    }
}

/// The entries of the resource map `map`, by name.
fn resources(map: Option<&Value>) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = map
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// The text of a quantity as `Quantity.String()` prints it (it is stored canonical).
fn quantity_text(q: &Value) -> &str {
    q.as_str().unwrap_or("0")
}

/// `ValidateResourceQuotaResourceName` and `ValidateResourceQuantityValue` of each entry of
/// the resource map at `at`.
fn quota_resources(map: Option<&Value>, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (name, q) in resources(map) {
        let here = at.key(name);
        for message in resource_name_errors(name) {
            errors.push(FieldError::invalid(&here, name, message));
        }
        if !name.contains('/') && !is_quota_resource(name) {
            errors.push(FieldError::invalid(
                &here,
                name,
                "must be a standard resource for quota",
            ));
        }
        errors.extend(non_negative(q, &here));
        let integer = INTEGER_RESOURCES.contains(&name) || is_extended_resource_name(name);
        let text = quantity_text(q);
        if integer && quantity::milli_value(text).is_some_and(|m| m % 1000 != 0) {
            errors.push(FieldError::invalid(&here, text, "must be an integer"));
        }
    }
    errors
}

/// `ValidateResourceQuotaStatus`: the hard and used quantities.
fn quota_status(status: Option<&Value>) -> Vec<FieldError> {
    let at = Path::new("status");
    let mut errors = quota_resources(status.and_then(|s| s.get("hard")), &at.child("hard"));
    errors.extend(quota_resources(
        status.and_then(|s| s.get("used")),
        &at.child("used"),
    ));
    errors
}

/// The spec's scopes as the JSON of a `[]ResourceQuotaScope`.
fn scope_list_json(spec: Option<&Value>) -> String {
    match spec.and_then(|s| s.get("scopes")).and_then(Value::as_array) {
        Some(list) => string_list_json(list),
        None => "null".to_owned(),
    }
}

/// `ValidateResourceQuotaSpec`: the hard quantities, the scopes, the scope selector.
fn quota_spec(spec: Option<&Value>) -> Vec<FieldError> {
    let at = Path::new("spec");
    let hard = spec.and_then(|s| s.get("hard"));
    let mut errors = quota_resources(hard, &at.child("hard"));
    let quota_names: Vec<&str> = resources(hard)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| is_quota_resource(name))
        .collect();
    // validateResourceQuotaScopes.
    let scopes: Vec<&str> = list_at(spec, "scopes")
        .iter()
        .map(|s| s.as_str().unwrap_or(""))
        .collect();
    let scopes_path = at.child("scopes");
    let scopes_invalid = |detail: &str| {
        FieldError::new(
            ErrorType::Invalid,
            &scopes_path,
            BadValue::Raw(scope_list_json(spec)),
            detail,
        )
    };
    for scope in &scopes {
        if !SCOPES.contains(scope) {
            errors.push(scopes_invalid("unsupported scope"));
        }
        for name in &quota_names {
            if !scope_fits(scope, name) {
                errors.push(scopes_invalid("unsupported scope applied to resource"));
            }
        }
    }
    for (a, b) in CONFLICTING_SCOPES {
        if scopes.contains(&a) && scopes.contains(&b) {
            errors.push(scopes_invalid("conflicting scopes"));
        }
    }
    // validateScopeSelector.
    if let Some(selector) = spec
        .and_then(|s| s.get("scopeSelector"))
        .filter(|s| !s.is_null())
    {
        errors.extend(scope_selector(
            selector,
            &quota_names,
            &at.child("scopeSelector").child("matchExpressions"),
            &scope_list_json(spec),
        ));
    }
    errors
}

/// The JSON of an internal `ScopeSelector`, whose fields have no JSON names.
fn scope_selector_json(selector: &Value) -> String {
    let expressions = list_at(Some(selector), "matchExpressions");
    if selector.get("matchExpressions").is_none_or(Value::is_null) {
        return r#"{"MatchExpressions":null}"#.to_owned();
    }
    let items: Vec<String> = expressions
        .iter()
        .map(|e| {
            let values = match e.get("values").and_then(Value::as_array) {
                Some(list) => string_list_json(list),
                None => "null".to_owned(),
            };
            format!(
                r#"{{"ScopeName":{},"Operator":{},"Values":{values}}}"#,
                go_json_string(str_at(Some(e), "scopeName")),
                go_json_string(str_at(Some(e), "operator")),
            )
        })
        .collect();
    format!(r#"{{"MatchExpressions":[{}]}}"#, items.join(","))
}

/// `validateScopedResourceSelectorRequirement`; a conflict prints the spec's scopes
/// (`scopes_json`).
fn scope_selector(
    selector: &Value,
    quota_names: &[&str],
    at: &Path,
    scopes_json: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for requirement in list_at(Some(selector), "matchExpressions") {
        let r = Some(requirement);
        let scope = str_at(r, "scopeName");
        let operator = str_at(r, "operator");
        if !SCOPES.contains(&scope) {
            errors.push(FieldError::invalid(
                at.child("scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for name in quota_names {
            if !scope_fits(scope, name) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    at,
                    BadValue::Raw(scope_selector_json(selector)),
                    "unsupported scope applied to resource",
                ));
            }
        }
        if EXISTS_ONLY_SCOPES.contains(&scope) && operator != "Exists" {
            errors.push(FieldError::invalid(
                at.child("operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, \
                 ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, \
                 ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        let values = list_at(r, "values");
        match operator {
            "In" | "NotIn" if values.is_empty() => errors.push(FieldError::required(
                at.child("values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => errors.push(FieldError::new(
                ErrorType::Invalid,
                at.child("values"),
                BadValue::Raw(string_list_json(values)),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "Exists" | "DoesNotExist" => {}
            _ => errors.push(FieldError::invalid(
                at.child("operator"),
                operator,
                "not a valid selector operator",
            )),
        }
        seen.push(scope);
    }
    for (a, b) in CONFLICTING_SCOPES {
        if seen.contains(&a) && seen.contains(&b) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                at,
                BadValue::Raw(scopes_json.to_owned()),
                "conflicting scopes",
            ));
        }
    }
    errors
}

/// `validateLimitRangeResourceName`: a Pod's or Container's resources are a container's.
fn limit_resource_name_errors(limit_type: &str, name: &str) -> Vec<String> {
    match limit_type {
        "Pod" | "Container" => container_resource_name_errors(name),
        _ => resource_name_errors(name),
    }
}

/// `validateLimitRangeTypeName`.
fn limit_type_errors(limit_type: &str) -> Vec<String> {
    let mut errors = label_key_errors(limit_type);
    if errors.is_empty()
        && !limit_type.contains('/')
        && !["Pod", "Container", "PersistentVolumeClaim"].contains(&limit_type)
    {
        errors.push("must be a standard limit type or fully qualified".to_owned());
    }
    errors
}

/// `%f` of a float, as Go prints it.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{f:.6}")
    }
}

/// `ValidateLimitRange` after the metadata.
fn limit_range(obj: &Object) -> Vec<FieldError> {
    let at = Path::new("spec").child("limits");
    let mut errors = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for (i, limit) in list_at(obj.get("spec"), "limits").iter().enumerate() {
        let here = at.index(i);
        let l = Some(limit);
        let limit_type = str_at(l, "type");
        for message in limit_type_errors(limit_type) {
            errors.push(FieldError::invalid(here.child("type"), limit_type, message));
        }
        if types.contains(&limit_type) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                here.child("type"),
                BadValue::Str(limit_type.to_owned()),
                "",
            ));
        }
        types.push(limit_type);
        let map = |key: &str| resources(limit.get(key));
        let mut keys: Vec<&str> = Vec::new();
        let mut names = |key: &str, errors: &mut Vec<FieldError>| {
            for (name, _) in map(key) {
                for message in limit_resource_name_errors(limit_type, name) {
                    errors.push(FieldError::invalid(
                        here.child(key).key(name),
                        name,
                        message,
                    ));
                }
                keys.push(name);
            }
        };
        names("max", &mut errors);
        names("min", &mut errors);
        let pod = limit_type == "Pod";
        if pod {
            for key in ["default", "defaultRequest"] {
                if !map(key).is_empty() {
                    errors.push(FieldError::forbidden(
                        here.child(key),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            names("default", &mut errors);
            names("defaultRequest", &mut errors);
        }
        if limit_type == "PersistentVolumeClaim" {
            let has_storage = |key: &str| map(key).iter().any(|(name, _)| *name == "storage");
            if !has_storage("min") && !has_storage("max") {
                errors.push(FieldError::required(
                    here.child("limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                ));
            }
        }
        names("maxLimitRequestRatio", &mut errors);
        keys.sort_unstable();
        keys.dedup();
        let defaults_of = |key: &str| {
            if pod {
                Map::new()
            } else {
                as_map(limit.get(key))
            }
        };
        let (min, max, ratio) = (
            as_map(limit.get("min")),
            as_map(limit.get("max")),
            as_map(limit.get("maxLimitRequestRatio")),
        );
        let (default, request) = (defaults_of("default"), defaults_of("defaultRequest"));
        for key in keys {
            let get =
                |m: &'_ Map| -> Option<String> { m.get(key).map(|q| quantity_text(q).to_owned()) };
            errors.extend(limit_comparisons(
                &here,
                key,
                [
                    get(&min),
                    get(&max),
                    get(&default),
                    get(&request),
                    get(&ratio),
                ]
                .each_ref()
                .map(Option::as_deref),
            ));
        }
    }
    errors
}

fn as_map(v: Option<&Value>) -> Map {
    v.and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The comparisons of one resource's min, max, default, default request and ratio.
fn limit_comparisons(here: &Path, key: &str, quantities: [Option<&str>; 5]) -> Vec<FieldError> {
    let [min, max, default, request, ratio] = quantities;
    let greater = |a: &str, b: &str| quantity::compare(a, b) == Some(Ordering::Greater);
    let mut errors = Vec::new();
    let mut invalid = |key_of: &str, value: &str, detail: String| {
        errors.push(FieldError::invalid(
            here.child(key_of).key(key),
            value,
            detail,
        ));
    };
    if let (Some(min), Some(max)) = (min, max)
        && greater(min, max)
    {
        invalid(
            "min",
            min,
            format!("min value {min} is greater than max value {max}"),
        );
    }
    if let (Some(request), Some(min)) = (request, min)
        && greater(min, request)
    {
        invalid(
            "defaultRequest",
            request,
            format!("min value {min} is greater than default request value {request}"),
        );
    }
    if let (Some(request), Some(max)) = (request, max)
        && greater(request, max)
    {
        invalid(
            "defaultRequest",
            request,
            format!("default request value {request} is greater than max value {max}"),
        );
    }
    if let (Some(request), Some(default)) = (request, default)
        && greater(request, default)
    {
        invalid(
            "defaultRequest",
            request,
            format!(
                "default request value {request} is greater than default limit value {default}"
            ),
        );
    }
    if let (Some(default), Some(min)) = (default, min)
        && greater(min, default)
    {
        invalid(
            "default",
            min,
            format!("min value {min} is greater than default value {default}"),
        );
    }
    if let (Some(default), Some(max)) = (default, max)
        && greater(default, max)
    {
        invalid(
            "default",
            max,
            format!("default value {default} is greater than max value {max}"),
        );
    }
    if let Some(ratio) = ratio
        && quantity::compare(ratio, "1") == Some(Ordering::Less)
    {
        invalid(
            "maxLimitRequestRatio",
            ratio,
            format!("ratio {ratio} is less than 1"),
        );
    }
    if let (Some(ratio), Some(min), Some(max)) = (ratio, min, max)
        && let Some(limit) = ratio_limit(ratio, min, max)
    {
        invalid(
            "maxLimitRequestRatio",
            ratio,
            format!(
                "ratio {ratio} is greater than max/min = {}",
                go_float(limit)
            ),
        );
    }
    let overcommit =
        (!key.contains('/') || key.contains("kubernetes.io/")) && !key.starts_with("hugepages-");
    if let (Some(default), Some(request)) = (default, request)
        && !overcommit
        && quantity::compare(default, request) != Some(Ordering::Equal)
    {
        invalid(
            "defaultRequest",
            request,
            format!(
                "default value {default} must equal to defaultRequest value {request} in {key}"
            ),
        );
    }
    errors
}

/// `max/min` when `ratio` exceeds it: in thousandths when all three are small enough, else in
/// whole units.
fn ratio_limit(ratio: &str, min: &str, max: &str) -> Option<f64> {
    const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;
    let (r, lo, hi) = (
        quantity::whole_value(ratio)?,
        quantity::whole_value(min)?,
        quantity::whole_value(max)?,
    );
    let (ratio_value, lo, hi) =
        if r < MAX_MILLI_VALUE && lo < MAX_MILLI_VALUE && hi < MAX_MILLI_VALUE {
            (
                quantity::milli_value(ratio)? as f64 / 1000.0,
                quantity::milli_value(min)?,
                quantity::milli_value(max)?,
            )
        } else {
            (r as f64, lo, hi)
        };
    let limit = hi as f64 / lo as f64;
    (ratio_value > limit).then_some(limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recon_apimachinery::json;

    fn object(v: Value) -> Object {
        match v {
            Value::Object(map) => map,
            _ => Object::new(),
        }
    }

    fn fields(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(FieldError::body).collect()
    }

    #[test]
    fn countable_quota_resources_are_whole() {
        let quota = object(json!({"spec": {"hard": {"pods": "1500m", "cpu": "1500m"}}}));
        assert_eq!(
            fields(&validate_create("ResourceQuota", &quota)),
            ["Invalid value: \"1500m\": must be an integer"]
        );
    }

    #[test]
    fn ratio_beyond_max_over_min_is_printed_with_six_decimals() {
        assert_eq!(ratio_limit("4", "1Gi", "3Gi"), Some(3.0));
        assert_eq!(ratio_limit("2", "1Gi", "3Gi"), None);
        assert_eq!(go_float(3.0), "3.000000");
        assert_eq!(go_float(f64::INFINITY), "+Inf");
    }

    #[test]
    fn huge_pages_defaults_must_equal_requests() {
        let range = object(json!({"spec": {"limits": [{"type": "example.com/t",
            "default": {"hugepages-2Mi": "4Mi"}, "defaultRequest": {"hugepages-2Mi": "4Mi"}}]}}));
        assert!(validate_create("LimitRange", &range).is_empty());
    }
}
