//! Tracking from a reconcile: `Context::track_and_get` and `track_and_list` record that the
//! request being reconciled observes what it read (found or not), as tables whose cases expect
//! those tracks; and the tracker answers who observes an object.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use recon_core::{Reference, Request, SyncReconciler};
use recon_test_fixtures::{Widget, widget};
use recon_testing::{SubReconcilerTestSuite, SubReconcilerTests, TestCase};
use serde_json::{Value, json};

fn config_map(name: &str, labels: Value, size: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": labels},
           "data": {"size": size}})
}

fn the_widget() -> Value {
    let mut w = serde_json::to_value(widget("w", 1)).unwrap();
    w["metadata"]["namespace"] = json!("default");
    w
}

fn with_size(size: i32) -> Value {
    let mut w = the_widget();
    w["spec"]["size"] = json!(size);
    w
}

/// Reads its size from the config map `w-size`, tracking it.
fn size_from_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("SizeFromConfigMap").sync(async |ctx, w| {
        let cm: Option<ConfigMap> = ctx.track_and_get(Some("default"), "w-size").await?;
        let size = cm
            .and_then(|cm| cm.data?.get("size")?.parse().ok())
            .unwrap_or(0);
        w.spec.size = size;
        Ok(())
    })
}

/// Sums the sizes of the config maps labelled `app=w`, tracking the selection.
fn size_from_labelled_config_maps() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("SizeFromConfigMaps").sync(async |ctx, w| {
        let cms: Vec<ConfigMap> = ctx.track_and_list(Some("default"), "app=w").await?;
        w.spec.size = cms
            .iter()
            .filter_map(|cm| cm.data.as_ref()?.get("size")?.parse::<i32>().ok())
            .sum();
        Ok(())
    })
}

fn request() -> Request {
    Request::namespaced("default", "w")
}

fn size_map() -> Reference {
    Reference::of::<ConfigMap>(Some("default"), "w-size")
}

#[test]
fn track_and_get() {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "an object read is tracked by the request",
            TestCase::sub_reconcile(&the_widget())
                .given(&config_map("w-size", json!({}), "7"))
                .expect_resource(&with_size(7))
                .expect_track(request(), size_map()),
        )
        .case(
            "a missing object is tracked too, so its creation re-reconciles",
            TestCase::sub_reconcile(&the_widget())
                .expect_resource(&with_size(0))
                .expect_track(request(), size_map()),
        )
        .case(
            "a track held before the reconcile is not one it made",
            TestCase::sub_reconcile(&the_widget())
                .given_track(
                    request(),
                    Reference::of::<ConfigMap>(Some("default"), "older"),
                )
                .expect_resource(&with_size(0))
                .expect_track(request(), size_map())
                .verify(|env, _| {
                    let tracker = env.config().tracker().clone();
                    let observers = tracker.observers_of(
                        "",
                        "ConfigMap",
                        Some("default"),
                        "older",
                        &Default::default(),
                        env.now(),
                    );
                    if observers == [request()] {
                        Ok(())
                    } else {
                        Err(format!("the given track is not held: {observers:?}"))
                    }
                }),
        )
        .case(
            "a failed read is an error, and the track was made first",
            TestCase::sub_reconcile(&the_widget())
                .reactor(recon_testing::ReactorSpec {
                    verb: "get".into(),
                    resource: "configmaps".into(),
                    group: None,
                    subresource: None,
                    namespace: None,
                    name: None,
                    times: None,
                    fail: recon_testing::FailureSpec::Internal("etcd is unavailable".into()),
                })
                .expect_error("etcd is unavailable")
                .expect_track(request(), size_map()),
        )
        .run(|_| size_from_config_map());
}

#[test]
fn track_and_list() {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "the selection is tracked, whatever it matches",
            TestCase::sub_reconcile(&the_widget())
                .given(&config_map("a", json!({"app": "w"}), "2"))
                .given(&config_map("b", json!({"app": "w"}), "3"))
                .given(&config_map("c", json!({"app": "other"}), "100"))
                .expect_resource(&with_size(5))
                .expect_track(
                    request(),
                    Reference::selecting::<ConfigMap>(Some("default"), "app=w"),
                ),
        )
        .run(|_| size_from_labelled_config_maps());
}

#[test]
fn tracks_in_yaml() {
    let suite = SubReconcilerTestSuite::from_yaml_str(
        "tracks.yaml",
        &format!(
            r#"
crds: [{crd}]
cases:
  - name: a tracked read, as YAML
    resource:
      apiVersion: example.com/v1
      kind: Widget
      metadata: {{name: w, namespace: default}}
      spec: {{size: 1}}
    givenTracks:
      - tracker: {{namespace: default, name: w}}
        reference: {{kind: ConfigMap, namespace: default, selector: "app=w"}}
    expect:
      resource:
        apiVersion: example.com/v1
        kind: Widget
        metadata: {{name: w, namespace: default}}
        spec: {{size: 0}}
      tracks:
        - tracker: {{namespace: default, name: w}}
          reference: {{group: "", kind: ConfigMap, namespace: default, name: w-size}}
"#,
            crd = serde_json::to_string(&Widget::crd()).unwrap()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    suite.run(|_| size_from_config_map());
}
