//! Property tests of request bodies through the whole server (issue 22): create, update and
//! patch bodies, valid, mutated, of another kind, generated, nested past the decoders' limits,
//! or with their bytes edited or cut short, as JSON or YAML, under the right `Content-Type`,
//! another one, a malformed one or none, to objects that exist and objects that do not (and
//! their `/status`).
//!
//! After every request: the answer is an object or a `Status` kube-apiserver could answer; a
//! request that fails, or a dry run, leaves everything stored as it was; every stored object
//! reads back with `managedFields` that decode.

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::ApiServer;
use crate::proptests::{
    COLLECTIONS, Edit, check_readable, check_stored_as_answered, check_write_answer, config, edits,
    json as json_value, mangle, replace_node, seeded, seeded_server, send, snapshot,
};

/// What a request does, and the `Content-Type` that is right for it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verb {
    Create,
    Update,
    Merge,
    JsonPatch,
    Strategic,
    Apply,
}

impl Verb {
    fn method(self) -> &'static str {
        match self {
            Verb::Create => "POST",
            Verb::Update => "PUT",
            _ => "PATCH",
        }
    }

    fn content_type(self, yaml: bool) -> &'static str {
        match self {
            Verb::Create | Verb::Update if yaml => "application/yaml",
            Verb::Create | Verb::Update => "application/json",
            Verb::Merge => "application/merge-patch+json",
            Verb::JsonPatch => "application/json-patch+json",
            Verb::Strategic => "application/strategic-merge-patch+json",
            Verb::Apply => "application/apply-patch+yaml",
        }
    }
}

/// Content types other than the right one: each body type, parameters, malformed and unknown
/// media types, bytes that are not text.
const OTHER_CONTENT_TYPES: &[&[u8]] = &[
    b"application/json",
    b"application/yaml",
    b"application/merge-patch+json",
    b"application/json-patch+json",
    b"application/strategic-merge-patch+json",
    b"application/apply-patch+yaml",
    b"application/json; charset=utf-8",
    b"application/json;charset=latin1",
    b"APPLICATION/JSON",
    b"application/json, application/yaml",
    b"text/plain",
    b"application/vnd.kubernetes.protobuf",
    b"application/cbor",
    b"application/apply-patch+cbor",
    b"*/*",
    b"application/",
    b";;;",
    b"",
    b"application/json\xff",
];

/// Valid JSON patches of each kind (indexed as [`COLLECTIONS`]), against the seeded objects.
fn valid_json_patches(kind: usize) -> Value {
    match kind {
        0 => json!([{"op": "add", "path": "/data/x", "value": "y"},
                     {"op": "replace", "path": "/metadata/labels", "value": {"a": "b"}}]),
        1 => json!([{"op": "replace", "path": "/spec/replicas", "value": 3},
                     {"op": "add", "path": "/spec/template/spec/containers/-",
                      "value": {"name": "side", "image": "busybox"}}]),
        _ => json!([{"op": "test", "path": "/spec/replicas", "value": 5},
                    {"op": "add", "path": "/spec/tags/-", "value": "t"},
                    {"op": "remove", "path": "/spec/args"}]),
    }
}

/// Valid merge (and strategic merge) patches of each kind.
fn valid_merge_patches(kind: usize) -> Value {
    match kind {
        0 => {
            json!({"metadata": {"labels": {"x": "y", "app": null}}, "data": {"k": null, "n": "1"}})
        }
        1 => json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "main", "image": "nginx:3"}]}}}}),
        _ => {
            json!({"spec": {"replicas": 7, "labels": {"a": null}, "ports": [{"name": "h", "port": 1}]},
                    "status": {"ready": false}})
        }
    }
}

/// Where a request's body starts from.
#[derive(Debug, Clone)]
enum Base {
    /// The target object as the server serves it now (with its resourceVersion).
    Stored,
    /// The valid body of the verb for the target's kind.
    Valid,
    /// The seeded object of another kind.
    OtherKind(usize),
    /// A generated value.
    Generated(Value),
}

/// What is done to the base before it is sent.
#[derive(Debug, Clone)]
enum Change {
    None,
    /// The node `steps` lead to replaced by a value.
    Replace(Vec<usize>, Value),
    /// The node `steps` lead to replaced by arrays (or objects) nested `depth` deep, written
    /// into the text (a value that deep would overflow the stack of this test to build).
    Nest(Vec<usize>, usize, bool),
    /// Bytes edited.
    Edit(Vec<Edit>),
    /// Cut short after this many bytes (modulo the length).
    Truncate(usize),
}

#[derive(Debug, Clone)]
struct Request {
    kind: usize,
    verb: Verb,
    existing: bool,
    status: bool,
    /// `None`: the right `Content-Type`; `Some(None)`: no header; else one of
    /// [`OTHER_CONTENT_TYPES`].
    content_type: Option<Option<usize>>,
    yaml: bool,
    base: Base,
    change: Change,
    query: Vec<&'static str>,
}

fn request() -> impl Strategy<Value = Request> {
    let verb = prop::sample::select(
        &[
            Verb::Create,
            Verb::Update,
            Verb::Merge,
            Verb::JsonPatch,
            Verb::Strategic,
            Verb::Apply,
        ][..],
    );
    let content_type = prop_oneof![
        8 => Just(None),
        1 => Just(Some(None)),
        2 => (0..OTHER_CONTENT_TYPES.len()).prop_map(|i| Some(Some(i))),
    ];
    let base = prop_oneof![
        3 => Just(Base::Stored),
        3 => Just(Base::Valid),
        1 => (0usize..3).prop_map(Base::OtherKind),
        1 => json_value(3).prop_map(Base::Generated),
    ];
    let steps = || prop::collection::vec(any::<usize>(), 0..6);
    let change = prop_oneof![
        2 => Just(Change::None),
        3 => (steps(), json_value(2)).prop_map(|(s, v)| Change::Replace(s, v)),
        1 => (
            steps(),
            prop::sample::select(&[64usize, 100, 126, 127, 128, 129, 1000, 10_000][..]),
            any::<bool>(),
        )
            .prop_map(|(s, d, objects)| Change::Nest(s, d, objects)),
        2 => edits().prop_map(Change::Edit),
        1 => any::<usize>().prop_map(Change::Truncate),
    ];
    let option = prop_oneof![
        3 => prop::sample::select(&["fieldManager=m", "fieldManager=n"][..]),
        2 => prop::sample::select(&["fieldValidation=Strict", "fieldValidation=Ignore"][..]),
        1 => Just("dryRun=All"),
        1 => prop::sample::select(&["force=true", "fieldValidation=bogus", "dryRun=Some"][..]),
    ];
    let query = prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(option, 1..3),
    ];
    (
        (0usize..3, verb, any::<bool>(), prop::bool::weighted(0.15)),
        (content_type, any::<bool>(), base, change, query),
    )
        .prop_map(
            |((kind, verb, existing, status), (content_type, yaml, base, change, query))| Request {
                kind,
                verb,
                existing,
                status,
                content_type,
                yaml,
                base,
                change,
                query,
            },
        )
}

fn name(request: &Request) -> &'static str {
    if request.existing { "obj0" } else { "obj1" }
}

fn uri(request: &Request) -> String {
    let (_, collection) = COLLECTIONS[request.kind];
    let path = match (request.verb, request.status) {
        (Verb::Create, _) => collection.to_owned(),
        (_, false) => format!("{collection}/{}", name(request)),
        (_, true) => format!("{collection}/{}/status", name(request)),
    };
    // An apply needs a field manager (one without is the apply property's to send).
    let mut query = request.query.clone();
    if request.verb == Verb::Apply && !query.iter().any(|q| q.starts_with("fieldManager=")) {
        query.push("fieldManager=apply");
    }
    format!("{path}?{}", query.join("&"))
}

/// The base value of a request's body.
fn base(server: &ApiServer, request: &Request) -> Value {
    let seeded = seeded();
    let object = |kind: usize| {
        let mut object = seeded[kind].1.clone();
        object["metadata"]["name"] = json!(name(request));
        object
    };
    match &request.base {
        Base::Stored => {
            let (_, collection) = COLLECTIONS[request.kind];
            let answer = send(
                server,
                "GET",
                &format!("{collection}/obj0"),
                None,
                Vec::new(),
            );
            let mut stored = answer.json().unwrap_or(Value::Null);
            if request.verb == Verb::Apply
                && let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut)
            {
                // An applied configuration may not carry managedFields.
                meta.remove("managedFields");
            }
            if request.verb == Verb::JsonPatch {
                json!([{"op": "replace", "path": "", "value": stored}])
            } else {
                stored
            }
        }
        Base::Valid => match request.verb {
            Verb::JsonPatch => valid_json_patches(request.kind),
            Verb::Merge | Verb::Strategic => valid_merge_patches(request.kind),
            Verb::Create | Verb::Update | Verb::Apply => object(request.kind),
        },
        Base::OtherKind(kind) => object(*kind),
        Base::Generated(value) => value.clone(),
    }
}

/// A marker no generated value contains, replaced in the text by deep nesting.
const NEST: &str = "\u{1}nest\u{1}";

fn body(server: &ApiServer, request: &Request) -> Vec<u8> {
    let mut value = base(server, request);
    // Only creates, updates and applies take YAML; a patch of another type written as YAML
    // is the wrong body for its content type, which the content types below cover.
    let yaml = request.yaml && matches!(request.verb, Verb::Create | Verb::Update | Verb::Apply);
    let render = |value: &Value| -> Vec<u8> {
        if yaml {
            serde_saphyr::to_string(value)
                .unwrap_or_else(|_| value.to_string())
                .into_bytes()
        } else {
            value.to_string().into_bytes()
        }
    };
    match &request.change {
        Change::None => render(&value),
        Change::Replace(steps, by) => {
            replace_node(&mut value, steps, by.clone());
            render(&value)
        }
        Change::Nest(steps, depth, objects) => {
            replace_node(&mut value, steps, json!(NEST));
            let deep = if *objects {
                format!("{}1{}", "{\"a\":".repeat(*depth), "}".repeat(*depth))
            } else {
                format!("{}{}", "[".repeat(*depth), "]".repeat(*depth))
            };
            // JSON text: YAML reads it too, and the marker is quoted the same way.
            let marker = Value::String(NEST.to_owned()).to_string();
            value.to_string().replace(&marker, &deep).into_bytes()
        }
        Change::Edit(edits) => mangle(render(&value), edits),
        Change::Truncate(at) => {
            let mut bytes = render(&value);
            bytes.truncate(at % (bytes.len() + 1));
            bytes
        }
    }
}

fn run(requests: &[Request]) -> Result<(), TestCaseError> {
    let server = seeded_server();
    for request in requests {
        let (uri, body) = (uri(request), body(&server, request));
        let content_type: Option<&[u8]> = match request.content_type {
            None => Some(request.verb.content_type(request.yaml).as_bytes()),
            Some(None) => None,
            Some(Some(i)) => Some(OTHER_CONTENT_TYPES[i]),
        };
        let at = || {
            let text = String::from_utf8_lossy(&body);
            let shown: String = text.chars().take(400).collect();
            format!(
                "{} {uri} ({:?}) {shown}",
                request.verb.method(),
                content_type.map(String::from_utf8_lossy)
            )
        };
        let before = snapshot(&server);
        let answer = send(
            &server,
            request.verb.method(),
            &uri,
            content_type,
            body.clone(),
        );
        let strategic = content_type.is_some_and(|c| c.starts_with(b"application/strategic"));
        check_write_answer(&answer, COLLECTIONS[request.kind].0, strategic)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
        let after = snapshot(&server);
        if !answer.succeeded() || request.query.contains(&"dryRun=All") {
            prop_assert_eq!(
                &after,
                &before,
                "{} changed the store: {}",
                at(),
                answer.text()
            );
        } else {
            check_stored_as_answered(&server, COLLECTIONS[request.kind].1, &answer)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
        }
        check_readable(&server, &after)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn every_body_is_answered_and_a_failure_stores_nothing(
        requests in prop::collection::vec(request(), 1..4),
    ) {
        run(&requests)?;
    }
}

/// Bodies nested far past every decoder's limit, through each write and body type, served on
/// a 2 MiB thread (a test thread's stack) in a child process, so that a stack overflow is this
/// test's failure rather than the end of the run: each is refused with a 4xx `Status` and
/// nothing is stored.
#[test]
fn deep_bodies_are_refused_on_a_test_threads_stack() {
    const NAME: &str = "service::proptests::deep_bodies_are_refused_on_a_test_threads_stack";
    if !crate::proptests::in_child_process(NAME) {
        return;
    }
    let failures = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let server = seeded_server();
            let before = snapshot(&server);
            let mut failures = Vec::new();
            // Past Go's decoder limit (10000), which reads anything shallower.
            for depth in [10_001, 100_000] {
                for deep in [
                    format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)),
                    "[".repeat(depth),
                ] {
                    for verb in [
                        Verb::Create,
                        Verb::Update,
                        Verb::Merge,
                        Verb::JsonPatch,
                        Verb::Strategic,
                        Verb::Apply,
                    ] {
                        for (kind, (kind_name, collection)) in COLLECTIONS.iter().enumerate() {
                            let path = match verb {
                                Verb::Create => (*collection).to_owned(),
                                _ => format!("{collection}/obj0?fieldManager=deep"),
                            };
                            let mut object = seeded()[kind].1.clone();
                            object["spec"] = json!(NEST);
                            let wrapped = object
                                .to_string()
                                .replace(&Value::String(NEST.to_owned()).to_string(), &deep);
                            for body in [deep.clone(), wrapped] {
                                for yaml in [false, true] {
                                    let answer = send(
                                        &server,
                                        verb.method(),
                                        &path,
                                        Some(verb.content_type(yaml).as_bytes()),
                                        body.clone().into_bytes(),
                                    );
                                    let wrong =
                                        check_write_answer(&answer, kind_name, true).err().or_else(
                                            || answer.succeeded().then(|| "stored".to_owned()),
                                        );
                                    if let Some(why) = wrong {
                                        failures.push(format!(
                                            "{} {path} {depth}: {why}",
                                            verb.method()
                                        ));
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if snapshot(&server) != before {
                failures.push("the store changed".to_owned());
            }
            failures
        })
        .expect("a 2 MiB thread")
        .join()
        .expect("no panic");
    assert!(failures.is_empty(), "{failures:#?}");
}
