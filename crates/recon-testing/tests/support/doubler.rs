//! A small reconciler and a generator of as many cases for it as asked: the 1,000-case suite
//! and the cases-per-second benchmark run the same table.

use kube::{CustomResource, CustomResourceExt};
use recon_core::{Request, ResourceReconciler, SyncReconciler};
use recon_testing::{EventRef, PatchRef, ReconcilerTests, TestCase, TestEnv};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Doubler",
    namespaced,
    status = "DoublerStatus"
)]
pub struct DoublerSpec {
    pub value: i64,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct DoublerStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubled: Option<i64>,
}

/// Writes `status.doubled = 2 * spec.value`.
pub fn reconciler(env: &TestEnv) -> ResourceReconciler<Doubler> {
    let double = SyncReconciler::<Doubler>::new("Double").sync(async |_, d| {
        d.status.get_or_insert_default().doubled = Some(d.spec.value * 2);
        Ok(())
    });
    ResourceReconciler::new(env.config(), double)
}

fn doubler(name: &str, value: i64, doubled: Option<i64>) -> Value {
    let mut d = json!({
        "apiVersion": "example.com/v1",
        "kind": "Doubler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"value": value},
    });
    if let Some(doubled) = doubled {
        d["status"] = json!({"doubled": doubled});
    }
    d
}

/// The name of generated case `i`.
pub fn case_name(i: usize) -> String {
    format!("doubler {i:04}")
}

/// Case `i`: even cases start without a status and expect one status patch and its event;
/// odd cases start up to date and expect nothing.
pub fn case(i: usize) -> TestCase {
    let name = format!("d-{i}");
    let value = i64::try_from(i).unwrap_or(i64::MAX / 4);
    let request = TestCase::reconcile(Request::namespaced("default", &name));
    if i.is_multiple_of(2) {
        request
            .given(&doubler(&name, value, None))
            .expect_status_patch(PatchRef::merge(
                "Doubler",
                Some("default"),
                &name,
                json!({"status": {"doubled": value * 2}}),
            ))
            .expect_event(EventRef::normal("StatusPatched", "Patched status"))
    } else {
        request.given(&doubler(&name, value, Some(value * 2)))
    }
}

/// A table of `n` generated cases.
pub fn table(n: usize) -> ReconcilerTests {
    table_with(n, |_, case| case)
}

/// A table of `n` generated cases, each changed by `edit(i, case)`.
pub fn table_with(n: usize, edit: impl Fn(usize, TestCase) -> TestCase) -> ReconcilerTests {
    (0..n).fold(ReconcilerTests::new().crd(&Doubler::crd()), |t, i| {
        t.case(&case_name(i), edit(i, case(i)))
    })
}
