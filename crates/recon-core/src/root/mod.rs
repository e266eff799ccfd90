//! The roots of a reconciler tree. [`ResourceReconciler`] reads a resource, runs the tree and
//! writes the resource's status at most once, with a [`StatusStrategy`]; the controller glue
//! runs it under `kube::runtime::Controller`. [`AggregateReconciler`] keeps one object as other
//! state says it should be. [`patch_status()`] writes status for code outside a tree.

mod aggregate;
mod around;
mod controller;
mod patch_status;
mod resource;
mod status_apply;
mod status_strategy;
mod tree;

pub use aggregate::AggregateReconciler;
pub use controller::ReconcileFailed;
pub use patch_status::{patch_status, patch_status_locked};
pub use resource::ResourceReconciler;
pub use status_strategy::{ConflictPolicy, StatusStrategy};
pub(crate) use tree::Tree;
