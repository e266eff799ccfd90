//! The reconciler tree against the in-memory API server, without the table harness (its tables
//! are tested in `recon-testing`, which depends on this crate).

mod admission_adapter;
mod child_schema_defaults;
mod child_set_known_children;
mod controller_watches;
mod patch_status;
mod seed_lessons;
