//! A `ResourceReconciler` under a real `kube::runtime::Controller`, watching the in-memory API
//! server: objects created and changed after the controller starts are reconciled, and once
//! everything has settled the controller sends no more writes.

use std::sync::Arc;
use std::time::Duration;

use crate::task::{Task, TaskSpec, set_message, set_phase};
use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::{Controller, watcher};
use kube::{CustomResourceExt, ResourceExt};
use recon_core::{BoxSubReconciler, Config, IntoBoxed, ResourceReconciler, Sequence};
use recon_fake::{ApiServer, Verb};
use recon_test_fixtures::eventually;
use serde_json::json;

fn task(name: &str, size: i32) -> Task {
    Task::new(name, TaskSpec { size })
}

#[tokio::test]
async fn a_controller_on_the_fake_reconciles_objects_created_after_it_starts() {
    let server = ApiServer::new();
    server.install_crd(&Task::crd()).await.unwrap();
    let client = server.client();
    let tree: Vec<BoxSubReconciler<Task>> = vec![
        set_phase("Running").boxed(),
        set_message("reconciled").boxed(),
    ];
    let reconciler = ResourceReconciler::new(
        Config::new(client.clone(), "task-controller"),
        Sequence::new(tree),
    )
    .manage_status();
    let api: Api<Task> = Api::all(client.clone());
    let controller = Controller::new(api, watcher::Config::default())
        .run(
            ResourceReconciler::reconcile_object,
            ResourceReconciler::error_policy,
            Arc::new(reconciler),
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    let tasks: Api<Task> = Api::namespaced(client.clone(), "default");
    for name in ["first", "second"] {
        tasks
            .create(&PostParams::default(), &task(name, 1))
            .await
            .unwrap();
    }
    let reconciled = |name: &'static str, generation: i64| {
        let tasks = tasks.clone();
        move || {
            let tasks = tasks.clone();
            async move {
                let t = tasks.get(name).await.unwrap();
                t.status.is_some_and(|s| {
                    s.phase.as_deref() == Some("Running")
                        && s.message.as_deref() == Some("reconciled")
                        && s.observed_generation == Some(generation)
                })
            }
        }
    };
    eventually("both tasks are reconciled", || {
        let (first, second) = (reconciled("first", 1), reconciled("second", 1));
        async move { first().await && second().await }
    })
    .await;

    // A spec change is a new generation: the controller sees it through its watch.
    tasks
        .patch(
            "first",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap();
    eventually("the new generation is observed", reconciled("first", 2)).await;

    // Steady state: the watch events of the controller's own status writes lead to reconciles
    // that find nothing to change, so no more writes are sent.
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.clear_requests();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let writes: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| !matches!(r.verb, Verb::Get | Verb::List | Verb::Watch))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "writes in steady state: {writes:?}");
    let names: Vec<String> = tasks
        .list(&Default::default())
        .await
        .unwrap()
        .iter()
        .map(|t| t.name_any())
        .collect();
    assert_eq!(names, ["first", "second"]);
    running.abort();
}
