//! Create (POST) against the fake API server, rule by rule (`C*` rows of the reference), with
//! the messages of a real kube-apiserver.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::core::Status;
use recon_fake::{ApiServer, ManualClock};
use recon_test_fixtures::*;
use serde_json::json;

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const GENERATE_NAME_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";
const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn config_map_with_data(name: &str) -> ConfigMap {
    from_json(json!({"metadata": {"name": name}, "data": {"k": "v"}}))
}

fn cause(status: &Status, field: &str) -> String {
    let details = status.details.as_ref().expect("details");
    let causes: Vec<_> = details.causes.iter().filter(|c| c.field == field).collect();
    assert_eq!(causes.len(), 1, "one cause on {field}: {status:?}");
    causes[0].message.clone()
}

fn assert_v4_uuid(uid: &str) {
    let parts: Vec<&str> = uid.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{uid}"
    );
    assert!(
        uid.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "{uid}"
    );
    assert!(parts[2].starts_with('4'), "version 4: {uid}");
    assert!(
        parts[3].starts_with(['8', '9', 'a', 'b']),
        "RFC 4122 variant: {uid}"
    );
}

/// A server at a fixed time with only the Widget CRD installed.
async fn server_at(now: &str) -> ApiServer {
    let server = ApiServer::builder()
        .clock(ManualClock::new(now.parse().unwrap()))
        .build();
    server
        .install_crd(&Widget::crd())
        .await
        .expect("install Widget CRD");
    server
}

// ---- C1 ----

#[tokio::test]
async fn create_sets_a_v4_uid_and_a_whole_second_creation_timestamp() {
    // C1
    let server = server_at("2024-05-01T10:00:00.750Z").await;
    let created = widgets(&server)
        .create(&pp(), &widget("x", 1))
        .await
        .unwrap();
    assert_v4_uuid(created.metadata.uid.as_deref().expect("uid"));
    let wire = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(
        wire["metadata"]["creationTimestamp"],
        "2024-05-01T10:00:00Z"
    );
    let stored = widgets(&server).get("x").await.unwrap();
    assert_eq!(stored.metadata.uid, created.metadata.uid);
    assert_eq!(
        stored.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
}

#[tokio::test]
async fn client_sent_uid_and_timestamps_are_ignored_on_create_not_rejected() {
    // C1
    let server = server_at("2024-05-01T10:00:00Z").await;
    let sent: Widget = from_json(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {
            "name": "x",
            "uid": "11111111-2222-4333-8444-555555555555",
            "creationTimestamp": "2001-01-01T00:00:00Z",
            "deletionTimestamp": "2001-01-01T00:00:00Z",
        },
        "spec": {"size": 1},
    }));
    let created = widgets(&server).create(&pp(), &sent).await.unwrap();
    let uid = created.metadata.uid.clone().expect("uid");
    assert_ne!(uid, "11111111-2222-4333-8444-555555555555");
    assert_v4_uuid(&uid);
    let wire = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(
        wire["metadata"]["creationTimestamp"],
        "2024-05-01T10:00:00Z"
    );
    assert_eq!(wire["metadata"].get("deletionTimestamp"), None);
    let stored = widgets(&server).get("x").await.unwrap();
    assert_eq!(stored.metadata.uid.as_deref(), Some(uid.as_str()));
    assert_eq!(stored.metadata.deletion_timestamp, None);
}

// ---- C3 ----

#[tokio::test]
async fn one_global_resource_version_increases_across_types() {
    // C3
    let server = server().await;
    let configmaps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let secrets: Api<Secret> = Api::namespaced(server.client(), "default");
    let before = server.resource_version();
    let cm = configmaps
        .create(&pp(), &config_map_with_data("x"))
        .await
        .unwrap();
    let w = widgets(&server)
        .create(&pp(), &widget("x", 1))
        .await
        .unwrap();
    let secret: Secret = from_json(json!({"metadata": {"name": "x"}, "stringData": {"k": "v"}}));
    let secret = secrets.create(&pp(), &secret).await.unwrap();
    let (cm, w, secret) = (rv(&cm.metadata), rv(&w.metadata), rv(&secret.metadata));
    assert!(before < cm, "{before} < {cm}");
    assert!(cm < w, "{cm} < {w}");
    assert!(w < secret, "{w} < {secret}");
    assert_eq!(server.resource_version(), secret);
    let list = widgets(&server).list(&Default::default()).await.unwrap();
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );
}

// ---- C4 ----

#[tokio::test]
async fn custom_resources_get_generation_1_on_create_whatever_the_client_sent() {
    // C4
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.generation = Some(5);
    let created = widgets(&server).create(&pp(), &w).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let mut gizmo = DynamicObject::new("g", &gizmo_resource()).data(json!({"spec": {"a": 1}}));
    gizmo.metadata.generation = Some(9);
    let created = gizmos(&server).create(&pp(), &gizmo).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
}

#[tokio::test]
async fn deployment_gets_generation_1_on_create() {
    // C4
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let mut d = deployment("d");
    d.metadata.generation = Some(7);
    let created = api.create(&pp(), &d).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
}

#[tokio::test]
async fn config_map_has_no_generation_on_create() {
    // C4
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let created = api.create(&pp(), &config_map_with_data("x")).await.unwrap();
    assert_eq!(created.metadata.generation, None);
    let wire = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(wire["metadata"].get("generation"), None);
}

// ---- C5 ----

fn generated(generate_name: &str) -> Widget {
    let mut w = widget("", 1);
    w.metadata.name = None;
    w.metadata.generate_name = Some(generate_name.into());
    w
}

fn assert_generated_suffix(name: &str, base: &str) {
    let suffix = name
        .strip_prefix(base)
        .unwrap_or_else(|| panic!("{name} starts with {base}"));
    assert_eq!(suffix.len(), 5, "{name}");
    assert!(
        suffix.chars().all(|c| GENERATE_NAME_ALPHABET.contains(c)),
        "{name}"
    );
}

#[tokio::test]
async fn generate_name_appends_five_chars_from_the_real_alphabet() {
    // C5
    let server = server().await;
    let created = widgets(&server)
        .create(&pp(), &generated("gen-"))
        .await
        .unwrap();
    let name = created.metadata.name.clone().expect("name");
    assert_generated_suffix(&name, "gen-");
    assert_eq!(created.metadata.generate_name.as_deref(), Some("gen-"));
    assert_eq!(
        widgets(&server).get(&name).await.unwrap().metadata.uid,
        created.metadata.uid
    );
}

#[tokio::test]
async fn generate_name_base_is_cut_to_58_chars() {
    // C5
    let server = server().await;
    let base = "a".repeat(70);
    let created = widgets(&server)
        .create(&pp(), &generated(&base))
        .await
        .unwrap();
    let name = created.metadata.name.expect("name");
    assert_eq!(name.len(), 63, "{name}");
    assert_generated_suffix(&name, &base[..58]);
}

#[tokio::test]
async fn name_wins_when_name_and_generate_name_are_both_set() {
    // C5
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.generate_name = Some("gen-".into());
    let created = widgets(&server).create(&pp(), &w).await.unwrap();
    assert_eq!(created.metadata.name.as_deref(), Some("x"));
    assert_eq!(created.metadata.generate_name.as_deref(), Some("gen-"));
}

#[tokio::test]
async fn bad_generate_name_is_422_on_generate_name_and_name() {
    // C5
    let server = server().await;
    let s = status(widgets(&server).create(&pp(), &generated("Bad_")).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    let details = s.details.clone().expect("details");
    let name = details.name.clone();
    assert_generated_suffix(&name, "Bad_");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("example.com", "Widget")
    );
    assert_eq!(
        s.message,
        format!(
            "Widget.example.com \"{name}\" is invalid: [metadata.generateName: Invalid value: \"Bad_\": {DNS1123_SUBDOMAIN}, metadata.name: Invalid value: \"{name}\": {DNS1123_SUBDOMAIN}]"
        )
    );
    let fields: Vec<_> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("FieldValueInvalid", "metadata.generateName"),
            ("FieldValueInvalid", "metadata.name")
        ]
    );
    assert_eq!(
        cause(&s, "metadata.generateName"),
        format!("Invalid value: \"Bad_\": {DNS1123_SUBDOMAIN}")
    );
}

#[tokio::test]
async fn generate_name_and_uid_are_deterministic_with_a_seed() {
    // C5
    let mut results = Vec::new();
    for _ in 0..2 {
        let server = ApiServer::builder().seed(42).build();
        server.install_crd(&Widget::crd()).await.unwrap();
        let created = widgets(&server)
            .create(&pp(), &generated("gen-"))
            .await
            .unwrap();
        results.push((
            created.metadata.name.expect("name"),
            created.metadata.uid.expect("uid"),
        ));
    }
    assert_generated_suffix(&results[0].0, "gen-");
    assert_eq!(results[0], results[1]);
}

// ---- C6 ----

#[tokio::test]
async fn empty_namespace_is_defaulted_from_the_url() {
    // C6
    let server = server().await;
    let api: Api<Widget> = Api::namespaced(server.client(), "kube-system");
    let created = api.create(&pp(), &widget("x", 1)).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("kube-system"));
    assert!(api.get("x").await.is_ok());
    assert!(widgets(&server).get_opt("x").await.unwrap().is_none());
}

#[tokio::test]
async fn mismatched_namespace_is_400() {
    // C6
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.namespace = Some("kube-system".into());
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "the namespace of the provided object does not match the namespace sent on the request"
    );
}

#[tokio::test]
async fn cluster_scoped_gizmo_namespace_in_body_is_cleared() {
    // C6
    let server = server().await;
    let gizmo = DynamicObject::new("g", &gizmo_resource())
        .within("default")
        .data(json!({"spec": {"a": 1}}));
    let created = gizmos(&server).create(&pp(), &gizmo).await.unwrap();
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(
        gizmos(&server).get("g").await.unwrap().metadata.namespace,
        None
    );
}

// ---- C7 ----

#[tokio::test]
async fn empty_name_is_422_name_or_generate_name_is_required() {
    // C7
    let server = server().await;
    let mut w = widget("", 1);
    w.metadata.name = None;
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Widget.example.com \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
    let details = s.details.clone().expect("details");
    assert_eq!(
        (
            details.group.as_str(),
            details.kind.as_str(),
            details.name.as_str()
        ),
        ("example.com", "Widget", "")
    );
    assert_eq!(details.causes.len(), 1);
    assert_eq!(details.causes[0].reason, "FieldValueRequired");
    assert_eq!(
        cause(&s, "metadata.name"),
        "Required value: name or generateName is required"
    );
}

#[tokio::test]
async fn custom_resource_name_must_be_a_dns_1123_subdomain() {
    // C7
    let server = server().await;
    let s = status(widgets(&server).create(&pp(), &widget("Bad_Name", 1)).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        format!(
            "Widget.example.com \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": {DNS1123_SUBDOMAIN}"
        )
    );
    assert_eq!(s.details.as_ref().unwrap().name, "Bad_Name");
    assert_eq!(
        cause(&s, "metadata.name"),
        format!("Invalid value: \"Bad_Name\": {DNS1123_SUBDOMAIN}")
    );
}

#[tokio::test]
async fn service_name_is_a_dns_1123_label_as_relaxed_service_name_validation_has_it() {
    // `ValidateServiceCreate` (pkg/apis/core/validation/validation.go): with the feature gate
    // `RelaxedServiceNameValidation`, beta and on by default from 1.36, a Service is named by
    // `NameIsDNSLabel`, so a leading digit is allowed (scenario
    // validation-core/service-name-is-a-dns-1123-label).
    let server = ApiServer::new();
    let services: Api<Service> = Api::namespaced(server.client(), "default");
    let svc: Service =
        from_json(json!({"metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}}));
    services.create(&pp(), &svc).await.unwrap();
    let svc: Service =
        from_json(json!({"metadata": {"name": "svc.a"}, "spec": {"ports": [{"port": 80}]}}));
    let s = status(services.create(&pp(), &svc).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        cause(&s, "metadata.name"),
        "Invalid value: \"svc.a\": must not contain dots"
    );
    assert!(
        s.message.starts_with("Service \"svc.a\" is invalid: "),
        "{}",
        s.message
    );
}

#[tokio::test]
async fn namespace_name_must_be_a_dns_1123_label() {
    // C7 (built-in: not checked against a real server)
    let server = ApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.client());
    let ns: Namespace = from_json(json!({"metadata": {"name": "a.b"}}));
    let s = status(namespaces.create(&pp(), &ns).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"
    );
    assert_eq!(
        cause(&s, "metadata.name"),
        "Invalid value: \"a.b\": must not contain dots"
    );
}

// ---- C8 ----

#[tokio::test]
async fn bad_label_key_is_422() {
    // C8
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.labels = Some(BTreeMap::from([("bad key!".to_string(), "v".to_string())]));
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        format!(
            "Widget.example.com \"x\" is invalid: metadata.labels: Invalid value: \"bad key!\": {LABEL_NAME_PART}"
        )
    );
    assert_eq!(
        cause(&s, "metadata.labels"),
        format!("Invalid value: \"bad key!\": {LABEL_NAME_PART}")
    );
}

#[tokio::test]
async fn bad_label_value_is_422() {
    // C8
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.labels = Some(BTreeMap::from([(
        "k".to_string(),
        "bad value!".to_string(),
    )]));
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Widget.example.com \"x\" is invalid: metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
}

#[tokio::test]
async fn two_controller_owner_references_are_422() {
    // C8
    let server = server().await;
    let owner = |kind: &str, name: &str, uid: &str| OwnerReference {
        api_version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    let mut w = widget("x", 1);
    w.metadata.owner_references = Some(vec![owner("A", "a", "1"), owner("B", "b", "2")]);
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert!(
        s.message
            .contains("Only one reference can have Controller set to true"),
        "{}",
        s.message
    );
    assert_eq!(
        s.message,
        r#"Widget.example.com "x" is invalid: metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"A","name":"a","uid":"1","controller":true},{"apiVersion":"v1","kind":"B","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for A/a and B/b"#
    );
}

#[tokio::test]
async fn bad_finalizer_name_is_422() {
    // C8
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.finalizers = Some(vec!["bad finalizer!".into()]);
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        format!(
            "Widget.example.com \"x\" is invalid: metadata.finalizers: Invalid value: \"bad finalizer!\": {LABEL_NAME_PART}"
        )
    );
}

#[tokio::test]
async fn orphan_and_foreground_deletion_finalizers_together_are_422() {
    // C8
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.finalizers = Some(vec!["orphan".into(), "foregroundDeletion".into()]);
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        r#"Widget.example.com "x" is invalid: metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set"#
    );
}

// ---- C9 ----

#[tokio::test]
async fn creating_an_existing_widget_is_409_already_exists() {
    // C9
    let server = server().await;
    widgets(&server)
        .create(&pp(), &widget("x", 1))
        .await
        .unwrap();
    let s = status(widgets(&server).create(&pp(), &widget("x", 2)).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(s.message, "widgets.example.com \"x\" already exists");
    let details = s.details.expect("details");
    assert_details(&details, ("x", "example.com", "widgets"));
    assert_eq!(widgets(&server).get("x").await.unwrap().spec.size, 1);
}

#[tokio::test]
async fn creating_an_existing_config_map_names_the_core_resource() {
    // C9
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&pp(), &config_map_with_data("x")).await.unwrap();
    let s = status(api.create(&pp(), &config_map_with_data("x")).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(s.message, "configmaps \"x\" already exists");
    let details = s.details.expect("details");
    assert_details(&details, ("x", "", "configmaps"));
}

#[tokio::test]
async fn creating_over_a_terminating_object_says_it_is_being_deleted() {
    // C9
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    widgets(&server).create(&pp(), &w).await.unwrap();
    widgets(&server)
        .delete("x", &DeleteParams::default())
        .await
        .unwrap();
    let s = status(widgets(&server).create(&pp(), &widget("x", 2)).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        s.message,
        "object is being deleted: widgets.example.com \"x\" already exists"
    );
    assert_eq!(s.details.expect("details").kind, "widgets");
}

// ---- C10 ----

#[tokio::test]
async fn status_is_dropped_on_create_with_the_status_subresource() {
    // C10
    let server = server().await;
    let mut w = widget("x", 1);
    w.status = Some(WidgetStatus {
        ready: Some(true),
        conditions: vec![],
    });
    let created = widgets(&server).create(&pp(), &w).await.unwrap();
    assert_eq!(created.status, None);
    assert_eq!(widgets(&server).get("x").await.unwrap().status, None);
}

#[tokio::test]
async fn status_is_kept_on_create_without_the_status_subresource() {
    // C10
    let server = server().await;
    let gizmo = DynamicObject::new("g", &gizmo_resource())
        .data(json!({"spec": {"a": 1}, "status": {"phase": "new"}}));
    let created = gizmos(&server).create(&pp(), &gizmo).await.unwrap();
    assert_eq!(created.data["status"], json!({"phase": "new"}));
    assert_eq!(
        gizmos(&server).get("g").await.unwrap().data["status"],
        json!({"phase": "new"})
    );
}

// ---- C2 ----

#[tokio::test]
async fn resource_version_set_on_create_is_500_with_empty_reason() {
    // C2
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.resource_version = Some("5".into());
    let s = status(widgets(&server).create(&pp(), &w).await);
    assert_eq!((s.code, s.reason.as_str()), (500, ""));
    assert_eq!(
        s.message,
        "resourceVersion should not be set on objects to be created"
    );
    assert!(widgets(&server).get_opt("x").await.unwrap().is_none());
}

#[tokio::test]
async fn unparsable_resource_version_on_create_is_accepted() {
    // C2
    let server = server().await;
    let mut w = widget("x", 1);
    w.metadata.resource_version = Some("-1".into());
    let created = widgets(&server).create(&pp(), &w).await.unwrap();
    assert_eq!(rv(&created.metadata), server.resource_version());
}

// ---- decoding (W5, §8.3) ----

#[tokio::test]
async fn widget_body_missing_kind_is_400_unrecognized() {
    // W5
    let server = server().await;
    let body = r#"{"apiVersion":"example.com/v1","metadata":{"name":"x"},"spec":{"size":1}}"#;
    let s = status(raw(&server, "POST", WIDGETS, body).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert!(
        s.message.starts_with(
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in"
        ),
        "{}",
        s.message
    );
    assert_eq!(
        s.message,
        format!(
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{body}' ({{\"apiVersion\":\"example.com/v1\" ...)"
        )
    );
}

#[tokio::test]
async fn wrong_api_version_in_body_is_400() {
    // W5
    let server = server().await;
    let body = r#"{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"x"},"spec":{"size":1}}"#;
    let s = status(raw(&server, "POST", WIDGETS, body).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)"
    );
}

#[tokio::test]
async fn wrong_kind_in_body_is_422_must_be_widget() {
    // W5
    let server = server().await;
    let body = r#"{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"x"},"spec":{"size":1}}"#;
    let s = status(raw(&server, "POST", WIDGETS, body).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        s.message,
        "Gadget.example.com \"x\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
    );
    let details = s.details.clone().expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("example.com", "Gadget")
    );
    assert_eq!(
        cause(&s, "kind"),
        "Invalid value: \"Gadget\": must be Widget"
    );
    assert!(widgets(&server).get_opt("x").await.unwrap().is_none());
}

#[tokio::test]
async fn unknown_metadata_fields_are_dropped() {
    // W6
    let server = server().await;
    let body = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x","bogus":1},"spec":{"size":1}}"#;
    let created = raw(&server, "POST", WIDGETS, body).await.unwrap();
    assert_eq!(created["metadata"]["name"], "x");
    assert_eq!(created["metadata"].get("bogus"), None);
    let create = server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.method == http::Method::POST)
        .unwrap();
    assert_eq!(create.status, 201);
    let stored = raw(&server, "GET", &format!("{WIDGETS}/x"), "")
        .await
        .unwrap();
    assert_eq!(stored["metadata"].get("bogus"), None);
    assert_eq!(stored["spec"], json!({"size": 1}));
}

// ---- C13 ----

#[tokio::test]
async fn dry_run_create_stores_nothing() {
    // C13
    let server = server().await;
    let before = server.resource_version();
    let params = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let created = widgets(&server)
        .create(&params, &widget("x", 1))
        .await
        .unwrap();
    assert_eq!(created.metadata.name.as_deref(), Some("x"));
    assert_eq!(server.requests().last().unwrap().status, 201);
    assert_eq!(server.resource_version(), before);
    let s = status(widgets(&server).get("x").await);
    assert_eq!(s.code, 404);
    assert_eq!(server.resource_version(), before);
}

#[tokio::test]
async fn dry_run_create_response_has_uid_but_no_resource_version() {
    // C13 (the real server answers without a resourceVersion: nothing was written)
    let server = server().await;
    let params = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let created = widgets(&server)
        .create(&params, &widget("x", 1))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.resource_version, None);
}

// ---- R2 ----

#[tokio::test]
async fn create_on_a_namespaced_type_without_a_namespace_is_404() {
    // R2
    let server = server().await;
    let all: Api<Widget> = Api::all(server.client());
    let s = status(all.create(&pp(), &widget("x", 1)).await);
    assert_eq!(s.code, 404);
    let last = server.requests().last().unwrap().clone();
    assert_eq!(last.path, "/apis/example.com/v1/widgets");
    assert_eq!(last.status, 404);
    assert_eq!(&last.response[..], b"404 page not found\n");
    assert!(widgets(&server).get_opt("x").await.unwrap().is_none());
}

#[tokio::test]
async fn a_null_config_map_value_is_stored_as_the_empty_string() {
    // ConfigMap.data is a Go map[string]string: decoding a JSON null leaves "".
    let server = ApiServer::new();
    raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": null, "b": "x"}}"#,
    )
    .await
    .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let data = api
        .get("c")
        .await
        .expect("a typed client reads it")
        .data
        .unwrap();
    assert_eq!((data["a"].as_str(), data["b"].as_str()), ("", "x"));

    let merge = serde_json::json!({"data": {"b": null, "c": null}});
    let raw_patch = api
        .patch(
            "c",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&merge),
        )
        .await
        .unwrap();
    let data = raw_patch.data.unwrap();
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        ["a"],
        "a merge patch's null removes the key before decoding"
    );
}

// A Content-Type of bytes that are not text fails Go's mime.ParseMediaType (only ASCII token
// characters), so NegotiateInputSerializerForMediaType answers 415; it is not a missing header.
#[tokio::test]
async fn content_type_that_is_not_text_is_415() {
    let server = ApiServer::new();
    let request = http::Request::builder()
        .method("POST")
        .uri("/api/v1/namespaces/default/configmaps")
        .header(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_bytes(b"application/json\xff").unwrap(),
        )
        .body(serde_json::to_vec(&config_map_with_data("c1")).unwrap())
        .unwrap();
    let err = server.client().request_text(request).await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected a Status, got {err:?}")
    };
    assert_eq!(status.code, 415, "{status:?}");
    assert_eq!(status.reason, "UnsupportedMediaType");
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    assert!(api.get_opt("c1").await.unwrap().is_none(), "nothing stored");
}

// Issue 22, found by the request-body property (`service::proptests`): Go decodes a built-in's
// `null` field as unset and writes neither it nor an empty map back (`omitempty`; protobuf
// storage keeps no empty map), so neither is stored. An empty struct is a set pointer and stays.
#[tokio::test]
async fn null_fields_and_empty_maps_of_a_built_in_are_not_stored() {
    let server = ApiServer::new();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": null, "binaryData": {}});
    let created = raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &cm.to_string(),
    )
    .await
    .unwrap();
    assert_eq!(created.get("data"), None, "{created}");
    assert_eq!(created.get("binaryData"), None, "{created}");

    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
            "metadata": {"labels": {"app": "d"}, "annotations": {}},
            "spec": {"nodeSelector": {}, "volumes": [{"name": "v", "emptyDir": {}}],
                "containers": [{"name": "main", "image": "nginx", "resources": {"limits": {}}}]}}}});
    let created = raw(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &deployment.to_string(),
    )
    .await
    .unwrap();
    let template = &created["spec"]["template"];
    assert_eq!(template["metadata"], json!({"labels": {"app": "d"}}));
    assert_eq!(template["spec"].get("nodeSelector"), None, "{template}");
    assert_eq!(template["spec"]["volumes"][0]["emptyDir"], json!({}));
    // `resources` is a struct (always written); its empty `limits` map is not.
    assert_eq!(template["spec"]["containers"][0]["resources"], json!({}));
}
