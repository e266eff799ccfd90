//! The echo controller's `reconcile`, unchanged, in a recon-testing table and a YAML suite:
//! the same function `Controller::run` calls in `main.rs`; and the controller itself under
//! perturbation exploration.

mod explore;
mod rbac;
mod table;
