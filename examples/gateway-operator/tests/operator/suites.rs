//! The Gateway reconciler's YAML suites (`tests/suites/*.yaml`, one test per file), and the
//! generated Gateway CRD manifest they load, kept current.

use std::path::PathBuf;

use gateway_operator::{Gateway, crd, reconciler};
use kube::CustomResourceExt;
use recon_testing::ReconcilerTestSuite;

/// `fixtures/crds/gateways.operators.example.com.yaml` is the CRD as the code generates it
/// (`RECON_FIXTURES=overwrite`, or `cargo xtask fixtures`, rewrites it).
#[test]
fn crd_manifest_is_current() {
    assert_eq!(crd(), Gateway::crd());
    recon_testing::assert_generated_file(
        "../../fixtures/crds/gateways.operators.example.com.yaml",
        &serde_saphyr::to_string(&Gateway::crd()).unwrap(),
    );
}

#[rstest::rstest]
fn gateway_suites(#[files("tests/suites/*.yaml")] path: PathBuf) {
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .run(|env| reconciler(env.config()));
}
