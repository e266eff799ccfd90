//! `ForEach`: a sub-reconciler run once per item of a list computed from the resource.

use std::any::Any;

use serde::{Deserialize, Serialize};

use crate::context::{Context, Stasher};
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

type Items<R, I> = Box<dyn Fn(&Context, &R) -> Result<Vec<I>, Error> + Send + Sync>;

/// Where a [`ForEach`] loop is: the item being reconciled, its index and the number of items.
/// Stashed for the nested reconciler under the key [`Cursor::stasher`] names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor<I> {
    /// The index of the item, from 0.
    pub index: usize,
    /// How many items the loop has.
    pub length: usize,
    /// The item.
    pub item: I,
}

impl<I: Any + Clone + Send + Sync> Cursor<I> {
    /// The stash key of cursors over `I` items: the type's name, so that loops over distinct
    /// item types, nested, each keep a cursor of their own.
    pub fn stasher() -> Stasher<Cursor<I>> {
        Stasher::new(std::any::type_name::<Cursor<I>>())
    }

    /// The cursor of the innermost running loop over `I` items; `None` outside one.
    pub fn current(ctx: &Context) -> Option<Cursor<I>> {
        Self::stasher().retrieve_opt(ctx)
    }
}

/// Runs a sub-reconciler once for each item the `items` hook lists, in order, with a
/// [`Cursor`] in the stash ([`ForEach::cursor`], [`Cursor::current`]).
///
/// The `items` hook is a plain (not async) function of the context and the resource; its error
/// ends the reconcile before any item runs. Outcomes are aggregated; the first error stops the
/// loop and is returned with the outcome gathered so far. The cursor is removed when the loop
/// ends, however it ends (or the cursor of an enclosing loop over the same item type is put
/// back). Loops over distinct item types nest without seeing each other's cursor.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Config, Context, Cursor, ForEach, Request, SubReconciler, SyncReconciler};
///
/// let record = SyncReconciler::<ConfigMap>::new("Record").sync(async |ctx, cm| {
///     if let Some(cursor) = Cursor::<String>::current(ctx) {
///         let note = format!("{}/{}", cursor.index + 1, cursor.length);
///         cm.metadata.annotations.get_or_insert_default().insert(cursor.item, note);
///     }
///     Ok(())
/// });
/// let each_key = ForEach::new(
///     "EachKey",
///     |_ctx, cm: &ConfigMap| Ok(cm.data.iter().flatten().map(|(k, _)| k.clone()).collect()),
///     record,
/// );
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let client = recon_fake::ApiServer::new().client();
/// let ctx = Context::new(Config::new(client, "demo"), Request::namespaced("default", "cm"));
/// let mut cm = ConfigMap::default();
/// cm.data = Some([("a".to_owned(), String::new()), ("b".to_owned(), String::new())].into());
/// each_key.reconcile(&ctx, &mut cm).await.unwrap();
/// let notes = cm.metadata.annotations.unwrap();
/// assert_eq!((notes["a"].as_str(), notes["b"].as_str()), ("1/2", "2/2"));
/// assert_eq!(Cursor::<String>::current(&ctx), None, "cleared after the loop");
/// # });
/// ```
pub struct ForEach<R, I> {
    name: String,
    items: Items<R, I>,
    reconciler: BoxSubReconciler<R>,
}

impl<R: Send + Sync + 'static, I: Any + Clone + Send + Sync> ForEach<R, I> {
    /// Runs `reconciler` once for each item `items` lists.
    pub fn new(
        name: impl Into<String>,
        items: impl Fn(&Context, &R) -> Result<Vec<I>, Error> + Send + Sync + 'static,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        ForEach {
            name: name.into(),
            items: Box::new(items),
            reconciler: BoxSubReconciler::new(reconciler),
        }
    }
}

impl<R, I: Any + Clone + Send + Sync> ForEach<R, I> {
    /// The cursor of the innermost running loop over `I` items; `None` outside one.
    pub fn cursor(ctx: &Context) -> Option<Cursor<I>> {
        Cursor::current(ctx)
    }
}

impl<R: Send + Sync, I: Any + Clone + Send + Sync> SubReconciler<R> for ForEach<R, I> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let items = (self.items)(ctx, resource)?;
        let scope = Scoped::enter(ctx, Cursor::<I>::stasher());
        let length = items.len();
        let mut outcome = Outcome::done();
        for (index, item) in items.into_iter().enumerate() {
            scope.set(Cursor {
                index,
                length,
                item,
            });
            match self.reconciler.reconcile(ctx, resource).await {
                Ok(o) => outcome = outcome.merge(o),
                Err(e) => return Err(e.with_outcome(outcome)),
            }
        }
        Ok(outcome)
    }
}

/// A stash key set for the span of a loop: on drop (the loop ended, failed, or its future was
/// dropped) the value an enclosing loop had there is put back, or the key is cleared.
pub(crate) struct Scoped<'a, T: Any + Clone + Send + Sync> {
    ctx: &'a Context,
    stasher: Stasher<T>,
    outer: Option<T>,
}

impl<'a, T: Any + Clone + Send + Sync> Scoped<'a, T> {
    pub(crate) fn enter(ctx: &'a Context, stasher: Stasher<T>) -> Self {
        Scoped {
            ctx,
            stasher,
            outer: stasher.retrieve_opt(ctx),
        }
    }

    pub(crate) fn set(&self, value: T) {
        self.stasher.store(self.ctx, value);
    }
}

impl<T: Any + Clone + Send + Sync> Drop for Scoped<'_, T> {
    fn drop(&mut self) {
        match self.outer.take() {
            Some(outer) => self.stasher.store(self.ctx, outer),
            None => {
                self.stasher.clear(self.ctx);
            }
        }
    }
}
