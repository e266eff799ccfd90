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

use std::collections::HashSet;

use recon_apimachinery::go_json::{Num, go_float};
use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};

use super::format::Format;
use super::model::{Additional, JsonType, ListType, Node, Pattern};
use super::number_checks::{self, MultipleOf};
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
    pub(crate) fn run(&self, node: &Node, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut found = Vec::new();
        self.node(node, "", new, old, &mut found);
        let mut seen = HashSet::with_capacity(found.len());
        found.retain(|error| seen.insert(error.clone()));
        found
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

    /// Validates one value (`SchemaValidator.Validate` under `RatchetingSchemaValidator`);
    /// returns its `MatchCount`.
    fn node(
        &self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        out: &mut Vec<FieldError>,
    ) -> usize {
        let mut errors = Vec::new();
        let matches = self.check(node, path, new, old, &mut errors);
        // Ratcheting: an unchanged value keeps its errors to itself (as warnings, which keep
        // their count).
        if errors.is_empty() || old != Some(new) {
            out.extend(errors);
        }
        matches
    }

    /// Every validator of `node` on `new`; returns the `MatchCount`.
    fn check(
        &self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        out: &mut Vec<FieldError>,
    ) -> usize {
        let type_names = || {
            node.types
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(",")
        };
        if new.is_null() {
            // Only the type and enum validators see a null, and only the type counts it.
            let refused = !node.types.is_empty() && !node.nullable;
            if refused {
                out.push(self.type_invalid(path, "null", &type_names()));
            }
            self.check_enum(node, path, new, out);
            return usize::from(!refused);
        }
        // One for the node; each validator that applies counts one more, and what it counts.
        let mut matches = 1;
        if !node.types.is_empty() || !node.format.is_empty() {
            let before = out.len();
            self.check_type(node, path, new, &type_names(), out);
            matches += 1 + usize::from(out.len() == before);
        }
        matches += 1 + self.check_schema_props(node, path, new, out);
        if let Value::String(s) = new {
            self.check_string(node, path, s, out);
            matches += 1;
            if Format::is_string_format(&node.format) {
                matches += 1;
                if !Format::validates(&node.format, s) {
                    out.push(FieldError::new(
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
            self.check_number(node, path, Num::of(n), out);
            matches += 2;
        }
        if let Value::Array(items) = new {
            matches += 2 + self.check_array(node, path, items, old, out);
        }
        self.check_enum(node, path, new, out);
        matches += 1;
        if let Value::Object(map) = new {
            matches += 1 + self.check_object(node, path, map, old, out);
        }
        matches
    }

    /// `schemaPropsValidator`: `anyOf`, `oneOf`, `allOf`, then `not`, each branch validating
    /// the same value. Returns the count of the branches it keeps, and one.
    ///
    /// A branch is validated without ratcheting, below it too: kube-openapi builds the branch
    /// validators without the ratcheting options (`SchemaValidatorOptions.Options()` is empty).
    /// Seen on kube-apiserver 1.36.2: an update that kept a property a new `oneOf` branch
    /// refuses was refused as a create is.
    fn check_schema_props(
        &self,
        node: &Node,
        path: &str,
        new: &Value,
        out: &mut Vec<FieldError>,
    ) -> usize {
        let mut matches = 1;
        if node.any_of.is_empty()
            && node.one_of.is_empty()
            && node.all_of.is_empty()
            && node.not.is_none()
        {
            return matches;
        }
        let branch = |schema: &Node| {
            let mut errors = Vec::new();
            let matches = self.check(schema, path, new, None, &mut errors);
            (errors, matches)
        };
        let quoted = go_quote(path);
        // The failing branch that counted most, the first of equals: what an `anyOf` or
        // `oneOf` no branch of which validates reports.
        let keep_best = |best: &mut Option<(Vec<FieldError>, usize)>, errors, count| {
            if best.as_ref().is_none_or(|(_, most)| count > *most) {
                *best = Some((errors, count));
            }
        };
        if !node.any_of.is_empty() {
            let mut best = None;
            let mut success = None;
            for schema in &node.any_of {
                let (errors, count) = branch(schema);
                if errors.is_empty() {
                    success = Some(count);
                    break;
                }
                keep_best(&mut best, errors, count);
            }
            match success {
                Some(count) => matches += count,
                None => {
                    out.push(self.plain(format!(
                        "{quoted} must validate at least one schema (anyOf)"
                    )));
                    if let Some((errors, count)) = best {
                        out.extend(errors);
                        matches += count;
                    }
                }
            }
        }
        if !node.one_of.is_empty() {
            let mut best = None;
            let mut first_success = None;
            let mut validated = 0;
            for schema in &node.one_of {
                let (errors, count) = branch(schema);
                if errors.is_empty() {
                    validated += 1;
                    first_success.get_or_insert(count);
                } else {
                    keep_best(&mut best, errors, count);
                }
            }
            if validated == 1 {
                matches += first_success.unwrap_or(0);
            } else {
                let found = if validated == 0 {
                    "Found none valid".to_owned()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                out.push(self.plain(format!(
                    "{quoted} must validate one and only one schema (oneOf). {found}"
                )));
                // With valid branches, kube-openapi keeps no failures to report.
                if let Some((errors, count)) = best.filter(|_| validated == 0) {
                    out.extend(errors);
                    matches += count;
                }
            }
        }
        if !node.all_of.is_empty() {
            let mut validated = 0;
            for schema in &node.all_of {
                let (errors, count) = branch(schema);
                validated += usize::from(errors.is_empty());
                out.extend(errors);
                matches += count;
            }
            if validated != node.all_of.len() {
                let none = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                out.push(self.plain(format!(
                    "{quoted} must validate all the schemas (allOf){none}"
                )));
            }
        }
        if let Some(schema) = &node.not
            && branch(schema).0.is_empty()
        {
            out.push(self.plain(format!("{quoted} must not validate the schema (not)")));
        }
        matches
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

    /// `schemaSliceValidator`: the items, then minItems and maxItems; returns what the items
    /// count.
    fn check_array(
        &self,
        node: &Node,
        path: &str,
        items: &[Value],
        old: Option<&Value>,
        out: &mut Vec<FieldError>,
    ) -> usize {
        let mut matches = 0;
        if let Some(item_schema) = &node.items {
            let old_items = old.and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                let old_item = old_items.and_then(|o| correlate(node, item, o));
                matches += self.node(item_schema, &format!("{path}[{i}]"), item, old_item, out);
            }
        }
        self.check_count(
            path,
            items.len(),
            (node.min_items, node.max_items),
            "items",
            out,
        );
        matches
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

    /// `objectValidator`: property counts, forbidden or additional properties, properties,
    /// required; returns what the properties count.
    fn check_object(
        &self,
        node: &Node,
        path: &str,
        map: &Map,
        old: Option<&Value>,
        out: &mut Vec<FieldError>,
    ) -> usize {
        let mut matches = 0;
        let present: Vec<&str> = map.keys().map(String::as_str).collect();
        self.check_count(
            path,
            present.len(),
            (node.min_properties, node.max_properties),
            "properties",
            out,
        );
        let old_map = old.and_then(Value::as_object);
        match &node.additional_properties {
            Some(Additional::Allows(false)) => {
                for key in present
                    .iter()
                    .filter(|k| !node.properties.contains_key(**k))
                {
                    out.push(self.invalid(
                        path,
                        BadValue::Str((*key).to_owned()),
                        format!("{path}.{key} in body is a forbidden property"),
                    ));
                }
            }
            Some(Additional::Schema(schema)) => {
                for key in present
                    .iter()
                    .filter(|k| !node.properties.contains_key(**k))
                {
                    let (Some(value), child_path) = (map.get(*key), format!("{path}.{key}")) else {
                        continue;
                    };
                    let old_value = old_map.and_then(|o| o.get(*key));
                    matches += self.node(schema, &child_path, value, old_value, out);
                }
            }
            _ => {}
        }
        for (name, schema) in &node.properties {
            if !present.contains(&name.as_str()) {
                continue;
            }
            let Some(value) = map.get(name) else { continue };
            let child_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            // `kind` and `apiVersion` of the resource are never ratcheted.
            let old_value = old_map
                .filter(|_| !(path.is_empty() && matches!(name.as_str(), "kind" | "apiVersion")))
                .and_then(|o| o.get(name));
            matches += self.node(schema, &child_path, value, old_value, out);
        }
        for name in &node.required {
            if !present.contains(&name.as_str()) {
                out.push(FieldError::new(
                    ErrorType::Required,
                    self.field(&format!("{path}.{name}")),
                    BadValue::Omit,
                    "",
                ));
            }
        }
        matches
    }
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
