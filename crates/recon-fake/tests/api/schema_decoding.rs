//! What the in-memory server does to a custom resource before validating it, as
//! apiextensions-apiserver's codec does: prunes fields the schema does not declare (reporting
//! them as `fieldValidation` asks), drops nulls it does not allow, and applies `default`s, on
//! every write and on seeded objects. The CRD is `fixtures/conformance/crds/schemeds.yaml`,
//! whose answers from a real kube-apiserver are recorded under `fixtures/conformance/schema/`.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use recon_fake::{ApiServer, Verb};
use recon_test_fixtures::{from_json, pp, status};
use serde_json::{Value, json};

use crate::support::last_warnings;

fn schemed_crd() -> CustomResourceDefinition {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/crds/schemeds.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("conformance.example.com", "v1", "Schemed"),
        "schemeds",
    )
}

async fn server() -> (ApiServer, Api<DynamicObject>) {
    let server = ApiServer::new();
    server.install_crd(&schemed_crd()).await.expect("install");
    let api = Api::namespaced_with(server.client(), "default", &resource());
    (server, api)
}

fn schemed(name: &str, data: Value) -> DynamicObject {
    DynamicObject::new(name, &resource()).data(data)
}

/// Creates `s1` with `data`; it must be accepted.
async fn create_s1(api: &Api<DynamicObject>, data: Value) -> DynamicObject {
    api.create(&pp(), &schemed("s1", data))
        .await
        .expect("created")
}

/// `spec` as the CRD's defaults complete `{title: abc}`.
fn defaulted_spec() -> Value {
    json!({"title": "abc", "replicas": 1, "minReplicas": 0, "maxReplicas": 10, "enabled": false,
        "strategy": {"type": "Rolling", "maxSurge": 1}})
}

/// A create with this query string (kube's `PostParams` has no `fieldValidation`).
async fn create_with_query(
    server: &ApiServer,
    query: &str,
    object: &DynamicObject,
) -> Result<Value, kube::Error> {
    let request = http::Request::post(format!(
        "/apis/conformance.example.com/v1/namespaces/default/schemeds?{query}"
    ))
    .header(http::header::CONTENT_TYPE, "application/json")
    .body(serde_json::to_vec(object).expect("serialises"))
    .expect("a valid request");
    server.client().request::<Value>(request).await
}

#[tokio::test]
async fn unknown_fields_are_pruned_at_every_depth_with_a_warning_each() {
    // Recorded: schema/unknown-fields-are-pruned.
    let (server, api) = server().await;
    let created = create_s1(&api, json!({"bogus": "top", "spec": {"title": "abc", "bogus": 1,
                    "ports": [{"name": "http", "port": 80, "bogus": "x"}], "strategy": {"bogus": "y"}}})).await;
    let mut spec = defaulted_spec();
    spec["ports"] = json!([{"name": "http", "port": 80, "protocol": "TCP"}]);
    assert_eq!(created.data, json!({"spec": spec}));
    // `Warn` is the default directive: one warning per dropped field, in path order.
    assert_eq!(
        last_warnings(&server),
        [
            r#"unknown field "bogus""#,
            r#"unknown field "spec.bogus""#,
            r#"unknown field "spec.ports[0].bogus""#,
            r#"unknown field "spec.strategy.bogus""#,
        ]
    );
    assert_eq!(api.get("s1").await.unwrap().data, json!({"spec": spec}));
}

#[tokio::test]
async fn preserved_subtrees_and_embedded_resources_keep_what_they_hold() {
    // Recorded: schema/preserve-unknown-fields-keeps-them, embedded-resource-needs-apiversion-kind.
    let (server, api) = server().await;
    let extra = json!({"anything": {"deep": [1, {"x": "v"}]}, "count": 1});
    let template = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "x", "bogus": 1}, "spec": {"anything": [1, 2]}});
    let created = create_s1(
        &api,
        json!({"spec": {"title": "abc", "extra": extra, "template": template}}),
    )
    .await;
    assert_eq!(created.data["spec"]["extra"], extra);
    assert_eq!(
        created.data["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
            "spec": {"anything": [1, 2]}})
    );
    assert_eq!(
        last_warnings(&server),
        [r#"unknown field "spec.template.metadata.bogus""#]
    );
}

#[tokio::test]
async fn strict_field_validation_refuses_unknown_fields_and_ignore_drops_them_quietly() {
    // Recorded: schema/field-validation-strict-unknown-field, field-validation-ignore-prunes.
    let (server, api) = server().await;
    let body = schemed(
        "s1",
        json!({"bogus": "top", "spec": {"title": "abc", "bogus": 1}}),
    );
    let s = status(create_with_query(&server, "fieldValidation=Strict", &body).await);
    assert_eq!(
        (s.code, s.reason.as_str(), s.message.as_str()),
        (
            400,
            "BadRequest",
            r#"Schemed in version "v1" cannot be handled as a Schemed: strict decoding error: unknown field "bogus", unknown field "spec.bogus""#
        )
    );
    assert!(
        api.get_opt("s1").await.unwrap().is_none(),
        "nothing is stored"
    );

    let created = create_with_query(&server, "fieldValidation=Ignore", &body)
        .await
        .unwrap();
    assert_eq!(created["spec"], defaulted_spec());
    assert!(last_warnings(&server).is_empty());
}

#[tokio::test]
async fn a_strict_merge_patch_quotes_the_patched_object() {
    // Recorded: schema/field-validation-strict-merge-patch: the object the patch reached
    // (`spec`) with its keys sorted, the added one among them.
    let (_server, api) = server().await;
    create_s1(&api, json!({"spec": {"title": "abc"}})).await;
    let params = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..PatchParams::default()
    };
    let s = status(
        api.patch("s1", &params, &Patch::Merge(json!({"spec": {"bogus": 1}})))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert!(
        s.message
            .starts_with(r#" "" is invalid: patch: Invalid value: "{\"apiVersion\":"#),
        "{}",
        s.message
    );
    assert!(
        s.message.ends_with(
            r#"\"spec\":{\"bogus\":1,\"enabled\":false,\"maxReplicas\":10,\"minReplicas\":0,\"replicas\":1,\"strategy\":{\"maxSurge\":1,\"type\":\"Rolling\"},\"title\":\"abc\"}}": strict decoding error: unknown field "spec.bogus""#
        ),
        "{}",
        s.message
    );
}

#[tokio::test]
async fn defaults_come_back_after_put_merge_patch_and_json_patch_remove_them() {
    // Recorded: schema/defaults-on-update-and-patch, null-for-a-defaulted-field-gets-the-default.
    let (_server, api) = server().await;
    let created = create_s1(
        &api,
        json!({"spec": {"title": "abc", "replicas": null, "strategy": {"type": null}}}),
    )
    .await;
    assert_eq!(created.data, json!({"spec": defaulted_spec()}));

    let mut put = created.clone();
    put.data = json!({"spec": {"title": "abc", "replicas": 5}});
    let replaced = api.replace("s1", &pp(), &put).await.unwrap();
    let mut spec = defaulted_spec();
    spec["replicas"] = json!(5);
    assert_eq!(replaced.data, json!({"spec": spec}));

    let merge = json!({"spec": {"replicas": null, "strategy": null}});
    let merged = api
        .patch("s1", &PatchParams::default(), &Patch::Merge(&merge))
        .await
        .unwrap();
    assert_eq!(merged.data, json!({"spec": defaulted_spec()}));

    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": "/spec/maxReplicas"}])).unwrap();
    let patched = api
        .patch("s1", &PatchParams::default(), &Patch::Json::<()>(ops))
        .await
        .unwrap();
    assert_eq!(patched.data, json!({"spec": defaulted_spec()}));
    assert_eq!(
        patched.metadata.resource_version, merged.metadata.resource_version,
        "putting back what was there is no change"
    );
}

#[tokio::test]
async fn nullable_fields_keep_null_and_others_lose_it() {
    // Recorded: schema/nullable-keeps-null.
    let (_server, api) = server().await;
    let created = create_s1(
        &api,
        json!({"spec": {"title": "abc", "nickname": null, "color": null}}),
    )
    .await;
    let mut spec = defaulted_spec();
    spec["nickname"] = Value::Null;
    assert_eq!(created.data, json!({"spec": spec}));
}

#[tokio::test]
async fn an_apply_gets_defaults_its_manager_does_not_own() {
    // Recorded: schema/apply-is-validated.
    let (_server, api) = server().await;
    let applied = json!({"apiVersion": "conformance.example.com/v1", "kind": "Schemed",
        "metadata": {"name": "s1"}, "spec": {"title": "abc", "replicas": 3}});
    let created = api
        .patch("s1", &PatchParams::apply("alice"), &Patch::Apply(&applied))
        .await
        .unwrap();
    let mut spec = defaulted_spec();
    spec["replicas"] = json!(3);
    assert_eq!(created.data, json!({"spec": spec}));
    let managed = created.metadata.managed_fields.expect("managed fields");
    assert_eq!(
        serde_json::to_value(&managed[0].fields_v1).unwrap(),
        json!({"f:spec": {"f:replicas": {}, "f:title": {}}})
    );
}

#[tokio::test]
async fn an_unsupported_field_validation_value_is_422() {
    // Recorded: schema/field-validation-ignore-prunes (second step).
    let (server, _api) = server().await;
    let body = schemed("s1", json!({"spec": {"title": "abc"}}));
    let s = status(create_with_query(&server, "fieldValidation=Loose", &body).await);
    assert_eq!(
        (s.code, s.message.as_str()),
        (
            422,
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn""#
        )
    );
}

#[tokio::test]
async fn seeded_objects_are_stored_pruned_and_defaulted_but_not_validated() {
    let (server, api) = server().await;
    server
        .seed(
            &json!({"apiVersion": "conformance.example.com/v1", "kind": "Schemed",
            "metadata": {"name": "s1", "namespace": "default"},
            "spec": {"title": "too long for the schema", "bogus": 1}}),
        )
        .unwrap();
    let mut spec = defaulted_spec();
    spec["title"] = json!("too long for the schema");
    assert_eq!(api.get("s1").await.unwrap().data, json!({"spec": spec}));
}

#[tokio::test]
async fn what_a_mutating_hook_adds_is_pruned_and_defaulted_too() {
    let (server, api) = server().await;
    server.on(Verb::Create, "schemeds").mutate(|object| {
        object["spec"]["injected"] = json!(true);
        object["spec"]["strategy"] = Value::Null;
    });
    let created = create_s1(&api, json!({"spec": {"title": "abc"}})).await;
    assert_eq!(created.data, json!({"spec": defaulted_spec()}));
}

#[tokio::test]
async fn a_crd_with_unique_items_is_refused() {
    // Recorded: schema/crd-with-unique-items-is-refused.
    let server = ApiServer::new();
    let crd: CustomResourceDefinition = from_json(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "uniques.conformance.example.com"},
        "spec": {"group": "conformance.example.com", "scope": "Namespaced",
            "names": {"plural": "uniques", "singular": "unique", "kind": "Unique", "listKind": "UniqueList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {"tags": {
                        "type": "array", "uniqueItems": true, "items": {"type": "string"}}}}}}}}]}
    }));
    let s = status(server.install_crd(&crd).await);
    assert_eq!(
        (s.code, s.message.as_str()),
        (
            422,
            "CustomResourceDefinition.apiextensions.k8s.io \"uniques.conformance.example.com\" is invalid: \
             spec.validation.openAPIV3Schema.properties[spec].properties[tags].uniqueItems: Forbidden: \
             uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        )
    );
}

/// Replaces the Schemed CRD's `spec.properties` entry `field` (or removes it, with `None`).
async fn change_spec_field(server: &ApiServer, field: &str, schema: Option<Value>) {
    let crds: Api<CustomResourceDefinition> = Api::all(server.setup_client());
    let mut crd = crds.get("schemeds.conformance.example.com").await.unwrap();
    let mut raw = serde_json::to_value(&crd).unwrap();
    let properties = &mut raw["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"];
    match schema {
        Some(s) => properties[field] = s,
        None => {
            properties.as_object_mut().unwrap().remove(field);
        }
    }
    crd = from_json(raw);
    crds.replace("schemeds.conformance.example.com", &pp(), &crd)
        .await
        .unwrap();
}

#[tokio::test]
async fn reads_prune_and_default_with_the_schema_of_now_without_a_write() {
    // Defaults apply "when reading from etcd using the storage version defaults"
    // (Kubernetes docs, CRD defaulting); pruning happens on that decode too.
    let (server, api) = server().await;
    let created = create_s1(&api, json!({"spec": {"title": "abc", "color": "red"}})).await;
    let rv = created.metadata.resource_version.clone();

    change_spec_field(
        &server,
        "tier",
        Some(json!({"type": "string", "default": "gold"})),
    )
    .await;
    change_spec_field(&server, "color", None).await;
    let read = api.get("s1").await.unwrap();
    let mut spec = defaulted_spec();
    spec["tier"] = json!("gold");
    assert_eq!(read.data, json!({"spec": spec}));
    assert_eq!(read.metadata.resource_version, rv, "nothing was written");

    // What was written is still what storage holds: a schema declaring it again reads it again,
    // and a default removed before any write is gone again.
    change_spec_field(&server, "color", Some(json!({"type": "string"}))).await;
    change_spec_field(&server, "tier", None).await;
    let mut spec = defaulted_spec();
    spec["color"] = json!("red");
    assert_eq!(api.get("s1").await.unwrap().data, json!({"spec": spec}));
}

/// Posts `body` as written (JSON a serialiser would never produce) to `path`.
async fn post_raw(server: &ApiServer, path: &str, body: &str) -> Result<Value, kube::Error> {
    let request = http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.as_bytes().to_vec())
        .expect("a valid request");
    server.client().request::<Value>(request).await
}

/// A key given twice is a strict decoding error like an unknown field (recorded for
/// `Strict` on a ConfigMap: decoding/duplicate-fields-with-strict-validation-are-400): by
/// default a `Warning` naming its path, the last value kept.
#[tokio::test]
async fn a_repeated_key_is_a_warning_by_default_and_the_last_value_is_kept() {
    let (server, _) = server().await;
    let created = post_raw(
        &server,
        "/api/v1/namespaces/default/configmaps",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
            "data":{"k":"a","k":"b"}}"#,
    )
    .await
    .unwrap();
    assert_eq!(created["data"], json!({"k": "b"}));
    assert_eq!(last_warnings(&server), ["duplicate field \"data.k\""]);

    let created = post_raw(
        &server,
        "/apis/conformance.example.com/v1/namespaces/default/schemeds",
        r#"{"apiVersion":"conformance.example.com/v1","kind":"Schemed",
            "metadata":{"name":"s","name":"t"}}"#,
    )
    .await
    .unwrap();
    assert_eq!(created["metadata"]["name"], "t");
    assert_eq!(
        last_warnings(&server),
        ["duplicate field \"metadata.name\""]
    );
}
