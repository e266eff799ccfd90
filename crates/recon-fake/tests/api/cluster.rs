//! A cluster's own kinds through `kube::Api`'s helpers: what a booted server holds, nodes
//! cordoned and uncordoned, certificate signing requests approved, component statuses.

use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestStatus,
};
use k8s_openapi::api::core::v1::{Endpoints, Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use recon_fake::ApiServer;
use serde_json::json;

use crate::support::last_warnings;

/// A PEM certificate request (an EC key, CN=conformance-user), base64 as the API carries it.
const REQUEST: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIc01JR1RBZ0VBTURFeEdUQVhCZ05WQkFNTUVHTnZibVp2Y20xaGJtTmxMWFZ6WlhJeEZEQVNCZ05WQkFvTQpDMk52Ym1admNtMWhibU5sTUZrd0V3WUhLb1pJemowQ0FRWUlLb1pJemowREFRY0RRZ0FFVFU5bUUxbTYwTUJnCnhKdnMyMTFYdUErNE5pUFViaXpOQjdFckM2REZINGdsRitUY1F0dWltKzRwWWoxRi9lTjd3Qkh3M2J4Q0lpWG8KcURqZUg5eVp2YUFBTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFDNldpNmxVdnZEeFNIUVhOMXJkZDVTa0llRgpZVVpmWnU4NVNmcVVUb2E5ckFJZ1lxVHlkYkkxMEVpTEMzTWFOK0M0czdNd29abmRvV0pPNGtoT0IvbTBMZlU9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

#[tokio::test]
async fn a_booted_server_serves_the_kubernetes_service_and_its_endpoints() {
    let server = ApiServer::new();
    let service = Api::<Service>::namespaced(server.client(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let spec = service.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.0.0.1"));
    let port = &spec.ports.unwrap()[0];
    assert_eq!((port.name.as_deref(), port.port), (Some("https"), 443));
    let endpoints = Api::<Endpoints>::namespaced(server.client(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let subset = &endpoints.subsets.unwrap()[0];
    assert_eq!(subset.addresses.as_ref().unwrap()[0].ip, "192.0.2.1");
    let slice = Api::<EndpointSlice>::namespaced(server.client(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    assert_eq!(
        slice.metadata.labels.unwrap()["kubernetes.io/service-name"],
        "kubernetes"
    );
}

#[tokio::test]
async fn a_booted_server_holds_the_bootstrap_rbac_policy() {
    let server = ApiServer::new();
    let roles: Api<ClusterRole> = Api::all(server.client());
    let admin = roles.get("cluster-admin").await.unwrap();
    let rule = &admin.rules.unwrap()[0];
    assert_eq!(rule.verbs, ["*"]);
    for name in ["admin", "edit", "view", "system:discovery", "system:node"] {
        assert!(roles.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    // The aggregated roles carry their aggregation rule, as kube-apiserver creates them.
    let view = roles.get("view").await.unwrap();
    assert!(view.aggregation_rule.is_some());
    let bindings: Api<ClusterRoleBinding> = Api::all(server.client());
    let binding = bindings.get("cluster-admin").await.unwrap();
    assert_eq!(binding.subjects.unwrap()[0].name, "system:masters");
}

#[tokio::test]
async fn a_bare_server_has_only_its_namespaces() {
    let server = ApiServer::builder().boot_objects(false).build();
    let services = Api::<Service>::all(server.client())
        .list(&Default::default())
        .await
        .unwrap();
    assert!(services.items.is_empty());
    let roles = Api::<ClusterRole>::all(server.client())
        .list(&Default::default())
        .await
        .unwrap();
    assert!(roles.items.is_empty());
}

#[tokio::test]
async fn cordon_and_uncordon_a_node() {
    let server = ApiServer::new();
    let nodes: Api<Node> = Api::all(server.client());
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "worker-1"}})).unwrap();
    let created = nodes.create(&PostParams::default(), &node).await.unwrap();
    // The TaintNodesByCondition admission plugin: not ready until its kubelet says so.
    let taints = created.spec.as_ref().unwrap().taints.clone().unwrap();
    assert_eq!(taints[0].key, "node.kubernetes.io/not-ready");

    let cordoned = nodes.cordon("worker-1").await.unwrap();
    assert_eq!(cordoned.spec.unwrap().unschedulable, Some(true));
    let unschedulable = nodes
        .list(&kube::api::ListParams::default().fields("spec.unschedulable=true"))
        .await
        .unwrap();
    assert_eq!(unschedulable.items.len(), 1);

    let uncordoned = nodes.uncordon("worker-1").await.unwrap();
    assert_ne!(uncordoned.spec.unwrap().unschedulable, Some(true));
}

#[tokio::test]
async fn approve_a_certificate_signing_request() {
    let server = ApiServer::new();
    let csrs: Api<CertificateSigningRequest> = Api::all(server.client());
    let csr: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": "conformance-user"},
        "spec": {"request": REQUEST, "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}
    }))
    .unwrap();
    let created = csrs.create(&PostParams::default(), &csr).await.unwrap();
    // The requester is who sent the request.
    assert_eq!(created.spec.username.as_deref(), Some("admin"));

    let approval = CertificateSigningRequest {
        status: Some(CertificateSigningRequestStatus {
            conditions: Some(vec![CertificateSigningRequestCondition {
                type_: "Approved".into(),
                status: "True".into(),
                reason: Some("ByTest".into()),
                message: Some("approved in a test".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let approved = csrs
        .patch_approval(
            "conformance-user",
            &PatchParams::default(),
            &Patch::Merge(&approval),
        )
        .await
        .unwrap();
    let condition = &approved.status.unwrap().conditions.unwrap()[0];
    assert_eq!(condition.type_, "Approved");
    // The strategy stamps the condition's times.
    assert!(condition.last_update_time.is_some() && condition.last_transition_time.is_some());

    // A status write cannot take the approval back: only /approval changes it, and
    // validation refuses a removed Approved condition.
    let denial = json!({"status": {"conditions": []}});
    let refused = csrs
        .patch_status(
            "conformance-user",
            &PatchParams::default(),
            &Patch::Merge(&denial),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("expected an API error, got {refused:?}");
    };
    assert_eq!(status.code, 422);
    assert!(
        status.message.ends_with(
            "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
        ),
        "{}",
        status.message
    );
    let read = csrs.get_approval("conformance-user").await.unwrap();
    assert_eq!(read.status.unwrap().conditions.unwrap().len(), 1);
}

/// kube-apiserver registers a local APIService per built-in group version, the core group's
/// named `v1.` (a path segment, not a DNS name).
#[tokio::test]
async fn a_booted_server_lists_the_core_group_apiservice() {
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    let server = ApiServer::new();
    let apiservices: Api<APIService> = Api::all(server.client());
    let core = apiservices.get("v1.").await.unwrap();
    let spec = core.spec.unwrap();
    assert_eq!(
        (spec.group.as_deref(), spec.version.as_deref()),
        (None, Some("v1"))
    );
    let names: Vec<String> = apiservices
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|a| a.metadata.name)
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("v1."));
}

#[tokio::test]
async fn a_resource_slice_with_an_upper_case_driver_is_warned_about_on_create_and_update() {
    // `resourceSliceStrategy.WarningsOnCreate` and `WarningsOnUpdate`.
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
    let server = ApiServer::new();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("resource.k8s.io", "v1", "ResourceSlice"),
        "resourceslices",
    );
    let api = Api::<DynamicObject>::all_with(server.client(), &resource);
    let slice = |name: &str, driver: &str| {
        DynamicObject::new(name, &resource).data(json!({"spec": {
            "driver": driver, "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": true}}))
    };
    api.create(&PostParams::default(), &slice("upper", "DRA.example.com"))
        .await
        .unwrap();
    let expected = [
        r#"spec.driver: driver names should be lowercase; "DRA.example.com" contains uppercase characters"#,
    ];
    assert_eq!(last_warnings(&server), expected);
    api.patch(
        "upper",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
    )
    .await
    .unwrap();
    assert_eq!(last_warnings(&server), expected);
    api.create(&PostParams::default(), &slice("lower", "dra.example.com"))
        .await
        .unwrap();
    assert!(last_warnings(&server).is_empty());
}
