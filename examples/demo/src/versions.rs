//! A resource written through its old version: the Website operator's CRD serves `v1alpha1`
//! and `v1`, stores `v1`, and converts through the operator's webhook; a Website created through
//! `v1alpha1` is reconciled by the operator, which reads `v1` only.
//!
//! In memory the conversion is registered in-process; on a cluster the demo serves it over
//! HTTPS on 127.0.0.1 and points the CRD at it, which only an API server on this machine can
//! reach (the project's own, `cargo xtask demo --real`).

use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher;
use recon_core::Config;
use recon_core::admission::{SelfSignedCertificate, WebhookServer};
use recon_core::runner::Runner;
use website_operator::{MORE_HOSTS, Website, WebsiteV1alpha1, WebsiteV1alpha1Spec};

use crate::scenario::wait_for;
use crate::{DemoError, NAMESPACE, Target};

const SITE: &str = "blog";

/// What the versions part saw: each view of the Website, and the operator's ConfigMap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Views {
    /// The Website read through v1: its hosts.
    pub v1_hosts: Vec<String>,
    /// The Website read through v1alpha1: its domain and the annotation with the other hosts.
    pub v1alpha1: (String, Option<String>),
    /// The operator's ConfigMap: the hosts it lists.
    pub config_map: String,
}

fn failed(what: &str, e: impl std::fmt::Display) -> DemoError {
    DemoError::Wait {
        what: what.to_owned(),
        message: e.to_string(),
    }
}

/// Plays it on `target`.
pub async fn run(target: &Target) -> Result<Views, DemoError> {
    let user = target.user_client();
    // The conversion webhook: in-process in memory, over HTTPS on 127.0.0.1 on a cluster.
    let webhook = match target {
        Target::InMemory(server) => {
            server.serve_conversion(
                "websites.example.com",
                website_operator::conversion().into_webhook(),
            );
            target.install_crd(&website_operator::crd()).await?;
            println!(
                "  the Website CRD: v1alpha1 and v1 served, v1 stored, converted by the operator (in-process)"
            );
            None
        }
        Target::Cluster(..) => {
            let certificate = SelfSignedCertificate::generate(&["127.0.0.1"])
                .map_err(|e| failed("the conversion webhook's certificate", e))?;
            let tls = certificate
                .tls_config()
                .map_err(|e| failed("the conversion webhook's TLS", e))?;
            let server = WebhookServer::new(tls)
                .conversion("/convert", website_operator::conversion())
                .start(([127, 0, 0, 1], 0).into())
                .await
                .map_err(|e| failed("the conversion webhook", e))?;
            let url = format!("https://{}/convert", server.local_addr());
            let bundle = base64::engine::general_purpose::STANDARD.encode(certificate.cert_pem());
            target
                .install_crd(&website_operator::crd_with_webhook(&url, Some(&bundle)))
                .await?;
            println!(
                "  the Website CRD: v1alpha1 and v1 served, v1 stored, converted by the operator at {url}"
            );
            Some(server)
        }
    };

    let client = target.client();
    let running = Runner::new(client.clone())
        .controller(
            website_operator::reconciler(Config::new(client.clone(), "website-operator")),
            Api::namespaced(client, NAMESPACE),
            watcher::Config::default(),
        )
        .drain_deadline(Duration::from_secs(10))
        .start()
        .await
        .map_err(|e| failed("starting the Website operator", e))?;

    let old: Api<WebsiteV1alpha1> = Api::namespaced(user.clone(), NAMESPACE);
    let mut site = WebsiteV1alpha1::new(
        SITE,
        WebsiteV1alpha1Spec {
            domain: "blog.example.com".into(),
        },
    );
    site.metadata.annotations =
        Some([(MORE_HOSTS.to_owned(), "www.blog.example.com".to_owned())].into());
    old.create(&PostParams::default(), &site)
        .await
        .map_err(|e| DemoError::kube("creating a Website through v1alpha1", e))?;
    println!(
        "  created Website {SITE} through v1alpha1: domain blog.example.com, {MORE_HOSTS}: www.blog.example.com"
    );

    let maps: Api<ConfigMap> = Api::namespaced(user.clone(), NAMESPACE);
    let config_map = wait_for("the Website operator's ConfigMap", || async {
        let map = maps
            .get_opt(&format!("{SITE}-hosts"))
            .await
            .ok()
            .flatten()?;
        map.data?.get("hosts").cloned()
    })
    .await?;
    println!(
        "  the operator (which reads v1) wrote ConfigMap {SITE}-hosts: {}",
        config_map.replace('\n', ", ")
    );

    let new: Api<Website> = Api::namespaced(user, NAMESPACE);
    let as_v1 = new
        .get(SITE)
        .await
        .map_err(|e| DemoError::kube("reading the Website through v1", e))?;
    let as_v1alpha1 = old
        .get(SITE)
        .await
        .map_err(|e| DemoError::kube("reading the Website through v1alpha1", e))?;
    let annotation = as_v1alpha1
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MORE_HOSTS))
        .cloned();
    println!(
        "  read through v1: hosts {:?}; through v1alpha1: domain {:?}, {MORE_HOSTS}: {:?}",
        as_v1.spec.hosts,
        as_v1alpha1.spec.domain,
        annotation.as_deref().unwrap_or("")
    );

    old.delete(SITE, &DeleteParams::default())
        .await
        .map_err(|e| DemoError::kube("deleting the Website", e))?;
    running.shutdown().await;
    if let Some(server) = webhook {
        server.shutdown().await;
    }
    Ok(Views {
        v1_hosts: as_v1.spec.hosts,
        v1alpha1: (as_v1alpha1.spec.domain, annotation),
        config_map,
    })
}
