//! Field paths and sets of them as structured-merge-diff's `fieldpath` package has them: a
//! [`PathElement`] steps into a map field, a keyed list item, a set item or a list index; a
//! [`Path`] is a sequence of them; a [`FieldSet`] (`fieldpath.Set`) is what a manager owns,
//! read from and written to the `fieldsV1` JSON of `metadata.managedFields`.
//!
//! ```
//! use recon_apimachinery::fieldpath::{FieldSet, Path};
//! use recon_apimachinery::json;
//!
//! let fields = json!({"f:spec": {".": {}, "f:replicas": {}}});
//! let set = FieldSet::from_fields_v1(&fields).unwrap();
//! assert!(set.has(&Path::fields(&["spec", "replicas"]).0));
//! assert_eq!(set.to_fields_v1(), fields);
//! ```

mod fields_v1;
mod path;
mod set;

pub use fields_v1::FieldsV1;
pub use path::{Path, PathElement};
pub use set::FieldSet;
