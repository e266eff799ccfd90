//! The update-loop trap: the server adds API defaults to a child Deployment, so a desired
//! Deployment built without them never equals what is stored. A reconciler that compares and
//! replaces the whole spec updates on every reconcile; `UpdatingObjectManager`, which remembers
//! what the server changed in its last update, and `ApplyObjectManager`, which compares only the
//! fields it applied, stop after the first write.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use recon_core::{
    ApplyObjectManager, Config, ObjectManager, Parent, Request, ResourceReconciler, SyncReconciler,
    UpdatingObjectManager,
};
use recon_fake::{ApiServer, RequestOrigin, Verb};
use recon_test_fixtures::{Widget, server, widget, widgets};
use serde_json::json;

const RECONCILES: usize = 4;

/// The Deployment `w-web` the widget wants, as a reconciler would write it: no defaults.
fn desired() -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "w-web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                         "ports": [{"containerPort": 80}]}]},
            },
        },
    }))
    .expect("a Deployment")
}

fn deployments(config: &Config) -> Api<Deployment> {
    Api::namespaced(config.client().clone(), "default")
}

/// A tree that hands the child to `manager`.
fn managed_by(manager: impl ObjectManager<Widget, Deployment> + 'static) -> SyncReconciler<Widget> {
    let manager = Arc::new(manager);
    SyncReconciler::<Widget>::new("Child").sync_with(manager, async |ctx, manager, w| {
        let actual = deployments(ctx.config()).get_opt("w-web").await?;
        let parent = Parent {
            resource: w,
            dyntype: &(),
        };
        manager.manage(ctx, parent, actual, Some(desired())).await?;
        Ok(())
    })
}

/// The forgetful way: create when missing, else replace the whole spec whenever it differs.
fn replacing_the_spec() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Child").sync(async |ctx, _| {
        let api = deployments(ctx.config());
        let wanted = desired();
        match api.get_opt("w-web").await? {
            None => {
                api.create(&PostParams::default(), &wanted).await?;
            }
            Some(mut actual) if actual.spec != wanted.spec => {
                actual.spec = wanted.spec;
                api.replace("w-web", &PostParams::default(), &actual)
                    .await?;
            }
            Some(_) => {}
        }
        Ok(())
    })
}

/// Reconciles the widget `RECONCILES` times with `tree`; returns the writes of the Deployment
/// each reconcile sent.
async fn writes_per_reconcile(tree: SyncReconciler<Widget>) -> Vec<usize> {
    let server: ApiServer = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .expect("the widget is created");
    let reconciler =
        ResourceReconciler::new(Config::new(server.client(), "widget-controller"), tree);
    let mut writes = Vec::new();
    for _ in 0..RECONCILES {
        server.clear_requests();
        reconciler
            .reconcile(&Request::namespaced("default", "w"))
            .await
            .expect("the reconcile succeeds");
        let sent = server
            .requests()
            .iter()
            .filter(|r| r.origin == RequestOrigin::Client && r.resource == "deployments")
            .filter(|r| matches!(r.verb, Verb::Create | Verb::Update | Verb::Patch))
            .count();
        writes.push(sent);
    }
    writes
}

#[tokio::test]
async fn replacing_the_whole_spec_updates_on_every_reconcile() {
    // The stored spec holds the defaults the desired one lacks: it never compares equal.
    assert_eq!(
        writes_per_reconcile(replacing_the_spec()).await,
        [1, 1, 1, 1]
    );
}

#[tokio::test]
async fn the_updating_manager_remembers_the_defaults_and_stops() {
    let manager = UpdatingObjectManager::new(|current: &mut Deployment, desired: &Deployment| {
        current.spec = desired.spec.clone();
    });
    // Created; then one update whose answer teaches it the defaults; then nothing.
    assert_eq!(
        writes_per_reconcile(managed_by(manager)).await,
        [1, 1, 0, 0]
    );
}

#[tokio::test]
async fn the_apply_manager_compares_only_what_it_applied() {
    let manager = ApplyObjectManager::<Deployment>::new("widget-controller");
    assert_eq!(
        writes_per_reconcile(managed_by(manager)).await,
        [1, 0, 0, 0]
    );
}
