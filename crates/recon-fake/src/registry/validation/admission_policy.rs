//! admissionregistration.k8s.io's admission policies and their bindings
//! (`ValidateValidatingAdmissionPolicy`, `ValidateValidatingAdmissionPolicyBinding`,
//! `ValidateMutatingAdmissionPolicy`, `ValidateMutatingAdmissionPolicyBinding`, their `Update`
//! twins and `ValidateValidatingAdmissionPolicyStatusUpdate` of
//! `pkg/apis/admissionregistration/validation/validation.go`), as
//! `pkg/registry/admissionregistration/*/strategy.go` runs them on create, update and
//! `/status`: failure policy, param kind, match constraints (rules, selectors, match policy,
//! resource names), match conditions, variables, validations, audit annotations, mutations and
//! reinvocation policy of a policy; policy name, param reference, match resources and
//! validation actions of a binding; a validating policy's status (type checking warnings,
//! conditions). Every CEL expression is compiled with the admission environment
//! ([`PolicyCompiler`]) and a compile error reported as the real server words it.
//!
//! Not checked: the authorization of a `paramKind` or `paramRef` (every client that may write
//! a policy here is allowed to read any kind), the environment difference between new and
//! stored expressions (the libraries both have are the same in 1.36).

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1035_label_errors, dns1123_subdomain_name_errors, label_key_errors, path_segment_errors,
};

use super::cluster::{rule_with_operations, string_list_json};
use super::read::{is_set, list_at, str_at};
use super::workloads::label_selector;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::schema::{CEL_RESERVED, Declarations, PolicyCompiler, Returns, on_large_stack};
use crate::wire::object::{Object, meta_str};

const GROUP: &str = "admissionregistration.k8s.io";
const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const MUTATING_OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "UPDATE"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const PATCH_TYPES: &[&str] = &["ApplyConfiguration", "JSONPatch"];
const VALIDATION_ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
const PARAM_NOT_FOUND_ACTIONS: &[&str] = &["Deny", "Allow"];
/// `maxAuditAnnotations`.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// `maxAuditAnnotationValueExpressionLength`.
const MAX_VALUE_EXPRESSION: usize = 5 * 1024;
const MAX_MATCH_CONDITIONS: usize = 64;

/// Whether this file validates a `group` `kind`.
pub(super) fn handles(group: &str, kind: &str) -> bool {
    group == GROUP
        && matches!(
            kind,
            "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

/// `StaticConfigSuffix`: names reserved for manifest-based admission configurations.
const STATIC_SUFFIX: &str = ".static.k8s.io";

/// `WarningsForStaticSuffix` (`static_suffix.go`), which every admission policy, binding and
/// webhook configuration strategy gives on create and update while the
/// `ManifestBasedAdmissionControlConfig` gate is off (as in 1.36 by default).
pub(super) fn static_suffix_warnings(obj: &Object) -> Vec<String> {
    let name = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !name.ends_with(STATIC_SUFFIX) {
        return Vec::new();
    }
    vec![format!(
        "metadata.name: names ending with {} are reserved for static manifest-based configurations and cannot be managed via the API",
        go_json_string(STATIC_SUFFIX)
    )]
}

/// What `validationOptions` relaxes on an update.
#[derive(Debug, Clone, Copy, Default)]
struct Options {
    /// The match conditions (and param kind) did not change: they are not compiled again.
    ignore_match_conditions: bool,
    /// `params` is declared to match conditions and message expressions.
    params_in_match_conditions: bool,
}

/// `Validate` of the kind's strategy after the metadata.
pub(super) fn validate_create(kind: &str, obj: &Object) -> Vec<FieldError> {
    validate(kind, obj, Options::default())
}

/// `ValidateUpdate` of the kind's strategy after the metadata: the object validated again,
/// a policy's match conditions only when they or its param kind changed.
pub(super) fn validate_update(kind: &str, new: &Object, old: &Object) -> Vec<FieldError> {
    let spec = |o: &Object, key: &str| normalized(o.get("spec").and_then(|s| s.get(key)));
    let unchanged = |key: &str| spec(new, key) == spec(old, key);
    let opts = Options {
        ignore_match_conditions: unchanged("paramKind") && unchanged("matchConditions"),
        params_in_match_conditions: false,
    };
    validate(kind, new, opts)
}

/// The `/status` strategy's `ValidateUpdate`: a validating policy's status.
pub(super) fn validate_status_update(kind: &str, new: &Object) -> Vec<FieldError> {
    if kind != "ValidatingAdmissionPolicy" {
        return Vec::new();
    }
    status_errors(new.get("status"))
}

/// `equality.Semantic.DeepEqual` of JSON: null, absent and empty lists or objects alike.
fn normalized(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Array(a)) if a.is_empty() => Value::Null,
        Some(Value::Object(o)) if o.is_empty() => Value::Null,
        Some(Value::Array(a)) => Value::Array(a.iter().map(|i| normalized(Some(i))).collect()),
        Some(Value::Object(o)) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), normalized(Some(v))))
                .filter(|(_, v)| !v.is_null())
                .collect(),
        ),
        Some(other) => other.clone(),
    }
}

fn validate(kind: &str, obj: &Object, opts: Options) -> Vec<FieldError> {
    let name = meta_str(obj, "name").to_owned();
    let spec = obj.get("spec").cloned();
    let kind = kind.to_owned();
    // Checking recurses once per node of an expression: deep ones need a large stack.
    on_large_stack(move || {
        let spec = spec.as_ref();
        match kind.as_str() {
            "ValidatingAdmissionPolicy" => validating_policy(&name, spec, opts),
            "MutatingAdmissionPolicy" => mutating_policy(spec, opts),
            "ValidatingAdmissionPolicyBinding" => binding(spec, false),
            _ => binding(spec, true),
        }
    })
    .unwrap_or_else(|| {
        vec![FieldError::new(
            ErrorType::Internal,
            "spec",
            BadValue::Omit,
            "the policy's expressions could not be compiled",
        )]
    })
}

/// A policy's `failurePolicy`: required, `Fail` or `Ignore`.
fn failure_policy(spec: Option<&Value>, at: &Path) -> Option<FieldError> {
    let path = at.child("failurePolicy");
    match spec
        .and_then(|s| s.get("failurePolicy"))
        .filter(|v| !v.is_null())
    {
        None => Some(FieldError::required(path, "")),
        Some(v) => {
            let v = v.as_str().unwrap_or("");
            (!FAILURE_POLICIES.contains(&v))
                .then(|| FieldError::not_supported_named(path, v, FAILURE_POLICIES))
        }
    }
}

/// The part of a policy spec both kinds share, up to the variables: failure policy, param
/// kind, match constraints (with `extra` checks on them), match conditions. Returns whether
/// params are declared.
fn common_spec(
    spec: Option<&Value>,
    at: &Path,
    opts: &mut Options,
    errors: &mut Vec<FieldError>,
    extra: impl Fn(&Value, &Path, &mut Vec<FieldError>),
) -> bool {
    errors.extend(failure_policy(spec, at));
    let param_kind = spec
        .and_then(|s| s.get("paramKind"))
        .filter(|v| !v.is_null());
    if let Some(param_kind) = param_kind {
        opts.params_in_match_conditions = true;
        errors.extend(param_kind_errors(param_kind, &at.child("paramKind")));
    }
    let constraints_at = at.child("matchConstraints");
    match spec
        .and_then(|s| s.get("matchConstraints"))
        .filter(|v| !v.is_null())
    {
        None => errors.push(FieldError::required(&constraints_at, "")),
        Some(constraints) => {
            errors.extend(match_resources(constraints, &constraints_at));
            if list_at(Some(constraints), "resourceRules").is_empty() {
                errors.push(FieldError::required(
                    constraints_at.child("resourceRules"),
                    "",
                ));
            }
            extra(constraints, &constraints_at, errors);
        }
    }
    if !opts.ignore_match_conditions {
        errors.extend(match_conditions(
            list_at(spec, "matchConditions"),
            opts,
            &at.child("matchConditions"),
        ));
    }
    param_kind.is_some()
}

/// `validateValidatingAdmissionPolicySpec`.
fn validating_policy(name: &str, spec: Option<&Value>, mut opts: Options) -> Vec<FieldError> {
    let at = Path::new("spec");
    let mut errors = Vec::new();
    let params = common_spec(spec, &at, &mut opts, &mut errors, |_, _, _| {});
    let variables = list_at(spec, "variables");
    let mut compiler = if variables.is_empty() {
        PolicyCompiler::stateless()
    } else {
        PolicyCompiler::composited()
    };
    for (i, variable) in variables.iter().enumerate() {
        errors.extend(variable_errors(
            &mut compiler,
            variable,
            params,
            &at.child("variables").index(i),
        ));
    }
    let validations = list_at(spec, "validations");
    let annotations = list_at(spec, "auditAnnotations");
    if validations.is_empty() && annotations.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errors.push(FieldError::required(at.child("validations"), detail));
        errors.push(FieldError::required(at.child("auditAnnotations"), detail));
        return errors;
    }
    for (i, validation) in validations.iter().enumerate() {
        errors.extend(validation_errors(
            &compiler,
            validation,
            params,
            &opts,
            &at.child("validations").index(i),
        ));
    }
    if is_set(spec, "auditAnnotations") {
        let annotations_at = at.child("auditAnnotations");
        if annotations.len() > MAX_AUDIT_ANNOTATIONS {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &annotations_at,
                BadValue::Raw(audit_annotations_json(annotations)),
                format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
            ));
        }
        let mut keys: Vec<&str> = Vec::new();
        for (i, annotation) in annotations.iter().enumerate() {
            let here = annotations_at.index(i);
            errors.extend(audit_annotation_errors(
                &compiler, name, annotation, params, &here,
            ));
            let key = str_at(Some(annotation), "key");
            if keys.contains(&key) {
                errors.push(duplicate(here.child("key"), key));
            }
            keys.push(key);
        }
    }
    errors
}

/// The internal `[]AuditAnnotation` as `json.Marshal` writes it (no JSON names).
fn audit_annotations_json(annotations: &[Value]) -> String {
    let items: Vec<String> = annotations
        .iter()
        .map(|a| {
            format!(
                r#"{{"Key":{},"ValueExpression":{}}}"#,
                go_json_string(str_at(Some(a), "key")),
                go_json_string(str_at(Some(a), "valueExpression"))
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn duplicate(path: Path, value: &str) -> FieldError {
    FieldError::new(
        ErrorType::Duplicate,
        path,
        BadValue::Str(value.to_owned()),
        "",
    )
}

/// `field.Invalid` of an expression that did not compile: its source and the compiler's detail.
fn compile_error(path: Path, source: &str, detail: String) -> FieldError {
    FieldError::invalid(path, source, detail)
}

/// `validateParamKind`.
fn param_kind_errors(param_kind: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let api_version = str_at(Some(param_kind), "apiVersion");
    let version_at = at.child("apiVersion");
    if api_version.is_empty() {
        errors.push(FieldError::required(&version_at, ""));
    } else {
        // parseGroupVersion
        let parsed = match api_version.matches('/').count() {
            _ if api_version == "/" => Ok(("", "")),
            0 => Ok(("", api_version)),
            1 => Ok(api_version.split_once('/').unwrap_or(("", ""))),
            _ => Err(format!("unexpected GroupVersion string: {api_version}")),
        };
        match parsed {
            Err(message) => errors.push(FieldError::invalid(&version_at, api_version, message)),
            Ok((group, version)) => {
                if !group.is_empty() {
                    let messages = dns1123_subdomain_name_errors(group);
                    if !messages.is_empty() {
                        errors.push(FieldError::invalid(&version_at, group, messages.join(",")));
                    }
                }
                if version.is_empty() {
                    errors.push(FieldError::invalid(
                        &version_at,
                        api_version,
                        "version must be specified",
                    ));
                } else {
                    let messages = dns1035_label_errors(version);
                    if !messages.is_empty() {
                        errors.push(FieldError::invalid(
                            &version_at,
                            version,
                            messages.join(","),
                        ));
                    }
                }
            }
        }
    }
    let kind = str_at(Some(param_kind), "kind");
    let kind_at = at.child("kind");
    if kind.is_empty() {
        errors.push(FieldError::required(kind_at, ""));
    } else {
        let messages = dns1035_label_errors(&kind.to_lowercase());
        if !messages.is_empty() {
            errors.push(FieldError::invalid(
                kind_at,
                kind,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    messages.join(",")
                ),
            ));
        }
    }
    errors
}

/// `validateMatchResources`: match policy, the two selectors (strictly), then each rule.
fn match_resources(resources: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let policy_at = at.child("matchPolicy");
    match resources.get("matchPolicy").filter(|v| !v.is_null()) {
        None => errors.push(FieldError::required(policy_at, "")),
        Some(v) => {
            let v = v.as_str().unwrap_or("");
            if !MATCH_POLICIES.contains(&v) {
                errors.push(FieldError::not_supported_named(
                    policy_at,
                    v,
                    MATCH_POLICIES,
                ));
            }
        }
    }
    for key in ["namespaceSelector", "objectSelector"] {
        match resources.get(key).filter(|v| !v.is_null()) {
            None => errors.push(FieldError::required(at.child(key), "")),
            Some(selector) => errors.extend(label_selector(selector, &at.child(key))),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list_at(Some(resources), key).iter().enumerate() {
            errors.extend(named_rule(rule, &at.child(key).index(i)));
        }
    }
    errors
}

/// `validateNamedRuleWithOperations`: resource names are unique path segments, then the rule.
fn named_rule(rule: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let names_at = at.child("resourceNames");
    let mut seen: Vec<&str> = Vec::new();
    for (i, name) in list_at(Some(rule), "resourceNames").iter().enumerate() {
        let name = name.as_str().unwrap_or("");
        for message in path_segment_errors(name, false) {
            errors.push(FieldError::invalid(names_at.index(i), name, message));
        }
        if seen.contains(&name) {
            errors.push(duplicate(names_at.index(i), name));
        } else {
            seen.push(name);
        }
    }
    errors.extend(rule_with_operations(rule, at));
    errors
}

/// A mutation may not match DELETE: each operation of `rules` not supported, at
/// `<at>.resourceRules.operations` (no index, as the real server words it).
fn mutating_operations(resources: &Value, at: &Path, errors: &mut Vec<FieldError>) {
    let path = at.child("resourceRules").child("operations");
    for rule in list_at(Some(resources), "resourceRules") {
        for op in list_at(Some(rule), "operations") {
            let op = op.as_str().unwrap_or("");
            if !MUTATING_OPERATIONS.contains(&op) {
                errors.push(FieldError::not_supported_named(
                    &path,
                    op,
                    MUTATING_OPERATIONS,
                ));
            }
        }
    }
}

/// `validateMatchConditions`: at most 64, each with an expression and a qualified name,
/// names unique; compiled with the stateless compiler.
fn match_conditions(conditions: &[Value], opts: &Options, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errors.push(FieldError::too_many(
            at,
            conditions.len() as i64,
            MAX_MATCH_CONDITIONS as i64,
        ));
    }
    let compiler = PolicyCompiler::stateless();
    let decls = Declarations {
        params: opts.params_in_match_conditions,
        authorizer: true,
        patch_types: false,
    };
    let mut names: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let here = at.index(i);
        let expression = str_at(Some(condition), "expression").trim();
        if expression.is_empty() {
            errors.push(FieldError::required(here.child("expression"), ""));
        } else if let Err(detail) = compiler.compile(expression, decls, Returns::Bool) {
            errors.push(compile_error(here.child("expression"), expression, detail));
        }
        let name = str_at(Some(condition), "name");
        if name.is_empty() {
            errors.push(FieldError::required(here.child("name"), ""));
        } else {
            for message in label_key_errors(name) {
                errors.push(FieldError::invalid(here.child("name"), name, message));
            }
        }
        if !name.is_empty() {
            if names.contains(&name) {
                errors.push(duplicate(here.child("name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errors
}

/// `validateMatchConditions` of an admission webhook (no params), on a stack deep enough for
/// compiling any expression.
pub(super) fn webhook_match_conditions(conditions: &[Value], at: &Path) -> Vec<FieldError> {
    if conditions.is_empty() {
        return Vec::new();
    }
    on_large_stack(|| match_conditions(conditions, &Options::default(), at)).unwrap_or_else(|| {
        vec![FieldError::new(
            ErrorType::Internal,
            at,
            BadValue::Omit,
            "the match conditions could not be compiled",
        )]
    })
}

/// `isCELIdentifier`.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !CEL_RESERVED.contains(&name)
}

/// `validateVariable`: a name that is a CEL identifier, an expression compiled and stored in
/// `variables` for what follows.
fn variable_errors(
    compiler: &mut PolicyCompiler,
    variable: &Value,
    params: bool,
    at: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(Some(variable), "name");
    if name.trim().is_empty() {
        errors.push(FieldError::required(
            at.child("name"),
            "name is not specified",
        ));
    } else if !is_cel_identifier(name) {
        errors.push(FieldError::invalid(
            at.child("name"),
            name,
            "must be a valid CEL identifier",
        ));
    }
    let expression = str_at(Some(variable), "expression");
    if expression.trim().is_empty() {
        errors.push(FieldError::required(
            at.child("expression"),
            "expression is not specified",
        ));
    } else if !compiler.composes() {
        errors.push(FieldError::new(
            ErrorType::Internal,
            at,
            BadValue::Omit,
            "variable composition is not allowed",
        ));
    } else {
        let decls = Declarations {
            params,
            authorizer: true,
            patch_types: false,
        };
        if let Err(detail) = compiler.compile_variable(name, expression, decls) {
            errors.push(compile_error(at.child("expression"), expression, detail));
        }
    }
    errors
}

/// `hasNewlines`.
fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// `validateValidation`: the expression (a bool), the message expression (a string, without
/// the authorizer), the message (one line), the reason.
fn validation_errors(
    compiler: &PolicyCompiler,
    validation: &Value,
    params: bool,
    opts: &Options,
    at: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let v = Some(validation);
    let expression = str_at(v, "expression");
    if expression.trim().is_empty() {
        errors.push(FieldError::required(
            at.child("expression"),
            "expression is not specified",
        ));
    } else {
        let decls = Declarations {
            params,
            authorizer: true,
            patch_types: false,
        };
        if let Err(detail) = compiler.compile(expression, decls, Returns::Bool) {
            errors.push(compile_error(at.child("expression"), expression, detail));
        }
    }
    let message_expression = str_at(v, "messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errors.push(FieldError::invalid(
            at.child("messageExpression"),
            message_expression,
            "must be non-empty if specified",
        ));
    } else if !message_expression.trim().is_empty() {
        let decls = Declarations {
            params: opts.params_in_match_conditions,
            authorizer: false,
            patch_types: false,
        };
        if let Err(detail) = compiler.compile(message_expression, decls, Returns::String) {
            errors.push(compile_error(
                at.child("messageExpression"),
                message_expression,
                detail,
            ));
        }
    }
    let message = str_at(v, "message");
    if !message.is_empty() && message.trim().is_empty() {
        errors.push(FieldError::invalid(
            at.child("message"),
            message,
            "must be non-empty if specified",
        ));
    } else if has_newlines(message.trim()) {
        errors.push(FieldError::invalid(
            at.child("message"),
            message,
            "must not contain line breaks",
        ));
    }
    if let Some(reason) = validation.get("reason").filter(|r| !r.is_null()) {
        let reason = reason.as_str().unwrap_or("");
        if !REASONS.contains(&reason) {
            errors.push(FieldError::not_supported_named(
                at.child("reason"),
                reason,
                REASONS,
            ));
        }
    }
    errors
}

/// `validateAuditAnnotation`: `<policy name>/<key>` is a qualified name, the value expression
/// short and compiled (a string or null).
fn audit_annotation_errors(
    compiler: &PolicyCompiler,
    policy: &str,
    annotation: &Value,
    params: bool,
    at: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let key = str_at(Some(annotation), "key");
    if policy.is_empty() {
        errors.push(FieldError::invalid(
            at.child("key"),
            key,
            "requires metadata.name be non-empty",
        ));
    } else {
        let qualified = format!("{policy}/{key}");
        for message in label_key_errors(&qualified) {
            errors.push(FieldError::invalid(at.child("key"), &qualified, message));
        }
    }
    let value_expression = str_at(Some(annotation), "valueExpression");
    let trimmed = value_expression.trim();
    let value_at = at.child("valueExpression");
    if trimmed.is_empty() {
        errors.push(FieldError::required(
            value_at,
            "valueExpression is not specified",
        ));
    } else if trimmed.len() > MAX_VALUE_EXPRESSION {
        errors.push(FieldError::required(
            value_at,
            format!("must not exceed {MAX_VALUE_EXPRESSION} bytes in length"),
        ));
    } else {
        let decls = Declarations {
            params,
            authorizer: true,
            patch_types: false,
        };
        if let Err(detail) = compiler.compile(trimmed, decls, Returns::StringOrNull) {
            errors.push(compile_error(value_at, value_expression, detail));
        }
    }
    errors
}

/// `validateMutatingAdmissionPolicySpec`.
fn mutating_policy(spec: Option<&Value>, mut opts: Options) -> Vec<FieldError> {
    let at = Path::new("spec");
    let mut errors = Vec::new();
    let params = common_spec(spec, &at, &mut opts, &mut errors, mutating_operations);
    let mut compiler = PolicyCompiler::composited();
    for (i, variable) in list_at(spec, "variables").iter().enumerate() {
        errors.extend(variable_errors(
            &mut compiler,
            variable,
            params,
            &at.child("variables").index(i),
        ));
    }
    let mutations = list_at(spec, "mutations");
    if mutations.is_empty() {
        errors.push(FieldError::required(
            at.child("mutations"),
            "mutations must contain at least one item",
        ));
    }
    for (i, mutation) in mutations.iter().enumerate() {
        errors.extend(mutation_errors(
            &compiler,
            mutation,
            params,
            &at.child("mutations").index(i),
        ));
    }
    let reinvocation = str_at(spec, "reinvocationPolicy");
    let reinvocation_at = at.child("reinvocationPolicy");
    if reinvocation.is_empty() {
        errors.push(FieldError::required(reinvocation_at, ""));
    } else if !REINVOCATION_POLICIES.contains(&reinvocation) {
        errors.push(FieldError::not_supported_named(
            reinvocation_at,
            reinvocation,
            REINVOCATION_POLICIES,
        ));
    }
    errors
}

/// `validateMutation`: the patch type, and the one patch it names (compiled), not the other.
fn mutation_errors(
    compiler: &PolicyCompiler,
    mutation: &Value,
    params: bool,
    at: &Path,
) -> Vec<FieldError> {
    let m = Some(mutation);
    let patch_type = str_at(m, "patchType");
    let (own, other, returns) = match patch_type {
        "" => return vec![FieldError::required(at.child("patchType"), "")],
        "JSONPatch" => ("jsonPatch", "applyConfiguration", Returns::JsonPatches),
        "ApplyConfiguration" => ("applyConfiguration", "jsonPatch", Returns::Object),
        other => {
            return vec![FieldError::not_supported_named(
                at.child("patchType"),
                other,
                PATCH_TYPES,
            )];
        }
    };
    let mut errors = Vec::new();
    match mutation.get(own).filter(|v| !v.is_null()) {
        None => errors.push(FieldError::required(
            at.child(own),
            format!("must be specified when patchType is {patch_type}"),
        )),
        Some(patch) => {
            // validateApplyConfiguration / validateJSONPatch
            let expression_at = at.child(own).child("expression");
            let expression = str_at(Some(patch), "expression").trim();
            if expression.is_empty() {
                errors.push(FieldError::required(expression_at, ""));
            } else {
                let decls = Declarations {
                    params,
                    authorizer: true,
                    patch_types: true,
                };
                if let Err(detail) = compiler.compile(expression, decls, returns) {
                    errors.push(compile_error(expression_at, expression, detail));
                }
            }
        }
    }
    if is_set(m, other) {
        errors.push(FieldError::invalid(
            at.child(other),
            &format!("{{{other}}}"),
            format!("must not be specified when patchType is {patch_type}"),
        ));
    }
    errors
}

/// `validateValidatingAdmissionPolicyBindingSpec` / its mutating twin.
fn binding(spec: Option<&Value>, mutating: bool) -> Vec<FieldError> {
    let at = Path::new("spec");
    let mut errors = Vec::new();
    let policy = str_at(spec, "policyName");
    if policy.is_empty() {
        errors.push(FieldError::required(at.child("policyName"), ""));
    } else {
        for message in dns1123_subdomain_name_errors(policy) {
            errors.push(FieldError::invalid(at.child("policyName"), policy, message));
        }
    }
    if let Some(param_ref) = spec
        .and_then(|s| s.get("paramRef"))
        .filter(|v| !v.is_null())
    {
        errors.extend(param_ref_errors(param_ref, &at.child("paramRef")));
    }
    let resources_at = at.child("matchResources");
    if let Some(resources) = spec
        .and_then(|s| s.get("matchResources"))
        .filter(|v| !v.is_null())
    {
        errors.extend(match_resources(resources, &resources_at));
        if mutating {
            mutating_operations(resources, &resources_at, &mut errors);
        }
    }
    if !mutating {
        errors.extend(validation_actions(
            list_at(spec, "validationActions"),
            &at.child("validationActions"),
        ));
    }
    errors
}

/// `validateParamRef`: a name (a path segment) or a selector, not both; the action when the
/// parameter is missing.
fn param_ref_errors(param_ref: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let r = Some(param_ref);
    let name = str_at(r, "name");
    let selector = param_ref.get("selector").filter(|v| !v.is_null());
    let exclusive = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for message in path_segment_errors(name, false) {
            errors.push(FieldError::invalid(at.child("name"), name, message));
        }
        if selector.is_some() {
            errors.push(FieldError::forbidden(at.child("name"), exclusive));
        }
    }
    if let Some(selector) = selector {
        errors.extend(label_selector(selector, &at.child("selector")));
        if !name.is_empty() {
            errors.push(FieldError::forbidden(at.child("selector"), exclusive));
        }
    }
    if name.is_empty() && selector.is_none() {
        errors.push(FieldError::required(
            at,
            "one of name or selector must be specified",
        ));
    }
    let action = str_at(r, "parameterNotFoundAction");
    let action_at = at.child("parameterNotFoundAction");
    if action.is_empty() {
        errors.push(FieldError::required(action_at, ""));
    } else if !PARAM_NOT_FOUND_ACTIONS.contains(&action) {
        errors.push(FieldError::not_supported_named(
            action_at,
            action,
            PARAM_NOT_FOUND_ACTIONS,
        ));
    }
    errors
}

/// `validateValidationActions`: known, unique, not both Deny and Warn, at least one.
fn validation_actions(actions: &[Value], at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let action = action.as_str().unwrap_or("");
        if !VALIDATION_ACTIONS.contains(&action) {
            errors.push(FieldError::not_supported_named(
                at.index(i),
                action,
                VALIDATION_ACTIONS,
            ));
        }
        if seen.contains(&action) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                at.index(i),
                BadValue::Raw(go_json_string(action)),
                "",
            ));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            at,
            BadValue::Raw(string_list_json(actions)),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errors.push(FieldError::required(
            at,
            "at least one validation action is required",
        ));
    }
    errors
}

/// `validateValidatingAdmissionPolicyStatus`: type checking warnings, then the conditions.
fn status_errors(status: Option<&Value>) -> Vec<FieldError> {
    let at = Path::new("status");
    let mut errors = Vec::new();
    let warnings_at = at.child("typeChecking").child("expressionWarnings");
    let type_checking = status
        .and_then(|s| s.get("typeChecking"))
        .filter(|v| !v.is_null());
    for (i, warning) in list_at(type_checking, "expressionWarnings")
        .iter()
        .enumerate()
    {
        let here = warnings_at.index(i);
        if str_at(Some(warning), "warning").is_empty() {
            errors.push(FieldError::required(here.child("warning"), ""));
        }
        let field_ref = str_at(Some(warning), "fieldRef").trim();
        if field_ref.is_empty() {
            errors.push(FieldError::required(here.child("fieldRef"), ""));
        } else if let Some(message) =
            crate::table::jsonpath::parse_error(&format!("{{{field_ref}}}"))
        {
            errors.push(FieldError::invalid(
                here.child("fieldRef"),
                field_ref,
                format!("invalid JSONPath: {message}"),
            ));
        }
    }
    errors.extend(super::conditions::conditions(
        list_at(status, "conditions"),
        &at.child("conditions"),
    ));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cel_identifiers_exclude_reserved_words() {
        assert!(is_cel_identifier("_a1"));
        assert!(!is_cel_identifier("1a"));
        assert!(!is_cel_identifier("in"));
        assert!(!is_cel_identifier(""));
    }

    #[test]
    fn semantic_equality_ignores_empty() {
        let a = recon_apimachinery::json!({"x": [], "y": 1});
        let b = recon_apimachinery::json!({"y": 1});
        assert_eq!(normalized(Some(&a)), normalized(Some(&b)));
    }
}
