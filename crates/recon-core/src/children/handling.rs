//! What [`ChildReconciler`](crate::ChildReconciler) and
//! [`ChildSetReconciler`](crate::ChildSetReconciler) share: which objects are the resource's
//! children, the controller owner reference a desired child gets, converging one child with the
//! object manager, and which failures are reflected on the parent instead of returned.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{ApiResource, ListParams};

use super::object_manager::{BoxedManager, ObjectManager, Parent};
use crate::context::{Context, Reference};
use crate::error::Error;
use crate::object_api::ObjectApi;
use crate::tree::{Reconciled, Setup};

/// The builder methods both child reconcilers share (each has a `name` and `children`).
macro_rules! child_options {
    ($reconciler:ident) => {
        impl<R: Reconciled, C: Reconciled> $reconciler<R, C> {
            /// The same reconciler under another name (for logs).
            #[must_use]
            pub fn named(mut self, name: impl Into<String>) -> Self {
                self.name = name.into();
                self
            }

            /// Only objects `our_child(resource, object)` accepts are the resource's children.
            #[must_use]
            pub fn our_child(
                mut self,
                our_child: impl Fn(&R, &C) -> bool + Send + Sync + 'static,
            ) -> Self {
                self.children.set_our_child(our_child);
                self
            }

            /// Children get no owner reference: they are the objects `list` finds that
            /// `our_child` accepts (for children in another namespace, or cluster-scoped ones,
            /// which an owner reference cannot reach; pair it with a finalizer on the
            /// manager).
            #[must_use]
            pub fn without_owner_reference(
                mut self,
                our_child: impl Fn(&R, &C) -> bool + Send + Sync + 'static,
                list: impl Fn(&Context, &R) -> ChildListOptions + Send + Sync + 'static,
            ) -> Self {
                self.children.set_without_owner_reference(our_child, list);
                self
            }

            /// Where children are listed (reconciler.io's `ListOptions`); by default, the
            /// resource's namespace. With owner references, children still carry the
            /// resource's controller reference: this is for a cluster-scoped resource whose
            /// children live in a namespace (`ChildListOptions::in_namespace`) or in several
            /// (`ChildListOptions::default()`: every namespace), or to narrow the list with
            /// selectors. Without owner references it replaces the `list` given there.
            #[must_use]
            pub fn list_options(
                mut self,
                list: impl Fn(&Context, &R) -> ChildListOptions + Send + Sync + 'static,
            ) -> Self {
                self.children.set_list_options(list);
                self
            }

            /// The reasons of API failures handed to the reflect hook instead of returned
            /// (default `AlreadyExists`, `Forbidden`, `Invalid`).
            #[must_use]
            pub fn reflected_error_reasons<S: Into<String>>(
                mut self,
                reasons: impl IntoIterator<Item = S>,
            ) -> Self {
                self.children.reflected_reasons = reasons.into_iter().map(Into::into).collect();
                self
            }
        }
    };
}
pub(crate) use child_options;

/// Where a reconciler looks for children when owner references do not identify them.
///
/// ```
/// use kube::api::ListParams;
/// use recon_core::ChildListOptions;
///
/// let options = ChildListOptions::in_namespace("team-a").params(ListParams::default().labels("app=web"));
/// assert_eq!(options.namespace.as_deref(), Some("team-a"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ChildListOptions {
    /// The namespace listed (`None`: every namespace, or a cluster-scoped kind).
    pub namespace: Option<String>,
    /// Label and field selectors.
    pub params: ListParams,
}

impl ChildListOptions {
    /// Every child candidate in `namespace`.
    pub fn in_namespace(namespace: &str) -> Self {
        ChildListOptions {
            namespace: Some(namespace.to_owned()),
            params: ListParams::default(),
        }
    }

    /// The same options with these selectors.
    #[must_use]
    pub fn params(mut self, params: ListParams) -> Self {
        self.params = params;
        self
    }
}

/// Returned by a desired-child hook: leave the child as it is (no create, update or delete),
/// only reflect its status on the parent.
///
/// ```
/// use recon_core::{Error, OnlyReconcileChildStatus};
///
/// let err: Error = OnlyReconcileChildStatus.into();
/// assert!(recon_core::OnlyReconcileChildStatus::is(&err));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("only the child's status is reconciled")]
pub struct OnlyReconcileChildStatus;

impl OnlyReconcileChildStatus {
    /// Whether `err` is this signal.
    pub fn is(err: &Error) -> bool {
        err.cause()
            .is_some_and(|c| c.downcast_ref::<OnlyReconcileChildStatus>().is_some())
    }
}

/// A desired child cannot get the parent's controller reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OwnerReferenceError {
    /// A namespaced parent cannot own an object in another namespace or a cluster-scoped one.
    #[error(
        "cross-namespace owner references are disallowed: the owner is in namespace {owner:?}, the child in {child:?}"
    )]
    CrossNamespace {
        /// The parent's namespace.
        owner: String,
        /// The child's namespace (`None`: cluster-scoped).
        child: Option<String>,
    },
    /// The parent has no uid (it was never stored).
    #[error("the owner has no uid")]
    OwnerWithoutUid,
}

type OurChildHook<R, C> = Box<dyn Fn(&R, &C) -> bool + Send + Sync>;
type ListHook<R> = Box<dyn Fn(&Context, &R) -> ChildListOptions + Send + Sync>;

/// How children are found.
enum Ownership<R> {
    /// Children carry the parent's controller reference; they are listed in its namespace, or
    /// with these options.
    ControllerReference(Option<ListHook<R>>),
    /// No owner reference: children are listed with these options and told apart by the
    /// `our_child` filter alone.
    Filtered(ListHook<R>),
}

/// Whether a failed child write is reflected on the parent or returned.
pub(crate) enum Triage {
    Reflect(Error),
    Fail(Error),
}

/// The child-handling shared by the child reconcilers.
pub(crate) struct Children<R: Reconciled, C: Reconciled> {
    pub(crate) parent_type: R::DynamicType,
    pub(crate) child_type: C::DynamicType,
    pub(crate) manager: Box<dyn BoxedManager<R, C>>,
    ownership: Ownership<R>,
    our_child: Option<OurChildHook<R, C>>,
    pub(crate) reflected_reasons: Vec<String>,
}

impl<R: Reconciled, C: Reconciled> Children<R, C> {
    pub(crate) fn new(
        parent_type: R::DynamicType,
        child_type: C::DynamicType,
        manager: impl ObjectManager<R, C> + 'static,
    ) -> Self {
        Children {
            parent_type,
            child_type,
            manager: Box::new(manager),
            ownership: Ownership::ControllerReference(None),
            our_child: None,
            reflected_reasons: ["AlreadyExists", "Forbidden", "Invalid"]
                .map(str::to_owned)
                .to_vec(),
        }
    }

    pub(crate) fn set_our_child(&mut self, f: impl Fn(&R, &C) -> bool + Send + Sync + 'static) {
        self.our_child = Some(Box::new(f));
    }

    pub(crate) fn set_without_owner_reference(
        &mut self,
        our_child: impl Fn(&R, &C) -> bool + Send + Sync + 'static,
        list: impl Fn(&Context, &R) -> ChildListOptions + Send + Sync + 'static,
    ) {
        self.our_child = Some(Box::new(our_child));
        self.ownership = Ownership::Filtered(Box::new(list));
    }

    pub(crate) fn set_list_options(
        &mut self,
        list: impl Fn(&Context, &R) -> ChildListOptions + Send + Sync + 'static,
    ) {
        self.ownership = match self.ownership {
            Ownership::ControllerReference(_) => {
                Ownership::ControllerReference(Some(Box::new(list)))
            }
            Ownership::Filtered(_) => Ownership::Filtered(Box::new(list)),
        };
    }

    fn uses_owner_reference(&self) -> bool {
        matches!(self.ownership, Ownership::ControllerReference(_))
    }

    pub(crate) fn setup(&self, setup: &mut Setup) {
        let kind = ApiResource::erase::<C>(&self.child_type);
        if self.uses_owner_reference() {
            setup.owns_with(kind.clone());
        }
        // A foreign object in the way of a child is tracked, to retry once it is gone.
        setup.tracks_with(kind);
        self.manager.setup(setup);
    }

    /// Whether `child` belongs to `parent`: controlled by it (unless owner references are not
    /// used) and accepted by the `our_child` filter.
    pub(crate) fn is_ours(&self, parent: &R, child: &C) -> bool {
        let controlled = !self.uses_owner_reference() || {
            let uid = parent.meta().uid.as_deref();
            child
                .meta()
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && uid == Some(o.uid.as_str()))
        };
        controlled && self.our_child.as_ref().is_none_or(|f| f(parent, child))
    }

    /// The parent's children, sorted by name.
    pub(crate) async fn list(&self, ctx: &Context, parent: &R) -> Result<Vec<C>, Error> {
        let options = match &self.ownership {
            Ownership::ControllerReference(None) => ChildListOptions {
                namespace: parent.meta().namespace.clone(),
                params: ListParams::default(),
            },
            Ownership::ControllerReference(Some(list)) | Ownership::Filtered(list) => {
                list(ctx, parent)
            }
        };
        let api = ObjectApi::<C>::new(
            ctx.config().client(),
            &self.child_type,
            options.namespace.as_deref(),
            "",
        );
        let mut children: Vec<C> = api
            .list(&options.params)
            .await?
            .into_iter()
            .filter(|c| self.is_ours(parent, c))
            .map(|c| with_type(&self.child_type, c))
            .collect();
        children.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
        Ok(children)
    }

    /// Gives a desired child the parent's namespace (when it has none) and, unless it names a
    /// controller already, the parent's controller reference, as reconciler.io's
    /// `ChildReconciler` does: a reference the desired child carries is left as it is (one to
    /// another controller makes a child that is not ours, which is logged).
    pub(crate) fn adopt(&self, parent: &R, child: &mut C) -> Result<(), Error> {
        if !self.uses_owner_reference() {
            return Ok(());
        }
        let owner_meta = parent.meta();
        if let Some(owner_ns) = &owner_meta.namespace {
            let child_ns = child
                .meta_mut()
                .namespace
                .get_or_insert_with(|| owner_ns.clone());
            if child_ns != owner_ns {
                return Err(OwnerReferenceError::CrossNamespace {
                    owner: owner_ns.clone(),
                    child: Some(child_ns.clone()),
                }
                .into());
            }
        }
        let has_controller = child
            .meta()
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.controller == Some(true));
        if has_controller {
            if !self.is_ours(parent, child) {
                tracing::info!(
                    child = %super::object_manager::describe(&self.child_type, &*child),
                    "the desired child names another controller: it is not this resource's \
                     child and may be orphaned"
                );
            }
            return Ok(());
        }
        let uid = owner_meta
            .uid
            .clone()
            .ok_or(OwnerReferenceError::OwnerWithoutUid)?;
        child
            .meta_mut()
            .owner_references
            .get_or_insert_default()
            .push(OwnerReference {
                api_version: R::api_version(&self.parent_type).into_owned(),
                kind: R::kind(&self.parent_type).into_owned(),
                name: owner_meta.name.clone().unwrap_or_default(),
                uid,
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
        Ok(())
    }

    /// Makes the one child these `candidates` (the parent's children for one slot) should be
    /// match `desired`: the manager deletes the extras (keeping the one named as desired, else
    /// the oldest, where reconciler.io deletes them all and creates the desired child anew),
    /// then converges the one kept.
    pub(crate) async fn converge(
        &self,
        ctx: &Context,
        parent: &mut R,
        mut candidates: Vec<C>,
        desired: Option<C>,
    ) -> Result<Option<C>, Error> {
        let actual = if candidates.len() > 1 && desired.is_some() {
            let wanted = desired.as_ref().and_then(|d| d.meta().name.clone());
            let keep = candidates
                .iter()
                .position(|c| wanted.is_some() && c.meta().name == wanted)
                .unwrap_or_else(|| oldest(&candidates));
            let kept = candidates.swap_remove(keep);
            candidates.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
            for extra in candidates {
                tracing::info!(child = ?extra.meta().name, "deleting an extra child");
                let owner = Parent {
                    resource: &mut *parent,
                    dyntype: &self.parent_type,
                };
                self.manager
                    .manage_boxed(ctx, owner, Some(extra), None)
                    .await?;
            }
            Some(kept)
        } else if candidates.len() > 1 {
            // Nothing is desired: each goes through the manager, to be deleted.
            for extra in candidates.drain(1..) {
                let owner = Parent {
                    resource: &mut *parent,
                    dyntype: &self.parent_type,
                };
                self.manager
                    .manage_boxed(ctx, owner, Some(extra), None)
                    .await?;
            }
            candidates.pop()
        } else {
            candidates.pop()
        };
        let owner = Parent {
            resource: parent,
            dyntype: &self.parent_type,
        };
        self.manager.manage_boxed(ctx, owner, actual, desired).await
    }

    /// Sorts a failed child write: errors of a reflected reason go to the parent's status;
    /// an `AlreadyExists` for an object of our own (one the cache did not show yet) is
    /// returned to retry, one for a foreign object is tracked (its removal re-reconciles the
    /// parent) and reflected.
    pub(crate) async fn triage(&self, ctx: &Context, parent: &R, err: Error) -> Triage {
        let Some(status) = err.as_api_error() else {
            return Triage::Fail(err);
        };
        if !self.reflected_reasons.contains(&status.reason) {
            return Triage::Fail(err);
        }
        if status.reason == "AlreadyExists" {
            let name = status
                .details
                .as_ref()
                .map(|d| d.name.clone())
                .unwrap_or_default();
            let namespace = parent.meta().namespace.clone();
            let api = ObjectApi::<C>::new(
                ctx.config().api_reader(),
                &self.child_type,
                namespace.as_deref(),
                &name,
            );
            if let Ok(existing) = api.get().await {
                if self.is_ours(parent, &existing) {
                    return Triage::Fail(err);
                }
                if let Err(track) = ctx.track(Reference::to_object(&self.child_type, &existing)) {
                    return Triage::Fail(track.into());
                }
            }
        }
        Triage::Reflect(err)
    }
}

/// `object` with its `apiVersion` and `kind`: the items of a list of built-ins carry none, and
/// an object of a kind known at runtime (`DynamicObject`) keeps what it was read with, so the
/// writes a manager sends of it would carry no type either.
fn with_type<C: Reconciled>(dyntype: &C::DynamicType, object: C) -> C {
    let Ok(serde_json::Value::Object(mut fields)) = serde_json::to_value(&object) else {
        return object;
    };
    if fields.contains_key("apiVersion") && fields.contains_key("kind") {
        return object;
    }
    fields.insert(
        "apiVersion".into(),
        C::api_version(dyntype).into_owned().into(),
    );
    fields.insert("kind".into(), C::kind(dyntype).into_owned().into());
    serde_json::from_value(serde_json::Value::Object(fields)).unwrap_or(object)
}

/// The index of the oldest object (by creation time, then name).
fn oldest<C: Reconciled>(objects: &[C]) -> usize {
    (0..objects.len())
        .min_by(|&a, &b| {
            let key = |i: usize| {
                let meta = objects[i].meta();
                (
                    meta.creation_timestamp.as_ref().map(|t| t.0),
                    meta.name.clone(),
                )
            };
            key(a).cmp(&key(b))
        })
        .unwrap_or(0)
}
