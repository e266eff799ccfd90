//! `Task`: a custom resource with a rich status (conditions, a plan, a phase, a message) for the
//! reconciler-tree tests, and the sub-reconcilers they combine.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kube::CustomResource;
use recon_core::{Condition, ConditionSet, SyncReconciler, impl_conditioned_status};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Task",
    namespaced,
    status = "TaskStatus"
)]
pub struct TaskSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// A list-map keyed by `type`, as Kubernetes conventions ask: server-side appliers owning
    /// different condition types coexist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

pub const TASK: ConditionSet = ConditionSet::living(&["Planned", "Sized"]);
impl_conditioned_status!(TaskStatus, TASK);

/// Sets `status.phase`; `Sized` is true once the task runs.
pub fn set_phase(phase: &'static str) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Phase").sync_with(phase, async |ctx, &phase, task| {
        let status = task.status.get_or_insert_default();
        status.phase = Some(phase.to_owned());
        let mut conditions = TASK.manage(&mut status.conditions, ctx.now());
        if phase == "Running" {
            conditions.mark_true("Sized", "Sized", "");
        } else {
            conditions.mark_false("Sized", "Waiting", "not sized yet");
        }
        Ok(())
    })
}

/// Sets `status.message`.
pub fn set_message(message: &'static str) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Message").sync_with(message, async |_, &message, task| {
        task.status.get_or_insert_default().message = Some(message.to_owned());
        Ok(())
    })
}

/// Builds a plan when the status has none, counting the plans it builds.
pub fn planner(built: Arc<AtomicUsize>) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Plan").sync_with(built, async |_, built, task| {
        let status = task.status.get_or_insert_default();
        if status.plan.is_none() {
            built.fetch_add(1, Ordering::SeqCst);
            status.plan = Some("plan-from-this-reconcile".into());
        }
        Ok(())
    })
}
