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

/// `body` with the values the server assigns (uids, resourceVersions, times) replaced by
/// placeholders wherever they appear (a Job's selector quotes its uid), so two servers' bodies
/// compare byte for byte.
fn without_assigned(body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap();
    let mut assigned = Vec::new();
    let mut stack = vec![&parsed];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let placeholder = match key.as_str() {
                        "uid" => "<uid>",
                        "resourceVersion" => "<rv>",
                        "creationTimestamp" | "time" => "<time>",
                        _ => "",
                    };
                    match child.as_str() {
                        Some(text) if !placeholder.is_empty() => {
                            assigned.push((text.to_owned(), placeholder));
                        }
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    let mut out = body.to_owned();
    for (text, placeholder) in assigned {
        out = out.replace(&format!("\"{text}\""), &format!("\"{placeholder}\""));
    }
    out
}

/// A recorded case: the objects to create (collection, body), then the path whose answer was
/// recorded (`fixtures/byte-order/requests/<case>.json`, by `xtask/record-byte-order.py`).
#[derive(serde::Deserialize)]
struct Case {
    create: Vec<(String, Value)>,
    get: String,
}

#[tokio::test]
async fn every_recorded_object_is_served_in_go_field_order() {
    let mut cases: Vec<_> = std::fs::read_dir(format!("{FIXTURES}/requests"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "{cases:?}");
    let mut differ = Vec::new();
    for path in cases {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let case: Case = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let server = ApiServer::new();
        let client = server.client();
        for (collection, body) in &case.create {
            send(
                &client,
                "POST",
                &format!("{collection}?fieldManager=order"),
                &body.to_string(),
            )
            .await;
        }
        let served = send(&client, "GET", &case.get, "").await;
        let recorded = std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap();
        let (served, recorded) = (
            without_assigned(&served),
            without_assigned(recorded.trim_end()),
        );
        if served != recorded {
            differ.push(format!(
                "{name}:\n  served:   {served}\n  recorded: {recorded}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
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

/// The text of `body` from its first `"<field>":` on.
fn from_field<'a>(body: &'a str, field: &str) -> &'a str {
    let at = body.find(&format!("\"{field}\":")).unwrap_or_else(|| {
        panic!("no {field} in {body}");
    });
    &body[at..]
}

/// A built-in object the server writes back from storage, without the request that says its
/// type (marked deleted, a CRD's status set by the apiextensions controllers), keeps its Go
/// field order; so a DELETE that changes nothing writes nothing, as etcd3's store skips a write
/// of the same bytes (`k8s.io/apiserver` `pkg/storage/etcd3/store.go`, `GuaranteedUpdate`).
#[tokio::test]
async fn an_object_written_back_from_storage_keeps_go_field_order() {
    let server = ApiServer::new();
    let client = server.client();
    let pods = "/api/v1/namespaces/default/pods";
    let created = send(
        &client,
        "POST",
        pods,
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"held","finalizers":["example.com/hold"]},"spec":{"containers":[{"name":"app","image":"nginx"}]}}"#,
    )
    .await;
    let spec = |body: &str| {
        let spec = from_field(body, "spec");
        spec[..spec.find(r#","status":"#).unwrap()].to_owned()
    };
    assert!(spec(&created).starts_with(r#""spec":{"containers":[{"name":"app","image":"nginx","#));
    let deleted = send(&client, "DELETE", &format!("{pods}/held"), "").await;
    assert!(deleted.contains(r#""deletionTimestamp":"#));
    assert_eq!(spec(&deleted), spec(&created));
    let version = |body: &str| {
        let parsed: Value = serde_json::from_str(body).unwrap();
        parsed["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let again = send(&client, "DELETE", &format!("{pods}/held"), "").await;
    assert_eq!(version(&again), version(&deleted));

    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let created = send(
        &client,
        "POST",
        crds,
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object"}}}}}]}}"#,
    )
    .await;
    let established = send(&client, "GET", &format!("{crds}/gadgets.example.com"), "").await;
    assert!(established.contains(r#""type":"Established""#));
    let spec = |body: &str| {
        let spec = from_field(body, "spec");
        spec[..spec.find(r#","status":"#).unwrap()].to_owned()
    };
    assert!(spec(&created).contains(r#""openAPIV3Schema":{"type":"object","properties":"#));
    assert_eq!(spec(&established), spec(&created));
}
