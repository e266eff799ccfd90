//! The bulletin controller's tests: the whole controller until it settles, and under
//! perturbation exploration.

mod explore;
mod scenario;
mod settle;
