//! `x-kubernetes-validations`: the CEL rules of a custom resource's schema, compiled when the
//! CRD is written and evaluated on every write of a custom resource, as
//! apiextensions-apiserver does (`pkg/apiserver/schema/cel`, Kubernetes 1.36).
//!
//! - [`syntax`], [`lex`], [`parser`]: source to tree (syntax errors worded by the ANTLR
//!   parser cel-go uses);
//! - [`check`], [`unify`], [`decls`], [`types`]: cel-go's type checker, the functions of the
//!   CRD rule environment, the types of schema values;
//! - [`eval`], [`env`](mod@env), [`value`]: the interpreter, its variables and cost, values
//!   read through the schema;
//! - [`operators`], [`stdlib`], [`strings`], [`lists`], [`format`](mod@format), [`re2`],
//!   [`time`], [`ext`]: the operators and functions (the Kubernetes library types by
//!   `kube-cel`);
//! - [`tree`], [`rules`], [`field_path`], [`rule_json`]: the schema's rules compiled, and what
//!   CRD validation reports about them (a refused rule quoted as Go's JSON);
//! - [`cost`]: cel-go's cost model, estimated when the CRD is written and charged when rules
//!   run;
//! - [`walk`]: evaluation over an object, with ratcheting, and the field errors;
//! - [`dra`]: the environment of dynamic resource allocation's device selectors, with
//!   [`bindings`] (`cel.bind`, which only that environment has).
//! - [`policy`]: the expressions of admission policies, compiled with their environment.
//!
//! Where it differs from the real server:
//! - a call that would build a string or list longer than [`cost::actual::MAX_RESULT_LEN`]
//!   is stopped as over the per-call cost limit (the real server builds it, however large);
//! - the type of `self` is named `selfType0` in messages (the real name has the clock's
//!   nanoseconds in it);
//! - regular expressions run on Rust's `regex` (RE2 syntax, ASCII Perl classes), so a pattern
//!   error is worded by it; the Kubernetes library types are `kube-cel`'s ports, whose error
//!   details (after Kubernetes' own prefixes) and corner cases (URL normalization) are theirs;
//! - sibling properties are visited in name order (the real server walks Go maps, in no fixed
//!   order).

mod bindings;
mod check;
mod cost;
mod decls;
mod dra;
mod env;
mod eval;
mod ext;
mod field_path;
mod format;
mod lex;
mod lists;
mod operators;
mod parser;
mod policy;
mod rule_json;
mod rules;
mod stack;
mod stdlib;
mod strings;
mod syntax;
mod time;
mod tree;
mod types;
mod unify;
mod value;
mod walk;

#[cfg(test)]
mod tests;

pub(crate) use dra::{SelectorError, device_selector_error};
pub(crate) use policy::{Declarations, PolicyCompiler, Returns};
pub(crate) use types::RESERVED;

use std::sync::Arc;

use recon_apimachinery::json::Value;
use rules::RuleNode;
use tree::SNode;

use crate::field::{BadValue, ErrorType, FieldError, Path};

/// Runs `work` on a thread with a stack deep enough for any expression the parser accepts
/// (parsing and checking recurse once per node); `None` when it panicked or no thread started.
pub(crate) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    stack::on_large_stack(work)
}

/// Every `x-kubernetes-validations` rule of one version's `openAPIV3Schema`, compiled once so
/// that validating an object only evaluates.
#[derive(Debug, Clone)]
pub(crate) struct CelRules {
    /// Shared by copies: a tree copies itself by recursion, and a schema may nest as deep as
    /// Go reads.
    schema: Arc<SNode>,
    rules: Arc<RuleNode>,
    /// Some expression is deeper than [`stack::SHALLOW`]: evaluation needs a large stack.
    deep: bool,
}

/// What the rules say about one write: the errors, and the failures ratcheting turned into
/// warnings (the real server returns them as `Warning` headers).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct CelOutcome {
    pub(crate) errors: Vec<FieldError>,
    pub(crate) warnings: Vec<String>,
}

impl CelRules {
    /// `None` when the schema has no rules. `Err`: the CRD-time errors (a rule that does not
    /// compile, a transition rule where `oldSelf` can never exist, a bad `message`, `reason`
    /// or `fieldPath`, ...) at paths relative to the schema, e.g.
    /// `properties[spec].x-kubernetes-validations[0].rule`: use [`CelRules::compile_at`] to
    /// have them under the schema's own path (which some messages repeat).
    ///
    /// Only the rules are checked: call this once the rest of the schema is valid and
    /// structural (the real server does not compile rules otherwise).
    pub(crate) fn compile(open_api_v3_schema: &Value) -> Result<Option<CelRules>, Vec<FieldError>> {
        Self::compile_at(open_api_v3_schema, "")
    }

    /// As [`CelRules::compile`], with errors under `root`, the path of the schema in the CRD:
    /// `spec.validation.openAPIV3Schema` when every version has the same schema (the real
    /// server then validates the one schema of its internal form), else
    /// `spec.versions[i].schema.openAPIV3Schema`. Field errors come first, then
    /// compilation errors, each in schema order (properties sorted by name).
    pub(crate) fn compile_at(
        open_api_v3_schema: &Value,
        root: &str,
    ) -> Result<Option<CelRules>, Vec<FieldError>> {
        Self::compile_checked(open_api_v3_schema, root, false)
    }

    /// The CRD-time errors of a schema's rules, as [`CelRules::compile_at`] gives them;
    /// `unchanged_schema`: the CRD is updated and this version's schema is as stored, so a
    /// rule is not refused for its own estimated cost (only all rules together are).
    pub(crate) fn check_crd(
        open_api_v3_schema: &Value,
        root: &str,
        unchanged_schema: bool,
    ) -> Vec<FieldError> {
        Self::compile_checked(open_api_v3_schema, root, unchanged_schema)
            .err()
            .unwrap_or_default()
    }

    fn compile_checked(
        open_api_v3_schema: &Value,
        root: &str,
        unchanged_schema: bool,
    ) -> Result<Option<CelRules>, Vec<FieldError>> {
        stack::on_large_stack(|| Self::compile_here(open_api_v3_schema, root, unchanged_schema))
            .unwrap_or_else(|| {
                Err(vec![FieldError::new(
                    ErrorType::Internal,
                    root,
                    BadValue::Omit,
                    "compiling the validation rules failed",
                )])
            })
    }

    fn compile_here(
        open_api_v3_schema: &Value,
        root: &str,
        unchanged_schema: bool,
    ) -> Result<Option<CelRules>, Vec<FieldError>> {
        let schema = SNode::resource(open_api_v3_schema);
        if !schema.has_rules() {
            return Ok(None);
        }
        let root_path = if root.is_empty() {
            Path::default()
        } else {
            Path::default().child(root)
        };
        let errors = rules::crd_errors(&schema, &root_path, unchanged_schema);
        let total = errors.total_cost_errors(&root_path);
        if !errors.schema.is_empty() || !errors.cel.is_empty() || !total.is_empty() {
            let mut all = errors.schema;
            all.extend(errors.cel);
            all.extend(total);
            return Err(all);
        }
        let rules = rules::build(&schema, &schema, true).unwrap_or_default();
        let deep = rules.deepest_tree() > stack::SHALLOW;
        Ok(Some(CelRules {
            schema: Arc::new(schema),
            rules: Arc::new(rules),
            deep,
        }))
    }

    /// Evaluates the rules against a whole custom resource `new` (after defaulting), with
    /// the stored object `old` on an update: transition rules run only where an old value
    /// corresponds, and a failure on a value equal to its stored value is ratcheted away.
    ///
    /// The caller runs this after the schema validation and only when none of its errors is
    /// `Required`, `NotSupported`, `TooLong`, `TooMany` or `TypeInvalid` (the real server
    /// then reports `<nil>: Invalid value: null: some validation rules were not checked ...`
    /// instead). A `/status` write is validated the same way, the whole object (its spec taken
    /// from the stored one) against the stored one: `statusStrategy.ValidateUpdate` runs the
    /// same validator with the same ratcheting. Failures ratcheting let through come back as
    /// warnings.
    pub(crate) fn evaluate(&self, new: &Value, old: Option<&Value>) -> CelOutcome {
        if self.deep {
            return stack::on_large_stack(|| self.evaluate_here(new, old)).unwrap_or_else(|| {
                CelOutcome {
                    errors: vec![FieldError::new(
                        ErrorType::Internal,
                        "",
                        BadValue::Omit,
                        "evaluating the validation rules failed",
                    )],
                    warnings: Vec::new(),
                }
            });
        }
        self.evaluate_here(new, old)
    }

    fn evaluate_here(&self, new: &Value, old: Option<&Value>) -> CelOutcome {
        let mut run = walk::Run::new();
        run.resource(&self.rules, &self.schema, new, old);
        CelOutcome {
            errors: run.outcome.errors,
            warnings: run.outcome.warnings,
        }
    }
}
