//! What several modules of these tests share: APIs of cluster-scoped kinds, delete options, a
//! server holding a widget, and the warnings of the last answer.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PropagationPolicy};
use recon_fake::ApiServer;
use recon_test_fixtures::{Widget, pp, server, widget, widgets};

/// All CRDs.
pub(crate) fn crds(server: &ApiServer) -> Api<CustomResourceDefinition> {
    Api::all(server.client())
}

/// All namespaces.
pub(crate) fn namespaces(server: &ApiServer) -> Api<Namespace> {
    Api::all(server.client())
}

/// Delete options with this propagation policy.
pub(crate) fn propagation(policy: PropagationPolicy) -> DeleteParams {
    DeleteParams {
        propagation_policy: Some(policy),
        ..DeleteParams::default()
    }
}

/// The `Warning`s of the last request the server answered.
pub(crate) fn last_warnings(server: &ApiServer) -> Vec<String> {
    server
        .requests()
        .last()
        .expect("a request")
        .warnings
        .clone()
}

/// A server with the CRDs and a stored Widget `x` of size 1.
pub(crate) async fn with_widget() -> (ApiServer, Api<Widget>, Widget) {
    let server = server().await;
    let api = widgets(&server);
    let created = api.create(&pp(), &widget("x", 1)).await.unwrap();
    (server, api, created)
}
