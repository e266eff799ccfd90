//! HorizontalPodAutoscalers through both versions served, autoscaling/v1 and v2 (stored as
//! v2), with typed clients of each.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::autoscaling::{v1, v2};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use recon_fake::ApiServer;
use serde_json::json;

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

fn apis(
    server: &ApiServer,
) -> (
    Api<v1::HorizontalPodAutoscaler>,
    Api<v2::HorizontalPodAutoscaler>,
) {
    (
        Api::namespaced(server.client(), "default"),
        Api::namespaced(server.client(), "default"),
    )
}

fn v1_hpa(name: &str, target: Option<i32>) -> v1::HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "targetCPUUtilizationPercentage": target,
        },
    }))
    .unwrap()
}

fn v2_hpa(name: &str) -> v2::HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "512Mi"}}},
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}},
        },
    }))
    .unwrap()
}

fn metrics(hpa: &v2::HorizontalPodAutoscaler) -> serde_json::Value {
    json!(hpa.spec.metrics)
}

#[tokio::test]
async fn a_v1_cpu_target_is_a_v2_metric() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    let created = v1_api
        .create(&PostParams::default(), &v1_hpa("web", Some(50)))
        .await
        .unwrap();
    let spec = created.spec;
    assert_eq!(spec.min_replicas, Some(1), "v1's default");
    assert_eq!(spec.target_cpu_utilization_percentage, Some(50));

    let read = v2_api.get("web").await.unwrap();
    assert_eq!(
        metrics(&read),
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    assert_eq!(read.metadata.annotations, None);
}

#[tokio::test]
async fn a_v1_object_without_a_target_gets_the_80_percent_one() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    v1_api
        .create(&PostParams::default(), &v1_hpa("web", None))
        .await
        .unwrap();
    let read = v1_api.get("web").await.unwrap();
    assert_eq!(read.spec.target_cpu_utilization_percentage, Some(80));
    let read = v2_api.get("web").await.unwrap();
    assert_eq!(
        metrics(&read)[0]["resource"]["target"]["averageUtilization"],
        80
    );
}

#[tokio::test]
async fn what_v1_cannot_express_rides_in_annotations_and_survives_a_v1_update() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    v2_api
        .create(&PostParams::default(), &v2_hpa("web"))
        .await
        .unwrap();

    let mut at_v1 = v1_api.get("web").await.unwrap();
    let annotations = at_v1.metadata.annotations.clone().unwrap();
    assert_eq!(
        annotations[METRICS],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"512Mi"}}]"#
    );
    assert_eq!(
        annotations[BEHAVIOR],
        concat!(
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":"#,
            r#"[{"Type":"Pods","Value":4,"PeriodSeconds":15},"#,
            r#"{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"#,
            r#""ScaleDown":{"StabilizationWindowSeconds":30,"SelectPolicy":"Max","Policies":"#,
            r#"[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
        )
    );
    let spec = &mut at_v1.spec;
    assert_eq!(spec.target_cpu_utilization_percentage, Some(60));
    spec.max_replicas = 9;
    v1_api
        .replace("web", &PostParams::default(), &at_v1)
        .await
        .unwrap();

    let at_v2 = v2_api.get("web").await.unwrap();
    assert_eq!(at_v2.metadata.annotations, None, "v2 never shows them");
    let spec = &at_v2.spec;
    assert_eq!(spec.max_replicas, 9);
    // The annotation's metrics first, then the CPU target.
    assert_eq!(
        metrics(&at_v2),
        json!([
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "512Mi"}}},
            {"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60}}},
        ])
    );
    let scale_down = spec.behavior.as_ref().unwrap().scale_down.as_ref().unwrap();
    assert_eq!(scale_down.stabilization_window_seconds, Some(30));
}

#[tokio::test]
async fn a_v1_status_write_converts_the_current_cpu_utilization() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    v1_api
        .create(&PostParams::default(), &v1_hpa("web", Some(50)))
        .await
        .unwrap();
    let patch = json!({"status": {"currentReplicas": 2, "desiredReplicas": 3,
        "currentCPUUtilizationPercentage": 70}});
    let written = v1_api
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let status = written.status.unwrap();
    assert_eq!((status.current_replicas, status.desired_replicas), (2, 3));
    assert_eq!(status.current_cpu_utilization_percentage, Some(70));
    let status = v2_api.get("web").await.unwrap().status.unwrap();
    assert_eq!(
        json!(status.current_metrics),
        json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70}}}])
    );
}

#[tokio::test]
async fn lists_and_watches_at_v1_convert_every_object() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    let list = v1_api.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    let mut events = v1_api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    v2_api
        .create(&PostParams::default(), &v2_hpa("web"))
        .await
        .unwrap();
    let Some(WatchEvent::Added(added)) = events.try_next().await.unwrap() else {
        panic!("no ADDED event");
    };
    assert_eq!(added.spec.target_cpu_utilization_percentage, Some(60));
    let list = v1_api.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    let annotations = list.items[0].metadata.annotations.clone().unwrap();
    assert!(annotations.contains_key(METRICS), "{annotations:?}");
}

#[tokio::test]
async fn a_v1_apply_is_managed_at_v1() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    let applied = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 4, "targetCPUUtilizationPercentage": 40}});
    v1_api
        .patch(
            "web",
            &PatchParams::apply("tester"),
            &Patch::Apply(&applied),
        )
        .await
        .unwrap();
    let read = v2_api.get("web").await.unwrap();
    let managed = read.metadata.managed_fields.unwrap();
    assert_eq!(managed.len(), 1);
    assert_eq!(managed[0].api_version.as_deref(), Some("autoscaling/v1"));
    assert_eq!(
        json!(managed[0].fields_v1),
        json!({"f:spec": {"f:maxReplicas": {}, "f:scaleTargetRef": {},
            "f:targetCPUUtilizationPercentage": {}}})
    );
}

#[tokio::test]
async fn a_v1_target_below_one_is_refused_as_the_metric_it_converts_to() {
    let server = ApiServer::new();
    let (v1_api, _) = apis(&server);
    let err = v1_api
        .create(&PostParams::default(), &v1_hpa("web", Some(0)))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err:?}");
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: \
         spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"
    );
}

#[tokio::test]
async fn a_seeded_v1_object_is_stored_as_v2() {
    let server = ApiServer::new();
    let (_, v2_api) = apis(&server);
    let seeded = server
        .seed(&json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 4, "targetCPUUtilizationPercentage": 30},
            "status": {"currentReplicas": 2, "desiredReplicas": 2}}))
        .unwrap();
    assert_eq!(seeded["apiVersion"], "autoscaling/v1");
    assert_eq!(seeded["spec"]["targetCPUUtilizationPercentage"], 30);
    assert_eq!(seeded["status"]["currentReplicas"], 2);
    let read = v2_api.get("web").await.unwrap();
    assert_eq!(
        metrics(&read),
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 30}}}])
    );
    assert_eq!(read.status.unwrap().current_replicas, Some(2));
}

#[tokio::test]
async fn a_dry_run_at_v1_answers_in_v1_and_stores_nothing() {
    let server = ApiServer::new();
    let (v1_api, v2_api) = apis(&server);
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let answered = v1_api
        .create(&params, &v1_hpa("web", Some(45)))
        .await
        .unwrap();
    assert_eq!(answered.spec.target_cpu_utilization_percentage, Some(45));
    assert_eq!(answered.spec.min_replicas, Some(1));
    assert!(v2_api.get_opt("web").await.unwrap().is_none());
}
