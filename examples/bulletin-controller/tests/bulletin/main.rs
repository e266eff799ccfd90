//! The bulletin controller's tests: `reconcile` in tables, the whole controller until it
//! settles, and under perturbation exploration.

mod explore;
mod scenario;
mod settle;
mod tables;
