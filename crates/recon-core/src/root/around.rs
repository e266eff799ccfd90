//! The hooks both roots run around their tree, kept boxed: `before_reconcile` (the context
//! alone) and `after_reconcile` (the context and the tree's result).

use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{AsyncStep, AsyncStep0, IntoOutcome, ReconcileFuture, boxed_outcome};

pub(super) type BeforeHook = Box<dyn for<'a> Fn(&'a Context) -> ReconcileFuture<'a> + Send + Sync>;

pub(super) type AfterHook =
    Box<dyn for<'a> Fn(&'a Context, Result<Outcome, Error>) -> ReconcileFuture<'a> + Send + Sync>;

/// Boxes a `before_reconcile` hook, its `()` or [`Outcome`] as an outcome.
pub(super) fn before_hook<T, F>(hook: F) -> BeforeHook
where
    T: IntoOutcome + 'static,
    F: for<'a> AsyncStep0<'a, T> + 'static,
{
    Box::new(move |ctx| boxed_outcome(hook(ctx)))
}

/// Boxes an `after_reconcile` hook.
pub(super) fn after_hook<F>(hook: F) -> AfterHook
where
    F: for<'a> AsyncStep<'a, Result<Outcome, Error>, Outcome> + 'static,
{
    Box::new(move |ctx, result| Box::pin(hook(ctx, result)))
}
