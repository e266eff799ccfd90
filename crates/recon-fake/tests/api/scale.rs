//! The `/scale` subresource through `kube::Api`: a Deployment scaled by `get_scale`,
//! `patch_scale` and `replace_scale`, its `spec.replicas` following (the rules are checked
//! against kube-apiserver 1.36 by `fixtures/conformance/scale/`).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::Scale;
use kube::api::{Api, Patch, PatchParams};
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use serde_json::json;

/// A server with a Deployment `web` of 2 replicas in `default`.
async fn with_deployment() -> (ApiServer, Api<Deployment>) {
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let d: Deployment = from_json(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web", "tier": "front"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "front"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }));
    api.create(&pp(), &d).await.unwrap();
    (server, api)
}

#[tokio::test]
async fn get_scale_shows_the_deployment_replicas_and_selector() {
    let (_server, api) = with_deployment().await;
    let deployment = api.get("web").await.unwrap();
    let scale = api.get_scale("web").await.unwrap();
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));
    assert_eq!(scale.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(scale.metadata.uid, deployment.metadata.uid);
    assert_eq!(
        scale.metadata.resource_version,
        deployment.metadata.resource_version
    );
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    let status = scale.status.expect("status");
    assert_eq!(status.replicas, 0);
    assert_eq!(status.selector.as_deref(), Some("app=web,tier=front"));
}

#[tokio::test]
async fn patch_scale_changes_the_deployment_replicas_and_generation() {
    let (_server, api) = with_deployment().await;
    let patch = Patch::Merge(json!({"spec": {"replicas": 4}}));
    let scale = api
        .patch_scale("web", &PatchParams::default(), &patch)
        .await
        .unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    let deployment = api.get("web").await.unwrap();
    assert_eq!(deployment.spec.replicas, Some(4));
    assert_eq!(deployment.metadata.generation, Some(2));
    assert_eq!(
        scale.metadata.resource_version,
        deployment.metadata.resource_version
    );
    let managed = deployment.metadata.managed_fields.unwrap_or_default();
    assert!(
        managed
            .iter()
            .any(|e| e.subresource.as_deref() == Some("scale")
                && e.operation.as_deref() == Some("Update")),
        "a scale entry: {managed:?}"
    );
}

#[tokio::test]
async fn replace_scale_changes_the_deployment_replicas_and_a_stale_one_conflicts() {
    let (_server, api) = with_deployment().await;
    let current = api.get_scale("web").await.unwrap();
    let rv = current.metadata.resource_version.clone().expect("rv");
    let wanted: Scale = from_json(json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": rv},
        "spec": {"replicas": 7},
    }));
    let scale = api.replace_scale("web", &pp(), &wanted).await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(7));
    let deployment = api.get("web").await.unwrap();
    assert_eq!(deployment.spec.replicas, Some(7));

    // The same resourceVersion again is stale now.
    let err = api.replace_scale("web", &pp(), &wanted).await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("an API error: {err:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn negative_replicas_and_a_missing_deployment_are_refused() {
    let (_server, api) = with_deployment().await;
    let patch = Patch::Merge(json!({"spec": {"replicas": -1}}));
    let err = api
        .patch_scale("web", &PatchParams::default(), &patch)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("an API error: {err:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let err = api.get_scale("nope").await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("an API error: {err:?}");
    };
    assert_eq!(status.code, 404);
    assert_eq!(status.message, "deployments.apps \"nope\" not found");
    let deployment = api.get("web").await.unwrap();
    assert_eq!(deployment.spec.replicas, Some(2));
}
