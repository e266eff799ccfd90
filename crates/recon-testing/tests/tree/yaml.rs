//! The reconciler tree driven by YAML suites under `fixtures/suites/tree`, one test per file, and
//! the `Task` CRD manifest those suites install, generated from the Rust type.

use std::path::{Path, PathBuf};

use crate::task::{Task, planner, set_message, set_phase};
use kube::CustomResourceExt;
use recon_core::{IntoBoxed, ResourceReconciler, Sequence};
use recon_testing::{ReconcilerTestSuite, assert_generated_file};
use rstest::rstest;

fn workspace_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn the_task_crd_manifest_is_generated_from_the_rust_type() {
    let manifest = serde_saphyr::to_string(&Task::crd()).expect("the CRD serializes");
    assert_generated_file(
        workspace_file("fixtures/crds/tasks.example.com.yaml"),
        &manifest,
    );
}

/// Each suite runs the task reconciler: plan once, then phase `Running` and a message, with the
/// status managed by the default strategy (merge patch with the optimistic lock).
#[rstest]
fn task_suites(#[files("../../fixtures/suites/tree/task-*.yaml")] path: PathBuf) {
    let suite = ReconcilerTestSuite::from_yaml_file(&path).unwrap_or_else(|e| panic!("{e}"));
    suite.run(|env| {
        let tree = Sequence::new([
            planner(Default::default()).boxed(),
            set_phase("Running").boxed(),
            set_message("working").boxed(),
        ]);
        ResourceReconciler::new(env.config(), tree).manage_status()
    });
}
