//! The table harness itself: reconciler, sub-reconciler and admission tables in Rust and YAML,
//! generated suites, and the README's example (kept verbatim in the README).

mod admission_tables;
mod applied_givens;
mod conversion_tables;
mod expectation_refs;
mod generated_cases;
mod kube_controller;
mod rbac;
mod readme_example;
mod readme_sync;
mod reconciler_tables;
mod widget;
mod yaml_fixtures;
