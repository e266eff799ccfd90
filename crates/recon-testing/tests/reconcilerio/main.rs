//! reconciler.io's own test suite (`reconcilers/*_test.go` of reconcilerio/runtime), ported
//! case by case to recon tables: the specification operators ported from reconciler.io rely
//! on. Each module is one Go test file, each table one Go test function, and each case keeps
//! its Go name. A module's docs list the Go cases it leaves out and why: Go mechanics Rust
//! makes meaningless, and cases a listed difference (recon_core::guide::reconciler_io)
//! answers otherwise. A case recon answers differently for a reason not listed there is kept,
//! asserting reconciler.io's expectation, and skipped, with a `// differs:` comment saying what
//! recon does.
//!
//! The cases run against the in-memory API server with [`test_resource::TestResource`], the
//! port of reconciler.io's `TestResource`, and its sibling types.

mod advice;
mod aggregate;
mod always;
mod cast;
mod child;
mod child_set;
mod children_support;
mod errors;
mod finalizer;
mod flow;
mod resource;
mod sequence;
mod stash;
mod sync;
mod test_resource;
