//! The one hook style: an `async fn` or an async closure, with its future named so that it can
//! be required `Send`, the library boxing it once. [`AsyncStep`] (the context and one more
//! argument), [`AsyncStep0`] (the context alone) and [`AsyncStep2`] (the context and two more)
//! are the bounds; [`IntoOutcome`] lets a hook return `()` or an [`Outcome`].

use std::future::Future;
use std::marker::PhantomData;

use super::sub_reconciler::ReconcileFuture;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;

/// What a hook returns on success where an [`Outcome`] is expected: `()` (nothing more to do,
/// [`Outcome::done`]) or the [`Outcome`] itself, so that one hook method takes both.
///
/// A hook that only fails leaves its success type open; name it, as in
/// `async |_, _| Err::<(), _>(Error::msg("not yet"))`.
pub trait IntoOutcome: Send {
    /// The outcome this value stands for.
    fn into_outcome(self) -> Outcome;
}

impl IntoOutcome for () {
    fn into_outcome(self) -> Outcome {
        Outcome::done()
    }
}

impl IntoOutcome for Outcome {
    fn into_outcome(self) -> Outcome {
        self
    }
}

// One trait per number of arguments: the compiler infers an async closure's parameter types
// only from an `AsyncFn` bound of a known arity, so the arity cannot be a type parameter.
macro_rules! async_step {
    ($(#[$doc:meta])* $name:ident<$($arg:ident),*>) => {
        $(#[$doc])*
        pub trait $name<'a, $($arg,)* T>:
            Fn(&'a Context $(, $arg)*) -> Self::Future
            + AsyncFn(&'a Context $(, $arg)*) -> Result<T, Error>
            + Send
            + Sync
        {
            /// The future a call returns, borrowing the context (and any borrowed argument)
            /// for `'a`.
            type Future: Future<Output = Result<T, Error>> + Send + 'a;
        }

        impl<'a, $($arg,)* T, F, Fut> $name<'a, $($arg,)* T> for F
        where
            F: Fn(&'a Context $(, $arg)*) -> Fut
                + AsyncFn(&'a Context $(, $arg)*) -> Result<T, Error>
                + Send
                + Sync,
            Fut: Future<Output = Result<T, Error>> + Send + 'a,
        {
            type Future = Fut;
        }
    };
}

async_step! {
    /// A hook of the context and one more argument `A`, for one lifetime `'a` of the borrows:
    /// every hook method of the library takes `F: for<'a> AsyncStep<'a, A, T>` (with `A` such
    /// as `&'a mut R`, the resource), a hook that works for every borrow, returning a `Send`
    /// future of `Result<T, Error>` that the library boxes once. [`AsyncStep0`] and
    /// [`AsyncStep2`] are the same bound for hooks of the context alone and of two more
    /// arguments.
    ///
    /// You never implement it: every `Send + Sync` function or closure fitting that shape has
    /// it. What fits:
    ///
    /// * an `async fn name(ctx: &Context, resource: &mut R) -> Result<T, Error>` item, free or
    ///   associated, generic or not;
    /// * an async closure, `async |ctx, resource| { .. }`, whose future borrows nothing from
    ///   the closure: one that captures nothing (constants, statics and
    ///   [`Stasher`](crate::Stasher)s are not captures). The parameter types are inferred.
    ///
    /// State a hook needs comes in as an argument rather than a capture:
    /// [`SyncReconciler::sync_with`](crate::SyncReconciler::sync_with) and
    /// [`finalize_with`](crate::SyncReconciler::finalize_with) keep the state and lend it to
    /// each call, `async |ctx, state, resource| { .. }`.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Context, Error, SyncReconciler};
    ///
    /// async fn count_keys(_ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
    ///     let keys = cm.data.as_ref().map_or(0, |d| d.len());
    ///     cm.metadata.annotations.get_or_insert_default().insert("keys".into(), keys.to_string());
    ///     Ok(())
    /// }
    ///
    /// let from_item = SyncReconciler::<ConfigMap>::new("CountKeys").sync(count_keys);
    /// let from_closure = SyncReconciler::<ConfigMap>::new("Label").sync(async |_ctx, cm| {
    ///     cm.metadata.labels.get_or_insert_default().insert("seen".into(), "true".into());
    ///     Ok(())
    /// });
    /// let with_state = SyncReconciler::<ConfigMap>::new("Label")
    ///     .sync_with(String::from("seen"), async |_ctx, label, cm| {
    ///         cm.metadata.labels.get_or_insert_default().insert(label.clone(), "true".into());
    ///         Ok(())
    ///     });
    /// # let _ = (from_item, from_closure, with_state);
    /// ```
    ///
    /// What does not fit, with the compiler's reason:
    ///
    /// * An async closure owning captured state, even a `u32`: "async closure does not
    ///   implement `Fn` because it captures state from its environment". Its future borrows
    ///   the closure, which only `AsyncFn` can express, and `AsyncFn` cannot name its future
    ///   to require `Send` on stable Rust (that takes return-type notation). Pass the state as
    ///   an argument instead, as above.
    ///
    ///   ```compile_fail
    ///   # use k8s_openapi::api::core::v1::ConfigMap;
    ///   # use recon_core::SyncReconciler;
    ///   let label = String::from("seen");
    ///   SyncReconciler::<ConfigMap>::new("Label").sync(async move |_ctx, cm| {
    ///       cm.metadata.labels.get_or_insert_default().insert(label.clone(), "true".into());
    ///       Ok(())
    ///   });
    ///   ```
    /// * A plain closure returning an async block, `|ctx, cm| async move { .. }`: "lifetime
    ///   may not live long enough", as a closure's return type cannot depend on the lifetimes
    ///   of its arguments (the parameter types cannot be inferred either).
    ///
    ///   ```compile_fail
    ///   # use k8s_openapi::api::core::v1::ConfigMap;
    ///   # use recon_core::{Context, Error, SyncReconciler};
    ///   SyncReconciler::<ConfigMap>::new("Label").sync(|_ctx: &Context, cm: &mut ConfigMap| async move {
    ///       cm.metadata.labels.get_or_insert_default().insert("seen".into(), "true".into());
    ///       Ok::<(), Error>(())
    ///   });
    ///   ```
    /// * A future that is not `Send`, such as one holding a `std::sync::MutexGuard` across an
    ///   `.await`: "future cannot be sent between threads safely".
    ///
    ///   ```compile_fail
    ///   # use std::sync::Mutex;
    ///   # use k8s_openapi::api::core::v1::ConfigMap;
    ///   # use recon_core::{Context, Error, SyncReconciler};
    ///   static SEEN: Mutex<u32> = Mutex::new(0);
    ///
    ///   async fn count(_ctx: &Context, _cm: &mut ConfigMap) -> Result<(), Error> {
    ///       let mut seen = SEEN.lock().unwrap();
    ///       std::future::ready(()).await;
    ///       *seen += 1;
    ///       Ok(())
    ///   }
    ///
    ///   SyncReconciler::<ConfigMap>::new("Count").sync(count);
    ///   ```
    ///
    /// The `AsyncFn` supertrait adds nothing an implementor must provide (every such `Fn` has
    /// it); it is what lets the compiler infer an async closure's parameter types from the
    /// bound.
    AsyncStep<A>
}

async_step! {
    /// A hook of the context alone, such as
    /// [`ResourceReconciler::before_reconcile`](crate::ResourceReconciler::before_reconcile)'s:
    /// [`AsyncStep`] with no argument after the context.
    AsyncStep0<>
}

async_step! {
    /// A hook of the context and two more arguments, such as [`Advice::after`](crate::Advice::after)'s
    /// (the resource and the result so far) or a stateful hook of
    /// [`SyncReconciler::sync_with`](crate::SyncReconciler::sync_with) (the state and the
    /// resource): [`AsyncStep`] with one more argument.
    AsyncStep2<A, B>
}

/// A hook of the context and the resource, boxed: what the library keeps of a hook given as an
/// [`AsyncStep`] (with or without state), returning its [`Outcome`].
pub(crate) type ResourceHook<R> = Box<dyn ErasedHook<R>>;

pub(crate) trait ErasedHook<R>: Send + Sync {
    fn call<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a>;
}

struct Stateless<F, T>(F, PhantomData<fn() -> T>);

impl<R, T, F> ErasedHook<R> for Stateless<F, T>
where
    T: IntoOutcome,
    F: for<'a> AsyncStep<'a, &'a mut R, T>,
{
    fn call<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        boxed_outcome((self.0)(ctx, resource))
    }
}

struct Stateful<S, F, T>(S, F, PhantomData<fn() -> T>);

impl<R, S, T, F> ErasedHook<R> for Stateful<S, F, T>
where
    S: Send + Sync,
    T: IntoOutcome,
    F: for<'a> AsyncStep2<'a, &'a S, &'a mut R, T>,
{
    fn call<'a>(&'a self, ctx: &'a Context, resource: &'a mut R) -> ReconcileFuture<'a> {
        boxed_outcome((self.1)(ctx, &self.0, resource))
    }
}

/// Boxes a hook of the context and the resource.
/// A hook's future, boxed once, its `()` or [`Outcome`] read as an outcome.
pub(crate) fn boxed_outcome<'a, T: IntoOutcome>(
    done: impl Future<Output = Result<T, Error>> + Send + 'a,
) -> ReconcileFuture<'a> {
    Box::pin(async move { done.await.map(IntoOutcome::into_outcome) })
}

pub(crate) fn resource_hook<R, T, F>(hook: F) -> ResourceHook<R>
where
    R: 'static,
    T: IntoOutcome + 'static,
    F: for<'a> AsyncStep<'a, &'a mut R, T> + 'static,
{
    Box::new(Stateless(hook, PhantomData))
}

/// Boxes a hook of the context, `state` and the resource.
pub(crate) fn stateful_hook<R, S, T, F>(state: S, hook: F) -> ResourceHook<R>
where
    R: 'static,
    S: Send + Sync + 'static,
    T: IntoOutcome + 'static,
    F: for<'a> AsyncStep2<'a, &'a S, &'a mut R, T> + 'static,
{
    Box::new(Stateful(state, hook, PhantomData))
}
