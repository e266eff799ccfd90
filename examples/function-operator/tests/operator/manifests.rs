//! The Function CRD manifest under `fixtures/crds`, kept as `#[derive(CustomResource)]`
//! generates it (`RECON_FIXTURES=overwrite` or `cargo xtask fixtures` rewrites it).

use function_operator::{Function, crd};
use kube::CustomResourceExt;

#[test]
fn crd_manifest_is_current() {
    let manifest = serde_saphyr::to_string(&Function::crd()).unwrap();
    recon_testing::assert_generated_file(
        "../../fixtures/crds/functions.operators.example.com.yaml",
        &manifest,
    );
}

#[test]
fn crd_is_the_derived_one_with_a_status_subresource() {
    let crd = crd();
    assert_eq!(crd, Function::crd());
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("functions.operators.example.com")
    );
    assert_eq!(crd.spec.scope, "Namespaced");
    let version = &crd.spec.versions[0];
    assert_eq!(version.name, "v1");
    let subresources = version.subresources.as_ref().expect("subresources");
    assert!(subresources.status.is_some(), "a status subresource");
}
