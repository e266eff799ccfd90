//! What a node of a reconciler tree is: the [`SubReconciler`] trait, the watches a node
//! declares ([`Setup`]), the bound on the resource types a tree reconciles ([`Reconciled`]),
//! and [`SyncReconciler`], the node that runs your own code, with the [`AsyncStep`] bound its
//! `async fn` hooks meet.

mod async_step;
mod reconciled;
mod setup;
mod sub_reconciler;
mod sync;

pub use async_step::AsyncStep;
pub use reconciled::Reconciled;
pub use setup::{Setup, Trigger, Watch};
pub use sub_reconciler::{BoxSubReconciler, IntoBoxed, ReconcileFuture, SubReconciler};
pub use sync::SyncReconciler;
