//! Built-in objects are served byte for byte as kube-apiserver 1.36 writes them: Go's struct
//! field order (`kind` before `apiVersion`, metadata and managedFields entries in declaration
//! order), map keys sorted, `<`, `>` and `&` escaped. Recorded bodies: `fixtures/byte-order/`.

use kube::Client;
use recon_fake::ApiServer;
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/byte-order");

async fn send(client: &Client, method: &str, path: &str, body: &str) -> String {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.as_bytes().to_vec())
        .unwrap();
    client.request_text(request).await.unwrap()
}

/// `body` with the values the server assigns (uid, resourceVersion, times) replaced by
/// placeholders, so two servers' bodies compare byte for byte.
fn without_assigned(body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap();
    let meta = &parsed["metadata"];
    let mut out = body.to_owned();
    for (value, placeholder) in [
        (&meta["uid"], "<uid>"),
        (&meta["resourceVersion"], "<rv>"),
        (&meta["creationTimestamp"], "<time>"),
        (&meta["managedFields"][0]["time"], "<time>"),
    ] {
        if let Some(text) = value.as_str() {
            out = out.replace(&format!("\"{text}\""), &format!("\"{placeholder}\""));
        }
    }
    out
}

async fn assert_served_as_recorded(path: &str, collection: &str, body: &str, fixture: &str) {
    let server = ApiServer::new();
    let client = server.client();
    send(
        &client,
        "POST",
        &format!("{collection}?fieldManager=order"),
        body,
    )
    .await;
    let served = send(&client, "GET", path, "").await;
    let recorded = std::fs::read_to_string(format!("{FIXTURES}/{fixture}")).unwrap();
    assert_eq!(
        without_assigned(&served),
        without_assigned(recorded.trim_end()),
        "{fixture}"
    );
}

#[tokio::test]
async fn a_config_map_is_served_in_go_field_order() {
    assert_served_as_recorded(
        "/api/v1/namespaces/default/configmaps/order",
        "/api/v1/namespaces/default/configmaps",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"order","labels":{"b":"2","a":"1"},"annotations":{"z":"<&>"}},"data":{"y":"1","x":"2"}}"#,
        "configmap.json",
    )
    .await;
}

#[tokio::test]
async fn a_deployment_is_served_in_go_field_order() {
    assert_served_as_recorded(
        "/apis/apps/v1/namespaces/default/deployments/order",
        "/apis/apps/v1/namespaces/default/deployments",
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"order"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}}}"#,
        "deployment.json",
    )
    .await;
}

/// A client type that disagrees with the server (here `spec.replicas` read as a string) fails
/// at the same line and column on the in-memory server as on a cluster.
#[tokio::test]
async fn a_typed_decode_error_points_where_a_cluster_would() {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // only decoded, to see where it fails
    struct Spec {
        replicas: String,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Deployment {
        spec: Spec,
    }
    let server = ApiServer::new();
    let client = server.client();
    send(
        &client,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments?fieldManager=order",
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"order"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}}}"#,
    )
    .await;
    let served = send(
        &client,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/order",
        "",
    )
    .await;
    let recorded = std::fs::read_to_string(format!("{FIXTURES}/deployment.json")).unwrap();
    let error = |body: &str| {
        let e = serde_json::from_str::<Deployment>(&without_assigned(body)).unwrap_err();
        (e.line(), e.column(), e.to_string())
    };
    let (on_cluster, here) = (error(recorded.trim_end()), error(&served));
    assert!(
        on_cluster.2.contains("invalid type: integer `1`"),
        "{on_cluster:?}"
    );
    assert_eq!(here, on_cluster);
}
