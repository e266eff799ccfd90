//! The YAML suites under `tests/suites`, one test per file. The CRD they install is the
//! generated manifest under `fixtures/crds` (kept current by `manifests.rs`).

use std::path::PathBuf;

use function_operator::reconciler;
use recon_testing::ReconcilerTestSuite;

#[rstest::rstest]
fn function_suites(#[files("tests/suites/*.yaml")] path: PathBuf) {
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .run(|env| reconciler(env.config()));
}
