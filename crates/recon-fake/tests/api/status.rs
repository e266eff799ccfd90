//! The status subresource against the fake API server (`S*` rows of the reference), with the
//! messages of a real kube-apiserver.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::Status;
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use serde_json::json;

use crate::support::with_widget;

const WIDGET_X: &str = "/apis/example.com/v1/namespaces/default/widgets/x";
const GIZMO_X: &str = "/apis/example.com/v1/gizmos/x";

fn labels(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn ready(ready: bool) -> Option<WidgetStatus> {
    Some(WidgetStatus {
        ready: Some(ready),
        conditions: vec![],
    })
}

/// A server with the CRDs and a stored Gizmo `x` with a status.
async fn with_gizmo() -> (ApiServer, Api<DynamicObject>, DynamicObject) {
    let server = server().await;
    let api = gizmos(&server);
    let gizmo = DynamicObject::new("x", &gizmo_resource())
        .data(json!({"spec": {"a": 1}, "status": {"phase": "new"}}));
    let created = api.create(&pp(), &gizmo).await.unwrap();
    (server, api, created)
}

fn assert_gizmo_not_found(s: &Status) {
    assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
    assert_eq!(s.message, "gizmos.example.com \"x\" not found");
    let details = s.details.as_ref().expect("details");
    assert_details(details, ("x", "example.com", "gizmos"));
}

// ---- S1: custom resource with the status subresource ----

#[tokio::test]
async fn replace_status_changes_only_status() {
    // S1
    let (server, api, created) = with_widget().await;
    let mut w = created.clone();
    w.spec.size = 9;
    w.metadata.labels = labels(&[("a", "b")]);
    w.metadata.annotations = labels(&[("note", "hi")]);
    w.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    w.status = ready(true);
    let updated = api.replace_status("x", &pp(), &w).await.unwrap();
    assert_eq!(updated.status, ready(true));
    assert_eq!(updated.spec.size, 1);
    assert_eq!(updated.metadata.labels, None);
    assert_eq!(updated.metadata.annotations, None);
    assert_eq!(updated.metadata.finalizers, None);
    assert_eq!(updated.metadata.generation, Some(1));
    assert!(rv(&updated.metadata) > rv(&created.metadata));
    assert_eq!(rv(&updated.metadata), server.resource_version());
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.status, ready(true));
    assert_eq!(stored.spec.size, 1);
    assert_eq!(stored.metadata.labels, None);
    assert_eq!(stored.metadata.generation, Some(1));
}

#[tokio::test]
async fn patch_status_changes_only_status() {
    // S1
    let (_server, api, created) = with_widget().await;
    let patch = json!({
        "metadata": {"labels": {"a": "b"}, "finalizers": ["example.com/hold"]},
        "spec": {"size": 9},
        "status": {"ready": true},
    });
    let updated = api
        .patch_status("x", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(updated.status, ready(true));
    assert_eq!(updated.spec.size, 1);
    assert_eq!(updated.metadata.labels, None);
    assert_eq!(updated.metadata.finalizers, None);
    assert_eq!(updated.metadata.generation, Some(1));
    assert!(rv(&updated.metadata) > rv(&created.metadata));
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.status, ready(true));
    assert_eq!(stored.spec.size, 1);
    assert_eq!(stored.metadata.generation, Some(1));
}

#[tokio::test]
async fn stale_resource_version_on_status_is_409() {
    // S1, U1
    let (server, api, created) = with_widget().await;
    let mut newer = created.clone();
    newer.status = ready(true);
    api.replace_status("x", &pp(), &newer).await.unwrap();
    let before = server.resource_version();
    let mut stale = created;
    stale.status = ready(false);
    let s = status(api.replace_status("x", &pp(), &stale).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        s.message,
        "Operation cannot be fulfilled on widgets.example.com \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(s.details.expect("details").kind, "widgets");
    assert_eq!(server.resource_version(), before);
    assert_eq!(api.get("x").await.unwrap().status, ready(true));
}

#[tokio::test]
async fn get_status_returns_the_full_object() {
    // S1
    let (server, api, created) = with_widget().await;
    let mut w = created.clone();
    w.status = ready(true);
    let updated = api.replace_status("x", &pp(), &w).await.unwrap();
    let got = api.get_status("x").await.unwrap();
    assert_eq!(got.spec.size, 1);
    assert_eq!(got.status, ready(true));
    assert_eq!(got.metadata.name.as_deref(), Some("x"));
    assert_eq!(got.metadata.uid, created.metadata.uid);
    assert_eq!(
        got.metadata.resource_version,
        updated.metadata.resource_version
    );
    let wire = raw(&server, "GET", &format!("{WIDGET_X}/status"), "")
        .await
        .unwrap();
    assert_eq!(
        (wire["apiVersion"].as_str(), wire["kind"].as_str()),
        (Some("example.com/v1"), Some("Widget"))
    );
}

#[tokio::test]
async fn post_on_status_is_405() {
    // S1
    let (server, api, _created) = with_widget().await;
    let before = server.resource_version();
    let body = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"size":2},"status":{"ready":true}}"#;
    let s = status(raw(&server, "POST", &format!("{WIDGET_X}/status"), body).await);
    assert_eq!((s.code, s.reason.as_str()), (405, "MethodNotAllowed"));
    assert_eq!(
        s.message,
        "create is not supported on resources of kind \"widgets.example.com\""
    );
    let details = s.details.expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("example.com", "widgets")
    );
    assert_eq!(server.resource_version(), before);
    assert_eq!(api.get("x").await.unwrap().status, None);
}

#[tokio::test]
async fn delete_on_status_is_405() {
    // S1
    let (server, api, _created) = with_widget().await;
    let s = status(raw(&server, "DELETE", &format!("{WIDGET_X}/status"), "").await);
    assert_eq!((s.code, s.reason.as_str()), (405, "MethodNotAllowed"));
    assert_eq!(
        s.message,
        "delete is not supported on resources of kind \"widgets.example.com\""
    );
    assert!(api.get_opt("x").await.unwrap().is_some());
}

// ---- S2: Deployment ----

#[tokio::test]
async fn deployment_status_resets_spec_and_labels_but_keeps_annotations_and_finalizers() {
    // S2 (built-in: not checked against a real server)
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let d: Deployment = from_json(json!({
        "metadata": {"name": "d", "labels": {"tier": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }));
    let created = api.create(&pp(), &d).await.unwrap();
    let mut d = created.clone();
    d.spec.replicas = Some(5);
    d.metadata.labels = labels(&[("tier", "db")]);
    d.metadata.annotations = labels(&[("note", "hi")]);
    d.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    d.status = from_json(json!({"observedGeneration": 1, "replicas": 1}));
    let updated = api.replace_status("d", &pp(), &d).await.unwrap();
    assert_eq!(updated.spec.replicas, Some(1));
    assert_eq!(updated.metadata.labels, labels(&[("tier", "web")]));
    assert_eq!(updated.metadata.annotations, labels(&[("note", "hi")]));
    assert_eq!(
        updated.metadata.finalizers,
        Some(vec!["example.com/hold".to_string()])
    );
    assert_eq!(updated.status.as_ref().and_then(|s| s.replicas), Some(1));
    assert_eq!(updated.metadata.generation, Some(1));
    let stored = api.get("d").await.unwrap();
    assert_eq!(stored.spec.replicas, Some(1));
    assert_eq!(stored.metadata.labels, labels(&[("tier", "web")]));
    assert_eq!(stored.metadata.annotations, labels(&[("note", "hi")]));
    assert_eq!(
        stored.metadata.finalizers,
        Some(vec!["example.com/hold".to_string()])
    );
    assert_eq!(stored.status.and_then(|s| s.observed_generation), Some(1));
}

// ---- S3: custom resource without the status subresource ----

#[tokio::test]
async fn gizmo_status_is_persisted_on_create() {
    // S3
    let (_server, api, created) = with_gizmo().await;
    assert_eq!(created.data["status"], json!({"phase": "new"}));
    assert_eq!(
        api.get("x").await.unwrap().data["status"],
        json!({"phase": "new"})
    );
}

#[tokio::test]
async fn gizmo_status_change_is_persisted_on_update_and_bumps_generation() {
    // S3, Gen1
    let (_server, api, created) = with_gizmo().await;
    assert_eq!(created.metadata.generation, Some(1));
    let mut g = created;
    g.data["status"] = json!({"phase": "old"});
    let updated = api.replace("x", &pp(), &g).await.unwrap();
    assert_eq!(updated.data["status"], json!({"phase": "old"}));
    assert_eq!(updated.metadata.generation, Some(2));
    let patch = json!({"status": {"phase": "older"}});
    let patched = api
        .patch("x", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(patched.metadata.generation, Some(3));
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.data["status"], json!({"phase": "older"}));
    assert_eq!(stored.data["spec"], json!({"a": 1}));
    assert_eq!(stored.metadata.generation, Some(3));
}

#[tokio::test]
async fn gizmo_status_subresource_is_404_for_every_verb() {
    // S3
    let (server, api, created) = with_gizmo().await;
    let before = server.resource_version();
    assert_gizmo_not_found(&status(api.get_status("x").await));
    let mut g = created;
    g.data["status"] = json!({"phase": "z"});
    assert_gizmo_not_found(&status(api.replace_status("x", &pp(), &g).await));
    let patch = json!({"status": {"phase": "z"}});
    assert_gizmo_not_found(&status(
        api.patch_status("x", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    ));
    let body = r#"{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"x"},"status":{"phase":"z"}}"#;
    assert_gizmo_not_found(&status(
        raw(&server, "POST", &format!("{GIZMO_X}/status"), body).await,
    ));
    assert_eq!(server.resource_version(), before);
    assert_eq!(
        api.get("x").await.unwrap().data["status"],
        json!({"phase": "new"})
    );
}

// ---- ConfigMap: no status subresource ----

#[tokio::test]
async fn config_map_status_is_404() {
    // S3; no route inside a compiled-in group is the router's generic NotFound (checked on a
    // real server with apiextensions.k8s.io, which that router serves too)
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm: ConfigMap = from_json(json!({"metadata": {"name": "x"}, "data": {"k": "v"}}));
    let created = api.create(&pp(), &cm).await.unwrap();
    let before = server.resource_version();
    let err = status(api.get_status("x").await);
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (
            404,
            "NotFound",
            "the server could not find the requested resource"
        )
    );
    assert_eq!(
        status(api.replace_status("x", &pp(), &created).await).code,
        404
    );
    let patch = json!({"data": {"k": "z"}});
    assert_eq!(
        status(
            api.patch_status("x", &PatchParams::default(), &Patch::Merge(&patch))
                .await
        )
        .code,
        404
    );
    assert_eq!(server.resource_version(), before);
    assert_eq!(api.get("x").await.unwrap().data.unwrap()["k"], "v");
}
