//! Custom resources against the structural OpenAPI v3 schema of the CRD version served, as
//! apiextensions-apiserver handles them. Decoding a body (or a patched object) prunes unknown
//! fields, drops disallowed nulls, coerces embedded object metadata and applies defaults
//! ([`CustomResourceSchema::decode`]); the custom resource strategy then validates every write:
//!
//! - [`model`]: the schema, read from `openAPIV3Schema`;
//! - [`cel`]: `x-kubernetes-validations` rules, compiled when the CRD is written;
//! - [`structural`]: whether a CRD's schema is structural, checked when the CRD is written;
//! - [`prune`]: structural pruning;
//! - [`default`]: null handling and `default`;
//! - [`validate`]: kube-openapi's value validator (types, nullable, enum, bounds, lengths,
//!   patterns, formats, item and property counts, required, additional properties), with
//!   update ratcheting;
//! - [`format`](mod@format): the string formats a CRD keeps and how they are checked;
//! - [`number_checks`]: the numeric checks that depend on how Go decoded a number;
//! - [`embedded`]: `x-kubernetes-embedded-resource` objects;
//! - [`list_type`]: `x-kubernetes-list-type` `set` and `map` invariants;
//! - [`steps`]: the field paths the walks write into one buffer;
//!
//! Validation always sees a decoded object: pruned and defaulted.
//!
//! A schema may nest as deep as Go reads a CRD (about 5,000 objects), and a value as deep as
//! its schema: every walk over a schema, or over a value with its schema, keeps its own stack
//! of what is left to do (the trees drop themselves one node at a time too), so none takes a
//! frame per level of the caller's stack. Compiling CEL rules recurses, on a stack of its own.

pub(crate) use cel::{
    CelRules, Declarations, PolicyCompiler, RESERVED as CEL_RESERVED, Returns, SelectorError,
    device_selector_error, on_large_stack,
};

mod cel;
#[cfg(test)]
mod deep_tests;
mod default;
mod embedded;
mod format;
pub(crate) mod go_regexp;
mod list_type;
mod model;
mod number_checks;
mod prune;
mod steps;
pub(crate) mod structural;
mod validate;

use std::fmt;
use std::sync::Arc;

use model::Node;
use recon_apimachinery::json::Value;
use validate::Validator;

use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::object::Object;

/// The validation schema of one served version of a custom resource.
#[derive(Clone)]
pub(crate) struct CustomResourceSchema {
    /// The schema as the CRD gives it (two schemas are equal when their sources are).
    source: Value,
    /// Shared by copies: a schema may nest as deep as Go reads, and a tree copies itself by
    /// recursion.
    root: Arc<Node>,
    /// Whether any node has a `default` (most schemas have none: defaulting is skipped).
    defaults: bool,
    /// Whether any node is an `x-kubernetes-embedded-resource` (whose metadata decoding
    /// coerces; most schemas have none).
    embedded: bool,
    /// The `x-kubernetes-validations` rules, compiled (`None` without rules, or with rules the
    /// CRD's validation refuses, so never served).
    rules: Option<CelRules>,
}

/// What validating one write found: its errors, and the `Warning`s of rule failures that
/// ratcheting let through (a value the update left as it was).
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) errors: Vec<FieldError>,
    pub(crate) warnings: Vec<String>,
}

/// The source and what was read from it, without the trees read (which would print themselves
/// by recursion, at any depth).
impl fmt::Debug for CustomResourceSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomResourceSchema")
            .field("source", &self.source)
            .field("defaults", &self.defaults)
            .field("embedded", &self.embedded)
            .field("rules", &self.rules.is_some())
            .finish()
    }
}

impl PartialEq for CustomResourceSchema {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl CustomResourceSchema {
    /// Reads a version's `schema.openAPIV3Schema`.
    pub(crate) fn from_openapi_v3(schema: &Value) -> Self {
        let root = Arc::new(Node::parse(schema));
        CustomResourceSchema {
            source: schema.clone(),
            defaults: root.any(&|n| n.default.is_some()),
            embedded: root.any(&|n| n.embedded_resource),
            rules: CelRules::compile(schema).ok().flatten(),
            root,
        }
    }

    /// What the custom resource codec does to a decoded object of this version
    /// (`unstructuredSchemaCoercer.apply`, then `unstructuredDefaulter`): prunes fields the
    /// schema does not know, drops nulls it does not allow, coerces the `metadata` of embedded
    /// resources, then applies defaults. Returns the paths of the unknown fields dropped (for
    /// `fieldValidation`), sorted; `Err` is a coercion failure, a decoding error.
    ///
    /// The resource's own `metadata` is normalised by the caller, as for any type.
    pub(crate) fn decode(&self, obj: &mut Object) -> Result<Vec<String>, FieldError> {
        let mut unknown = prune::prune_resource(&self.root, obj);
        let mut value = Value::Object(std::mem::take(obj));
        default::drop_disallowed_nulls(Some(&self.root), &mut value);
        let mut embedded_unknown = Vec::new();
        let coerced = if self.embedded {
            embedded::coerce(&self.root, "", &mut value, &mut embedded_unknown)
        } else {
            Ok(())
        };
        if coerced.is_ok() && self.defaults {
            default::apply(&self.root, &mut value);
        }
        if let Value::Object(map) = value {
            *obj = map;
        }
        coerced?;
        embedded_unknown.sort();
        unknown.extend(embedded_unknown);
        Ok(unknown)
    }

    /// Drops the fields this schema does not know, and nothing else: what serving an object
    /// through this version does to one stored in another (no defaults).
    pub(crate) fn prune(&self, obj: &mut Object) {
        prune::prune_resource(&self.root, obj);
    }

    /// `customResourceStrategy.Validate`'s schema part: the value validator, embedded
    /// resources, list invariants, then the rules.
    pub(crate) fn validate_create(&self, obj: &Object) -> Verdict {
        let value = Value::Object(obj.clone());
        let mut errors = Validator { field_root: None }.run(&self.root, &value, None);
        errors.extend(embedded::validate(&self.root, obj));
        errors.extend(list_type::validate(&self.root, obj));
        self.with_rules(errors, &value, None)
    }

    /// `customResourceStrategy.ValidateUpdate`'s schema part: as on create, with ratcheting
    /// against the stored object, and list invariants only when the stored object kept them.
    pub(crate) fn validate_update(&self, new: &Object, old: &Object) -> Verdict {
        let (new_value, old_value) = (Value::Object(new.clone()), Value::Object(old.clone()));
        let mut errors =
            Validator { field_root: None }.run(&self.root, &new_value, Some(&old_value));
        errors.extend(embedded::validate(&self.root, new));
        errors.extend(self.list_types_ratcheted(new, old));
        self.with_rules(errors, &new_value, Some(&old_value))
    }

    /// `statusStrategy.ValidateUpdate`'s schema part: `.status` against the status schema (its
    /// messages name paths from `.status`, its fields are under `status`), ratcheted, then the
    /// whole object's list invariants and rules.
    pub(crate) fn validate_status_update(&self, new: &Object, old: &Object) -> Verdict {
        let mut errors = Vec::new();
        if let (Some(status), Some(schema)) = (
            new.get("status").filter(|s| !s.is_null()),
            self.root.properties.get("status"),
        ) {
            let validator = Validator {
                field_root: Some("status"),
            };
            errors.extend(validator.run(schema, status, old.get("status")));
        }
        errors.extend(self.list_types_ratcheted(new, old));
        if self.rules.is_none() {
            return Verdict {
                errors,
                warnings: Vec::new(),
            };
        }
        let (new_value, old_value) = (Value::Object(new.clone()), Value::Object(old.clone()));
        self.with_rules(errors, &new_value, Some(&old_value))
    }

    /// The strategies' last step when the schema has `x-kubernetes-validations`: the rules run
    /// only on an object without a blocking error (`hasBlockingErr`); otherwise one error says
    /// they did not.
    fn with_rules(&self, mut errors: Vec<FieldError>, new: &Value, old: Option<&Value>) -> Verdict {
        let Some(rules) = &self.rules else {
            return Verdict {
                errors,
                warnings: Vec::new(),
            };
        };
        if errors.iter().any(FieldError::blocks_rules) {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "<nil>",
                BadValue::Raw("null".to_owned()),
                "some validation rules were not checked because the object was invalid; \
                 correct the existing errors to complete validation",
            ));
            return Verdict {
                errors,
                warnings: Vec::new(),
            };
        }
        let outcome = rules.evaluate(new, old);
        errors.extend(outcome.errors);
        Verdict {
            errors,
            warnings: outcome.warnings,
        }
    }

    fn list_types_ratcheted(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        if list_type::validate(&self.root, old).is_empty() {
            list_type::validate(&self.root, new)
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::field::aggregate;

    fn schema(v: Value) -> CustomResourceSchema {
        CustomResourceSchema::from_openapi_v3(&v)
    }

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    fn spec_schema(spec: Value) -> CustomResourceSchema {
        schema(json!({"type": "object", "properties": {"spec": spec}}))
    }

    /// Decodes `v` as a request body is, then validates it as a create.
    fn create(s: &CustomResourceSchema, v: Value) -> (Object, Vec<FieldError>) {
        let mut o = obj(v);
        s.decode(&mut o).expect("decodes");
        let errors = s.validate_create(&o).errors;
        (o, errors)
    }

    #[test]
    fn property_counts_at_the_root_see_type_and_object_meta_but_not_pruned_fields() {
        let s = schema(json!({"type": "object", "maxProperties": 1,
            "properties": {"spec": {"type": "object"}}}));
        let (_, errors) = create(
            &s,
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {}, "spec": {}, "unknown": 1}),
        );
        assert_eq!(
            aggregate(&errors),
            "<nil>: Too many: 4: must have at most 1 item"
        );
    }

    #[test]
    fn a_nullable_field_takes_null_and_a_non_nullable_null_is_absent() {
        let s = spec_schema(
            json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "nullable": true}, "b": {"type": "string"}}}),
        );
        let (decoded, errors) = create(&s, json!({"spec": {"a": null, "b": null}}));
        assert_eq!(Value::Object(decoded), json!({"spec": {"a": null}}));
        assert_eq!(aggregate(&errors), "spec.b: Required value");
    }

    #[test]
    fn a_null_never_matches_an_enum_even_when_nullable() {
        // Confirmed against kube-apiserver 1.36: `spec.ne: Unsupported value: null: ...`.
        let s = spec_schema(json!({"type": "object", "properties": {
            "ne": {"type": "string", "nullable": true, "enum": ["a"]}}}));
        assert_eq!(
            aggregate(
                &s.validate_create(&obj(json!({"spec": {"ne": null}})))
                    .errors
            ),
            r#"spec.ne: Unsupported value: null: supported values: "a""#
        );
    }

    #[test]
    fn a_required_field_with_a_default_is_defaulted_before_validation() {
        let s = spec_schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer", "default": 1}}}));
        let (decoded, errors) = create(&s, json!({"spec": {}}));
        assert_eq!(Value::Object(decoded), json!({"spec": {"a": 1}}));
        assert!(errors.is_empty());
    }

    #[test]
    fn decoding_reports_pruned_fields_then_unknown_embedded_metadata() {
        let s = spec_schema(
            json!({"type": "object", "properties": {"t": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
        );
        let mut o = obj(
            json!({"zz": 1, "spec": {"bogus": 2, "t": {"apiVersion": "v1",
            "kind": "Pod", "metadata": {"name": "p", "bogus": 3}, "spec": {"kept": true}}}}),
        );
        assert_eq!(
            s.decode(&mut o).expect("decodes"),
            ["spec.bogus", "zz", "spec.t.metadata.bogus"]
        );
        assert_eq!(
            Value::Object(o),
            json!({"spec": {"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"kept": true}}}})
        );
    }

    #[test]
    fn an_embedded_kind_that_is_not_a_string_fails_decoding() {
        let s = spec_schema(
            json!({"type": "object", "properties": {"t": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
        );
        let mut o = obj(json!({"spec": {"t": {"apiVersion": "v1", "kind": 7}}}));
        assert_eq!(
            s.decode(&mut o).map_err(|e| e.to_string()),
            Err("spec.t.kind: Invalid value: 7: must be a string".to_owned())
        );
    }

    #[test]
    fn rules_are_skipped_after_a_blocking_error_and_one_error_says_so() {
        let s = spec_schema(json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "true"}],
            "properties": {"n": {"type": "integer", "maximum": 3}, "c": {"enum": ["a"]}}}));
        let (_, errors) = create(&s, json!({"spec": {"n": 4}}));
        assert_eq!(
            aggregate(&errors),
            "spec.n: Invalid value: 4: spec.n in body should be less than or equal to 3"
        );
        let (_, errors) = create(&s, json!({"spec": {"c": "b"}}));
        assert_eq!(
            aggregate(&errors),
            "[spec.c: Unsupported value: \"b\": supported values: \"a\", <nil>: Invalid value: null: \
             some validation rules were not checked because the object was invalid; correct the \
             existing errors to complete validation]"
        );
    }

    #[test]
    fn an_enum_member_that_is_an_integer_truncates_a_float_value() {
        let s = spec_schema(json!({"type": "object", "properties": {
            "n": {"type": "number", "enum": [2]}}}));
        assert!(
            s.validate_create(&obj(json!({"spec": {"n": 2.5}})))
                .errors
                .is_empty()
        );
        assert_eq!(
            aggregate(&s.validate_create(&obj(json!({"spec": {"n": 3.5}}))).errors),
            r#"spec.n: Unsupported value: 3.5: supported values: "2""#
        );
    }

    #[test]
    fn float_bounds_print_as_go_does() {
        let s = spec_schema(json!({"type": "object", "properties": {
            "n": {"type": "number", "maximum": 1.5, "multipleOf": 0.5}}}));
        assert_eq!(
            aggregate(&s.validate_create(&obj(json!({"spec": {"n": 1.75}}))).errors),
            "[spec.n: Invalid value: 1.75: spec.n in body should be a multiple of 0.5, \
             spec.n: Invalid value: 1.75: spec.n in body should be less than or equal to 1.5]"
        );
    }

    #[test]
    fn ratcheting_follows_map_list_items_by_key() {
        let s = spec_schema(json!({"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}}}}}}));
        let old = obj(json!({"spec": {"ports": [{"name": "a", "port": 99}]}}));
        // Reordered and extended, the stored item is still the same item.
        let new =
            obj(json!({"spec": {"ports": [{"name": "b", "port": 1}, {"name": "a", "port": 99}]}}));
        assert!(s.validate_update(&new, &old).errors.is_empty());
        let changed = obj(json!({"spec": {"ports": [{"name": "a", "port": 98}]}}));
        assert_eq!(
            aggregate(&s.validate_update(&changed, &old).errors),
            "spec.ports[0].port: Invalid value: 98: spec.ports[0].port in body should be less than or equal to 10"
        );
    }

    #[test]
    fn list_invariants_are_not_checked_on_update_when_the_stored_object_broke_them() {
        let s = spec_schema(json!({"type": "object", "properties": {"s": {
            "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}));
        let old = obj(json!({"spec": {"s": ["a", "a"]}}));
        let new = obj(json!({"spec": {"s": ["b", "b"]}}));
        assert!(s.validate_update(&new, &old).errors.is_empty());
        assert_eq!(
            aggregate(&s.validate_create(&new).errors),
            r#"spec.s[1]: Duplicate value: "b""#
        );
    }

    #[test]
    fn an_embedded_kind_must_be_a_dns_label_in_lowercase() {
        let s = spec_schema(
            json!({"type": "object", "properties": {"t": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
        );
        let errors = s
            .validate_create(&obj(
                json!({"spec": {"t": {"apiVersion": "a/b/c", "kind": "My_Kind"}}}),
            ))
            .errors;
        assert_eq!(
            aggregate(&errors),
            "[spec.t.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c, \
             spec.t.kind: Invalid value: \"My_Kind\": may have mixed case, but should otherwise match: \
             a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with \
             an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or \
             'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]"
        );
    }
}
