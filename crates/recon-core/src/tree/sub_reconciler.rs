//! The trait every node of a reconciler tree implements, and its boxed form.

use std::future::Future;

use futures::future::BoxFuture;

use super::setup::Setup;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;

/// A boxed future of a sub-reconcile or a hook, as the library keeps them.
pub type ReconcileFuture<'a> = BoxFuture<'a, Result<Outcome, Error>>;

/// One step of a reconcile: it reads and mutates the in-memory resource (its status above all)
/// and may talk to the API through the context's config. Writing the resource's status is the
/// root's job, done once per reconcile.
///
/// Implement `reconcile` with an `async fn`; a [`BoxSubReconciler`] (what
/// [`IntoBoxed::boxed`] makes, and what the combinators hold) boxes its future once per call.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Context, Error, IntoBoxed, Outcome, Sequence, SubReconciler};
///
/// /// Labels a config map with a fixed value.
/// struct Label(&'static str);
///
/// impl SubReconciler<ConfigMap> for Label {
///     fn name(&self) -> &str {
///         "Label"
///     }
///
///     async fn reconcile(&self, _ctx: &Context, cm: &mut ConfigMap) -> Result<Outcome, Error> {
///         cm.metadata.labels.get_or_insert_default().insert("team".into(), self.0.into());
///         Ok(Outcome::done())
///     }
/// }
///
/// let steps = Sequence::new([Label("platform").boxed()]);
/// # let _ = steps;
/// ```
pub trait SubReconciler<R>: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &str;

    /// Reconciles `resource`.
    fn reconcile(
        &self,
        ctx: &Context,
        resource: &mut R,
    ) -> impl Future<Output = Result<Outcome, Error>> + Send;

    /// Declares what the controller must watch for this step (the kinds it owns or tracks).
    /// Steps that hold other steps declare theirs too. None by default.
    fn setup(&self, _setup: &mut Setup) {}
}

impl<R, S: SubReconciler<R>> SubReconciler<R> for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn reconcile(
        &self,
        ctx: &Context,
        resource: &mut R,
    ) -> impl Future<Output = Result<Outcome, Error>> + Send {
        (**self).reconcile(ctx, resource)
    }

    fn setup(&self, setup: &mut Setup) {
        (**self).setup(setup);
    }
}

/// A shared sub-reconciler, for state kept across reconciles (as
/// [`SuppressTransientErrors`](crate::SuppressTransientErrors) keeps) that more than one owner
/// must see.
impl<R, S: SubReconciler<R>> SubReconciler<R> for std::sync::Arc<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn reconcile(
        &self,
        ctx: &Context,
        resource: &mut R,
    ) -> impl Future<Output = Result<Outcome, Error>> + Send {
        (**self).reconcile(ctx, resource)
    }

    fn setup(&self, setup: &mut Setup) {
        (**self).setup(setup);
    }
}

/// A [`SubReconciler`] with its future boxed, so that a [`BoxSubReconciler`] can hold any.
trait ErasedSubReconciler<R>: Send + Sync {
    fn name(&self) -> &str;
    fn reconcile_boxed<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a>;
    fn setup(&self, setup: &mut Setup);
}

impl<R, S: SubReconciler<R>> ErasedSubReconciler<R> for S {
    fn name(&self) -> &str {
        SubReconciler::name(self)
    }

    fn reconcile_boxed<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        Box::pin(self.reconcile(ctx, resource))
    }

    fn setup(&self, setup: &mut Setup) {
        SubReconciler::setup(self, setup);
    }
}

/// A type-erased sub-reconciler, to put different kinds in one
/// [`Sequence`](crate::Sequence) or hold one in a combinator; made by [`IntoBoxed::boxed`] or
/// [`BoxSubReconciler::new`].
pub struct BoxSubReconciler<R>(Box<dyn ErasedSubReconciler<R>>);

impl<R> BoxSubReconciler<R> {
    /// `reconciler`, boxed.
    pub fn new(reconciler: impl SubReconciler<R> + 'static) -> Self {
        BoxSubReconciler(Box::new(reconciler))
    }

    /// Reconciles `resource` with the boxed sub-reconciler ([`SubReconciler::reconcile`],
    /// callable without the trait in scope).
    pub fn reconcile<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        self.0.reconcile_boxed(ctx, resource)
    }
}

impl<R> std::fmt::Debug for BoxSubReconciler<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxSubReconciler")
            .field(&self.0.name())
            .finish()
    }
}

impl<R: Send> SubReconciler<R> for BoxSubReconciler<R> {
    fn name(&self) -> &str {
        self.0.name()
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        BoxSubReconciler::reconcile(self, ctx, resource).await
    }

    fn setup(&self, setup: &mut Setup) {
        self.0.setup(setup);
    }
}

/// `.boxed()` for any sub-reconciler, to put different kinds in one [`Sequence`](crate::Sequence).
pub trait IntoBoxed<R>: SubReconciler<R> + Sized + 'static {
    /// This sub-reconciler, boxed.
    fn boxed(self) -> BoxSubReconciler<R> {
        BoxSubReconciler::new(self)
    }
}

impl<R, S: SubReconciler<R> + 'static> IntoBoxed<R> for S {}
