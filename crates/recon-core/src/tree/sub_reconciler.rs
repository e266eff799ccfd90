//! The trait every node of a reconciler tree implements.

use futures::future::BoxFuture;

use super::setup::Setup;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;

/// The future a sub-reconciler or async hook returns.
pub type ReconcileFuture<'a> = BoxFuture<'a, Result<Outcome, Error>>;

/// One step of a reconcile: it reads and mutates the in-memory resource (its status above all)
/// and may talk to the API through the context's config. Writing the resource's status is the
/// root's job, done once per reconcile.
pub trait SubReconciler<R>: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &str;

    /// Reconciles `resource`.
    fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a>;

    /// Declares what the controller must watch for this step (the kinds it owns or tracks).
    /// Steps that hold other steps declare theirs too. None by default.
    fn setup(&self, _setup: &mut Setup) {}
}

impl<R, S: SubReconciler<R> + ?Sized> SubReconciler<R> for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        (**self).reconcile(ctx, resource)
    }

    fn setup(&self, setup: &mut Setup) {
        (**self).setup(setup);
    }
}

/// A shared sub-reconciler, for state kept across reconciles (as
/// [`SuppressTransientErrors`](crate::SuppressTransientErrors) keeps) that more than one owner
/// must see.
impl<R, S: SubReconciler<R> + ?Sized> SubReconciler<R> for std::sync::Arc<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        (**self).reconcile(ctx, resource)
    }

    fn setup(&self, setup: &mut Setup) {
        (**self).setup(setup);
    }
}

/// A type-erased sub-reconciler.
pub type BoxSubReconciler<R> = Box<dyn SubReconciler<R>>;

/// `.boxed()` for any sub-reconciler, to put different kinds in one [`Sequence`](crate::Sequence).
pub trait IntoBoxed<R>: SubReconciler<R> + Sized + 'static {
    /// This sub-reconciler, boxed.
    fn boxed(self) -> BoxSubReconciler<R> {
        Box::new(self)
    }
}

impl<R, S: SubReconciler<R> + 'static> IntoBoxed<R> for S {}
