//! Custom resource validation against the structural OpenAPI v3 schema of the CRD version
//! served, as apiextensions-apiserver's custom resource strategy runs it on every write:
//!
//! - [`model`]: the schema, read from `openAPIV3Schema`;
//! - [`validate`]: kube-openapi's value validator (types, nullable, enum, bounds, lengths,
//!   patterns, formats, item and property counts, required, additional properties), with
//!   update ratcheting;
//! - [`format`]: the string formats a CRD keeps and how they are checked;
//! - [`number`]: JSON numbers as Go decodes and prints them;
//! - [`embedded`]: `x-kubernetes-embedded-resource` objects;
//! - [`list_type`]: `x-kubernetes-list-type` `set` and `map` invariants.
//!
//! Pruning, defaulting and CEL (`x-kubernetes-validations`) are not modelled yet. Where they
//! change what validation sees it is accounted for here: fields the schema does not know are not
//! errors (the real server prunes them first, so they also do not count for `maxProperties`),
//! a null where the schema does not allow one is treated as absent (the real server drops it or
//! applies the default), and a required field with a `default` is not reported missing.

mod cel;
mod embedded;
mod format;
mod list_type;
mod model;
mod number;
mod validate;

use serde_json::Value;

use super::field_error::FieldError;
use super::object::Object;
use model::Node;
use validate::Validator;

/// The validation schema of one served version of a custom resource.
#[derive(Debug, Clone)]
pub(crate) struct CustomResourceSchema {
    /// The schema as the CRD gives it (two schemas are equal when their sources are).
    source: Value,
    root: Node,
}

impl PartialEq for CustomResourceSchema {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl CustomResourceSchema {
    /// Reads a version's `schema.openAPIV3Schema`.
    pub(crate) fn from_openapi_v3(schema: &Value) -> Self {
        CustomResourceSchema {
            source: schema.clone(),
            root: Node::parse(schema),
        }
    }

    /// `customResourceStrategy.Validate`'s schema part: the value validator, embedded
    /// resources, list invariants.
    pub(crate) fn validate_create(&self, obj: &Object) -> Vec<FieldError> {
        let value = Value::Object(obj.clone());
        let mut errors = self.resource_validator().run(&self.root, &value, None);
        errors.extend(embedded::validate(&self.root, obj));
        errors.extend(list_type::validate(&self.root, obj));
        errors
    }

    /// `customResourceStrategy.ValidateUpdate`'s schema part: as on create, with ratcheting
    /// against the stored object, and list invariants only when the stored object kept them.
    pub(crate) fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let (new_value, old_value) = (Value::Object(new.clone()), Value::Object(old.clone()));
        let mut errors = self
            .resource_validator()
            .run(&self.root, &new_value, Some(&old_value));
        errors.extend(embedded::validate(&self.root, new));
        errors.extend(self.list_types_ratcheted(new, old));
        errors
    }

    /// `statusStrategy.ValidateUpdate`'s schema part: `.status` against the status schema (its
    /// messages name paths from `.status`, its fields are under `status`), ratcheted, then the
    /// whole object's list invariants.
    pub(crate) fn validate_status_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let (Some(status), Some(schema)) = (
            new.get("status").filter(|s| !s.is_null()),
            self.root.properties.get("status"),
        ) {
            let validator = Validator {
                field_root: Some("status"),
                resource_root: false,
            };
            errors.extend(validator.run(schema, status, old.get("status")));
        }
        errors.extend(self.list_types_ratcheted(new, old));
        errors
    }

    fn resource_validator(&self) -> Validator<'static> {
        Validator {
            field_root: None,
            resource_root: true,
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
    use serde_json::json;

    use super::super::field_error::aggregate;
    use super::*;

    fn schema(v: Value) -> CustomResourceSchema {
        CustomResourceSchema::from_openapi_v3(&v)
    }

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    fn spec_schema(spec: Value) -> CustomResourceSchema {
        schema(json!({"type": "object", "properties": {"spec": spec}}))
    }

    #[test]
    fn the_resource_root_keeps_type_and_object_meta_out_of_property_counts() {
        let s = schema(json!({"type": "object", "maxProperties": 1,
            "properties": {"spec": {"type": "object"}}}));
        let o = obj(json!({"apiVersion": "a/v1", "kind": "K", "metadata": {},
            "spec": {}, "unknown": 1}));
        assert_eq!(
            aggregate(&s.validate_create(&o)),
            "<nil>: Too many: 4: must have at most 1 items"
        );
    }

    #[test]
    fn a_nullable_field_takes_null_and_a_non_nullable_null_is_absent() {
        let s = spec_schema(
            json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "nullable": true}, "b": {"type": "string"}}}),
        );
        let errors = s.validate_create(&obj(json!({"spec": {"a": null, "b": null}})));
        assert_eq!(aggregate(&errors), "spec.b: Required value");
    }

    #[test]
    fn a_null_never_matches_an_enum_even_when_nullable() {
        // Confirmed against kube-apiserver 1.36: `spec.ne: Unsupported value: null: ...`.
        let s = spec_schema(json!({"type": "object", "properties": {
            "ne": {"type": "string", "nullable": true, "enum": ["a"]}}}));
        assert_eq!(
            aggregate(&s.validate_create(&obj(json!({"spec": {"ne": null}})))),
            r#"spec.ne: Unsupported value: null: supported values: "a""#
        );
    }

    #[test]
    fn a_required_field_with_a_default_is_left_to_defaulting() {
        let s = spec_schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer", "default": 1}}}));
        assert!(s.validate_create(&obj(json!({"spec": {}}))).is_empty());
    }

    #[test]
    fn an_enum_member_that_is_an_integer_truncates_a_float_value() {
        let s = spec_schema(json!({"type": "object", "properties": {
            "n": {"type": "number", "enum": [2]}}}));
        assert!(
            s.validate_create(&obj(json!({"spec": {"n": 2.5}})))
                .is_empty()
        );
        assert_eq!(
            aggregate(&s.validate_create(&obj(json!({"spec": {"n": 3.5}})))),
            r#"spec.n: Unsupported value: 3.5: supported values: "2""#
        );
    }

    #[test]
    fn float_bounds_print_as_go_does() {
        let s = spec_schema(json!({"type": "object", "properties": {
            "n": {"type": "number", "maximum": 1.5, "multipleOf": 0.5}}}));
        assert_eq!(
            aggregate(&s.validate_create(&obj(json!({"spec": {"n": 1.75}})))),
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
        assert!(s.validate_update(&new, &old).is_empty());
        let changed = obj(json!({"spec": {"ports": [{"name": "a", "port": 98}]}}));
        assert_eq!(
            aggregate(&s.validate_update(&changed, &old)),
            "spec.ports[0].port: Invalid value: 98: spec.ports[0].port in body should be less than or equal to 10"
        );
    }

    #[test]
    fn list_invariants_are_not_checked_on_update_when_the_stored_object_broke_them() {
        let s = spec_schema(json!({"type": "object", "properties": {"s": {
            "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}));
        let old = obj(json!({"spec": {"s": ["a", "a"]}}));
        let new = obj(json!({"spec": {"s": ["b", "b"]}}));
        assert!(s.validate_update(&new, &old).is_empty());
        assert_eq!(
            aggregate(&s.validate_create(&new)),
            r#"spec.s[1]: Duplicate value: "b""#
        );
    }

    #[test]
    fn an_embedded_kind_must_be_a_dns_label_in_lowercase() {
        let s = spec_schema(
            json!({"type": "object", "properties": {"t": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
        );
        let errors = s.validate_create(&obj(
            json!({"spec": {"t": {"apiVersion": "a/b/c", "kind": "My_Kind"}}}),
        ));
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
