// The README's tutorial; `readme_sync.rs` checks that the README shows this file verbatim.
use kube::{CustomResource, CustomResourceExt};
use recon_core::{
    Condition, ConditionSet, Context, Error, Request, ResourceReconciler, SyncReconciler,
    impl_conditioned_status,
};
use recon_testing::{
    EventRef, FailureSpec, PatchRef, ReactorSpec, ReconcilerTestSuite, ReconcilerTests, TestCase,
    TestEnv,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Function",
    namespaced,
    status = "FunctionStatus"
)]
pub struct FunctionSpec {
    pub image: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")] // never sends `null`
    pub target_image: Option<String>,
}

const FUNCTION: ConditionSet = ConditionSet::living(&["ImageResolved"]);
impl_conditioned_status!(FunctionStatus, FUNCTION);

async fn target_image(ctx: &Context, function: &mut Function) -> Result<(), Error> {
    let status = function.status.get_or_insert_default();
    status.target_image = Some(format!("registry.example.com/{}", function.spec.image));
    FUNCTION
        .manage(&mut status.conditions, ctx.now())
        .mark_true("ImageResolved", "Resolved", "");
    Ok(())
}

fn function_reconciler(env: &TestEnv) -> ResourceReconciler<Function> {
    let steps = SyncReconciler::<Function>::new("TargetImage").sync(target_image);
    ResourceReconciler::new(env.config(), steps).manage_status()
}

fn function(status: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Function",
           "metadata": {"name": "hello", "namespace": "default"},
           "spec": {"image": "hello"}, "status": status})
}

fn resolved() -> Value {
    let at = recon_testing::DEFAULT_NOW; // every case's clock, unless it sets `now`
    json!({"observedGeneration": 1, "targetImage": "registry.example.com/hello", "conditions": [
        {"type": "ImageResolved", "status": "True", "reason": "Resolved", "message": "", "lastTransitionTime": at},
        {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": at}]})
}

#[test]
fn function_reconciler_cases() {
    let hello = || TestCase::reconcile(Request::namespaced("default", "hello"));
    let patch = || {
        PatchRef::merge(
            "Function",
            Some("default"),
            "hello",
            json!({"status": resolved()}),
        )
    };
    let patched = || EventRef::normal("StatusPatched", "Patched status");
    ReconcilerTests::new()
        .crd(&Function::crd())
        .case(
            "a new function gets its image and conditions in one status patch",
            hello()
                .given(&function(Value::Null))
                .expect_status_patch(patch())
                .expect_event(patched()),
        )
        .case(
            "an up-to-date function gets no write at all",
            hello().given(&function(resolved())),
        )
        .case(
            "a conflicting status patch is re-applied to the re-read function",
            hello()
                .given(&function(Value::Null))
                .reactor(
                    ReactorSpec::new("patch", "functions", FailureSpec::Conflict)
                        .subresource("status")
                        .times(1),
                )
                .expect_status_patch(patch()) // answered 409
                .expect_status_patch(patch()) // the retry, locked on the fresh resourceVersion
                .expect_event(patched()),
        )
        .run(function_reconciler);
}

// A generated CRD manifest, kept current (`RECON_FIXTURES=overwrite cargo test` writes it).
#[test]
fn the_function_crd_manifest_is_current() {
    let manifest = serde_saphyr::to_string(&Function::crd()).unwrap();
    recon_testing::assert_generated_file(
        "../../fixtures/crds/functions.example.com.yaml",
        &manifest,
    );
}

// Cases as YAML, one test per file.
#[rstest::rstest]
fn function_suites(#[files("../../fixtures/suites/function/*.yaml")] path: std::path::PathBuf) {
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .run(function_reconciler);
}
