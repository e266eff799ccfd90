//! `/readyz` waits for the controllers' caches; webhooks serve on every replica, leader or not.

use std::time::Duration;

use recon_fake::Verb;
use recon_test_fixtures::eventually_within;
use tokio::sync::watch;

use crate::metrics::get;
use crate::support::*;

#[tokio::test]
async fn readiness_fails_until_the_controllers_cache_has_listed_its_objects() {
    let server = server_with_a_widget().await;
    // The controller's first list of widgets waits until the test opens the gate.
    let (gate, gated) = watch::channel(false);
    server.on(Verb::List, "widgets").before(move |_| {
        let mut gated = gated.clone();
        async move {
            let _ = gated.wait_for(|open| *open).await;
        }
    });
    let running = serving_endpoints(&server).await;
    let addr = running.endpoints_addr().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        get(addr, "/readyz", "*/*").await,
        (
            500,
            "[+]shutdown ok\n[-]informer-sync failed: the controllers' caches have not synced yet\nreadyz check failed\n"
                .to_owned()
        )
    );
    assert_eq!(
        get(addr, "/healthz", "*/*").await,
        (200, "ok".to_owned()),
        "alive, though not ready"
    );

    gate.send_replace(true);
    eventually_within(RUNNER_WAIT, "the cache synced", || async {
        get(addr, "/readyz", "*/*").await.0 == 200
    })
    .await;
    running.shutdown().await;
}

#[cfg(feature = "webhook-server")]
#[tokio::test]
async fn webhooks_serve_on_the_standby_as_on_the_leader() {
    use kube::api::Api;
    use kube::runtime::watcher;
    use recon_core::admission::{SelfSignedCertificate, WebhookServer};
    use recon_core::runner::{LeaderElection, Runner, RunningRunner};
    use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
    use recon_test_fixtures::Widget;

    let server = server_with_a_widget().await;
    let start = |identity: &'static str| {
        let client = tagged(server.client(), identity);
        async move {
            let noop = SyncReconciler::<Widget>::new("Noop").sync(async |_, _| Ok(()));
            let defaulter =
                AdmissionWebhookAdapter::new(Config::new(client.clone(), "defaulter"), noop);
            let tls = SelfSignedCertificate::generate(&["127.0.0.1"])
                .unwrap()
                .tls_config()
                .unwrap();
            let webhooks = WebhookServer::new(tls).route("/mutate", defaulter);
            Runner::new(client.clone())
                .controller(
                    reconciler(client.clone(), Duration::ZERO),
                    Api::all(client),
                    watcher::Config::default(),
                )
                .leader_election(LeaderElection::new(LEASE, "default", identity))
                .webhooks(webhooks, "127.0.0.1:0".parse().unwrap())
                .endpoints("127.0.0.1:0".parse().unwrap())
                .start()
                .await
                .unwrap()
        }
    };
    let a: RunningRunner = start("replica-a").await;
    let mut leading = a.leadership();
    tokio::time::timeout(Duration::from_secs(10), leading.wait_for(|l| l.leading))
        .await
        .unwrap()
        .unwrap();
    let b = start("replica-b").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!b.leadership().borrow().leading);
    for replica in [&a, &b] {
        let webhooks = replica.webhooks_addr().unwrap();
        tokio::net::TcpStream::connect(webhooks)
            .await
            .expect("the webhook server listens");
        let (code, checks) = get(replica.endpoints_addr().unwrap(), "/readyz?verbose", "*/*").await;
        assert_eq!(code, 200, "{checks}");
        assert!(checks.contains("[+]webhook ok\n"), "{checks}");
    }
    b.shutdown().await;
    a.shutdown().await;
}
