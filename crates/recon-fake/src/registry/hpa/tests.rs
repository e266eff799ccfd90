use recon_apimachinery::json;

use super::*;

fn object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn annotation<'a>(obj: &'a Object, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

fn rich_v2() -> Object {
    object(json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "annotations": {"team": "a"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 9,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps",
                    "selector": {"matchLabels": {"tier": "<a>&"}}},
                    "target": {"type": "AverageValue", "averageValue": "100m"}}},
            ],
            "behavior": {"scaleDown": {"selectPolicy": "Min",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}},
        },
        "status": {
            "currentReplicas": 3,
            "desiredReplicas": 4,
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": 10}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": 20, "averageValue": "1"}}},
            ],
            "conditions": [{"type": "AbleToScale", "status": "True",
                "lastTransitionTime": "2024-05-01T10:00:00Z", "reason": "Ready"}],
        },
    }))
}

#[test]
fn v2_to_v1_keeps_the_cpu_target_and_annotates_the_rest_as_go_writes_it() {
    let mut obj = rich_v2();
    convert(&mut obj, "v2", "v1");
    assert_eq!(obj["apiVersion"], "autoscaling/v1");
    assert_eq!(
        Value::Object(obj["spec"].as_object().unwrap().clone()),
        json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 9, "targetCPUUtilizationPercentage": 60})
    );
    assert_eq!(
        annotation(&obj, METRICS),
        Some(
            r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100m","selector":{"matchLabels":{"tier":"\u003ca\u003e\u0026"}}}}]"#
        )
    );
    assert_eq!(
        annotation(&obj, CURRENT_METRICS),
        Some(concat!(
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":10,"currentAverageValue":"0"}},"#,
            r#"{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":20,"currentAverageValue":"1"}}]"#
        ))
    );
    assert_eq!(
        annotation(&obj, BEHAVIOR),
        Some(
            r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}"#
        )
    );
    assert_eq!(
        annotation(&obj, CONDITIONS),
        Some(
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T10:00:00Z","reason":"Ready"}]"#
        )
    );
    assert_eq!(annotation(&obj, "team"), Some("a"));
    // The last current CPU utilization is the one v1 shows.
    assert_eq!(
        Value::Object(obj["status"].as_object().unwrap().clone()),
        json!({"currentReplicas": 3, "desiredReplicas": 4, "currentCPUUtilizationPercentage": 20})
    );
}

#[test]
fn v1_to_v2_reads_the_annotations_back_the_cpu_target_last() {
    let mut obj = rich_v2();
    convert(&mut obj, "v2", "v1");
    convert(&mut obj, "v1", "v2");
    let original = rich_v2();
    assert_eq!(obj["apiVersion"], "autoscaling/v2");
    assert_eq!(
        json!(obj["metadata"]["annotations"]),
        json!({"team": "a"}),
        "only the round-trip annotations go"
    );
    let metrics = obj["spec"]["metrics"].as_array().unwrap();
    assert_eq!(metrics[0], original["spec"]["metrics"][1]);
    assert_eq!(metrics[1], original["spec"]["metrics"][0]);
    assert_eq!(obj["spec"]["behavior"], original["spec"]["behavior"]);
    assert_eq!(
        obj["status"]["conditions"],
        original["status"]["conditions"]
    );
    assert_eq!(
        obj["status"]["currentMetrics"][0],
        json!({"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 10, "averageValue": "0"}}})
    );
}

#[test]
fn v1_without_a_target_converts_to_the_default_cpu_metric() {
    let mut obj = object(json!({"spec": {"maxReplicas": 3},
        "status": {"currentReplicas": 0, "desiredReplicas": 0}}));
    convert(&mut obj, "v1", "v2");
    assert_eq!(
        obj["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(
        obj["status"],
        json!({"desiredReplicas": 0}),
        "v2 leaves out a zero currentReplicas"
    );
}

#[test]
fn annotation_members_match_in_any_case_and_values_come_back_canonical() {
    let mut obj = object(json!({
        "metadata": {"annotations": {
            METRICS: concat!(
                r#"[{"TYPE":"External","external":{"MetricName":"q","targetAverageValue":1.5,"#,
                r#""MetricSelector":{"MatchLabels":{"a":"b"},"matchExpressions":[{"key":"c","#,
                r#""Operator":"Exists","values":[]}]}}}]"#
            ),
            BEHAVIOR: r#"{"scaleup":{"selectPolicy":"Disabled","TOLERANCE":"0.10"}}"#,
        }},
        "spec": {"maxReplicas": 3},
    }));
    convert(&mut obj, "v1", "v2");
    assert_eq!(
        obj["spec"]["metrics"][0],
        json!({"type": "External", "external": {
            "metric": {"name": "q", "selector": {"matchLabels": {"a": "b"},
                "matchExpressions": [{"key": "c", "operator": "Exists"}]}},
            "target": {"type": "AverageValue", "averageValue": "1500m"}}})
    );
    assert_eq!(
        obj["spec"]["behavior"],
        json!({"scaleUp": {"selectPolicy": "Disabled", "tolerance": "100m"}})
    );
    assert!(obj["metadata"].get("annotations").is_none());
}

#[test]
fn an_annotation_that_does_not_decode_is_ignored_and_dropped() {
    let mut obj = object(json!({
        "metadata": {"annotations": {
            METRICS: r#"[{"type":"Pods","pods":{"metricName":"m","selector":{"matchLabels":{"a":1}}}}]"#,
            BEHAVIOR: "{}",
            CONDITIONS: "not json",
            CURRENT_METRICS: r#"[{"type":"Pods","pods":{"currentAverageValue":"x"}}]"#,
            "keep": "me",
        }},
        "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 40},
        "status": {"currentCPUUtilizationPercentage": 5},
    }));
    convert(&mut obj, "v1", "v2");
    assert_eq!(json!(obj["metadata"]["annotations"]), json!({"keep": "me"}));
    assert_eq!(
        obj["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 40}}}])
    );
    assert!(obj["spec"].get("behavior").is_none(), "{obj:?}");
    assert_eq!(
        obj["status"]["currentMetrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 5}}}])
    );
    assert!(obj["status"].get("conditions").is_none());
}

#[test]
fn v2_objects_lose_the_round_trip_annotations() {
    let mut obj = object(json!({"metadata": {"annotations": {
        METRICS: "[]",
        "autoscaling.alpha.kubernetes.io/scale-up-tolerance": "0.1",
    }}}));
    drop_round_trip_annotations(&mut obj);
    assert_eq!(json!(obj), json!({"metadata": {}}));
    let mut kept = object(json!({"metadata": {"annotations": {"a": "b"}}}));
    drop_round_trip_annotations(&mut kept);
    assert_eq!(
        json!(kept),
        json!({"metadata": {"annotations": {"a": "b"}}})
    );
}

#[test]
fn field_management_converts_whatever_version_an_object_is_in() {
    let v2 = Value::Object(rich_v2());
    let v1 = convert_value(&v2, "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let back = convert_value(&v1, "autoscaling/v2");
    assert_eq!(back["apiVersion"], "autoscaling/v2");
    assert_eq!(back["spec"]["maxReplicas"], 9);
    assert_eq!(
        convert_value(&json!("text"), "autoscaling/v1"),
        json!("text")
    );
}
