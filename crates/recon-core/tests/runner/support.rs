//! What the runner tests share: a widget reconciler with a child, replicas whose requests the
//! server's log tells apart, and a Lease client a test can cut off.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::client::Body;
use kube::runtime::watcher;
use recon_core::runner::{LeaderElection, Runner, RunningRunner};
use recon_core::{
    BoxSubReconciler, ChildReconciler, Config, IntoBoxed, Outcome, ResourceReconciler, Sequence,
    SyncReconciler, UpdatingObjectManager,
};
use recon_fake::ApiServer;
use recon_test_fixtures::{Widget, widget};

/// How long a runner test waits for background work: ten seconds, twice a bare controller's
/// wait, since a runner serves its endpoints and may elect a leader before it reconciles.
pub const RUNNER_WAIT: Duration = Duration::from_secs(10);

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

/// A client whose requests fail, as if the network were cut, once [`Cut::cut`] is called, or
/// never answer once [`Cut::hang`] is.
#[derive(Clone, Default)]
pub struct Cut(Arc<AtomicU8>);

// 0, the default, is connected.
const CUT: u8 = 1;
const HANGING: u8 = 2;

impl Cut {
    pub fn cut(&self) {
        self.0.store(CUT, Ordering::SeqCst);
    }

    pub fn hang(&self) {
        self.0.store(HANGING, Ordering::SeqCst);
    }

    pub fn client(&self, client: kube::Client) -> kube::Client {
        let state = Arc::clone(&self.0);
        let namespace = client.default_namespace().to_owned();
        let service = tower::service_fn(move |request: http::Request<Body>| {
            let client = client.clone();
            let state = state.load(Ordering::SeqCst);
            async move {
                match state {
                    CUT => Err(kube::Error::Service("the network is cut".into())),
                    HANGING => futures::future::pending().await,
                    _ => client.send(request).await,
                }
            }
        });
        kube::Client::new(service, namespace)
    }
}

/// Watches that no two replicas are ever inside a reconcile at the same time: each reconcile
/// enters it for as long as its slow step runs (cancelled or not).
#[derive(Clone)]
pub struct Exclusive(Arc<Mutex<Inside>>);

struct Inside {
    since: tokio::time::Instant,
    next: u64,
    /// The reconciles under way: an id and the replica.
    now: Vec<(u64, String)>,
    /// The replicas that entered, in order.
    entered: Vec<String>,
    /// Every overlap seen, in words.
    overlaps: Vec<String>,
}

impl Exclusive {
    pub fn new() -> Self {
        Exclusive(Arc::new(Mutex::new(Inside {
            since: tokio::time::Instant::now(),
            next: 0,
            now: Vec::new(),
            entered: Vec::new(),
            overlaps: Vec::new(),
        })))
    }

    /// `replica` begins a reconcile; it ends when the guard drops.
    pub fn enter(&self, replica: &str) -> Entered {
        let mut inside = self.0.lock().unwrap();
        let at = inside.since.elapsed();
        let others: Vec<String> = inside
            .now
            .iter()
            .filter(|(_, r)| r != replica)
            .map(|(_, r)| r.clone())
            .collect();
        if !others.is_empty() {
            inside.overlaps.push(format!(
                "{replica} began a reconcile at {at:?} while {others:?} reconciled"
            ));
        }
        let id = inside.next;
        inside.next += 1;
        inside.now.push((id, replica.to_owned()));
        inside.entered.push(replica.to_owned());
        Entered {
            exclusive: self.clone(),
            id,
        }
    }

    /// The overlaps seen so far.
    pub fn overlaps(&self) -> Vec<String> {
        self.0.lock().unwrap().overlaps.clone()
    }

    /// How many reconciles `replica` began.
    pub fn reconciles_of(&self, replica: &str) -> usize {
        let inside = self.0.lock().unwrap();
        inside.entered.iter().filter(|r| *r == replica).count()
    }

    /// Whether `replica` is inside a reconcile now.
    pub fn reconciling(&self, replica: &str) -> bool {
        let inside = self.0.lock().unwrap();
        inside.now.iter().any(|(_, r)| r == replica)
    }
}

/// A reconcile under way, in an [`Exclusive`].
pub struct Entered {
    exclusive: Exclusive,
    id: u64,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut inside = self.exclusive.0.lock().unwrap();
        inside.now.retain(|(id, _)| *id != self.id);
    }
}

/// Keeps a ConfigMap `<widget>-child` holding the widget's size, marks the widget ready, and
/// reconciles it again every [`RESYNC`]. `pause` runs first in each reconcile (a slow step).
pub fn reconciler(client: kube::Client, pause: Duration) -> ResourceReconciler<Widget> {
    watched_reconciler(client, pause, None)
}

/// A [`reconciler`] whose slow step enters `watch` as the replica it names.
pub fn watched_reconciler(
    client: kube::Client,
    pause: Duration,
    watch: Option<(Exclusive, String)>,
) -> ResourceReconciler<Widget> {
    ResourceReconciler::new(
        Config::new(client, CONTROLLER),
        Sequence::new(widget_steps(pause, watch)),
    )
    .named(CONTROLLER)
}

/// The steps of [`watched_reconciler`]'s tree: the slow step, then the child.
pub fn widget_steps(
    pause: Duration,
    watch: Option<(Exclusive, String)>,
) -> Vec<BoxSubReconciler<Widget>> {
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
    let slow = SyncReconciler::<Widget>::new("Slow").sync_with(
        (watch, pause),
        async |_, (watch, pause), _| {
            let _entered = watch
                .as_ref()
                .map(|(exclusive, replica)| exclusive.enter(replica));
            tokio::time::sleep(*pause).await;
            Ok(Outcome::requeue_after(RESYNC))
        },
    );
    vec![slow.boxed(), child.boxed()]
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
    replica_with(
        server,
        identity,
        lease,
        Options {
            pause,
            drain,
            ..Options::default()
        },
    )
    .await
}

/// How [`replica_with`] makes a replica.
#[derive(Clone)]
pub struct Options {
    /// How long each reconcile's slow step takes.
    pub pause: Duration,
    /// The drain deadline.
    pub drain: Duration,
    /// The lease duration, renew deadline and retry period, when not controller-runtime's.
    pub timings: Option<(Duration, Duration, Duration)>,
    /// Where its reconciles are watched for overlaps.
    pub exclusive: Option<Exclusive>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pause: Duration::ZERO,
            drain: Duration::from_secs(30),
            timings: None,
            exclusive: None,
        }
    }
}

/// A replica named `identity` on `server`, made as `options` say.
pub async fn replica_with(
    server: &ApiServer,
    identity: &str,
    lease: &Cut,
    options: Options,
) -> RunningRunner {
    let client = tagged(server.client(), identity);
    // Its Lease requests carry `User-Agent: <identity>-lease`.
    let lease_client = tagged(server.client(), &format!("{identity}-lease"));
    let mut election =
        LeaderElection::new(LEASE, "default", identity).client(lease.client(lease_client));
    if let Some((duration, deadline, retry)) = options.timings {
        election = election
            .lease_duration(duration)
            .renew_deadline(deadline)
            .retry_period(retry);
    }
    let watch = options
        .exclusive
        .map(|exclusive| (exclusive, identity.to_owned()));
    Runner::new(client.clone())
        .controller(
            watched_reconciler(client.clone(), options.pause, watch),
            Api::all(client),
            watcher::Config::default(),
        )
        .leader_election(election)
        .drain_deadline(options.drain)
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
