//! End to end: the Function reconciler under a real `kube::runtime::Controller`, wired by
//! `ResourceReconciler::controller`, against the in-memory API server. A Function created
//! through the API gets its children and its status; a deleted child is recreated (the owner
//! watch); a Deployment turning available makes the Function ready; a foreign object in a
//! child's way is reported, and once it is gone the child is created (the tracker's watch).
//!
//! Waits poll the server's state a bounded number of times; nothing asserts on elapsed time.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use function_operator::{Function, FunctionSpec, crd, reconciler};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServicePort, ServiceSpec};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use recon_core::{Config, EventLog, ResourceReconciler, Trigger};
use recon_fake::ApiServer;

use crate::common;
use serde_json::json;

/// How many times a wait polls before giving up (10 ms apart).
const POLLS: usize = 3_000;

/// Polls `probe` until it returns `Some`, at most [`POLLS`] times; giving up, names what the
/// operator's manifest refused it, if anything (a controller that may not watch never acts).
async fn wait_for<T, F, Fut>(server: &ApiServer, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..POLLS {
        if let Some(found) = probe().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let refused = common::rbac()
        .check_requests(&server.requests())
        .err()
        .unwrap_or_default();
    panic!("gave up after {POLLS} polls waiting for {what}. {refused}");
}

fn stored<K>(server: &ApiServer, name: &str) -> Option<K>
where
    K: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    server
        .stored_as::<K>(Some("default"), name)
        .unwrap_or_else(|e| panic!("{name} does not read as {}: {e}", K::kind(&())))
}

fn condition(function: &Function, type_: &str) -> Option<(String, String)> {
    let c = function
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone()))
}

fn is(function: &Function, type_: &str, status: &str, reason: &str) -> bool {
    condition(function, type_) == Some((status.to_owned(), reason.to_owned()))
}

fn new_function(name: &str) -> Function {
    Function::new(
        name,
        FunctionSpec {
            image: "hello".to_owned(),
            env: [("GREETING".to_owned(), "hi".to_owned())].into(),
            configs: [(
                "nginx".to_owned(),
                BTreeMap::from([("nginx.conf".to_owned(), "worker_processes 1;".to_owned())]),
            )]
            .into(),
            ..FunctionSpec::default()
        },
    )
}

#[tokio::test]
async fn the_controller_keeps_a_functions_children_and_status() {
    let server = ApiServer::new();
    server.install_crd(&crd()).await.unwrap();
    // The operator runs as its service account, under the manifest a cluster install applies;
    // the test acts as the cluster's user.
    let rbac = common::rbac();
    for object in rbac.objects() {
        server.seed(object).unwrap();
    }
    let client = server.client_as(rbac.identity());
    let user = server.setup_client();
    let events = EventLog::default();
    let reconciler =
        reconciler(Config::new(client.clone(), "function-operator").with_recorder(events.clone()));

    // Every child kind is watched twice: as owned (its owner is reconciled) and as tracked (a
    // foreign object in a child's way).
    let watches: Vec<(String, Trigger)> = reconciler
        .setup()
        .watches()
        .iter()
        .map(|w| (w.resource.kind.clone(), w.trigger))
        .collect();
    let watched = |kind: &str, trigger| watches.contains(&(kind.to_owned(), trigger));
    for kind in ["ConfigMap", "Deployment", "Service"] {
        assert!(watched(kind, Trigger::Owner), "{kind} owned: {watches:?}");
        assert!(
            watched(kind, Trigger::Tracked),
            "{kind} tracked: {watches:?}"
        );
    }

    let controller = reconciler
        .controller(Api::all(client.clone()), watcher::Config::default())
        .run(
            ResourceReconciler::reconcile_object,
            ResourceReconciler::error_policy,
            Arc::new(reconciler),
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    let functions: Api<Function> = Api::namespaced(user.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(user.clone(), "default");
    let services: Api<Service> = Api::namespaced(user.clone(), "default");
    functions
        .create(&PostParams::default(), &new_function("hello"))
        .await
        .unwrap();

    // The children, and the status reporting them.
    let first = wait_for(&server, "the deployment", || async {
        stored::<Deployment>(&server, "hello")
    })
    .await;
    // As JSON: the Rust shape of a Deployment differs between Kubernetes versions.
    let stored_first = server
        .stored("apps/v1", "Deployment", Some("default"), "hello")
        .unwrap();
    assert_eq!(
        stored_first["spec"]["template"]["spec"]["containers"][0]["image"],
        "docker.io/library/hello:latest"
    );
    wait_for(&server, "the service and config maps", || async {
        stored::<Service>(&server, "hello")?;
        let env = stored::<ConfigMap>(&server, "hello-env")?;
        stored::<ConfigMap>(&server, "hello-config-nginx")?;
        Some(env).filter(|cm| cm.data == Some([("GREETING".to_owned(), "hi".to_owned())].into()))
    })
    .await;
    let status = wait_for(&server, "the status", || async {
        let function = stored::<Function>(&server, "hello")?;
        let progressing = is(
            &function,
            "DeploymentReady",
            "Unknown",
            "DeploymentProgressing",
        ) && is(&function, "ServiceReady", "True", "ServiceReady");
        function
            .status
            .filter(|s| progressing && s.observed_generation == Some(1))
    })
    .await;
    assert_eq!(status.deployment_name.as_deref(), Some("hello"));
    assert_eq!(
        status.url.as_deref(),
        Some("http://hello.default.svc.cluster.local")
    );

    // Someone deletes the Deployment: its watch event reaches the Function (its owner), whose
    // reconcile creates it again.
    let first_uid = first.metadata.uid.clone().unwrap();
    deployments
        .delete("hello", &DeleteParams::default())
        .await
        .unwrap();
    let second = wait_for(&server, "the deployment to be recreated", || async {
        stored::<Deployment>(&server, "hello")
            .filter(|d| d.metadata.uid.as_ref() != Some(&first_uid))
    })
    .await;
    let created = events
        .events()
        .iter()
        .filter(|e| {
            e.event.reason == "Created"
                && e.event.note.as_deref() == Some("Created Deployment \"hello\"")
        })
        .count();
    assert_eq!(created, 2, "created, deleted, created again");

    // The deployment controller (played here) reports the Deployment available: the Function
    // turns ready.
    let generation = second.metadata.generation.unwrap();
    deployments
        .patch_status(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1,
                "conditions": [{"type": "Available", "status": "True",
                                "reason": "MinimumReplicasAvailable", "message": ""}],
            }})),
        )
        .await
        .unwrap();
    let ready = wait_for(&server, "the function to be ready", || async {
        stored::<Function>(&server, "hello").filter(|f| is(f, "Ready", "True", "Ready"))
    })
    .await;
    assert_eq!(ready.status.unwrap().available_replicas, Some(1));

    // A foreign Service stands where the next Function's Service goes: reported, not taken
    // over; once it is deleted, the tracker's watch brings the Function back and its Service
    // is created.
    let mut foreign = Service::default();
    foreign.metadata.name = Some("blocked".to_owned());
    foreign.metadata.labels = Some([("app".to_owned(), "someone-else".to_owned())].into());
    foreign.spec = Some(ServiceSpec {
        ports: Some(vec![ServicePort {
            port: 80,
            ..ServicePort::default()
        }]),
        ..ServiceSpec::default()
    });
    services
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    functions
        .create(&PostParams::default(), &new_function("blocked"))
        .await
        .unwrap();
    wait_for(&server, "the foreign service to be reported", || async {
        stored::<Function>(&server, "blocked")
            .filter(|f| is(f, "ServiceReady", "False", "NotOwned"))
    })
    .await;
    let kept = stored::<Service>(&server, "blocked").unwrap();
    assert_eq!(kept.metadata.owner_references, None, "not adopted");
    services
        .delete("blocked", &DeleteParams::default())
        .await
        .unwrap();
    let owned = wait_for(&server, "the function's own service", || async {
        stored::<Service>(&server, "blocked").filter(|s| s.metadata.owner_references.is_some())
    })
    .await;
    assert_eq!(owned.metadata.owner_references.unwrap()[0].name, "blocked");
    wait_for(&server, "the service to be reported", || async {
        stored::<Function>(&server, "blocked")
            .filter(|f| is(f, "ServiceReady", "True", "ServiceReady"))
    })
    .await;

    running.abort();
    // Nothing the operator sent was refused, and its manifest grants what it needed.
    rbac.check_requests(&server.requests())
        .unwrap_or_else(|e| panic!("{e}"));
}
