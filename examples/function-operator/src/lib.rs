//! An operator for a `Function` custom resource (`operators.example.com/v1`, namespaced, with a
//! status subresource), written as a recon reconciler tree.
//!
//! A Function names a container image and how to run it; the operator keeps a Deployment, a
//! Service and ConfigMaps as the Function wants them, and reports on the Function's status how
//! far they are. [`reconciler`] builds the tree, a [`Sequence`] under a
//! [`ResourceReconciler`] that manages the status (initialises the conditions, records
//! `observedGeneration`, writes status once and only when it changed):
//!
//! | step | kind | keeps | reflects on the status |
//! |---|---|---|---|
//! | `ResolveImage` | [`SyncReconciler`](recon_core::SyncReconciler) | nothing: resolves `spec.image` with [`resolve_image`] | `resolvedImage`, `ImageResolved` |
//! | env | [`ChildReconciler`](recon_core::ChildReconciler) | ConfigMap `<name>-env` holding `spec.env` | `envConfigMapName`, `EnvReady` |
//! | configs | [`ChildSetReconciler`](recon_core::ChildSetReconciler) | one ConfigMap `<name>-config-<key>` per entry of `spec.configs` | `configMaps`, `ConfigReady` |
//! | deployment | [`ChildReconciler`](recon_core::ChildReconciler) | Deployment `<name>` running the resolved image | `deploymentName`, `availableReplicas`, `DeploymentReady` |
//! | service | [`ChildReconciler`](recon_core::ChildReconciler) | Service `<name>`, port 80 to the container's port | `serviceName`, `url`, `ServiceReady` |
//!
//! `Ready` is `True` once every one of those conditions is (see [`CONDITIONS`]).
//!
//! The Deployment runs one container, `function`, with the resolved image, the `PORT` it
//! listens on (`spec.port`, default [`DEFAULT_PORT`]), every entry of the env ConfigMap as an
//! environment variable (`envFrom`), and each config ConfigMap mounted read-only at
//! `/etc/function/<key>`. While the image cannot be resolved, an existing Deployment is left
//! as it is (and reflected); none is created.
//!
//! # Writes
//!
//! Each child is written through an [`UpdatingObjectManager`](recon_core::UpdatingObjectManager) whose merge copies only the
//! fields this operator owns (its labels, the ConfigMaps' data, the Deployment's replicas, pod
//! labels, volumes and the `function` container's image, pull policy, ports, env and mounts, the
//! Service's selector and ports) onto the child as stored. What the API server fills in (a
//! Deployment's strategy, a Service's `clusterIP`, ...) and what others add
//! (labels, annotations, other containers) is left alone, so a reconcile of a Function whose
//! children are as desired sends no write at all. For the same reason the desired objects spell
//! out the defaults of the fields the operator does own (`protocol: TCP`, a volume's
//! `defaultMode`), and leave empty lists out, as the API server stores them.
//!
//! # Failures
//!
//! A child the operator cannot write for a reason the children reconcilers reflect
//! (`AlreadyExists`: an object of that name the Function does not own; `Forbidden`;
//! `Invalid`) turns its condition `False` with a reason (`NotOwned` for a foreign object, else
//! the API server's reason) and the API server's message; the reconcile goes on with the other
//! children and succeeds, the failure stays on the status until a change to the Function or
//! its children brings it back. A foreign object is never taken over: once it is gone, the
//! operator creates its child. Any other failure (the API server unavailable, a conflict) ends the reconcile with an
//! error, to be retried, after writing the status gathered so far.
//!
//! # Running it
//!
//! ```no_run
//! # async fn run(client: kube::Client) {
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use kube::Api;
//! use kube::runtime::watcher;
//! use recon_core::{Config, ResourceReconciler};
//!
//! let reconciler = function_operator::reconciler(Config::new(client.clone(), "function-operator"));
//! reconciler
//!     .controller(Api::all(client), watcher::Config::default())
//!     .run(ResourceReconciler::reconcile_object, ResourceReconciler::error_policy, Arc::new(reconciler))
//!     .for_each(|_| async {})
//!     .await;
//! # }
//! ```
//!
//! The controller watches the Functions and every kind of child: a change to a child
//! re-reconciles its Function (owner references), and the removal of a foreign object that
//! stood in a child's way re-reconciles the Function that wanted the name (the tracker).

mod config_maps;
mod deployment;
mod function;
mod image;
mod naming;
mod service;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use recon_core::{ConditionSet, Config, ResourceReconciler, Sequence};

pub use config_maps::valid_config_key;
pub use function::{Function, FunctionSpec, FunctionStatus};
pub use image::{InvalidImage, resolve_image};

/// The port the function listens on when `spec.port` is left out.
pub const DEFAULT_PORT: i32 = 8080;

/// The port the Service exposes (forwarded to the function's port).
pub const SERVICE_PORT: i32 = 80;

/// The replicas of a Function that does not say.
pub const DEFAULT_REPLICAS: i32 = 1;

/// The name of the container running the function.
pub const CONTAINER_NAME: &str = "function";

/// The label every child carries, with the Function's name; the Deployment selects its pods
/// and the Service its endpoints by it.
pub const FUNCTION_LABEL: &str = "operators.example.com/function";

/// The label telling a Function's ConfigMaps apart: `env` for the env ConfigMap, `config`
/// for those of `spec.configs`.
pub const COMPONENT_LABEL: &str = "operators.example.com/component";

/// The label holding the `spec.configs` key a config ConfigMap belongs to.
pub const CONFIG_KEY_LABEL: &str = "operators.example.com/config-key";

/// The `app.kubernetes.io/managed-by` label, on every child.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The value of [`MANAGED_BY_LABEL`].
pub const MANAGER: &str = "function-operator";

/// The directory the config ConfigMaps are mounted under, one subdirectory per key.
pub const CONFIG_MOUNT_ROOT: &str = "/etc/function";

/// The status conditions: `Ready` is `True` once the image is resolved and every child is
/// ready.
pub const CONDITIONS: ConditionSet = ConditionSet::living(&[
    "ImageResolved",
    "EnvReady",
    "ConfigReady",
    "DeploymentReady",
    "ServiceReady",
]);

/// The operator's RBAC manifest (`rbac.yaml`): its service account `default/function-operator`, the
/// ClusterRole of what it may do and the binding between them, as YAML documents. Its tests
/// run under it; the demo applies it and runs the operator as that account.
pub const RBAC_MANIFEST: &str = include_str!("../rbac.yaml");

/// The Function CRD, as `#[derive(CustomResource)]` generates it.
pub fn crd() -> CustomResourceDefinition {
    Function::crd()
}

/// The reconciler of Functions (see the [crate documentation](crate) for its steps), writing
/// with `config`'s client and publishing events through its recorder.
pub fn reconciler(config: Config) -> ResourceReconciler<Function> {
    let steps = Sequence::of((
        image::resolve_image_step(),
        config_maps::env_config_map(),
        config_maps::config_maps(),
        deployment::deployment(),
        service::service(),
    ));
    ResourceReconciler::new(config, steps)
        .named("FunctionReconciler")
        .manage_status()
}
