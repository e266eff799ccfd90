//! Objects nested thousands of levels deep (issue 36, point 7): kube-apiserver stores and serves
//! whatever its decoder reads (10000 levels), and so does the in-memory server, on a test
//! thread's own stack. The custom resource keeps any field in its spec
//! (`fixtures/conformance/crds/widgets.yaml`); the answers of a real kube-apiserver are recorded
//! under `fixtures/conformance/deep/`.
//!
//! An object stored past what Go reads back also stops the resource's watch cache, on a timer
//! (`k8s.io/apiserver` `pkg/storage/cacher`): for 30 seconds (`MaxInternalErrorRetryDuration`
//! of the cacher's reflector) the cache stays ready and stale, its etcd watch failing on the
//! event every 100 ms: a consistent list waits 3 s for it and then reads etcd, failing as a get
//! does; a list with a limit reads etcd at once (`deep/a-list-after-an-object-that-cannot-be-
//! read-back`, which the in-memory server answers alike, without the wait); a list or get at
//! `resourceVersion=0` is served from the stale cache. After that the cacher gives up its watch
//! and cannot list the resource again (`startCaching`): lists and watches without a limit are
//! answered 429 `storage is (re)initializing: failed to list <group>/<version>, Kind=<Kind>:
//! invalid character '{' exceeded max depth` (`Cacher.GetList`, `ready.go`), with a
//! `retryAfterSeconds` of `exp(0.06 × seconds down)` between 1 and 30
//! (`calculateRetryAfterForUnreadyCache`), while gets at `resourceVersion=0` and limited lists
//! go to etcd (500). Neither the stale cache nor the timer is modelled here (the in-memory
//! server reads its store, and fails every read of the object at once), nor recorded: a
//! scenario would wait over 30 seconds, and the retry-after moves with the time it takes.
//!
//! Nothing here builds a deep `serde_json::Value` on the test's side (dropping one recurses
//! once a level): bodies are written as text, and objects read back through a type that skips
//! the spec (serde_json skips without recursion).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use recon_fake::{ApiServer, ManualClock};
use serde::Deserialize;
use serde_json::json;

const WIDGETS: &str = "/apis/conformance.example.com/v1/namespaces/default/widgets";

/// A `Widget` read without its spec and `managedFields` (whose `fieldsV1` mirror the spec).
#[derive(Deserialize, Clone, Debug)]
struct Deep {
    #[serde(rename = "metadata")]
    meta: Meta,
    /// What `kube::Resource` wants; never read.
    #[serde(skip)]
    metadata: ObjectMeta,
}

/// The metadata the tests read.
#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: String,
    generation: i64,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

impl serde::Serialize for Deep {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.metadata.serialize(serializer)
    }
}

impl kube::Resource for Deep {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Widget".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "conformance.example.com".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "widgets".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

async fn server() -> (ApiServer, Api<Deep>) {
    serve(ApiServer::new()).await
}

/// `server` with the widgets CRD installed.
async fn serve(server: ApiServer) -> (ApiServer, Api<Deep>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/conformance/crds/widgets.yaml");
    let text = std::fs::read_to_string(&path).expect("the widgets CRD");
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("a CRD");
    server.install_crd(&crd).await.expect("installed");
    let api = Api::namespaced(server.client(), "default");
    (server, api)
}

/// `levels` objects, each the only field `a` of the one above, around `leaf`: the spec, which
/// makes the whole object `levels + 1` deep.
fn nested(levels: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
}

/// A widget `name` with `spec` (JSON text).
fn widget(name: &str, spec: &str) -> String {
    format!(
        r#"{{"apiVersion":"conformance.example.com/v1","kind":"Widget","metadata":{{"name":"{name}"}},"spec":{spec}}}"#
    )
}

/// A request with a text body; the status and the response's text.
async fn send(
    server: &ApiServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: String,
) -> (u16, String) {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body.into_bytes())
        .expect("a request");
    match server.client().request_text(request).await {
        Ok(text) => (200, text),
        Err(kube::Error::Api(status)) => (status.code, status.message),
        Err(other) => panic!("{other}"),
    }
}

/// Creates the widget `deep` with `spec`, which must succeed; its answer.
async fn create_deep(server: &ApiServer, spec: &str) -> String {
    let (code, created) = send(
        server,
        "POST",
        WIDGETS,
        "application/json",
        widget("deep", spec),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    created
}

/// The spec a response carries, as text (the spec is the last field of a widget).
fn spec_of(text: &str) -> &str {
    let start = text.find(r#""spec":"#).expect("a spec") + r#""spec":"#.len();
    &text[start..text.len() - 1]
}

// A 6001-level spec: created, read, listed, merge-patched, applied, watched and deleted, as on
// kube-apiserver (`deep/a-6001-level-spec-is-served-by-every-verb`).
#[tokio::test]
async fn a_6001_level_spec_is_served_by_every_verb() {
    let (server, api) = server().await;
    let spec = nested(6001, r#""x""#);
    let created = create_deep(&server, &spec).await;
    assert_eq!(spec_of(&created), spec);

    let got = api.get("deep").await.expect("get");
    assert_eq!(got.meta.generation, 1);
    let (_, text) = send(
        &server,
        "GET",
        &format!("{WIDGETS}/deep"),
        "",
        String::new(),
    )
    .await;
    assert_eq!(spec_of(&text), spec);
    let listed = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);

    let labelled = api
        .patch(
            "deep",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"deep": "yes"}}})),
        )
        .await
        .expect("a shallow merge patch");
    assert_eq!(
        (labelled.meta.generation, &labelled.meta.labels["deep"][..]),
        (1, "yes")
    );
    let changed = format!("{{\"spec\":{}}}", nested(6001, r#""y""#));
    let (code, patched) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/deep"),
        "application/merge-patch+json",
        changed,
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(spec_of(&patched), nested(6001, r#""y""#));

    let applied_spec = nested(6001, r#""z""#);
    let (code, applied) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/deep?fieldManager=deep&force=true"),
        "application/apply-patch+yaml",
        widget("deep", &applied_spec),
    )
    .await;
    assert_eq!(code, 200, "{applied}");
    assert_eq!(spec_of(&applied), applied_spec);
    let got = api.get("deep").await.expect("get after apply");
    assert_eq!(got.meta.generation, 3);

    let events: Vec<WatchEvent<Deep>> = api
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .take(1)
        .try_collect()
        .await
        .expect("events");
    assert!(
        matches!(&events[..], [WatchEvent::Added(w)] if w.meta.name == "deep"),
        "{events:?}"
    );

    let deleted = api
        .delete("deep", &DeleteParams::default())
        .await
        .expect("delete");
    // A custom resource's delete answers a `Status` (the CRD's storage does not return the
    // deleted object).
    let status = deleted.right().expect("a status");
    assert_eq!(status.details.map(|d| d.name), Some("deep".to_owned()));
    assert!(api.get_opt("deep").await.expect("get").is_none());
}

// Go's decoder reads 10000 levels: a body deeper is refused when decoded, and nothing is stored.
#[tokio::test]
async fn a_body_deeper_than_go_reads_is_refused() {
    let (server, api) = server().await;
    // The widget around its spec makes 10001 levels.
    let (code, message) = send(
        &server,
        "POST",
        WIDGETS,
        "application/json",
        widget("deep", &nested(10_000, "1")),
    )
    .await;
    assert_eq!(code, 400, "{message}");
    assert!(
        message.contains("invalid character '{' exceeded max depth"),
        "{message}"
    );
    assert!(api.get_opt("deep").await.expect("get").is_none());
}

// The edges, as kube-apiserver 1.36 answers them (`deep/go-s-depth-limit-on-stored-objects`).
// A create's `managedFields` mirror the spec in `fieldsV1`, which sits 4 levels down in the
// object and is 1 level deeper than the spec it mirrors: a spec of `levels` levels is stored
// `levels + 6` deep.
#[tokio::test]
async fn objects_are_stored_as_deep_as_go_reads_them_back() {
    let (server, api) = server().await;
    let create = |name: &str, levels: usize| {
        send(
            &server,
            "POST",
            WIDGETS,
            "application/json",
            widget(name, &nested(levels, r#""x""#)),
        )
    };
    // 9994 levels: stored 10000 deep, read back.
    let (code, created) = create("w9994", 9994).await;
    assert_eq!(code, 200, "{created}");
    assert!(created.contains(r#""managedFields""#));
    assert_eq!(api.get("w9994").await.expect("get").meta.generation, 1);

    // 9995 levels: written 10001 deep, which the decoder refuses: the create fails after the
    // write, and every read of the object fails the same way.
    const TOO_DEEP: &str = "invalid character '{' exceeded max depth";
    let (code, message) = create("w9995", 9995).await;
    assert_eq!((code, &message[..]), (500, TOO_DEEP));
    let (code, message) = send(
        &server,
        "GET",
        &format!("{WIDGETS}/w9995"),
        "",
        String::new(),
    )
    .await;
    assert_eq!((code, &message[..]), (500, TOO_DEEP));
    let (code, message) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w9995"),
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"x":"y"}}}"#.to_owned(),
    )
    .await;
    assert_eq!((code, &message[..]), (500, TOO_DEEP));
    let (code, message) = send(
        &server,
        "DELETE",
        &format!("{WIDGETS}/w9995"),
        "",
        String::new(),
    )
    .await;
    assert_eq!((code, &message[..]), (500, TOO_DEEP));

    // 9999 levels: `fieldsV1` itself would be 10001 deep; the unstructured object does not
    // take the entries, and the object is stored without managedFields (readable again).
    let (code, created) = create("w9999", 9999).await;
    assert_eq!(code, 200, "{created}");
    assert!(
        !created.contains(r#""managedFields""#),
        "{}",
        &created[..300]
    );
    let (code, applied) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/w9999?fieldManager=deep&force=true"),
        "application/apply-patch+yaml",
        widget("w9999", &nested(9999, r#""z""#)),
    )
    .await;
    assert_eq!(code, 200, "{applied}");
    assert!(
        !applied.contains(r#""managedFields""#),
        "{}",
        &applied[..300]
    );
    assert_eq!(spec_of(&applied), nested(9999, r#""z""#));
    let (code, deleted) = send(
        &server,
        "DELETE",
        &format!("{WIDGETS}/w9999"),
        "",
        String::new(),
    )
    .await;
    assert_eq!(code, 200, "{deleted}");
}

// A JSON patch whose copies double the depth each time would build, within a 3 MiB body, an
// object half a million levels deep in memory, past any stack's worth of recursion: the patch
// ends once the object is twice as deep as Go reads, and nothing is stored. kube-apiserver runs
// every copy, and then its patch library cannot write the document out (a member deeper than
// Go's scanner reads): the generic 422 (`applyJSPatch`, `k8s.io/apiserver`
// `pkg/endpoints/handlers/patch.go`).
#[tokio::test]
async fn a_json_patch_doubling_the_depth_is_refused_before_it_runs_away() {
    let (server, api) = server().await;
    let spec = nested(9000, "1");
    create_deep(&server, &spec).await;
    // Each copy puts the whole spec in place of its own leaf, doubling its depth.
    let mut ops = Vec::new();
    let mut levels = 9000;
    while ops.iter().map(String::len).sum::<usize>() < 2 << 20 {
        let path = format!("/spec{}", "/a".repeat(levels));
        ops.push(format!(r#"{{"op":"copy","from":"/spec","path":"{path}"}}"#));
        levels *= 2;
    }
    let (code, message) = send(
        &server,
        "PATCH",
        &format!("{WIDGETS}/deep"),
        "application/json-patch+json",
        format!("[{}]", ops.join(",")),
    )
    .await;
    assert_eq!(code, 422, "{message}");
    assert_eq!(
        message,
        "the server rejected our request due to an error in our request"
    );
    let (_, text) = send(
        &server,
        "GET",
        &format!("{WIDGETS}/deep"),
        "",
        String::new(),
    )
    .await;
    assert_eq!(spec_of(&text), spec);
    assert_eq!(api.get("deep").await.expect("get").meta.generation, 1);
}

// A shallow object and a shallow patch whose copies make the object 10001 levels deep, each
// member within Go's depth: refused when the patched object is decoded, with the object quoted
// whole (`jsonPatcher.applyPatchToCurrentObject`, `k8s.io/apiserver`
// `pkg/endpoints/handlers/patch.go`; recorded in `deep/a-json-patch-past-go-s-depth`). One
// level more in the spec and the patch library cannot write it: the generic 422. Neither is
// stored; nothing deep was ever stored or sent, so this runs on the test's own stack.
#[tokio::test]
async fn a_json_patch_past_go_s_depth_is_refused_quoting_the_object() {
    let (server, api) = server().await;
    create_deep(&server, &nested(50, r#""x""#)).await;
    // 50 levels doubled seven times is 6400; a copy of the spec at the end of a path of 3600
    // (or 3601) makes it 10000 (or 10001).
    let patch = |last: usize| {
        let mut ops = Vec::new();
        let mut levels = 50;
        for _ in 0..7 {
            let path = format!("/spec{}", "/a".repeat(levels));
            ops.push(format!(r#"{{"op":"copy","from":"/spec","path":"{path}"}}"#));
            levels *= 2;
        }
        let path = format!("/spec{}", "/a".repeat(last));
        ops.push(format!(r#"{{"op":"copy","from":"/spec","path":"{path}"}}"#));
        format!("[{}]", ops.join(","))
    };
    let path = format!("{WIDGETS}/deep");
    let (code, message) = send(
        &server,
        "PATCH",
        &path,
        "application/json-patch+json",
        patch(3600),
    )
    .await;
    assert_eq!(code, 422, "{}", &message[..message.len().min(300)]);
    let quoted = r#" "" is invalid: patch: Invalid value: "{\"apiVersion\":\"conformance.example.com/v1\",\"kind\":\"Widget\",\"metadata\":{"#;
    assert!(
        message.starts_with(quoted),
        "{}",
        &message[..message.len().min(300)]
    );
    // The spec (the last member), 10000 levels around its leaf, closes the quoted object.
    let end = format!(
        r#"\"x\"{}}}": couldn't get version/kind; json parse error: invalid character '{{' exceeded max depth"#,
        "}".repeat(10_000)
    );
    assert!(
        message.ends_with(&end),
        "{}",
        &message[message.len() - 300..]
    );
    assert_eq!(
        message.matches(r#"{\"a\":"#).count(),
        10_000,
        "the spec is quoted whole"
    );
    let (code, message) = send(
        &server,
        "PATCH",
        &path,
        "application/json-patch+json",
        patch(3601),
    )
    .await;
    assert_eq!(code, 422, "{message}");
    assert_eq!(
        message,
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(api.get("deep").await.expect("get").meta.generation, 1);
}

// Mutating admission hooks take and give the object as serde_json's value, converted both ways
// without recursion (serde_json's own copy and drop recurse, and the server does neither), on
// the test's stack. On a stopped clock: a round of admission compares the object it parks,
// managedFields times and all, with the one the hooks saw, and a deep object's round in a
// debug build can take longer than the second those times are written to.
#[tokio::test]
async fn a_mutate_hook_sees_a_deep_object() {
    let clock = ManualClock::new("2024-01-01T00:00:00Z".parse().expect("a time"));
    let (server, api) = serve(ApiServer::builder().clock(clock).build()).await;
    server
        .on(recon_fake::Verb::Create, "widgets")
        .mutate(|object| {
            object["metadata"]["labels"] = json!({"hooked": "yes"});
        });
    let spec = nested(6001, r#""x""#);
    let created = create_deep(&server, &spec).await;
    assert_eq!(spec_of(&created), spec);
    let got = api.get("deep").await.expect("get");
    assert_eq!(
        got.meta.labels.get("hooked").map(String::as_str),
        Some("yes")
    );
}

/// How deep the free-form fields below nest: with the object around them and their
/// `managedFields`, the stored objects are as deep as Go reads back (10,000 levels).
const DEEP: usize = 9_990;

// A built-in kind keeps free-form JSON too: a ControllerRevision's `data` (a `RawExtension`)
// nested as deep as Go reads, through every verb and patch type, and as a table.
#[tokio::test]
async fn a_controller_revision_as_deep_as_go_reads_is_served_by_every_verb() {
    let server = ApiServer::new();
    let revisions = "/apis/apps/v1/namespaces/default/controllerrevisions";
    let revision = |data: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"deep"}},"revision":1,"data":{data}}}"#
        )
    };
    let data_of = |text: &str| -> String {
        let start = text.find(r#""data":"#).expect("data") + r#""data":"#.len();
        let end = text.rfind(r#","revision""#).expect("revision");
        text[start..end].to_owned()
    };
    let deep = format!("/{revisions}/deep");
    let deep = &deep[1..];
    let (code, created) = send(
        &server,
        "POST",
        revisions,
        "application/json",
        revision(&nested(DEEP, r#""x""#)),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let data = data_of(&created);
    assert!(
        data == nested(DEEP, r#""x""#),
        "{} … {}",
        &data[..100.min(data.len())],
        &data[data.len().saturating_sub(100)..]
    );
    let (code, got) = send(&server, "GET", deep, "", String::new()).await;
    assert_eq!((code, data_of(&got)), (200, nested(DEEP, r#""x""#)));

    let request = http::Request::builder()
        .uri(revisions)
        .header(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io",
        )
        .body(Vec::new())
        .expect("a request");
    let table = server
        .client()
        .request_text(request)
        .await
        .expect("a table");
    assert!(
        table.contains(r#""kind":"Table""#) && table.contains(r#""deep""#),
        "{}",
        &table[..300.min(table.len())]
    );

    // Every patch type, each adding a label; `data` stays (an update may not change it).
    let labelled = |label: &str| format!(r#"{{"metadata":{{"labels":{{"{label}":"yes"}}}}}}"#);
    let applied = format!(
        r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"deep","labels":{{"apply":"yes"}}}},"revision":1,"data":{}}}"#,
        nested(DEEP, r#""x""#)
    );
    let patches = [
        ("application/merge-patch+json", labelled("merge")),
        (
            "application/strategic-merge-patch+json",
            labelled("strategic"),
        ),
        (
            "application/json-patch+json",
            r#"[{"op":"add","path":"/metadata/labels/json","value":"yes"}]"#.to_owned(),
        ),
        ("application/apply-patch+yaml", applied),
    ];
    for (content_type, body) in patches {
        let (code, patched) = send(
            &server,
            "PATCH",
            &format!("{deep}?fieldManager=deep"),
            content_type,
            body,
        )
        .await;
        assert_eq!(
            code,
            200,
            "{content_type}: {}",
            &patched[..300.min(patched.len())]
        );
        assert!(
            data_of(&patched) == nested(DEEP, r#""x""#),
            "{content_type}"
        );
    }
    let (_, got) = send(&server, "GET", deep, "", String::new()).await;
    for label in ["merge", "strategic", "json", "apply"] {
        assert!(got.contains(&format!(r#""{label}":"yes""#)), "{label}");
    }
    // A change to `data` is refused, the new value quoted (`ValidateControllerRevisionUpdate`;
    // `deep/a-controller-revision-as-deep-as-go-reads`). A strategic merge patch bringing it
    // fails earlier on the real server (`patch/strategic-merge-into-a-raw-extension`, a known
    // gap).
    let (code, message) = send(
        &server,
        "PATCH",
        deep,
        "application/merge-patch+json",
        format!(r#"{{"data":{}}}"#, nested(DEEP, r#""y""#)),
    )
    .await;
    assert_eq!(code, 422, "{}", &message[..300.min(message.len())]);
    assert!(
        message.starts_with(
            r#"ControllerRevision.apps "deep" is invalid: data: Invalid value: {"a":{"a":"#
        ),
        "{}",
        &message[..200]
    );
    assert!(
        message.ends_with(&format!(r#""y"{}: field is immutable"#, "}".repeat(DEEP))),
        "{}",
        &message[message.len() - 200..]
    );
    let (code, listed) = send(&server, "GET", revisions, "", String::new()).await;
    assert_eq!(code, 200);
    assert!(listed.contains(&nested(DEEP, r#""x""#)));
    let (code, deleted) = send(&server, "DELETE", deep, "", String::new()).await;
    assert_eq!(code, 200, "{}", &deleted[..300.min(deleted.len())]);
    let (code, _) = send(&server, "GET", deep, "", String::new()).await;
    assert_eq!(code, 404);
}

/// A GET of `path` answered as `accept` asks; the status and the text.
async fn get_as(server: &ApiServer, path: &str, accept: &str) -> (u16, String) {
    let request = http::Request::builder()
        .uri(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .expect("a request");
    match server.client().request_text(request).await {
        Ok(text) => (200, text),
        Err(kube::Error::Api(status)) => (status.code, status.message),
        Err(other) => panic!("{other}"),
    }
}

// A deep object's metadata is as deep as it (its `managedFields` mirror the spec): served as
// `PartialObjectMetadata` and in tables with either kind of object, its status written through
// the status subresource, and a deep create dry-run.
#[tokio::test]
async fn a_widget_as_deep_as_go_reads_is_served_in_every_form() {
    let (server, _) = server().await;
    let spec = nested(DEEP, r#""x""#);
    create_deep(&server, &spec).await;
    let deep = format!("{WIDGETS}/deep");
    // The create's managedFields entry names each level of the spec.
    let mirrors_spec = |text: &str| text.matches(r#""f:a":{".":{}"#).count() == DEEP - 1;

    let metadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let (code, got) = get_as(&server, &deep, metadata).await;
    assert_eq!(code, 200);
    assert!(
        got.starts_with(r#"{"kind":"PartialObjectMetadata""#)
            && mirrors_spec(&got)
            && !got.contains(r#""spec":{"a""#)
    );
    let (code, listed) = get_as(
        &server,
        WIDGETS,
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, 200);
    assert!(mirrors_spec(&listed));

    let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
    for (include, has_spec) in [("Object", true), ("Metadata", false)] {
        let (code, text) = get_as(
            &server,
            &format!("{WIDGETS}?includeObject={include}"),
            table,
        )
        .await;
        assert_eq!(code, 200, "{include}");
        assert!(mirrors_spec(&text), "{include}");
        assert_eq!(
            text.contains(&format!(r#""spec":{spec}"#)),
            has_spec,
            "{include}"
        );
    }

    let status = nested(DEEP, r#""s""#);
    let (code, patched) = send(
        &server,
        "PATCH",
        &format!("{deep}/status"),
        "application/merge-patch+json",
        format!(r#"{{"status":{status}}}"#),
    )
    .await;
    assert_eq!(code, 200, "{}", &patched[..300.min(patched.len())]);
    assert!(patched.ends_with(&format!(r#""status":{status}}}"#)));
    assert!(patched.contains(&format!(r#""spec":{spec}"#)));

    let (code, created) = send(
        &server,
        "POST",
        &format!("{WIDGETS}?dryRun=All"),
        "application/json",
        widget("dry", &spec),
    )
    .await;
    assert_eq!(code, 200, "{}", &created[..300.min(created.len())]);
    assert_eq!(spec_of(&created), spec);
    let (code, _) = send(&server, "GET", &format!("{WIDGETS}/dry"), "", String::new()).await;
    assert_eq!(code, 404);
}

// A transition rule compares a spec as deep as Go reads with the stored one, on the test's
// stack: a change is refused with the rule's message (worded as
// `schema/cel-rule-fails` records it), a write leaving the spec alone passes.
#[tokio::test]
async fn a_rule_compares_a_spec_as_deep_as_go_reads() {
    let server = ApiServer::new();
    let text = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.conformance.example.com
spec:
  group: conformance.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            x-kubernetes-validations:
            - rule: self == oldSelf
              message: immutable
"#;
    let crd: CustomResourceDefinition = serde_saphyr::from_str(text).expect("a CRD");
    server.install_crd(&crd).await.expect("installed");
    create_deep(&server, &nested(DEEP, r#""x""#)).await;
    let path = format!("{WIDGETS}/deep");
    let patched = spec_stays(&server, &path, DEEP, "Widget.conformance.example.com").await;
    assert_eq!(spec_of(&patched), nested(DEEP, r#""x""#));
}

/// The object at `path` (a `kind` named `deep`), whose spec nests `levels` objects and must
/// not change (`self == oldSelf`, "immutable"): a merge patch changing the deepest field is
/// refused, one adding a label passes; the latter's answer.
async fn spec_stays(server: &ApiServer, path: &str, levels: usize, kind: &str) -> String {
    let merge = "application/merge-patch+json";
    let changed = format!(r#"{{"spec":{}}}"#, nested(levels, r#""y""#));
    let (code, message) = send(server, "PATCH", path, merge, changed).await;
    assert_eq!(
        (code, message),
        (
            422,
            format!(r#"{kind} "deep" is invalid: spec: Invalid value: immutable"#)
        )
    );
    let labelled = r#"{"metadata":{"labels":{"a":"b"}}}"#.to_owned();
    let (code, patched) = send(server, "PATCH", path, merge, labelled).await;
    assert_eq!(code, 200, "{}", &patched[..300.min(patched.len())]);
    patched
}

/// How many objects a deep schema nests below the spec: the CRD is then 9,988 levels deep,
/// as deep as Go reads.
const SCHEMA_DEEP: usize = 4_990;

/// A schema of `levels` objects, each with the one property `a`, around a string.
fn nested_schema(levels: usize) -> String {
    format!(
        r#"{}{{"type":"string"}}{}"#,
        r#"{"type":"object","properties":{"a":"#.repeat(levels),
        "}}".repeat(levels)
    )
}

/// Installs the `burrows` CRD whose spec has `spec_schema` (JSON text), sent as text: no
/// `CustomResourceDefinition` value holds it (serde reads 128 levels).
async fn install_burrows(server: &ApiServer, spec_schema: &str) {
    let crd = format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{{"name":"burrows.deep.example.com"}},"spec":{{"group":"deep.example.com","scope":"Namespaced","names":{{"plural":"burrows","singular":"burrow","kind":"Burrow","listKind":"BurrowList"}},"versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{spec_schema}}}}}}}}}]}}}}"#
    );
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, text) = send(server, "POST", crds, "application/json", crd).await;
    assert_eq!(code, 200, "{}", &text[..300.min(text.len())]);
}

const BURROWS: &str = "/apis/deep.example.com/v1/namespaces/default/burrows";

/// A burrow `deep` with `spec` (JSON text).
fn burrow(spec: &str) -> String {
    format!(
        r#"{{"apiVersion":"deep.example.com/v1","kind":"Burrow","metadata":{{"name":"deep"}},"spec":{spec}}}"#
    )
}

/// Creates the burrow `deep` with `spec` (JSON text); the status and the answer's text.
async fn create_burrow(server: &ApiServer, spec: &str) -> (u16, String) {
    send(server, "POST", BURROWS, "application/json", burrow(spec)).await
}

// A CRD whose schema nests as deep as Go reads is installed, and its objects are checked
// against all of it on the test's stack: one level too deep is refused at the bottom, one
// that fits is created, merge-patched, applied by a second manager and deleted, as on
// kube-apiserver (`deep/a-crd-schema-as-deep-as-go-reads`).
#[tokio::test]
async fn a_schema_as_deep_as_go_reads_is_installed_and_enforced() {
    let server = ApiServer::new();
    install_burrows(&server, &nested_schema(SCHEMA_DEEP)).await;
    let json = "application/json";
    let (code, message) = create_burrow(&server, &nested(SCHEMA_DEEP + 1, r#""x""#)).await;
    let path = format!("spec{}", ".a".repeat(SCHEMA_DEEP));
    assert_eq!(
        (code, message),
        (
            422,
            format!(
                r#"Burrow.deep.example.com "deep" is invalid: {path}: Invalid value: "object": {path} in body must be of type string: "object""#
            )
        )
    );

    let fits = |leaf: &str| nested(SCHEMA_DEEP, leaf);
    let (code, created) = create_burrow(&server, &fits(r#""x""#)).await;
    assert_eq!(code, 200, "{}", &created[..300.min(created.len())]);
    let owned_levels = |text: &str| text.matches(r#""f:a":{".":{}"#).count();
    assert_eq!(owned_levels(&created), SCHEMA_DEEP - 1);
    assert_eq!(created.matches(r#""f:a":{}"#).count(), 1);

    let deep = format!("{BURROWS}/deep");
    let merge = "application/merge-patch+json";
    let patch = format!(r#"{{"spec":{}}}"#, fits(r#""y""#));
    let (code, patched) = send(&server, "PATCH", &deep, merge, patch).await;
    assert_eq!(code, 200, "{}", &patched[..300.min(patched.len())]);
    assert_eq!(spec_of(&patched), fits(r#""y""#));

    let apply = format!("{deep}?fieldManager=deep&force=true");
    let applied = burrow(&fits(r#""z""#));
    let yaml = "application/apply-patch+yaml";
    let (code, applied) = send(&server, "PATCH", &apply, yaml, applied).await;
    assert_eq!(code, 200, "{}", &applied[..300.min(applied.len())]);
    assert_eq!(spec_of(&applied), fits(r#""z""#));
    // The applier owns every level it names; the other manager lost the deepest field, so it
    // keeps the level above as a field of its own (`"f:a":{}`), as recorded.
    let owns = format!(
        r#""fieldsV1":{{"f:spec":{}{{}}{}}},"manager":"deep""#,
        r#"{"f:a":"#.repeat(SCHEMA_DEEP),
        "}".repeat(SCHEMA_DEEP)
    );
    assert!(applied.contains(&owns));
    assert_eq!(owned_levels(&applied), SCHEMA_DEEP - 2);
    assert_eq!(applied.matches(r#""f:a":{}"#).count(), 2);

    let (code, _) = send(&server, "DELETE", &deep, json, String::new()).await;
    assert_eq!(code, 200);
}

// A rule over a spec whose schema is as deep as Go reads, and one on its deepest field, both
// run on the test's stack (worded as `schema/cel-rule-fails` records them).
#[tokio::test]
async fn rules_over_a_schema_as_deep_as_go_reads_are_enforced() {
    let server = ApiServer::new();
    let leaf = r#"{"type":"string","x-kubernetes-validations":[{"rule":"self != 'no'","message":"not no"}]}"#;
    let root = r#"{"type":"object","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"immutable"}],"properties":{"a":"#;
    let schema = format!(
        "{root}{}{leaf}{}",
        r#"{"type":"object","properties":{"a":"#.repeat(SCHEMA_DEEP - 1),
        "}}".repeat(SCHEMA_DEEP)
    );
    install_burrows(&server, &schema).await;
    let (code, message) = create_burrow(&server, &nested(SCHEMA_DEEP, r#""no""#)).await;
    let path = format!("spec{}", ".a".repeat(SCHEMA_DEEP));
    assert_eq!(
        (code, message),
        (
            422,
            format!(
                r#"Burrow.deep.example.com "deep" is invalid: {path}: Invalid value: "no": not no"#
            )
        )
    );
    let (code, _) = create_burrow(&server, &nested(SCHEMA_DEEP, r#""x""#)).await;
    assert_eq!(code, 200);
    let deep = format!("{BURROWS}/deep");
    let patched = spec_stays(&server, &deep, SCHEMA_DEEP, "Burrow.deep.example.com").await;
    assert_eq!(spec_of(&patched), nested(SCHEMA_DEEP, r#""x""#));
}
