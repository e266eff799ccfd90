//! Reading stored objects without a request (`ApiServer::stored`), for assertions in tests.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use recon_fake::ApiServer;
use serde_json::json;

#[test]
fn stored_reads_namespaced_and_cluster_scoped_objects_without_logging() {
    let server = ApiServer::new();
    server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "team"}, "data": {"k": "v"}}))
        .unwrap();

    let cm: ConfigMap = server.stored_as(Some("team"), "c").unwrap().unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v");
    assert!(
        server
            .stored_as::<ConfigMap>(Some("default"), "c")
            .unwrap()
            .is_none(),
        "another namespace"
    );
    // A namespace given for a cluster-scoped kind is ignored, as the API path would ignore it.
    let ns: Namespace = server
        .stored_as(Some("anything"), "default")
        .unwrap()
        .unwrap();
    assert_eq!(ns.metadata.name.as_deref(), Some("default"));
    assert!(server.requests().is_empty());
}

#[test]
fn stored_answers_none_for_an_unknown_kind_or_version() {
    let server = ApiServer::new();
    assert_eq!(
        server.stored("example.com/v1", "Widget", Some("default"), "w"),
        None
    );
    assert_eq!(server.stored("v2", "Namespace", None, "default"), None);
    assert!(server.stored("v1", "Namespace", None, "default").is_some());
}

#[test]
fn stored_as_a_type_the_object_is_not_is_an_error() {
    let server = ApiServer::new();
    // A Namespace read as a ConfigMap: the kinds differ, so there is no such ConfigMap.
    assert!(
        server
            .stored_as::<ConfigMap>(None, "default")
            .unwrap()
            .is_none()
    );
    server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}}))
        .unwrap();
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // only deserialised
    struct NotAConfigMap {
        data: Vec<String>,
    }
    impl kube::Resource for NotAConfigMap {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;
        fn kind(_: &()) -> std::borrow::Cow<'_, str> {
            "ConfigMap".into()
        }
        fn group(_: &()) -> std::borrow::Cow<'_, str> {
            "".into()
        }
        fn version(_: &()) -> std::borrow::Cow<'_, str> {
            "v1".into()
        }
        fn plural(_: &()) -> std::borrow::Cow<'_, str> {
            "configmaps".into()
        }
        fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            unreachable!("not called")
        }
        fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            unreachable!("not called")
        }
    }
    let err = server
        .stored_as::<NotAConfigMap>(Some("default"), "c")
        .unwrap_err();
    assert!(err.to_string().contains("invalid type"), "{err}");
}

/// Seeding stores what decoding into the Go type leaves: no typed client could read a value of
/// the wrong type back, so it is refused; unknown fields are dropped, as by every write.
#[test]
fn a_seeded_builtin_is_decoded_into_its_go_type() {
    let server = ApiServer::new();
    let err = server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "default"}, "data": {"k": 5}}))
        .unwrap_err();
    assert!(matches!(err, recon_fake::SeedError::Invalid(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    );
    assert!(
        server
            .stored("v1", "ConfigMap", Some("default"), "c")
            .is_none()
    );

    server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "default"},
                      "data": {"k": "v"}, "colour": "blue"}))
        .unwrap();
    let stored = server
        .stored("v1", "ConfigMap", Some("default"), "c")
        .unwrap();
    assert_eq!(stored.get("colour"), None);
    assert_eq!(stored["data"], json!({"k": "v"}));
}
