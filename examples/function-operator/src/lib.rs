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
//! | `ResolveImage` | [`SyncReconciler`] | nothing: resolves `spec.image` with [`resolve_image`] | `resolvedImage`, `ImageResolved` |
//! | env | [`ChildReconciler`] | ConfigMap `<name>-env` holding `spec.env` | `envConfigMapName`, `EnvReady` |
//! | configs | [`ChildSetReconciler`] | one ConfigMap `<name>-config-<key>` per entry of `spec.configs` | `configMaps`, `ConfigReady` |
//! | deployment | [`ChildReconciler`] | Deployment `<name>` running the resolved image | `deploymentName`, `availableReplicas`, `DeploymentReady` |
//! | service | [`ChildReconciler`] | Service `<name>`, port 80 to the container's port | `serviceName`, `url`, `ServiceReady` |
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
//! Each child is written through an [`UpdatingObjectManager`] whose merge copies only the
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

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapEnvSource, ConfigMapVolumeSource, Container, ContainerPort, EnvFromSource,
    EnvVar, PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, CustomResourceExt};
use recon_core::{
    ChildReconciler, ChildSetReconciler, ChildSetResult, Condition, ConditionSet, Config, Context,
    Error, OnlyReconcileChildStatus, ResourceReconciler, Sequence, SyncReconciler,
    UpdatingObjectManager, impl_conditioned_status,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// What a Function wants: an image, and how to run and reach it.
// The docs of this struct, its fields and the status's are also the descriptions of the CRD
// schema (what `kubectl explain` shows): no intra-doc links in them.
// clippy reads the `type_ = "string"` of each printer column as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "operators.example.com",
    version = "v1",
    kind = "Function",
    namespaced,
    status = "FunctionStatus",
    derive = "PartialEq",
    shortname = "fn",
    doc = "A function: a container image served by a Deployment behind a Service",
    printcolumn(name = "Image", type_ = "string", json_path = ".status.resolvedImage"),
    printcolumn(name = "URL", type_ = "string", json_path = ".status.url"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionSpec {
    /// The container image, as `docker pull` takes it (`hello`, `ghcr.io/acme/hello:1.2`): one
    /// without a registry is pulled from docker.io, one without a tag or digest is `:latest`.
    pub image: String,
    /// How many pods run it (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i32>,
    /// The port it listens on, also given to it as the `PORT` environment variable (default
    /// 8080).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// Environment variables, kept in the ConfigMap `<name>-env`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Configuration files by key: each key is a ConfigMap `<name>-config-<key>` holding its
    /// files, mounted at `/etc/function/<key>`. A key must be a DNS label of at most 56
    /// characters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub configs: BTreeMap<String, BTreeMap<String, String>>,
}

/// What the operator observed of a Function.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `ImageResolved`, `EnvReady`, `ConfigReady`, `DeploymentReady`, `ServiceReady`, and
    /// `Ready` summing them up.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The image the Deployment runs: `spec.image` with its registry and tag spelled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_image: Option<String>,
    /// The name of the env ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_config_map_name: Option<String>,
    /// The config ConfigMaps that exist, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config_maps: BTreeMap<String, String>,
    /// The name of the Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_name: Option<String>,
    /// How many of its pods are available, as the Deployment reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// The name of the Service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// Where the function answers inside the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl_conditioned_status!(FunctionStatus, CONDITIONS);

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
        resolve_image_step(),
        env_config_map(),
        config_maps(),
        deployment(),
        service(),
    ));
    ResourceReconciler::new(config, steps)
        .named("FunctionReconciler")
        .manage_status()
}

/// Why an image reference cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("image {image:?} is not a valid image reference: {reason}")]
pub struct InvalidImage {
    /// The image as given.
    pub image: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Resolves an image reference as `docker pull` reads it: a reference without a registry is
/// on `docker.io` (a single name under `library/`), and one with neither a tag nor a digest
/// means `:latest`.
///
/// ```
/// use function_operator::resolve_image;
///
/// assert_eq!(resolve_image("hello").unwrap(), "docker.io/library/hello:latest");
/// assert_eq!(resolve_image("acme/hello:1.2").unwrap(), "docker.io/acme/hello:1.2");
/// assert_eq!(resolve_image("localhost:5000/hello").unwrap(), "localhost:5000/hello:latest");
/// assert_eq!(
///     resolve_image("ghcr.io/acme/hello@sha256:0123456789abcdef").unwrap(),
///     "ghcr.io/acme/hello@sha256:0123456789abcdef"
/// );
/// assert!(resolve_image("Hello World").is_err());
/// ```
pub fn resolve_image(image: &str) -> Result<String, InvalidImage> {
    let invalid = |reason| InvalidImage {
        image: image.to_owned(),
        reason,
    };
    if image.is_empty() {
        return Err(invalid("it is empty"));
    }
    if image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let well_formed = digest.split_once(':').is_some_and(|(algorithm, hex)| {
            !algorithm.is_empty()
                && algorithm
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c))
                && hex.len() >= 8
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !well_formed {
            return Err(invalid("its digest is not <algorithm>:<hex>"));
        }
    }
    // A tag is a `:` after the last `/` (a `:` before it is a registry's port).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(invalid("its tag is not valid"));
        }
    }
    let mut components: Vec<&str> = repository.split('/').collect();
    let first = components.first().copied().unwrap_or_default();
    let has_registry = components.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.contains(char::is_uppercase));
    let registry = if has_registry {
        let registry = components.remove(0);
        let valid = registry
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c))
            && !registry.starts_with(['.', '-', ':'])
            && !registry.ends_with(['.', '-', ':']);
        if !valid {
            return Err(invalid("its registry is not a host name"));
        }
        registry
    } else {
        "docker.io"
    };
    let path_component = |c: &str| {
        !c.is_empty()
            && c.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
            && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
            && c.ends_with(|ch: char| ch.is_ascii_alphanumeric())
    };
    if components.is_empty() || !components.iter().all(|c| path_component(c)) {
        return Err(invalid(
            "its repository must be lowercase letters, digits and separators",
        ));
    }
    let mut resolved = registry.to_owned();
    if !has_registry && components.len() == 1 {
        resolved.push_str("/library");
    }
    for component in components {
        resolved.push('/');
        resolved.push_str(component);
    }
    match (tag, digest) {
        (_, Some(digest)) => {
            if let Some(tag) = tag {
                resolved.push(':');
                resolved.push_str(tag);
            }
            resolved.push('@');
            resolved.push_str(digest);
        }
        (Some(tag), None) => {
            resolved.push(':');
            resolved.push_str(tag);
        }
        (None, None) => resolved.push_str(":latest"),
    }
    Ok(resolved)
}

/// Whether `key` may name a config of `spec.configs`: a DNS label (lowercase letters, digits
/// and `-`, starting and ending with a letter or digit) of at most 56 characters, so that its
/// volume name `config-<key>` is a DNS label too.
///
/// ```
/// use function_operator::valid_config_key;
///
/// assert!(valid_config_key("nginx"));
/// assert!(!valid_config_key("Nginx.conf"));
/// ```
pub fn valid_config_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 56
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !key.starts_with('-')
        && !key.ends_with('-')
}

// --- names and labels ------------------------------------------------------------------------

fn name_of(function: &Function) -> String {
    function.metadata.name.clone().unwrap_or_default()
}

fn env_config_map_name(function: &Function) -> String {
    format!("{}-env", name_of(function))
}

fn config_map_name(function: &Function, key: &str) -> String {
    format!("{}-config-{key}", name_of(function))
}

fn config_volume_name(key: &str) -> String {
    format!("config-{key}")
}

fn port_of(function: &Function) -> i32 {
    function.spec.port.unwrap_or(DEFAULT_PORT)
}

/// What selects a Function's pods.
fn selector_labels(function: &Function) -> BTreeMap<String, String> {
    [(FUNCTION_LABEL.to_owned(), name_of(function))].into()
}

/// The labels of every child.
fn labels(function: &Function) -> BTreeMap<String, String> {
    let mut labels = selector_labels(function);
    labels.insert(MANAGED_BY_LABEL.to_owned(), MANAGER.to_owned());
    labels
}

fn child_meta(name: String, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

fn has_label(meta: &ObjectMeta, key: &str, value: &str) -> bool {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(key))
        .is_some_and(|v| v == value)
}

/// Copies the desired labels onto `current`, leaving the labels others set.
fn merge_labels(current: &mut ObjectMeta, desired: &ObjectMeta) {
    let Some(wanted) = desired.labels.as_ref().filter(|l| !l.is_empty()) else {
        return;
    };
    let labels = current.labels.get_or_insert_default();
    for (key, value) in wanted {
        if labels.get(key) != Some(value) {
            labels.insert(key.clone(), value.clone());
        }
    }
}

/// The valid keys of `spec.configs`, in order.
fn config_keys(function: &Function) -> impl Iterator<Item = &String> {
    function.spec.configs.keys().filter(|k| valid_config_key(k))
}

// --- conditions ---------------------------------------------------------------------------------

/// Why a child could not be written, as a condition reason and message.
fn failure(err: &Error) -> (String, String) {
    match err.as_api_error() {
        Some(status) if status.reason == "AlreadyExists" => (
            "NotOwned".to_owned(),
            format!("{}, and this Function does not own it", status.message),
        ),
        Some(status) if !status.reason.is_empty() => {
            (status.reason.clone(), status.message.clone())
        }
        _ => ("Failed".to_owned(), err.to_string()),
    }
}

fn status_of(function: &mut Function) -> &mut FunctionStatus {
    function.status.get_or_insert_default()
}

// --- ResolveImage ------------------------------------------------------------------------------

fn resolve_image_step() -> SyncReconciler<Function> {
    SyncReconciler::<Function>::new("ResolveImage").sync(async |ctx, function| {
        let resolved = resolve_image(&function.spec.image);
        let status = status_of(function);
        let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
        match resolved {
            Ok(image) => {
                conditions.mark_true("ImageResolved", "Resolved", "");
                status.resolved_image = Some(image);
            }
            Err(err) => {
                conditions.mark_false("ImageResolved", "InvalidImage", &err.to_string());
                status.resolved_image = None;
            }
        }
        Ok(())
    })
}

// --- the env ConfigMap ---------------------------------------------------------------------------

fn merge_config_map(current: &mut ConfigMap, desired: &ConfigMap) {
    merge_labels(&mut current.metadata, &desired.metadata);
    current.data = desired.data.clone();
}

fn desired_env_config_map(function: &Function) -> ConfigMap {
    let mut labels = labels(function);
    labels.insert(COMPONENT_LABEL.to_owned(), "env".to_owned());
    ConfigMap {
        metadata: child_meta(env_config_map_name(function), labels),
        data: Some(function.spec.env.clone()).filter(|d| !d.is_empty()),
        ..ConfigMap::default()
    }
}

fn env_config_map() -> ChildReconciler<Function, ConfigMap> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_config_map),
        |_ctx, function: &Function| Ok(Some(desired_env_config_map(function))),
        reflect_env_config_map,
    )
    .named("EnvConfigMap")
    // The Function owns the config ConfigMaps too: the env ConfigMap is the one marked `env`.
    .our_child(|_, child| has_label(&child.metadata, COMPONENT_LABEL, "env"))
}

fn reflect_env_config_map(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&ConfigMap>, Error>,
) -> Result<(), Error> {
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(config_map)) => {
            conditions.mark_true("EnvReady", "ConfigMapReady", "");
            status.env_config_map_name = config_map.metadata.name.clone();
        }
        Ok(None) => {
            conditions.mark_unknown(
                "EnvReady",
                "NoConfigMap",
                "the env ConfigMap does not exist",
            );
            status.env_config_map_name = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("EnvReady", &reason, &message);
            status.env_config_map_name = None;
        }
    }
    Ok(())
}

// --- the config ConfigMaps -----------------------------------------------------------------------

fn desired_config_maps(function: &Function) -> Vec<ConfigMap> {
    config_keys(function)
        .map(|key| {
            let mut labels = labels(function);
            labels.insert(COMPONENT_LABEL.to_owned(), "config".to_owned());
            labels.insert(CONFIG_KEY_LABEL.to_owned(), key.clone());
            let files = function.spec.configs.get(key).cloned().unwrap_or_default();
            ConfigMap {
                metadata: child_meta(config_map_name(function, key), labels),
                data: Some(files).filter(|d| !d.is_empty()),
                ..ConfigMap::default()
            }
        })
        .collect()
}

fn config_key_of(config_map: &ConfigMap) -> String {
    config_map
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CONFIG_KEY_LABEL))
        .cloned()
        .unwrap_or_default()
}

fn config_maps() -> ChildSetReconciler<Function, ConfigMap> {
    ChildSetReconciler::new(
        UpdatingObjectManager::new(merge_config_map),
        |_ctx, function: &Function| Ok(desired_config_maps(function)),
        config_key_of,
        reflect_config_maps,
    )
    .named("ConfigMaps")
    .our_child(|_, child| {
        has_label(&child.metadata, COMPONENT_LABEL, "config") && !config_key_of(child).is_empty()
    })
}

fn reflect_config_maps(
    ctx: &Context,
    function: &mut Function,
    set: &ChildSetResult<ConfigMap>,
) -> Result<(), Error> {
    let invalid: Vec<&String> = function
        .spec
        .configs
        .keys()
        .filter(|k| !valid_config_key(k))
        .collect();
    let invalid = (!invalid.is_empty()).then(|| {
        let keys: Vec<String> = invalid.iter().map(|k| format!("{k:?}")).collect();
        format!(
            "config keys must be DNS labels of at most 56 characters: {}",
            keys.join(", ")
        )
    });
    let existing: BTreeMap<String, String> = set
        .children
        .iter()
        .filter_map(|item| {
            let name = item.child.as_ref()?.metadata.name.clone()?;
            Some((item.id.clone(), name))
        })
        .collect();
    let failures: Vec<(String, String)> = set
        .children
        .iter()
        .filter_map(|item| {
            let (reason, message) = failure(item.error.as_ref()?);
            Some((reason, format!("{}: {message}", item.id)))
        })
        .collect();
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    if let Some((reason, _)) = failures.first() {
        let messages: Vec<&str> = failures.iter().map(|(_, m)| m.as_str()).collect();
        conditions.mark_false("ConfigReady", reason, &messages.join("; "));
    } else if let Some(message) = invalid {
        conditions.mark_false("ConfigReady", "InvalidConfigKey", &message);
    } else {
        conditions.mark_true("ConfigReady", "ConfigMapsReady", "");
    }
    status.config_maps = existing;
    Ok(())
}

// --- the Deployment -------------------------------------------------------------------------------

fn desired_deployment(function: &Function, image: &str) -> Deployment {
    let port = port_of(function);
    let keys: Vec<&String> = config_keys(function).collect();
    let mounts: Vec<VolumeMount> = keys
        .iter()
        .map(|key| VolumeMount {
            name: config_volume_name(key),
            mount_path: format!("{CONFIG_MOUNT_ROOT}/{key}"),
            read_only: Some(true),
            ..VolumeMount::default()
        })
        .collect();
    let volumes: Vec<Volume> = keys
        .iter()
        .map(|key| Volume {
            name: config_volume_name(key),
            config_map: Some(ConfigMapVolumeSource {
                name: config_map_name(function, key),
                // The API server's default (0644), written out so it is not drift.
                default_mode: Some(0o644),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        })
        .collect();
    let container = Container {
        name: CONTAINER_NAME.to_owned(),
        image: Some(image.to_owned()),
        image_pull_policy: Some(pull_policy(image).to_owned()),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_owned()),
            container_port: port,
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        env: Some(vec![EnvVar {
            name: "PORT".to_owned(),
            value: Some(port.to_string()),
            ..EnvVar::default()
        }]),
        env_from: Some(vec![EnvFromSource {
            config_map_ref: Some(ConfigMapEnvSource {
                name: env_config_map_name(function),
                ..ConfigMapEnvSource::default()
            }),
            ..EnvFromSource::default()
        }]),
        volume_mounts: Some(mounts).filter(|m| !m.is_empty()),
        ..Container::default()
    };
    let mut deployment = Deployment {
        metadata: child_meta(name_of(function), labels(function)),
        ..Deployment::default()
    };
    *compat::spec_mut(&mut deployment) = DeploymentSpec {
        replicas: Some(function.spec.replicas.unwrap_or(DEFAULT_REPLICAS)),
        selector: LabelSelector {
            match_labels: Some(selector_labels(function)),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels(function)),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![container],
                volumes: Some(volumes).filter(|v| !v.is_empty()),
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    };
    deployment
}

/// The pull policy kube-apiserver defaults a container to for `image`
/// (`pkg/apis/core/v1/defaults.go`, `SetDefaults_Container`): `Always` for the `latest` tag or
/// none, `IfNotPresent` otherwise. Owned rather than left to defaulting, which happens only
/// at creation: a Function whose image moves from `hello` to `hello:2` would keep `Always`,
/// where one created with `hello:2` gets `IfNotPresent` (found by the exploration's fresh start).
fn pull_policy(image: &str) -> &'static str {
    let (name, digest) = image
        .split_once('@')
        .map_or((image, None), |(n, d)| (n, Some(d)));
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':').map(|(_, tag)| tag) {
        Some("latest") => "Always",
        Some(_) => "IfNotPresent",
        None if digest.is_some() => "IfNotPresent",
        None => "Always",
    }
}

/// Copies what the operator owns of a Deployment: its labels, replicas, the pod labels and
/// volumes, and the image, pull policy, ports, env and mounts of the `function` container. The selector is
/// immutable and stays as created; everything else stays as stored.
fn merge_deployment(current: &mut Deployment, desired: &Deployment) {
    merge_labels(&mut current.metadata, &desired.metadata);
    let Some(want) = compat::spec(desired) else {
        return;
    };
    let spec = compat::spec_mut(current);
    if spec.selector == LabelSelector::default() {
        spec.selector = want.selector.clone();
    }
    spec.replicas = want.replicas;
    if let Some(want_meta) = &want.template.metadata {
        merge_labels(spec.template.metadata.get_or_insert_default(), want_meta);
    }
    let Some(want_pod) = want.template.spec.as_ref() else {
        return;
    };
    let pod = spec.template.spec.get_or_insert_default();
    pod.volumes = want_pod.volumes.clone();
    for wanted in &want_pod.containers {
        match pod.containers.iter_mut().find(|c| c.name == wanted.name) {
            Some(container) => {
                container.image = wanted.image.clone();
                container.image_pull_policy = wanted.image_pull_policy.clone();
                container.ports = wanted.ports.clone();
                container.env = wanted.env.clone();
                container.env_from = wanted.env_from.clone();
                container.volume_mounts = wanted.volume_mounts.clone();
            }
            None => pod.containers.push(wanted.clone()),
        }
    }
}

fn deployment() -> ChildReconciler<Function, Deployment> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_deployment),
        |_ctx, function: &Function| {
            let image = function
                .status
                .as_ref()
                .and_then(|s| s.resolved_image.as_deref());
            match image {
                Some(image) => Ok(Some(desired_deployment(function, image))),
                // Nothing to run yet: leave an existing Deployment as it is.
                None => Err(OnlyReconcileChildStatus.into()),
            }
        },
        reflect_deployment,
    )
    .named("Deployment")
}

/// How ready a Deployment is: `Some(true)` available, `Some(false)` failed (with the reason
/// and message), `None` still progressing.
fn deployment_readiness(deployment: &Deployment) -> (Option<bool>, String, String) {
    let progressing = |message: String| (None, "DeploymentProgressing".to_owned(), message);
    let name = deployment.metadata.name.as_deref().unwrap_or_default();
    let waiting = format!("waiting for Deployment {name:?} to become available");
    let Some(status) = deployment.status.as_ref() else {
        return progressing(waiting);
    };
    // A status older than the spec says nothing about the spec.
    if status.observed_generation < deployment.metadata.generation {
        return progressing(waiting);
    }
    let conditions = status.conditions.as_deref().unwrap_or_default();
    let condition = |type_: &str| {
        conditions
            .iter()
            .find(|c| compat::condition_type(c) == type_)
    };
    let failed = condition("ReplicaFailure")
        .filter(|c| compat::condition_status(c) == "True")
        .or_else(|| condition("Progressing").filter(|c| compat::condition_status(c) == "False"));
    if let Some(failed) = failed {
        let reason = failed
            .reason
            .clone()
            .unwrap_or_else(|| "DeploymentFailed".to_owned());
        return (
            Some(false),
            reason,
            failed.message.clone().unwrap_or_default(),
        );
    }
    match condition("Available") {
        Some(available) if compat::condition_status(available) == "True" => {
            (Some(true), "DeploymentAvailable".to_owned(), String::new())
        }
        Some(available) => progressing(available.message.clone().unwrap_or(waiting)),
        None => progressing(waiting),
    }
}

fn reflect_deployment(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&Deployment>, Error>,
) -> Result<(), Error> {
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(deployment)) => {
            match deployment_readiness(deployment) {
                (Some(true), reason, message) => {
                    conditions.mark_true("DeploymentReady", &reason, &message);
                }
                (Some(false), reason, message) => {
                    conditions.mark_false("DeploymentReady", &reason, &message);
                }
                (None, reason, message) => {
                    conditions.mark_unknown("DeploymentReady", &reason, &message);
                }
            }
            status.deployment_name = deployment.metadata.name.clone();
            status.available_replicas = deployment
                .status
                .as_ref()
                .and_then(|s| s.available_replicas);
        }
        Ok(None) => {
            conditions.mark_unknown(
                "DeploymentReady",
                "NoDeployment",
                "the Deployment waits for a resolved image",
            );
            status.deployment_name = None;
            status.available_replicas = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("DeploymentReady", &reason, &message);
            status.deployment_name = None;
            status.available_replicas = None;
        }
    }
    Ok(())
}

// --- the Service ----------------------------------------------------------------------------------

fn desired_service(function: &Function) -> Service {
    Service {
        metadata: child_meta(name_of(function), labels(function)),
        spec: Some(ServiceSpec {
            selector: Some(selector_labels(function)),
            ports: Some(vec![ServicePort {
                name: Some("http".to_owned()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(port_of(function))),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// Copies what the operator owns of a Service: its labels, selector and ports. What the API
/// server allocates (`clusterIP`, ...) stays as stored.
fn merge_service(current: &mut Service, desired: &Service) {
    merge_labels(&mut current.metadata, &desired.metadata);
    let Some(want) = desired.spec.as_ref() else {
        return;
    };
    let spec = current.spec.get_or_insert_default();
    spec.selector = want.selector.clone();
    spec.ports = want.ports.clone();
}

fn service() -> ChildReconciler<Function, Service> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_service),
        |_ctx, function: &Function| Ok(Some(desired_service(function))),
        reflect_service,
    )
    .named("Service")
}

fn reflect_service(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&Service>, Error>,
) -> Result<(), Error> {
    let namespace = function.metadata.namespace.clone().unwrap_or_default();
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(service)) => {
            conditions.mark_true("ServiceReady", "ServiceReady", "");
            let name = service.metadata.name.clone().unwrap_or_default();
            status.url = Some(format!("http://{name}.{namespace}.svc.cluster.local"));
            status.service_name = Some(name);
        }
        Ok(None) => {
            conditions.mark_unknown("ServiceReady", "NoService", "the Service does not exist");
            status.service_name = None;
            status.url = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("ServiceReady", &reason, &message);
            status.service_name = None;
            status.url = None;
        }
    }
    Ok(())
}

/// The Deployment fields whose Rust types differ between the Kubernetes versions k8s-openapi
/// supports: from 1.37 on, `Deployment::spec` is required and a `DeploymentCondition`'s `type`
/// and `status` are optional. The library compiles for whichever version the binary picks.
mod compat {
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentSpec};

    k8s_openapi::k8s_if_le_1_36! {
        pub(crate) fn spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
            deployment.spec.as_ref()
        }

        pub(crate) fn spec_mut(deployment: &mut Deployment) -> &mut DeploymentSpec {
            deployment.spec.get_or_insert_default()
        }

        pub(crate) fn condition_type(condition: &DeploymentCondition) -> &str {
            &condition.type_
        }

        pub(crate) fn condition_status(condition: &DeploymentCondition) -> &str {
            &condition.status
        }
    }

    k8s_openapi::k8s_if_ge_1_37! {
        pub(crate) fn spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
            Some(&deployment.spec)
        }

        pub(crate) fn spec_mut(deployment: &mut Deployment) -> &mut DeploymentSpec {
            &mut deployment.spec
        }

        pub(crate) fn condition_type(condition: &DeploymentCondition) -> &str {
            condition.type_.as_deref().unwrap_or_default()
        }

        pub(crate) fn condition_status(condition: &DeploymentCondition) -> &str {
            condition.status.as_deref().unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies_are_what_the_api_server_defaults() {
        for (image, policy) in [
            ("docker.io/library/hello:latest", "Always"),
            ("docker.io/library/hello", "Always"),
            ("localhost:5000/hello", "Always"),
            ("docker.io/library/hello:2", "IfNotPresent"),
            ("localhost:5000/hello:2", "IfNotPresent"),
            (
                "docker.io/library/hello@sha256:0123456789abcdef",
                "IfNotPresent",
            ),
            (
                "docker.io/library/hello:latest@sha256:0123456789abcdef",
                "Always",
            ),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn images_resolve_as_docker_pull_reads_them() {
        let cases = [
            ("hello", "docker.io/library/hello:latest"),
            ("hello:1.0", "docker.io/library/hello:1.0"),
            ("acme/hello", "docker.io/acme/hello:latest"),
            ("docker.io/acme/hello:2", "docker.io/acme/hello:2"),
            (
                "ghcr.io/acme/team/hello:v1.2.3",
                "ghcr.io/acme/team/hello:v1.2.3",
            ),
            ("localhost/hello", "localhost/hello:latest"),
            ("localhost:5000/hello", "localhost:5000/hello:latest"),
            (
                "registry.example.com:5000/a/b:c",
                "registry.example.com:5000/a/b:c",
            ),
            (
                "hello@sha256:0123456789abcdef",
                "docker.io/library/hello@sha256:0123456789abcdef",
            ),
            (
                "ghcr.io/acme/hello:1@sha256:0123456789abcdef",
                "ghcr.io/acme/hello:1@sha256:0123456789abcdef",
            ),
        ];
        for (image, resolved) in cases {
            assert_eq!(resolve_image(image).as_deref(), Ok(resolved), "{image}");
        }
    }

    #[test]
    fn malformed_images_are_refused_with_a_reason() {
        let cases = [
            ("", "it is empty"),
            ("hello world", "it contains whitespace"),
            ("hello:", "its tag is not valid"),
            ("hello:-x", "its tag is not valid"),
            (
                "Hello",
                "its repository must be lowercase letters, digits and separators",
            ),
            (
                "acme//hello",
                "its repository must be lowercase letters, digits and separators",
            ),
            (
                "ghcr.io/",
                "its repository must be lowercase letters, digits and separators",
            ),
            ("hello@sha256", "its digest is not <algorithm>:<hex>"),
            ("hello@sha256:xyz", "its digest is not <algorithm>:<hex>"),
            ("-bad.io/hello", "its registry is not a host name"),
            (
                "héllo",
                "its repository must be lowercase letters, digits and separators",
            ),
        ];
        for (image, reason) in cases {
            let err = resolve_image(image).expect_err(image);
            assert_eq!((err.image.as_str(), err.reason), (image, reason));
        }
    }

    #[test]
    fn config_keys_are_dns_labels_short_enough_for_a_volume_name() {
        assert!(valid_config_key("nginx"));
        assert!(valid_config_key("a-1"));
        assert!(valid_config_key(&"x".repeat(56)));
        for key in ["", "-a", "a-", "A", "a.b", "a_b", &"x".repeat(57)] {
            assert!(!valid_config_key(key), "{key:?}");
        }
    }

    fn deployment_with(generation: i64, status: serde_json::Value) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "hello", "generation": generation},
            "spec": {"selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    }

    fn condition(type_: &str, status: &str, reason: &str) -> serde_json::Value {
        serde_json::json!({"type": type_, "status": status, "reason": reason, "message": reason})
    }

    #[test]
    fn a_deployment_is_ready_when_available_and_failed_when_stuck() {
        let waiting = "waiting for Deployment \"hello\" to become available".to_owned();
        let readiness =
            |generation, status| deployment_readiness(&deployment_with(generation, status));
        assert_eq!(
            readiness(1, serde_json::Value::Null),
            (None, "DeploymentProgressing".to_owned(), waiting.clone())
        );
        let available = serde_json::json!({"observedGeneration": 1,
            "conditions": [condition("Available", "True", "MinimumReplicasAvailable")]});
        assert_eq!(
            readiness(1, available.clone()),
            (Some(true), "DeploymentAvailable".to_owned(), String::new())
        );
        assert_eq!(
            readiness(2, available),
            (None, "DeploymentProgressing".to_owned(), waiting),
            "a status of an older generation"
        );
        let stuck = serde_json::json!({"observedGeneration": 1, "conditions": [
            condition("Available", "True", "MinimumReplicasAvailable"),
            condition("Progressing", "False", "ProgressDeadlineExceeded")]});
        assert_eq!(
            readiness(1, stuck),
            (
                Some(false),
                "ProgressDeadlineExceeded".to_owned(),
                "ProgressDeadlineExceeded".to_owned()
            )
        );
        let quota = serde_json::json!({"observedGeneration": 1, "conditions": [
            condition("ReplicaFailure", "True", "FailedCreate")]});
        assert_eq!(
            readiness(1, quota),
            (
                Some(false),
                "FailedCreate".to_owned(),
                "FailedCreate".to_owned()
            )
        );
    }
}
