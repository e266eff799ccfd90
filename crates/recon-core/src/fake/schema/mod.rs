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
