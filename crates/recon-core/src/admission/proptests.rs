//! Property tests of admission reviews (issue 22): `AdmissionReview` bodies, valid, mutated,
//! generated or with their bytes edited, posted (or not) with a JSON `Content-Type` (or not) to
//! a mutating and a validating webhook through [`respond`]. No body makes it panic; the answer is
//! a well-formed `AdmissionReview` whose response carries the request's uid (and a patch only a
//! mutating webhook sends, which applies to the object sent), or an HTTP 4xx with a `Status`,
//! and never that for a review that reads. The wire types read what they write, and no bytes
//! make reading them panic.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use k8s_openapi::api::core::v1::ConfigMap;
use proptest::prelude::*;
use recon_test_fixtures::proptest_config as config;
use serde_json::{Map, Value, json};

use super::{AdmissionDenied, AdmissionResponse, AdmissionReview, AdmissionStatus, respond};
use crate::{AdmissionWebhookAdapter, Config, SyncReconciler};

/// Keys and strings from the reviews' own vocabulary, so that generated values land on the
/// fields the decoders read.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{0,2}",
        prop::sample::select(
            &[
                "uid",
                "kind",
                "version",
                "group",
                "resource",
                "operation",
                "CREATE",
                "UPDATE",
                "DELETE",
                "CONNECT",
                "object",
                "oldObject",
                "metadata",
                "labels",
                "team",
                "nobody",
                "panic",
                "name",
                "namespace",
                "data",
                "userInfo",
                "dryRun",
                "options",
                "ConfigMap",
                "v1",
                "",
                "\0",
                "é",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

/// A JSON value at most `depth` deep, with few nodes.
fn json_value(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Quarters: serde_json (without `float_roundtrip`) may read other decimals back a
        // bit off, which is not what these properties are about.
        (-4_000_000i64..4_000_000).prop_map(|n| Value::from(n as f64 / 4.0)),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((word(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Replaces the node `steps` lead to (each step picks a child modulo their number).
fn replace_node(doc: &mut Value, steps: &[usize], by: Value) {
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

fn config_map(labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "labels": labels}, "data": {"k": "v"}})
}

/// Reviews as kube-apiserver sends them, one per operation.
fn valid_reviews() -> Vec<Value> {
    let request = |operation: &str, object: Value, old: Value| {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "name": "c", "namespace": "default", "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters"], "extra": {"a": ["b"]}},
            "object": object, "oldObject": old, "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}})
    };
    vec![
        request("CREATE", config_map(json!({"app": "a"})), Value::Null),
        request(
            "UPDATE",
            config_map(json!({"team": "nobody"})),
            config_map(json!({})),
        ),
        request("DELETE", Value::Null, config_map(json!({"team": "a"}))),
        request("CONNECT", json!({"kind": "PodExecOptions"}), Value::Null),
        request("CREATE", config_map(json!({"team": "panic"})), Value::Null),
    ]
}

/// A webhook that gives every config map a team label, refuses team `nobody` and panics on
/// team `panic`.
fn team_label() -> SyncReconciler<ConfigMap> {
    SyncReconciler::<ConfigMap>::new("TeamLabel").sync(async |_ctx, cm| {
        let labels = cm.metadata.labels.get_or_insert_default();
        match labels.get("team").map(String::as_str) {
            Some("nobody") => {
                return Err(AdmissionDenied::forbidden("team nobody does not exist").into());
            }
            Some("panic") => panic!("the webhook meets team panic"),
            _ => {}
        }
        labels
            .entry("team".into())
            .or_insert_with(|| "platform".into());
        Ok(())
    })
}

struct Webhooks {
    runtime: tokio::runtime::Runtime,
    mutating: AdmissionWebhookAdapter<ConfigMap>,
    validating: AdmissionWebhookAdapter<ConfigMap>,
    /// The API requests the webhooks made: none, as they only edit the object under review.
    api_requests: Arc<AtomicUsize>,
}

/// A client that answers no request, and counts them in `requests`: the webhooks under test
/// read nothing from the cluster.
fn client_that_answers_nothing(requests: Arc<AtomicUsize>) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        requests.fetch_add(1, Ordering::SeqCst);
        let refused = std::io::Error::other(format!(
            "no API server: {} {}",
            request.method(),
            request.uri()
        ));
        std::future::ready(Err::<http::Response<http_body_util::Full<Bytes>>, _>(
            refused,
        ))
    });
    kube::Client::new(service, "default")
}

thread_local! {
    /// One runtime and pair of webhooks per test thread: kube's client runs on the runtime it
    /// was made in.
    static WEBHOOKS: Webhooks = {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime");
        let api_requests = Arc::new(AtomicUsize::new(0));
        let (mutating, validating) = runtime.block_on(async {
            let client = client_that_answers_nothing(Arc::clone(&api_requests));
            (
                AdmissionWebhookAdapter::new(Config::new(client.clone(), "mutate"), team_label()),
                AdmissionWebhookAdapter::new(Config::new(client, "validate"), team_label())
                    .validating(),
            )
        });
        Webhooks { runtime, mutating, validating, api_requests }
    };
}

/// How a review is sent.
#[derive(Debug, Clone)]
struct Post {
    method: &'static str,
    content_type: Option<&'static [u8]>,
    validating: bool,
}

/// Content types other than `application/json`: with parameters or odd spacing and case (which
/// still are JSON), others, empty, not text, none.
const OTHER_CONTENT_TYPES: &[Option<&[u8]>] = &[
    Some(b"application/json; charset=utf-8"),
    Some(b"APPLICATION/JSON"),
    Some(b" application/json ;"),
    Some(b"text/plain"),
    Some(b"application/yaml"),
    Some(b""),
    Some(b"application/json\xff"),
    None,
];

fn post() -> impl Strategy<Value = Post> {
    let method =
        prop_oneof![8 => Just("POST"), 1 => prop::sample::select(&["GET", "PUT", "DELETE"][..])];
    let content_type = prop_oneof![
        6 => Just(Some(&b"application/json"[..])),
        3 => prop::sample::select(OTHER_CONTENT_TYPES),
    ];
    (method, content_type, any::<bool>()).prop_map(|(method, content_type, validating)| Post {
        method,
        content_type,
        validating,
    })
}

/// A body: a valid review, one with a node replaced, a generated value, or a review's text
/// with bytes edited.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let reviews = valid_reviews();
    let count = reviews.len();
    prop_oneof![
        2 => (0..count).prop_map({
            let reviews = reviews.clone();
            move |i| reviews[i].to_string().into_bytes()
        }),
        // Mostly within the request: the review's own two fields are soon refused.
        4 => (0..count, prop::collection::vec(any::<usize>(), 0..6), json_value(2)).prop_map({
            let reviews = reviews.clone();
            move |(i, steps, by)| {
                let mut review = reviews[i].clone();
                replace_node(&mut review["request"], &steps, by);
                review.to_string().into_bytes()
            }
        }),
        1 => (0..count, prop::collection::vec(any::<usize>(), 0..3), json_value(2)).prop_map({
            let reviews = reviews.clone();
            move |(i, steps, by)| {
                let mut review = reviews[i].clone();
                replace_node(&mut review, &steps, by);
                review.to_string().into_bytes()
            }
        }),
        1 => json_value(3).prop_map(|v| v.to_string().into_bytes()),
        2 => (0..count, prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4)).prop_map(
            move |(i, edits)| {
                let mut bytes = reviews[i].to_string().into_bytes();
                for (at, byte, kind) in edits {
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
        ),
    ]
}

/// Whether `body`, posted as JSON, is a review [`respond`] must decide: JSON (serde skips the
/// fields it does not know without checking their UTF-8, so reading the review alone does not
/// say) that is an `admission.k8s.io/v1` `AdmissionReview` whose request reads.
fn is_decidable(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).is_ok()
        && serde_json::from_slice::<AdmissionReview>(body).is_ok_and(|r| {
            r.api_version == "admission.k8s.io/v1"
                && r.kind == "AdmissionReview"
                && r.request.is_some()
        })
}

fn check_answer(
    post: &Post,
    body: &[u8],
    answer: &http::Response<Bytes>,
) -> Result<(), TestCaseError> {
    let status = answer.status().as_u16();
    let sent: Option<Value> = serde_json::from_slice(body).ok();
    let json: Value = serde_json::from_slice(answer.body())
        .map_err(|e| TestCaseError::fail(format!("{status}: the answer is not JSON: {e}")))?;
    prop_assert_eq!(
        answer
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(|v| v.as_bytes()),
        Some(&b"application/json"[..])
    );
    let posted_json = post.method == "POST"
        && post.content_type.is_some_and(|c| {
            std::str::from_utf8(c).is_ok_and(|c| {
                c.split(';')
                    .next()
                    .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
            })
        });
    if status != 200 {
        // A typed error: a Status naming the HTTP code.
        prop_assert!((400..500).contains(&status), "{}: {}", status, json);
        prop_assert_eq!(&json["kind"], "Status");
        prop_assert_eq!(&json["code"], &json!(status));
        prop_assert!(
            json["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{}",
            json
        );
        prop_assert!(
            json["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{}",
            json
        );
        prop_assert!(
            !(posted_json && is_decidable(body)),
            "a review that reads was refused: {}: {}",
            json,
            String::from_utf8_lossy(body)
        );
        return Ok(());
    }
    prop_assert!(
        posted_json,
        "{} {:?} answered 200",
        post.method,
        post.content_type
    );
    let review: AdmissionReview = serde_json::from_value(json.clone())
        .map_err(|e| TestCaseError::fail(format!("the answer does not read: {e}: {json}")))?;
    prop_assert_eq!(review.api_version.as_str(), "admission.k8s.io/v1");
    prop_assert_eq!(review.kind.as_str(), "AdmissionReview");
    prop_assert!(review.request.is_none());
    let response = review
        .response
        .ok_or_else(|| TestCaseError::fail(format!("no response: {json}")))?;
    let request = sent.as_ref().map(|s| &s["request"]).unwrap_or(&Value::Null);
    prop_assert_eq!(
        Some(response.uid.as_str()),
        request["uid"].as_str(),
        "{}",
        json
    );
    if !response.allowed {
        let code = response.status.as_ref().and_then(|s| s.code);
        prop_assert!(
            code.is_some_and(|c| c >= 400),
            "a refusal without a code: {}",
            json
        );
    }
    if let Some(patch) = &response.patch {
        prop_assert!(!post.validating, "a validating webhook patched: {}", json);
        prop_assert!(response.allowed, "a refusal with a patch: {}", json);
        let mut object = request["object"].clone();
        json_patch::patch(&mut object, &patch.0)
            .map_err(|e| TestCaseError::fail(format!("the patch does not apply: {e}: {json}")))?;
        let patched: ConfigMap = serde_json::from_value(object)
            .map_err(|e| TestCaseError::fail(format!("the patched object does not read: {e}")))?;
        let team = patched.metadata.labels.and_then(|l| l.get("team").cloned());
        prop_assert!(team.is_some(), "the patch sets no team: {}", json);
    }
    Ok(())
}

/// `AdmissionResponse`s of every shape the wire allows.
fn response() -> impl Strategy<Value = AdmissionResponse> {
    let operation = (
        prop::sample::select(&["add", "remove", "replace", "test"][..]),
        "(/[a-c~01]{0,2}){0,3}",
        json_value(1),
    )
        .prop_map(|(op, path, value)| match op {
            "remove" => json!({"op": op, "path": path}),
            _ => json!({"op": op, "path": path, "value": value}),
        });
    let status = (
        prop::option::of(any::<i32>()),
        prop::option::of(word()),
        prop::option::of(word()),
    )
        .prop_map(|(code, message, reason)| AdmissionStatus {
            code,
            message,
            reason,
            ..AdmissionStatus::default()
        });
    (
        word(),
        any::<bool>(),
        prop::option::of(status),
        prop::option::of(prop::collection::vec(operation, 1..4)),
        prop::collection::btree_map(word(), word(), 0..3),
        prop::collection::vec(word(), 0..3),
    )
        .prop_map(
            |(uid, allowed, status, patch, audit, warnings)| AdmissionResponse {
                uid,
                allowed,
                status,
                patch: patch.and_then(|ops| serde_json::from_value(Value::Array(ops)).ok()),
                audit_annotations: audit.into_iter().collect::<BTreeMap<_, _>>(),
                warnings,
            },
        )
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn every_review_is_answered_with_its_uid_or_a_status(post in post(), body in body()) {
        let answer = WEBHOOKS.with(|w| {
            let handler = if post.validating { &w.validating } else { &w.mutating };
            let mut request = http::Request::builder().method(post.method).uri("/webhook");
            if let Some(content_type) = post.content_type {
                request = request.header(http::header::CONTENT_TYPE, content_type);
            }
            let request = request.body(Bytes::from(body.clone())).expect("a request");
            (w.runtime.block_on(respond(handler, request)), w.api_requests.load(Ordering::SeqCst))
        });
        let (answer, api_requests) = answer;
        prop_assert_eq!(api_requests, 0, "the webhooks made API requests");
        check_answer(&post, &body, &answer)?;
    }

    #[test]
    fn responses_read_back_as_written(response in response()) {
        let wire = serde_json::to_vec(&response).expect("a response writes");
        let back: AdmissionResponse = serde_json::from_slice(&wire)
            .map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&wire))))?;
        prop_assert_eq!(back, response);
    }

    #[test]
    fn mangled_responses_and_reviews_never_panic(body in body(), response in response(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..3)) {
        let mut wire = serde_json::to_vec(&response.into_review()).expect("a review writes");
        for (at, byte) in edits {
            let at = at % wire.len();
            wire[at] = byte;
        }
        for bytes in [&wire, &body] {
            if let Ok(review) = serde_json::from_slice::<AdmissionReview>(bytes) {
                // What reads, writes and reads the same.
                let again = serde_json::to_vec(&review).expect("a review writes");
                prop_assert_eq!(serde_json::from_slice::<AdmissionReview>(&again).ok(), Some(review));
            }
        }
    }
}
