//! Property tests of the conversion webhook's answers, which the operator's code writes: a
//! review whose converted object has a node replaced, a generated document, or either with
//! bytes edited, under an HTTP code and content type of any kind. No answer makes the
//! conversion panic; it converts to an object of the asked version, the same kind, and the
//! original's metadata but for labels and annotations (maps of strings), or fails with
//! kube-apiserver's prefix.

use std::sync::Arc;

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{WebhookEndpoint, convert};
use crate::proptests::{Edit, config, edits, json as json_value, mangle, replace_node};
use crate::wire::object::Object;

const TO: &str = "example.com/v1";

fn original() -> Object {
    match json!({"apiVersion": "example.com/v1alpha1", "kind": "Shape",
        "metadata": {"name": "s", "namespace": "ns", "uid": "u", "generation": 3,
            "labels": {"a": "b"}, "annotations": {"n": "m"}},
        "spec": {"size": 1, "legacy": "red"}})
    {
        Value::Object(map) => map,
        _ => Object::new(),
    }
}

/// What the webhook writes back for a review.
#[derive(Debug, Clone)]
enum Answer {
    /// A review of the request's object converted, with the node `steps` lead to replaced.
    Converted(Vec<usize>, Value),
    /// A generated document.
    Generated(Value),
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        4 => (prop::collection::vec(any::<usize>(), 0..5), json_value(2))
            .prop_map(|(steps, by)| Answer::Converted(steps, by)),
        1 => json_value(3).prop_map(Answer::Generated),
    ]
}

/// The body of the webhook's answer to `request`.
fn body(answer: &Answer, request: &[u8], edits: &[Edit]) -> Vec<u8> {
    let review: Value = serde_json::from_slice(request).unwrap_or_default();
    let written = match answer {
        Answer::Converted(steps, by) => {
            let mut object = review["request"]["objects"][0].clone();
            object["apiVersion"] = json!(TO);
            let mut answer = json!({"apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview", "response": {"uid": review["request"]["uid"],
                "result": {"status": "Success"}, "convertedObjects": [object]}});
            replace_node(&mut answer, steps, by.clone());
            answer
        }
        Answer::Generated(value) => value.clone(),
    };
    mangle(written.to_string().into_bytes(), edits)
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn every_answer_converts_faithfully_or_fails_with_the_converters_words(
        answer in answer(),
        edits in prop::option::weighted(0.3, edits()),
        code in prop::sample::select(&[200u16, 200, 200, 201, 403, 404, 500, 503][..]),
        content_type in prop::sample::select(&["application/json", "text/plain", ""][..]),
    ) {
        let edits = edits.unwrap_or_default();
        let handler = move |request: &[u8]| {
            let mut response = http::Response::new(body(&answer, request, &edits));
            *response.status_mut() = http::StatusCode::from_u16(code).unwrap_or_default();
            if let Ok(value) = http::HeaderValue::from_str(content_type) {
                response.headers_mut().insert(http::header::CONTENT_TYPE, value);
            }
            response
        };
        let endpoint = WebhookEndpoint {
            target: "https://hook.example.com/convert".to_owned(),
            handler: Some(Arc::new(handler)),
        };
        match convert(&endpoint, original(), TO) {
            Ok(converted) => {
                prop_assert_eq!(converted.get("apiVersion"), Some(&json!(TO)));
                prop_assert_eq!(converted.get("kind"), Some(&json!("Shape")));
                let (was, is) = (&original()["metadata"], &converted["metadata"]);
                for (key, value) in was.as_object().into_iter().flatten() {
                    if key != "labels" && key != "annotations" {
                        prop_assert_eq!(is.get(key), Some(value), "metadata.{}", key);
                    }
                }
                for key in ["labels", "annotations"] {
                    if let Some(map) = is.get(key) {
                        prop_assert!(
                            map.as_object().is_some_and(|m| m.values().all(Value::is_string)),
                            "metadata.{}: {}", key, map
                        );
                    }
                }
            }
            Err(message) => prop_assert!(
                message.starts_with("conversion webhook for example.com/v1alpha1, Kind=Shape "),
                "{}", message
            ),
        }
    }
}
