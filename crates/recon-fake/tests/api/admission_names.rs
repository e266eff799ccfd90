//! Admission configurations named like the static manifests kube-apiserver may load
//! (`*.static.k8s.io`) are written with a warning on every create and update
//! (`WarningsForStaticSuffix` of pkg/apis/admissionregistration/validation/static_suffix.go,
//! from each admission registry's strategy). Headers are not in the conformance recordings; the
//! warning below was read from kube-apiserver 1.36 with kubectl.

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use recon_fake::ApiServer;
use serde_json::json;

use crate::support::last_warnings;

const WARNING: &str = "metadata.name: names ending with \".static.k8s.io\" are reserved for static manifest-based configurations and cannot be managed via the API";

fn bindings(server: &ApiServer) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
    );
    Api::all_with(
        server.client(),
        &ApiResource::from_gvk_with_plural(&gvk, "validatingadmissionpolicybindings"),
    )
}

fn binding(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": "p", "validationActions": ["Deny"]}
    }))
    .expect("a binding")
}

#[tokio::test]
async fn static_names_are_written_with_a_warning() {
    let server = ApiServer::new();
    let api = bindings(&server);
    api.create(&PostParams::default(), &binding("x.static.k8s.io"))
        .await
        .expect("created");
    assert_eq!(last_warnings(&server), [WARNING]);
    api.patch(
        "x.static.k8s.io",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
    )
    .await
    .expect("patched");
    assert_eq!(last_warnings(&server), [WARNING]);
    api.create(&PostParams::default(), &binding("x.example.com"))
        .await
        .expect("created");
    assert!(last_warnings(&server).is_empty());
}
