//! `ObjectManager`: how a reconciler makes an object it manages (a child, an aggregate) match
//! what it wants: create it, change it, or delete it. Two implementations ship:
//! [`UpdatingObjectManager`](crate::UpdatingObjectManager) (create / update / delete) and
//! [`ApplyObjectManager`](crate::ApplyObjectManager) (server-side apply).

use std::future::Future;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;

use crate::combinators::{add_finalizer, clear_finalizer};
use crate::context::{Context, Event, Reference};
use crate::error::{Error, describe_failure};
use crate::object_api::ObjectApi;
use crate::tree::{Reconciled, Setup};

/// The resource being reconciled, on whose behalf a manager writes: events are about it, and a
/// manager's finalizer goes on it.
pub struct Parent<'a, R: Reconciled> {
    /// The resource, as the tree holds it (a finalizer patch updates it in place).
    pub resource: &'a mut R,
    /// Its dynamic type (`()` for static types).
    pub dyntype: &'a R::DynamicType,
}

impl<R: Reconciled> Parent<'_, R> {
    /// A reference to the resource, for events.
    pub fn object_ref(&self) -> ObjectReference {
        self.resource.object_ref(self.dyntype)
    }

    /// Adds `finalizer` (if any) to the resource.
    pub async fn add_finalizer(
        &mut self,
        ctx: &Context,
        finalizer: Option<&str>,
    ) -> Result<(), Error> {
        match finalizer {
            Some(f) => add_finalizer(ctx, self.resource, self.dyntype, f).await,
            None => Ok(()),
        }
    }

    /// Removes `finalizer` (if any) from the resource.
    pub async fn clear_finalizer(
        &mut self,
        ctx: &Context,
        finalizer: Option<&str>,
    ) -> Result<(), Error> {
        match finalizer {
            Some(f) => clear_finalizer(ctx, self.resource, self.dyntype, f).await,
            None => Ok(()),
        }
    }
}

/// Makes an object match what a reconciler wants. Implement `manage` with an `async fn`; the
/// reconciler holding the manager boxes its future once per call.
pub trait ObjectManager<R: Reconciled, C>: Send + Sync {
    /// Turns `actual` (the object as it exists, if it does) into `desired` (`None`: it should
    /// not exist), on behalf of `parent`. Returns the object as the server now holds it.
    fn manage(
        &self,
        ctx: &Context,
        parent: Parent<'_, R>,
        actual: Option<C>,
        desired: Option<C>,
    ) -> impl Future<Output = Result<Option<C>, Error>> + Send;

    /// Declares the watches this manager needs (for example of the objects it tracks).
    fn setup(&self, _setup: &mut Setup) {}
}

/// An [`ObjectManager`] with its future boxed, so that a reconciler can hold any.
pub(crate) trait BoxedManager<R: Reconciled, C>: Send + Sync {
    fn manage_boxed<'a>(
        &'a self,
        ctx: &'a Context,
        parent: Parent<'a, R>,
        actual: Option<C>,
        desired: Option<C>,
    ) -> BoxFuture<'a, Result<Option<C>, Error>>;

    fn setup(&self, setup: &mut Setup);
}

impl<R: Reconciled, C: Send + 'static, M: ObjectManager<R, C>> BoxedManager<R, C> for M {
    fn manage_boxed<'a>(
        &'a self,
        ctx: &'a Context,
        parent: Parent<'a, R>,
        actual: Option<C>,
        desired: Option<C>,
    ) -> BoxFuture<'a, Result<Option<C>, Error>> {
        Box::pin(self.manage(ctx, parent, actual, desired))
    }

    fn setup(&self, setup: &mut Setup) {
        ObjectManager::setup(self, setup);
    }
}

/// `Created` events and their kin name the object as `<Kind> "<name>"`.
pub(crate) fn describe<C: Resource>(dyntype: &C::DynamicType, object: &C) -> String {
    let meta = object.meta();
    let name = meta
        .name
        .as_deref()
        .or(meta.generate_name.as_deref())
        .unwrap_or_default();
    format!("{} {name:?}", C::kind(dyntype))
}

/// The event of a write a manager sent: `Normal <done>` with `<Done> <Kind> "<name>"` on
/// success, `Warning <failed>` with `Failed to <verb> <Kind> "<name>": <why>` on failure.
pub(crate) struct WriteEvents {
    pub(crate) done: &'static str,
    pub(crate) failed: &'static str,
    pub(crate) verb: &'static str,
}

impl WriteEvents {
    pub(crate) const CREATE: WriteEvents = WriteEvents {
        done: "Created",
        failed: "CreationFailed",
        verb: "create",
    };
    pub(crate) const UPDATE: WriteEvents = WriteEvents {
        done: "Updated",
        failed: "UpdateFailed",
        verb: "update",
    };
    pub(crate) const DELETE: WriteEvents = WriteEvents {
        done: "Deleted",
        failed: "DeleteFailed",
        verb: "delete",
    };
    pub(crate) const APPLY: WriteEvents = WriteEvents {
        done: "Applied",
        failed: "ApplyFailed",
        verb: "apply",
    };

    /// Publishes the event for `result` of writing `what` (from [`describe`]).
    pub(crate) async fn publish<T>(
        &self,
        ctx: &Context,
        regarding: &ObjectReference,
        what: &str,
        result: &Result<T, kube::Error>,
    ) {
        let action = capitalised(self.verb);
        let event = match result {
            Ok(_) => Event::normal(self.done, &action, format!("{} {what}", self.done)),
            Err(err) => Event::warning(
                self.failed,
                &action,
                format!("Failed to {} {what}: {}", self.verb, describe_failure(err)),
            ),
        };
        ctx.publish(regarding, event).await;
    }
}

fn capitalised(verb: &str) -> String {
    let mut chars = verb.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// What a manager does when nothing is desired: deletes `actual` (if any), then clears its
/// finalizer from the parent at once (the delete is accepted: nothing is left to protect).
pub(crate) async fn remove_unwanted<R: Reconciled, C: Reconciled>(
    ctx: &Context,
    parent: &mut Parent<'_, R>,
    dyntype: &C::DynamicType,
    actual: Option<&C>,
    finalizer: Option<&str>,
) -> Result<(), Error> {
    if let Some(actual) = actual {
        delete_unwanted(ctx, parent, dyntype, actual).await?;
    }
    parent.clear_finalizer(ctx, finalizer).await
}

/// Has the request track `object`, when the manager tracks what it manages.
pub(crate) fn track_managed<C: Reconciled>(
    ctx: &Context,
    enabled: bool,
    dyntype: &C::DynamicType,
    object: &C,
) -> Result<(), Error> {
    if enabled {
        ctx.track(Reference::to_object(dyntype, object))?;
    }
    Ok(())
}

/// Deletes `actual`, unless it is already being deleted; an object already gone is not an
/// error. Shared by the managers.
pub(crate) async fn delete_unwanted<R: Reconciled, C: Reconciled>(
    ctx: &Context,
    parent: &Parent<'_, R>,
    dyntype: &C::DynamicType,
    actual: &C,
) -> Result<(), Error> {
    let meta = actual.meta();
    if meta.deletion_timestamp.is_some() {
        return Ok(());
    }
    let api = ObjectApi::<C>::of(ctx.config().client(), dyntype, actual);
    let result = api.delete(meta.uid.as_deref()).await;
    if let Err(kube::Error::Api(status)) = &result
        && status.code == 404
    {
        return Ok(());
    }
    WriteEvents::DELETE
        .publish(
            ctx,
            &parent.object_ref(),
            &describe(dyntype, actual),
            &result,
        )
        .await;
    result.map_err(Error::from)
}
