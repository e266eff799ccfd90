//! The Gateway operator's tests: tables, YAML suites, and a real Controller.

mod common;
mod controller;
mod explore;
mod suites;
mod tables;
