//! DELETE against the in-memory API server: finalizers and deletionTimestamp, removal on the last
//! finalizer, preconditions, propagation policies, graceful Pod deletion, DeleteCollection, and
//! the Namespace and CustomResourceDefinition registries. Custom-resource texts were checked
//! against a real apiextensions-apiserver 1.36.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service, ServiceAccount};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy,
};
use kube::core::response::StatusSummary;

use pretty_assertions::assert_eq;
use recon_fake::{ApiServer, ManualClock};
use recon_test_fixtures::*;
use serde_json::{Value, json};

use crate::support::{crds, propagation};

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const NOW: &str = "2024-05-01T10:00:00Z";

/// A server with both CRDs, whose clock stands at `NOW`.
async fn server_at_now() -> ApiServer {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .build();
    server
        .install_crd(&<Widget as kube::CustomResourceExt>::crd())
        .await
        .unwrap();
    server.install_crd(&gizmo_crd()).await.unwrap();
    server
}

/// Sends a DELETE with a raw DeleteOptions body (for values `DeleteParams` cannot express).
async fn raw_delete(server: &ApiServer, path: &str, body: Value) -> Result<Value, kube::Error> {
    let request = http::Request::delete(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.to_string().into_bytes())
        .expect("request");
    server.client().request::<Value>(request).await
}

/// The object of a delete answered with it (`Either::Left`); panics on a `Status`.
macro_rules! kept {
    ($result:expr $(,)?) => {
        $result.either(
            |object| object,
            |status| panic!("expected the object, got {status:?}"),
        )
    };
}

/// The `Status` of a delete answered with one (`Either::Right`); panics on an object.
macro_rules! removed {
    ($result:expr $(,)?) => {
        $result.either(
            |object| panic!("expected a Status, got {object:?}"),
            |status| status,
        )
    };
}

fn finalizers_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Vec<String> {
    meta.finalizers.clone().unwrap_or_default()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

async fn assert_widget_gone(server: &ApiServer, name: &str) {
    let s = status(widgets(server).get(name).await);
    assert_status(
        &s,
        404,
        "NotFound",
        &format!(r#"widgets.example.com "{name}" not found"#),
    );
}

// ---------------------------------------------------------------------------------------------
// D1–D3: one object

// D1, Gen3
#[tokio::test]
async fn delete_with_finalizers_keeps_the_object_and_marks_it_terminating() {
    let server = server_at_now().await;
    let created = create_widget(&server, "x", &["example.com/f"]).await;

    let w = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    assert_eq!(
        w.metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    assert_eq!(w.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(w.metadata.generation, Some(2));
    assert!(rv(&w.metadata) > rv(&created.metadata));
    assert_eq!(finalizers_of(&w.metadata), strings(&["example.com/f"]));
    let stored = widgets(&server).get("x").await.unwrap();
    assert_eq!(stored.metadata, w.metadata);
}

// D3
#[tokio::test]
async fn deleting_a_terminating_object_again_changes_nothing() {
    let server = server_at_now().await;
    create_widget(&server, "x", &["example.com/f"]).await;
    let first = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );
    let revision = server.resource_version();

    let second = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    assert_eq!(second.metadata, first.metadata);
    assert_eq!(server.resource_version(), revision);
}

// D2
#[tokio::test]
async fn delete_without_finalizers_removes_the_object_and_answers_a_success_status() {
    let server = server().await;
    let created = create_widget(&server, "x", &[]).await;
    let revision = server.resource_version();

    let s = removed!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    assert_eq!(s.status, Some(StatusSummary::Success));
    let details = s.details.expect("details");
    assert_eq!(
        (
            details.name.as_str(),
            details.group.as_str(),
            details.kind.as_str(),
            Some(details.uid)
        ),
        ("x", "example.com", "widgets", created.metadata.uid)
    );
    assert!(server.resource_version() > revision);
    assert_widget_gone(&server, "x").await;
}

// D2 (ReturnDeletedObject: Service and ServiceAccount answer with the object)
#[tokio::test]
async fn deleting_a_service_or_service_account_answers_with_the_deleted_object() {
    let server = ApiServer::new();
    let services: Api<Service> = Api::namespaced(server.client(), "default");
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]},
    }))
    .unwrap();
    let svc = services.create(&PostParams::default(), &svc).await.unwrap();

    let deleted = kept!(
        services
            .delete("web", &DeleteParams::default())
            .await
            .unwrap(),
    );
    assert_eq!(
        (deleted.metadata.name, deleted.metadata.uid),
        (Some("web".into()), svc.metadata.uid)
    );
    assert!(status(services.get("web").await).is_not_found());

    let accounts: Api<ServiceAccount> = Api::namespaced(server.client(), "default");
    let mut sa = ServiceAccount::default();
    sa.metadata.name = Some("robot".into());
    let sa = accounts.create(&PostParams::default(), &sa).await.unwrap();

    let deleted = kept!(
        accounts
            .delete("robot", &DeleteParams::default())
            .await
            .unwrap(),
    );
    assert_eq!(
        (deleted.metadata.name, deleted.metadata.uid),
        (Some("robot".into()), sa.metadata.uid)
    );
    let s = status(accounts.get("robot").await);
    assert_status(&s, 404, "NotFound", r#"serviceaccounts "robot" not found"#);
}

// D9, G1
#[tokio::test]
async fn deleting_a_missing_object_is_404_not_found() {
    let server = server().await;

    let s = status(
        widgets(&server)
            .delete("nope", &DeleteParams::default())
            .await,
    );

    assert_status(
        &s,
        404,
        "NotFound",
        r#"widgets.example.com "nope" not found"#,
    );
    let details = s.details.expect("details");
    assert_details(&details, ("nope", "example.com", "widgets"));
}

// C13
#[tokio::test]
async fn dry_run_delete_removes_nothing() {
    let server = server().await;
    let created = create_widget(&server, "x", &[]).await;
    create_widget(&server, "y", &["example.com/f"]).await;
    let revision = server.resource_version();
    let dry_run = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };

    let s = removed!(widgets(&server).delete("x", &dry_run).await.unwrap());
    assert_eq!(s.status, Some(StatusSummary::Success));
    let kept_y = kept!(widgets(&server).delete("y", &dry_run).await.unwrap());
    assert!(kept_y.metadata.deletion_timestamp.is_some());

    assert_eq!(server.resource_version(), revision);
    let x = widgets(&server).get("x").await.unwrap();
    assert_eq!(
        x.metadata.resource_version,
        created.metadata.resource_version
    );
    let y = widgets(&server).get("y").await.unwrap();
    assert_eq!(
        (y.metadata.deletion_timestamp, y.metadata.generation),
        (None, Some(1))
    );
}

// ---------------------------------------------------------------------------------------------
// D4, D5: finalizers of a terminating object

// D4
#[tokio::test]
async fn removing_the_last_finalizer_by_merge_patch_deletes_within_the_request() {
    let server = server().await;
    create_widget(&server, "x", &["example.com/f"]).await;
    let terminating = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    let patch = json!({"metadata": {"finalizers": null}, "spec": {"size": 7}});
    let answered = widgets(&server)
        .patch("x", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();

    // The request's object: the old resourceVersion, the new spec, nothing stored.
    assert_eq!(
        answered.metadata.resource_version,
        terminating.metadata.resource_version
    );
    assert_eq!(answered.metadata.finalizers, None);
    assert_eq!(answered.spec.size, 7);
    assert_eq!(
        answered.metadata.deletion_timestamp,
        terminating.metadata.deletion_timestamp
    );
    assert_widget_gone(&server, "x").await;
}

// D4
#[tokio::test]
async fn removing_the_last_finalizer_by_put_deletes_within_the_request() {
    let server = server().await;
    create_widget(&server, "x", &["example.com/f"]).await;
    let terminating = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    let mut w = terminating.clone();
    w.metadata.finalizers = None;
    w.spec.size = 9;
    let answered = widgets(&server)
        .replace("x", &PostParams::default(), &w)
        .await
        .unwrap();

    assert_eq!(
        answered.metadata.resource_version,
        terminating.metadata.resource_version
    );
    assert_eq!(
        (answered.spec.size, answered.metadata.finalizers),
        (9, None)
    );
    assert_widget_gone(&server, "x").await;
}

// D5
#[tokio::test]
async fn adding_a_finalizer_to_a_terminating_object_is_422_forbidden() {
    let server = server().await;
    create_widget(&server, "x", &["example.com/f"]).await;
    let terminating = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    let patch = json!({"metadata": {"finalizers": ["example.com/f", "example.com/g"]}});
    let s = status(
        widgets(&server)
            .patch("x", &PatchParams::default(), &Patch::Merge(patch))
            .await,
    );

    assert_status(
        &s,
        422,
        "Invalid",
        r#"Widget.example.com "x" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/g"}"#,
    );
    let details = s.details.expect("details");
    assert_details(&details, ("x", "example.com", "Widget"));
    assert!(
        details
            .causes
            .iter()
            .all(|c| c.field == "metadata.finalizers" && c.reason == "FieldValueForbidden")
    );
    let stored = widgets(&server).get("x").await.unwrap();
    assert_eq!(stored.metadata, terminating.metadata);
}

// D5
#[tokio::test]
async fn removing_a_finalizer_or_editing_spec_of_a_terminating_object_is_allowed() {
    let server = server().await;
    create_widget(&server, "x", &["example.com/a", "example.com/b"]).await;
    let terminating = kept!(
        widgets(&server)
            .delete("x", &DeleteParams::default())
            .await
            .unwrap(),
    );

    let patch = json!({"metadata": {"finalizers": ["example.com/b"]}});
    let w = widgets(&server)
        .patch("x", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
    assert_eq!(finalizers_of(&w.metadata), strings(&["example.com/b"]));
    assert!(rv(&w.metadata) > rv(&terminating.metadata));

    let w = widgets(&server)
        .patch(
            "x",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap();
    assert_eq!((w.spec.size, w.metadata.generation), (2, Some(3)));
    assert_eq!(
        w.metadata.deletion_timestamp,
        terminating.metadata.deletion_timestamp
    );
    assert_eq!(widgets(&server).get("x").await.unwrap().spec.size, 2);
}

// ---------------------------------------------------------------------------------------------
// D6: preconditions

/// Deleting widget `x` with `preconditions` is a 409 Conflict with the `refused` reason after
/// the common prefix, and details naming the widget; the widget stays.
async fn delete_is_a_conflict(server: &ApiServer, preconditions: Preconditions, refused: &str) {
    let params = DeleteParams {
        preconditions: Some(preconditions),
        ..DeleteParams::default()
    };

    let s = status(widgets(server).delete("x", &params).await);

    assert_status(
        &s,
        409,
        "Conflict",
        &format!(r#"Operation cannot be fulfilled on Widget.example.com "x": {refused}"#),
    );
    let details = s.details.expect("details");
    assert_details(&details, ("x", "example.com", "Widget"));
    widgets(server).get("x").await.unwrap();
}

// D6
#[tokio::test]
async fn delete_with_a_mismatched_uid_precondition_is_409() {
    let server = server().await;
    let created = create_widget(&server, "x", &[]).await;
    let uid = created.metadata.uid.clone().unwrap();
    let preconditions = Preconditions {
        uid: Some("nope".into()),
        resource_version: None,
    };
    let refused = format!(
        "the UID in the precondition (nope) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
    );
    delete_is_a_conflict(&server, preconditions, &refused).await;
}

// D6
#[tokio::test]
async fn delete_with_a_mismatched_resource_version_precondition_is_409() {
    let server = server().await;
    let created = create_widget(&server, "x", &[]).await;
    let current = created.metadata.resource_version.clone().unwrap();
    let preconditions = Preconditions {
        uid: None,
        resource_version: Some("1".into()),
    };
    let refused = format!(
        "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({current}). The object might have been modified"
    );
    delete_is_a_conflict(&server, preconditions, &refused).await;
}

// D6
#[tokio::test]
async fn delete_with_matching_preconditions_deletes() {
    let server = server().await;
    let created = create_widget(&server, "x", &[]).await;
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: created.metadata.uid.clone(),
            resource_version: created.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };

    let s = removed!(widgets(&server).delete("x", &params).await.unwrap());

    assert_eq!(s.status, Some(StatusSummary::Success));
    assert_widget_gone(&server, "x").await;
}

// ---------------------------------------------------------------------------------------------
// D7: propagation policies

// D7
#[tokio::test]
async fn foreground_delete_adds_foreground_deletion_and_keeps_the_object() {
    let server = server_at_now().await;
    create_widget(&server, "x", &[]).await;

    let w = kept!(
        widgets(&server)
            .delete("x", &propagation(PropagationPolicy::Foreground))
            .await
            .unwrap(),
    );

    assert_eq!(finalizers_of(&w.metadata), strings(&["foregroundDeletion"]));
    assert_eq!(
        w.metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    assert_eq!(
        (
            w.metadata.deletion_grace_period_seconds,
            w.metadata.generation
        ),
        (Some(0), Some(2))
    );
    assert_eq!(
        widgets(&server).get("x").await.unwrap().metadata,
        w.metadata
    );
}

// D7
#[tokio::test]
async fn orphan_delete_adds_the_orphan_finalizer_after_existing_ones() {
    let server = server().await;
    create_widget(&server, "x", &[]).await;
    create_widget(&server, "y", &["example.com/f"]).await;

    let x = kept!(
        widgets(&server)
            .delete("x", &propagation(PropagationPolicy::Orphan))
            .await
            .unwrap(),
    );
    assert_eq!(finalizers_of(&x.metadata), strings(&["orphan"]));

    let y = kept!(
        widgets(&server)
            .delete("y", &propagation(PropagationPolicy::Orphan))
            .await
            .unwrap(),
    );
    assert_eq!(
        finalizers_of(&y.metadata),
        strings(&["example.com/f", "orphan"])
    );
}

// D7 (the real 1.36 server re-syncs the GC finalizers on a later delete)
#[tokio::test]
async fn a_later_background_delete_drops_the_gc_finalizer_and_deletes() {
    let server = server().await;
    create_widget(&server, "f", &[]).await;
    create_widget(&server, "o", &[]).await;
    create_widget(&server, "k", &["example.com/f"]).await;
    kept!(
        widgets(&server)
            .delete("f", &propagation(PropagationPolicy::Foreground))
            .await
            .unwrap(),
    );
    kept!(
        widgets(&server)
            .delete("o", &propagation(PropagationPolicy::Orphan))
            .await
            .unwrap(),
    );
    kept!(
        widgets(&server)
            .delete("k", &propagation(PropagationPolicy::Foreground))
            .await
            .unwrap(),
    );

    for name in ["f", "o"] {
        let s = removed!(
            widgets(&server)
                .delete(name, &DeleteParams::background())
                .await
                .unwrap(),
        );
        assert_eq!(s.status, Some(StatusSummary::Success));
        assert_widget_gone(&server, name).await;
    }

    // Another finalizer still holds it: only the GC finalizer goes.
    let k = kept!(
        widgets(&server)
            .delete("k", &DeleteParams::background())
            .await
            .unwrap(),
    );
    assert_eq!(finalizers_of(&k.metadata), strings(&["example.com/f"]));
}

// D7
#[tokio::test]
async fn an_unknown_propagation_policy_is_422_unsupported_value() {
    let server = server().await;
    create_widget(&server, "x", &[]).await;

    let s = status(
        raw_delete(
            &server,
            &format!("{WIDGETS}/x"),
            json!({"propagationPolicy": "Bogus"}),
        )
        .await,
    );

    assert_status(
        &s,
        422,
        "Invalid",
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil""#,
    );
    let details = s.details.expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("meta.k8s.io", "DeleteOptions")
    );
    assert_eq!(
        (
            details.causes[0].reason.as_str(),
            details.causes[0].field.as_str()
        ),
        ("FieldValueNotSupported", "propagationPolicy")
    );
    widgets(&server).get("x").await.unwrap();
}

// D7
#[tokio::test]
async fn orphan_dependents_together_with_propagation_policy_is_422() {
    let server = server().await;
    create_widget(&server, "x", &[]).await;

    let body = json!({"propagationPolicy": "Orphan", "orphanDependents": true});
    let s = status(raw_delete(&server, &format!("{WIDGETS}/x"), body).await);

    assert_status(
        &s,
        422,
        "Invalid",
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#,
    );
    widgets(&server).get("x").await.unwrap();
}

// D7, builtin-strategies §5 (batch/v1 Job: DefaultGarbageCollectionPolicy OrphanDependents)
#[tokio::test]
async fn deleting_a_job_without_options_adds_the_orphan_finalizer_and_keeps_it() {
    let server = ApiServer::new();
    let jobs: Api<Job> = Api::namespaced(server.client(), "default");
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}],
        }}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();

    let j = kept!(jobs.delete("j", &DeleteParams::default()).await.unwrap());

    assert_eq!(finalizers_of(&j.metadata), strings(&["orphan"]));
    assert!(j.metadata.deletion_timestamp.is_some());
    assert_eq!(j.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(jobs.get("j").await.unwrap().metadata, j.metadata);
}

// ---------------------------------------------------------------------------------------------
// D8: graceful deletion of Pods

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut spec = json!({
        "containers": [{"name": "c", "image": "busybox"}],
        "terminationGracePeriodSeconds": 30,
    });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
}

// D8
#[tokio::test]
async fn deleting_an_unscheduled_pod_removes_it_at_once() {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .build();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    pods.create(&PostParams::default(), &pod("p", None))
        .await
        .unwrap();

    // Pods return the deleted object, as written just before removal (grace period 0).
    let p = kept!(pods.delete("p", &DeleteParams::default()).await.unwrap());

    assert_eq!(p.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(
        p.metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    let s = status(pods.get("p").await);
    assert_status(&s, 404, "NotFound", r#"pods "p" not found"#);
}

// D8
#[tokio::test]
async fn deleting_a_scheduled_pod_starts_its_grace_period_and_keeps_it() {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .build();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let created = pods
        .create(&PostParams::default(), &pod("p", Some("node-1")))
        .await
        .unwrap();

    let p = kept!(pods.delete("p", &DeleteParams::default()).await.unwrap());

    assert_eq!(
        p.metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some("2024-05-01T10:00:30Z".to_string())
    );
    assert_eq!(p.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(
        p.metadata.generation,
        created.metadata.generation.map(|g| g + 1)
    );
    assert_eq!(pods.get("p").await.unwrap().metadata, p.metadata);
}

// ---------------------------------------------------------------------------------------------
// D10: DeleteCollection

// D10
#[tokio::test]
async fn delete_collection_deletes_matching_objects_and_answers_the_list_before() {
    let server = server().await;
    let api = widgets(&server);
    let mut created = Vec::new();
    for (name, group, finalizers) in [
        ("a", "yes", vec![]),
        ("b", "yes", vec!["example.com/f".to_string()]),
        ("c", "no", vec![]),
    ] {
        let mut w = widget(name, 1);
        w.metadata.labels = Some([("grp".to_string(), group.to_string())].into());
        w.metadata.finalizers = Some(finalizers).filter(|f| !f.is_empty());
        created.push(api.create(&PostParams::default(), &w).await.unwrap());
    }

    let result = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("grp=yes"),
        )
        .await
        .unwrap();

    let list = kept!(result);
    let answered: Vec<_> = list
        .items
        .iter()
        .map(|w| {
            (
                w.metadata.name.clone().unwrap(),
                w.metadata.resource_version.clone(),
                w.metadata.deletion_timestamp.is_some(),
            )
        })
        .collect();
    assert_eq!(
        answered,
        vec![
            (
                "a".to_string(),
                created[0].metadata.resource_version.clone(),
                false
            ),
            (
                "b".to_string(),
                created[1].metadata.resource_version.clone(),
                false
            ),
        ]
    );

    assert_widget_gone(&server, "a").await;
    let b = api.get("b").await.unwrap();
    assert!(b.metadata.deletion_timestamp.is_some());
    assert_eq!(finalizers_of(&b.metadata), strings(&["example.com/f"]));
    let c = api.get("c").await.unwrap();
    assert_eq!(
        c.metadata.resource_version,
        created[2].metadata.resource_version
    );
}

// ---------------------------------------------------------------------------------------------
// Namespaces

// builtin-strategies §2 (Namespace PrepareForCreate, defaults)
#[tokio::test]
async fn created_namespaces_are_active_with_the_kubernetes_finalizer_and_name_label() {
    let server = ApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team".into());

    let ns = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();

    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    assert_eq!(
        ns.spec.and_then(|s| s.finalizers),
        Some(strings(&["kubernetes"]))
    );
    assert_eq!(
        ns.metadata.labels,
        Some(
            [(
                "kubernetes.io/metadata.name".to_string(),
                "team".to_string()
            )]
            .into()
        )
    );
}

// builtin-strategies §8 (Namespace REST.Delete)
#[tokio::test]
async fn deleting_a_namespace_marks_it_terminating_and_keeps_it() {
    let server = ApiServer::builder()
        .clock(ManualClock::new(NOW.parse().unwrap()))
        .build();
    let namespaces: Api<Namespace> = Api::all(server.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();

    let ns = kept!(
        namespaces
            .delete("team", &DeleteParams::default())
            .await
            .unwrap(),
    );

    assert_eq!(
        ns.metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    assert_eq!(
        ns.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Terminating")
    );
    assert_eq!(
        ns.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(strings(&["kubernetes"]))
    );
    let stored = namespaces.get("team").await.unwrap();
    assert_eq!(
        stored.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(stored.metadata.deletion_timestamp.is_some());
}

// ---------------------------------------------------------------------------------------------
// CustomResourceDefinition deletion (builtin-strategies §10)

const WIDGET_CRD: &str = "widgets.example.com";

async fn assert_crd_gone(server: &ApiServer) {
    let s = status(crds(server).get(WIDGET_CRD).await);
    assert_status(
        &s,
        404,
        "NotFound",
        r#"customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" not found"#,
    );
}

/// Once the type is gone its URLs are unknown: a plain-text `404 page not found`.
async fn assert_widgets_not_served(server: &ApiServer) {
    let s = status(widgets(server).list(&ListParams::default()).await);
    assert_eq!((s.code, s.message.as_str()), (404, "404 page not found"));
}

// §10 (CRD REST.Delete, CRDFinalizer)
#[tokio::test]
async fn deleting_the_widget_crd_removes_its_widgets_and_stops_serving_them() {
    let server = server().await;
    create_widget(&server, "a", &[]).await;
    create_widget(&server, "b", &[]).await;

    let crd = kept!(
        crds(&server)
            .delete(WIDGET_CRD, &DeleteParams::default())
            .await
            .unwrap(),
    );
    assert!(crd.metadata.deletion_timestamp.is_some());
    assert!(
        finalizers_of(&crd.metadata)
            .contains(&"customresourcecleanup.apiextensions.k8s.io".to_string())
    );

    server.finalize_crds();
    assert_crd_gone(&server).await;
    assert_widgets_not_served(&server).await;
    // The other CRD is untouched.
    gizmos(&server).list(&ListParams::default()).await.unwrap();
}

// §10: a finalizer on an instance holds the CRD in Terminating
#[tokio::test]
async fn a_widget_finalizer_holds_the_crd_terminating_until_it_is_removed() {
    let server = server().await;
    create_widget(&server, "a", &[]).await;
    create_widget(&server, "held", &["example.com/f"]).await;

    kept!(
        crds(&server)
            .delete(WIDGET_CRD, &DeleteParams::default())
            .await
            .unwrap(),
    );
    server.finalize_crds();

    let crd = crds(&server).get(WIDGET_CRD).await.unwrap();
    assert!(crd.metadata.deletion_timestamp.is_some());
    assert_eq!(
        finalizers_of(&crd.metadata),
        strings(&["customresourcecleanup.apiextensions.k8s.io"])
    );
    let left = widgets(&server).list(&ListParams::default()).await.unwrap();
    let names: Vec<_> = left
        .items
        .iter()
        .map(|w| w.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, vec!["held".to_string()]);
    let held = &left.items[0];
    assert!(held.metadata.deletion_timestamp.is_some());

    // A PUT, as a real 1.36 server panics on a PATCH of an instance of a terminating CRD.
    let mut release = held.clone();
    release.metadata.finalizers = None;
    widgets(&server)
        .replace("held", &PostParams::default(), &release)
        .await
        .unwrap();

    server.finalize_crds();
    assert_crd_gone(&server).await;
    assert_widgets_not_served(&server).await;
}

// §10: the CR handler refuses creates while the CRD terminates (real 1.36 server: 403)
#[tokio::test]

async fn creating_a_widget_while_its_crd_is_terminating_is_403_forbidden() {
    let server = server().await;
    create_widget(&server, "held", &["example.com/f"]).await;
    kept!(
        crds(&server)
            .delete(WIDGET_CRD, &DeleteParams::default())
            .await
            .unwrap(),
    );

    let s = status(
        widgets(&server)
            .create(&PostParams::default(), &widget("new", 1))
            .await,
    );

    assert_status(
        &s,
        403,
        "Forbidden",
        r#"widgets.example.com "new" is forbidden: create not allowed while custom resource definition is terminating"#,
    );
    let details = s.details.expect("details");
    assert_details(&details, ("new", "example.com", "widgets"));
}
