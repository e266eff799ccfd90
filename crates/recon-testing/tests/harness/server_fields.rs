//! Server-set fields, and a resource type that does not round-trip its JSON.

use std::sync::{Arc, Mutex};

use crate::sprocket::Sprocket;
use kube::{CustomResource, CustomResourceExt};
use recon_core::{Condition, ResourceReconciler, SyncReconciler};
use recon_testing::{Expectations, PatchRef, SubReconcilerTests, TestCase, TestEnv};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// server-set fields
// ---------------------------------------------------------------------------------------------

fn conditioned(env: &TestEnv) -> ResourceReconciler<Sprocket> {
    ResourceReconciler::new(env.config(), mark_sized()).manage_status()
}

fn sized_conditions(ready_time: Option<&str>) -> Value {
    let mut conditions = json!([
        {"type": "Ready", "status": "True", "reason": "Ready", "message": ""},
        {"type": "Sized", "status": "True", "reason": "Sized", "message": ""},
    ]);
    if let Some(time) = ready_time {
        for c in conditions.as_array_mut().into_iter().flatten() {
            c["lastTransitionTime"] = json!(time);
        }
    }
    conditions
}

/// The status patch marking the sprocket sized (no transition time: the server's is not known).
fn marked_sized() -> PatchRef {
    PatchRef::merge(
        "Sprocket",
        Some("default"),
        "w",
        json!({"status": {"observedGeneration": 1, "conditions": sized_conditions(None)}}),
    )
}

#[tokio::test]
async fn server_set_fields_are_ignored_by_default() {
    // Wrong values of server-set fields on the expected side are ignored too.
    let report = check(
        "marks the sprocket sized",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .expect_status_patch(PatchRef::merge(
                "Sprocket",
                Some("default"),
                "w",
                json!({
                    "metadata": {"resourceVersion": "999", "uid": "not-the-uid"},
                    "status": {
                        "observedGeneration": 1,
                        "conditions": sized_conditions(Some("1999-01-01T00:00:00Z")),
                    },
                }),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn server_set_fields_of_an_updated_object_are_ignored_by_default() {
    let mut expected = config_map("w-config", json!({"size": "2"}));
    expected["metadata"]["uid"] = json!("not-the-uid");
    expected["metadata"]["resourceVersion"] = json!("999");
    expected["metadata"]["creationTimestamp"] = json!("1999-01-01T00:00:00Z");
    let report = check(
        "updates its config map",
        with_config_map_at_1(2).expect_update(&expected),
        with(update_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn compare_server_fields_reports_them() {
    let report = check(
        "marks the sprocket sized",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .compare_server_fields()
            .expect_status_patch(marked_sized())
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.statusPatches[0]: differs (-expected, +actual):",
            "+    \"metadata\": {",
            "+      \"resourceVersion\": \"",
            "+          \"lastTransitionTime\": \"2024-01-01T00:00:00Z\",",
        ],
    );
}

#[tokio::test]
async fn compare_server_fields_passes_with_the_values_the_server_set() {
    let now = "2024-05-01T10:00:00Z";
    let seen = Arc::new(Mutex::new(None::<Expectations>));
    let capture = seen.clone();
    // First, find the resourceVersion the patch is locked on.
    let report = check(
        "marks the sprocket sized",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .at(now.parse().unwrap())
            .verify(move |_, observed| {
                *capture.lock().unwrap() = Some(observed.clone());
                Ok(())
            })
            .expect_status_patch(marked_sized())
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
    let observed = seen.lock().unwrap().clone().unwrap();
    let patch = observed.status_patches[0].patch.clone().unwrap();
    let version = patch["metadata"]["resourceVersion"].as_str().unwrap();
    assert!(!version.is_empty());

    let report = check(
        "marks the sprocket sized",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .at(now.parse().unwrap())
            .compare_server_fields()
            .expect_status_patch(PatchRef::merge(
                "Sprocket",
                Some("default"),
                "w",
                json!({
                    "metadata": {"resourceVersion": version},
                    "status": {"observedGeneration": 1, "conditions": sized_conditions(Some(now))},
                }),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
}

// ---------------------------------------------------------------------------------------------
// a resource type that does not round-trip its JSON
// ---------------------------------------------------------------------------------------------

/// A resource whose status serialises every field, absent or not, like the crate docs' example
/// (`Option` fields without `skip_serializing_if`, `#[serde(default)]` lists).
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus"
)]
pub struct GadgetSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub message: Option<String>,
}

#[tokio::test]
async fn an_untouched_resource_passes_whatever_its_type_serialises() {
    let noop = || SyncReconciler::<Gadget>::new("Noop").sync(async |_, _| Ok(()));
    let report = SubReconcilerTests::new()
        .crd(&Gadget::crd())
        .case(
            "leaves the gadget alone",
            TestCase::sub_reconcile(&json!({
                "apiVersion": "example.com/v1",
                "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": {"size": 1},
                "status": {"message": "hi"},
            })),
        )
        .check(move |_| noop())
        .await;
    passes(&report);
}
