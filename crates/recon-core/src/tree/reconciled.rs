//! The bound on the resource types a tree reconciles, shared by the roots, the child
//! reconcilers, the object managers and the admission adapter.

use std::fmt::Debug;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a reconciled resource type must be: a kube `Resource` that serde reads and writes,
/// cloneable and shareable. Every k8s-openapi type, every `#[derive(CustomResource)]` type and
/// `DynamicObject` is one.
pub trait Reconciled:
    Resource<DynamicType: Clone + Send + Sync + 'static>
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<T> Reconciled for T where
    T: Resource<DynamicType: Clone + Send + Sync + 'static>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}
