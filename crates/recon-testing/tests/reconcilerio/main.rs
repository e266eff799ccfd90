//! reconciler.io's own test suite (`reconcilers/*_test.go` of reconcilerio/runtime), ported
//! case by case to recon tables: the specification operators ported from reconciler.io rely
//! on. Each module is one Go test file; each case keeps its Go name. A case recon answers
//! differently is not here but listed, with why, in the README's "Differences from
//! reconciler.io".
//!
//! The cases run against the in-memory API server with [`test_resource::TestResource`], the
//! port of reconciler.io's `TestResource`.

mod child;
mod child_set;
mod children_support;
mod flow;
// Shared with the other ports; not every type is used by every port.
#[allow(dead_code)]
mod test_resource;
