//! The error policy of a kube-rs controller: what `Controller::run` calls when `reconcile`
//! fails, to decide when the object is reconciled again.

use std::sync::Arc;

use kube::runtime::controller::Action;

/// An error policy, as `Controller::run` takes it: every `Fn(Arc<K>, &E, Arc<C>) -> Action`
/// is one. [`NoErrorPolicy`] stands for none (what [`kube_reconcile`](crate::kube_reconcile)
/// runs with).
pub trait ErrorPolicy<K, E, C> {
    /// Whether this policy decides a requeue; when it does, a case compares its `result` after
    /// an error too.
    const DECIDES: bool;

    /// The requeue after `error` about `object`, as `Controller::run` would act on it; `None`
    /// when no policy decides one.
    fn on_error(&self, object: Arc<K>, error: &E, context: Arc<C>) -> Option<Action>;
}

impl<K, E, C, P> ErrorPolicy<K, E, C> for P
where
    P: Fn(Arc<K>, &E, Arc<C>) -> Action,
{
    const DECIDES: bool = true;

    fn on_error(&self, object: Arc<K>, error: &E, context: Arc<C>) -> Option<Action> {
        Some(self(object, error, context))
    }
}

/// No error policy: a case that fails expects only its error, not what follows it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoErrorPolicy;

impl<K, E, C> ErrorPolicy<K, E, C> for NoErrorPolicy {
    const DECIDES: bool = false;

    fn on_error(&self, _object: Arc<K>, _error: &E, _context: Arc<C>) -> Option<Action> {
        None
    }
}
