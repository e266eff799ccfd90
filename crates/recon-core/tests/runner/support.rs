//! What the runner tests share: a widget reconciler with a child, replicas whose requests the
//! server's log tells apart, and a Lease client a test can cut off.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::client::Body;
use kube::runtime::watcher;
use recon_core::runner::{LeaderElection, Runner, RunningRunner};
use recon_core::{
    ChildReconciler, Config, IntoBoxed, Outcome, ResourceReconciler, Sequence, SyncReconciler,
    UpdatingObjectManager,
};
use recon_fake::ApiServer;
use recon_test_fixtures::{Widget, widget};

/// The controller's name, the `controller` label of its metrics.
pub const CONTROLLER: &str = "widgets";
/// The Lease the replicas compete for.
pub const LEASE: &str = "widget-operator";
/// How often each widget is reconciled again, so a leader is always at work.
pub const RESYNC: Duration = Duration::from_secs(1);

/// A server with the Widget CRD and one widget, `w` of size 1.
pub async fn server_with_a_widget() -> ApiServer {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    let widgets: Api<Widget> = Api::default_namespaced(server.setup_client());
    widgets
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    server
}

/// Resizes the widget `w`, as its user.
pub async fn resize(server: &ApiServer, size: i32) {
    let widgets: Api<Widget> = Api::default_namespaced(server.setup_client());
    let patch = Patch::Merge(serde_json::json!({"spec": {"size": size}}));
    widgets
        .patch("w", &PatchParams::default(), &patch)
        .await
        .unwrap();
}

/// One runner of the widget controller without an election, serving its endpoints on a free
/// port; a failed reconcile is retried after 50 ms.
pub async fn serving_endpoints(server: &ApiServer) -> RunningRunner {
    let client = server.client();
    Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO).delays(RESYNC, Duration::from_millis(50)),
            Api::all(client),
            watcher::Config::default(),
        )
        .endpoints("127.0.0.1:0".parse().unwrap())
        .start()
        .await
        .unwrap()
}

/// `client` sending `User-Agent: <agent>`, so the request log tells its requests apart.
pub fn tagged(client: kube::Client, agent: &str) -> kube::Client {
    let agent = http::HeaderValue::from_str(agent).unwrap();
    let namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |mut request: http::Request<Body>| {
        let client = client.clone();
        request
            .headers_mut()
            .insert(http::header::USER_AGENT, agent.clone());
        async move { client.send(request).await }
    });
    kube::Client::new(service, namespace)
}

/// A client whose requests fail, as if the network were cut, once [`Cut::cut`] is called.
#[derive(Clone, Default)]
pub struct Cut(Arc<AtomicBool>);

impl Cut {
    pub fn cut(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn client(&self, client: kube::Client) -> kube::Client {
        let cut = Arc::clone(&self.0);
        let namespace = client.default_namespace().to_owned();
        let service = tower::service_fn(move |request: http::Request<Body>| {
            let client = client.clone();
            let cut = cut.load(Ordering::SeqCst);
            async move {
                if cut {
                    return Err(kube::Error::Service("the network is cut".into()));
                }
                client.send(request).await
            }
        });
        kube::Client::new(service, namespace)
    }
}

/// Keeps a ConfigMap `<widget>-child` holding the widget's size, marks the widget ready, and
/// reconciles it again every [`RESYNC`]. `pause` runs first in each reconcile (a slow step).
pub fn reconciler(client: kube::Client, pause: Duration) -> ResourceReconciler<Widget> {
    let child = ChildReconciler::<Widget, ConfigMap>::new(
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
        }),
        |_, w: &Widget| {
            let mut child = ConfigMap::default();
            child.metadata.name = Some(format!(
                "{}-child",
                w.metadata.name.as_deref().unwrap_or_default()
            ));
            child.data = Some([("size".to_owned(), w.spec.size.to_string())].into());
            Ok(Some(child))
        },
        |_, w, child| {
            w.status.get_or_insert_default().ready = Some(matches!(child, Ok(Some(_))));
            Ok(())
        },
    );
    let slow = SyncReconciler::<Widget>::new("Slow").sync_with_outcome(move |_, _| {
        Box::pin(async move {
            tokio::time::sleep(pause).await;
            Ok(Outcome::requeue_after(RESYNC))
        })
    });
    ResourceReconciler::new(
        Config::new(client, CONTROLLER),
        Sequence::new([slow.boxed(), child.boxed()]),
    )
    .named(CONTROLLER)
}

/// A replica named `identity` on `server`: its controllers' requests carry `User-Agent:
/// <identity>`, its Lease requests go through `lease` (cut or not).
pub async fn replica(
    server: &ApiServer,
    identity: &str,
    lease: &Cut,
    pause: Duration,
) -> RunningRunner {
    replica_draining(server, identity, lease, pause, Duration::from_secs(30)).await
}

/// A [`replica`] with its own drain deadline.
pub async fn replica_draining(
    server: &ApiServer,
    identity: &str,
    lease: &Cut,
    pause: Duration,
    drain: Duration,
) -> RunningRunner {
    let client = tagged(server.client(), identity);
    // Its Lease requests carry `User-Agent: <identity>-lease`.
    let lease_client = tagged(server.client(), &format!("{identity}-lease"));
    let election =
        LeaderElection::new(LEASE, "default", identity).client(lease.client(lease_client));
    Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), pause),
            Api::all(client),
            watcher::Config::default(),
        )
        .leader_election(election)
        .drain_deadline(drain)
        .start()
        .await
        .unwrap()
}

/// Waits until `replica` leads (or stops leading), and says when.
pub async fn until_leading(replica: &RunningRunner, leading: bool) -> tokio::time::Instant {
    let mut leadership = replica.leadership();
    tokio::time::timeout(
        Duration::from_secs(120),
        leadership.wait_for(|l| l.leading == leading),
    )
    .await
    .expect("the leadership never changed")
    .unwrap();
    tokio::time::Instant::now()
}

/// The positions in the request log of the requests `agent` sent, watches aside (a watch is
/// one long request, recorded when it began).
pub fn sent_by(server: &ApiServer, agent: &str) -> Vec<usize> {
    server
        .requests()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.user_agent == agent && r.query_param("watch").is_none())
        .map(|(i, _)| i)
        .collect()
}
