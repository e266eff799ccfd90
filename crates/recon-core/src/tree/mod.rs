//! What a node of a reconciler tree is: the [`SubReconciler`] trait, the watches a node
//! declares ([`Setup`]), the bound on the resource types a tree reconciles ([`Reconciled`]),
//! [`SyncReconciler`], the node that runs your own code, with the [`AsyncStep`] bound its
//! `async fn` hooks meet, and [`IntoSteps`], a tuple of nodes as a list of steps.

mod async_step;
mod into_steps;
mod reconciled;
mod setup;
mod sub_reconciler;
mod sync;

pub use async_step::AsyncStep;
pub use into_steps::IntoSteps;
pub use reconciled::Reconciled;
pub use setup::{Setup, Trigger, Watch};
pub use sub_reconciler::{BoxSubReconciler, IntoBoxed, ReconcileFuture, SubReconciler};
pub use sync::SyncReconciler;
