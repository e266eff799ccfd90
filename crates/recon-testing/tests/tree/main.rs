//! recon-core's reconciler tree, tested with this crate's tables against the in-memory API server,
//! one module per reconciler or concern.

mod aggregate;
mod apply_manager;
mod async_steps;
mod cast;
mod child;
mod child_set;
mod controller;
mod default_drift;
mod finalizer;
mod flow;
mod outcomes;
mod status;
mod status_apply;
mod stub_manager;
mod support;
mod suppress_transient_errors;
mod sync;
mod task;
mod tracking;
mod yaml;
