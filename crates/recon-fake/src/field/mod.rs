//! Field paths and field validation errors, as k8s.io/apimachinery's
//! `pkg/util/validation/field` has them: [`Path`] (`field.Path`, printed
//! `spec.containers[0].name`) and [`FieldError`] (`field.Error`, printed
//! `metadata.name: Invalid value: "X": detail`), with the `StatusCause` each becomes.
//!
//! Built-in validation, CRD schema validation and CEL rules all report through these.

mod errors;
mod path;

pub(crate) use errors::{BadValue, ErrorType, FieldError, aggregate};
pub(crate) use path::Path;
