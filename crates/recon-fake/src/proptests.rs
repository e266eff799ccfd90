//! What the crate's property tests (issue 22) share: how many cases to run, and generators of
//! JSON documents and of mutations of valid ones.

use proptest::prelude::*;
use recon_apimachinery::json::{Map, Value};

/// How many cases each property runs, and from which seed.
pub(crate) use recon_test_fixtures::proptest_config as config;

/// Runs the test `name` (its full path in the test binary) again in a child process, unless
/// this is that child: `true` in the child, which then does the risky work; in the parent,
/// asserts that the child passed (an abort or a stack overflow there is this test's failure,
/// not the end of the run) and gives `false`.
pub(crate) fn in_child_process(name: &str) -> bool {
    if std::env::var_os("RECON_RISKY_CHILD").is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let child = std::process::Command::new(exe)
        .args(["--exact", name, "--test-threads=1"])
        .env("RECON_RISKY_CHILD", "1")
        .output()
        .expect("the child test runs");
    assert!(
        child.status.success(),
        "the child failed ({}):\n{}\n{}",
        child.status,
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    false
}

/// Object keys and string values from a small vocabulary, so that a generated patch and a
/// generated document name the same fields, and the patch engines' special keys and values
/// (directives, merge keys, `$patch` values) come up often.
pub(crate) fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{0,2}",
        prop::sample::select(
            &[
                "name",
                "spec",
                "metadata",
                "labels",
                "finalizers",
                "containers",
                "ports",
                "containerPort",
                "protocol",
                "env",
                "volumes",
                "template",
                "$patch",
                "replace",
                "delete",
                "merge",
                "$retainKeys",
                "$setElementOrder/containers",
                "$setElementOrder/finalizers",
                "$deleteFromPrimitiveList/finalizers",
                "é",
                "\0",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

/// A JSON document at most `depth` levels deep with a bounded number of nodes.
pub(crate) fn json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..1000).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::vec((word(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map>())),
        ]
    })
}

/// Replaces the node that `steps` leads to in `doc` (each step picks a child modulo the
/// number of children; the walk stops at a leaf or when the steps run out) with `by`.
pub(crate) fn replace_node(doc: &mut Value, steps: &[usize], by: Value) {
    let Some((&step, rest)) = steps.split_first() else {
        *doc = by;
        return;
    };
    match doc {
        Value::Array(items) if !items.is_empty() => {
            let i = step % items.len();
            replace_node(&mut items[i], rest, by);
        }
        Value::Object(map) if !map.is_empty() => {
            let i = step % map.len();
            if let Some(child) = map.values_mut().nth(i) {
                replace_node(child, rest, by);
            }
        }
        _ => *doc = by,
    }
}

/// A valid document from `valid` with one node replaced by a generated one: mutations reach
/// the engines' deeper paths, which arbitrary documents seldom do.
pub(crate) fn mutated(valid: Vec<Value>) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(valid),
        prop::collection::vec(any::<usize>(), 0..6),
        json(2),
    )
        .prop_map(|(mut doc, steps, by)| {
            replace_node(&mut doc, &steps, by);
            doc
        })
}

/// One byte edit of a text: where (modulo its length), which byte, and whether to insert,
/// delete or replace.
pub(crate) type Edit = (usize, u8, u8);

/// Up to three byte edits, for [`mangle`].
pub(crate) fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 0..4)
}

/// `bytes` with `edits` made, in order.
pub(crate) fn mangle(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for &(at, byte, kind) in edits {
        let at = at % (bytes.len() + 1);
        match kind {
            0 => bytes.insert(at, byte),
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ if at < bytes.len() => bytes[at] = byte,
            _ => bytes.push(byte),
        }
    }
    bytes
}

/// A JSON text with bytes inserted, deleted or replaced, to reach the decoders' error paths
/// (including invalid UTF-8, NUL and truncation).
pub(crate) fn mangled(text: String) -> impl Strategy<Value = Vec<u8>> {
    edits().prop_map(move |edits| mangle(text.clone().into_bytes(), &edits))
}

/// The answer to a request sent with [`send`].
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    pub(crate) fn succeeded(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The body as text, for failure messages.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

thread_local! {
    /// The server answers without waiting on anything; a runtime per test thread drives it.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
}

/// Sends a request through the `tower::Service` behind every client of `server` (headers,
/// routing, reactors, handlers, the request log), as a client sending raw bytes would. A
/// `content_type` the `http` crate cannot carry as a header value is sent as no header.
pub(crate) fn send(
    server: &crate::ApiServer,
    method: &str,
    uri: &str,
    content_type: Option<&[u8]>,
    body: Vec<u8>,
) -> Answer {
    use http_body_util::BodyExt;
    let mut request = http::Request::builder().method(method).uri(uri);
    if let Some(value) = content_type.and_then(|c| http::HeaderValue::from_bytes(c).ok()) {
        request = request.header(http::header::CONTENT_TYPE, value);
    }
    let request = request
        .body(kube::client::Body::from(body))
        .expect("a well-formed request");
    let mut service = crate::client_service::FakeService {
        shared: server.shared.clone(),
        origin: crate::RequestOrigin::Client,
        headers: std::sync::Arc::default(),
    };
    RUNTIME.with(|runtime| {
        runtime.block_on(async move {
            let Ok(response) = tower::Service::call(&mut service, request).await;
            let status = response.status().as_u16();
            let Ok(body) = response.into_body().collect().await;
            Answer {
                status,
                body: body.to_bytes().to_vec(),
            }
        })
    })
}

/// A namespaced custom resource, `things.example.com/v1` `Thing`, whose schema has each kind of
/// list and map server-side apply treats differently (a keyed list, a set, an atomic list and
/// map, a granular map, preserved unknown fields), a default, a CEL rule, `allOf`, `anyOf`,
/// `oneOf` and `not`, and a status subresource.
pub(crate) fn thing_crd() -> Value {
    let spec = recon_apimachinery::json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "!has(self.replicas) || self.replicas <= 100"}],
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "not": {"enum": [13]}},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "port"],
                "items": {"type": "object", "required": ["name", "port"], "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"},
                    "host": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}, "allOf": [{"maxItems": 10}]},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "ref": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
                "name": {"type": "string"}, "kind": {"type": "string"}},
                "anyOf": [{"required": ["name"]}, {"required": ["kind"]}],
                "oneOf": [{"required": ["kind"], "properties": {"kind": {"enum": ["K"]}}},
                    {"not": {"required": ["kind"]}}]},
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    let schema = recon_apimachinery::json!({"type": "object", "properties": {
        "spec": spec,
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}});
    recon_apimachinery::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": schema}}]}})
}

/// The resources the server properties write, by kind: the collection path in `default`.
pub(crate) const COLLECTIONS: [(&str, &str); 3] = [
    ("ConfigMap", "/api/v1/namespaces/default/configmaps"),
    ("Deployment", "/apis/apps/v1/namespaces/default/deployments"),
    ("Thing", "/apis/example.com/v1/namespaces/default/things"),
];

/// The objects the server properties' cases start with, one of each kind (as [`COLLECTIONS`]),
/// all named `obj0`, written by the `seed` manager through an ordinary create (an `Update`
/// entry, which appliers conflict with).
pub(crate) fn seeded() -> Vec<(&'static str, Value)> {
    vec![
        (
            COLLECTIONS[0].1,
            recon_apimachinery::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "obj0", "labels": {"app": "seed"}}, "data": {"k": "seed"}}),
        ),
        (
            COLLECTIONS[1].1,
            recon_apimachinery::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "obj0"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                    "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
                        {"name": "main", "image": "nginx:1", "ports": [{"containerPort": 80}]}]}}}}),
        ),
        (
            COLLECTIONS[2].1,
            recon_apimachinery::json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "obj0"},
                "spec": {"replicas": 5, "ports": [{"name": "http", "port": 80}], "tags": ["s"],
                    "args": ["seed"], "labels": {"a": "seed"}, "ref": {"name": "seed"}}}),
        ),
    ]
}

/// A deterministic server with the `Thing` CRD installed and the [`seeded`] objects created,
/// built once per test binary and forked for each case: a fork costs a copy, a build the whole
/// registry.
pub(crate) fn seeded_server() -> crate::ApiServer {
    static TEMPLATE: std::sync::OnceLock<crate::ApiServer> = std::sync::OnceLock::new();
    let now = || crate::ManualClock::new("2024-05-01T10:00:00Z".parse().expect("a timestamp"));
    let server = TEMPLATE.get_or_init(|| {
        let server = crate::ApiServer::builder().clock(now()).seed(22).build();
        let post = |path: &str, object: &Value| {
            let answer = send(
                &server,
                "POST",
                path,
                Some(b"application/json"),
                object.to_string().into_bytes(),
            );
            assert!(answer.succeeded(), "{path}: {}", answer.text());
        };
        post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &thing_crd(),
        );
        for (path, object) in seeded() {
            post(&format!("{path}?fieldManager=seed"), &object);
        }
        server
    });
    server.fork(now())
}

/// What every answer to a write must be: a success carrying an object of `kind`, or a
/// `metav1.Status` whose `code` is the HTTP status, a 4xx or one of the 500s kube-apiserver
/// itself answers (`strategic` admits those of the strategic merge engine, which mirror Go's
/// plain errors and recovered panics).
pub(crate) fn check_write_answer(
    answer: &Answer,
    kind: &str,
    strategic: bool,
) -> Result<(), String> {
    let shown = || format!("{} {}", answer.status, answer.text());
    let Some(Value::Object(body)) = answer.json() else {
        return Err(format!("not a JSON object: {}", shown()));
    };
    let field = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or("");
    if answer.succeeded() {
        let name = body
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if field("kind") != kind || name.is_empty() {
            return Err(format!("a success without a named {kind}: {}", shown()));
        }
        return Ok(());
    }
    let code = body.get("code").and_then(Value::as_u64);
    if field("kind") != "Status"
        || field("apiVersion") != "v1"
        || field("status") != "Failure"
        || code != Some(u64::from(answer.status))
    {
        return Err(format!("a failure without its Status: {}", shown()));
    }
    let message = field("message");
    let known_500 = [
        // etcd3 `Create` refuses a numeric resourceVersion with a plain error (C2).
        "resourceVersion should not be set on objects to be created",
        // `Store.Update` reads the body's resourceVersion with `strconv.ParseUint` and returns
        // its error as it is (`non_numeric_resource_version_on_put_is_500_parse_error`).
        "strconv.ParseUint: parsing ",
        // structured-merge-diff: an applied body that does not fit the schema.
        "failed to create typed patch object",
        // A JSON patch nesting the object past Go's decoder limit: the in-memory server's own
        // answer (kube-apiserver's is a 422 quoting the patched object), in `wire::nesting`.
        "the object nests arrays and objects deeper than",
    ];
    match answer.status {
        400..=499 => Ok(()),
        500 if known_500.iter().any(|m| message.starts_with(m)) => Ok(()),
        500 if strategic && field("reason").is_empty() => Ok(()),
        _ => Err(format!(
            "a failure kube-apiserver does not answer: {}",
            shown()
        )),
    }
}

/// Everything the properties' objects can be stored under, as the server lists it; a write
/// that fails must leave this as it was.
pub(crate) fn snapshot(server: &crate::ApiServer) -> Vec<Value> {
    COLLECTIONS
        .iter()
        .map(|(_, path)| {
            let answer = send(server, "GET", path, None, Vec::new());
            assert_eq!(answer.status, 200, "{path}: {}", answer.text());
            answer.json().unwrap_or(Value::Null)
        })
        .collect()
}

/// Every object of `lists` (a [`snapshot`]) reads back by name as listed, and its
/// `managedFields` decode.
pub(crate) fn check_readable(server: &crate::ApiServer, lists: &[Value]) -> Result<(), String> {
    for ((_, path), list) in COLLECTIONS.iter().zip(lists) {
        let items = list["items"].as_array().cloned().unwrap_or_default();
        for item in items {
            let name = item["metadata"]["name"].as_str().unwrap_or("");
            let answer = send(server, "GET", &format!("{path}/{name}"), None, Vec::new());
            // A built-in list's items leave their TypeMeta empty; a GET fills it in.
            let mut read = answer.json().unwrap_or(Value::Null);
            if let Value::Object(read) = &mut read
                && item.get("kind").is_none()
            {
                read.remove("apiVersion");
                read.remove("kind");
            }
            if answer.status != 200 || read != item {
                return Err(format!(
                    "{path}/{name} does not read back as listed: {} {}",
                    answer.status,
                    answer.text()
                ));
            }
            crate::apply::ManagedFields::from_object(&item)
                .map_err(|e| format!("{path}/{name}: managedFields do not decode: {e}"))?;
        }
    }
    Ok(())
}

/// A write that succeeded stored what it answered: the object reads back as the answer has it.
pub(crate) fn check_stored_as_answered(
    server: &crate::ApiServer,
    collection: &str,
    answer: &Answer,
) -> Result<(), String> {
    let answered = answer.json().unwrap_or(Value::Null);
    let name = answered["metadata"]["name"].as_str().unwrap_or("");
    let read = send(
        server,
        "GET",
        &format!("{collection}/{name}"),
        None,
        Vec::new(),
    );
    if read.json().as_ref() == Some(&answered) {
        Ok(())
    } else {
        Err(format!(
            "stored {} {}, answered {}",
            read.status,
            read.text(),
            answer.text()
        ))
    }
}
