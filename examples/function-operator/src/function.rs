//! The `Function` custom resource: what it asks for, and the status the operator writes.

use std::collections::BTreeMap;

use kube::CustomResource;
use recon_core::{Condition, impl_conditioned_status};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::CONDITIONS;

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
