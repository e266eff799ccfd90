//! An operator whose API evolved: a `Website` was `v1alpha1` with one `domain`, and is `v1` with
//! a list of `hosts`. `v1` is the hub and the storage version; [`conversion`] converts
//! `v1alpha1` to it and back, losslessly (the hosts beyond the first ride in an annotation), and
//! serves the CRD's conversion webhook ([`crd`] says `strategy: Webhook`). The reconciler works
//! on `v1` only: objects written through `v1alpha1` reach it converted.
//!
//! The reconciler keeps a ConfigMap `<name>-hosts` listing the hosts, one per line.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use kube::api::{Api, PostParams};
//! use recon_fake::ApiServer;
//! use website_operator::{Website, WebsiteV1alpha1, WebsiteV1alpha1Spec, conversion, crd};
//!
//! let server = ApiServer::new();
//! server.install_crd(&crd()).await.unwrap();
//! server.serve_conversion("websites.example.com", conversion().into_webhook());
//! let old: Api<WebsiteV1alpha1> = Api::default_namespaced(server.client());
//! let site = WebsiteV1alpha1::new("blog", WebsiteV1alpha1Spec { domain: "blog.example.com".into() });
//! old.create(&PostParams::default(), &site).await.unwrap();
//! let new: Api<Website> = Api::default_namespaced(server.client());
//! assert_eq!(new.get("blog").await.unwrap().spec.hosts, ["blog.example.com"]);
//! # });
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResource, CustomResourceExt};
use recon_core::conversion::Conversion;
use recon_core::{ChildReconciler, Config, ResourceReconciler, UpdatingObjectManager};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where `v1alpha1` keeps the hosts after the first, comma-separated.
pub const MORE_HOSTS: &str = "websites.example.com/more-hosts";

/// A website, as `v1` has it: the hub and the storage version.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(group = "example.com", version = "v1", kind = "Website", namespaced)]
pub struct WebsiteSpec {
    /// The host names it answers to.
    pub hosts: Vec<String>,
}

/// A website, as `v1alpha1` had it: one domain.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "example.com",
    version = "v1alpha1",
    kind = "Website",
    root = "WebsiteV1alpha1",
    namespaced
)]
pub struct WebsiteV1alpha1Spec {
    /// Its domain; empty for none.
    pub domain: String,
}

/// `v1alpha1` to `v1`: the domain is the first host, the annotation holds the others.
pub fn to_v1(old: WebsiteV1alpha1) -> Website {
    let mut metadata = old.metadata;
    let more = metadata
        .annotations
        .as_mut()
        .and_then(|a| a.remove(MORE_HOSTS));
    if metadata
        .annotations
        .as_ref()
        .is_some_and(BTreeMap::is_empty)
    {
        metadata.annotations = None;
    }
    let hosts = std::iter::once(old.spec.domain)
        .filter(|d| !d.is_empty())
        .chain(more.iter().flat_map(|m| m.split(',').map(str::to_owned)))
        .collect();
    Website {
        metadata,
        spec: WebsiteSpec { hosts },
    }
}

/// `v1` to `v1alpha1`: the first host is the domain, the others go in the annotation.
pub fn to_v1alpha1(new: Website) -> WebsiteV1alpha1 {
    let mut metadata = new.metadata;
    let mut hosts = new.spec.hosts.into_iter();
    let domain = hosts.next().unwrap_or_default();
    let more: Vec<String> = hosts.collect();
    if !more.is_empty() {
        metadata
            .annotations
            .get_or_insert_default()
            .insert(MORE_HOSTS.to_owned(), more.join(","));
    }
    WebsiteV1alpha1 {
        metadata,
        spec: WebsiteV1alpha1Spec { domain },
    }
}

/// The conversion: `v1` the hub, `v1alpha1` a spoke. Serve it at the CRD's webhook URL
/// (`WebhookServer::conversion`), or in-process on the in-memory server
/// (`ApiServer::serve_conversion`, with `conversion().into_webhook()`).
pub fn conversion() -> Conversion<Website> {
    Conversion::<Website>::hub().spoke(to_v1, to_v1alpha1)
}

/// The CRD: both versions served, `v1` stored, converted by the webhook at `url`.
pub fn crd_with_webhook(url: &str, ca_bundle: Option<&str>) -> CustomResourceDefinition {
    let mut crd = kube::core::crd::merge_crds(vec![WebsiteV1alpha1::crd(), Website::crd()], "v1")
        .unwrap_or_else(|e| unreachable!("the two versions merge: {e}"));
    let mut client = serde_json::json!({"url": url});
    if let Some(bundle) = ca_bundle {
        client["caBundle"] = serde_json::Value::String(bundle.to_owned());
    }
    crd.spec.conversion = serde_json::from_value(serde_json::json!({
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client}
    }))
    .ok();
    crd
}

/// The CRD with a placeholder webhook URL, for the in-memory server (which calls the conversion
/// registered in-process).
pub fn crd() -> CustomResourceDefinition {
    crd_with_webhook("https://website-operator.example.com/convert", None)
}

/// Keeps the ConfigMap `<name>-hosts` listing the website's hosts.
pub fn reconciler(config: Config) -> ResourceReconciler<Website> {
    let hosts = ChildReconciler::<Website, ConfigMap>::new(
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
        }),
        |_, site: &Website| {
            let mut map = ConfigMap::default();
            map.metadata.name = Some(format!(
                "{}-hosts",
                site.metadata.name.as_deref().unwrap_or_default()
            ));
            map.data = Some([("hosts".to_owned(), site.spec.hosts.join("\n"))].into());
            Ok(Some(map))
        },
        |_, _, _| Ok(()),
    );
    ResourceReconciler::new(config, hosts).named("WebsiteReconciler")
}
