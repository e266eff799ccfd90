//! The same case run twice observes the same expectations.

use std::sync::{Arc, Mutex};

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_fake::Verb;
use recon_testing::{Expectations, ReconcilerTests, TestCase};
use serde_json::{Value, json};

use crate::support::*;

/// What one run of a case observed: its expectations and the server's answers to its creates.
type Observation = (Expectations, Vec<Value>);

fn generating_table(runs: Arc<Mutex<Vec<Observation>>>) -> ReconcilerTests {
    ReconcilerTests::new().crd(&Sprocket::crd()).case(
        "creates a config map with a generated name",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .compare_server_fields()
            .verify(move |env, seen| {
                let created: Vec<Value> = env
                    .server()
                    .requests()
                    .iter()
                    .filter(|r| r.verb == Verb::Create)
                    .filter_map(|r| r.response_json())
                    .collect();
                runs.lock().unwrap().push((seen.clone(), created));
                Ok(())
            }),
    )
}

#[tokio::test]
async fn two_runs_of_a_table_observe_the_same_things() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let table = generating_table(runs.clone());
    let first = table.check(with(create_generated)).await;
    let second = table.check(with(create_generated)).await;
    assert_eq!(first, second, "the reports differ");

    let runs = runs.lock().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0], runs[1], "the observations differ");
    let (seen, created) = &runs[0];
    let name = created[0]["metadata"]["name"].as_str().unwrap();
    let uid = created[0]["metadata"]["uid"].as_str().unwrap();
    assert!(name.starts_with("w-") && name.len() > 2, "{name}");
    assert!(!uid.is_empty());
    // The generated name and uid reach the observed status patch, the same in both runs.
    let status = &seen.status_patches[0].patch.as_ref().unwrap()["status"];
    assert_eq!(status["configMap"], json!(name));
    assert_eq!(status["configMapUid"], json!(uid));
}

#[tokio::test]
async fn observations_replayed_as_expectations_pass() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let first = generating_table(runs.clone())
        .check(with(create_generated))
        .await;
    assert!(!first.passed(), "nothing was expected yet");
    let observed = runs.lock().unwrap()[0].0.clone();
    let report = check(
        "creates a config map with a generated name",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .compare_server_fields()
            .expect(observed),
        with(create_generated),
    )
    .await;
    passes(&report);
}
