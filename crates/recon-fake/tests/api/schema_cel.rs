//! `x-kubernetes-validations` rules through `kube::Api`: compiled when the CRD is written (a
//! rule that does not compile refuses the CRD) and evaluated on every write of a custom
//! resource, with the messages a real kube-apiserver 1.36 answers (recorded under
//! `fixtures/conformance/schema/cel-*`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use recon_fake::ApiServer;
use recon_test_fixtures::{from_json, pp, status};
use serde_json::{Value, json};

/// A CRD whose `spec` carries `rules`, with `replicas`, `maxReplicas` and an immutable `mode`.
fn crd(rules: Value) -> CustomResourceDefinition {
    from_json(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "rulers.probe.example.com"},
        "spec": {"group": "probe.example.com", "scope": "Namespaced",
            "names": {"plural": "rulers", "singular": "ruler", "kind": "Ruler", "listKind": "RulerList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-validations": rules, "properties": {
                        "replicas": {"type": "integer", "maximum": 100},
                        "maxReplicas": {"type": "integer", "default": 10},
                        "color": {"type": "string", "enum": ["red", "blue"]},
                        "mode": {"type": "string", "x-kubernetes-validations": [
                            {"rule": "self == oldSelf", "message": "mode is immutable"}]}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "integer"}},
                        "x-kubernetes-validations": [
                            {"rule": "!has(self.ready) || self.ready >= 0",
                             "message": "ready must not be negative"}]}}}}}]}
    }))
}

fn rules() -> Value {
    json!([{"rule": "self.replicas <= self.maxReplicas",
            "messageExpression": "'replicas %d is more than maxReplicas %d'.format([self.replicas, self.maxReplicas])"}])
}

fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("probe.example.com", "v1", "Ruler"),
        "rulers",
    )
}

async fn server() -> (ApiServer, Api<DynamicObject>) {
    let server = ApiServer::new();
    server.install_crd(&crd(rules())).await.expect("install");
    let api = Api::namespaced_with(server.client(), "default", &resource());
    (server, api)
}

fn ruler(name: &str, spec: Value) -> DynamicObject {
    DynamicObject::new(name, &resource()).data(json!({ "spec": spec }))
}

#[tokio::test]
async fn a_failing_rule_is_422_with_the_message_it_computes_against_defaults() {
    let (_server, api) = server().await;
    let s = status(
        api.create(&pp(), &ruler("r", json!({"replicas": 20})))
            .await,
    );
    assert_eq!(
        (s.code, s.message.as_str()),
        (
            422,
            r#"Ruler.probe.example.com "r" is invalid: spec: Invalid value: replicas 20 is more than maxReplicas 10"#
        )
    );
    let cause = &s.details.expect("details").causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "spec")
    );
    api.create(&pp(), &ruler("ok", json!({"replicas": 10})))
        .await
        .expect("within the default maximum");
}

#[tokio::test]
async fn a_blocking_error_skips_the_rules_and_says_so() {
    let (_server, api) = server().await;
    let s = status(
        api.create(
            &pp(),
            &ruler("r", json!({"replicas": 20, "color": "green"})),
        )
        .await,
    );
    assert_eq!(
        s.message,
        r#"Ruler.probe.example.com "r" is invalid: [spec.color: Unsupported value: "green": supported values: "red", "blue", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#
    );
}

#[tokio::test]
async fn a_transition_rule_compares_with_the_stored_object() {
    let (_server, api) = server().await;
    api.create(&pp(), &ruler("r", json!({"replicas": 1, "mode": "a"})))
        .await
        .unwrap();
    let change = json!({"spec": {"mode": "b"}});
    let s = status(
        api.patch("r", &PatchParams::default(), &Patch::Merge(&change))
            .await,
    );
    assert_eq!(
        s.message,
        r#"Ruler.probe.example.com "r" is invalid: spec.mode: Invalid value: "b": mode is immutable"#
    );
    let keep = json!({"spec": {"mode": "a", "replicas": 2}});
    api.patch("r", &PatchParams::default(), &Patch::Merge(&keep))
        .await
        .expect("an unchanged mode passes");
}

#[tokio::test]
async fn a_status_write_runs_the_status_rules() {
    let (_server, api) = server().await;
    api.create(&pp(), &ruler("r", json!({"replicas": 1})))
        .await
        .unwrap();
    let bad = json!({"status": {"ready": -1}});
    let s = status(
        api.patch_status("r", &PatchParams::default(), &Patch::Merge(&bad))
            .await,
    );
    assert_eq!(
        s.message,
        r#"Ruler.probe.example.com "r" is invalid: status: Invalid value: ready must not be negative"#
    );
}

#[tokio::test]
async fn a_rule_that_does_not_compile_refuses_the_crd() {
    let bad = crd(json!([{"rule": "self.replicas <= self.nope"}]));
    let s = status(ApiServer::new().install_crd(&bad).await);
    // A schema's checks are kept per process: another server refuses it the same way.
    assert_eq!(status(ApiServer::new().install_crd(&bad).await), s);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    // The rule is printed as the real server prints the Go struct, and cel-go's error with a
    // caret under the column.
    assert_eq!(
        s.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"rulers.probe.example.com\" is invalid: \
         spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: \
         Invalid value: {\"Rule\":\"self.replicas \\u003c= self.nope\",\"Message\":\"\",\
         \"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: \
         compilation failed: ERROR: <input>:1:22: undefined field 'nope'\n \
         | self.replicas <= self.nope\n \
         | .....................^"
    );
}
