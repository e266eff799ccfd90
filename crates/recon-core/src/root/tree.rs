//! What every root of a reconciler tree holds.

use crate::context::Config;
use crate::tree::{BoxSubReconciler, Reconciled, SubReconciler};

/// A root's name for logs, the configuration its sub-reconcilers read, the resource type it
/// reconciles and the tree it runs. [`ResourceReconciler`](super::ResourceReconciler),
/// [`AggregateReconciler`](super::AggregateReconciler) and the admission webhook adapter each
/// hold one beside what is their own.
pub(crate) struct Tree<R: Reconciled> {
    pub(crate) name: String,
    pub(crate) config: Config,
    pub(crate) dyntype: R::DynamicType,
    pub(crate) reconciler: BoxSubReconciler<R>,
}

impl<R: Reconciled> Tree<R> {
    /// A tree running `reconciler`, named `<Kind><root>` as reconciler.io names its roots.
    pub(crate) fn new(
        root: &str,
        config: Config,
        dyntype: R::DynamicType,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        Tree {
            name: format!("{}{root}", R::kind(&dyntype)),
            config,
            dyntype,
            reconciler: BoxSubReconciler::new(reconciler),
        }
    }
}
