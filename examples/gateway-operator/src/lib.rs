//! An operator for a `Gateway` custom resource (`operators.example.com/v1`, namespaced), built
//! as a recon reconciler tree.
//!
//! A [`Gateway`] names, in `spec.settings`, a ConfigMap of its namespace holding its settings:
//!
//! | key | required | value |
//! |---|---|---|
//! | `listen` | yes | the address the gateway listens on: `port`, `:port`, `host:port` or `[ipv6]:port` |
//! | `upstream` | yes | the `http://` or `https://` URL it forwards to |
//! | `timeout` | no | the upstream timeout, a positive whole number of `ms`, `s`, `m` or `h` |
//!
//! Other keys are ignored; values are trimmed of surrounding whitespace. The operator runs the
//! gateway as a Deployment named after the Gateway, whose pod template carries the settings as
//! environment variables (`GATEWAY_LISTEN`, `GATEWAY_UPSTREAM`, `GATEWAY_TIMEOUT`), the
//! listening port as the container port `http`, and the settings' hash as the annotation
//! [`SETTINGS_HASH_ANNOTATION`]. Editing the ConfigMap therefore changes the pod template and
//! rolls the Deployment; each ReplicaSet keeps the settings it was rolled out with, so a
//! rollback restores them too.
//!
//! # The reconciler tree
//!
//! ```text
//! ResourceReconciler<Gateway>          reads the Gateway; initialises the conditions; records
//! │                                    observedGeneration; patches status once, if it changed
//! └── Sequence
//!     ├── ResolveSettings              SyncReconciler: ctx.track_and_get the ConfigMap
//!     │                                (tracked found or not), validate it, set SettingsResolved,
//!     │                                stash the settings
//!     └── Deployment                   ChildReconciler + UpdatingObjectManager: create or update
//!                                      the Deployment from the stashed settings, reflect its
//!                                      rollout in DeploymentReady, deploymentName, settingsHash
//! ```
//!
//! `Ready` follows `SettingsResolved` and `DeploymentReady` (a recon [`ConditionSet`]).
//! Under a controller built by [`ResourceReconciler::controller`], the tree's setup declares
//! the watches: Deployments it owns re-reconcile their Gateway, and a change to a ConfigMap
//! re-reconciles the Gateways that track it.
//!
//! The Deployment's labels carry the Gateway's name, and a label value has at most 63
//! characters: for a Gateway with a longer name the server refuses the Deployment, and
//! `DeploymentReady` is `False` with reason `Invalid` and the server's message; so it is for
//! `spec.podLabels` that give a selector label another value (the server refuses a Deployment
//! whose selector does not match its pod template's labels). A Deployment of
//! the Gateway's name that the Gateway does not control is never touched: `DeploymentReady` is
//! `False` with reason `AlreadyExists`, and the Deployment is tracked, so its removal reconciles
//! the Gateway again.
//!
//! # When the settings cannot be used
//!
//! - **The ConfigMap does not exist**: `SettingsResolved` is `False` with reason
//!   `SettingsNotFound` and a message naming it. It stays tracked, so its creation reconciles
//!   the Gateway again.
//! - **The settings are invalid** (a required key missing, a malformed value), or
//!   `spec.settings` is not a valid ConfigMap name: `SettingsResolved` is `False` with reason
//!   `InvalidSettings` and a message listing every problem.
//!
//! Either way no Deployment is created, and an existing Deployment is **left alone**: its
//! template is not changed, so its pods keep running with the last settings that resolved
//! (their hash stays in `status.settingsHash`), and the rollout state of that Deployment is
//! still reflected in `DeploymentReady`. `Ready` is `False` until the settings resolve again.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use kube::{Api, runtime::watcher};
//! use recon_core::{Config, ResourceReconciler};
//!
//! let reconciler = gateway_operator::reconciler(Config::new(client.clone(), "gateway-operator"));
//! reconciler
//!     .controller(Api::all(client), watcher::Config::default())
//!     .run(ResourceReconciler::reconcile_object, ResourceReconciler::error_policy, Arc::new(reconciler))
//!     .for_each(|_| async {})
//!     .await;
//! # }
//! ```

mod deployment;
mod settings;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResource, CustomResourceExt};
use recon_core::{
    ChildReconciler, Condition, ConditionSet, Config, Context, Error, OnlyReconcileChildStatus,
    ResourceReconciler, Sequence, Stasher, SyncReconciler, UpdatingObjectManager,
    impl_conditioned_status,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::deployment::Rollout;
use crate::settings::Settings;

/// The pod-template annotation holding the hash of the settings the pods run with: the
/// SHA-256, in lowercase hex, of the settings written as `key=value` lines in key order, each
/// ending with a newline (for `listen: ":8080"` and `upstream: "http://backend:9000"`, of
/// `"listen=:8080\nupstream=http://backend:9000\n"`).
pub const SETTINGS_HASH_ANNOTATION: &str = "operators.example.com/settings-hash";

/// The image a Gateway without `spec.image` runs.
pub const DEFAULT_IMAGE: &str = "registry.example.com/gateway:1.0";

/// The condition type saying whether the settings ConfigMap was found and is valid.
pub const SETTINGS_RESOLVED: &str = "SettingsResolved";

/// The condition type saying whether the Deployment has rolled out its current template.
pub const DEPLOYMENT_READY: &str = "DeploymentReady";

/// A Gateway's conditions: `Ready` follows [`SETTINGS_RESOLVED`] and [`DEPLOYMENT_READY`].
pub const GATEWAY_CONDITIONS: ConditionSet =
    ConditionSet::living(&[SETTINGS_RESOLVED, DEPLOYMENT_READY]);

/// What a gateway runs with: the ConfigMap holding its settings, and how its Deployment runs it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "operators.example.com",
    version = "v1",
    kind = "Gateway",
    namespaced,
    status = "GatewayStatus",
    doc = "A gateway run by the gateway operator: the ConfigMap holding its settings, its replicas and image (spec), and what the operator observed (status).",
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name": "Settings", "type": "string", "jsonPath": ".spec.settings"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// The name of the ConfigMap, in the Gateway's namespace, holding its settings (keys
    /// `listen`, `upstream` and optionally `timeout`).
    #[schemars(length(min = 1))]
    pub settings: String,
    /// How many gateway pods to run (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i32>,
    /// The gateway image (default `registry.example.com/gateway:1.0`, see `DEFAULT_IMAGE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Labels for the gateway's pods, beside the ones the operator selects them by. Given a
    /// value of its own, a selector label makes the pods unselectable: the API server refuses
    /// the Deployment and `DeploymentReady` says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_labels: Option<BTreeMap<String, String>>,
}

/// What the operator observed of a Gateway.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// The generation of the spec this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`, which follows `SettingsResolved` (the settings ConfigMap was found and is
    /// valid) and `DeploymentReady` (the Deployment has rolled out its current template).
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The settings hash the Deployment's pod template carries (its
    /// `operators.example.com/settings-hash` annotation): the settings its pods run with, which
    /// are the resolved ones once it has rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_hash: Option<String>,
    /// The name of the gateway's Deployment, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_name: Option<String>,
}

impl_conditioned_status!(GatewayStatus, GATEWAY_CONDITIONS);

/// The settings resolved in this reconcile, for the Deployment step.
const SETTINGS: Stasher<Settings> = Stasher::new("gateway-settings");

/// The operator's RBAC manifest (`rbac.yaml`): its service account `default/gateway-operator`, the
/// ClusterRole of what it may do and the binding between them, as YAML documents. Its tests
/// run under it; the demo applies it and runs the operator as that account.
pub const RBAC_MANIFEST: &str = include_str!("../rbac.yaml");

/// The Gateway CRD, with the status subresource.
pub fn crd() -> CustomResourceDefinition {
    Gateway::crd()
}

/// The Gateway reconciler: resolve the settings, then keep the Deployment (see the [crate
/// documentation](crate) for the tree). Share `config`'s tracker with the controller it runs
/// under, as [`ResourceReconciler::controller`] does.
pub fn reconciler(config: Config) -> ResourceReconciler<Gateway> {
    ResourceReconciler::new(config, Sequence::of((resolve_settings(), deployment())))
        .manage_status()
}

/// Reads and tracks the settings ConfigMap; sets `SettingsResolved`; stashes the settings when
/// they are valid.
fn resolve_settings() -> SyncReconciler<Gateway> {
    SyncReconciler::<Gateway>::new("ResolveSettings")
        .sync(resolve_gateway_settings)
        .with_setup(|setup| setup.tracks::<ConfigMap>())
}

/// The sync hook of [`resolve_settings`].
async fn resolve_gateway_settings(ctx: &Context, gateway: &mut Gateway) -> Result<(), Error> {
    let name = gateway.spec.settings.clone();
    let now = ctx.now();
    if !settings::is_object_name(&name) {
        let status = gateway.status.get_or_insert_default();
        GATEWAY_CONDITIONS
            .manage(&mut status.conditions, now)
            .mark_false(
                SETTINGS_RESOLVED,
                "InvalidSettings",
                &format!("spec.settings: {name:?} is not a valid ConfigMap name"),
            );
        return Ok(());
    }
    let namespace = gateway.metadata.namespace.clone();
    let config_map: Option<ConfigMap> = ctx.track_and_get(namespace.as_deref(), &name).await?;
    let status = gateway.status.get_or_insert_default();
    let mut conditions = GATEWAY_CONDITIONS.manage(&mut status.conditions, now);
    let Some(config_map) = config_map else {
        conditions.mark_false(
            SETTINGS_RESOLVED,
            "SettingsNotFound",
            &format!("ConfigMap {name:?} not found"),
        );
        return Ok(());
    };
    match Settings::from_data(&config_map.data.unwrap_or_default()) {
        Ok(settings) => {
            conditions.mark_true(SETTINGS_RESOLVED, "Resolved", "");
            SETTINGS.store(ctx, settings);
        }
        Err(problems) => conditions.mark_false(
            SETTINGS_RESOLVED,
            "InvalidSettings",
            &format!("ConfigMap {name:?}: {}", problems.join("; ")),
        ),
    }
    Ok(())
}

/// Keeps the gateway's Deployment, from the stashed settings; without them, leaves an existing
/// Deployment as it is and only reflects it.
fn deployment() -> ChildReconciler<Gateway, Deployment> {
    ChildReconciler::new(
        UpdatingObjectManager::new(deployment::merge_owned_fields),
        |ctx, gateway: &Gateway| match SETTINGS.retrieve_opt(ctx) {
            Some(settings) => Ok(Some(deployment::desired(gateway, &settings))),
            None => Err(OnlyReconcileChildStatus.into()),
        },
        reflect_deployment,
    )
    .named("Deployment")
}

/// Sets `DeploymentReady`, `deploymentName` and `settingsHash` from the Deployment, or from
/// the failure to write it (which is then not returned: a refused Deployment is only fixed by
/// a change, which reconciles again).
fn reflect_deployment(
    ctx: &Context,
    gateway: &mut Gateway,
    child: Result<Option<&Deployment>, Error>,
) -> Result<(), Error> {
    let status = gateway.status.get_or_insert_default();
    let mut conditions = GATEWAY_CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(deployment)) => {
            match deployment::rollout(deployment) {
                Rollout::Complete => conditions.mark_true(DEPLOYMENT_READY, "Available", ""),
                Rollout::InProgress(why) => {
                    conditions.mark_unknown(DEPLOYMENT_READY, "RolloutInProgress", &why);
                }
                Rollout::Failed(reason, message) => {
                    conditions.mark_false(DEPLOYMENT_READY, &reason, &message);
                }
            }
            status.deployment_name.clone_from(&deployment.metadata.name);
            status.settings_hash = deployment::spec(deployment)
                .and_then(|s| s.template.metadata.as_ref())
                .and_then(|m| m.annotations.as_ref())
                .and_then(|a| a.get(SETTINGS_HASH_ANNOTATION))
                .cloned();
        }
        Ok(None) => {
            conditions.mark_unknown(
                DEPLOYMENT_READY,
                "DeploymentNotCreated",
                "the Deployment is created once the settings resolve",
            );
            status.deployment_name = None;
            status.settings_hash = None;
        }
        Err(err) => {
            let reason = err
                .as_api_error()
                .map_or("DeploymentFailed", |s| s.reason.as_str());
            conditions.mark_false(DEPLOYMENT_READY, reason, &err.to_string());
            status.deployment_name = None;
            status.settings_hash = None;
        }
    }
    Ok(())
}
