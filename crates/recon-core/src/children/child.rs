//! `ChildReconciler`: one child object the resource wants (or not), kept as desired through an
//! [`ObjectManager`], with the child's state reflected on the resource's status.

use super::handling::{
    ChildListOptions, Children, OnlyReconcileChildStatus, Triage, child_options,
};
use super::object_manager::ObjectManager;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{Reconciled, Setup, SubReconciler};

type DesiredHook<R, C> = Box<dyn Fn(&Context, &R) -> Result<Option<C>, Error> + Send + Sync>;
type ReflectHook<R, C> =
    Box<dyn Fn(&Context, &mut R, Result<Option<&C>, Error>) -> Result<(), Error> + Send + Sync>;

/// Keeps one child object as the resource wants it.
///
/// Each reconcile:
/// 1. lists the resource's children: objects of the child kind in its namespace that it
///    controls (a controller owner reference with its uid), narrowed by `our_child`;
/// 2. asks `desired_child` what the child should be (`None`: no child; nothing is desired
///    while the resource is being deleted). The desired child gets the resource's namespace
///    if it has none, and, unless it names a controller already, a controller owner reference
///    with `blockOwnerDeletion`;
/// 3. if there is more than one child, has the [`ObjectManager`] delete the extras (keeping
///    the one with the desired name, else the oldest);
/// 4. has the [`ObjectManager`] create, update or delete the child (an
///    [`UpdatingObjectManager`](crate::UpdatingObjectManager) sends nothing when it is in sync);
/// 5. hands `reflect` the child as it now is, or the failure when its reason is one the
///    reconciler reflects (`AlreadyExists`, `Forbidden`, `Invalid` by default): the hook sets
///    the resource's conditions and may swallow the failure (`Ok(())`) or return it (`child?`). An
///    `AlreadyExists` for an object the resource does not control is tracked, so its removal
///    re-reconciles the resource; the reconciler never fights over a foreign object. One for a
///    child of its own (not yet visible when listed) is returned, to retry.
///
/// Other failures are returned as they are. Nothing is reflected while the resource is being
/// deleted.
///
/// Without owner references ([`ChildReconciler::without_owner_reference`]), children are found
/// with the list options and the `our_child` filter, and the manager's finalizer (see
/// [`UpdatingObjectManager::finalizer`](crate::UpdatingObjectManager::finalizer)) keeps the
/// resource until its child is deleted.
///
/// The controller watches the child kind: owned children re-reconcile their owner.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{ChildReconciler, UpdatingObjectManager};
///
/// // The child of a ConfigMap `x` is a ConfigMap `x-copy` holding the same data.
/// let copy = ChildReconciler::<ConfigMap, ConfigMap>::new(
///     UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
///         current.data = desired.data.clone()
///     }),
///     |_ctx, parent| {
///         let mut child = ConfigMap::default();
///         child.metadata.name = Some(format!("{}-copy", parent.metadata.name.as_deref().unwrap_or_default()));
///         child.data = parent.data.clone();
///         Ok(Some(child))
///     },
///     |_ctx, parent, child| {
///         let copied = matches!(child, Ok(Some(_)));
///         parent.metadata.labels.get_or_insert_default().insert("copied".into(), copied.to_string());
///         Ok(())
///     },
/// );
/// # let _ = copy;
/// ```
pub struct ChildReconciler<R: Reconciled, C: Reconciled> {
    name: String,
    children: Children<R, C>,
    desired_child: DesiredHook<R, C>,
    reflect: ReflectHook<R, C>,
}

impl<R: Reconciled, C: Reconciled> ChildReconciler<R, C>
where
    R::DynamicType: Default,
    C::DynamicType: Default,
{
    /// A child reconciler writing through `manager`, the child `desired_child` says, reflected
    /// on the resource by `reflect`.
    pub fn new(
        manager: impl ObjectManager<R, C> + 'static,
        desired_child: impl Fn(&Context, &R) -> Result<Option<C>, Error> + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, Result<Option<&C>, Error>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::new_with(
            R::DynamicType::default(),
            C::DynamicType::default(),
            manager,
            desired_child,
            reflect,
        )
    }
}

impl<R: Reconciled, C: Reconciled> ChildReconciler<R, C> {
    /// [`ChildReconciler::new`] for kinds known at runtime.
    pub fn new_with(
        parent_type: R::DynamicType,
        child_type: C::DynamicType,
        manager: impl ObjectManager<R, C> + 'static,
        desired_child: impl Fn(&Context, &R) -> Result<Option<C>, Error> + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, Result<Option<&C>, Error>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        ChildReconciler {
            name: format!("{}ChildReconciler", C::kind(&child_type)),
            children: Children::new(parent_type, child_type, manager),
            desired_child: Box::new(desired_child),
            reflect: Box::new(reflect),
        }
    }

    /// The child as it is after this reconcile, or why not.
    async fn reconcile_child(&self, ctx: &Context, resource: &mut R) -> Result<Option<C>, Error> {
        let mut found = self.children.list(ctx, resource).await?;
        let desired = if resource.meta().deletion_timestamp.is_some() {
            None
        } else {
            match (self.desired_child)(ctx, resource) {
                Ok(desired) => desired,
                Err(err) if OnlyReconcileChildStatus::is(&err) => {
                    return Ok(found.pop().filter(|_| found.is_empty()));
                }
                Err(err) => return Err(err),
            }
        };
        let desired = match desired {
            Some(mut child) => {
                self.children.adopt(resource, &mut child)?;
                Some(child)
            }
            None => None,
        };
        self.children.converge(ctx, resource, found, desired).await
    }
}

impl<R: Reconciled, C: Reconciled> SubReconciler<R> for ChildReconciler<R, C> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.children.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let result = self.reconcile_child(ctx, resource).await;
        if resource.meta().deletion_timestamp.is_some() {
            return result.map(|_| Outcome::done());
        }
        match result {
            Ok(child) => (self.reflect)(ctx, resource, Ok(child.as_ref()))?,
            Err(err) => match self.children.triage(ctx, resource, err).await {
                Triage::Reflect(err) => (self.reflect)(ctx, resource, Err(err))?,
                Triage::Fail(err) => return Err(err),
            },
        }
        Ok(Outcome::done())
    }
}

child_options!(ChildReconciler);
