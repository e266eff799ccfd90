//! The widget webhooks' table tests: what each decides, written with recon-testing, as a Rust
//! table and as a YAML suite (`tests/suites/*.yaml`, one test per file).

use std::path::PathBuf;

use admission_webhook::{Widget, WidgetSpec, mutating_webhook, validating_webhook};
use kube::CustomResourceExt;
use recon_core::AdmissionWebhookAdapter;
use recon_core::admission::AdmissionRequest;
use recon_testing::{
    AdmissionWebhookTestSuite, AdmissionWebhookTests, ResponseSpec, TestCase, TestEnv,
};
use serde_json::json;

fn widget(size: Option<i32>, team: Option<&str>) -> Widget {
    let mut widget = Widget::new(
        "w",
        WidgetSpec {
            size,
            team: team.map(str::to_owned),
        },
    );
    widget.metadata.namespace = Some("default".to_owned());
    widget
}

/// The webhook a case names in `metadata.webhook` (`mutate` or `validate`).
fn webhook(env: &TestEnv) -> AdmissionWebhookAdapter<Widget> {
    let client = env.config().client().clone();
    match env.metadata("webhook").and_then(|v| v.as_str()) {
        Some("validate") => validating_webhook(client),
        _ => mutating_webhook(client),
    }
}

#[test]
fn the_mutating_webhook_defaults_the_size_and_labels_the_team() {
    AdmissionWebhookTests::new()
        .crd(&Widget::crd())
        .case(
            "a new widget gets the default size and its team label",
            TestCase::admit(AdmissionRequest::create(&widget(None, Some("blue"))))
                .expect_response(ResponseSpec::allowed().patch(json!([
                {"op": "add", "path": "/metadata/labels", "value": {"example.com/team": "blue"}},
                {"op": "add", "path": "/spec/size", "value": 1},
            ]))),
        )
        .case(
            "an update that changes the team relabels the widget",
            TestCase::admit(AdmissionRequest::update(&widget(Some(2), Some("blue")), &{
                let mut w = widget(Some(2), Some("green"));
                w.metadata.labels =
                    Some([("example.com/team".to_owned(), "blue".to_owned())].into());
                w
            }))
            .expect_response(ResponseSpec::allowed().patch(json!([
                {"op": "replace", "path": "/metadata/labels/example.com~1team", "value": "green"},
            ]))),
        )
        .case(
            "a delete is never patched",
            TestCase::admit(AdmissionRequest::delete(&widget(None, Some("blue")))),
        )
        .run(|env| mutating_webhook(env.config().client().clone()));
}

#[test]
fn the_validating_webhook_refuses_widgets_that_are_too_large() {
    AdmissionWebhookTests::new()
        .crd(&Widget::crd())
        .case(
            "size 10 is allowed",
            TestCase::admit(AdmissionRequest::create(&widget(Some(10), None))),
        )
        .case(
            "size 11 is refused as invalid",
            TestCase::admit(AdmissionRequest::create(&widget(Some(11), None))).expect_response(
                ResponseSpec::denied(
                    422,
                    "Invalid",
                    "spec.size: Invalid value: 11: must be at most 10",
                ),
            ),
        )
        .case(
            "a missing size is not defaulted by the validating webhook",
            TestCase::admit(AdmissionRequest::create(&widget(None, Some("blue")))),
        )
        .run(|env| validating_webhook(env.config().client().clone()));
}

#[rstest::rstest]
fn widget_suites(#[files("tests/suites/*.yaml")] path: PathBuf) {
    AdmissionWebhookTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .crd(&Widget::crd())
        .run(webhook);
}

// The Widget CRD manifest, kept current (`cargo xtask crds` rewrites it).
#[test]
fn crd_manifest_is_current() {
    let manifest = serde_saphyr::to_string(&Widget::crd()).unwrap();
    recon_testing::assert_generated_file("../../fixtures/crds/widgets.example.com.yaml", &manifest);
}
