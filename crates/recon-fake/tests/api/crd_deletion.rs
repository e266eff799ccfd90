//! CustomResourceDefinition deletion as it unfolds after the DELETE: the registry marks the CRD
//! (`InstanceDeletionPending`), then the CRD finalizer, on its own, writes
//! `InstanceDeletionInProgress`, deletes the instances and removes its finalizer, which deletes
//! the CRD. Run on Tokio's paused clock: the finalizer's task fires only once the test waits.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use pretty_assertions::assert_eq;
use recon_fake::ApiServer;
use recon_test_fixtures::*;

use crate::support::crds;

const WIDGET_CRD: &str = "widgets.example.com";
const GIZMO_CRD: &str = "gizmos.example.com";
const CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The `Terminating` condition's status and reason.
fn terminating_condition(crd: &CustomResourceDefinition) -> Option<(String, String)> {
    let conditions = crd.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == "Terminating")?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default()))
}

fn condition(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

async fn create_widget(server: &ApiServer, name: &str, finalizers: &[&str]) {
    let mut w = widget(name, 1);
    w.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    widgets(server)
        .create(&PostParams::default(), &w)
        .await
        .unwrap();
}

/// The next event of a watch, as `(type, name, Terminating condition)` for CRDs.
async fn next_crd_event(
    events: &mut (
             impl futures::Stream<Item = kube::Result<WatchEvent<CustomResourceDefinition>>> + Unpin
         ),
) -> (&'static str, Option<(String, String)>) {
    match events.try_next().await.unwrap().expect("an event") {
        WatchEvent::Modified(crd) => ("MODIFIED", terminating_condition(&crd)),
        WatchEvent::Deleted(crd) => ("DELETED", terminating_condition(&crd)),
        other => panic!("unexpected event {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_delete_answers_terminating_and_the_finalizer_finishes_afterwards() {
    let server = server().await;
    create_widget(&server, "a", &[]).await;
    let widget_rv = server.resource_version().to_string();

    let deleted = crds(&server)
        .delete(WIDGET_CRD, &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .expect("the CRD is kept, marked for deletion");
    assert!(deleted.metadata.deletion_timestamp.is_some());
    assert_eq!(deleted.metadata.finalizers, Some(vec![CLEANUP.to_owned()]));
    assert_eq!(
        terminating_condition(&deleted),
        condition("True", "InstanceDeletionPending")
    );

    // Nothing more has happened yet: the CRD is there, its widget too, creates are refused.
    let crd = crds(&server).get(WIDGET_CRD).await.unwrap();
    assert_eq!(
        terminating_condition(&crd),
        condition("True", "InstanceDeletionPending")
    );
    assert!(crd.metadata.deletion_timestamp.is_some());
    assert_eq!(
        widgets(&server)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let refused = status(
        widgets(&server)
            .create(&PostParams::default(), &widget("b", 1))
            .await,
    );
    assert_eq!(refused.code, 403);

    // The widget goes by an ordinary delete, seen by its watchers.
    let mut widget_events = widgets(&server)
        .watch(&WatchParams::default(), &widget_rv)
        .await
        .unwrap()
        .boxed();
    // A watch started now sees the finalizer finish: in progress, then gone.
    let params = WatchParams::default().fields(&format!("metadata.name={WIDGET_CRD}"));
    let from = crd.metadata.resource_version.clone().unwrap();
    let mut events = crds(&server).watch(&params, &from).await.unwrap().boxed();
    assert_eq!(
        next_crd_event(&mut events).await,
        ("MODIFIED", condition("True", "InstanceDeletionInProgress"))
    );
    assert_eq!(
        next_crd_event(&mut events).await.0,
        "DELETED",
        "the CRD goes once its widget is gone"
    );
    let event = widget_events.next().await;
    let Some(Ok(WatchEvent::Deleted(gone))) = event else {
        panic!("expected the widget's DELETED event, got {event:?}");
    };
    assert_eq!(gone.metadata.name.as_deref(), Some("a"));
    assert!(crds(&server).get_opt(WIDGET_CRD).await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn an_instance_finalizer_holds_the_crd_terminating_until_it_is_removed() {
    let server = server().await;
    create_widget(&server, "held", &["example.com/hold"]).await;
    crds(&server)
        .delete(WIDGET_CRD, &DeleteParams::default())
        .await
        .unwrap();

    // Tokio's paused clock: this lets the finalizer's task run, without waiting.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let crd = crds(&server).get(WIDGET_CRD).await.unwrap();
    assert_eq!(
        terminating_condition(&crd),
        condition("True", "InstanceDeletionInProgress")
    );
    assert_eq!(crd.metadata.finalizers, Some(vec![CLEANUP.to_owned()]));
    let held = widgets(&server).get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());

    // The finalizer waits a minute for it, says so, and starts over.
    let params = WatchParams::default().fields(&format!("metadata.name={WIDGET_CRD}"));
    let from = crd.metadata.resource_version.clone().unwrap();
    let mut events = crds(&server).watch(&params, &from).await.unwrap().boxed();
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert_eq!(
        next_crd_event(&mut events).await,
        ("MODIFIED", condition("True", "InstanceDeletionCheck"))
    );
    assert_eq!(
        next_crd_event(&mut events).await,
        ("MODIFIED", condition("True", "InstanceDeletionInProgress"))
    );
    assert!(crds(&server).get_opt(WIDGET_CRD).await.unwrap().is_some());

    // A PUT, as a real 1.36 server panics on a PATCH of an instance of a terminating CRD.
    let mut release = widgets(&server).get("held").await.unwrap();
    release.metadata.finalizers = None;
    widgets(&server)
        .replace("held", &PostParams::default(), &release)
        .await
        .unwrap();
    assert_eq!(next_crd_event(&mut events).await.0, "DELETED");
    assert!(crds(&server).get_opt(WIDGET_CRD).await.unwrap().is_none());

    // The CRD can be installed again, with nothing left of the old one.
    server
        .install_crd(&<Widget as kube::CustomResourceExt>::crd())
        .await
        .unwrap();
    assert!(
        widgets(&server)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn the_minute_of_waiting_counts_from_when_each_wait_began() {
    let server = server().await;
    create_widget(&server, "held", &["example.com/hold"]).await;
    crds(&server)
        .delete(WIDGET_CRD, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    // The first wait ends with its widget released; the CRD goes.
    let mut release = widgets(&server).get("held").await.unwrap();
    release.metadata.finalizers = None;
    widgets(&server)
        .replace("held", &PostParams::default(), &release)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(crds(&server).get_opt(WIDGET_CRD).await.unwrap().is_none());

    // A second wait begins 20 s in: nothing is said at the first wait's minute, only at its own.
    server
        .install_crd(&<Widget as kube::CustomResourceExt>::crd())
        .await
        .unwrap();
    create_widget(&server, "held", &["example.com/hold"]).await;
    crds(&server)
        .delete(WIDGET_CRD, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let crd = crds(&server).get(WIDGET_CRD).await.unwrap();
    let params = WatchParams::default().fields(&format!("metadata.name={WIDGET_CRD}"));
    let from = crd.metadata.resource_version.clone().unwrap();
    let mut events = crds(&server).watch(&params, &from).await.unwrap().boxed();
    tokio::time::sleep(Duration::from_secs(50)).await;
    let quiet = crds(&server).get(WIDGET_CRD).await.unwrap();
    assert_eq!(
        rv(&quiet.metadata),
        rv(&crd.metadata),
        "70 s in, nothing said"
    );
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert_eq!(
        next_crd_event(&mut events).await,
        ("MODIFIED", condition("True", "InstanceDeletionCheck"))
    );
}

/// `crdregistration_controller.go`: a served version has a local APIService kube-apiserver keeps
/// in sync (its loopback client the field manager), gone once the CRD is.
#[tokio::test(start_paused = true)]
async fn each_served_version_has_an_apiservice_until_the_crd_is_gone() {
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    let server = server().await;
    let apiservices: Api<APIService> = Api::all(server.client());
    let registered = apiservices.get("v1.example.com").await.unwrap();
    let labels = registered.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels["kube-aggregator.kubernetes.io/automanaged"], "true");
    let spec = registered.spec.clone().unwrap();
    assert_eq!(
        (spec.group_priority_minimum, spec.version_priority),
        (1000, 100)
    );
    let managers: Vec<_> = registered
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, ["kube-apiserver"]);
    let available = registered.status.unwrap().conditions.unwrap();
    assert_eq!(
        (available[0].type_.as_str(), available[0].status.as_str()),
        ("Available", "True")
    );

    // While a CRD of the group serves the version, its APIService stays: Gizmos serve it too.
    crds(&server)
        .delete(WIDGET_CRD, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(crds(&server).get_opt(WIDGET_CRD).await.unwrap().is_none());
    assert!(
        apiservices
            .get_opt("v1.example.com")
            .await
            .unwrap()
            .is_some()
    );
    crds(&server)
        .delete(GIZMO_CRD, &DeleteParams::default())
        .await
        .unwrap();
    // Terminating, the CRD still serves its version.
    assert!(
        apiservices
            .get_opt("v1.example.com")
            .await
            .unwrap()
            .is_some()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(crds(&server).get_opt(GIZMO_CRD).await.unwrap().is_none());
    assert!(
        apiservices
            .get_opt("v1.example.com")
            .await
            .unwrap()
            .is_none()
    );
}
