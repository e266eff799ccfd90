//! What the opt-in garbage-collection step reports ([`GarbageCollection`]): every write the
//! garbage collector and the namespace controller made, as [`GcAction`]s on [`ObjectId`]s.

use std::fmt;

use crate::wire::error::ApiError;

/// An object a garbage collection acted on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ObjectId {
    /// Its `apiVersion`, in the first version its type serves.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
    /// Its namespace; `None` when cluster-scoped.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The propagation policy of a delete (`metav1.DeletionPropagation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Propagation {
    /// Delete now; dependents are collected afterwards.
    Background,
    /// Keep the object (`foregroundDeletion`) until its blocking dependents are gone.
    Foreground,
    /// Keep the object (`orphan`) until its dependents no longer reference it.
    Orphan,
}

impl Propagation {
    /// The wire spelling: `Background`, `Foreground` or `Orphan`.
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Background => "Background",
            Propagation::Foreground => "Foreground",
            Propagation::Orphan => "Orphan",
        }
    }
}

/// One write of a garbage collection, in the order it was made. Each was an ordinary API
/// request (logged with [`RequestOrigin::Controller`](crate::RequestOrigin::Controller)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GcAction {
    /// The garbage collector deleted an object none of whose owners is alive
    /// (`attemptToDeleteItem`), with the policy its own finalizers ask for (else Background),
    /// or Foreground when an owner is deleted in the foreground and the object has dependents.
    /// `removed`: it left storage at once (else it is terminating).
    Deleted {
        /// The object.
        object: ObjectId,
        /// The delete's propagation policy.
        propagation: Propagation,
        /// Whether it left storage.
        removed: bool,
    },
    /// The garbage collector removed owner references: dangling ones (and ones to owners
    /// waiting for foreground deletion) from an object that keeps a live owner, or the one to an
    /// owner deleted with `Orphan` (`orphanDependents`).
    OwnerReferencesRemoved {
        /// The dependent.
        object: ObjectId,
        /// The uids of the owners no longer referenced.
        owners: Vec<String>,
    },
    /// The garbage collector set `blockOwnerDeletion: false` on an object's owner references,
    /// to break a cycle of foreground deletions.
    OwnerReferencesUnblocked {
        /// The dependent.
        object: ObjectId,
    },
    /// The garbage collector removed its finalizer (`orphan` or `foregroundDeletion`) from an
    /// object whose dependents were handled. `removed`: the object left storage with it.
    FinalizerRemoved {
        /// The object.
        object: ObjectId,
        /// `orphan` or `foregroundDeletion`.
        finalizer: String,
        /// Whether it left storage.
        removed: bool,
    },
    /// The namespace controller deleted an object of a terminating namespace (DeleteCollection,
    /// Background). `removed`: it left storage at once.
    NamespaceContentDeleted {
        /// The object.
        object: ObjectId,
        /// Whether it left storage.
        removed: bool,
    },
    /// The namespace controller wrote a terminating namespace's status: phase `Terminating`, or
    /// its deletion conditions (`NamespaceContentRemaining`, `NamespaceFinalizersRemaining`, ...).
    NamespaceStatusUpdated {
        /// The Namespace.
        namespace: ObjectId,
    },
    /// The namespace controller removed `kubernetes` from an emptied namespace's
    /// `spec.finalizers` (`/finalize`). `removed`: the Namespace left storage with it.
    NamespaceFinalized {
        /// The Namespace.
        namespace: ObjectId,
        /// Whether it left storage.
        removed: bool,
    },
    /// A controller's write was refused; the controller would retry it later.
    Failed {
        /// The object.
        object: ObjectId,
        /// The server's answer.
        error: ApiError,
    },
}

/// What [`ApiServer::collect_garbage`](crate::ApiServer::collect_garbage) did.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, DeleteParams, PostParams};
/// use recon_fake::{ApiServer, GcAction, Propagation};
/// use serde_json::json;
///
/// let server = ApiServer::new();
/// let api: Api<ConfigMap> = Api::default_namespaced(server.client());
/// let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owner"}}))?;
/// let owner = api.create(&PostParams::default(), &owner).await?;
/// let dependent: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "dependent",
///     "finalizers": ["example.com/keep"],
///     "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}}))?;
/// api.create(&PostParams::default(), &dependent).await?;
/// api.delete("owner", &DeleteParams::default()).await?;
///
/// let report = server.collect_garbage();
/// let GcAction::Deleted { object, propagation, removed } = &report.actions[0] else { panic!() };
/// assert_eq!(object.to_string(), "ConfigMap default/dependent");
/// assert_eq!((*propagation, *removed), (Propagation::Background, false), "kept by its finalizer");
/// assert!(report.removed().is_empty());
/// # Ok(())
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GarbageCollection {
    /// Every write, in order.
    pub actions: Vec<GcAction>,
}

impl GarbageCollection {
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// The objects that left storage, in order.
    pub fn removed(&self) -> Vec<&ObjectId> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                GcAction::Deleted {
                    object,
                    removed: true,
                    ..
                }
                | GcAction::FinalizerRemoved {
                    object,
                    removed: true,
                    ..
                }
                | GcAction::NamespaceContentDeleted {
                    object,
                    removed: true,
                } => Some(object),
                GcAction::NamespaceFinalized {
                    namespace,
                    removed: true,
                } => Some(namespace),
                _ => None,
            })
            .collect()
    }

    /// The writes that were refused.
    pub fn failures(&self) -> Vec<(&ObjectId, &ApiError)> {
        self.actions
            .iter()
            .filter_map(|action| match action {
                GcAction::Failed { object, error } => Some((object, error)),
                _ => None,
            })
            .collect()
    }
}
