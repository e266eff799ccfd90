//! Two replicas of the Function operator under recon's [`Runner`] with leader election, and two
//! handovers: the leader shuts down (as on SIGTERM) and hands the Lease over at once; then the
//! new leader loses the API server for its Lease and the other takes over once it expired.
//! Short timings (a 4 s lease) keep the demo quick; production keeps controller-runtime's 15 s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use function_operator::{Function, FunctionSpec};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::client::Body;
use kube::runtime::watcher;
use recon_core::Config;
use recon_core::runner::{LeaderElection, Runner, RunningRunner};
use serde_json::json;
use tokio::time::Instant;

use crate::scenario::wait_for;
use crate::{DemoError, NAMESPACE, Target};

/// The Lease the replicas compete for.
pub const LEASE: &str = "recon-demo-function-operator";
const FUNCTION: &str = "relay";

/// What the failover part of the demo saw, in order: `replica-a leads`…
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handovers {
    /// Each change of leader, as `<replica> leads`.
    pub leaders: Vec<String>,
    /// The image each leader rolled the Function's Deployment to, as `<replica>: <image>`.
    pub rollouts: Vec<String>,
}

/// A replica: its runner, and a switch that cuts its Lease requests off.
struct Replica {
    name: &'static str,
    running: RunningRunner,
    cut: Arc<AtomicBool>,
}

/// Starts replica `name` of the Function operator on `target`.
async fn start(target: &Target, name: &'static str) -> Result<Replica, DemoError> {
    // Each replica runs as the operator's service account, its Lease included.
    let client = target
        .operator_client(function_operator::RBAC_MANIFEST)
        .await?;
    let cut = Arc::new(AtomicBool::new(false));
    let election = LeaderElection::new(LEASE, NAMESPACE, name)
        .lease_duration(Duration::from_secs(4))
        .renew_deadline(Duration::from_secs(3))
        .retry_period(Duration::from_secs(1))
        .client(cuttable(client.clone(), Arc::clone(&cut)));
    let reconciler =
        function_operator::reconciler(Config::new(client.clone(), "function-operator"));
    let running = Runner::new(client.clone())
        .controller(
            reconciler,
            Api::namespaced(client, NAMESPACE),
            watcher::Config::default(),
        )
        .leader_election(election)
        .drain_deadline(Duration::from_secs(10))
        .start()
        .await
        .map_err(|e| DemoError::Wait {
            what: format!("starting {name}"),
            message: e.to_string(),
        })?;
    println!("  {name}: started");
    Ok(Replica { name, running, cut })
}

/// `client`, failing every request once `cut` is set: a replica cut off from the API server.
fn cuttable(client: kube::Client, cut: Arc<AtomicBool>) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let client = client.clone();
        let cut = cut.load(Ordering::SeqCst);
        async move {
            if cut {
                return Err(kube::Error::Service("cut off by the demo".into()));
            }
            client.send(request).await
        }
    });
    kube::Client::new(service, namespace)
}

async fn until_leading(
    replica: &Replica,
    since: Instant,
    handovers: &mut Handovers,
) -> Result<(), DemoError> {
    let mut leadership = replica.running.leadership();
    tokio::time::timeout(crate::WAIT, leadership.wait_for(|l| l.leading))
        .await
        .map_err(|_| DemoError::Timeout {
            what: format!("{} to lead", replica.name),
        })?
        .map_err(|_| DemoError::Wait {
            what: format!("{} to lead", replica.name),
            message: "its runner stopped".to_owned(),
        })?;
    println!(
        "  {}: leads the Lease {LEASE} ({:.1} s later)",
        replica.name,
        since.elapsed().as_secs_f64()
    );
    handovers.leaders.push(format!("{} leads", replica.name));
    Ok(())
}

/// Sets the Function's image and waits until the leader rolled its Deployment to it.
async fn roll(
    user: &kube::Client,
    leader: &Replica,
    image: &str,
    handovers: &mut Handovers,
) -> Result<(), DemoError> {
    let functions: Api<Function> = Api::namespaced(user.clone(), NAMESPACE);
    let step = format!("setting the Function's image to {image}");
    if functions
        .get_opt(FUNCTION)
        .await
        .map_err(|e| DemoError::kube(&step, e))?
        .is_none()
    {
        let mut function = Function::new(
            FUNCTION,
            FunctionSpec {
                image: image.to_owned(),
                replicas: Some(1),
                port: None,
                env: Default::default(),
                configs: Default::default(),
            },
        );
        function.metadata.namespace = Some(NAMESPACE.to_owned());
        functions
            .create(&PostParams::default(), &function)
            .await
            .map_err(|e| DemoError::kube(&step, e))?;
    } else {
        functions
            .patch(
                FUNCTION,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"image": image}})),
            )
            .await
            .map_err(|e| DemoError::kube(&step, e))?;
    }
    let deployments: Api<Deployment> = Api::namespaced(user.clone(), NAMESPACE);
    let resolved = format!("docker.io/{image}");
    wait_for("the Function's Deployment to run its image", || async {
        let deployment = deployments.get_opt(FUNCTION).await.ok().flatten()?;
        let value = serde_json::to_value(&deployment).ok()?;
        (value.pointer("/spec/template/spec/containers/0/image")? == resolved.as_str())
            .then_some(())
    })
    .await?;
    println!(
        "  {}: rolled Deployment {FUNCTION} to {resolved}",
        leader.name
    );
    handovers
        .rollouts
        .push(format!("{}: {resolved}", leader.name));
    Ok(())
}

/// Plays the failover: two replicas, a graceful handover, then a lost Lease.
pub async fn run(target: &Target) -> Result<Handovers, DemoError> {
    let mut handovers = Handovers::default();
    let user = target.user_client();
    target.install_crd(&function_operator::crd()).await?;

    let began = Instant::now();
    let a = start(target, "replica-a").await?;
    until_leading(&a, began, &mut handovers).await?;
    let b = start(target, "replica-b").await?;
    roll(&user, &a, "example/relay:1.0", &mut handovers).await?;

    println!("  replica-a: shuts down, as on SIGTERM: drains, then hands the Lease back");
    let shutdown = Instant::now();
    a.running.shutdown().await;
    until_leading(&b, shutdown, &mut handovers).await?;
    roll(&user, &b, "example/relay:2.0", &mut handovers).await?;

    let a = start(target, "replica-a").await?;
    println!("  replica-b: loses the API server for its Lease (its controllers still reach it)");
    let cut = Instant::now();
    b.cut.store(true, Ordering::SeqCst);
    let mut leadership = b.running.leadership();
    let _ = tokio::time::timeout(crate::WAIT, leadership.wait_for(|l| !l.leading)).await;
    println!(
        "  replica-b: could not renew within its deadline; stopped reconciling ({:.1} s later)",
        cut.elapsed().as_secs_f64()
    );
    until_leading(&a, cut, &mut handovers).await?;
    roll(&user, &a, "example/relay:3.0", &mut handovers).await?;

    for replica in [a, b] {
        replica.running.shutdown().await;
    }
    let functions: Api<Function> = Api::namespaced(user, NAMESPACE);
    functions
        .delete(FUNCTION, &DeleteParams::default())
        .await
        .map_err(|e| DemoError::kube("deleting the Function", e))?;
    Ok(handovers)
}
