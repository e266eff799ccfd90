//! What a reconciler tree asks its controller to watch. Each node declares the kinds it reads
//! or writes in [`SubReconciler::setup`](crate::SubReconciler::setup); the root gathers them
//! when the controller is built ([`ResourceReconciler::controller`](crate::ResourceReconciler::controller)).

use kube::Resource;
use kube::api::ApiResource;

/// How a change to a watched object finds the resource to reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Trigger {
    /// Reconcile the owner its owner references name (children the tree creates).
    Owner,
    /// Reconcile the requests the [`Tracker`](crate::Tracker) says observe it.
    Tracked,
}

/// One watch: a kind, and what a change to one of its objects triggers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Watch {
    /// The kind watched.
    pub resource: ApiResource,
    /// What a change triggers.
    pub trigger: Trigger,
}

/// The watches a reconciler tree contributes, without duplicates, in the order first declared.
///
/// ```
/// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// use recon_core::{Setup, Trigger};
///
/// let mut setup = Setup::default();
/// setup.owns::<ConfigMap>();
/// setup.tracks::<Secret>();
/// setup.owns::<ConfigMap>();
/// let kinds: Vec<(&str, Trigger)> = setup
///     .watches()
///     .iter()
///     .map(|w| (w.resource.kind.as_str(), w.trigger))
///     .collect();
/// assert_eq!(kinds, [("ConfigMap", Trigger::Owner), ("Secret", Trigger::Tracked)]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Setup {
    watches: Vec<Watch>,
}

impl Setup {
    /// Objects of `K` the resource controls: a change reconciles their controller owner.
    pub fn owns<K: Resource<DynamicType = ()>>(&mut self) {
        self.owns_with(ApiResource::erase::<K>(&()));
    }

    /// [`Setup::owns`] for a kind known at runtime.
    pub fn owns_with(&mut self, resource: ApiResource) {
        self.add(resource, Trigger::Owner);
    }

    /// Objects of `K` the tree tracks: a change reconciles their observers.
    pub fn tracks<K: Resource<DynamicType = ()>>(&mut self) {
        self.tracks_with(ApiResource::erase::<K>(&()));
    }

    /// [`Setup::tracks`] for a kind known at runtime.
    pub fn tracks_with(&mut self, resource: ApiResource) {
        self.add(resource, Trigger::Tracked);
    }

    fn add(&mut self, resource: ApiResource, trigger: Trigger) {
        let watch = Watch { resource, trigger };
        if !self.watches.contains(&watch) {
            self.watches.push(watch);
        }
    }

    /// The watches declared so far.
    pub fn watches(&self) -> &[Watch] {
        &self.watches
    }
}
