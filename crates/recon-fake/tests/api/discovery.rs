//! API discovery (R4) through kube's own discovery clients (`Discovery::run`,
//! `Discovery::run_aggregated`, `oneshot::pinned_kind`), and the documents themselves. Documents
//! marked "real" were recorded from a real apiextensions-apiserver 1.36; the built-in entries
//! follow kube-apiserver's.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use kube::core::discovery::v2::ACCEPT_AGGREGATED_DISCOVERY_V2;
use kube::discovery::{self, ApiCapabilities, Discovery, Scope, verbs};
use kube::{CustomResourceExt, ResourceExt};
use recon_fake::{ApiServer, RequestOrigin, Verb};
use recon_test_fixtures::*;
use serde_json::{Value, json};

use crate::support::crds;

const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// A GET with this `Accept` header: status, `Content-Type` and body.
async fn get(server: &ApiServer, path: &str, accept: &str) -> (u16, String, String) {
    send(server, "GET", path, accept).await
}

async fn send(server: &ApiServer, method: &str, path: &str, accept: &str) -> (u16, String, String) {
    let mut request = http::Request::builder().method(method).uri(path);
    if !accept.is_empty() {
        request = request.header(http::header::ACCEPT, accept);
    }
    let request = request
        .body(kube::client::Body::from(Vec::new()))
        .expect("valid request");
    let response = server.client().send(request).await.expect("served");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = response.into_body().collect_bytes().await.expect("body");
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).expect("UTF-8 body"),
    )
}

/// The JSON document at `path` (plain `Accept: application/json`).
async fn document(server: &ApiServer, path: &str) -> Value {
    let (status, _, body) = get(server, path, "application/json").await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("JSON document")
}

/// The entry named `name` of an `APIResourceList`.
fn resource_entry<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|e| e["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

fn resource_names(list: &Value) -> Vec<String> {
    list["resources"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|e| e["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A CRD in its own group with two served versions (storage `v1beta1`, `scale` only there), a
/// third one not served, short names and categories.
fn sprocket_crd() -> CustomResourceDefinition {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    from_json(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "sprockets.extra.example.com"},
        "spec": {
            "group": "extra.example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "sprockets", "singular": "sprocket", "kind": "Sprocket",
                "listKind": "SprocketList", "shortNames": ["spr", "sp"], "categories": ["all", "gear"],
            },
            "versions": [
                {"name": "v1beta1", "served": true, "storage": true, "schema": schema,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}},
                {"name": "v1", "served": true, "storage": false, "schema": schema, "subresources": {"status": {}}},
                {"name": "v2alpha1", "served": false, "storage": false, "schema": schema},
            ],
        },
    }))
}

/// What a discovery run says about one kind: `(plural, scope, operations, subresources)`.
fn describe(
    found: Option<(ApiResource, ApiCapabilities)>,
) -> (String, Scope, Vec<String>, Vec<String>) {
    let (ar, caps) = found.expect("kind discovered");
    let subresources = caps
        .subresources
        .iter()
        .map(|(sub, _)| sub.plural.clone())
        .collect();
    (ar.plural, caps.scope, caps.operations, subresources)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

const BUILTIN_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const CRD_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// The built-ins and both CRDs of `recon_test_fixtures::server()`, as either discovery mode finds them.
fn assert_discovers_builtins_and_crds(discovery: &Discovery) {
    let gvk = GroupVersionKind::gvk;
    assert_eq!(
        describe(discovery.resolve_gvk(&gvk("", "v1", "ConfigMap"))),
        (
            "configmaps".into(),
            Scope::Namespaced,
            strings(BUILTIN_VERBS),
            vec![]
        )
    );
    assert_eq!(
        describe(discovery.resolve_gvk(&gvk("apps", "v1", "Deployment"))),
        (
            "deployments".into(),
            Scope::Namespaced,
            strings(BUILTIN_VERBS),
            strings(&["scale", "status"])
        )
    );
    assert_eq!(
        describe(discovery.resolve_gvk(&gvk("", "v1", "Namespace"))),
        (
            "namespaces".into(),
            Scope::Cluster,
            strings(&[
                "create", "delete", "get", "list", "patch", "update", "watch"
            ]),
            strings(&["finalize", "status"])
        )
    );
    assert_eq!(
        describe(discovery.resolve_gvk(&gvk("example.com", "v1", "Widget"))),
        (
            "widgets".into(),
            Scope::Namespaced,
            strings(CRD_VERBS),
            strings(&["status"])
        )
    );
    assert_eq!(
        describe(discovery.resolve_gvk(&gvk("example.com", "v1", "Gizmo"))),
        ("gizmos".into(), Scope::Cluster, strings(CRD_VERBS), vec![])
    );
    let core = discovery.get("").expect("core group");
    assert_eq!(core.preferred_version_or_latest(), "v1");
    let (pod, caps) = core.recommended_kind("Pod").expect("pods");
    assert_eq!(
        (pod.plural.as_str(), pod.api_version.as_str()),
        ("pods", "v1")
    );
    assert!(caps.supports_operation(verbs::WATCH));
    let groups: BTreeSet<&str> = discovery.groups().map(|g| g.name()).collect();
    assert_eq!(
        groups,
        BTreeSet::from_iter(
            [""].into_iter()
                .chain(builtin_groups().iter().map(String::as_str))
                .chain(["example.com"])
        )
    );
}

/// Every kind a discovery run found, with its scope, verbs and subresources.
fn summary(discovery: &Discovery) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for group in discovery.groups() {
        for version in group.versions() {
            for (ar, caps) in group.versioned_resources(version) {
                let subs: Vec<&str> = caps
                    .subresources
                    .iter()
                    .map(|(s, _)| s.plural.as_str())
                    .collect();
                out.insert(format!(
                    "{}/{} {} {} {:?} {:?} {:?}",
                    ar.group, ar.version, ar.kind, ar.plural, caps.scope, caps.operations, subs
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// kube's discovery clients

/// The named groups of kube-apiserver 1.36, in the order its `/apis` lists them, as recorded in
/// `fixtures/conformance/discovery/the-root-documents-list-every-group.yaml` (the recorder's
/// CRD group, listed last, left out).
fn builtin_groups() -> &'static [String] {
    static GROUPS: OnceLock<Vec<String>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/conformance/discovery/the-root-documents-list-every-group.yaml");
        let text = std::fs::read_to_string(&path).expect("the recorded root documents");
        let recorded: Value = serde_saphyr::from_str(&text).expect("a recorded scenario");
        let groups = recorded["steps"][0]["response"]["body"]["groups"]
            .as_array()
            .expect("the legacy group list");
        groups
            .iter()
            .filter_map(|g| g["name"].as_str())
            .filter(|name| !name.ends_with(".example.com"))
            .map(str::to_owned)
            .collect()
    })
}

#[tokio::test]
async fn discovery_run_finds_builtins_and_installed_crds() {
    let server = server().await;
    let discovery = Discovery::new(server.client()).run().await.unwrap();
    assert_discovers_builtins_and_crds(&discovery);
}

#[tokio::test]
async fn aggregated_discovery_finds_the_same_as_the_per_group_documents() {
    let server = server().await;
    let aggregated = Discovery::new(server.client())
        .run_aggregated()
        .await
        .unwrap();
    assert_discovers_builtins_and_crds(&aggregated);
    // Two requests, whatever the number of groups.
    let paths: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client)
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths, ["/apis", "/api"]);

    // Both modes agree on every kind, scale and multiple versions included.
    server.install_crd(&sprocket_crd()).await.unwrap();
    let aggregated = Discovery::new(server.client())
        .run_aggregated()
        .await
        .unwrap();
    let legacy = Discovery::new(server.client()).run().await.unwrap();
    let summary_of_both = summary(&aggregated);
    assert_eq!(summary_of_both, summary(&legacy));
    assert!(
        summary_of_both.contains(
            r#"extra.example.com/v1beta1 Sprocket sprockets Namespaced ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"] ["status", "scale"]"#
        ),
        "{summary_of_both:#?}"
    );
}

#[tokio::test]
async fn a_multi_version_crd_prefers_its_ga_version_and_lists_scale_where_declared() {
    let server = ApiServer::new();
    server.install_crd(&sprocket_crd()).await.unwrap();
    let group = discovery::group(&server.client(), "extra.example.com")
        .await
        .unwrap();
    assert_eq!(group.versions().collect::<Vec<_>>(), ["v1", "v1beta1"]);
    assert_eq!(group.preferred_version(), Some("v1"));
    let subresources = |version: &str| {
        let (_, caps) = group
            .versioned_resources(version)
            .into_iter()
            .find(|(ar, _)| ar.kind == "Sprocket")
            .expect("sprockets");
        caps.subresources
            .iter()
            .map(|(s, _)| s.plural.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(subresources("v1"), ["status"]);
    assert_eq!(subresources("v1beta1"), ["status", "scale"]);
}

#[tokio::test]
async fn pinned_kind_builds_a_dynamic_api_that_creates_gets_lists_and_patches() {
    let server = server().await;
    let client = server.client();
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    let (ar, caps) = discovery::oneshot::pinned_kind(&client, &gvk)
        .await
        .unwrap();
    assert_eq!(
        (
            ar.plural.as_str(),
            ar.api_version.as_str(),
            caps.scope.clone()
        ),
        ("widgets", "example.com/v1", Scope::Namespaced)
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let mut obj = DynamicObject::new("w1", &ar);
    obj.data = json!({"spec": {"size": 1}});
    let created = api.create(&pp(), &obj).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(api.get("w1").await.unwrap().data["spec"]["size"], 1);
    let patch = json!({"spec": {"size": 5}});
    let patched = api
        .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(
        (
            patched.data["spec"]["size"].clone(),
            patched.metadata.generation
        ),
        (json!(5), Some(2))
    );
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(names, ["w1"]);
    // The typed API sees the same object.
    assert_eq!(widgets(&server).get("w1").await.unwrap().spec.size, 5);
}

#[tokio::test]
async fn pinned_kind_resolves_builtins_for_dynamic_apis() {
    let server = ApiServer::new();
    let client = server.client();
    let gvk = GroupVersionKind::gvk("", "v1", "ConfigMap");
    let (ar, _) = discovery::oneshot::pinned_kind(&client, &gvk)
        .await
        .unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let mut cm = DynamicObject::new("settings", &ar);
    cm.data = json!({"data": {"k": "v"}});
    api.create(&pp(), &cm).await.unwrap();
    assert_eq!(api.get("settings").await.unwrap().data["data"]["k"], "v");
}

// ---------------------------------------------------------------------------------------------
// What discovery follows: established, terminating and deleted CRDs

/// Widget's CRD under the plural `gadgets`: the same group, kind and list kind as Widget's.
fn widget_clash() -> CustomResourceDefinition {
    let mut clash = Widget::crd();
    clash.metadata.name = Some("gadgets.example.com".into());
    clash.spec.names.plural = "gadgets".into();
    clash.spec.names.singular = Some("gadget".into());
    clash
}

#[tokio::test]
async fn a_crd_whose_names_are_not_accepted_is_never_discovered() {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    let stored = crds(&server).create(&pp(), &widget_clash()).await.unwrap();
    let established = stored
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    assert!(!established);

    let list = document(&server, "/apis/example.com/v1").await;
    assert_eq!(resource_names(&list), ["widgets", "widgets/status"]);
    let discovery = Discovery::new(server.client()).run().await.unwrap();
    let group = discovery.get("example.com").unwrap();
    let plurals: Vec<String> = group
        .recommended_resources()
        .into_iter()
        .map(|(ar, _)| ar.plural)
        .collect();
    assert_eq!(plurals, ["widgets"]);
}

// A deleted CRD frees its names: the naming controller checks the other CRDs of its group again
// (apiextensions-apiserver `pkg/controller/status/naming_controller.go`, `sync` of a CRD not
// found). The CRD controllers skip a CRD a pass left as it was while the names its group has
// accepted stay as they were, and a deleted CRD's leave them.
#[tokio::test]
async fn a_crd_held_back_by_a_name_conflict_is_established_once_the_other_is_deleted() {
    let server = ApiServer::new();
    server.install_crd(&Widget::crd()).await.unwrap();
    crds(&server).create(&pp(), &widget_clash()).await.unwrap();
    let condition = |crd: &CustomResourceDefinition, kind: &str| {
        crd.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == kind))
            .map(|c| (c.status.clone(), c.reason.clone()))
    };
    let held = crds(&server).get("gadgets.example.com").await.unwrap();
    assert_eq!(
        condition(&held, "NamesAccepted"),
        Some(("False".into(), Some("ListKindConflict".into())))
    );

    crds(&server)
        .delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    server.finalize_crds();
    let established = crds(&server).get("gadgets.example.com").await.unwrap();
    assert_eq!(
        condition(&established, "Established").map(|c| c.0),
        Some("True".into())
    );
    let list = document(&server, "/apis/example.com/v1").await;
    assert_eq!(resource_names(&list), ["gadgets", "gadgets/status"]);
}

#[tokio::test]
async fn a_group_appears_when_its_first_crd_is_established_and_leaves_with_the_last() {
    let server = ApiServer::new();
    let (status, _, body) = get(&server, "/apis/example.com", "").await;
    assert_eq!((status, body.as_str()), (404, "404 page not found\n"));

    server.install_crd(&gizmo_crd()).await.unwrap();
    let group = document(&server, "/apis/example.com").await;
    assert_eq!(group["preferredVersion"]["groupVersion"], "example.com/v1");
    let discovery = Discovery::new(server.client()).run().await.unwrap();
    assert!(discovery.has_group("example.com"));

    // Without instances the CRD goes once the finalizer has run, and its documents with it.
    crds(&server)
        .delete("gizmos.example.com", &DeleteParams::default())
        .await
        .unwrap();
    server.finalize_crds();
    for path in ["/apis/example.com", "/apis/example.com/v1"] {
        let (status, _, body) = get(&server, path, "").await;
        assert_eq!(
            (status, body.as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
    }
    let groups = document(&server, "/apis").await;
    assert!(
        !groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "example.com")
    );
    let discovery = Discovery::new(server.client())
        .run_aggregated()
        .await
        .unwrap();
    assert!(!discovery.has_group("example.com"));
}

#[tokio::test]
async fn a_terminating_crd_is_listed_with_read_and_delete_verbs_only() {
    // real: verbs after deleting a CRD whose instance still has a finalizer.
    let server = server().await;
    create_widget(&server, "held", &["example.com/hold"]).await;
    crds(&server)
        .delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    server.finalize_crds();

    let terminating = json!(["delete", "deletecollection", "get", "list", "watch"]);
    let list = document(&server, "/apis/example.com/v1").await;
    assert_eq!(resource_entry(&list, "widgets")["verbs"], terminating);
    assert_eq!(
        resource_entry(&list, "widgets/status")["verbs"],
        json!(["get", "patch", "update"])
    );
    assert_eq!(resource_entry(&list, "gizmos")["verbs"], json!(CRD_VERBS));
    let (_, _, body) = get(&server, "/apis", ACCEPT_AGGREGATED_DISCOVERY_V2).await;
    let aggregated: Value = serde_json::from_str(&body).unwrap();
    let widgets_entry = aggregated["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["metadata"]["name"] == "example.com")
        .flat_map(|g| g["versions"][0]["resources"].as_array().unwrap().clone())
        .find(|r| r["resource"] == "widgets")
        .unwrap();
    assert_eq!(widgets_entry["verbs"], terminating);

    // Once the last instance goes, so do the CRD and its resources.
    let patch = json!({"metadata": {"finalizers": null}});
    widgets(&server)
        .patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    server.finalize_crds();
    let list = document(&server, "/apis/example.com/v1").await;
    assert_eq!(resource_names(&list), ["gizmos"]);
}

// ---------------------------------------------------------------------------------------------
// The documents

#[tokio::test]
async fn version_reports_the_release_k8s_openapi_is_built_for() {
    let server = ApiServer::new();
    let info = server.client().apiserver_version().await.unwrap();
    let minor: u32 = info.minor.parse().unwrap();
    assert!((33..=37).contains(&minor), "{info:?}");
    assert_eq!(info.major, "1");
    assert_eq!(info.git_version, format!("v1.{minor}.0"));
    assert_eq!(info.emulation_minor.as_deref(), Some(info.minor.as_str()));
    assert_eq!(info.min_compatibility_minor, Some((minor - 1).to_string()));
    assert_eq!(
        (info.compiler.as_str(), info.platform.as_str()),
        ("gc", "linux/amd64")
    );
    // This workspace's tests build k8s-openapi with `latest`.
    k8s_openapi::k8s_if_1_37! {
        assert_eq!(info.minor, "37");
    }
}

#[tokio::test]
async fn core_group_documents() {
    let server = ApiServer::new();
    let (status, content_type, body) = get(&server, "/api", "").await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    assert_eq!(
        body,
        r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}"#
    );

    let list = document(&server, "/api/v1").await;
    // kube-apiserver's legacy group writes no apiVersion here.
    assert_eq!(list.get("apiVersion"), None);
    assert_eq!(
        (&list["kind"], &list["groupVersion"]),
        (&json!("APIResourceList"), &json!("v1"))
    );
    assert_eq!(
        resource_names(&list),
        [
            "bindings",
            "componentstatuses",
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "namespaces/finalize",
            "namespaces/status",
            "nodes",
            "nodes/proxy",
            "nodes/status",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "persistentvolumes",
            "persistentvolumes/status",
            "pods",
            "pods/attach",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/proxy",
            "pods/resize",
            "pods/status",
            "podtemplates",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "secrets",
            "serviceaccounts",
            "serviceaccounts/token",
            "services",
            "services/proxy",
            "services/status",
        ]
    );
    assert_eq!(
        resource_entry(&list, "configmaps"),
        &json!({"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap",
            "verbs": BUILTIN_VERBS, "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="})
    );
    assert_eq!(
        resource_entry(&list, "pods"),
        &json!({"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
            "verbs": BUILTIN_VERBS, "shortNames": ["po"], "categories": ["all"], "storageVersionHash": "xPOwRZ+Yhw8="})
    );
    assert_eq!(
        resource_entry(&list, "pods/status"),
        &json!({"name": "pods/status", "singularName": "", "namespaced": true, "kind": "Pod",
            "verbs": ["get", "patch", "update"]})
    );
    assert_eq!(
        resource_entry(&list, "namespaces"),
        &json!({"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["ns"],
            "storageVersionHash": "Q3oi5N2YM8M="})
    );
    assert_eq!(
        resource_entry(&list, "namespaces/status")["namespaced"],
        false
    );
    assert_eq!(
        resource_entry(&list, "namespaces/finalize"),
        &json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false, "kind": "Namespace",
            "verbs": ["update"]})
    );
}

#[tokio::test]
async fn named_builtin_group_documents() {
    let server = ApiServer::new();
    let groups = document(&server, "/apis").await;
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names, builtin_groups());
    assert_eq!(
        document(&server, "/apis/apps").await,
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": "apps",
            "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}})
    );
    let apps = document(&server, "/apis/apps/v1").await;
    assert_eq!(apps["apiVersion"], "v1");
    assert_eq!(
        resource_names(&apps),
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ]
    );
    // As kube-apiserver 1.36 lists it.
    assert_eq!(
        resource_entry(&apps, "deployments/scale"),
        &json!({"name": "deployments/scale", "singularName": "", "namespaced": true, "group": "autoscaling",
            "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]})
    );
    assert_eq!(
        resource_entry(&apps, "deployments"),
        &json!({"name": "deployments", "singularName": "deployment", "namespaced": true, "kind": "Deployment",
            "verbs": BUILTIN_VERBS, "shortNames": ["deploy"], "categories": ["all"], "storageVersionHash": "8aSe+NMegvE="})
    );
    // events.k8s.io Events are stored as core/v1 Events: one storage version hash for both.
    let events = document(&server, "/apis/events.k8s.io/v1").await;
    assert_eq!(
        resource_entry(&events, "events")["storageVersionHash"],
        "r2yiGXH7wu8="
    );
    let crds = document(&server, "/apis/apiextensions.k8s.io/v1").await;
    assert_eq!(
        resource_entry(&crds, "customresourcedefinitions")["shortNames"],
        json!(["crd", "crds"])
    );
    assert_eq!(
        resource_entry(&crds, "customresourcedefinitions")["categories"],
        json!(["api-extensions"])
    );
}

#[tokio::test]
async fn crd_group_documents_match_the_real_servers_byte_for_byte() {
    // real: /apis/extra.example.com and its versions, after creating `sprocket_crd()`.
    let server = ApiServer::new();
    server.install_crd(&sprocket_crd()).await.unwrap();
    let (_, _, group) = get(&server, "/apis/extra.example.com", "").await;
    assert_eq!(
        group,
        r#"{"kind":"APIGroup","apiVersion":"v1","name":"extra.example.com","versions":[{"groupVersion":"extra.example.com/v1","version":"v1"},{"groupVersion":"extra.example.com/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"extra.example.com/v1","version":"v1"}}"#
    );
    let (_, _, v1) = get(&server, "/apis/extra.example.com/v1", "").await;
    assert_eq!(
        v1,
        r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"extra.example.com/v1","resources":[{"name":"sprockets","singularName":"sprocket","namespaced":true,"kind":"Sprocket","verbs":["delete","deletecollection","get","list","patch","create","update","watch"],"shortNames":["spr","sp"],"categories":["all","gear"],"storageVersionHash":"Wx6CxZb8BUg="},{"name":"sprockets/status","singularName":"","namespaced":true,"kind":"Sprocket","verbs":["get","patch","update"]}]}"#
    );
    let (_, _, v1beta1) = get(&server, "/apis/extra.example.com/v1beta1", "").await;
    assert_eq!(
        v1beta1,
        r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"extra.example.com/v1beta1","resources":[{"name":"sprockets","singularName":"sprocket","namespaced":true,"kind":"Sprocket","verbs":["delete","deletecollection","get","list","patch","create","update","watch"],"shortNames":["spr","sp"],"categories":["all","gear"],"storageVersionHash":"Wx6CxZb8BUg="},{"name":"sprockets/status","singularName":"","namespaced":true,"kind":"Sprocket","verbs":["get","patch","update"]},{"name":"sprockets/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}]}"#
    );
    // The version that is not served is not listed.
    let (status, _, _) = get(&server, "/apis/extra.example.com/v2alpha1", "").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn aggregated_documents_match_the_real_servers() {
    let server = ApiServer::new();
    server.install_crd(&sprocket_crd()).await.unwrap();
    let (status, content_type, body) = get(&server, "/apis", ACCEPT_AGGREGATED_DISCOVERY_V2).await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, AGGREGATED_CONTENT_TYPE)
    );
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&list["kind"], &list["apiVersion"], &list["metadata"]),
        (
            &json!("APIGroupDiscoveryList"),
            &json!("apidiscovery.k8s.io/v2"),
            &json!({})
        )
    );
    let items = list["items"].as_array().unwrap();
    let names: Vec<&str> = items
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    assert_eq!(
        names,
        builtin_groups()
            .iter()
            .map(String::as_str)
            .chain(["extra.example.com"])
            .collect::<Vec<_>>()
    );
    // real: the item of the CRD group.
    let sprocket = |version: &str, scale: bool| {
        let kind = json!({"group": "extra.example.com", "version": version, "kind": "Sprocket"});
        let mut subresources = vec![
            json!({"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}),
        ];
        if scale {
            subresources.push(json!({"subresource": "scale",
                "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "verbs": ["get", "patch", "update"]}));
        }
        json!({"version": version, "resources": [{
            "resource": "sprockets", "responseKind": kind, "scope": "Namespaced",
            "singularResource": "sprocket", "verbs": CRD_VERBS, "shortNames": ["spr", "sp"],
            "categories": ["all", "gear"], "subresources": subresources,
        }], "freshness": "Current"})
    };
    assert_eq!(
        items.last().unwrap(),
        &json!({"metadata": {"name": "extra.example.com"},
            "versions": [sprocket("v1", false), sprocket("v1beta1", true)]})
    );
    // real: a built-in names only its kind in responseKind.
    let apiextensions = items
        .iter()
        .find(|i| i["metadata"]["name"] == "apiextensions.k8s.io")
        .unwrap();
    let crd_item = &apiextensions["versions"][0]["resources"][0];
    assert_eq!(
        crd_item,
        &json!({"resource": "customresourcedefinitions",
            "responseKind": {"group": "", "version": "", "kind": "CustomResourceDefinition"},
            "scope": "Cluster", "singularResource": "customresourcedefinition", "verbs": BUILTIN_VERBS,
            "shortNames": ["crd", "crds"], "categories": ["api-extensions"],
            "subresources": [{"subresource": "status",
                "responseKind": {"group": "", "version": "", "kind": "CustomResourceDefinition"},
                "verbs": ["get", "patch", "update"]}]})
    );

    // `/api`: the core group alone, without a name.
    let (_, content_type, body) = get(&server, "/api", ACCEPT_AGGREGATED_DISCOVERY_V2).await;
    assert_eq!(content_type, AGGREGATED_CONTENT_TYPE);
    let core: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(core["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(core["items"][0]["metadata"], json!({}));
    assert_eq!(core["items"][0]["versions"][0]["version"], "v1");
}

#[tokio::test]
async fn aggregated_form_only_at_the_roots_and_406_when_nothing_else_is_acceptable() {
    let server = server().await;
    // With kube's fallback to plain JSON, a group version answers its APIResourceList.
    let (status, content_type, body) = get(
        &server,
        "/apis/example.com/v1",
        ACCEPT_AGGREGATED_DISCOVERY_V2,
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    assert!(body.starts_with(r#"{"kind":"APIResourceList""#), "{body}");
    // Only the aggregated form, or a Table: 406.
    for accept in [
        AGGREGATED_CONTENT_TYPE,
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    ] {
        let (status, _, body) = get(&server, "/apis/example.com/v1", accept).await;
        let status_body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (status, &status_body["reason"]),
            (406, &json!("NotAcceptable")),
            "{accept}"
        );
    }
    // v2beta1 is no longer served: the plain document.
    let beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let (_, content_type, body) = get(&server, "/apis", beta).await;
    assert_eq!(content_type, "application/json");
    assert!(body.starts_with(r#"{"kind":"APIGroupList""#), "{body}");
}

#[tokio::test]
async fn unknown_groups_and_versions_are_404() {
    let server = server().await;
    // real: groups only CRDs serve fall through to Go's plain-text 404.
    for path in [
        "/apis/nothing.example.com",
        "/apis/nothing.example.com/v1",
        "/apis/example.com/v2",
    ] {
        let (status, _, body) = get(&server, path, "").await;
        assert_eq!(
            (status, body.as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
    }
    // A compiled-in group answers a Status (real for apiextensions.k8s.io/v2).
    for path in ["/apis/apps/v2", "/api/v2", "/apis/apiextensions.k8s.io/v2"] {
        let (status, _, body) = get(&server, path, "").await;
        let status_body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (status, &status_body["reason"]),
            (404, &json!("NotFound")),
            "{path}"
        );
    }
}

#[tokio::test]
async fn only_the_crd_handlers_answer_other_methods() {
    // real: POST /apis and /version are 405; the CRD group handlers answer any method.
    let server = server().await;
    for path in ["/apis", "/version", "/api", "/apis/apps/v1"] {
        let (status, _, body) = send(&server, "POST", path, "").await;
        let status_body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (status, &status_body["reason"]),
            (405, &json!("MethodNotAllowed")),
            "{path}"
        );
    }
    let (status, _, body) = send(&server, "POST", "/apis/example.com/v1", "").await;
    assert_eq!(status, 200);
    assert!(body.starts_with(r#"{"kind":"APIResourceList""#), "{body}");
}

#[tokio::test]
async fn discovery_requests_are_recorded_as_gets_of_no_resource() {
    let server = server().await;
    server.clear_requests();
    Discovery::new(server.client()).run().await.unwrap();
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/apis".to_owned()]
            .into_iter()
            .chain(builtin_groups().iter().flat_map(|g| {
                // Every version of a group, the preferred first: autoscaling's v2, then v1.
                let versions: &[&str] = if *g == "autoscaling" {
                    &["v2", "v1"]
                } else {
                    &["v1"]
                };
                versions.iter().map(move |v| format!("/apis/{g}/{v}"))
            }))
            .chain(["/apis/example.com/v1", "/api", "/api/v1"].map(str::to_owned))
            .collect::<Vec<_>>()
    );
    for r in &requests {
        assert_eq!(
            (
                r.verb,
                r.status,
                r.origin,
                r.resource.as_str(),
                r.kind.as_str()
            ),
            (Verb::Get, 200, RequestOrigin::Client, "", ""),
            "{r}"
        );
        assert!(r.response_json().is_some(), "{r}");
    }
}
