//! Conversion tables: a hub and a spoke that keeps what it cannot hold in an annotation pass
//! their round trips; a spoke that drops a field is reported as lossy, with the diff.

use kube::CustomResource;
use recon_core::conversion::Conversion;
use recon_testing::{ConversionCase, ConversionTests, assert_round_trips};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const COLOR: &str = "example.com/color";

#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Shape",
    root = "ShapeV1",
    namespaced
)]
struct ShapeV1Spec {
    size: i64,
    color: String,
}

#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "example.com",
    version = "v1alpha1",
    kind = "Shape",
    root = "ShapeV1alpha1",
    namespaced
)]
struct ShapeV1alpha1Spec {
    size: i64,
}

fn up(old: ShapeV1alpha1) -> ShapeV1 {
    let mut metadata = old.metadata;
    let annotations = metadata.annotations.get_or_insert_default();
    let color = annotations.remove(COLOR).unwrap_or_else(|| "red".into());
    if annotations.is_empty() {
        metadata.annotations = None;
    }
    ShapeV1 {
        metadata,
        spec: ShapeV1Spec {
            size: old.spec.size,
            color,
        },
    }
}

fn down(new: ShapeV1) -> ShapeV1alpha1 {
    let mut metadata = new.metadata;
    metadata
        .annotations
        .get_or_insert_default()
        .insert(COLOR.into(), new.spec.color);
    ShapeV1alpha1 {
        metadata,
        spec: ShapeV1alpha1Spec {
            size: new.spec.size,
        },
    }
}

/// Forgets the color on the way down.
fn forgetful_down(new: ShapeV1) -> ShapeV1alpha1 {
    ShapeV1alpha1 {
        metadata: new.metadata,
        spec: ShapeV1alpha1Spec {
            size: new.spec.size,
        },
    }
}

fn v1(size: i64, color: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Shape",
        "metadata": {"name": "s", "namespace": "ns"}, "spec": {"size": size, "color": color}})
}

fn v1alpha1(size: i64, annotations: Option<Value>) -> Value {
    let mut object = json!({"apiVersion": "example.com/v1alpha1", "kind": "Shape",
        "metadata": {"name": "s", "namespace": "ns"}, "spec": {"size": size}});
    if let Some(annotations) = annotations {
        object["metadata"]["annotations"] = annotations;
    }
    object
}

#[test]
fn a_lossless_conversion_passes_its_cases_and_round_trips() {
    let conversion = Conversion::<ShapeV1>::hub().spoke(up, down);
    ConversionTests::new(conversion.clone())
        .case(
            ConversionCase::new(
                "down keeps the color in an annotation",
                v1(3, "blue"),
                "example.com/v1alpha1",
            )
            .expect(v1alpha1(3, Some(json!({COLOR: "blue"})))),
        )
        .case(
            ConversionCase::new(
                "up without the annotation defaults the color",
                v1alpha1(2, None),
                "example.com/v1",
            )
            .expect(v1(2, "red"))
            // v1alpha1 → v1 → v1alpha1 adds the annotation: lossless, but not the same bytes.
            .lossy(),
        )
        .case(
            ConversionCase::new("an unknown version", v1(1, "red"), "example.com/v2")
                .error("no version example.com/v2"),
        )
        .run();
    assert_round_trips(&conversion, [v1(1, "red"), v1(7, "green")]);
}

#[test]
fn a_lossy_conversion_is_reported_with_what_it_lost() {
    let conversion = Conversion::<ShapeV1>::hub().spoke(up, forgetful_down);
    let table = ConversionTests::new(conversion).case(ConversionCase::new(
        "down",
        v1(3, "blue"),
        "example.com/v1alpha1",
    ));
    let failures = table.failures(false);
    assert_eq!(failures.len(), 1, "{failures:?}");
    let report = &failures[0];
    assert!(
        report.starts_with(
            "case \"down\":\nlossy: converted to example.com/v1alpha1 and back to example.com/v1"
        ),
        "{report}"
    );
    assert!(report.contains("-    \"color\": \"blue\","), "{report}");
    assert!(report.contains("+    \"color\": \"red\","), "{report}");
}

#[test]
fn every_mismatch_of_every_case_is_reported() {
    let conversion = Conversion::<ShapeV1>::hub().spoke(up, down);
    let table = ConversionTests::new(conversion)
        .case(
            ConversionCase::new("wrong expectation", v1(3, "blue"), "example.com/v1alpha1")
                .expect(v1alpha1(4, None)),
        )
        .case(
            ConversionCase::new("expected to fail", v1(3, "blue"), "example.com/v1alpha1")
                .error("boom"),
        )
        .case(ConversionCase::new("wrong error", v1(3, "blue"), "example.com/v9").error("boom"))
        .case(ConversionCase::new(
            "wrong error",
            v1(3, "blue"),
            "example.com/v1",
        ));
    let failures = table.failures(false);
    assert_eq!(failures.len(), 4, "{failures:#?}");
    assert!(
        failures[0].contains("the converted object differs:"),
        "{}",
        failures[0]
    );
    assert!(
        failures[1].contains("converted, where it should fail with \"boom\""),
        "{}",
        failures[1]
    );
    assert!(failures[2].contains("not with \"boom\""), "{}", failures[2]);
    assert!(
        failures[3].contains("the name is used by an earlier case"),
        "{}",
        failures[3]
    );
}

#[test]
#[should_panic(expected = "1 of 1 conversion cases failed")]
fn run_panics_on_a_failing_case() {
    ConversionTests::new(Conversion::<ShapeV1>::hub().spoke(up, forgetful_down))
        .case(ConversionCase::new(
            "down",
            v1(3, "blue"),
            "example.com/v1alpha1",
        ))
        .run();
}

/// The CRD of both versions, stored as v1 and converted by a webhook.
fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    use kube::CustomResourceExt;
    let mut crd =
        kube::core::crd::merge_crds(vec![ShapeV1alpha1::crd(), ShapeV1::crd()], "v1").unwrap();
    crd.spec.conversion = Some(
        serde_json::from_value(json!({
            "strategy": "Webhook",
            "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://shape-conversion.example.com/convert"}}
        }))
        .unwrap(),
    );
    crd
}

#[tokio::test]
async fn the_conversion_serves_the_in_memory_server_as_its_webhook() {
    use kube::api::{Api, PostParams};
    use recon_fake::ApiServer;

    let server = ApiServer::new();
    server.install_crd(&crd()).await.unwrap();
    let old: Api<ShapeV1alpha1> = Api::default_namespaced(server.client());
    let new: Api<ShapeV1> = Api::default_namespaced(server.client());
    let mut shape = ShapeV1alpha1::new("s", ShapeV1alpha1Spec { size: 3 });
    shape.metadata.annotations = Some([(COLOR.to_owned(), "blue".to_owned())].into());

    // No webhook yet: the conversion to the storage version fails as an unreachable one does.
    let err = old
        .create(&PostParams::default(), &shape)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("conversion webhook for example.com/v1alpha1, Kind=Shape failed"),
        "{err}"
    );

    server.serve_conversion(
        "shapes.example.com",
        Conversion::<ShapeV1>::hub().spoke(up, down).into_webhook(),
    );
    old.create(&PostParams::default(), &shape).await.unwrap();
    let read = new.get("s").await.unwrap();
    assert_eq!(
        read.spec,
        ShapeV1Spec {
            size: 3,
            color: "blue".into()
        }
    );
    assert!(
        read.metadata.annotations.is_none(),
        "{:?}",
        read.metadata.annotations
    );
    // The server's own inspection reads through a version as a GET does.
    let stored = server
        .stored("example.com/v1alpha1", "Shape", Some("default"), "s")
        .unwrap();
    assert_eq!(stored["spec"], json!({"size": 3}));
    assert_eq!(stored["metadata"]["annotations"][COLOR], "blue");
    let back = old.get("s").await.unwrap();
    assert_eq!(back.spec, ShapeV1alpha1Spec { size: 3 });
    assert_eq!(back.metadata.annotations.unwrap()[COLOR], "blue");
}

#[test]
fn cases_read_from_yaml_run_and_bad_yaml_names_the_line() {
    let conversion = Conversion::<ShapeV1>::hub().spoke(up, down);
    let text = r#"
cases:
- name: down keeps the color
  given: {apiVersion: example.com/v1, kind: Shape, metadata: {name: s, namespace: ns}, spec: {size: 3, color: blue}}
  desiredAPIVersion: example.com/v1alpha1
  expect: {apiVersion: example.com/v1alpha1, kind: Shape, metadata: {name: s, namespace: ns, annotations: {example.com/color: blue}}, spec: {size: 3}}
"#;
    ConversionTests::from_yaml_str(conversion.clone(), "cases.yaml", text)
        .unwrap()
        .run();
    let bad = "cases:\n- name: x\n  given: {}\n  desiredApiVersion: example.com/v1\n";
    let err = ConversionTests::from_yaml_str(conversion, "bad.yaml", bad).unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("bad.yaml: "), "{message}");
    assert!(message.contains("desiredApiVersion"), "{message}");
    assert!(
        message.contains("line 4") || message.contains("4:"),
        "{message}"
    );
}
