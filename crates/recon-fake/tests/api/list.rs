//! List through `kube::Api::list`: label selectors (L1), field selectors (L2), the list
//! resourceVersion and item order (L3), the list document (W1), namespace scope and the
//! metadata-only forms. Messages were checked against a real apiextensions-apiserver 1.36.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Namespace, Pod, PodSpec, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use recon_fake::{ApiServer, Verb};
use recon_test_fixtures::*;
use serde_json::{Value, json};

/// A widget in `default` with these labels.
fn labelled(name: &str, labels: &[(&str, &str)]) -> Widget {
    let mut w = widget(name, 1);
    w.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    w
}

/// A server with five labelled widgets in `default`:
/// a {env=prod, tier=web}, b {env=dev, tier=db}, c {env=test}, d {tier=web}, e {}.
async fn labelled_server() -> ApiServer {
    let server = server().await;
    let api = widgets(&server);
    for w in [
        labelled("a", &[("env", "prod"), ("tier", "web")]),
        labelled("b", &[("env", "dev"), ("tier", "db")]),
        labelled("c", &[("env", "test")]),
        labelled("d", &[("tier", "web")]),
        labelled("e", &[]),
    ] {
        api.create(&PostParams::default(), &w).await.unwrap();
    }
    server
}

/// The names of the widgets in `default` that `selector` selects.
async fn select(server: &ApiServer, selector: &str) -> Vec<String> {
    let list = widgets(server)
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap();
    list.items
        .iter()
        .map(|w| w.metadata.name.clone().unwrap())
        .collect()
}

fn names<K: kube::Resource>(items: &[K]) -> Vec<String> {
    items
        .iter()
        .map(|o| o.meta().name.clone().unwrap_or_default())
        .collect()
}

async fn create_namespace(server: &ApiServer, name: &str) {
    let api: Api<Namespace> = Api::all(server.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.into());
    api.create(&PostParams::default(), &ns).await.unwrap();
}

fn config_map_without_data(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

// ---------------------------------------------------------------------------------------------
// L1 label selectors

#[tokio::test]
async fn equality_label_selectors_with_one_or_two_equals_match_only_that_value() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "env=prod").await, ["a"]);
    assert_eq!(select(&server, "env==prod").await, ["a"]);
    assert_eq!(select(&server, "tier=web").await, ["a", "d"]);
    assert!(select(&server, "env=staging").await.is_empty());
}

#[tokio::test]
async fn not_equal_label_selector_also_matches_objects_without_the_label() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "env!=prod").await, ["b", "c", "d", "e"]);
}

#[tokio::test]
async fn in_label_selector_matches_any_listed_value_and_kube_sends_spaces_as_plus() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "env in (prod,dev)").await, ["a", "b"]);
    let list = server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.verb == Verb::List)
        .unwrap();
    // W4: kube writes `?&labelSelector=...`, a space as `+`.
    assert_eq!(list.query, "&labelSelector=env+in+%28prod%2Cdev%29");
    assert_eq!(
        list.query_param("labelSelector").as_deref(),
        Some("env in (prod,dev)")
    );
}

#[tokio::test]
async fn notin_label_selector_also_matches_objects_without_the_label() {
    // L1
    let server = labelled_server().await;
    assert_eq!(
        select(&server, "env notin (prod,dev)").await,
        ["c", "d", "e"]
    );
}

#[tokio::test]
async fn exists_label_selector_matches_objects_with_the_key_whatever_the_value() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "env").await, ["a", "b", "c"]);
}

#[tokio::test]
async fn does_not_exist_label_selector_matches_objects_without_the_key() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "!env").await, ["d", "e"]);
}

#[tokio::test]
async fn comma_separated_label_requirements_must_all_match() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "tier=web,env").await, ["a"]);
    assert_eq!(select(&server, "tier=web,!env").await, ["d"]);
    assert_eq!(
        select(&server, "env notin (prod),tier in (web,db)").await,
        ["b", "d"]
    );
    assert!(select(&server, "env=prod,env=dev").await.is_empty());
}

#[tokio::test]
async fn empty_label_selector_matches_everything() {
    // L1
    let server = labelled_server().await;
    assert_eq!(select(&server, "").await, ["a", "b", "c", "d", "e"]);
}

#[tokio::test]
async fn label_selector_parse_errors_are_400_bad_request_with_the_parser_message() {
    // L1: each message as the real server wrote it for the same labelSelector.
    let server = labelled_server().await;
    let cases = [
        ("a=b,", "found '', expected: identifier after ','"),
        ("a=b,,c", "found ',', expected: identifier after ','"),
        (
            "=a",
            "found '=', expected: !, identifier, or 'end of string'",
        ),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        (
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "a in b",
            "unable to parse requirement: found 'b' expected: '('",
        ),
        (
            "a in (b",
            "unable to parse requirement: found '', expected: ',' or ')'",
        ),
        (
            "a notin (b",
            "unable to parse requirement: found '', expected: ',' or ')'",
        ),
        (
            "x>a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ];
    let api = widgets(&server);
    let mut wrong = Vec::new();
    for (selector, message) in cases {
        match api.list(&ListParams::default().labels(selector)).await {
            Err(kube::Error::Api(s))
                if s.code == 400 && s.reason == "BadRequest" && s.message == message => {}
            other => wrong.push(format!(
                "{selector:?}: expected 400 BadRequest {message:?}, got {other:?}"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn invalid_label_keys_and_values_in_a_selector_are_400_with_the_validation_message() {
    // L1: messages as the real server wrote them.
    let server = labelled_server().await;
    let api = widgets(&server);
    let s = status(api.list(&ListParams::default().labels("-a=b")).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    );
    let s = status(api.list(&ListParams::default().labels("a=-b")).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
}

#[tokio::test]
async fn label_selector_parse_error_body_is_a_status_without_details() {
    // L1, W2: the real server's body for `a=b,`, byte for byte in meaning.
    let server = labelled_server().await;
    let _ = widgets(&server)
        .list(&ListParams::default().labels("a=b,"))
        .await
        .unwrap_err();
    let last = server.requests().last().cloned().unwrap();
    assert_eq!(last.status, 400);
    assert_eq!(
        last.response_json().unwrap(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"found '', expected: identifier after ','","reason":"BadRequest","code":400})
    );
}

// ---------------------------------------------------------------------------------------------
// L2 field selectors

#[tokio::test]
async fn metadata_name_field_selector_selects_by_name_with_equals_and_not_equals() {
    // L2
    let server = labelled_server().await;
    let api = widgets(&server);
    let list = api
        .list(&ListParams::default().fields("metadata.name=c"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["c"]);
    let list = api
        .list(&ListParams::default().fields("metadata.name==c"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["c"]);
    let list = api
        .list(&ListParams::default().fields("metadata.name!=c"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["a", "b", "d", "e"]);
    let list = api
        .list(&ListParams::default().fields("metadata.name=c,metadata.name!=c"))
        .await
        .unwrap();
    assert!(list.items.is_empty());
}

#[tokio::test]
async fn field_and_label_selectors_combine() {
    // L1, L2
    let server = labelled_server().await;
    let lp = ListParams::default()
        .labels("tier=web")
        .fields("metadata.name!=a");
    assert_eq!(
        names(&widgets(&server).list(&lp).await.unwrap().items),
        ["d"]
    );
}

#[tokio::test]
async fn metadata_namespace_field_selector_filters_a_list_across_namespaces() {
    // L2
    let server = server().await;
    create_namespace(&server, "other").await;
    widgets(&server)
        .create(&PostParams::default(), &widget("in-default", 1))
        .await
        .unwrap();
    let other: Api<Widget> = Api::namespaced(server.client(), "other");
    other
        .create(&PostParams::default(), &widget("in-other", 1))
        .await
        .unwrap();

    let all: Api<Widget> = Api::all(server.client());
    let list = all
        .list(&ListParams::default().fields("metadata.namespace=other"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["in-other"]);
    let list = all
        .list(&ListParams::default().fields("metadata.namespace!=other"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["in-default"]);
}

#[tokio::test]
async fn unsupported_field_selector_on_a_custom_resource_is_400_field_label_not_supported() {
    // L2: real server text.
    let server = server().await;
    let s = status(
        widgets(&server)
            .list(&ListParams::default().fields("spec.size=1"))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(s.message, "field label not supported: spec.size");
}

#[tokio::test]
async fn field_selector_parse_errors_are_400_with_the_parser_message() {
    // L2: real server text.
    let server = server().await;
    let api = widgets(&server);
    let s = status(
        api.list(&ListParams::default().fields("metadata.name"))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    );
    let s = status(
        api.list(&ListParams::default().fields("metadata.name=a=b"))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        "invalid field selector: unescaped character in value: 61"
    );
}

#[tokio::test]
async fn unsupported_field_selector_on_a_config_map_uses_the_default_conversion_message() {
    // L2 (built-in: apimachinery DefaultMetaV1FieldSelectorConversion, not checked on a real server)
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let s = status(api.list(&ListParams::default().fields("spec.foo=x")).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        s.message,
        r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
}

#[tokio::test]
async fn unsupported_field_selector_on_a_job_names_the_job_kind() {
    // L2 (built-in: batch/v1 field label conversion, not checked on a real server)
    let server = ApiServer::new();
    let api: Api<Job> = Api::namespaced(server.client(), "default");
    let s = status(api.list(&ListParams::default().fields("spec.foo=x")).await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"));
    assert_eq!(s.message, r#"field label "spec.foo" not supported for Job"#);
}

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = Some(name.into());
    p.spec = Some(PodSpec {
        node_name: node.map(str::to_owned),
        containers: vec![Container {
            name: "main".into(),
            image: Some("busybox".into()),
            ..Container::default()
        }],
        ..PodSpec::default()
    });
    p
}

#[tokio::test]
async fn pod_field_selectors_support_spec_node_name_and_status_phase() {
    // L2 (built-in pod field labels, not checked on a real server)
    let server = ApiServer::new();
    let api: Api<Pod> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &pod("p1", Some("node-1")))
        .await
        .unwrap();
    api.create(&PostParams::default(), &pod("p2", Some("node-2")))
        .await
        .unwrap();
    api.create(&PostParams::default(), &pod("p3", None))
        .await
        .unwrap();
    let running = json!({"status": {"phase": "Running"}});
    api.patch_status("p2", &PatchParams::default(), &Patch::Merge(&running))
        .await
        .unwrap();

    let list = api
        .list(&ListParams::default().fields("spec.nodeName=node-1"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["p1"]);
    // A missing field reads as the empty string.
    let list = api
        .list(&ListParams::default().fields("spec.nodeName="))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["p3"]);
    let list = api
        .list(&ListParams::default().fields("status.phase=Running"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["p2"]);
    let list = api
        .list(&ListParams::default().fields("status.phase!=Running"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["p1", "p3"]);
    let s = status(api.list(&ListParams::default().fields("spec.foo=x")).await);
    assert_eq!(
        (s.code, s.message.as_str()),
        (400, "field label not supported: spec.foo")
    );
}

#[tokio::test]
async fn secret_field_selector_supports_type() {
    // L2 (built-in secret field labels, not checked on a real server)
    let server = ApiServer::new();
    let api: Api<Secret> = Api::namespaced(server.client(), "default");
    for (name, type_) in [("plain", "Opaque"), ("custom", "example.com/custom")] {
        let mut s = Secret::default();
        s.metadata.name = Some(name.into());
        s.type_ = Some(type_.into());
        api.create(&PostParams::default(), &s).await.unwrap();
    }
    let list = api
        .list(&ListParams::default().fields("type=example.com/custom"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["custom"]);
    let list = api
        .list(&ListParams::default().fields("type!=example.com/custom"))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["plain"]);
}

// ---------------------------------------------------------------------------------------------
// L3 list resourceVersion, order and document

#[tokio::test]
async fn empty_list_resource_version_is_the_current_global_revision() {
    // L3
    let server = server().await;
    let list = widgets(&server).list(&ListParams::default()).await.unwrap();
    assert!(list.items.is_empty());
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );
    assert!(server.resource_version() > 0);
}

#[tokio::test]
async fn list_resource_version_is_the_global_revision_not_the_newest_item() {
    // L3
    let server = server().await;
    let created = widgets(&server)
        .create(&PostParams::default(), &widget("w", 1))
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    cms.create(&PostParams::default(), &config_map_without_data("later"))
        .await
        .unwrap();
    cms.create(&PostParams::default(), &config_map_without_data("later-2"))
        .await
        .unwrap();

    let list = widgets(&server).list(&ListParams::default()).await.unwrap();
    let list_rv: u64 = list
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(list_rv, server.resource_version());
    assert_eq!(rv(&list.items[0].metadata), rv(&created.metadata));
    assert!(
        list_rv > rv(&created.metadata),
        "list RV {list_rv} should be past the widget's RV"
    );
}

#[tokio::test]
async fn list_items_come_in_namespace_slash_name_byte_order() {
    // L3: the real server listed fake-list-a-b/x, fake-list-a-b/x-y, fake-list-a/x, fake-list-a/x-y.
    let server = server().await;
    create_namespace(&server, "a").await;
    create_namespace(&server, "a-b").await;
    for (ns, name) in [
        ("a", "x-y"),
        ("default", "m"),
        ("a-b", "x-y"),
        ("a", "x"),
        ("a-b", "x"),
        ("default", "b"),
    ] {
        let api: Api<Widget> = Api::namespaced(server.client(), ns);
        api.create(&PostParams::default(), &widget(name, 1))
            .await
            .unwrap();
    }
    let list = Api::<Widget>::all(server.client())
        .list(&ListParams::default())
        .await
        .unwrap();
    let keys: Vec<String> = list
        .items
        .iter()
        .map(|w| {
            format!(
                "{}/{}",
                w.metadata.namespace.as_deref().unwrap(),
                w.metadata.name.as_deref().unwrap()
            )
        })
        .collect();
    assert_eq!(
        keys,
        ["a-b/x", "a-b/x-y", "a/x", "a/x-y", "default/b", "default/m"]
    );
}

#[tokio::test]
async fn custom_resource_list_document_is_widget_list_with_typed_items() {
    // L3, W1: the real server's list document shape for a custom resource.
    let server = server().await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w", 3))
        .await
        .unwrap();
    let list = widgets(&server).list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&list.items), ["w"]);
    let raw = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(raw["kind"], "WidgetList");
    assert_eq!(raw["apiVersion"], "example.com/v1");
    assert_eq!(
        raw["metadata"],
        json!({"continue": "", "resourceVersion": server.resource_version().to_string()})
    );
    assert_eq!(raw["items"][0]["apiVersion"], "example.com/v1");
    assert_eq!(raw["items"][0]["kind"], "Widget");
    assert_eq!(raw["items"][0]["spec"], json!({"size": 3}));
}

#[tokio::test]
async fn builtin_list_document_is_config_map_list_with_untyped_items() {
    // L3, W1 (built-in typed lists leave item TypeMeta empty; not checked on a real server)
    let server = ApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &config_map_without_data("c"))
        .await
        .unwrap();
    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&list.items), ["c"]);
    let raw = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(raw["kind"], "ConfigMapList");
    assert_eq!(raw["apiVersion"], "v1");
    assert_eq!(
        raw["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    let item = raw["items"][0].as_object().unwrap();
    assert!(!item.contains_key("apiVersion"), "{item:?}");
    assert!(!item.contains_key("kind"), "{item:?}");
    assert_eq!(item["metadata"]["name"], "c");
}

// ---------------------------------------------------------------------------------------------
// Namespace scope

#[tokio::test]
async fn all_namespaces_list_returns_every_namespace_and_a_namespaced_list_only_its_own() {
    // L3, R1
    let server = server().await;
    create_namespace(&server, "team").await;
    widgets(&server)
        .create(&PostParams::default(), &widget("w1", 1))
        .await
        .unwrap();
    let team: Api<Widget> = Api::namespaced(server.client(), "team");
    team.create(&PostParams::default(), &widget("w2", 1))
        .await
        .unwrap();

    let all = Api::<Widget>::all(server.client())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(names(&all.items), ["w1", "w2"]);
    assert_eq!(
        server.requests().last().unwrap().path,
        "/apis/example.com/v1/widgets"
    );

    let in_team = team.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&in_team.items), ["w2"]);
    assert_eq!(in_team.items[0].metadata.namespace.as_deref(), Some("team"));
    let in_default = widgets(&server).list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&in_default.items), ["w1"]);
}

#[tokio::test]
async fn builtin_list_across_all_namespaces_includes_every_namespace() {
    // L3, R1
    let server = ApiServer::new();
    for ns in ["default", "kube-system"] {
        let api: Api<ConfigMap> = Api::namespaced(server.client(), ns);
        api.create(
            &PostParams::default(),
            &config_map_without_data(&format!("cm-{ns}")),
        )
        .await
        .unwrap();
    }
    let all = Api::<ConfigMap>::all(server.client())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(names(&all.items), ["cm-default", "cm-kube-system"]);
    assert_eq!(server.requests().last().unwrap().path, "/api/v1/configmaps");
    let system: Api<ConfigMap> = Api::namespaced(server.client(), "kube-system");
    assert_eq!(
        names(&system.list(&ListParams::default()).await.unwrap().items),
        ["cm-kube-system"]
    );
}

// ---------------------------------------------------------------------------------------------
// Metadata-only reads

#[tokio::test]
async fn metadata_only_list_returns_a_partial_object_metadata_list() {
    // L3 (Accept: as=PartialObjectMetadataList)
    let server = server().await;
    let mut w = labelled("w", &[("env", "prod")]);
    w.spec.size = 7;
    widgets(&server)
        .create(&PostParams::default(), &w)
        .await
        .unwrap();
    widgets(&server)
        .create(&PostParams::default(), &widget("v", 1))
        .await
        .unwrap();

    let api: Api<PartialObjectMeta<Widget>> = Api::all(server.client());
    let list = api
        .list(&ListParams::default().labels("env=prod"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("w"));
    assert_eq!(
        list.items[0].metadata.labels.as_ref().unwrap()["env"],
        "prod"
    );

    let raw = server.requests().last().unwrap().response_json().unwrap();
    assert_eq!(raw["kind"], "PartialObjectMetadataList");
    assert_eq!(raw["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        raw["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    let item = raw["items"][0].as_object().unwrap();
    assert_eq!(item["kind"], "PartialObjectMetadata");
    assert_eq!(item["apiVersion"], "meta.k8s.io/v1");
    let mut keys: Vec<&str> = item.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["apiVersion", "kind", "metadata"],
        "metadata only, no spec"
    );
}

#[tokio::test]
async fn metadata_only_get_returns_partial_object_metadata() {
    // G1 (Accept: as=PartialObjectMetadata)
    let server = server().await;
    let created = widgets(&server)
        .create(&PostParams::default(), &widget("w", 7))
        .await
        .unwrap();
    let partial = widgets(&server).get_metadata("w").await.unwrap();
    assert_eq!(partial.metadata.name.as_deref(), Some("w"));
    assert_eq!(partial.metadata.uid, created.metadata.uid);
    assert_eq!(
        partial.metadata.resource_version,
        created.metadata.resource_version
    );
    let types = partial.types.unwrap();
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
    let raw: Value = server.requests().last().unwrap().response_json().unwrap();
    assert!(raw.get("spec").is_none(), "{raw}");

    let api: Api<PartialObjectMeta<Widget>> = Api::namespaced(server.client(), "default");
    let via_api = api.get("w").await.unwrap();
    assert_eq!(via_api.metadata.uid, created.metadata.uid);
    assert_eq!(via_api.types.unwrap().kind, "PartialObjectMetadata");
}

#[tokio::test]
async fn limit_parameter_does_not_break_a_list() {
    // L4 is not modelled: a limit must at least not fail the list (no pagination is asserted).
    let server = labelled_server().await;
    let list = widgets(&server)
        .list(&ListParams::default().limit(500))
        .await
        .unwrap();
    assert_eq!(names(&list.items), ["a", "b", "c", "d", "e"]);
}
