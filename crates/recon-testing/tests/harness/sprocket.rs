//! The `Sprocket` custom resource the harness tests reconcile and admit: a size in the spec, and a
//! status with conditions (`Sized`, then `Ready`), a ready flag and a generated child's name.

use kube::CustomResource;
use recon_core::{Condition, ConditionSet, impl_conditioned_status};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Sprocket",
    namespaced,
    status = "SprocketStatus"
)]
pub struct SprocketSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SprocketStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The name the server generated for the sprocket's config map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
    /// The uid of that config map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_uid: Option<String>,
}

pub const SPROCKET: ConditionSet = ConditionSet::living(&["Sized"]);
impl_conditioned_status!(SprocketStatus, SPROCKET);
