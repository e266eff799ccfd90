//! Objects a reconciler keeps as it wants them: one child ([`ChildReconciler`]) or a set of
//! them ([`ChildSetReconciler`]), the child handling both share, and the [`ObjectManager`]s that
//! create, update or delete a managed object ([`UpdatingObjectManager`]) or apply it
//! ([`ApplyObjectManager`]), which the aggregate root uses too.

mod apply_object_manager;
mod child;
mod child_set;
mod handling;
mod object_manager;
mod updating_object_manager;

pub use apply_object_manager::ApplyObjectManager;
pub use child::ChildReconciler;
pub use child_set::{ChildSetError, ChildSetItem, ChildSetReconciler, ChildSetResult};
pub use handling::{ChildListOptions, OnlyReconcileChildStatus, OwnerReferenceError};
pub(crate) use object_manager::BoxedManager;
pub use object_manager::{ObjectManager, Parent};
pub use updating_object_manager::UpdatingObjectManager;
