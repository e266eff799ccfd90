//! `ChildSetReconciler`: a set of children of one kind, each identified by a stable id, kept
//! as desired through an [`ObjectManager`], with the whole set reflected on the resource once.

use std::collections::{BTreeMap, BTreeSet};

use super::handling::{
    ChildListOptions, Children, OnlyReconcileChildStatus, Triage, child_options,
};
use super::object_manager::ObjectManager;
use crate::context::Context;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::tree::{Reconciled, Setup, SubReconciler};

/// Both constructors' desired-children hooks: the one of [`ChildSetReconciler::new`] ignores
/// the known children.
type DesiredHook<R, C> = Box<dyn Fn(&Context, &R, &[C]) -> Result<Vec<C>, Error> + Send + Sync>;
type IdentifyHook<C> = Box<dyn Fn(&C) -> String + Send + Sync>;
type ReflectHook<R, C> =
    Box<dyn Fn(&Context, &mut R, &ChildSetResult<C>) -> Result<(), Error> + Send + Sync>;

/// One child of a set after a reconcile.
#[derive(Debug)]
pub struct ChildSetItem<C> {
    /// Its id.
    pub id: String,
    /// The child as it now is (`None`: there is none, or its write failed).
    pub child: Option<C>,
    /// Why its write failed, if it did.
    pub error: Option<Error>,
}

/// Every child of a set after a reconcile, sorted by id: what a [`ChildSetReconciler`]
/// reflects on the resource.
#[derive(Debug)]
pub struct ChildSetResult<C> {
    /// The children, by id.
    pub children: Vec<ChildSetItem<C>>,
}

impl<C> ChildSetResult<C> {
    /// The failures, in id order.
    pub fn errors(&self) -> impl Iterator<Item = &Error> {
        self.children.iter().filter_map(|c| c.error.as_ref())
    }

    /// The children that exist, in id order.
    pub fn existing(&self) -> impl Iterator<Item = &C> {
        self.children.iter().filter_map(|c| c.child.as_ref())
    }
}

/// Why the desired children of a set cannot be reconciled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChildSetError {
    /// A desired child has an empty id.
    #[error("desired child {index} has an empty id")]
    EmptyId {
        /// Its index among the desired children.
        index: usize,
    },
    /// Two desired children have the same id.
    #[error("desired children have the id {id:?} more than once")]
    DuplicateId {
        /// The id.
        id: String,
    },
}

/// Keeps a set of children as the resource wants them.
///
/// Each child has a stable id (`identify`, for example a label or a name suffix). Each
/// reconcile lists the resource's children once (as [`ChildReconciler`](crate::ChildReconciler)
/// does: controlled by the resource, narrowed by `our_child`), asks `desired_children` for the
/// set it wants (nothing while the resource is being deleted; a hook given to
/// [`ChildSetReconciler::with_known_children`] also sees the children listed), and, for every
/// id that is desired or exists, in id order, creates, updates or deletes that child through
/// the [`ObjectManager`] (extra children of one id are deleted). A failure of one child does
/// not stop the others. Then `reflect` sees the whole set once: every child, or why its write
/// failed. Failures of a reflected reason (`AlreadyExists`, `Forbidden`, `Invalid` by
/// default) are the hook's to report; the others are also returned, joined.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{ChildSetReconciler, UpdatingObjectManager};
///
/// // A ConfigMap `x` wants one child per key of its data, named `x-<key>`.
/// let per_key = ChildSetReconciler::<ConfigMap, ConfigMap>::new(
///     UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
///         current.data = desired.data.clone()
///     }),
///     |_ctx, parent| {
///         let name = parent.metadata.name.clone().unwrap_or_default();
///         Ok(parent.data.iter().flatten().map(|(key, value)| {
///             let mut child = ConfigMap::default();
///             child.metadata.name = Some(format!("{name}-{key}"));
///             child.metadata.labels = Some([("key".to_owned(), key.clone())].into());
///             child.data = Some([("value".to_owned(), value.clone())].into());
///             child
///         }).collect())
///     },
///     |child| child.metadata.labels.as_ref().and_then(|l| l.get("key")).cloned().unwrap_or_default(),
///     |_ctx, parent, set| {
///         let count = set.existing().count();
///         parent.metadata.annotations.get_or_insert_default().insert("children".into(), count.to_string());
///         Ok(())
///     },
/// );
/// # let _ = per_key;
/// ```
pub struct ChildSetReconciler<R: Reconciled, C: Reconciled> {
    name: String,
    children: Children<R, C>,
    desired_children: DesiredHook<R, C>,
    identify: IdentifyHook<C>,
    reflect: ReflectHook<R, C>,
}

impl<R: Reconciled, C: Reconciled> ChildSetReconciler<R, C>
where
    R::DynamicType: Default,
    C::DynamicType: Default,
{
    /// A child-set reconciler writing through `manager` the children `desired_children` says,
    /// told apart by `identify`, reflected on the resource by `reflect`.
    pub fn new(
        manager: impl ObjectManager<R, C> + 'static,
        desired_children: impl Fn(&Context, &R) -> Result<Vec<C>, Error> + Send + Sync + 'static,
        identify: impl Fn(&C) -> String + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, &ChildSetResult<C>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::new_with(
            R::DynamicType::default(),
            C::DynamicType::default(),
            manager,
            desired_children,
            identify,
            reflect,
        )
    }

    /// [`ChildSetReconciler::new`] with a desired-children hook that also sees the *known*
    /// children (reconciler.io's `RetrieveKnownChildren`): `desired_children(ctx, resource,
    /// known)`, where `known` is every child this reconcile listed, sorted by name.
    ///
    /// The known children are the objects the reconciler would otherwise keep, update or
    /// delete: controlled by the resource (or, without owner references, found by the list
    /// options), accepted by `our_child`, including extras that share an id and children whose
    /// id is empty. Returning a known child keeps it; leaving it out deletes it; adding a
    /// new one creates it. A known child carries what the server set (`uid`,
    /// `resourceVersion`, `creationTimestamp`); an [`UpdatingObjectManager`] compares through
    /// its merge hook, so one returned as it is sends nothing, while an
    /// [`ApplyObjectManager`] applying it takes ownership of every field it holds.
    ///
    /// [`UpdatingObjectManager`]: crate::UpdatingObjectManager
    /// [`ApplyObjectManager`]: crate::ApplyObjectManager
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{ChildSetReconciler, UpdatingObjectManager};
    ///
    /// // Keep only the oldest child a ConfigMap has; create none.
    /// let oldest_only = ChildSetReconciler::<ConfigMap, ConfigMap>::with_known_children(
    ///     UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
    ///         current.data = desired.data.clone()
    ///     }),
    ///     |_ctx, _parent, known| {
    ///         let oldest = known.iter().min_by_key(|child| child.metadata.creation_timestamp.as_ref().map(|t| t.0));
    ///         Ok(oldest.cloned().into_iter().collect())
    ///     },
    ///     |child| child.metadata.name.clone().unwrap_or_default(),
    ///     |_ctx, _parent, _set| Ok(()),
    /// );
    /// # let _ = oldest_only;
    /// ```
    pub fn with_known_children(
        manager: impl ObjectManager<R, C> + 'static,
        desired_children: impl Fn(&Context, &R, &[C]) -> Result<Vec<C>, Error> + Send + Sync + 'static,
        identify: impl Fn(&C) -> String + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, &ChildSetResult<C>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::with_known_children_with(
            R::DynamicType::default(),
            C::DynamicType::default(),
            manager,
            desired_children,
            identify,
            reflect,
        )
    }
}

impl<R: Reconciled, C: Reconciled> ChildSetReconciler<R, C> {
    /// [`ChildSetReconciler::new`] for kinds known at runtime.
    pub fn new_with(
        parent_type: R::DynamicType,
        child_type: C::DynamicType,
        manager: impl ObjectManager<R, C> + 'static,
        desired_children: impl Fn(&Context, &R) -> Result<Vec<C>, Error> + Send + Sync + 'static,
        identify: impl Fn(&C) -> String + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, &ChildSetResult<C>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::with_known_children_with(
            parent_type,
            child_type,
            manager,
            move |ctx: &Context, resource: &R, _: &[C]| desired_children(ctx, resource),
            identify,
            reflect,
        )
    }

    /// [`ChildSetReconciler::with_known_children`] for kinds known at runtime.
    pub fn with_known_children_with(
        parent_type: R::DynamicType,
        child_type: C::DynamicType,
        manager: impl ObjectManager<R, C> + 'static,
        desired_children: impl Fn(&Context, &R, &[C]) -> Result<Vec<C>, Error> + Send + Sync + 'static,
        identify: impl Fn(&C) -> String + Send + Sync + 'static,
        reflect: impl Fn(&Context, &mut R, &ChildSetResult<C>) -> Result<(), Error>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        ChildSetReconciler {
            name: format!("{}ChildSetReconciler", C::kind(&child_type)),
            children: Children::new(parent_type, child_type, manager),
            desired_children: Box::new(desired_children),
            identify: Box::new(identify),
            reflect: Box::new(reflect),
        }
    }

    /// The desired children by id, given the `known` ones (`None`: only reflect the children
    /// as they are).
    fn desired(
        &self,
        ctx: &Context,
        resource: &R,
        known: &[C],
    ) -> Result<Option<BTreeMap<String, C>>, Error> {
        if resource.meta().deletion_timestamp.is_some() {
            return Ok(Some(BTreeMap::new()));
        }
        let desired = match (self.desired_children)(ctx, resource, known) {
            Ok(desired) => desired,
            Err(err) if OnlyReconcileChildStatus::is(&err) => return Ok(None),
            Err(err) => return Err(err),
        };
        let mut by_id = BTreeMap::new();
        for (index, mut child) in desired.into_iter().enumerate() {
            let id = (self.identify)(&child);
            if id.is_empty() {
                return Err(ChildSetError::EmptyId { index }.into());
            }
            if by_id.contains_key(&id) {
                return Err(ChildSetError::DuplicateId { id }.into());
            }
            self.children.adopt(resource, &mut child)?;
            by_id.insert(id, child);
        }
        Ok(Some(by_id))
    }
}

impl<R: Reconciled, C: Reconciled> SubReconciler<R> for ChildSetReconciler<R, C> {
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.children.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        // Listed first, as reconciler.io does, so that the desired hook may see them.
        let known = self.children.list(ctx, resource).await?;
        let desired = self.desired(ctx, resource, &known)?;
        let mut found: BTreeMap<String, Vec<C>> = BTreeMap::new();
        for child in known {
            found
                .entry((self.identify)(&child))
                .or_default()
                .push(child);
        }
        let mut set = ChildSetResult {
            children: Vec::new(),
        };
        let mut failures = Vec::new();
        match desired {
            None => {
                for (id, mut children) in found {
                    let child = children.pop().filter(|_| children.is_empty());
                    set.children.push(ChildSetItem {
                        id,
                        child,
                        error: None,
                    });
                }
            }
            Some(mut desired) => {
                let ids: BTreeSet<String> = desired.keys().chain(found.keys()).cloned().collect();
                for id in ids {
                    let candidates = found.remove(&id).unwrap_or_default();
                    let wanted = desired.remove(&id);
                    let (child, error) = match self
                        .children
                        .converge(ctx, resource, candidates, wanted)
                        .await
                    {
                        Ok(child) => (child, None),
                        Err(err) => match self.children.triage(ctx, resource, err).await {
                            Triage::Reflect(err) => (None, Some(err)),
                            Triage::Fail(err) => {
                                failures.push(set.children.len());
                                (None, Some(err))
                            }
                        },
                    };
                    set.children.push(ChildSetItem { id, child, error });
                }
            }
        }
        if resource.meta().deletion_timestamp.is_none() {
            (self.reflect)(ctx, resource, &set)?;
        }
        let errors: Vec<Error> = set
            .children
            .into_iter()
            .enumerate()
            .filter(|(i, _)| failures.contains(i))
            .filter_map(|(_, item)| item.error)
            .collect();
        if errors.is_empty() {
            Ok(Outcome::done())
        } else {
            Err(Error::join(errors))
        }
    }
}

child_options!(ChildSetReconciler);
