//! Update (PUT) against the fake API server, rule by rule (`U*` and `Gen*` rows of the
//! reference), with the messages of a real kube-apiserver.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use serde_json::json;

use crate::support::with_widget;

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn lease(name: &str) -> Lease {
    from_json(json!({"metadata": {"name": name}, "spec": {"holderIdentity": "me"}}))
}

fn last_status(server: &ApiServer) -> u16 {
    server.requests().last().expect("a request").status
}

// ---- U1 ----

#[tokio::test]
async fn stale_resource_version_on_put_is_409_with_the_real_message() {
    // U1
    let (server, api, created) = with_widget().await;
    let mut newer = created.clone();
    newer.spec.size = 2;
    api.replace("x", &pp(), &newer).await.unwrap();
    let mut stale = created;
    stale.spec.size = 3;
    let s = status(api.replace("x", &pp(), &stale).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        s.message,
        "Operation cannot be fulfilled on widgets.example.com \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let details = s.details.expect("details");
    assert_details(&details, ("x", "example.com", "widgets"));
    assert_eq!(api.get("x").await.unwrap().spec.size, 2);
    assert_eq!(
        server.resource_version(),
        rv(&api.get("x").await.unwrap().metadata)
    );
}

#[tokio::test]
async fn stale_resource_version_with_identical_content_is_still_409() {
    // U1
    let (server, api, created) = with_widget().await;
    let mut newer = created.clone();
    newer.spec.size = 2;
    api.replace("x", &pp(), &newer).await.unwrap();
    let before = server.resource_version();
    // The stale copy, edited to match what is stored now.
    let mut stale = created;
    stale.spec.size = 2;
    let s = status(api.replace("x", &pp(), &stale).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        s.message,
        "Operation cannot be fulfilled on widgets.example.com \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(server.resource_version(), before);
}

// ---- U2 ----

#[tokio::test]
async fn put_without_resource_version_on_a_custom_resource_is_422() {
    // U2
    let (_server, api, created) = with_widget().await;
    let mut w = created;
    w.metadata.resource_version = None;
    w.spec.size = 2;
    let s = status(api.replace("x", &pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "widgets.example.com \"x\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    );
    let details = s.details.expect("details");
    assert_details(&details, ("x", "example.com", "widgets"));
    assert_eq!(details.causes.len(), 1);
    assert_eq!(details.causes[0].reason, "FieldValueInvalid");
    assert_eq!(details.causes[0].field, "metadata.resourceVersion");
    assert_eq!(
        details.causes[0].message,
        "Invalid value: 0: must be specified for an update"
    );
    assert_eq!(api.get("x").await.unwrap().spec.size, 1);
}

#[tokio::test]
async fn put_without_resource_version_on_a_config_map_is_unconditional() {
    // U2
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm: ConfigMap = from_json(json!({"metadata": {"name": "x"}, "data": {"k": "v1"}}));
    let created = api.create(&pp(), &cm).await.unwrap();
    let update: ConfigMap = from_json(json!({"metadata": {"name": "x"}, "data": {"k": "v2"}}));
    let updated = api.replace("x", &pp(), &update).await.unwrap();
    assert_eq!(last_status(&server), 200);
    assert!(rv(&updated.metadata) > rv(&created.metadata));
    assert_eq!(updated.metadata.uid, created.metadata.uid);
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.data.unwrap()["k"], "v2");
}

#[tokio::test]
async fn put_without_resource_version_on_a_lease_is_422() {
    // U2 (built-in: not checked against a real server)
    let server = ApiServer::new();
    let api: Api<Lease> = Api::namespaced(server.client(), "default");
    api.create(&pp(), &lease("l")).await.unwrap();
    let s = status(api.replace("l", &pp(), &lease("l")).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "leases.coordination.k8s.io \"l\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    );
    let details = s.details.expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("coordination.k8s.io", "leases")
    );
}

#[tokio::test]
async fn non_numeric_resource_version_on_put_is_500_parse_error() {
    // U2
    let (_server, api, created) = with_widget().await;
    let mut w = created;
    w.metadata.resource_version = Some("abc".into());
    let s = status(api.replace("x", &pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (500, ""));
    assert_eq!(
        s.message,
        "strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
}

// ---- U3 ----

#[tokio::test]
async fn put_on_a_missing_widget_is_404() {
    // U3
    let server = server().await;
    let api = widgets(&server);
    let mut w = widget("missing", 1);
    w.metadata.resource_version = Some("1".into());
    let s = status(api.replace("missing", &pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
    assert_eq!(s.message, "widgets.example.com \"missing\" not found");
    let details = s.details.expect("details");
    assert_details(&details, ("missing", "example.com", "widgets"));
    assert!(api.get_opt("missing").await.unwrap().is_none());
}

#[tokio::test]
async fn put_on_a_missing_lease_creates_it_with_201() {
    // U3 (built-in: not checked against a real server)
    let server = ApiServer::new();
    let api: Api<Lease> = Api::namespaced(server.client(), "default");
    let created = api.replace("l", &pp(), &lease("l")).await.unwrap();
    assert_eq!(last_status(&server), 201);
    assert!(created.metadata.uid.is_some());
    assert_eq!(rv(&created.metadata), server.resource_version());
    let stored = api.get("l").await.unwrap();
    assert_eq!(stored.spec.unwrap().holder_identity.as_deref(), Some("me"));
}

// ---- U4 / U5 ----

#[tokio::test]
async fn put_cannot_change_creation_timestamp_or_generation() {
    // U4
    let (server, api, created) = with_widget().await;
    let mut w: Widget = from_json(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {
            "name": "x",
            "resourceVersion": created.metadata.resource_version,
            "creationTimestamp": "2001-01-01T00:00:00Z",
            "generation": 7,
        },
        "spec": {"size": 2},
    }));
    w.metadata.uid = None;
    let updated = api.replace("x", &pp(), &w).await.unwrap();
    assert_eq!(
        updated.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    assert_eq!(updated.metadata.uid, created.metadata.uid);
    assert_eq!(updated.metadata.generation, Some(2));
    let stored = api.get("x").await.unwrap();
    assert_eq!(
        stored.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    assert_eq!(stored.metadata.generation, Some(2));
    assert_eq!(stored.spec.size, 2);
    assert_eq!(rv(&stored.metadata), server.resource_version());
}

#[tokio::test]
async fn put_with_a_different_uid_is_a_409_precondition_failure() {
    // U5
    let (server, api, created) = with_widget().await;
    let stored_uid = created.metadata.uid.clone().unwrap();
    let before = server.resource_version();
    let mut w = created;
    w.metadata.uid = Some("11111111-2222-4333-8444-555555555555".into());
    w.spec.size = 2;
    let s = status(api.replace("x", &pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    assert!(
        s.message.contains(&format!(
            "Precondition failed: UID in precondition: 11111111-2222-4333-8444-555555555555, UID in object meta: {stored_uid}"
        )),
        "{}",
        s.message
    );
    assert_eq!(
        s.message,
        format!(
            "Operation cannot be fulfilled on widgets.example.com \"x\": StorageError: invalid object, Code: 4, Key: /registry/apiextensions.kubernetes.io/example.com/widgets/default/x, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 11111111-2222-4333-8444-555555555555, UID in object meta: {stored_uid}"
        )
    );
    assert_eq!(s.details.expect("details").kind, "widgets");
    assert_eq!(server.resource_version(), before);
    assert_eq!(
        api.get("x").await.unwrap().metadata.uid.as_deref(),
        Some(stored_uid.as_str())
    );
}

#[tokio::test]
async fn setting_deletion_timestamp_on_a_live_object_via_merge_patch_is_422() {
    // U4
    let (server, api, _created) = with_widget().await;
    let before = server.resource_version();
    let patch = json!({"metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z"}});
    let s = status(
        api.patch("x", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Widget.example.com \"x\" is invalid: metadata.deletionTimestamp: Invalid value: \"2020-01-01T00:00:00Z\": field is immutable"
    );
    let causes = s.details.expect("details").causes;
    // The real server lists the cause twice (generic and CR update validation both report it).
    assert_eq!(causes.len(), 2, "{causes:?}");
    for cause in &causes {
        assert_eq!(cause.field, "metadata.deletionTimestamp");
        assert_eq!(
            cause.message,
            "Invalid value: \"2020-01-01T00:00:00Z\": field is immutable"
        );
    }
    assert_eq!(server.resource_version(), before);
    assert_eq!(
        api.get("x").await.unwrap().metadata.deletion_timestamp,
        None
    );
}

#[tokio::test]
async fn setting_deletion_timestamp_on_a_live_object_via_put_is_422() {
    // U4
    let (_server, api, created) = with_widget().await;
    let mut body = serde_json::to_value(&created).unwrap();
    body["metadata"]["deletionTimestamp"] = json!("2020-01-01T00:00:00Z");
    let s = status(api.replace("x", &pp(), &from_json(body)).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Widget.example.com \"x\" is invalid: metadata.deletionTimestamp: Invalid value: \"2020-01-01T00:00:00Z\": field is immutable"
    );
    assert_eq!(
        api.get("x").await.unwrap().metadata.deletion_timestamp,
        None
    );
}

// ---- W5 ----

#[tokio::test]
async fn put_with_a_mismatched_name_is_400() {
    // W5
    let (_server, api, created) = with_widget().await;
    let mut w = created;
    w.metadata.name = Some("other".into());
    let s = status(api.replace("x", &pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "the name of the object (other) does not match the name on the URL (x)"
    );
    assert!(api.get_opt("other").await.unwrap().is_none());
}

// ---- Gen1 ----

#[tokio::test]
async fn widget_spec_change_bumps_generation_by_one() {
    // Gen1
    let (_server, api, created) = with_widget().await;
    assert_eq!(created.metadata.generation, Some(1));
    let mut w = created;
    w.spec.size = 2;
    let updated = api.replace("x", &pp(), &w).await.unwrap();
    assert_eq!(updated.metadata.generation, Some(2));
    let mut w = updated;
    w.spec.size = 3;
    let updated = api.replace("x", &pp(), &w).await.unwrap();
    assert_eq!(updated.metadata.generation, Some(3));
    assert_eq!(api.get("x").await.unwrap().metadata.generation, Some(3));
}

#[tokio::test]
async fn widget_metadata_changes_do_not_bump_generation() {
    // Gen1
    let (_server, api, created) = with_widget().await;
    let mut w = created;
    w.metadata.labels = Some(BTreeMap::from([("a".to_string(), "b".to_string())]));
    let labelled = api.replace("x", &pp(), &w).await.unwrap();
    assert!(
        rv(&labelled.metadata) > rv(&w.metadata),
        "the label change was written"
    );
    assert_eq!(labelled.metadata.generation, Some(1));
    let mut w = labelled;
    w.metadata.annotations = Some(BTreeMap::from([("note".to_string(), "hi".to_string())]));
    let annotated = api.replace("x", &pp(), &w).await.unwrap();
    assert!(
        rv(&annotated.metadata) > rv(&w.metadata),
        "the annotation change was written"
    );
    assert_eq!(annotated.metadata.generation, Some(1));
    let mut w = annotated;
    w.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let finalized = api.replace("x", &pp(), &w).await.unwrap();
    assert!(
        rv(&finalized.metadata) > rv(&w.metadata),
        "the finalizer change was written"
    );
    assert_eq!(finalized.metadata.generation, Some(1));
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.metadata.generation, Some(1));
    assert_eq!(
        stored.metadata.finalizers,
        Some(vec!["example.com/hold".to_string()])
    );
}

#[tokio::test]
async fn widget_status_change_on_main_endpoint_is_ignored_and_does_not_bump() {
    // Gen1, U7
    let (server, api, created) = with_widget().await;
    let before = server.resource_version();
    let mut w = created;
    w.status = Some(WidgetStatus {
        ready: Some(true),
        conditions: vec![],
    });
    let updated = api.replace("x", &pp(), &w).await.unwrap();
    assert_eq!(updated.status, None);
    assert_eq!(updated.metadata.generation, Some(1));
    assert_eq!(
        rv(&updated.metadata),
        before,
        "nothing else changed: a no-op"
    );
    assert_eq!(server.resource_version(), before);
    assert_eq!(api.get("x").await.unwrap().status, None);
}

// ---- Gen2 ----

#[tokio::test]
async fn deployment_spec_and_annotation_changes_bump_generation_label_changes_do_not() {
    // Gen2 (built-in: not checked against a real server)
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let created = api.create(&pp(), &deployment("d")).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let mut d = created;
    d.spec.replicas = Some(2);
    let d = api.replace("d", &pp(), &d).await.unwrap();
    assert_eq!(d.metadata.generation, Some(2), "spec change");
    let mut d = d;
    d.metadata.annotations = Some(BTreeMap::from([("note".to_string(), "hi".to_string())]));
    let d = api.replace("d", &pp(), &d).await.unwrap();
    assert_eq!(d.metadata.generation, Some(3), "annotation change");
    let mut d = d;
    let before = rv(&d.metadata);
    d.metadata.labels = Some(BTreeMap::from([("tier".to_string(), "web".to_string())]));
    let d = api.replace("d", &pp(), &d).await.unwrap();
    assert!(rv(&d.metadata) > before, "the label change was written");
    assert_eq!(d.metadata.generation, Some(3), "label change");
    assert_eq!(api.get("d").await.unwrap().metadata.generation, Some(3));
}

#[tokio::test]
async fn config_map_never_has_generation() {
    // Gen2
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm: ConfigMap = from_json(json!({"metadata": {"name": "x"}, "data": {"k": "v1"}}));
    let mut cm = api.create(&pp(), &cm).await.unwrap();
    assert_eq!(cm.metadata.generation, None);
    cm.data = Some(BTreeMap::from([("k".to_string(), "v2".to_string())]));
    let mut cm = api.replace("x", &pp(), &cm).await.unwrap();
    assert_eq!(cm.metadata.generation, None);
    cm.metadata.annotations = Some(BTreeMap::from([("note".to_string(), "hi".to_string())]));
    let cm = api.replace("x", &pp(), &cm).await.unwrap();
    assert_eq!(cm.metadata.generation, None);
    let wire = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(wire["metadata"].get("generation"), None);
}

// ---- U6 ----

#[tokio::test]
async fn byte_identical_put_is_a_no_op() {
    // U6
    let (server, api, created) = with_widget().await;
    let before = server.resource_version();
    let same = api.replace("x", &pp(), &created).await.unwrap();
    assert_eq!(last_status(&server), 200);
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(same.metadata.generation, created.metadata.generation);
    assert_eq!(server.resource_version(), before);
}

#[tokio::test]
async fn put_that_only_reorders_keys_or_sends_empty_labels_is_a_no_op() {
    // U6
    let (server, api, created) = with_widget().await;
    let before = server.resource_version();
    let rv = created.metadata.resource_version.clone().unwrap();
    let reordered = format!(
        r#"{{"spec":{{"size":1}},"metadata":{{"resourceVersion":"{rv}","namespace":"default","name":"x"}},"kind":"Widget","apiVersion":"example.com/v1"}}"#
    );
    let answer = raw(&server, "PUT", &format!("{WIDGETS}/x"), &reordered)
        .await
        .unwrap();
    assert_eq!(last_status(&server), 200);
    assert_eq!(answer["metadata"]["resourceVersion"], rv.as_str());
    assert_eq!(answer["metadata"]["generation"], 1);
    let empty_maps = format!(
        r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"x","resourceVersion":"{rv}","labels":{{}},"annotations":{{}}}},"spec":{{"size":1}}}}"#
    );
    let answer = raw(&server, "PUT", &format!("{WIDGETS}/x"), &empty_maps)
        .await
        .unwrap();
    assert_eq!(last_status(&server), 200);
    assert_eq!(answer["metadata"]["resourceVersion"], rv.as_str());
    assert_eq!(answer["metadata"].get("labels"), None);
    assert_eq!(server.resource_version(), before);
    assert_eq!(
        api.get("x").await.unwrap().metadata.resource_version,
        Some(rv)
    );
}

// ---- U7 ----

#[tokio::test]
async fn main_endpoint_keeps_the_old_widget_status() {
    // U7
    let (_server, api, created) = with_widget().await;
    let mut w = created;
    w.status = Some(WidgetStatus {
        ready: Some(true),
        conditions: vec![],
    });
    let with_status = api.replace_status("x", &pp(), &w).await.unwrap();
    assert_eq!(with_status.status.as_ref().unwrap().ready, Some(true));
    let mut w = with_status;
    w.status.as_mut().unwrap().ready = Some(false);
    w.spec.size = 2;
    let updated = api.replace("x", &pp(), &w).await.unwrap();
    assert_eq!(updated.spec.size, 2);
    assert_eq!(updated.status.as_ref().unwrap().ready, Some(true));
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.status.unwrap().ready, Some(true));
    assert_eq!(stored.spec.size, 2);
}

// ---- C13 ----

#[tokio::test]
async fn dry_run_update_changes_nothing() {
    // C13
    let (server, api, created) = with_widget().await;
    let before = server.resource_version();
    let mut w = created.clone();
    w.spec.size = 2;
    let params = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let answer = api.replace("x", &params, &w).await.unwrap();
    assert_eq!(last_status(&server), 200);
    assert_eq!(answer.spec.size, 2);
    // As on a real server: the would-be generation, and the resourceVersion of the stored object.
    assert_eq!(answer.metadata.generation, Some(2));
    assert_eq!(
        answer.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(server.resource_version(), before);
    let stored = api.get("x").await.unwrap();
    assert_eq!(stored.spec.size, 1);
    assert_eq!(stored.metadata.generation, Some(1));
    assert_eq!(
        stored.metadata.resource_version,
        created.metadata.resource_version
    );
}

// apiserver/pkg/endpoints/handlers/response.go: every verb's answer is transformed into the
// form asked for; scenario negotiation/metadata-on-every-verb records it.
#[tokio::test]
async fn a_metadata_patch_is_answered_with_the_object_s_metadata() {
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "settings"}, "data": {"mode": "fast"}}))
    .unwrap();
    api.create(&PostParams::default(), &config_map)
        .await
        .unwrap();
    let patch = json!({"metadata": {"labels": {"app": "web"}}});
    let patched = api
        .patch_metadata("settings", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(
        patched
            .types
            .as_ref()
            .map(|t| (t.api_version.as_str(), t.kind.as_str())),
        Some(("meta.k8s.io/v1", "PartialObjectMetadata"))
    );
    assert_eq!(patched.metadata.labels.unwrap()["app"], "web");
    // The write landed whole: the data is still there.
    let stored = api.get("settings").await.unwrap();
    assert_eq!(stored.data.unwrap()["mode"], "fast");
}
