//! Compiling the rules of a schema: the tree of compiled rules `cel.NewValidator` builds (only
//! the parts of the schema with rules, each node's rules checked against the type of its
//! values), and the errors CRD validation reports for them.

use std::collections::BTreeMap;

use super::check;
use super::cost::estimate;
use super::cost::schema_size::{children_per_value, unbounded_cardinality};
use super::cost::{STATIC_CRD_LIMIT, STATIC_EXPRESSION_LIMIT};
use super::env::Env;
use super::eval;
use super::field_path;
use super::rule_json;
use super::syntax::{self, Expr, Kind};
use super::tree::{ListType, RawRule, SNode};
use super::types::{SELF_TYPE_NAME, Type, decl_type, escape, has_decl_type, object_fields};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::schema::steps::Step;
use crate::teardown::{self, Tree};

/// One rule, compiled.
#[derive(Debug, Clone)]
pub(super) struct CompiledRule {
    pub(super) raw: RawRule,
    /// `None` for an empty rule (skipped).
    pub(super) program: Option<Expr>,
    /// Why the rule does not compile.
    pub(super) error: Option<String>,
    pub(super) uses_old_self: bool,
    pub(super) message_expression: Option<Expr>,
    pub(super) message_expression_error: Option<String>,
    /// The rule's `fieldPath`, normalized; empty when unset or invalid.
    pub(super) field_path: String,
    /// The estimated cost of one evaluation of the rule (`MaxCost`), and of its
    /// `messageExpression`.
    pub(super) max_cost: u64,
    pub(super) message_max_cost: u64,
}

/// The compiled rules of one schema node and of the nodes below it that have rules. Built on
/// the large stack of compilation (by recursion); dropped without. Not `Clone` (a derived
/// copy would recurse): compiled rules share theirs.
#[derive(Debug, Default)]
pub(super) struct RuleNode {
    pub(super) rules: Vec<CompiledRule>,
    /// The node's values have no CEL type, so its rules cannot be compiled.
    pub(super) compile_error: Option<String>,
    /// A resource root (the custom resource or an embedded resource).
    pub(super) resource_root: bool,
    pub(super) items: Option<Box<RuleNode>>,
    pub(super) properties: BTreeMap<String, RuleNode>,
    pub(super) additional: Option<Box<RuleNode>>,
    pub(super) all_of: Vec<RuleNode>,
}

/// A derived drop would take a frame per level (compiled rules are dropped on any thread's
/// stack): see [`teardown`].
impl Drop for RuleNode {
    fn drop(&mut self) {
        teardown::drop_children(self);
    }
}

impl Tree for RuleNode {
    type Children = (
        BTreeMap<String, RuleNode>,
        [Option<Box<RuleNode>>; 2],
        Vec<RuleNode>,
    );

    fn take_children(&mut self) -> Self::Children {
        (
            std::mem::take(&mut self.properties),
            [self.items.take(), self.additional.take()],
            std::mem::take(&mut self.all_of),
        )
    }

    fn each((properties, boxed, all_of): Self::Children, into: &mut Vec<RuleNode>) {
        into.extend(properties.into_values());
        into.extend(boxed.into_iter().flatten().map(|n| *n));
        into.extend(all_of);
    }
}

impl RuleNode {
    /// The depth of the deepest expression tree among these rules and those below.
    pub(super) fn deepest_tree(&self) -> usize {
        let own = self.rules.iter().flat_map(|r| {
            r.program
                .iter()
                .chain(&r.message_expression)
                .map(syntax::tree_depth)
        });
        let below = self
            .items
            .iter()
            .chain(&self.additional)
            .map(|n| n.deepest_tree())
            .chain(self.properties.values().map(RuleNode::deepest_tree))
            .chain(self.all_of.iter().map(RuleNode::deepest_tree));
        own.chain(below).max().unwrap_or(0)
    }
}

/// The reasons a rule may give.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// `validator(validationSchema, nodeSchema, isResourceRoot, ...)`: the rules of `validation`
/// compiled against the values of `node`.
///
/// The type of a node's values is built only where there are rules to check against it (it
/// is as large as the schema below): below, whether a property is a field of it is enough.
pub(super) fn build(validation: &SNode, node: &SNode, resource_root: bool) -> Option<RuleNode> {
    let decl = if validation.rules.is_empty() {
        None
    } else {
        decl_type(node, resource_root, SELF_TYPE_NAME)
    };
    let (rules, compile_error) = compile_rules(&validation.rules, node, decl.as_ref());
    let fields = object_fields(node, resource_root);
    let items = match (validation.items.as_deref(), node.items.as_deref()) {
        (Some(v), Some(n)) => build(v, n, n.embedded).map(Box::new),
        _ => None,
    };
    let mut properties = BTreeMap::new();
    for (name, v) in &validation.properties {
        let Some(n) = node.properties.get(name) else {
            continue;
        };
        // A property is a field of the type by its escaped name (escaping is one to one).
        let typed = match escape(name) {
            Some(_) => fields
                .and_then(|f| f.get(name))
                .is_some_and(|f| has_decl_type(f, f.embedded)),
            None => has_decl_type(n, n.embedded),
        };
        if !typed {
            continue;
        }
        if let Some(p) = build(v, n, n.embedded) {
            properties.insert(name.clone(), p);
        }
    }
    let additional = match (validation.additional.as_deref(), node.additional.as_deref()) {
        (Some(v), Some(n)) => build(v, n, n.embedded).map(Box::new),
        _ => None,
    };
    let all_of: Vec<RuleNode> = validation
        .all_of
        .iter()
        .filter_map(|a| build(a, node, resource_root))
        .collect();
    let any = !rules.is_empty()
        || compile_error.is_some()
        || items.is_some()
        || additional.is_some()
        || !properties.is_empty()
        || !all_of.is_empty();
    any.then_some(RuleNode {
        rules,
        compile_error,
        resource_root,
        items,
        properties,
        additional,
        all_of,
    })
}

/// `cel.Compile`: each rule of a node whose values have type `decl`.
fn compile_rules(
    rules: &[RawRule],
    node: &SNode,
    decl: Option<&Type>,
) -> (Vec<CompiledRule>, Option<String>) {
    if rules.is_empty() {
        return (Vec::new(), None);
    }
    let Some(self_type) = decl else {
        return (
            Vec::new(),
            Some("failed to convert to declType for CEL validation rules".to_owned()),
        );
    };
    let compiled = rules
        .iter()
        .map(|r| compile_rule(r, node, self_type))
        .collect();
    (compiled, None)
}

fn compile_rule(raw: &RawRule, node: &SNode, self_type: &Type) -> CompiledRule {
    let mut out = CompiledRule {
        raw: raw.clone(),
        program: None,
        error: None,
        uses_old_self: false,
        message_expression: None,
        message_expression_error: None,
        field_path: String::new(),
        max_cost: 0,
        message_max_cost: 0,
    };
    if raw.rule.trim().is_empty() {
        return out;
    }
    let old_self_type = if raw.optional_old_self == Some(true) {
        Type::optional(self_type.clone())
    } else {
        self_type.clone()
    };
    // The estimate reads the checker's types by node address, so it runs before the tree
    // moves.
    let compile = |source: &str| -> Result<(Expr, Type, bool, u64), String> {
        let mut expr = syntax::parse(source)?;
        let checked = check::check(&mut expr, self_type, Some(&old_self_type));
        if !checked.issues.is_empty() {
            return Err(syntax::render_issues(source, &checked.issues));
        }
        let cost = estimate::max_cost(&expr, &checked.node_types, node);
        Ok((expr, checked.ty, checked.uses_old_self, cost))
    };
    // cel-go folds conversions of constants when it plans the program.
    let instantiate = |expr: &Expr| -> Option<String> {
        let mut failure = None;
        constant_conversions(expr, &mut failure);
        failure
    };
    match compile(&raw.rule) {
        Err(issues) => {
            out.error = Some(format!("compilation failed: {issues}"));
            return out;
        }
        Ok((_, ty, ..)) if ty != Type::Bool => {
            out.error = Some("cel expression must evaluate to a bool".to_owned());
            return out;
        }
        Ok((expr, _, uses_old_self, cost)) => {
            if let Some(e) = instantiate(&expr) {
                out.error = Some(format!("program instantiation failed: {e}"));
                return out;
            }
            out.program = Some(expr);
            out.uses_old_self = uses_old_self;
            out.max_cost = cost;
        }
    }
    if !raw.message_expression.is_empty() {
        match compile(&raw.message_expression) {
            Err(issues) => {
                out.message_expression_error =
                    Some(format!("messageExpression compilation failed: {issues}"));
            }
            Ok((_, ty, ..)) if ty != Type::String => {
                out.message_expression_error =
                    Some("messageExpression must evaluate to a string".to_owned());
            }
            Ok((expr, _, _, cost)) => match instantiate(&expr) {
                Some(e) => {
                    out.message_expression_error =
                        Some(format!("messageExpression instantiation failed: {e}"));
                }
                None => {
                    out.message_expression = Some(expr);
                    out.message_max_cost = cost;
                }
            },
        }
    }
    if !raw.field_path.is_empty()
        && let Ok(normalized) = field_path::normalize(&raw.field_path, node)
    {
        out.field_path = normalized;
    }
    out
}

/// The first error of a conversion of a constant (`uint(-1)`) in `e`.
fn constant_conversions(e: &Expr, failure: &mut Option<String>) {
    if failure.is_some() {
        return;
    }
    match &e.kind {
        Kind::Call {
            func, target, args, ..
        } => {
            let conversion = matches!(
                func.as_str(),
                "int" | "uint" | "double" | "string" | "bytes" | "bool" | "timestamp" | "duration"
            );
            if conversion
                && target.is_none()
                && let [
                    arg @ Expr {
                        kind: Kind::Lit(_), ..
                    },
                ] = args.as_slice()
            {
                let mut env = Env::new(Vec::new());
                if let Err(err) = eval::eval(e, &mut env) {
                    *failure = Some(err.message);
                }
                let _ = arg;
                return;
            }
            if let Some(t) = target {
                constant_conversions(t, failure);
            }
            args.iter().for_each(|a| constant_conversions(a, failure));
        }
        Kind::Select { operand, .. } => constant_conversions(operand, failure),
        Kind::List(elems) => elems
            .iter()
            .for_each(|(x, _)| constant_conversions(x, failure)),
        Kind::Map(entries) => entries.iter().for_each(|(k, v, _)| {
            constant_conversions(k, failure);
            constant_conversions(v, failure);
        }),
        Kind::Comprehension { range, args, .. } => {
            constant_conversions(range, failure);
            args.iter().for_each(|a| constant_conversions(a, failure));
        }
        Kind::Struct { fields, .. } => {
            fields
                .iter()
                .for_each(|f| constant_conversions(&f.value, failure));
        }
        Kind::Lit(_) | Kind::Ident(_) => {}
    }
}

/// Errors of CRD validation: those of the rules' fields first, then those of their
/// compilation.
#[derive(Default)]
pub(super) struct CrdErrors {
    pub(super) schema: Vec<FieldError>,
    pub(super) cel: Vec<FieldError>,
    /// The estimated cost of every rule and message expression compiled, added up
    /// (`TotalCost`), and the dearest of them (at most four, each at least a hundredth of the
    /// limit), dearest first.
    total_cost: u64,
    dearest: Vec<(String, u64)>,
    /// The schema is unchanged by a CRD update: no rule is refused for its own cost.
    waive_expression_cost: bool,
}

impl CrdErrors {
    fn observe_cost(&mut self, at: String, cost: u64) {
        self.total_cost = self.total_cost.saturating_add(cost);
        if cost < STATIC_CRD_LIMIT / 100 {
            return;
        }
        let place = self.dearest.partition_point(|(_, c)| *c >= cost);
        self.dearest.insert(place, (at, cost));
        self.dearest.truncate(4);
    }

    /// The errors of a schema whose rules together are estimated to cost more than
    /// [`STATIC_CRD_LIMIT`]: each of the dearest rules, then the schema at `root`.
    pub(super) fn total_cost_errors(&self, root: &Path) -> Vec<FieldError> {
        if self.total_cost <= STATIC_CRD_LIMIT {
            return Vec::new();
        }
        let mut out: Vec<FieldError> = self
            .dearest
            .iter()
            .map(|(at, _)| {
                FieldError::forbidden(
                    at.clone(),
                    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                )
            })
            .collect();
        out.push(FieldError::forbidden(
            root.to_string(),
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                self.total_cost,
                STATIC_CRD_LIMIT,
            ),
        ));
        out
    }
}

/// `getCostErrorMessage`.
fn cost_error_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// How a node's rules see `oldSelf` and their types, while walking the schema.
#[derive(Clone, Copy)]
struct Context {
    /// The first ancestor below which old values cannot be correlated: the length of its path
    /// (which begins the path of every node below it).
    uncorrelatable: Option<usize>,
    /// Whether the rules here are compiled (not under `allOf`).
    compiled: bool,
    resource_root: bool,
    /// How many values of this node one object may hold (`MaxCardinality`); `None` when
    /// unbounded.
    cardinality: Option<u64>,
}

/// The errors CRD validation (`ValidateCustomResourceDefinitionOpenAPISchema`) reports about
/// the `x-kubernetes-validations` of `schema`, a CRD version's `openAPIV3Schema` at `root`.
pub(super) fn crd_errors(schema: &SNode, root: &Path, unchanged_schema: bool) -> CrdErrors {
    let mut errors = CrdErrors {
        waive_expression_cost: unchanged_schema,
        ..CrdErrors::default()
    };
    let ctx = Context {
        uncorrelatable: None,
        compiled: true,
        resource_root: true,
        cardinality: Some(1),
    };
    walk(schema, &mut root.as_str().to_owned(), ctx, &mut errors);
    errors
}

/// Makes `path` the path of `field` (as [`Path::child`] names it) below its first `at` bytes.
fn child(path: &mut String, at: usize, field: &str) {
    Step::Field(field).below(path, at);
}

/// Visits a node, at `path` (a buffer the nodes below write their paths into, and leave as
/// they found it); returns whether it or a node below it has errors of the first kind.
///
/// By recursion, on the large stack compilation runs on: a node's frame holds no path.
fn walk(s: &SNode, path: &mut String, ctx: Context, out: &mut CrdErrors) -> bool {
    let before = out.schema.len();
    let at = path.len();
    let cardinality = ctx
        .cardinality
        .zip(children_per_value(s))
        .map(|(here, per)| {
            if here == 0 {
                0
            } else {
                here.saturating_mul(per)
            }
        });
    if let Some(additional) = s.additional.as_deref() {
        let below = Context {
            resource_root: additional.embedded,
            cardinality,
            ..ctx
        };
        child(path, at, "additionalProperties");
        walk(additional, path, below, out);
    }
    let correlatable_map = matches!(s.map_type.as_deref(), None | Some("granular" | "atomic"));
    for (name, prop) in &s.properties {
        let uncorrelatable = match (ctx.uncorrelatable, correlatable_map) {
            (Some(p), _) => Some(p),
            (None, false) => Some(at),
            (None, true) => None,
        };
        let below = Context {
            uncorrelatable,
            compiled: ctx.compiled,
            resource_root: prop.embedded,
            cardinality,
        };
        child(path, at, "properties");
        Step::Key(name).below(path, path.len());
        walk(prop, path, below, out);
    }
    for (i, branch) in s.all_of.iter().enumerate() {
        let below = Context {
            uncorrelatable: ctx.uncorrelatable,
            compiled: false,
            resource_root: false,
            cardinality,
        };
        child(path, at, "allOf");
        Step::Index(i).below(path, path.len());
        walk(branch, path, below, out);
    }
    if let Some(items) = s.items.as_deref() {
        let uncorrelatable = match (ctx.uncorrelatable, &s.list_type) {
            (Some(p), _) => Some(p),
            (None, ListType::Map(_)) => None,
            (None, _) => Some(at),
        };
        let below = Context {
            uncorrelatable,
            compiled: ctx.compiled,
            resource_root: items.embedded,
            cardinality,
        };
        child(path, at, "items");
        walk(items, path, below, out);
    }
    path.truncate(at);
    if s.rules.is_empty() {
        return out.schema.len() > before;
    }
    let rules_path = Path::new(path).child("x-kubernetes-validations");
    for (i, rule) in s.rules.iter().enumerate() {
        out.schema
            .extend(rule_field_errors(rule, s, &rules_path.index(i)));
    }
    if out.schema.len() == before && ctx.compiled {
        let uncorrelatable = ctx.uncorrelatable.map(|len| Path::new(&path[..len]));
        compile_errors(s, &rules_path, &ctx, uncorrelatable.as_ref(), out);
    }
    out.schema.len() > before
}

/// The checks of a rule's own fields.
fn rule_field_errors(rule: &RawRule, s: &SNode, at: &Path) -> Vec<FieldError> {
    let mut out = Vec::new();
    let field = |name: &str| at.child(name).to_string();
    let has_newlines = |t: &str| t.contains(['\n', '\r']);
    let (rule_text, message) = (rule.rule.trim(), rule.message.trim());
    if rule_text.is_empty() {
        out.push(FieldError::required(field("rule"), "rule is not specified"));
    } else if !rule.message.is_empty() && message.is_empty() {
        out.push(FieldError::invalid(
            field("message"),
            &rule.message,
            "must be non-empty if specified",
        ));
    } else if has_newlines(message) {
        out.push(FieldError::invalid(
            field("message"),
            &rule.message,
            "must not contain line breaks",
        ));
    } else if has_newlines(rule_text) && message.is_empty() {
        out.push(FieldError::required(
            field("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
        out.push(FieldError::required(
            field("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = &rule.reason
        && !REASONS.contains(&reason.as_str())
    {
        out.push(FieldError::not_supported(field("reason"), reason, &REASONS));
    }
    if !rule.field_path.is_empty() && rule.field_path.trim().is_empty() {
        out.push(FieldError::invalid(
            field("fieldPath"),
            &rule.field_path,
            "must be non-empty if specified",
        ));
    }
    if has_newlines(&rule.field_path) {
        out.push(FieldError::invalid(
            field("fieldPath"),
            &rule.field_path,
            "must not contain line breaks",
        ));
    }
    if !rule.field_path.is_empty() && field_path::normalize(&rule.field_path, s).is_err() {
        out.push(FieldError::invalid(
            field("fieldPath"),
            &rule.field_path,
            "must be a valid path",
        ));
    }
    out
}

/// Compiles a node's rules as CRD validation does and reports what fails.
/// `uncorrelatable`: the path of the ancestor below which old values cannot be correlated.
fn compile_errors(
    s: &SNode,
    rules_path: &Path,
    ctx: &Context,
    uncorrelatable: Option<&Path>,
    out: &mut CrdErrors,
) {
    let Some(self_type) = decl_type(s, ctx.resource_root, SELF_TYPE_NAME) else {
        out.cel.push(FieldError::new(
            ErrorType::Internal,
            rules_path.to_string(),
            BadValue::Omit,
            "internal error: failed to construct type information for x-kubernetes-validations \
             rules: unable to convert structural schema to CEL declarations",
        ));
        return;
    };
    for (i, raw) in s.rules.iter().enumerate() {
        let at = rules_path.index(i);
        let compiled = compile_rule(raw, s, &self_type);
        let rule_value = || BadValue::Raw(rule_json::rule(raw));
        // `getExpressionCost`: one evaluation's cost times how many times the rule may run.
        let runs = ctx.cardinality.unwrap_or_else(|| unbounded_cardinality(s));
        let cost = if compiled.max_cost == 0 {
            0
        } else {
            compiled.max_cost.saturating_mul(runs)
        };
        let rule_at = at.child("rule").to_string();
        if cost > STATIC_EXPRESSION_LIMIT && !out.waive_expression_cost {
            out.cel.push(FieldError::forbidden(
                rule_at.clone(),
                cost_error_message("estimated rule cost", cost, STATIC_EXPRESSION_LIMIT),
            ));
        }
        out.observe_cost(rule_at, cost);
        if let Some(detail) = &compiled.error {
            out.cel.push(FieldError::new(
                ErrorType::Invalid,
                at.child("rule").to_string(),
                rule_value(),
                detail,
            ));
        }
        if let Some(detail) = &compiled.message_expression_error {
            out.cel.push(FieldError::new(
                ErrorType::Invalid,
                at.child("messageExpression").to_string(),
                rule_value(),
                detail,
            ));
        } else if compiled.message_expression.is_some() {
            // Not multiplied by the rule's runs, as the real server does.
            let message_at = at.child("messageExpression").to_string();
            if compiled.message_max_cost > STATIC_EXPRESSION_LIMIT && !out.waive_expression_cost {
                out.cel.push(FieldError::forbidden(
                    message_at.clone(),
                    cost_error_message(
                        "estimated messageExpression cost",
                        compiled.message_max_cost,
                        STATIC_EXPRESSION_LIMIT,
                    ),
                ));
            }
            out.observe_cost(message_at, compiled.message_max_cost);
        }
        if compiled.uses_old_self {
            if let Some(uncorrelatable) = uncorrelatable {
                out.cel.push(FieldError::invalid(
                    at.child("rule").to_string(),
                    &raw.rule,
                    format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within {}",
                        uncorrelatable
                    ),
                ));
            }
        } else if let Some(optional) = raw.optional_old_self {
            out.cel.push(FieldError::new(
                ErrorType::Invalid,
                at.child("optionalOldSelf").to_string(),
                BadValue::Raw(optional.to_string()),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
}
