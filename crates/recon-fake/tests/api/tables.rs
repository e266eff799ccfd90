//! `as=Table` through a `kube::Client`, as kubectl asks for it: a pod's printed columns and a
//! custom resource's additionalPrinterColumns, ages counted on the server's clock (the rules
//! are checked against kube-apiserver 1.36 by `fixtures/conformance/table/`).

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use recon_fake::{ApiServer, ManualClock};
use recon_test_fixtures::*;
use serde_json::{Value, json};

const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

async fn get_table(client: &Client, path: &str) -> Value {
    let request = http::Request::builder()
        .uri(path)
        .header("accept", TABLE)
        .body(Vec::new())
        .unwrap();
    client.request::<Value>(request).await.unwrap()
}

fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

fn server() -> (ApiServer, ManualClock) {
    let clock = ManualClock::new("2024-05-01T10:00:00Z".parse().unwrap());
    let server = ApiServer::builder().clock(clock.clone()).build();
    (server, clock)
}

#[tokio::test]
async fn pods_print_kubectls_columns_with_their_age() {
    let (server, clock) = server();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let pod: Pod = from_json(json!({
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }));
    pods.create(&pp(), &pod).await.unwrap();
    clock.advance(Duration::from_secs(5 * 60 + 10));

    let table = get_table(&server.client(), "/api/v1/namespaces/default/pods").await;
    assert_eq!(table["kind"], "Table");
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(
        table["rows"][0]["cells"],
        json!([
            "web", "0/1", "Pending", "0", "5m10s", "<none>", "<none>", "<none>", "<none>"
        ])
    );
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[tokio::test]
async fn custom_resources_print_their_printer_columns() {
    let (server, clock) = server();
    let crd: CustomResourceDefinition = from_json(json!({
        "metadata": {"name": "gauges.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gauges", "singular": "gauge", "kind": "Gauge", "listKind": "GaugeList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "additionalPrinterColumns": [
                    {"name": "Level", "type": "integer", "jsonPath": ".spec.level"},
                    {"name": "Unit", "type": "string", "jsonPath": ".spec.unit"},
                    {"name": "Calibrated", "type": "date", "jsonPath": ".spec.calibrated"},
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}},
            }],
        },
    }));
    server.install_crd(&crd).await.unwrap();
    let resource = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Gauge".into(),
        plural: "gauges".into(),
    };
    let gauges: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &resource);
    let gauge: DynamicObject = from_json(json!({
        "apiVersion": "example.com/v1",
        "kind": "Gauge",
        "metadata": {"name": "g"},
        "spec": {"level": 7, "calibrated": "2024-04-30T10:00:00Z"},
    }));
    gauges.create(&pp(), &gauge).await.unwrap();
    clock.advance(Duration::from_secs(60));

    let table = get_table(
        &server.client(),
        "/apis/example.com/v1/namespaces/default/gauges/g",
    )
    .await;
    assert_eq!(
        column_names(&table),
        ["Name", "Level", "Unit", "Calibrated"]
    );
    // The unit is missing: a null cell. Calibrated a day and a minute ago.
    assert_eq!(table["rows"][0]["cells"], json!(["g", 7, null, "24h"]));
}

#[tokio::test]
async fn component_statuses_print_their_health() {
    let (server, _clock) = server();
    let table = get_table(&server.client(), "/api/v1/componentstatuses").await;
    assert_eq!(column_names(&table), ["Name", "Status", "Message", "Error"]);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2]["cells"], json!(["etcd-0", "Healthy", "ok", ""]));
    assert_eq!(rows[0]["cells"][1], "Unhealthy");
}
