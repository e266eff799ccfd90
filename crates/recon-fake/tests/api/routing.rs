//! URL routing (R1, R2), the `metav1.Status` error shape (W2), the built-in kinds, CRDs created
//! through the API, the request log and `DynamicObject`. Messages and bodies marked "real" were
//! checked against a real apiextensions-apiserver 1.36 (which serves no core group).

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Event as CoreEvent, Namespace, ObjectReference, Pod, PodSpec,
    PodTemplateSpec, Secret, Service, ServiceAccount, ServicePort,
};
use k8s_openapi::api::events::v1::Event as EventsEvent;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, MicroTime, ObjectMeta};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::{CustomResource, CustomResourceExt, Resource};
use recon_fake::{ApiServer, RecordedRequest, RequestOrigin, Verb};
use recon_test_fixtures::*;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A namespaced type whose CRD the tests create themselves.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Sprocket", namespaced)]
pub struct SprocketSpec {
    pub teeth: i32,
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Sends a raw request through the server's client; returns the result and its log entry.
async fn raw(
    server: &ApiServer,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (Result<String, kube::Error>, RecordedRequest) {
    let mut builder = http::Request::builder().method(method).uri(path);
    if body.is_some() {
        builder = builder.header(http::header::CONTENT_TYPE, "application/json");
    }
    let bytes = body
        .map(|b| serde_json::to_vec(&b).unwrap())
        .unwrap_or_default();
    let result = server
        .client()
        .request_text(builder.body(bytes).unwrap())
        .await;
    let last = server
        .requests()
        .last()
        .cloned()
        .expect("the request was recorded");
    assert_eq!(last.path, path.split('?').next().unwrap());
    (result, last)
}

/// Go's `http.NotFound`: a plain-text 404 that kube turns into a synthetic `Status` with code 404
/// (reason `Failed to parse error data`, so kube 5's `is_not_found()` does not recognise it).
#[track_caller]
fn assert_plain_404<T: Debug>(result: Result<T, kube::Error>, recorded: &RecordedRequest) {
    let s = status(result);
    assert_eq!(s.code, 404, "{s:?}");
    assert_eq!(s.message, "404 page not found");
    assert_eq!(s.reason, "Failed to parse error data");
    assert_eq!(recorded.status, 404);
    assert_eq!(&recorded.response[..], b"404 page not found\n");
}

/// A GET of each of `paths` is Go's plain-text 404 ([`assert_plain_404`]).
async fn gets_are_plain_404s(server: &ApiServer, paths: &[&str]) {
    for path in paths {
        let (result, recorded) = raw(server, "GET", path, None).await;
        assert_plain_404(result, &recorded);
    }
}

// ---------------------------------------------------------------------------------------------
// R1 paths

#[tokio::test]
async fn core_group_namespaced_objects_live_under_api_v1_namespaces() {
    // R1
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(
        &PostParams::default(),
        &ConfigMap {
            metadata: meta("c"),
            ..ConfigMap::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        server.requests().last().unwrap().path,
        "/api/v1/namespaces/default/configmaps"
    );
    let (result, recorded) = raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps/c",
        None,
    )
    .await;
    let body: Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!(
        (body["kind"].as_str(), body["apiVersion"].as_str()),
        (Some("ConfigMap"), Some("v1"))
    );
    assert_eq!(body["metadata"]["name"], "c");
    assert_eq!(
        (
            recorded.verb,
            recorded.group.as_str(),
            recorded.version.as_str()
        ),
        (Verb::Get, "", "v1")
    );
    assert_eq!(
        (recorded.namespace.as_deref(), recorded.name.as_deref()),
        (Some("default"), Some("c"))
    );
}

#[tokio::test]
async fn named_group_namespaced_objects_live_under_apis_group_version_namespaces() {
    // R1
    let server = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let (result, recorded) = raw(
        &server,
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets/w",
        None,
    )
    .await;
    let body: Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!(
        (body["kind"].as_str(), body["apiVersion"].as_str()),
        (Some("Widget"), Some("example.com/v1"))
    );
    assert_eq!(
        (recorded.group.as_str(), recorded.resource.as_str()),
        ("example.com", "widgets")
    );
    // The status subresource is one segment deeper.
    widgets(&server).get_status("w").await.unwrap();
    let recorded = server.requests().last().cloned().unwrap();
    assert_eq!(
        recorded.path,
        "/apis/example.com/v1/namespaces/default/widgets/w/status"
    );
    assert_eq!(recorded.subresource.as_deref(), Some("status"));
}

#[tokio::test]
async fn cluster_scoped_objects_live_outside_any_namespace() {
    // R1: Namespace (core), CustomResourceDefinition (named group), Gizmo (custom resource).
    let server = server().await;
    let namespaces: Api<Namespace> = Api::all(server.client());
    namespaces
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: meta("team"),
                ..Namespace::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        namespaces
            .get("team")
            .await
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("team")
    );
    let recorded = server.requests().last().cloned().unwrap();
    assert_eq!(
        (recorded.path.as_str(), recorded.namespace.as_deref()),
        ("/api/v1/namespaces/team", None)
    );
    namespaces.get_status("team").await.unwrap();
    assert_eq!(
        server.requests().last().unwrap().path,
        "/api/v1/namespaces/team/status"
    );

    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    crds.get("widgets.example.com").await.unwrap();
    assert_eq!(
        server.requests().last().unwrap().path,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"
    );

    let gizmo = DynamicObject::new("g", &gizmo_resource()).data(json!({"spec": {"teeth": 3}}));
    gizmos(&server)
        .create(&PostParams::default(), &gizmo)
        .await
        .unwrap();
    let back = gizmos(&server).get("g").await.unwrap();
    assert_eq!(back.data["spec"]["teeth"], 3);
    assert_eq!(back.metadata.namespace, None);
    assert_eq!(
        server.requests().last().unwrap().path,
        "/apis/example.com/v1/gizmos/g"
    );
}

// ---------------------------------------------------------------------------------------------
// R2 scope mismatches and unknown paths

#[tokio::test]
async fn namespaced_custom_resource_without_a_namespace_is_a_plain_404_except_for_list() {
    // R2: real server, GET /apis/example.com/v1/widgets/x and POST /apis/example.com/v1/widgets.
    let server = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("x", 1))
        .await
        .unwrap();
    let (result, recorded) = raw(&server, "GET", "/apis/example.com/v1/widgets/x", None).await;
    assert_plain_404(result, &recorded);
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "y"}, "spec": {"size": 1}});
    let (result, recorded) = raw(&server, "POST", "/apis/example.com/v1/widgets", Some(body)).await;
    assert_plain_404(result, &recorded);
    // Through kube: an `Api::all` can list, but not get.
    let all: Api<Widget> = Api::all(server.client());
    let s = status(all.get("x").await);
    assert_eq!((s.code, s.message.as_str()), (404, "404 page not found"));
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
}

#[tokio::test]
async fn cluster_scoped_custom_resource_under_a_namespace_is_a_plain_404() {
    // R2: real server, for a cluster-scoped CRD of its own.
    let server = server().await;
    gizmos(&server)
        .create(
            &PostParams::default(),
            &DynamicObject::new("g", &gizmo_resource()),
        )
        .await
        .unwrap();
    gets_are_plain_404s(
        &server,
        &[
            "/apis/example.com/v1/namespaces/default/gizmos/g",
            "/apis/example.com/v1/namespaces/default/gizmos",
        ],
    )
    .await;
}

/// go-restful's 404 inside a served built-in group: a JSON `Status`, not plain text. Returns what
/// differs, if anything.
async fn restful_404_mismatch(server: &ApiServer, path: &str) -> Option<String> {
    let expected = json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
        "message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404});
    let (result, recorded) = raw(server, "GET", path, None).await;
    let s = status(result);
    let ok = s.code == 404
        && s.reason == "NotFound"
        && s.is_not_found()
        && recorded.response_json() == Some(expected);
    (!ok).then(|| {
        format!(
            "{path}: got {} {:?}",
            recorded.status,
            String::from_utf8_lossy(&recorded.response)
        )
    })
}

#[tokio::test]
async fn cluster_scoped_builtin_under_a_namespace_is_a_404_status() {
    // R2: real server, GET /apis/apiextensions.k8s.io/v1/namespaces/default/customresourcedefinitions/...
    // (a served built-in group answers paths it does not route with go-restful's JSON 404).
    let server = server().await;
    let mut wrong = Vec::new();
    for path in [
        "/apis/apiextensions.k8s.io/v1/namespaces/default/customresourcedefinitions/widgets.example.com",
        "/apis/apiextensions.k8s.io/v1/namespaces/default/customresourcedefinitions",
    ] {
        wrong.extend(restful_404_mismatch(&server, path).await);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn unknown_resource_or_version_in_a_builtin_group_is_a_404_status() {
    // R2: real server, GET /apis/apiextensions.k8s.io/v1/nothings and .../v2/customresourcedefinitions.
    let server = server().await;
    let mut wrong = Vec::new();
    for path in [
        "/apis/apiextensions.k8s.io/v1/nothings",
        "/apis/apiextensions.k8s.io/v2/customresourcedefinitions",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com/nosub",
    ] {
        wrong.extend(restful_404_mismatch(&server, path).await);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn the_crd_handler_creates_from_a_post_to_an_object_path() {
    // R1: RequestInfo calls any POST `create`; the CRD handler serves it (checked on a real server)
    let server = server().await;
    let path = "/apis/example.com/v1/namespaces/default/widgets/posted";
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "posted"}, "spec": {"size": 1}});
    let (result, recorded) = raw(&server, "POST", path, Some(body)).await;
    result.expect("created");
    assert_eq!((recorded.verb, recorded.status), (Verb::Create, 201));
    widgets(&server).get("posted").await.expect("stored");
}

#[tokio::test]
async fn a_put_or_patch_without_a_name_is_400_for_custom_resources_and_405_for_builtins() {
    // R1: the CRD handler needs a name; the compiled-in router has no such route (real server)
    let server = server().await;
    for (method, path) in [
        ("PUT", "/apis/example.com/v1/namespaces/default/widgets"),
        ("PATCH", "/apis/example.com/v1/namespaces/default/widgets"),
    ] {
        let (result, recorded) = raw(&server, method, path, Some(json!({}))).await;
        let err = status(result);
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "name must be provided"),
            "{method}"
        );
        assert_eq!(recorded.status, 400);
    }
    for (method, path) in [
        ("PUT", "/api/v1/namespaces/default/configmaps"),
        ("POST", "/api/v1/namespaces/default/configmaps/named"),
        (
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        ),
    ] {
        let (result, _) = raw(&server, method, path, Some(json!({}))).await;
        let err = status(result);
        assert_eq!(
            (err.code, err.reason.as_str(), err.message.as_str()),
            (
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource"
            ),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn unknown_group_or_resource_is_a_plain_404() {
    // R2: real server.
    let server = server().await;
    gets_are_plain_404s(
        &server,
        &[
            "/apis/nope.io/v1/things",
            "/apis/nope.io/v1/namespaces/default/things/t",
            "/apis/example.com/v1/namespaces/default/nothings",
            "/apis/example.com/v1/nothings/x",
        ],
    )
    .await;
}

#[tokio::test]
async fn served_custom_group_at_an_unserved_version_is_a_plain_404() {
    // R2: real server, GET /apis/example.com/v2/namespaces/default/widgets.
    let server = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    gets_are_plain_404s(
        &server,
        &[
            "/apis/example.com/v2/namespaces/default/widgets",
            "/apis/example.com/v2/namespaces/default/widgets/w",
        ],
    )
    .await;
}

#[tokio::test]
async fn resource_path_before_its_crd_exists_is_a_plain_404() {
    // R2: real server answered the same for an uninstalled plural.
    let server = ApiServer::new();
    let api: Api<Widget> = Api::namespaced(server.client(), "default");
    let s = status(api.list(&ListParams::default()).await);
    assert_eq!((s.code, s.message.as_str()), (404, "404 page not found"));
    assert_eq!(
        &server.requests().last().unwrap().response[..],
        b"404 page not found\n"
    );
    let s = status(api.create(&PostParams::default(), &widget("w", 1)).await);
    assert_eq!((s.code, s.message.as_str()), (404, "404 page not found"));

    server.install_crd(&Widget::crd()).await.unwrap();
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn unknown_subresource_of_a_custom_resource_is_the_object_not_found_status() {
    // R2, S3: real server, GET .../widgets/w1/nosub.
    let server = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let (result, recorded) = raw(
        &server,
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets/w/nosub",
        None,
    )
    .await;
    assert!(status(result).is_not_found());
    assert_eq!(
        recorded.response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"widgets.example.com \"w\" not found","reason":"NotFound",
               "details":{"name":"w","group":"example.com","kind":"widgets"},"code":404})
    );
}

// ---------------------------------------------------------------------------------------------
// W2 error bodies

#[tokio::test]
async fn custom_resource_not_found_body_is_a_full_status() {
    // W2, G1: real server body.
    let server = server().await;
    let err = widgets(&server).get("nope").await;
    let s = status(err);
    assert!(s.is_not_found());
    assert_eq!(s.message, r#"widgets.example.com "nope" not found"#);
    let details = s.details.unwrap();
    assert_details(&details, ("nope", "example.com", "widgets"));
    assert_eq!(
        server.requests().last().unwrap().response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"widgets.example.com \"nope\" not found","reason":"NotFound",
               "details":{"name":"nope","group":"example.com","kind":"widgets"},"code":404})
    );
}

#[tokio::test]
async fn core_group_not_found_body_has_no_details_group() {
    // W2, G1 (core group: GroupResource.String() is the bare plural; not checked on a real server)
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let s = status(api.get("nope").await);
    assert!(s.is_not_found());
    assert_eq!(s.message, r#"configmaps "nope" not found"#);
    let raw = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(
        raw,
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"configmaps \"nope\" not found","reason":"NotFound",
               "details":{"name":"nope","kind":"configmaps"},"code":404})
    );
    assert!(raw["details"].get("group").is_none());
}

#[tokio::test]
async fn already_exists_error_works_with_kube_is_already_exists() {
    // W2, C9: real server body.
    let server = server().await;
    let api = widgets(&server);
    api.create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let s = status(api.create(&PostParams::default(), &widget("w", 1)).await);
    assert!(s.is_already_exists());
    assert_eq!(s.code, 409);
    assert_eq!(
        server.requests().last().unwrap().response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"widgets.example.com \"w\" already exists","reason":"AlreadyExists",
               "details":{"name":"w","group":"example.com","kind":"widgets"},"code":409})
    );
}

#[tokio::test]
async fn stale_resource_version_conflict_works_with_kube_is_conflict() {
    // W2, U1: real server body.
    let server = server().await;
    let api = widgets(&server);
    let mut w = api
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"size": 2}})),
    )
    .await
    .unwrap();
    w.spec.size = 3;
    let s = status(api.replace("w", &PostParams::default(), &w).await);
    assert!(s.is_conflict());
    assert_eq!(
        server.requests().last().unwrap().response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again",
               "reason":"Conflict","details":{"name":"w","group":"example.com","kind":"widgets"},"code":409})
    );
}

#[tokio::test]
async fn missing_resource_version_on_a_custom_resource_put_works_with_kube_is_invalid() {
    // W2, U2: real server body (1.36 prints `Invalid value: 0:`).
    let server = server().await;
    let api = widgets(&server);
    api.create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let s = status(
        api.replace("w", &PostParams::default(), &widget("w", 2))
            .await,
    );
    assert!(s.is_invalid());
    assert_eq!(
        server.requests().last().unwrap().response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"widgets.example.com \"w\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update",
               "reason":"Invalid",
               "details":{"name":"w","group":"example.com","kind":"widgets","causes":[
                   {"reason":"FieldValueInvalid","message":"Invalid value: 0: must be specified for an update","field":"metadata.resourceVersion"}]},
               "code":422})
    );
}

// ---------------------------------------------------------------------------------------------
// Built-in kinds: each is created and read back with its k8s-openapi type.

/// Creates `obj` through `api`, reads it back, and checks the response forms; returns the read.
async fn round_trip<K>(server: &ApiServer, api: &Api<K>, obj: &K) -> K
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    let name = obj.meta().name.clone().unwrap();
    let created = api
        .create(&PostParams::default(), obj)
        .await
        .unwrap_or_else(|e| panic!("create {}: {e}", K::kind(&())));
    assert_eq!(server.requests().last().unwrap().status, 201);
    let read = api
        .get(&name)
        .await
        .unwrap_or_else(|e| panic!("get {}: {e}", K::kind(&())));
    let recorded = server.requests().last().cloned().unwrap();
    assert_eq!(recorded.status, 200);
    assert_eq!(recorded.resource, K::plural(&()));
    assert_eq!(recorded.group, K::group(&()));
    let raw = recorded.response_json().unwrap();
    assert_eq!(raw["apiVersion"], K::api_version(&()).as_ref(), "{raw}");
    assert_eq!(raw["kind"], K::kind(&()).as_ref(), "{raw}");
    assert_eq!(read.meta().name.as_deref(), Some(name.as_str()));
    assert!(read.meta().uid.is_some());
    assert_eq!(read.meta().uid, created.meta().uid);
    assert_eq!(
        read.meta().resource_version,
        created.meta().resource_version
    );
    assert_eq!(
        read.meta().creation_timestamp,
        created.meta().creation_timestamp
    );
    read
}

fn container() -> Container {
    Container {
        name: "main".into(),
        image: Some("busybox".into()),
        ..Container::default()
    }
}

fn template(app: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("app", app)])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![container()],
            ..PodSpec::default()
        }),
    }
}

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels(&[("app", app)])),
        ..LabelSelector::default()
    }
}

#[tokio::test]
async fn builtin_config_map_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm = ConfigMap {
        metadata: meta("cm"),
        data: Some(labels(&[("k", "v")])),
        ..ConfigMap::default()
    };
    let read = round_trip(&server, &api, &cm).await;
    assert_eq!(read.data, cm.data);
    assert_eq!(read.metadata.namespace.as_deref(), Some("default"));
}

#[tokio::test]
async fn builtin_secret_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<Secret> = Api::namespaced(server.client(), "default");
    let secret = Secret {
        metadata: meta("s"),
        type_: Some("Opaque".into()),
        data: Some([("k".to_string(), ByteString(b"v\x00w".to_vec()))].into()),
        ..Secret::default()
    };
    let read = round_trip(&server, &api, &secret).await;
    assert_eq!(read.data, secret.data);
    assert_eq!(read.type_.as_deref(), Some("Opaque"));
}

#[tokio::test]
async fn builtin_service_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<Service> = Api::namespaced(server.client(), "default");
    let svc = Service {
        metadata: meta("svc"),
        spec: Some(k8s_openapi::api::core::v1::ServiceSpec {
            selector: Some(labels(&[("app", "x")])),
            ports: Some(vec![ServicePort {
                port: 80,
                ..ServicePort::default()
            }]),
            ..Default::default()
        }),
        ..Service::default()
    };
    let read = round_trip(&server, &api, &svc).await;
    let spec = read.spec.unwrap();
    assert_eq!(spec.ports.unwrap()[0].port, 80);
    assert_eq!(spec.selector, Some(labels(&[("app", "x")])));
}

#[tokio::test]
async fn builtin_service_account_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<ServiceAccount> = Api::namespaced(server.client(), "default");
    let sa = ServiceAccount {
        metadata: meta("sa"),
        automount_service_account_token: Some(false),
        ..ServiceAccount::default()
    };
    let read = round_trip(&server, &api, &sa).await;
    assert_eq!(read.automount_service_account_token, Some(false));
}

#[tokio::test]
async fn builtin_namespace_round_trips_and_is_active() {
    // R1, W1 (Namespace PrepareForCreate sets status.phase=Active)
    let server = ApiServer::new();
    let api: Api<Namespace> = Api::all(server.client());
    let read = round_trip(
        &server,
        &api,
        &Namespace {
            metadata: meta("team"),
            ..Namespace::default()
        },
    )
    .await;
    assert_eq!(read.metadata.namespace, None);
    assert_eq!(read.status.unwrap().phase.as_deref(), Some("Active"));
}

#[tokio::test]
async fn builtin_pod_round_trips_and_is_pending() {
    // R1, W1 (Pod PrepareForCreate sets status.phase=Pending)
    let server = ApiServer::new();
    let api: Api<Pod> = Api::namespaced(server.client(), "default");
    let pod = Pod {
        metadata: meta("p"),
        spec: Some(PodSpec {
            containers: vec![container()],
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    let read = round_trip(&server, &api, &pod).await;
    assert_eq!(
        read.spec.unwrap().containers[0].image.as_deref(),
        Some("busybox")
    );
    assert_eq!(read.status.unwrap().phase.as_deref(), Some("Pending"));
}

#[tokio::test]
async fn builtin_core_event_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<CoreEvent> = Api::namespaced(server.client(), "default");
    let event = CoreEvent {
        metadata: meta("e"),
        involved_object: ObjectReference {
            kind: Some("ConfigMap".into()),
            name: Some("cm".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        },
        reason: Some("Tested".into()),
        message: Some("it works".into()),
        type_: Some("Normal".into()),
        ..CoreEvent::default()
    };
    let read = round_trip(&server, &api, &event).await;
    assert_eq!(read.reason.as_deref(), Some("Tested"));
    assert_eq!(read.involved_object.name.as_deref(), Some("cm"));
}

#[tokio::test]
async fn builtin_deployment_round_trips_with_generation_one() {
    // R1, W1, C4
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let deploy = Deployment {
        metadata: meta("d"),
        spec: k8s_openapi::api::apps::v1::DeploymentSpec {
            replicas: Some(2),
            selector: selector("d"),
            template: template("d"),
            ..Default::default()
        },
        ..Deployment::default()
    };
    let read = round_trip(&server, &api, &deploy).await;
    assert_eq!(read.metadata.generation, Some(1));
    assert_eq!(read.spec.replicas, Some(2));
}

#[tokio::test]
async fn builtin_stateful_set_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<StatefulSet> = Api::namespaced(server.client(), "default");
    let sts = StatefulSet {
        metadata: meta("s"),
        spec: k8s_openapi::api::apps::v1::StatefulSetSpec {
            service_name: Some("s".into()),
            selector: selector("s"),
            template: template("s"),
            ..Default::default()
        },
        ..StatefulSet::default()
    };
    let read = round_trip(&server, &api, &sts).await;
    assert_eq!(read.spec.service_name.as_deref(), Some("s"));
}

#[tokio::test]
async fn builtin_daemon_set_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<DaemonSet> = Api::namespaced(server.client(), "default");
    let ds = DaemonSet {
        metadata: meta("ds"),
        spec: k8s_openapi::api::apps::v1::DaemonSetSpec {
            selector: selector("ds"),
            template: template("ds"),
            ..Default::default()
        },
        ..DaemonSet::default()
    };
    let read = round_trip(&server, &api, &ds).await;
    assert_eq!(read.spec.selector, selector("ds"));
}

#[tokio::test]
async fn builtin_job_round_trips_with_a_generated_selector() {
    // R1, W1 (Job PrepareForCreate generates the controller-uid selector)
    let server = ApiServer::new();
    let api: Api<Job> = Api::namespaced(server.client(), "default");
    let mut tmpl = template("j");
    tmpl.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    let job = Job {
        metadata: meta("j"),
        spec: Some(k8s_openapi::api::batch::v1::JobSpec {
            template: tmpl,
            ..Default::default()
        }),
        ..Job::default()
    };
    let read = round_trip(&server, &api, &job).await;
    let uid = read.metadata.uid.clone().unwrap();
    let selector = read.spec.unwrap().selector.unwrap().match_labels.unwrap();
    assert_eq!(
        selector.get("batch.kubernetes.io/controller-uid"),
        Some(&uid)
    );
}

#[tokio::test]
async fn builtin_events_k8s_io_event_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<EventsEvent> = Api::namespaced(server.client(), "default");
    let event_time = MicroTime("2024-05-01T10:00:00.123456Z".parse().unwrap());
    let event = EventsEvent {
        metadata: meta("ev"),
        event_time: Some(event_time.clone()),
        reporting_controller: Some("example.com/controller".into()),
        reporting_instance: Some("controller-0".into()),
        action: Some("Reconcile".into()),
        reason: Some("Tested".into()),
        type_: Some("Normal".into()),
        regarding: Some(ObjectReference {
            kind: Some("ConfigMap".into()),
            name: Some("cm".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        }),
        ..EventsEvent::default()
    };
    let read = round_trip(&server, &api, &event).await;
    assert_eq!(read.event_time, Some(event_time));
    assert_eq!(
        read.reporting_controller.as_deref(),
        Some("example.com/controller")
    );
    assert_eq!(
        server.requests().last().unwrap().path,
        "/apis/events.k8s.io/v1/namespaces/default/events/ev"
    );
}

#[tokio::test]
async fn builtin_lease_round_trips() {
    // R1, W1
    let server = ApiServer::new();
    let api: Api<Lease> = Api::namespaced(server.client(), "default");
    let lease = Lease {
        metadata: meta("l"),
        spec: Some(k8s_openapi::api::coordination::v1::LeaseSpec {
            holder_identity: Some("me".into()),
            lease_duration_seconds: Some(15),
            ..Default::default()
        }),
    };
    let read = round_trip(&server, &api, &lease).await;
    let spec = read.spec.unwrap();
    assert_eq!(
        (spec.holder_identity.as_deref(), spec.lease_duration_seconds),
        (Some("me"), Some(15))
    );
}

// ---------------------------------------------------------------------------------------------
// CustomResourceDefinitions through the API

#[tokio::test]
async fn created_crd_is_established_with_accepted_names_and_serves_its_type() {
    // R1, R4: real server, create response and a later GET of a new CRD.
    let server = ApiServer::new();
    let sprockets: Api<Sprocket> = Api::namespaced(server.client(), "default");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());

    let created = crds
        .create(&PostParams::default(), &Sprocket::crd())
        .await
        .unwrap();
    // The create response is the object as stored, before the controllers run.
    let status = created.status.unwrap();
    assert_eq!(status.conditions, None);
    assert_eq!(
        status.accepted_names.as_ref().map(|n| n.plural.as_str()),
        Some("")
    );
    assert_eq!(status.stored_versions, Some(vec!["v1".to_string()]));
    assert_eq!(created.metadata.generation, Some(1));

    let crd = crds.get("sprockets.example.com").await.unwrap();
    assert_eq!(
        crd.spec.conversion.as_ref().map(|c| c.strategy.as_str()),
        Some("None")
    );
    let status = crd.status.unwrap();
    let conditions: Vec<(String, String, Option<String>, Option<String>)> = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason, c.message))
        .collect();
    assert_eq!(
        conditions,
        [
            (
                "NamesAccepted".into(),
                "True".into(),
                Some("NoConflicts".into()),
                Some("no conflicts found".into())
            ),
            (
                "Established".into(),
                "True".into(),
                Some("InitialNamesAccepted".into()),
                Some("the initial names have been accepted".into())
            ),
        ]
    );
    let accepted = status.accepted_names.unwrap();
    assert_eq!(accepted.plural, "sprockets");
    assert_eq!(accepted.singular.as_deref(), Some("sprocket"));
    assert_eq!(accepted.kind, "Sprocket");
    assert_eq!(accepted.list_kind.as_deref(), Some("SprocketList"));
    assert_eq!(status.stored_versions, Some(vec!["v1".to_string()]));

    // Served at once.
    let made = sprockets
        .create(
            &PostParams::default(),
            &Sprocket::new("s", SprocketSpec { teeth: 12 }),
        )
        .await
        .unwrap();
    assert_eq!(made.metadata.generation, Some(1));
    assert_eq!(sprockets.get("s").await.unwrap().spec.teeth, 12);
    assert_eq!(
        server.requests().last().unwrap().path,
        "/apis/example.com/v1/namespaces/default/sprockets/s"
    );
}

#[tokio::test]
async fn crd_whose_name_is_not_plural_dot_group_is_invalid() {
    // R4: real server body.
    let server = ApiServer::new();
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let mut crd = Sprocket::crd();
    crd.metadata.name = Some("wrong.example.com".into());
    let s = status(crds.create(&PostParams::default(), &crd).await);
    assert!(s.is_invalid());
    assert_eq!(
        s.message,
        r#"CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group"#
    );
    assert_eq!(
        server.requests().last().unwrap().response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"CustomResourceDefinition.apiextensions.k8s.io \"wrong.example.com\" is invalid: metadata.name: Invalid value: \"wrong.example.com\": must be spec.names.plural+\".\"+spec.group",
               "reason":"Invalid",
               "details":{"name":"wrong.example.com","group":"apiextensions.k8s.io","kind":"CustomResourceDefinition","causes":[
                   {"reason":"FieldValueInvalid","message":"Invalid value: \"wrong.example.com\": must be spec.names.plural+\".\"+spec.group","field":"metadata.name"}]},
               "code":422})
    );
    // Nothing is served for it.
    let sprockets: Api<Sprocket> = Api::namespaced(server.client(), "default");
    assert_eq!(
        status(sprockets.list(&ListParams::default()).await).code,
        404
    );
}

// ---------------------------------------------------------------------------------------------
// The request log

#[tokio::test]
async fn install_crd_requests_are_logged_with_the_setup_origin() {
    // harness
    let server = server().await;
    let log = server.requests();
    let summary: Vec<(RequestOrigin, &str, &str, Option<&str>, u16)> = log
        .iter()
        .map(|r| {
            (
                r.origin,
                r.method.as_str(),
                r.resource.as_str(),
                r.name.as_deref(),
                r.status,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                RequestOrigin::Setup,
                "POST",
                "customresourcedefinitions",
                None,
                201
            ),
            (
                RequestOrigin::Setup,
                "GET",
                "customresourcedefinitions",
                Some("widgets.example.com"),
                200
            ),
            (
                RequestOrigin::Setup,
                "POST",
                "customresourcedefinitions",
                None,
                201
            ),
            (
                RequestOrigin::Setup,
                "GET",
                "customresourcedefinitions",
                Some("gizmos.example.com"),
                200
            ),
        ]
    );
    widgets(&server).list(&ListParams::default()).await.unwrap();
    assert_eq!(
        server.requests().last().unwrap().origin,
        RequestOrigin::Client
    );
}

#[tokio::test]
async fn every_request_is_logged_in_order_with_its_route_and_exact_bytes() {
    // harness
    let server = server().await;
    server.clear_requests();
    let api = widgets(&server);
    let mut w = widget("w", 1);
    w.metadata.labels = Some(labels(&[("env", "prod")]));
    let created = api.create(&PostParams::default(), &w).await.unwrap();
    api.get("w").await.unwrap();
    api.list(&ListParams::default().labels("env=prod"))
        .await
        .unwrap();
    let patch = json!({"metadata": {"annotations": {"a": "b"}}});
    api.patch("w", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let status_patch = json!({"status": {"ready": true}});
    api.patch_status("w", &PatchParams::default(), &Patch::Merge(&status_patch))
        .await
        .unwrap();
    api.delete("w", &DeleteParams::default()).await.unwrap();
    let _ = api.get("w").await.unwrap_err();

    let log = server.requests();
    let base = "/apis/example.com/v1/namespaces/default/widgets";
    type Row<'a> = (
        &'a str,
        String,
        Verb,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        u16,
    );
    let rows: Vec<Row<'_>> = log
        .iter()
        .map(|r| {
            assert_eq!(
                (r.origin, r.group.as_str(), r.version.as_str()),
                (RequestOrigin::Client, "example.com", "v1")
            );
            assert_eq!(
                (r.resource.as_str(), r.namespace.as_deref()),
                ("widgets", Some("default"))
            );
            (
                r.method.as_str(),
                r.path.clone(),
                r.verb,
                r.name.as_deref(),
                r.subresource.as_deref(),
                r.content_type.as_deref(),
                r.status,
            )
        })
        .collect();
    let json_ct = Some("application/json");
    let merge_ct = Some("application/merge-patch+json");
    assert_eq!(
        rows,
        [
            (
                "POST",
                base.to_string(),
                Verb::Create,
                None,
                None,
                json_ct,
                201
            ),
            (
                "GET",
                format!("{base}/w"),
                Verb::Get,
                Some("w"),
                None,
                None,
                200
            ),
            ("GET", base.to_string(), Verb::List, None, None, None, 200),
            (
                "PATCH",
                format!("{base}/w"),
                Verb::Patch,
                Some("w"),
                None,
                merge_ct,
                200
            ),
            (
                "PATCH",
                format!("{base}/w/status"),
                Verb::Patch,
                Some("w"),
                Some("status"),
                merge_ct,
                200
            ),
            (
                "DELETE",
                format!("{base}/w"),
                Verb::Delete,
                Some("w"),
                None,
                json_ct,
                200
            ),
            (
                "GET",
                format!("{base}/w"),
                Verb::Get,
                Some("w"),
                None,
                None,
                404
            ),
        ]
    );
    // The bodies are the bytes kube sent.
    assert_eq!(&log[0].body[..], &serde_json::to_vec(&w).unwrap()[..]);
    assert!(log[1].body.is_empty());
    assert_eq!(
        log[2].query_param("labelSelector").as_deref(),
        Some("env=prod")
    );
    assert_eq!(&log[3].body[..], &serde_json::to_vec(&patch).unwrap()[..]);
    assert_eq!(
        &log[4].body[..],
        &serde_json::to_vec(&status_patch).unwrap()[..]
    );
    assert_eq!(
        &log[5].body[..],
        &serde_json::to_vec(&DeleteParams::default()).unwrap()[..]
    );
    // And the responses are the bytes kube read.
    let answered: Widget = serde_json::from_slice(&log[0].response).unwrap();
    assert_eq!(answered.metadata.uid, created.metadata.uid);
    assert_eq!(log[6].response_json().unwrap()["reason"], "NotFound");
}

// ---------------------------------------------------------------------------------------------
// DynamicObject

#[tokio::test]
async fn dynamic_object_with_a_config_map_api_resource_creates_and_reads_a_config_map() {
    // R1, R3
    let server = ApiServer::new();
    let resource = ApiResource::erase::<ConfigMap>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &resource);
    let obj = DynamicObject::new("dyn", &resource).data(json!({"data": {"k": "v"}}));
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(
        server.requests().last().unwrap().path,
        "/api/v1/namespaces/default/configmaps"
    );
    let types = created.types.clone().unwrap();
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("v1", "ConfigMap")
    );

    let read = api.get("dyn").await.unwrap();
    assert_eq!(read.data["data"], json!({"k": "v"}));
    assert_eq!(read.metadata.uid, created.metadata.uid);
    // The same object through the typed API.
    let typed: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    assert_eq!(
        typed.get("dyn").await.unwrap().data,
        Some(labels(&[("k", "v")]))
    );
}
