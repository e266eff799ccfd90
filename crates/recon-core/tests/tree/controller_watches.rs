//! The watches a reconciler tree declares, wired into a real `kube::runtime::Controller` by
//! `ResourceReconciler::controller`, against the in-memory API server: a change to a tracked
//! ConfigMap re-reconciles the widget tracking it, and a change to a widget's child
//! re-reconciles the widget.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use recon_core::{
    ChildReconciler, Config, IntoBoxed, ResourceReconciler, Sequence, Stasher, SyncReconciler,
    Trigger, UpdatingObjectManager,
};
use recon_fake::ApiServer;
use recon_test_fixtures::eventually;
use recon_test_fixtures::*;
use serde_json::json;

const GREETING: Stasher<String> = Stasher::new("greeting");

/// Reads the tracked ConfigMap `settings` (absent: "none") into the stash.
fn read_settings() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("ReadSettings").sync(async |ctx, _| {
        let settings: Option<ConfigMap> = ctx.track_and_get(Some("default"), "settings").await?;
        let greeting = settings
            .and_then(|s| s.data)
            .and_then(|d| d.get("greeting").cloned())
            .unwrap_or_else(|| "none".to_owned());
        GREETING.store(ctx, greeting);
        Ok(())
    })
}

/// The child `<widget>-child` holds the widget's size and the greeting.
fn child() -> ChildReconciler<Widget, ConfigMap> {
    ChildReconciler::new(
        UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
            current.data = desired.data.clone();
        }),
        |ctx, w: &Widget| {
            let mut child = ConfigMap::default();
            child.metadata.name = Some(format!(
                "{}-child",
                w.metadata.name.as_deref().unwrap_or_default()
            ));
            child.data = Some(
                [
                    ("size".to_owned(), w.spec.size.to_string()),
                    ("greeting".to_owned(), GREETING.retrieve(ctx)?),
                ]
                .into(),
            );
            Ok(Some(child))
        },
        |_, w, child| {
            w.status.get_or_insert_default().ready = Some(matches!(child, Ok(Some(_))));
            Ok(())
        },
    )
}

async fn child_data(children: &Api<ConfigMap>) -> Option<(String, String)> {
    let data = children.get_opt("w-child").await.ok()??.data?;
    Some((data.get("size")?.clone(), data.get("greeting")?.clone()))
}

#[tokio::test]
async fn tracked_objects_and_children_re_reconcile_their_observer_and_owner() {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    let client = server.client();
    let reconciler = ResourceReconciler::new(
        Config::new(client.clone(), "widget-controller"),
        Sequence::new([read_settings().boxed(), child().boxed()]),
    );
    let watches: Vec<(String, Trigger)> = reconciler
        .setup()
        .watches()
        .iter()
        .map(|w| (w.resource.kind.clone(), w.trigger))
        .collect();
    assert_eq!(
        watches,
        [
            ("ConfigMap".to_owned(), Trigger::Owner),
            ("ConfigMap".to_owned(), Trigger::Tracked)
        ]
    );
    let controller = reconciler
        .controller(Api::all(client.clone()), watcher::Config::default())
        .run(
            ResourceReconciler::reconcile_object,
            ResourceReconciler::error_policy,
            Arc::new(reconciler),
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    let children: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    widgets
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let expect = |size: &'static str, greeting: &'static str| {
        let children = children.clone();
        move || {
            let children = children.clone();
            async move { child_data(&children).await == Some((size.to_owned(), greeting.to_owned())) }
        }
    };
    eventually("the child is created", expect("1", "none")).await;

    // The tracked ConfigMap appears: its watch event maps to the widget through the tracker.
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("settings".to_owned());
    settings.data = Some([("greeting".to_owned(), "hello".to_owned())].into());
    children
        .create(&PostParams::default(), &settings)
        .await
        .unwrap();
    eventually("the tracked change reaches the child", expect("1", "hello")).await;

    // Someone edits the child: its watch event maps to its controller owner.
    children
        .patch(
            "w-child",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"size": "42"}})),
        )
        .await
        .unwrap();
    eventually("the child's drift is corrected", expect("1", "hello")).await;
    let resets = server
        .requests()
        .iter()
        .filter(|r| r.method == "PUT" && r.path.ends_with("/configmaps/w-child"))
        .count();
    assert!(
        resets >= 2,
        "one update for the greeting, one for the drift: {resets}"
    );
    running.abort();
}
