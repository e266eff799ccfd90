//! What recon's own integration tests share: a namespaced `Widget` CRD with the status
//! subresource (derived), a cluster-scoped `Gizmo` CRD without it (a YAML fixture under
//! `fixtures/crds`), small helpers for requests to the in-memory API server, waiting for
//! background work, and the configuration of the property tests.

mod proptest_config;
mod waiting;

pub use proptest_config::proptest_config;
pub use waiting::{eventually, eventually_within};

use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::core::Status;
use kube::core::response::StatusDetails;
use kube::{CustomResource, CustomResourceExt};
use recon_fake::ApiServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The `Widget` spec: one number.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    /// Any number; nothing validates it.
    pub size: i32,
}

/// The `Widget` status (a subresource).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct WidgetStatus {
    /// Set by the tests' reconcilers and status writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Conditions, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<serde_json::Value>,
}

/// Conditions as untyped objects: a structural schema needs the items' type, and keeping their
/// fields needs `x-kubernetes-preserve-unknown-fields` (the fake prunes, as a real server does).
fn conditions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    })
}

/// A `Widget` named `name` (no namespace: the API it is created through sets it).
pub fn widget(name: &str, size: i32) -> Widget {
    Widget::new(name, WidgetSpec { size })
}

/// The `Gizmo` CRD, read from `fixtures/crds`.
pub fn gizmo_crd() -> CustomResourceDefinition {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/crds/gizmos.example.com.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `Gizmo` resource, for `Api<DynamicObject>`.
pub fn gizmo_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Gizmo"),
        "gizmos",
    )
}

/// All `Gizmo`s (cluster-scoped).
pub fn gizmos(server: &ApiServer) -> Api<DynamicObject> {
    Api::all_with(server.client(), &gizmo_resource())
}

/// A server with both CRDs installed.
pub async fn server() -> ApiServer {
    let server = ApiServer::new();
    server
        .install_crd(&Widget::crd())
        .await
        .expect("install Widget CRD");
    server
        .install_crd(&gizmo_crd())
        .await
        .expect("install Gizmo CRD");
    server
}

/// The `Widget`s of namespace `default`.
pub fn widgets(server: &ApiServer) -> Api<Widget> {
    Api::namespaced(server.client(), "default")
}

/// The `Status` of an API error; panics on any other error.
pub fn status(result: Result<impl std::fmt::Debug, kube::Error>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// The resourceVersion of an object as a number.
pub fn rv(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .unwrap_or("")
        .parse()
        .expect("numeric resourceVersion")
}

/// `PostParams::default()`, short.
pub fn pp() -> PostParams {
    PostParams::default()
}

/// A k8s-openapi object from JSON.
pub fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("valid object")
}

/// A raw request with a JSON body, answered as JSON (API errors come back as `kube::Error::Api`).
pub async fn raw(
    server: &ApiServer,
    method: &str,
    path: &str,
    body: &str,
) -> Result<Value, kube::Error> {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.as_bytes().to_vec())
        .expect("valid request");
    server.client().request::<Value>(request).await
}

/// A minimal valid Deployment `name`.
pub fn deployment(name: &str) -> Deployment {
    from_json(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }))
}

/// Creates the Widget `name` (size 1) with these finalizers.
pub async fn create_widget(server: &ApiServer, name: &str, finalizers: &[&str]) -> Widget {
    let mut w = widget(name, 1);
    if !finalizers.is_empty() {
        w.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    }
    widgets(server)
        .create(&PostParams::default(), &w)
        .await
        .expect("create widget")
}

/// Asserts the object an error's details name: its `(name, group, kind)`.
pub fn assert_details(details: &StatusDetails, named: (&str, &str, &str)) {
    assert_eq!(
        (
            details.name.as_str(),
            details.group.as_str(),
            details.kind.as_str()
        ),
        named
    );
}

/// Asserts an error's code, reason and message together.
pub fn assert_status(status: &Status, code: u16, reason: &str, message: &str) {
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (code, reason, message)
    );
}
