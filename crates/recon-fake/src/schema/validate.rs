//! The value validator: kube-openapi `validate.SchemaValidator` as apiextensions-apiserver runs
//! it on a custom resource (`validation.ValidateCustomResource`), with update ratcheting
//! (`RatchetingSchemaValidator`, feature `CRDValidationRatcheting`, on by default): errors found
//! in a part of the object that is unchanged from the stored one are dropped.
//!
//! Each node runs kube-openapi's validators in their order: type, schema props (`allOf`,
//! `anyOf`, `oneOf`, `not`), string, format, number, slice, enum, object. Errors become field
//! errors as `kubeOpenAPIResultToFieldErrors` turns them into a `field.ErrorList`, and an error
//! already reported is not reported again (`Result.AddErrors`). Sibling properties are visited
//! in name order (the real server walks a Go map, in no fixed order).
//!
//! Each check also counts what kube-openapi's `Result.MatchCount` counts: one per validator that
//! applies, what those count below them, and one per node. When no branch of an `anyOf` (or a
//! `oneOf`) validates, the errors reported are those of the branch that counted most, the first
//! of equals.

use std::collections::{HashSet, btree_map};

use recon_apimachinery::go_json::{Num, go_float};
use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use super::format::Format;
use super::model::{Additional, JsonType, ListType, Node, Pattern};
use super::number_checks::{self, MultipleOf};
use super::steps::Step;
use crate::field::{BadValue, ErrorType, FieldError};

/// A JSON value as `field.Error` prints it: strings quoted, numbers and booleans with `%v`,
/// anything else as JSON.
pub(crate) fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Number(n) => BadValue::Raw(Num::of(n).go()),
        other => BadValue::Raw(other.to_string()),
    }
}

/// Where the validator's errors are reported: `None` for the object (`ValidateCustomResource(nil,
/// ...)`), `Some("status")` for a status write (its schema is rooted at `.status`).
pub(crate) struct Validator<'a> {
    pub(crate) field_root: Option<&'a str>,
}

impl Validator<'_> {
    /// Validates `new` (and ratchets against `old` when given).
    ///
    /// One value at a time, whatever the depth: a list of the values (and branches) being
    /// checked, each with how far it got, instead of the call stack.
    pub(crate) fn run(&self, node: &Node, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut found = Vec::new();
        let mut path = String::new();
        let mut stack = vec![Check::new(node, new, old, 0, false)];
        let mut back = None;
        while let Some(top) = stack.last_mut() {
            path.truncate(top.at);
            if let Some(below) = self.advance(top, &mut path, back.take()) {
                stack.push(below);
                continue;
            }
            let Some(done) = stack.pop() else { break };
            if done.branch {
                back = Some(Back::Branch(done.errors, done.matches));
                continue;
            }
            // Ratcheting: an unchanged value keeps its errors to itself (as warnings, which
            // keep their count).
            let keep = done.errors.is_empty() || done.old != Some(done.new);
            let out = match stack.last_mut() {
                Some(parent) => &mut parent.errors,
                None => &mut found,
            };
            if keep {
                out.extend(done.errors);
            }
            back = Some(Back::Value(done.matches));
        }
        let mut seen = HashSet::with_capacity(found.len());
        found.retain(|error| seen.insert(error.clone()));
        found
    }

    /// Takes `c` as far as it goes without the check of another value: returns that check
    /// (an item, a property or a branch, its path written into `path`), or `None` when `c` is
    /// done. `back` is what the check `c` last asked for found.
    fn advance<'a>(
        &self,
        c: &mut Check<'a>,
        path: &mut String,
        back: Option<Back>,
    ) -> Option<Check<'a>> {
        let (node, new) = (c.node, c.new);
        let mut branch = match back {
            Some(Back::Branch(errors, count)) => Some((errors, count)),
            Some(Back::Value(count)) => {
                c.matches += count;
                None
            }
            None => None,
        };
        loop {
            match &mut c.stage {
                Stage::Start => {
                    if new.is_null() {
                        // Only the type and enum validators see a null, and only the type
                        // counts it.
                        let refused = !node.types.is_empty() && !node.nullable;
                        if refused {
                            c.errors
                                .push(self.type_invalid(path, "null", &type_names(node)));
                        }
                        self.check_enum(node, path, new, &mut c.errors);
                        c.matches = usize::from(!refused);
                        return None;
                    }
                    // One for the node; each validator that applies counts one more, and what
                    // it counts.
                    c.matches = 1;
                    if !node.types.is_empty() || !node.format.is_empty() {
                        let before = c.errors.len();
                        self.check_type(node, path, new, &type_names(node), &mut c.errors);
                        c.matches += 1 + usize::from(c.errors.len() == before);
                    }
                    // `schemaPropsValidator` counts one, and one more, and the branches it
                    // keeps.
                    c.matches += 2;
                    c.stage = Stage::AnyOf {
                        next: 0,
                        best: None,
                    };
                }
                Stage::AnyOf { next, best } => {
                    if let Some((errors, count)) = branch.take() {
                        if errors.is_empty() {
                            c.matches += count;
                            c.stage = Stage::one_of();
                            continue;
                        }
                        keep_best(best, errors, count);
                        *next += 1;
                    }
                    if let Some(schema) = node.any_of.get(*next) {
                        return Some(Check::new(schema, new, None, c.at, true));
                    }
                    if !node.any_of.is_empty() {
                        c.errors.push(self.plain(format!(
                            "{} must validate at least one schema (anyOf)",
                            go_quote(path)
                        )));
                        if let Some((errors, count)) = best.take() {
                            c.errors.extend(errors);
                            c.matches += count;
                        }
                    }
                    c.stage = Stage::one_of();
                }
                Stage::OneOf {
                    next,
                    best,
                    first_success,
                    validated,
                } => {
                    if let Some((errors, count)) = branch.take() {
                        if errors.is_empty() {
                            *validated += 1;
                            first_success.get_or_insert(count);
                        } else {
                            keep_best(best, errors, count);
                        }
                        *next += 1;
                    }
                    if let Some(schema) = node.one_of.get(*next) {
                        return Some(Check::new(schema, new, None, c.at, true));
                    }
                    if *validated == 1 {
                        c.matches += first_success.unwrap_or(0);
                    } else if !node.one_of.is_empty() {
                        let found = if *validated == 0 {
                            "Found none valid".to_owned()
                        } else {
                            format!("Found {validated} valid alternatives")
                        };
                        c.errors.push(self.plain(format!(
                            "{} must validate one and only one schema (oneOf). {found}",
                            go_quote(path)
                        )));
                        // With valid branches, kube-openapi keeps no failures to report.
                        if let Some((errors, count)) = best.take().filter(|_| *validated == 0) {
                            c.errors.extend(errors);
                            c.matches += count;
                        }
                    }
                    c.stage = Stage::AllOf {
                        next: 0,
                        validated: 0,
                    };
                }
                Stage::AllOf { next, validated } => {
                    if let Some((errors, count)) = branch.take() {
                        *validated += usize::from(errors.is_empty());
                        c.errors.extend(errors);
                        c.matches += count;
                        *next += 1;
                    }
                    if let Some(schema) = node.all_of.get(*next) {
                        return Some(Check::new(schema, new, None, c.at, true));
                    }
                    if *validated != node.all_of.len() {
                        let none = if *validated == 0 {
                            ". None validated"
                        } else {
                            ""
                        };
                        c.errors.push(self.plain(format!(
                            "{} must validate all the schemas (allOf){none}",
                            go_quote(path)
                        )));
                    }
                    c.stage = Stage::Not;
                }
                Stage::Not => {
                    match (branch.take(), node.not.as_deref()) {
                        (Some((errors, _)), _) => {
                            if errors.is_empty() {
                                c.errors.push(self.plain(format!(
                                    "{} must not validate the schema (not)",
                                    go_quote(path)
                                )));
                            }
                        }
                        (None, Some(schema)) => {
                            return Some(Check::new(schema, new, None, c.at, true));
                        }
                        (None, None) => {}
                    }
                    c.stage = Stage::Kind;
                }
                Stage::Kind => {
                    if let Value::String(s) = new {
                        self.check_string(node, path, s, &mut c.errors);
                        c.matches += 1;
                        if Format::is_string_format(&node.format) {
                            c.matches += 1;
                            if !Format::validates(&node.format, s) {
                                c.errors.push(FieldError::new(
                                    ErrorType::TypeInvalid,
                                    self.field(path),
                                    BadValue::Str(s.clone()),
                                    format!(
                                        "{path} in body must be of type {}: {}",
                                        node.format,
                                        go_quote(s)
                                    ),
                                ));
                            }
                        }
                    }
                    if let Value::Number(n) = new {
                        self.check_number(node, path, Num::of(n), &mut c.errors);
                        c.matches += 2;
                    }
                    match new {
                        // `schemaSliceValidator`: the items, then minItems and maxItems.
                        Value::Array(_) => {
                            c.matches += 2;
                            c.stage = Stage::Items { next: 0 };
                        }
                        // The enum, then `objectValidator`: property counts, forbidden or
                        // additional properties, properties, required.
                        Value::Object(map) => {
                            self.check_enum(node, path, new, &mut c.errors);
                            c.matches += 2;
                            self.check_count(
                                path,
                                map.len(),
                                (node.min_properties, node.max_properties),
                                "properties",
                                &mut c.errors,
                            );
                            c.stage = match &node.additional_properties {
                                Some(Additional::Allows(false)) => {
                                    for key in
                                        map.keys().filter(|k| !node.properties.contains_key(*k))
                                    {
                                        c.errors.push(self.invalid(
                                            path,
                                            BadValue::Str(key.clone()),
                                            format!("{path}.{key} in body is a forbidden property"),
                                        ));
                                    }
                                    Stage::Properties(node.properties.iter())
                                }
                                Some(Additional::Schema(schema)) => {
                                    Stage::Additional(schema, map.iter())
                                }
                                _ => Stage::Properties(node.properties.iter()),
                            };
                        }
                        _ => {
                            self.check_enum(node, path, new, &mut c.errors);
                            c.matches += 1;
                            return None;
                        }
                    }
                }
                Stage::Items { next } => {
                    let items = new.as_array().map(Vec::as_slice).unwrap_or_default();
                    if let (Some(schema), Some(item)) = (node.items.as_deref(), items.get(*next)) {
                        let old_items = c.old.and_then(Value::as_array);
                        let old = old_items.and_then(|o| correlate(node, item, o));
                        Step::Index(*next).below(path, c.at);
                        *next += 1;
                        return Some(Check::new(schema, item, old, path.len(), false));
                    }
                    self.check_count(
                        path,
                        items.len(),
                        (node.min_items, node.max_items),
                        "items",
                        &mut c.errors,
                    );
                    self.check_enum(node, path, new, &mut c.errors);
                    c.matches += 1;
                    return None;
                }
                Stage::Additional(schema, members) => {
                    if let Some((key, value)) =
                        members.find(|(k, _)| !node.properties.contains_key(*k))
                    {
                        let old = c.old.and_then(Value::as_object).and_then(|o| o.get(key));
                        Step::Member(key).below(path, c.at);
                        return Some(Check::new(schema, value, old, path.len(), false));
                    }
                    c.stage = Stage::Properties(node.properties.iter());
                }
                Stage::Properties(properties) => {
                    let map = new.as_object()?;
                    if let Some((name, schema, value)) =
                        properties.find_map(|(name, schema)| Some((name, schema, map.get(name)?)))
                    {
                        // `kind` and `apiVersion` of the resource are never ratcheted.
                        let resource_type =
                            c.at == 0 && matches!(name.as_str(), "kind" | "apiVersion");
                        let old = c.old.and_then(Value::as_object).filter(|_| !resource_type);
                        let old = old.and_then(|o| o.get(name));
                        Step::Field(name).below(path, c.at);
                        return Some(Check::new(schema, value, old, path.len(), false));
                    }
                    for name in &node.required {
                        if !map.contains_key(name) {
                            c.errors.push(FieldError::new(
                                ErrorType::Required,
                                self.field(&format!("{path}.{name}")),
                                BadValue::Omit,
                                "",
                            ));
                        }
                    }
                    return None;
                }
            }
        }
    }

    /// `errPath`: the validator's name for the value, under the field root.
    fn field(&self, name: &str) -> String {
        let name = name.strip_prefix('.').unwrap_or(name);
        match (self.field_root, name) {
            (None, "") => "<nil>".to_owned(),
            (Some(root), "") => root.to_owned(),
            (None, n) => n.to_owned(),
            (Some(root), n) => format!("{root}.{n}"),
        }
    }

    /// A plain (non-`Validation`) error: `field.Invalid(fldPath, "", err.Error())`.
    fn plain(&self, message: String) -> FieldError {
        FieldError::new(
            ErrorType::Invalid,
            self.field_root.unwrap_or("<nil>"),
            BadValue::Str(String::new()),
            message,
        )
    }

    fn invalid(&self, path: &str, value: BadValue, message: String) -> FieldError {
        FieldError::new(ErrorType::Invalid, self.field(path), value, message)
    }

    fn type_invalid(&self, path: &str, value: &str, expected: &str) -> FieldError {
        FieldError::new(
            ErrorType::TypeInvalid,
            self.field(path),
            BadValue::Str(value.to_owned()),
            format!(
                "{path} in body must be of type {expected}: {}",
                go_quote(value)
            ),
        )
    }

    /// `typeValidator`.
    fn check_type(
        &self,
        node: &Node,
        path: &str,
        new: &Value,
        type_names: &str,
        out: &mut Vec<FieldError>,
    ) {
        if node.types.is_empty() && node.format.is_empty() {
            return;
        }
        let (data_type, data_format, float) = match new {
            Value::Bool(_) => ("boolean", "", None),
            Value::String(_) => ("string", "", None),
            Value::Number(n) => match Num::of(n) {
                Num::Int(_) => ("integer", "int64", None),
                Num::Float(f) => ("number", "float64", Some(f)),
            },
            Value::Array(_) => ("array", "", None),
            _ => ("object", "", None),
        };
        let has = |t: JsonType| node.types.contains(&t);
        let contains = node.types.iter().any(|t| t.name() == data_type);
        let float_int = float.is_some_and(number_checks::is_json_integer) && has(JsonType::Integer);
        let int_float = data_type == "integer" && has(JsonType::Number);
        let stringish = matches!(new, Value::String(_) | Value::Array(_));
        let format_matches = contains || data_format == node.format || float_int || int_float;
        if !(stringish || node.format.is_empty() || format_matches) {
            out.push(self.type_invalid(path, data_format, &node.format));
            return;
        }
        let numeric = has(JsonType::Number) || has(JsonType::Integer);
        if stringish && !(numeric || node.format.is_empty()) {
            return;
        }
        if !(contains || float_int || int_float) {
            out.push(self.type_invalid(path, data_type, type_names));
        }
    }

    /// `stringValidator`: the first failing check only.
    fn check_string(&self, node: &Node, path: &str, s: &str, out: &mut Vec<FieldError>) {
        let chars = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
        if let Some(max) = node.max_length
            && chars > max
        {
            // `field.TooLong(errPath, "", max)`: the real server says bytes, counts characters.
            out.push(FieldError::too_long(self.field(path), max));
            return;
        }
        if let Some(min) = node.min_length
            && chars < min
        {
            out.push(self.invalid(
                path,
                BadValue::Str(s.to_owned()),
                format!("{path} in body should be at least {min} chars long"),
            ));
            return;
        }
        match &node.pattern {
            Some(Pattern::Compiled { source, re }) if !re.is_match(s) => {
                out.push(self.invalid(
                    path,
                    BadValue::Str(s.to_owned()),
                    format!("{path} in body should match '{source}'"),
                ));
            }
            Some(Pattern::Invalid { source, error }) => out.push(self.invalid(
                path,
                BadValue::Str(s.to_owned()),
                format!("{path} in body should match '{source}, but pattern is invalid: {error}'"),
            )),
            _ => {}
        }
    }

    /// `numberValidator`: the range of the type, then multipleOf, minimum, maximum.
    fn check_number(&self, node: &Node, path: &str, val: Num, out: &mut Vec<FieldError>) {
        let (type_name, format) = match node.types.as_slice() {
            [JsonType::Integer] => (
                "integer",
                if matches!(node.format.as_str(), "int32" | "int64") {
                    node.format.as_str()
                } else {
                    ""
                },
            ),
            [JsonType::Number] => (
                "number",
                if matches!(node.format.as_str(), "float" | "double") {
                    node.format.as_str()
                } else {
                    ""
                },
            ),
            _ => ("", ""),
        };
        if let Some(e) = number_checks::range_error(val, type_name, format, "Checked", path) {
            out.push(self.plain(e));
        }
        let data = bad_value(&Value::from(match val {
            Num::Int(i) => recon_apimachinery::json::Number::from(i),
            Num::Float(f) => recon_apimachinery::json::Number::from_f64(f)
                .unwrap_or_else(|| recon_apimachinery::json::Number::from(0)),
        }));
        let bound_fits =
            |bound: f64, prefix: &str, out: &mut Vec<FieldError>| match number_checks::range_error(
                Num::Float(bound),
                type_name,
                format,
                prefix,
                path,
            ) {
                Some(e) => {
                    out.push(self.plain(e));
                    false
                }
                None => true,
            };
        if let Some(factor) = node.multiple_of {
            let failed = if bound_fits(factor, "MultipleOf", out) {
                number_checks::multiple_of_error(val, factor)
            } else {
                number_checks::multiple_of_float(val.as_f64(), factor)
            };
            match failed {
                Some(MultipleOf::Not(f)) => out.push(self.invalid(
                    path,
                    data.clone(),
                    format!("{path} in body should be a multiple of {f}"),
                )),
                Some(MultipleOf::NotPositive(f)) => out.push(self.invalid(
                    path,
                    BadValue::Raw(f.clone()),
                    format!("factor MultipleOf declared for {path} must be positive: {f}"),
                )),
                None => {}
            }
        }
        if let Some(min) = node.minimum {
            let native = bound_fits(min, "Minimum boundary", out);
            let excl = node.exclusive_minimum;
            let failed = match val {
                Num::Int(i) if native => {
                    let m = number_checks::truncate(min);
                    (i < m || (excl && i == m)).then(|| m.to_string())
                }
                _ => {
                    let d = val.as_f64();
                    (d < min || (excl && d <= min)).then(|| go_float(min))
                }
            };
            if let Some(m) = failed {
                let rel = if excl {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                out.push(self.invalid(
                    path,
                    data.clone(),
                    format!("{path} in body should be {rel} {m}"),
                ));
            }
        }
        if let Some(max) = node.maximum {
            let native = bound_fits(max, "Maximum boundary", out);
            let excl = node.exclusive_maximum;
            let failed = match val {
                Num::Int(i) if native => {
                    let m = number_checks::truncate(max);
                    (i > m || (excl && i == m)).then(|| m.to_string())
                }
                _ => {
                    let d = val.as_f64();
                    (d > max || (excl && d >= max)).then(|| go_float(max))
                }
            };
            if let Some(m) = failed {
                let rel = if excl {
                    "less than"
                } else {
                    "less than or equal to"
                };
                out.push(self.invalid(path, data, format!("{path} in body should be {rel} {m}")));
            }
        }
    }

    /// `minItems` / `maxItems` and `minProperties` / `maxProperties`: the same two checks
    /// (the maximum reads "items" for both, as the real server words it).
    fn check_count(
        &self,
        path: &str,
        count: usize,
        (min, max): (Option<i64>, Option<i64>),
        noun: &str,
        out: &mut Vec<FieldError>,
    ) {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        if let Some(min) = min
            && count < min
        {
            out.push(self.invalid(
                path,
                BadValue::Raw(count.to_string()),
                format!("{path} in body should have at least {min} {noun}"),
            ));
        }
        if let Some(max) = max
            && count > max
        {
            out.push(FieldError::too_many(self.field(path), count, max));
        }
    }

    /// `basicCommonValidator`: `enum`.
    fn check_enum(&self, node: &Node, path: &str, new: &Value, out: &mut Vec<FieldError>) {
        let Some(values) = node.enumeration.as_ref().filter(|v| !v.is_empty()) else {
            return;
        };
        if values.iter().any(|e| enum_matches(new, e)) {
            return;
        }
        let supported: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&other.to_string()),
            })
            .collect();
        out.push(FieldError::new(
            ErrorType::NotSupported,
            self.field(path),
            bad_value(new),
            format!("supported values: {}", supported.join(", ")),
        ));
    }
}

/// One value being checked against one schema (`SchemaValidator.Validate`): a value of the
/// object (under `RatchetingSchemaValidator`), or a branch of `allOf`, `anyOf`, `oneOf` or
/// `not` checking the same value again.
struct Check<'a> {
    node: &'a Node,
    new: &'a Value,
    old: Option<&'a Value>,
    /// The length of the path buffer at this value.
    at: usize,
    /// A branch: what it found goes back to the schema that has it, not ratcheted.
    branch: bool,
    /// What it found so far: a value's errors are ratcheted together, a branch's weighed.
    errors: Vec<FieldError>,
    /// Its `MatchCount` so far.
    matches: usize,
    /// How far it got.
    stage: Stage<'a>,
}

impl<'a> Check<'a> {
    fn new(
        node: &'a Node,
        new: &'a Value,
        old: Option<&'a Value>,
        at: usize,
        branch: bool,
    ) -> Check<'a> {
        Check {
            node,
            new,
            old,
            at,
            branch,
            errors: Vec::new(),
            matches: 0,
            stage: Stage::Start,
        }
    }
}

/// What a check does next, in kube-openapi's order: the type, the schema props (`anyOf`,
/// `oneOf`, `allOf`, then `not`, each branch validating the same value without ratcheting),
/// then the checks of the value's kind and the values below it.
///
/// A branch is validated without ratcheting, below it too: kube-openapi builds the branch
/// validators without the ratcheting options (`SchemaValidatorOptions.Options()` is empty).
/// Seen on kube-apiserver 1.36.2: an update that kept a property a new `oneOf` branch
/// refuses was refused as a create is.
enum Stage<'a> {
    Start,
    /// The `anyOf` branch to check next, and the failing one that counted most so far.
    AnyOf {
        next: usize,
        best: Option<(Vec<FieldError>, usize)>,
    },
    OneOf {
        next: usize,
        best: Option<(Vec<FieldError>, usize)>,
        first_success: Option<usize>,
        validated: usize,
    },
    AllOf {
        next: usize,
        validated: usize,
    },
    Not,
    /// String, format and number checks; then what an array or object checks.
    Kind,
    /// The item to check next.
    Items {
        next: usize,
    },
    /// The schema of `additionalProperties` and the members left that it checks, ...
    Additional(&'a Node, recon_apimachinery::json::map::Iter<'a>),
    /// ... then the properties left, then `required`.
    Properties(btree_map::Iter<'a, String, Node>),
}

impl Stage<'_> {
    fn one_of() -> Self {
        Stage::OneOf {
            next: 0,
            best: None,
            first_success: None,
            validated: 0,
        }
    }
}

/// What the check a check asked for found.
enum Back {
    /// A value below: its `MatchCount` (its errors are in the asking check's list already).
    Value(usize),
    /// A branch: its errors and its `MatchCount`.
    Branch(Vec<FieldError>, usize),
}

/// Keeps the failing branch that counted most, the first of equals: what an `anyOf` or `oneOf`
/// no branch of which validates reports.
fn keep_best(best: &mut Option<(Vec<FieldError>, usize)>, errors: Vec<FieldError>, count: usize) {
    if best.as_ref().is_none_or(|(_, most)| count > *most) {
        *best = Some((errors, count));
    }
}

/// The types of a node, as the type validator names them.
fn type_names(node: &Node) -> String {
    node.types
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// The stored item an item of a new list corresponds to, for ratcheting: by key in a
/// `map` list, by value in a `set`; items of atomic lists correspond to nothing.
fn correlate<'o>(node: &Node, item: &Value, old: &'o [Value]) -> Option<&'o Value> {
    match node.list_type.as_ref()? {
        ListType::Set => old.iter().find(|o| *o == item),
        ListType::Map(keys) => {
            let key_of = |v: &Value| -> Vec<Option<Value>> {
                keys.iter().map(|k| v.get(k).cloned()).collect()
            };
            let wanted = key_of(item);
            old.iter().find(|o| key_of(o) == wanted)
        }
        ListType::Atomic => None,
    }
}

/// Whether a value equals an enum member, after Go's conversion of the value to the member's
/// type (an integer member truncates a float value; numbers compare across int and float).
fn enum_matches(value: &Value, member: &Value) -> bool {
    match (value, member) {
        (Value::Number(v), Value::Number(m)) => match (Num::of(v), Num::of(m)) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Int(b)) => number_checks::truncate(a) == b,
            (a, Num::Float(b)) => a.as_f64() == b,
        },
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use recon_apimachinery::json;

    use super::*;

    fn errors(schema: Value, new: Value, old: Option<Value>) -> Vec<String> {
        let node = Node::parse(&json!({"type": "object", "properties": {"spec": schema}}));
        let (new, old) = (json!({"spec": new}), old.map(|o| json!({"spec": o})));
        Validator { field_root: None }
            .run(&node, &new, old.as_ref())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_failed_any_of_reports_the_branch_that_matched_most_and_the_first_of_equals() {
        // The second branch checks a property more than the first, so it counts more.
        let schema = json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}},
            "anyOf": [{"required": ["c"]}, {"properties": {"a": {"minimum": 5}, "b": {}}}]});
        assert_eq!(
            errors(schema.clone(), json!({"a": 1, "b": 2}), None),
            [
                r#"<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)"#,
                "spec.a: Invalid value: 1: spec.a in body should be greater than or equal to 5",
            ]
        );
        // Equal counts: the first branch's errors.
        let equal = json!({"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 0}]});
        assert_eq!(
            errors(equal, json!(3), None),
            [
                r#"<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)"#,
                "spec: Invalid value: 3: spec in body should be greater than or equal to 5",
            ]
        );
    }

    #[test]
    fn nothing_ratchets_inside_a_branch() {
        let schema = json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}},
            "oneOf": [{"properties": {"a": {"maximum": 0}}}, {"required": ["z"]}]});
        // No branch validates; the first, which checks `a`, counted most.
        let refused = [
            r#"<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid"#,
            "spec.a: Invalid value: 1: spec.a in body should be less than or equal to 0",
        ];
        assert_eq!(errors(schema.clone(), json!({"a": 1}), None), refused);
        // An update keeping `a` is refused the same way (kube-apiserver 1.36.2 did so).
        assert_eq!(
            errors(
                schema.clone(),
                json!({"a": 1, "b": 2}),
                Some(json!({"a": 1}))
            ),
            refused
        );
        // The whole value unchanged ratchets, as any value does (kube-apiserver accepted a label
        // change beside it).
        assert_eq!(
            errors(schema, json!({"a": 1}), Some(json!({"a": 1}))),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_error_two_branches_report_is_reported_once() {
        let schema = json!({"type": "string", "allOf": [{"maxLength": 2}, {"maxLength": 2}]});
        assert_eq!(
            errors(schema, json!("abc"), None),
            [
                "spec: Too long: may not be more than 2 bytes",
                r#"<nil>: Invalid value: "": "spec" must validate all the schemas (allOf). None validated"#,
            ]
        );
    }
}
