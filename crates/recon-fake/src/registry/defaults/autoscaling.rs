//! autoscaling: `SetDefaults_HorizontalPodAutoscaler`, of v2 and of v1.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{default_nil, field_or_new, is_nil};
use crate::wire::object::Object;

/// autoscaling/v2: at least one replica, an 80% CPU target when no metric is given, and, for a
/// `behavior` given, the default scale-up and scale-down rules where it sets none.
pub(super) fn horizontal_pod_autoscaler(obj: &mut Object) {
    // `Convert_v2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`
    // (pkg/apis/autoscaling/v2/conversion.go): what only autoscaling/v1 carries in annotations
    // is dropped whenever a v2 object is decoded.
    crate::registry::hpa::drop_round_trip_annotations(obj);
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_nil(spec, "minReplicas", 1);
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(|m| m.is_empty());
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) else {
        return;
    };
    let up = json!({
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    });
    // No stabilization window: the controller's flag decides it.
    let down = json!({
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    });
    for (key, defaults) in [("scaleUp", up), ("scaleDown", down)] {
        let Some(rules) = field_or_new(behavior, key) else {
            continue;
        };
        if let Value::Object(defaults) = defaults {
            for (field, value) in defaults {
                if is_nil(rules, &field) {
                    rules.insert(field, value);
                }
            }
        }
    }
}

/// autoscaling/v1 (pkg/apis/autoscaling/v1/defaults.go): at least one replica; the CPU target
/// is the conversion's (an 80% one when none is given, see [`crate::registry::hpa`]).
pub(super) fn horizontal_pod_autoscaler_v1(obj: &mut Object) {
    if let Some(spec) = field_or_new(obj, "spec") {
        default_nil(spec, "minReplicas", 1);
    }
}
