//! What a node of a reconciler tree is: the [`SubReconciler`] trait, the watches a node
//! declares ([`Setup`]), the bound on the resource types a tree reconciles ([`Reconciled`]),
//! [`SyncReconciler`], the node that runs your own code, with the [`AsyncStep`] bounds every
//! `async fn` hook meets, and [`IntoSteps`], a tuple of nodes as a list of steps.

mod async_step;
mod into_steps;
mod reconciled;
mod setup;
mod sub_reconciler;
mod sync;

pub(crate) use async_step::ResourceHook;
pub use async_step::{AsyncStep, AsyncStep0, AsyncStep2, IntoOutcome};
pub(crate) use async_step::{boxed_outcome, resource_hook};
pub use into_steps::IntoSteps;
pub use reconciled::Reconciled;
pub use setup::{Setup, Trigger, Watch};
pub use sub_reconciler::{BoxSubReconciler, IntoBoxed, ReconcileFuture, SubReconciler};
pub use sync::SyncReconciler;
