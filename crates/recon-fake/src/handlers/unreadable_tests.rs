//! An object whose stored body does not decode, as a value written to etcd behind the server's
//! back leaves one: every request reading it fails as kube-apiserver's does, and nothing else.
//!
//! The answers are those of kube-apiserver 1.36 with a custom resource's etcd value replaced by
//! `{"apiVersion":...,"metadata":{"name":"bad"` (a truncated document): GET, LIST, PUT, merge
//! patch, apply and DELETE of it, a delete-collection, a list across namespaces and a paged list
//! answered `500` with no reason and the decoder's message, `unexpected end of JSON input`; a
//! list selecting another object by name, and a GET of another object, answered as usual;
//! creating an object of its name answered `409 AlreadyExists`. (Its watch cache, which this
//! server does not model, stopped serving the resource; the watches here end as etcd3's watcher
//! ends on a decoding error.)

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::api_server::ApiServer;
use crate::wire::group::GroupResource;

/// What the truncated body decodes to in Go's words.
const GO_MESSAGE: &str = "unexpected end of JSON input";

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn server_with_a_bad_object() -> ApiServer {
    let server = ApiServer::new();
    for (namespace, name) in [("default", "bad"), ("default", "good"), ("other", "fine")] {
        server
            .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": name, "namespace": namespace},
                          "data": {"k": "v"}}))
            .unwrap();
    }
    server.shared.lock().store.put_raw(
        &GroupResource::new("", "configmaps"),
        "default/bad",
        br#"{"data":{"k":"v"},"metadata":{"name":"bad""#,
    );
    server
}

/// Sends a request; the status and the JSON body the server answered with.
async fn send(
    server: &ApiServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (u16, Value) {
    let mut request = http::Request::builder().method(method).uri(path);
    if !body.is_empty() {
        request = request.header(http::header::CONTENT_TYPE, content_type);
    }
    let request = request.body(body.as_bytes().to_vec()).unwrap();
    let _ = server.client().request_text(request).await;
    let last = server.requests().last().cloned().unwrap();
    (
        last.status,
        last.response_json().map_or(Value::Null, Value::from),
    )
}

async fn get(server: &ApiServer, path: &str) -> (u16, Value) {
    send(server, "GET", path, "", "").await
}

/// The plain 500 of a Go error that is not an API status.
fn plain_500() -> (u16, Value) {
    (
        500,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": GO_MESSAGE, "code": 500}),
    )
}

#[tokio::test]
async fn every_read_of_an_unreadable_object_is_the_decoders_500() {
    let server = server_with_a_bad_object();
    assert_eq!(
        get(&server, &format!("{CONFIGMAPS}/bad")).await,
        plain_500()
    );
    let metadata = http::Request::get(format!("{CONFIGMAPS}/bad"))
        .header(
            http::header::ACCEPT,
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        )
        .body(Vec::new())
        .unwrap();
    let _ = server.client().request_text(metadata).await;
    assert_eq!(server.requests().last().unwrap().status, 500);

    for list in [
        CONFIGMAPS.to_owned(),
        "/api/v1/configmaps".to_owned(),
        format!("{CONFIGMAPS}?limit=1"),
        format!("{CONFIGMAPS}?labelSelector=absent%3Dlabel"),
        format!("{CONFIGMAPS}?fieldSelector=metadata.name%3Dbad"),
    ] {
        assert_eq!(get(&server, &list).await, plain_500(), "{list}");
    }
}

#[tokio::test]
async fn every_write_of_an_unreadable_object_is_the_decoders_500_and_changes_nothing() {
    let server = server_with_a_bad_object();
    let bad = format!("{CONFIGMAPS}/bad");
    let put =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"data":{"k":"w"}}"#;
    assert_eq!(
        send(&server, "PUT", &bad, "application/json", put).await,
        plain_500()
    );
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ] {
        assert_eq!(
            send(
                &server,
                "PATCH",
                &bad,
                content_type,
                r#"{"data":{"k":"w"}}"#
            )
            .await,
            plain_500(),
            "{content_type}"
        );
    }
    assert_eq!(
        send(
            &server,
            "PATCH",
            &format!("{bad}?fieldManager=test"),
            "application/apply-patch+yaml",
            put
        )
        .await,
        plain_500()
    );
    assert_eq!(send(&server, "DELETE", &bad, "", "").await, plain_500());
    assert_eq!(
        send(&server, "DELETE", CONFIGMAPS, "", "").await,
        plain_500()
    );

    // `Store.Create` reads the object only to word its 409.
    let (code, body) = send(
        &server,
        "POST",
        CONFIGMAPS,
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"}}"#,
    )
    .await;
    assert_eq!((code, &body["reason"]), (409, &json!("AlreadyExists")));
    assert_eq!(body["message"], json!(r#"configmaps "bad" already exists"#));

    let state = server.shared.lock();
    let stored = state
        .store
        .get(&GroupResource::new("", "configmaps"), "default/bad")
        .unwrap();
    assert!(!stored.readable(), "the bytes are still those written");
    assert!(
        state
            .store
            .get(&GroupResource::new("", "configmaps"), "default/good")
            .is_some(),
        "the delete-collection failed before deleting anything"
    );
}

#[tokio::test]
async fn the_other_objects_are_served_as_before() {
    let server = server_with_a_bad_object();
    let (code, good) = get(&server, &format!("{CONFIGMAPS}/good")).await;
    assert_eq!((code, &good["data"]), (200, &json!({"k": "v"})));

    // A list naming one object reads that key only (`MatchesSingle`); another namespace's list
    // does not read this one's keys.
    for list in [
        format!("{CONFIGMAPS}?fieldSelector=metadata.name%3Dgood"),
        "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother".to_owned(),
        "/api/v1/namespaces/other/configmaps".to_owned(),
    ] {
        let (code, body) = get(&server, &list).await;
        assert_eq!(code, 200, "{list}: {body}");
        assert_eq!(body["items"].as_array().map(Vec::len), Some(1), "{list}");
    }

    let (code, _) = send(
        &server,
        "PATCH",
        &format!("{CONFIGMAPS}/good"),
        "application/merge-patch+json",
        r#"{"data":{"k":"w"}}"#,
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = send(&server, "DELETE", &format!("{CONFIGMAPS}/good"), "", "").await;
    assert_eq!(code, 200);
}

/// The events of a watch that has ended, one JSON document each.
async fn watch_events(server: &ApiServer, query: &str) -> Vec<Value> {
    let request = http::Request::get(format!("{CONFIGMAPS}?watch=true&timeoutSeconds=1&{query}"))
        .body(Vec::new())
        .unwrap();
    let text = server.client().request_text(request).await.unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The ERROR event etcd3's watcher ends with: the decoding error as `NewInternalError`.
fn internal_error_event() -> Value {
    json!({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("Internal error occurred: {GO_MESSAGE}"),
        "reason": "InternalError",
        "details": {"causes": [{"message": GO_MESSAGE}]},
        "code": 500,
    }})
}

#[tokio::test]
async fn a_watch_reaching_an_unreadable_object_ends_with_an_internal_error() {
    let server = server_with_a_bad_object();
    // Initial events are read as a list is: `bad` sorts first, so nothing comes before it.
    assert_eq!(watch_events(&server, "").await, [internal_error_event()]);

    // A watch from an earlier revision replays the write that left the bytes.
    let before = server.shared.lock().store.revision() - 1;
    assert_eq!(
        watch_events(&server, &format!("resourceVersion={before}")).await,
        [internal_error_event()]
    );
    // One that names another object never reads it.
    let events = watch_events(
        &server,
        &format!("resourceVersion={before}&fieldSelector=metadata.name%3Dgood"),
    )
    .await;
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test]
async fn an_open_watch_ends_with_an_internal_error_when_an_object_becomes_unreadable() {
    let server = ApiServer::new();
    server
        .seed(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "c", "namespace": "default"}}))
        .unwrap();
    let from = server.shared.lock().store.revision();
    let watching = {
        let server = server.clone();
        tokio::spawn(async move { watch_events(&server, &format!("resourceVersion={from}")).await })
    };
    while server.shared.lock().watchers.is_empty() {
        tokio::task::yield_now().await;
    }
    {
        let mut state = server.shared.lock();
        state.store.put_raw(
            &GroupResource::new("", "configmaps"),
            "default/c",
            br#"{"metadata":{"name":"c""#,
        );
        state.notify_watchers();
        assert!(state.watchers.is_empty(), "the watch is dropped");
    }
    assert_eq!(watching.await.unwrap(), [internal_error_event()]);
}

#[tokio::test]
async fn controllers_neither_panic_nor_lose_what_they_cannot_read() {
    let server = server_with_a_bad_object();
    // A namespace being deleted whose content includes the unreadable object.
    let (code, _) = send(&server, "DELETE", "/api/v1/namespaces/default", "", "").await;
    assert_eq!(code, 200);
    server.collect_garbage();

    // `deleteAllContent` fails on ConfigMaps: the namespace stays, and says why.
    let (code, namespace) = get(&server, "/api/v1/namespaces/default").await;
    assert_eq!(code, 200, "{namespace}");
    let failure = namespace["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "NamespaceDeletionContentFailure")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(failure["status"], "True", "{namespace}");
    assert!(
        failure["message"]
            .as_str()
            .is_some_and(|m| m.contains(GO_MESSAGE)),
        "{failure}"
    );
    // Their DeleteCollection lists them first, and fails: none is deleted.
    let state = server.shared.lock();
    let configmaps = GroupResource::new("", "configmaps");
    assert!(state.store.get(&configmaps, "default/bad").is_some());
    assert!(state.store.get(&configmaps, "default/good").is_some());
}

#[tokio::test]
async fn a_crd_whose_instance_is_unreadable_waits_and_says_why() {
    let server = ApiServer::new();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                           "listKind": "GadgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]},
    });
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, _) = send(&server, "POST", crds, "application/json", &crd.to_string()).await;
    assert_eq!(code, 201);
    let gadgets = "/apis/example.com/v1/namespaces/default/gadgets";
    let gadget = r#"{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"}}"#;
    let (code, _) = send(&server, "POST", gadgets, "application/json", gadget).await;
    assert_eq!(code, 201);
    server.shared.lock().store.put_raw(
        &GroupResource::new("example.com", "gadgets"),
        "default/g",
        b"[1]",
    );

    let named = format!("{crds}/gadgets.example.com");
    let (code, _) = send(&server, "DELETE", &named, "", "").await;
    assert_eq!(code, 200);
    server.finalize_crds();
    let (code, crd) = get(&server, &named).await;
    assert_eq!(code, 200, "kept while its instances cannot be listed");
    let terminating = crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Terminating")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        (&terminating["reason"], &terminating["message"]),
        (
            &json!("InstanceDeletionFailed"),
            &json!(
                "could not list instances: json: cannot unmarshal array into Go value of type map[string]interface {}"
            )
        )
    );
    // The type is still served; its list fails as the instance does.
    let (code, _) = get(&server, gadgets).await;
    assert_eq!(code, 500);
}
