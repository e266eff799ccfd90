//! The table harness itself: reconciler, sub-reconciler and admission tables in Rust and YAML,
//! generated suites, and the README's example (kept verbatim in the README).

mod additional_configs;
mod additional_reconciles;
mod admission_tables;
mod applied_givens;
mod conversion_tables;
mod determinism;
mod expectation_refs;
mod generated_cases;
mod hooks;
mod kube_controller;
mod mismatches;
mod outcomes;
mod rbac;
mod reactors;
mod readme_example;
mod readme_sync;
mod running;
mod server_fields;
mod snapshots;
mod sprocket;
mod stashed;
mod status_writes;
mod support;
mod tracks;
mod writes;
mod yaml_fixtures;
