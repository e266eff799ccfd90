//! The Website operator: its conversion, by tables and round trips, the reconciler reading
//! through `v1` an object written through `v1alpha1`, on the in-memory server, and its
//! controller under perturbation exploration (`explore.rs`).

mod explore;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use recon_core::{Config, Request};
use recon_fake::ApiServer;
use recon_testing::{ConversionTests, assert_round_trips};
use serde_json::{Value, json};
use website_operator::{
    MORE_HOSTS, WebsiteV1alpha1, WebsiteV1alpha1Spec, conversion, crd, reconciler,
};

fn v1(hosts: &[&str]) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Website",
        "metadata": {"name": "blog", "namespace": "default"}, "spec": {"hosts": hosts}})
}

fn v1alpha1(domain: &str, more: Option<&str>) -> Value {
    let mut site = json!({"apiVersion": "example.com/v1alpha1", "kind": "Website",
        "metadata": {"name": "blog", "namespace": "default"}, "spec": {"domain": domain}});
    if let Some(more) = more {
        site["metadata"]["annotations"] = json!({MORE_HOSTS: more});
    }
    site
}

#[test]
fn conversion_cases() {
    let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conversions.yaml");
    ConversionTests::from_yaml_file(conversion(), cases)
        .unwrap()
        .run();
    assert_round_trips(
        &conversion(),
        [
            v1(&[]),
            v1(&["one.example.com"]),
            v1(&["one.example.com", "two.example.com"]),
            v1alpha1("x.example.com", None),
        ],
    );
}

#[tokio::test]
async fn a_website_written_through_v1alpha1_is_reconciled_as_v1() {
    let server = ApiServer::new();
    server.install_crd(&crd()).await.unwrap();
    server.serve_conversion("websites.example.com", conversion().into_webhook());
    let old: Api<WebsiteV1alpha1> = Api::default_namespaced(server.client());
    let mut site = WebsiteV1alpha1::new(
        "blog",
        WebsiteV1alpha1Spec {
            domain: "blog.example.com".into(),
        },
    );
    site.metadata.annotations =
        Some([(MORE_HOSTS.to_owned(), "www.blog.example.com".to_owned())].into());
    old.create(&PostParams::default(), &site).await.unwrap();

    let reconciler = reconciler(Config::new(server.client(), "website-operator"));
    reconciler
        .reconcile(&Request::namespaced("default", "blog"))
        .await
        .unwrap();
    let maps: Api<ConfigMap> = Api::default_namespaced(server.client());
    let hosts = maps.get("blog-hosts").await.unwrap().data.unwrap();
    assert_eq!(hosts["hosts"], "blog.example.com\nwww.blog.example.com");

    // Read back through v1alpha1, the object is as it was written.
    let back = old.get("blog").await.unwrap();
    assert_eq!(back.spec.domain, "blog.example.com");
    assert_eq!(
        back.metadata.annotations.unwrap()[MORE_HOSTS],
        "www.blog.example.com"
    );
}
