//! `ApiServer::fork`: a copy of a server that goes on exactly as the original would have, and
//! apart from it.

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, WatchEvent, WatchParams};
use recon_fake::{ApiServer, Failure, ManualClock, Verb};
use recon_test_fixtures::{Widget, pp, widget};
use serde_json::json;

const NOW: &str = "2024-05-01T10:00:00Z";

/// A server with the Widget CRD and one ConfigMap, built the same way every time.
async fn seeded() -> ApiServer {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .seed(11)
        .build();
    server.install_crd(&Widget::crd()).await.unwrap();
    server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "settings", "namespace": "default"}}))
        .unwrap();
    server
}

#[tokio::test]
async fn a_fork_gives_the_uids_and_resource_versions_a_fresh_build_would() {
    let template = seeded().await;
    let fork = template.fork(ManualClock::new(NOW.parse().unwrap()));
    let fresh = seeded().await;

    let in_fork = Api::<Widget>::default_namespaced(fork.client())
        .create(&pp(), &widget("w", 1))
        .await
        .unwrap();
    let in_fresh = Api::<Widget>::default_namespaced(fresh.client())
        .create(&pp(), &widget("w", 1))
        .await
        .unwrap();
    assert_eq!(in_fork.metadata.uid, in_fresh.metadata.uid);
    assert_eq!(
        in_fork.metadata.resource_version,
        in_fresh.metadata.resource_version
    );
    assert_eq!(
        in_fork.metadata.creation_timestamp,
        in_fresh.metadata.creation_timestamp
    );
    assert_eq!(fork.resource_version(), fresh.resource_version());
}

#[tokio::test]
async fn writes_to_a_fork_and_to_its_original_do_not_reach_each_other() {
    let template = seeded().await;
    let before = template.resource_version();
    let fork = template.fork(ManualClock::new(NOW.parse().unwrap()));

    Api::<ConfigMap>::default_namespaced(fork.client())
        .delete("settings", &DeleteParams::default())
        .await
        .unwrap();
    Api::<Widget>::default_namespaced(template.client())
        .create(&pp(), &widget("only-in-template", 1))
        .await
        .unwrap();

    let template_cms = Api::<ConfigMap>::default_namespaced(template.client());
    assert!(template_cms.get_opt("settings").await.unwrap().is_some());
    let fork_widgets = Api::<Widget>::default_namespaced(fork.client());
    assert!(
        fork_widgets
            .get_opt("only-in-template")
            .await
            .unwrap()
            .is_none()
    );
    // Each took the next revision from the same point.
    assert_eq!(template.resource_version(), before + 1);
    assert_eq!(fork.resource_version(), before + 1);
}

#[tokio::test]
async fn a_fork_starts_without_the_originals_log_reactors_or_watches() {
    let template = seeded().await;
    template
        .on(Verb::Get, "configmaps")
        .fail(Failure::Internal("etcd is down".into()));
    let template_cms = Api::<ConfigMap>::default_namespaced(template.client());
    let mut watch = template_cms
        .watch(
            &WatchParams::default(),
            &template.resource_version().to_string(),
        )
        .await
        .unwrap()
        .boxed();
    assert!(template_cms.get("settings").await.is_err());
    let logged = template.requests().len();

    let fork = template.fork(ManualClock::new(NOW.parse().unwrap()));
    assert!(fork.requests().is_empty());
    let fork_cms = Api::<ConfigMap>::default_namespaced(fork.client());
    assert!(fork_cms.get("settings").await.is_ok(), "the reactor stayed");
    fork_cms
        .delete("settings", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(fork.requests().len(), 2);
    assert_eq!(template.requests().len(), logged);

    // The template's watch hears nothing of the fork's delete, and still hears its own.
    Api::<ConfigMap>::default_namespaced(template.setup_client())
        .delete("settings", &DeleteParams::default())
        .await
        .unwrap();
    match watch.next().await {
        Some(Ok(WatchEvent::Deleted(cm))) => {
            assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
            assert_eq!(
                cm.metadata.resource_version,
                Some(template.resource_version().to_string())
            );
        }
        other => panic!("expected the template's own delete, got {other:#?}"),
    }
}
