//! Table-driven tests for recon reconcilers.
//!
//! This first release holds the comparison building block the harness is made of: JSON diffs
//! that read well in test output ([`diff`]). Request tables, YAML suites and snapshots build on
//! it (see the README's feature status).

pub mod diff;

pub use diff::{assert_json_eq, json_diff};
