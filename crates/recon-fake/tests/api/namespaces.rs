//! Strict namespaces (C11): the `NamespaceLifecycle` admission plugin of kube-apiserver
//! (k8s.io/apiserver `pkg/admission/plugin/namespace/lifecycle/admission.go`, `Admit`), on with
//! `ApiServerBuilder::strict_namespaces(true)`; and the Namespace `/finalize` subresource.
//! Error bodies are compared byte for byte with what the plugin builds (`errors.NewNotFound` from
//! its live GET, `admission.NewForbidden` plus the `NamespaceTerminating` cause).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::Status;
use kube::{CustomResourceExt, ResourceExt};

use pretty_assertions::assert_eq;
use recon_fake::{ApiServer, SeedError};
use recon_test_fixtures::*;
use serde_json::{Value, json};

use crate::support::namespaces;

fn strict() -> ApiServer {
    ApiServer::builder().strict_namespaces(true).build()
}

fn configmaps(server: &ApiServer, namespace: &str) -> Api<ConfigMap> {
    Api::namespaced(server.client(), namespace)
}

fn configmap(name: &str) -> ConfigMap {
    from_json(json!({"metadata": {"name": name}, "data": {"k": "v"}}))
}

async fn create_namespace(server: &ApiServer, name: &str) {
    namespaces(server)
        .create(&pp(), &from_json(json!({"metadata": {"name": name}})))
        .await
        .expect("create namespace");
}

/// Creates `name` with a ConfigMap `kept` in it, then deletes it: Terminating, and it stays so
/// (nothing runs the namespace controller here).
async fn terminating_namespace(server: &ApiServer, name: &str) {
    create_namespace(server, name).await;
    configmaps(server, name)
        .create(&pp(), &configmap("kept"))
        .await
        .expect("create content");
    namespaces(server)
        .delete(name, &DeleteParams::default())
        .await
        .expect("delete namespace");
}

/// The exact body of the last response.
fn last_response(server: &ApiServer) -> Value {
    let requests = server.requests();
    let last = requests.last().expect("a request was served");
    serde_json::from_slice(&last.response).expect("a JSON body")
}

fn not_found_body(namespace: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("namespaces \"{namespace}\" not found"), "reason": "NotFound",
        "details": {"name": namespace, "kind": "namespaces"}, "code": 404,
    })
}

fn terminating_body(resource: &str, group: &str, name: &str, namespace: &str) -> Value {
    let qualified = if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    };
    let mut details = json!({
        "name": name, "kind": resource,
        "causes": [{"reason": "NamespaceTerminating", "message": format!("namespace {namespace} is being terminated"), "field": "metadata.namespace"}],
    });
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("{qualified} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated"),
        "reason": "Forbidden", "details": details, "code": 403,
    })
}

fn assert_namespace_not_found(status: &Status, namespace: &str) {
    assert_status(
        status,
        404,
        "NotFound",
        &format!(r#"namespaces "{namespace}" not found"#),
    );
    let details = status.details.as_ref().expect("details");
    assert_details(details, (namespace, "", "namespaces"));
}

// ---------------------------------------------------------------------------------------------
// Off by default

#[tokio::test]
async fn c11_namespaces_are_not_checked_unless_strict_namespaces_is_on() {
    let server = ApiServer::new();

    let created = configmaps(&server, "nowhere")
        .create(&pp(), &configmap("x"))
        .await
        .unwrap();

    assert_eq!(created.metadata.namespace.as_deref(), Some("nowhere"));
}

#[tokio::test]
async fn c11_terminating_namespaces_accept_content_unless_strict_namespaces_is_on() {
    let server = ApiServer::new();
    terminating_namespace(&server, "team").await;

    configmaps(&server, "team")
        .create(&pp(), &configmap("late"))
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Creates in a missing namespace: the plugin's live GET answers NotFound

#[tokio::test]
async fn c11_create_in_a_missing_namespace_is_the_namespaces_not_found() {
    let server = strict();

    let s = status(
        configmaps(&server, "missing")
            .create(&pp(), &configmap("x"))
            .await,
    );

    assert_namespace_not_found(&s, "missing");
    assert_eq!(last_response(&server), not_found_body("missing"));
    assert!(
        server
            .stored("v1", "ConfigMap", Some("missing"), "x")
            .is_none()
    );
}

#[tokio::test]
async fn c11_a_dry_run_create_in_a_missing_namespace_is_refused_too() {
    let server = strict();

    let s = status(
        configmaps(&server, "missing")
            .create(
                &PostParams {
                    dry_run: true,
                    ..pp()
                },
                &configmap("x"),
            )
            .await,
    );

    assert_namespace_not_found(&s, "missing");
}

#[tokio::test]
async fn c11_a_server_side_apply_that_would_create_in_a_missing_namespace_is_refused() {
    let server = strict();
    let apply = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});

    let s = status(
        configmaps(&server, "missing")
            .patch("x", &PatchParams::apply("test"), &Patch::Apply(&apply))
            .await,
    );

    assert_namespace_not_found(&s, "missing");
}

#[tokio::test]
async fn c11_a_put_that_would_create_is_admitted_as_a_create() {
    let server = strict();
    let leases: Api<Lease> = Api::namespaced(server.client(), "missing");
    let lease: Lease = from_json(json!({"metadata": {"name": "leader"}}));

    let s = status(leases.replace("leader", &pp(), &lease).await);

    assert_namespace_not_found(&s, "missing");
}

#[tokio::test]
async fn c11_the_namespace_check_comes_before_validation() {
    let server = strict();
    let invalid = configmap("Not_A_Valid_Name");

    let s = status(configmaps(&server, "missing").create(&pp(), &invalid).await);

    assert_namespace_not_found(&s, "missing");
}

// ---------------------------------------------------------------------------------------------
// Creates in a terminating namespace: 403 with a NamespaceTerminating cause

#[tokio::test]
async fn c11_create_in_a_terminating_namespace_is_forbidden_with_a_namespace_terminating_cause() {
    let server = strict();
    terminating_namespace(&server, "team").await;

    let s = status(
        configmaps(&server, "team")
            .create(&pp(), &configmap("late"))
            .await,
    );

    assert_status(
        &s,
        403,
        "Forbidden",
        r#"configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated"#,
    );
    let cause = &s.details.as_ref().expect("details").causes[0];
    assert_eq!(
        (
            cause.reason.as_str(),
            cause.message.as_str(),
            cause.field.as_str()
        ),
        (
            "NamespaceTerminating",
            "namespace team is being terminated",
            "metadata.namespace"
        )
    );
    assert_eq!(
        last_response(&server),
        terminating_body("configmaps", "", "late", "team")
    );
}

#[tokio::test]
async fn c11_the_forbidden_message_names_a_custom_resource_by_group_resource() {
    let server = strict();
    server.install_crd(&Widget::crd()).await.unwrap();
    terminating_namespace(&server, "team").await;
    let widgets: Api<Widget> = Api::namespaced(server.client(), "team");

    status(widgets.create(&pp(), &widget("w", 1)).await);

    assert_eq!(
        last_response(&server),
        terminating_body("widgets", "example.com", "w", "team")
    );
}

#[tokio::test]
async fn c11_a_generated_name_is_refused_under_its_generate_name_prefix() {
    // `extractResourceName`: admission runs before the name is generated.
    let server = strict();
    terminating_namespace(&server, "team").await;
    let cm: ConfigMap = from_json(json!({"metadata": {"generateName": "cm-"}}));

    let s = status(configmaps(&server, "team").create(&pp(), &cm).await);

    assert_eq!(
        (s.code, s.message.as_str()),
        (
            403,
            r#"configmaps "cm-" is forbidden: unable to create new content in namespace team because it is being terminated"#
        )
    );
    assert_eq!(s.details.expect("details").name, "cm-");
}

#[tokio::test]
async fn c11_dry_run_and_apply_creates_in_a_terminating_namespace_are_forbidden_too() {
    let server = strict();
    terminating_namespace(&server, "team").await;
    let apply = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}});

    let dry_run = status(
        configmaps(&server, "team")
            .create(
                &PostParams {
                    dry_run: true,
                    ..pp()
                },
                &configmap("late"),
            )
            .await,
    );
    let applied = status(
        configmaps(&server, "team")
            .patch("late", &PatchParams::apply("test"), &Patch::Apply(&apply))
            .await,
    );

    assert_eq!((dry_run.code, dry_run.reason.as_str()), (403, "Forbidden"));
    assert_eq!((applied.code, applied.reason.as_str()), (403, "Forbidden"));
}

// ---------------------------------------------------------------------------------------------
// What the plugin lets through

#[tokio::test]
async fn c11_reads_updates_patches_applies_and_deletes_in_a_terminating_namespace_are_allowed() {
    let server = strict();
    terminating_namespace(&server, "team").await;
    let api = configmaps(&server, "team");

    let mut kept = api.get("kept").await.unwrap();
    kept.data = Some([("k".to_owned(), "updated".to_owned())].into());
    api.replace("kept", &pp(), &kept).await.unwrap();
    api.patch(
        "kept",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "patched"}})),
    )
    .await
    .unwrap();
    let apply = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "b"}});
    api.patch("kept", &PatchParams::apply("test"), &Patch::Apply(&apply))
        .await
        .unwrap();
    api.delete("kept", &DeleteParams::default()).await.unwrap();

    assert!(api.get_opt("kept").await.unwrap().is_none());
}

#[tokio::test]
async fn c11_namespaces_and_cluster_scoped_objects_are_never_checked() {
    let server = strict();
    server.install_crd(&gizmo_crd()).await.unwrap();

    create_namespace(&server, "fresh").await;
    let gizmo = json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}});
    gizmos(&server)
        .create(&pp(), &from_json(gizmo))
        .await
        .unwrap();

    configmaps(&server, "fresh")
        .create(&pp(), &configmap("x"))
        .await
        .unwrap();
}

#[tokio::test]
async fn c11_an_update_of_an_object_whose_namespace_is_gone_is_the_namespaces_not_found() {
    // The plugin checks existence on Update too (only the terminating check is create-only).
    // A namespace finalized by hand (PUT /finalize) leaves its content behind.
    let server = strict();
    terminating_namespace(&server, "gone").await;
    let ns = namespaces(&server).get("gone").await.unwrap();
    let mut finalized = ns.clone();
    finalized.spec = None;
    namespaces(&server)
        .replace_subresource("finalize", "gone", &pp(), &finalized)
        .await
        .unwrap();
    let api = configmaps(&server, "gone");

    let s = status(
        api.patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "patched"}})),
        )
        .await,
    );

    assert_namespace_not_found(&s, "gone");
    assert!(api.get("kept").await.is_ok(), "reads are not admitted");
    api.delete("kept", &DeleteParams::default())
        .await
        .expect("deletes are allowed");
}

// ---------------------------------------------------------------------------------------------
// Immortal namespaces

#[tokio::test]
async fn c11_the_immortal_namespaces_exist_and_take_content() {
    let server = strict();

    for namespace in ["default", "kube-system", "kube-public"] {
        configmaps(&server, namespace)
            .create(&pp(), &configmap("x"))
            .await
            .unwrap_or_else(|e| panic!("{namespace}: {e}"));
    }
}

#[tokio::test]
async fn c11_the_immortal_namespaces_may_not_be_deleted() {
    let server = strict();

    for namespace in ["default", "kube-system", "kube-public"] {
        let s = status(
            namespaces(&server)
                .delete(namespace, &DeleteParams::default())
                .await,
        );
        assert_status(
            &s,
            403,
            "Forbidden",
            &format!(r#"namespaces "{namespace}" is forbidden: this namespace may not be deleted"#),
        );
        let ns = namespaces(&server).get(namespace).await.unwrap();
        assert!(ns.metadata.deletion_timestamp.is_none());
    }
}

#[tokio::test]
async fn c11_kube_node_lease_is_not_immortal() {
    let server = strict();

    namespaces(&server)
        .delete("kube-node-lease", &DeleteParams::default())
        .await
        .unwrap();

    let ns = namespaces(&server).get("kube-node-lease").await.unwrap();
    assert!(ns.metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn c11_without_strict_namespaces_default_can_be_deleted_as_before() {
    let server = ApiServer::new();

    namespaces(&server)
        .delete("default", &DeleteParams::default())
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Seeding

#[tokio::test]
async fn c11_seeding_into_a_missing_namespace_is_an_error_with_strict_namespaces() {
    let server = strict();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "missing"}});

    let err = server.seed(&cm).unwrap_err();

    assert!(
        matches!(&err, SeedError::NamespaceNotFound(ns) if ns == "missing"),
        "{err:?}"
    );
    server
        .seed(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "missing"}}))
        .unwrap();
    server.seed(&cm).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Namespace /finalize (FinalizeREST)

#[tokio::test]
async fn finalizing_an_empty_terminating_namespace_deletes_it() {
    let server = ApiServer::new();
    create_namespace(&server, "team").await;
    namespaces(&server)
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    let mut ns = namespaces(&server).get("team").await.unwrap();
    ns.spec = Some(Default::default());

    namespaces(&server)
        .replace_subresource("finalize", "team", &pp(), &ns)
        .await
        .unwrap();

    assert!(namespaces(&server).get_opt("team").await.unwrap().is_none());
}

#[tokio::test]
async fn finalize_changes_spec_finalizers_but_not_the_status() {
    let server = ApiServer::new();
    create_namespace(&server, "team").await;
    let mut ns = namespaces(&server).get("team").await.unwrap();
    ns.spec = Some(from_json(
        json!({"finalizers": ["kubernetes", "example.com/extra"]}),
    ));
    ns.status = Some(from_json(json!({"phase": "Terminating"})));

    let stored = namespaces(&server)
        .replace_subresource("finalize", "team", &pp(), &ns)
        .await
        .unwrap();

    assert_eq!(
        stored.spec.and_then(|s| s.finalizers),
        Some(vec![
            "kubernetes".to_owned(),
            "example.com/extra".to_owned()
        ])
    );
    assert_eq!(
        stored.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
}

#[tokio::test]
async fn finalize_rejects_a_finalizer_name_that_is_neither_standard_nor_qualified() {
    let server = ApiServer::new();
    create_namespace(&server, "team").await;
    let mut ns = namespaces(&server).get("team").await.unwrap();
    ns.spec = Some(from_json(json!({"finalizers": ["bogus"]})));

    let s = status(
        namespaces(&server)
            .replace_subresource("finalize", "team", &pp(), &ns)
            .await,
    );

    assert_status(
        &s,
        422,
        "Invalid",
        r#"Namespace "team" is invalid: spec.finalizers[0]: Invalid value: "bogus": name is neither a standard finalizer name nor is it fully qualified"#,
    );
}

#[tokio::test]
async fn finalize_serves_only_put() {
    let server = ApiServer::new();

    let s = status(raw(&server, "GET", "/api/v1/namespaces/default/finalize", "").await);

    assert_eq!((s.code, s.reason.as_str()), (405, "MethodNotAllowed"));
    let default = namespaces(&server).get("default").await.unwrap();
    assert_eq!(default.name_any(), "default");
}
