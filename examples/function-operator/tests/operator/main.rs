//! The Function operator's tests: tables, YAML suites, the CRD manifest, and a real Controller.

mod common;
mod controller;
mod explore;
mod manifests;
mod suites;
mod tables;
