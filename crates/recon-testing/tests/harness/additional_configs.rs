//! Writes expected through additional configs (other clusters).

use crate::sprocket::Sprocket;
use recon_core::ResourceReconciler;
use recon_testing::{EventRef, ExpectConfig, Expectations, TestCase, TestEnv};
use serde_json::json;

use crate::support::*;

fn other_cluster(size: &str, note: &str) -> ExpectConfig {
    ExpectConfig {
        expect: Expectations {
            creates: vec![json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config"},
                "data": {"size": size},
            })],
            events: vec![EventRef::normal("Mirrored", note)],
            ..Expectations::default()
        },
        ..ExpectConfig::default()
    }
}

fn mirroring(env: &TestEnv) -> ResourceReconciler<Sprocket> {
    let other = env
        .config_named("other")
        .expect("the case has an `other` config");
    ResourceReconciler::new(env.config(), create_config_map_in(other))
}

#[tokio::test]
async fn writes_to_an_additional_config_are_compared_with_its_expectations() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&sprocket(6))
            .additional_config("other", other_cluster("6", "mirrored")),
        mirroring,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_mismatch_in_an_additional_config_is_reported_under_its_name() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&sprocket(6))
            .additional_config("other", other_cluster("7", "mirrored it")),
        mirroring,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"mirrors\" failed:",
            "additionalConfigs.other.expect.creates[0]: differs (-expected, +actual):",
            "-    \"size\": \"7\"",
            "+    \"size\": \"6\"",
            "additionalConfigs.other.expect.events[0]: differs (-expected, +actual):",
            "-  \"note\": \"mirrored it\",",
            "+  \"note\": \"mirrored\",",
        ],
    );
    assert_eq!(
        mismatches(&report, "mirrors"),
        [
            "additionalConfigs.other.expect.creates[0]",
            "additionalConfigs.other.expect.events[0]"
        ]
    );
}

#[tokio::test]
async fn writes_to_an_additional_config_are_not_expected_in_the_default_one() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&sprocket(6))
            .additional_config("other", ExpectConfig::default()),
        mirroring,
    )
    .await;
    assert_eq!(
        mismatches(&report, "mirrors"),
        [
            "additionalConfigs.other.expect.creates[0]",
            "additionalConfigs.other.expect.events[0]"
        ]
    );
    assert_contains(
        &failure(&report),
        &["additionalConfigs.other.expect.creates[0]: was observed but not expected:"],
    );
}
