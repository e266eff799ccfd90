//! Evaluating the compiled rules against an object (`Validator.Validate`): each node's rules
//! with `self` the value there and `oldSelf` the correlated stored value, then the nodes
//! below; failures become field errors, or warnings when ratcheting lets an unchanged value
//! keep them.

use recon_apimachinery::json::Value as Json;

use super::env::{COST_EXCEEDED, Env, STEP_LIMIT};
use super::eval;
use super::rules::{CompiledRule, RuleNode};
use super::tree::{ListType, SNode};
use super::value::Value;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::schema::steps::Step;
use recon_apimachinery::go_json::Num;
use recon_apimachinery::go_json::go_json;

/// The total cost all rules of one write may use.
use super::cost::RUNTIME_BUDGET as BUDGET;

/// Largest message a `messageExpression` may produce, in bytes.
const MAX_MESSAGE: usize = 5 * 1024;

/// What the rules say about one write.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    pub(super) errors: Vec<FieldError>,
    /// Failures ratcheted away, as the real server's warnings.
    pub(super) warnings: Vec<String>,
}

/// A new value and the stored value it corresponds to, for ratcheting
/// (`common.CorrelatedObject`).
#[derive(Clone, Copy)]
struct Correlated<'a> {
    new: &'a Json,
    old: &'a Json,
    schema: &'a SNode,
}

impl<'a> Correlated<'a> {
    fn key(self, field: &str) -> Option<Correlated<'a>> {
        let (Json::Object(new), Json::Object(old)) = (self.new, self.old) else {
            return None;
        };
        let (new, old) = (new.get(field)?, old.get(field)?);
        let schema = self
            .schema
            .properties
            .get(field)
            .or(self.schema.additional.as_deref())?;
        Some(Correlated { new, old, schema })
    }

    fn index(self, i: usize) -> Option<Correlated<'a>> {
        let (Json::Array(new), Json::Array(old)) = (self.new, self.old) else {
            return None;
        };
        let item = new.get(i)?;
        let ListType::Map(keys) = &self.schema.list_type else {
            return None;
        };
        let old = map_list_get(keys, old, item)?;
        Some(Correlated {
            new: item,
            old,
            schema: self.schema.items.as_deref()?,
        })
    }

    /// `CachedDeepEqual`: whether every pair of values that correspond below is equal, checked
    /// one pair at a time (a value may nest as deep as Go reads).
    fn unchanged(self) -> bool {
        let mut pending = vec![self];
        while let Some(c) = pending.pop() {
            match (c.new, c.old) {
                (Json::Null, Json::Null) => {}
                (Json::Null, _) | (_, Json::Null) => return false,
                (Json::Array(new), Json::Array(old)) => {
                    if new.len() != old.len() {
                        return false;
                    }
                    if !matches!(c.schema.list_type, ListType::Map(_)) {
                        // The items of other lists correspond to nothing: compared as data.
                        if new != old {
                            return false;
                        }
                        continue;
                    }
                    for i in 0..new.len() {
                        match c.index(i) {
                            Some(child) => pending.push(child),
                            None => return false,
                        }
                    }
                }
                (Json::Object(new), Json::Object(old)) => {
                    if new.len() != old.len() {
                        return false;
                    }
                    for k in new.keys() {
                        match c.key(k) {
                            Some(child) => pending.push(child),
                            None => return false,
                        }
                    }
                }
                (Json::Array(_) | Json::Object(_), _) | (_, Json::Array(_) | Json::Object(_)) => {
                    return false;
                }
                (new, old) => {
                    if new != old {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// The item of a stored `map` list with the same key fields as `item` (`MapList.Get`).
fn map_list_get<'a>(keys: &[String], old: &'a [Json], item: &Json) -> Option<&'a Json> {
    let Json::Object(item) = item else {
        return None;
    };
    let wanted: Vec<Option<&Json>> = keys.iter().map(|k| item.get(k)).collect();
    old.iter().find(|o| {
        o.as_object()
            .is_some_and(|o| keys.iter().map(|k| o.get(k)).eq(wanted.iter().copied()))
    })
}

/// The ratcheting state at a node (`ratchetingOptions`).
#[derive(Clone, Copy, Default)]
struct Ratchet<'a> {
    current: Option<Correlated<'a>>,
    nearest: Option<Correlated<'a>>,
}

impl<'a> Ratchet<'a> {
    fn key(self, field: &str) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        if self.nearest.is_none() && matches!(field, "apiVersion" | "kind") {
            return Ratchet::default();
        }
        Ratchet {
            current: current.key(field),
            nearest: Some(current),
        }
    }

    fn index(self, i: usize) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        Ratchet {
            current: current.index(i),
            nearest: Some(current),
        }
    }

    fn should_ratchet(self) -> bool {
        match (self.current, self.nearest) {
            (Some(c), _) => c.unchanged(),
            (None, Some(n)) => n.unchanged(),
            (None, None) => false,
        }
    }
}

/// A node's rules to evaluate with its value, at the path of the buffer's first `parent`
/// bytes and `step`.
struct Visit<'a> {
    rules: &'a RuleNode,
    schema: &'a SNode,
    parent: usize,
    step: Step<'a>,
    new: &'a Json,
    old: Option<&'a Json>,
    ratchet: Ratchet<'a>,
}

/// One validation: the budget left, and what it found.
pub(super) struct Run {
    budget: u64,
    stopped: bool,
    pub(super) outcome: Outcome,
}

impl Run {
    pub(super) fn new() -> Run {
        Run {
            budget: BUDGET,
            stopped: false,
            outcome: Outcome::default(),
        }
    }

    /// Validates `new` (a whole custom resource) against the rules, with the stored object.
    ///
    /// One value at a time (a value may nest as deep as Go reads), in the order a recursion
    /// would take: a node's rules, its `allOf` branches, then the values below it.
    pub(super) fn resource(
        &mut self,
        rules: &RuleNode,
        schema: &SNode,
        new: &Json,
        old: Option<&Json>,
    ) {
        let ratchet = Ratchet {
            current: old.map(|old| Correlated { new, old, schema }),
            nearest: None,
        };
        let mut path = String::new();
        let mut pending = vec![Visit {
            rules,
            schema,
            parent: 0,
            step: Step::Here,
            new,
            old,
            ratchet,
        }];
        while let Some(visit) = pending.pop() {
            if self.stopped {
                break;
            }
            if visit.new.is_null() {
                continue;
            }
            visit.step.below(&mut path, visit.parent);
            // A stored null is no old value.
            let old = visit.old.filter(|o| !o.is_null());
            let Visit {
                rules,
                schema,
                new,
                ratchet,
                ..
            } = visit;
            self.expressions(rules, schema, &path, new, old, ratchet);
            let at = path.len();
            let below = |rules, schema, step, new, old, ratchet| Visit {
                rules,
                schema,
                parent: at,
                step,
                new,
                old,
                ratchet,
            };
            // In the reverse of the order they are visited in.
            match new {
                Json::Array(items) => {
                    if let (Some(item_rules), Some(item_schema)) =
                        (rules.items.as_deref(), schema.items.as_deref())
                    {
                        let old_items = old.and_then(Json::as_array);
                        for (i, item) in items.iter().enumerate().rev() {
                            let old_item = match (&schema.list_type, old_items) {
                                (ListType::Map(keys), Some(o)) => map_list_get(keys, o, item),
                                _ => None,
                            };
                            let step = Step::Index(i);
                            let r = ratchet.index(i);
                            pending.push(below(item_rules, item_schema, step, item, old_item, r));
                        }
                    }
                }
                Json::Object(map) => {
                    let correlatable = matches!(
                        schema.map_type.as_deref(),
                        None | Some("granular" | "atomic")
                    );
                    let old_map = old.and_then(Json::as_object).filter(|_| correlatable);
                    for (k, v) in map.iter().rev() {
                        if let (Some(prop_rules), Some(prop_schema)) =
                            (rules.properties.get(k), schema.properties.get(k))
                        {
                            let old_v = old_map.and_then(|o| o.get(k));
                            let (step, r) = (Step::Field(k), ratchet.key(k));
                            pending.push(below(prop_rules, prop_schema, step, v, old_v, r));
                        }
                    }
                    if let (Some(add_rules), Some(add_schema)) =
                        (rules.additional.as_deref(), schema.additional.as_deref())
                    {
                        for (k, v) in map.iter().rev() {
                            let old_v = old_map.and_then(|o| o.get(k));
                            let (step, r) = (Step::Key(k), ratchet.key(k));
                            pending.push(below(add_rules, add_schema, step, v, old_v, r));
                        }
                    }
                }
                _ => {}
            }
            for branch in rules.all_of.iter().rev() {
                let r = Ratchet {
                    current: None,
                    nearest: ratchet.nearest,
                };
                pending.push(below(branch, schema, Step::Here, new, old, r));
            }
        }
    }

    /// `validateExpressions`: the rules of one node.
    fn expressions<'a>(
        &mut self,
        node: &RuleNode,
        schema: &'a SNode,
        path: &str,
        new: &'a Json,
        old: Option<&'a Json>,
        ratchet: Ratchet<'a>,
    ) {
        let ty = schema.ty.as_str();
        let invalid = |detail: String| {
            FieldError::new(
                ErrorType::Invalid,
                Path::new(path).to_string(),
                BadValue::Str(ty.to_owned()),
                detail,
            )
        };
        if let Some(e) = &node.compile_error {
            self.outcome
                .errors
                .push(invalid(format!("rule compiler initialization error: {e}")));
            return;
        }
        if node.rules.is_empty() {
            return;
        }
        if self.budget == 0 {
            self.outcome.errors.push(invalid(
                "validation failed due to running out of cost budget, no further validation rules will be run"
                    .to_owned(),
            ));
            self.stopped = true;
            return;
        }
        let view = if node.resource_root {
            schema.view()
        } else {
            schema
        };
        let (self_value, old_value) = (
            Value::of_json(new, view),
            old.map(|o| Value::of_json(o, view)),
        );
        let node_uses_old_self = node.rules.iter().any(|r| r.uses_old_self);
        for rule in &node.rules {
            if let Some(e) = &rule.error {
                self.outcome
                    .errors
                    .push(invalid(format!("rule compile error: {e}")));
                continue;
            }
            let Some(program) = &rule.program else {
                continue;
            };
            let optional_old_self = rule.raw.optional_old_self == Some(true);
            if rule.uses_old_self && old.is_none() && !optional_old_self {
                continue;
            }
            let mut vars = Vec::new();
            match &self_value {
                Ok(v) => vars.push(("self", v.clone())),
                Err(e) => {
                    self.outcome.errors.push(invalid(format!(
                        "{} evaluating rule: {}",
                        e.message,
                        rule_error_string(rule)
                    )));
                    continue;
                }
            }
            // `oldSelf` exists for the rules of a node only when one of them uses it.
            let old_value = if node_uses_old_self {
                old_value.as_ref()
            } else {
                None
            };
            let old_self = match (old_value, optional_old_self && node_uses_old_self) {
                (Some(Ok(v)), false) => Some(v.clone()),
                (Some(Ok(v)), true) => Some(Value::Optional(Some(std::rc::Rc::new(v.clone())))),
                (None, true) => Some(Value::Optional(None)),
                (Some(Err(_)) | None, _) => None,
            };
            if let Some(o) = old_self {
                vars.push(("oldSelf", o));
            }
            let mut env = Env::new(vars.clone());
            let result = eval::eval(program, &mut env);
            let cost = STEP_LIMIT - env.steps;
            if cost > self.budget {
                self.outcome.errors.push(invalid(
                    "validation failed due to running out of cost budget, no further validation rules will be run"
                        .to_owned(),
                ));
                self.stopped = true;
                return;
            }
            self.budget -= cost;
            let passed = match result {
                Ok(Value::Bool(true)) => true,
                Ok(_) => false,
                Err(e) if e.message == COST_EXCEEDED => {
                    self.outcome.errors.push(invalid(format!(
                        "'{COST_EXCEEDED}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                        rule_error_string(rule)
                    )));
                    self.stopped = true;
                    return;
                }
                Err(e) if e.message.starts_with("no such overload") => {
                    self.outcome.errors.push(invalid(format!(
                        "'{}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        e.message,
                        rule_error_string(rule)
                    )));
                    continue;
                }
                Err(e) => {
                    self.outcome.errors.push(invalid(format!(
                        "{} evaluating rule: {}",
                        e.message,
                        rule_error_string(rule)
                    )));
                    continue;
                }
            };
            if passed {
                continue;
            }
            let at = if rule.field_path.is_empty() {
                Path::new(path)
            } else {
                Path::new(path).child(&rule.field_path)
            };
            let detail = self
                .message_expression(rule, vars)
                .unwrap_or_else(|| rule_message_or_default(rule));
            let value = if matches!(ty, "object" | "array") {
                BadValue::Omit
            } else {
                bad_value(new)
            };
            let error = error_for_reason(rule.raw.reason.as_deref(), at.to_string(), value, detail);
            if !rule.uses_old_self && ratchet.should_ratchet() {
                self.outcome.warnings.push(error.to_string());
            } else {
                self.outcome.errors.push(error);
            }
        }
    }

    /// The message a rule's `messageExpression` computes, when it computes a usable one.
    fn message_expression<'a>(
        &mut self,
        rule: &CompiledRule,
        vars: Vec<(&str, Value<'a>)>,
    ) -> Option<String> {
        let expr = rule.message_expression.as_ref()?;
        let mut env = Env::new(vars);
        let result = eval::eval(expr, &mut env);
        let cost = STEP_LIMIT - env.steps;
        self.budget = self.budget.saturating_sub(cost);
        let Ok(Value::String(s)) = result else {
            return None;
        };
        let trimmed = s.trim();
        if trimmed.is_empty() || trimmed.len() > MAX_MESSAGE || trimmed.contains('\n') {
            return None;
        }
        Some(trimmed.to_owned())
    }
}

/// `ruleErrorString`: the message, else the rule.
fn rule_error_string(rule: &CompiledRule) -> String {
    let message = rule.raw.message.trim();
    if message.is_empty() {
        rule.raw.rule.trim().to_owned()
    } else {
        message.to_owned()
    }
}

/// `ruleMessageOrDefault`.
fn rule_message_or_default(rule: &CompiledRule) -> String {
    if rule.raw.message.is_empty() {
        format!("failed rule: {}", rule_error_string(rule))
    } else {
        rule.raw.message.trim().to_owned()
    }
}

/// `fieldErrorForReason`.
fn error_for_reason(
    reason: Option<&str>,
    field: String,
    value: BadValue,
    detail: String,
) -> FieldError {
    match reason {
        Some("FieldValueForbidden") => FieldError::forbidden(field, detail),
        Some("FieldValueRequired") => FieldError::required(field, detail),
        Some("FieldValueDuplicate") => FieldError::new(ErrorType::Duplicate, field, value, ""),
        _ => FieldError::new(ErrorType::Invalid, field, value, detail),
    }
}

/// The value of `self` as a field error prints it.
fn bad_value(v: &Json) -> BadValue {
    match v {
        Json::String(s) => BadValue::Str(s.clone()),
        Json::Number(n) => BadValue::Raw(Num::of(n).go()),
        Json::Bool(b) => BadValue::Raw(b.to_string()),
        other => BadValue::Raw(go_json(other)),
    }
}
