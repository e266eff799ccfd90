//! Shared by the integration tests: a namespaced `Widget` CRD with the status subresource
//! (derived), a cluster-scoped `Gizmo` CRD without it (a YAML fixture), and small helpers.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::core::Status;
use kube::{CustomResource, CustomResourceExt};
use recon_core::fake::ApiServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<serde_json::Value>,
}

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

pub fn gizmo_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Gizmo"),
        "gizmos",
    )
}

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
