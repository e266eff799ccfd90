//! The access reviews of `authorization.k8s.io/v1`, answered by the server's authorizer
//! ([`crate::authz`]): `SubjectAccessReview` and `LocalSubjectAccessReview` for any user,
//! `SelfSubjectAccessReview` and `SelfSubjectRulesReview` for the requester
//! (`pkg/registry/authorization/*/rest.go`, `pkg/apis/authorization/validation`,
//! `pkg/registry/authorization/util/helpers.go`). Nothing is stored.

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::selector::{FieldSelector, LabelSelector};

use super::field_manager::FieldManager;
use super::subresource_body::{BodyKind, decode_as};
use crate::authz::rbac::{PolicyRule, RoleReader, rules_for};
use crate::authz::{Attributes, Target};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::registry::validation::label_selector_requirement;
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::group::GroupKind;
use crate::wire::object::{Object, encode_answer, list_items, strings};

const GROUP: &str = "authorization.k8s.io";

/// Which access review a request creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessReview {
    /// `SubjectAccessReview`: any subject, cluster-wide.
    Subject,
    /// `LocalSubjectAccessReview`: any subject, in the URL's namespace.
    Local,
    /// `SelfSubjectAccessReview`: the requester.
    SelfSubject,
}

impl AccessReview {
    fn body_kind(self) -> BodyKind {
        BodyKind {
            group: GROUP,
            versions: &["v1"],
            kind: match self {
                AccessReview::Subject => "SubjectAccessReview",
                AccessReview::Local => "LocalSubjectAccessReview",
                AccessReview::SelfSubject => "SelfSubjectAccessReview",
            },
            internal_package: "authorization",
        }
    }
}

const SELF_SUBJECT_RULES_REVIEW: BodyKind = BodyKind {
    group: GROUP,
    versions: &["v1"],
    kind: "SelfSubjectRulesReview",
    internal_package: "authorization",
};

impl State {
    /// An access review: validated, then decided, with the managedFields the create handler
    /// records before the review's storage sees it.
    pub(crate) fn review_access(
        &mut self,
        call: &Call<'_>,
        review: AccessReview,
    ) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut obj = decode_as(call, &review.body_kind(), &|g, v, k| self.knows(g, v, k))?;
        if review == AccessReview::Local {
            super::decode::ensure_namespace(call, &mut obj)?;
        }
        FieldManager::new(call, self.clock.now()).record_update(None, &mut obj);
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let errors = validate(review, &obj, &spec);
        if !errors.is_empty() {
            return Err(ApiError::invalid(
                &GroupKind::new(GROUP.to_owned(), String::new()),
                "",
                &errors,
            ));
        }
        let user = match review {
            AccessReview::SelfSubject => call.user.clone(),
            AccessReview::Subject | AccessReview::Local => subject(&spec),
        };
        let verb_of = |attributes: &Value| text(attributes, "verb").to_owned();
        let (attributes, selector_errors) = match spec.get("resourceAttributes") {
            Some(r) if !r.is_null() => (
                Attributes {
                    user,
                    verb: verb_of(r),
                    target: Target::Resource {
                        namespace: text(r, "namespace").to_owned(),
                        group: text(r, "group").to_owned(),
                        resource: text(r, "resource").to_owned(),
                        subresource: text(r, "subresource").to_owned(),
                        name: text(r, "name").to_owned(),
                    },
                },
                selector_parse_errors(r),
            ),
            _ => {
                let n = spec.get("nonResourceAttributes").unwrap_or(&Value::Null);
                (
                    Attributes {
                        user,
                        verb: verb_of(n),
                        target: Target::NonResource {
                            path: text(n, "path").to_owned(),
                        },
                    },
                    Vec::new(),
                )
            }
        };
        let decision = self.authorize(&attributes);
        let mut status = Map::new();
        status.insert("allowed".into(), json!(decision.allowed));
        if !decision.reason.is_empty() {
            status.insert("reason".into(), json!(decision.reason));
        }
        if !selector_errors.is_empty() {
            status.insert("evaluationError".into(), json!(selector_errors.join("; ")));
        }
        obj.insert("status".into(), Value::Object(status));
        Ok(Reply::json(201, encode_answer(&obj)))
    }

    /// `SelfSubjectRulesReview`: the rules the requester has in a namespace, as the RBAC rule
    /// resolver lists them; the answer is a new review holding only the status.
    pub(crate) fn review_own_rules(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let obj = decode_as(call, &SELF_SUBJECT_RULES_REVIEW, &|g, v, k| {
            self.knows(g, v, k)
        })?;
        let namespace = obj.get("spec").map(|s| text(s, "namespace")).unwrap_or("");
        if namespace.is_empty() {
            return Err(ApiError::bad_request("no namespace on request"));
        }
        let (rules, error) = rules_for(self, call.user, namespace, RoleReader::Informer);
        let resource_rules: Vec<Value> = rules
            .iter()
            .filter(|r| !r.resources.is_empty())
            .map(resource_rule)
            .collect();
        let non_resource_rules: Vec<Value> = rules
            .iter()
            .filter(|r| !r.non_resource_urls.is_empty())
            .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
            .collect();
        let mut status = json!({
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": false,
        });
        if let Some(error) = error {
            status["evaluationError"] = json!(error);
        }
        let mut answer = Map::new();
        for (key, value) in [
            ("apiVersion", json!(format!("{GROUP}/v1"))),
            ("kind", json!("SelfSubjectRulesReview")),
            ("metadata", json!({})),
            ("spec", json!({})),
            ("status", status),
        ] {
            answer.insert(key.into(), value);
        }
        Ok(Reply::json(201, encode_answer(&answer)))
    }
}

/// `ResourceRule` of a policy rule: empty lists left out.
fn resource_rule(rule: &PolicyRule) -> Value {
    let mut out = Map::new();
    out.insert("verbs".into(), json!(rule.verbs));
    for (key, list) in [
        ("apiGroups", &rule.api_groups),
        ("resources", &rule.resources),
        ("resourceNames", &rule.resource_names),
    ] {
        if !list.is_empty() {
            out.insert(key.into(), json!(list));
        }
    }
    Value::Object(out)
}

/// The user a (local) subject access review asks about (`AuthorizationAttributesFrom`).
fn subject(spec: &Value) -> UserInfo {
    UserInfo {
        username: text(spec, "user").to_owned(),
        uid: text(spec, "uid").to_owned(),
        groups: strings(spec.get("groups")),
        extra: spec
            .get("extra")
            .and_then(|extra| {
                let keys = extra.as_object()?.keys();
                Some(keys.map(|k| (k.clone(), strings(extra.get(k)))).collect())
            })
            .unwrap_or_default(),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn given<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// `Validate(Local|Self)SubjectAccessReview`.
fn validate(review: AccessReview, obj: &Object, spec: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let resource = given(spec, "resourceAttributes");
    let non_resource = given(spec, "nonResourceAttributes");
    match (resource, non_resource) {
        (Some(_), Some(n)) => errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.nonResourceAttributes",
            go_non_resource_attributes(n),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errors.push(FieldError::new(
            ErrorType::Invalid,
            "spec.resourceAttributes",
            BadValue::Raw("null".to_owned()),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    let groups = spec
        .get("groups")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if review != AccessReview::SelfSubject && text(spec, "user").is_empty() && groups == 0 {
        errors.push(FieldError::invalid(
            "spec.user",
            "",
            "at least one of user or group must be specified",
        ));
    }
    if let Some(r) = resource {
        let at = Path::new("spec.resourceAttributes");
        errors.extend(selector_attributes(r, &at, "fieldSelector"));
        errors.extend(selector_attributes(r, &at, "labelSelector"));
    }
    let metadata = obj.get("metadata").and_then(Value::as_object);
    let namespace = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let extra_metadata = metadata.is_some_and(|m| {
        m.iter().any(|(key, value)| {
            key != "managedFields"
                && !(review == AccessReview::Local && key == "namespace")
                && !value.is_null()
        })
    });
    if extra_metadata {
        let detail = if review == AccessReview::Local {
            "must be empty except for namespace"
        } else {
            "must be empty"
        };
        let meta = metadata.cloned().unwrap_or_default();
        let printed = crate::gotype::encode_struct(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            &meta,
            &[],
        );
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "metadata",
            BadValue::Raw(String::from_utf8_lossy(&printed).into_owned()),
            detail,
        ));
    }
    if review == AccessReview::Local {
        if let Some(r) = resource {
            let asked = text(r, "namespace");
            if asked != namespace {
                errors.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    asked,
                    "must match metadata.namespace",
                ));
            }
        }
        if let Some(n) = non_resource {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.nonResourceAttributes",
                go_non_resource_attributes(n),
                "disallowed on this kind of request",
            ));
        }
    }
    errors
}

/// The internal `NonResourceAttributes` as an error prints it: JSON without tags, so Go's
/// field names.
fn go_non_resource_attributes(attributes: &Value) -> BadValue {
    BadValue::Raw(format!(
        "{{\"Path\":{},\"Verb\":{}}}",
        json!(text(attributes, "path")),
        json!(text(attributes, "verb"))
    ))
}

/// `validate(Field|Label)SelectorAttributes`: a raw selector or requirements, not both; each
/// requirement valid, with operators the validation does not know let through.
fn selector_attributes(resource: &Value, at: &Path, key: &str) -> Vec<FieldError> {
    let Some(selector) = given(resource, key) else {
        return Vec::new();
    };
    let at = at.child(key);
    let raw = text(selector, "rawSelector");
    let requirements = requirements_of(selector);
    let mut errors = Vec::new();
    if !raw.is_empty() && !requirements.is_empty() {
        errors.push(FieldError::invalid(
            at.child("rawSelector"),
            raw,
            "may not specified at the same time as requirements",
        ));
    }
    if raw.is_empty() && requirements.is_empty() {
        errors.push(FieldError::required(
            at.child("requirements"),
            format!("when {at} is specified, requirements or rawSelector is required"),
        ));
    }
    for (i, requirement) in requirements.iter().enumerate() {
        let here = at.child("requirements").index(i);
        if key == "labelSelector" {
            errors.extend(label_selector_requirement(requirement, &here, true));
        } else {
            errors.extend(field_selector_requirement(requirement, &here));
        }
    }
    errors
}

/// `ValidateFieldSelectorRequirement` letting unknown operators through.
fn field_selector_requirement(requirement: &Value, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if text(requirement, "key").is_empty() {
        errors.push(FieldError::required(at.child("key"), "must be specified"));
    }
    let values = requirement
        .get("values")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    match text(requirement, "operator") {
        "In" | "NotIn" if values == 0 => errors.push(FieldError::required(
            at.child("values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if values > 0 => errors.push(FieldError::forbidden(
            at.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        _ => {}
    }
    errors
}

/// `BuildEvaluationError`'s notes on selectors the authorizer could not read: field selector
/// first, then label selector; "partially" when some requirements were read.
fn selector_parse_errors(resource: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    for (key, parse) in [
        (
            "fieldSelector",
            field_selector_parse as fn(&Value) -> (usize, bool),
        ),
        ("labelSelector", label_selector_parse),
    ] {
        let Some(selector) = given(resource, key) else {
            continue;
        };
        let (read, failed) = parse(selector);
        if failed {
            let how = if read > 0 {
                "partially ignored"
            } else {
                "ignored"
            };
            notes.push(format!(
                "spec.resourceAttributes.{key} {how} due to parse error"
            ));
        }
    }
    notes
}

fn requirements_of(selector: &Value) -> &[Value] {
    list_items(selector.get("requirements"))
}

/// How many requirements of a field selector the authorizer reads, and whether any failed
/// (`fieldSelectorAsSelector`: one value for `In` and `NotIn`, no other operator).
fn field_selector_parse(selector: &Value) -> (usize, bool) {
    let raw = text(selector, "rawSelector");
    if !raw.is_empty() {
        return match FieldSelector::parse(raw) {
            Ok(parsed) => (parsed.requirements().len(), false),
            Err(_) => (0, true),
        };
    }
    let requirements = requirements_of(selector);
    let read = requirements
        .iter()
        .filter(|r| {
            let values = r
                .get("values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            matches!(text(r, "operator"), "In" | "NotIn") && values == 1
        })
        .count();
    (read, read < requirements.len())
}

/// The same for a label selector (`labelSelectorAsSelector`): the four operators of a label
/// selector; what else a requirement could get wrong, validation has refused already.
fn label_selector_parse(selector: &Value) -> (usize, bool) {
    let raw = text(selector, "rawSelector");
    if !raw.is_empty() {
        return match LabelSelector::parse(raw) {
            Ok(_) => (1, false),
            Err(_) => (0, true),
        };
    }
    let requirements = requirements_of(selector);
    let read = requirements
        .iter()
        .filter(|r| {
            matches!(
                text(r, "operator"),
                "In" | "NotIn" | "Exists" | "DoesNotExist"
            )
        })
        .count();
    (read, read < requirements.len())
}
