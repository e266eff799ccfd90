//! `AsyncStep`: an `async fn` or an async closure as a hook, with its future named so that it
//! can be required `Send`, leaving the boxing to the library.

use std::future::Future;

use crate::context::Context;
use crate::error::Error;

/// An async hook of the context and the resource, for one lifetime `'a` of both borrows. The
/// `*_fn` methods of [`SyncReconciler`](crate::SyncReconciler) take
/// `F: for<'a> AsyncStep<'a, R, T>`: a hook that works for every borrow, returning a `Send`
/// future of `Result<T, Error>` that the library boxes once.
///
/// You never implement it: every `Send + Sync` function or closure fitting that shape has it.
/// What fits:
///
/// * an `async fn name(ctx: &Context, resource: &mut R) -> Result<T, Error>` item, free or
///   associated, generic or not;
/// * an async closure, `async |ctx, resource| { .. }`, whose future borrows nothing from the
///   closure: one that captures nothing (constants, statics and [`Stasher`](crate::Stasher)s
///   are not captures), or only shared references living for `'static`. The parameter types are
///   inferred.
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
/// let from_item = SyncReconciler::<ConfigMap>::new("CountKeys").sync_fn(count_keys);
/// let from_closure = SyncReconciler::<ConfigMap>::new("Label").sync_fn(async |_ctx, cm| {
///     cm.metadata.labels.get_or_insert_default().insert("seen".into(), "true".into());
///     Ok(())
/// });
/// # let _ = (from_item, from_closure);
/// ```
///
/// What does not fit, with the compiler's reason; these keep the boxed form
/// ([`SyncReconciler::sync`](crate::SyncReconciler::sync) and its siblings):
///
/// * An async closure owning captured state, even a `u32`: "async closure does not implement
///   `Fn` because it captures state from its environment". Its future borrows the closure, which
///   only `AsyncFn` can express, and `AsyncFn` cannot name its future to require `Send` on
///   stable Rust (that takes return-type notation).
///
///   ```compile_fail
///   # use k8s_openapi::api::core::v1::ConfigMap;
///   # use recon_core::SyncReconciler;
///   let label = String::from("seen");
///   SyncReconciler::<ConfigMap>::new("Label").sync_fn(async move |_ctx, cm| {
///       cm.metadata.labels.get_or_insert_default().insert(label.clone(), "true".into());
///       Ok(())
///   });
///   ```
///
///   The boxed form does take it: `.sync(move |_ctx, cm| { let label = label.clone();
///   Box::pin(async move { .. }) })`.
/// * A plain closure returning an async block, `|ctx, cm| async move { .. }`: "lifetime may not
///   live long enough", as a closure's return type cannot depend on the lifetimes of its
///   arguments (the parameter types cannot be inferred either).
///
///   ```compile_fail
///   # use k8s_openapi::api::core::v1::ConfigMap;
///   # use recon_core::{Context, SyncReconciler};
///   SyncReconciler::<ConfigMap>::new("Label").sync_fn(|_ctx: &Context, cm: &mut ConfigMap| async move {
///       cm.metadata.labels.get_or_insert_default().insert("seen".into(), "true".into());
///       Ok(())
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
///   SyncReconciler::<ConfigMap>::new("Count").sync_fn(count);
///   ```
///
/// The `AsyncFn` supertrait adds nothing an implementor must provide (every such `Fn` has it);
/// it is what lets the compiler infer an async closure's parameter types from the bound.
pub trait AsyncStep<'a, R: 'a, T>:
    Fn(&'a Context, &'a mut R) -> Self::Future
    + AsyncFn(&'a Context, &'a mut R) -> Result<T, Error>
    + Send
    + Sync
{
    /// The future a call returns, borrowing the context and the resource for `'a`.
    type Future: Future<Output = Result<T, Error>> + Send + 'a;
}

impl<'a, R: 'a, T, F, Fut> AsyncStep<'a, R, T> for F
where
    F: Fn(&'a Context, &'a mut R) -> Fut
        + AsyncFn(&'a Context, &'a mut R) -> Result<T, Error>
        + Send
        + Sync,
    Fut: Future<Output = Result<T, Error>> + Send + 'a,
{
    type Future = Fut;
}
