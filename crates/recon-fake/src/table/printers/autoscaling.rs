//! HorizontalPodAutoscalers (pkg/printers/internalversion/printers.go:
//! `printHorizontalPodAutoscaler`, `formatHPAMetrics`), read from autoscaling/v2; one served at
//! autoscaling/v1 is printed as the internal type it came from, converted back to v2 (the CPU
//! target, and the metrics v1 keeps in annotations).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, int_at, list_at, name, str_at, text};
use crate::registry::hpa;
use crate::wire::object::Object;

pub(super) const HORIZONTAL_POD_AUTOSCALER: Printer = Printer {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    columns: &[
        NAME,
        text(
            "Reference",
            "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
        ),
        text(
            "Targets",
            "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.",
        ),
        text(
            "MinPods",
            "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
        ),
        text(
            "MaxPods",
            "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
        ),
        text(
            "Replicas",
            "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
        ),
        AGE,
    ],
    row: hpa_row,
};

fn hpa_row(obj: &Object, now: Timestamp) -> Row {
    let reference = format!(
        "{}/{}",
        str_at(obj, &["spec", "scaleTargetRef", "kind"]),
        str_at(obj, &["spec", "scaleTargetRef", "name"])
    );
    let min = match at(obj, &["spec", "minReplicas"]).and_then(Value::as_i64) {
        Some(n) => n.to_string(),
        None => "<unset>".to_owned(),
    };
    let internal = if str_at(obj, &["apiVersion"]) == "autoscaling/v1" {
        let mut v2 = obj.clone();
        hpa::convert(&mut v2, "v1", "v2");
        Some(v2)
    } else {
        None
    };
    let internal = internal.as_ref().unwrap_or(obj);
    let targets = metrics(
        list_at(internal, &["spec", "metrics"]),
        list_at(internal, &["status", "currentMetrics"]),
    );
    Row::new(vec![
        name(obj),
        Cell::text(reference),
        Cell::text(targets),
        Cell::text(min),
        Cell::Int(int_at(obj, &["spec", "maxReplicas"])),
        Cell::Int(int_at(obj, &["status", "currentReplicas"])),
        age_of(obj, now),
    ])
}

/// A quantity at `key` of `v` as `(*Quantity).String()` writes it: `<nil>` when unset.
fn quantity(v: Option<&Value>, key: &str) -> String {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or("<nil>")
        .to_owned()
}

/// `formatHPAMetrics`: each metric's current value over its target, two at most.
fn metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let ty = spec.get("type").and_then(Value::as_str).unwrap_or("");
        // The source's field in spec and status: `resource`, `pods`, ...
        let field = match ty {
            "External" => "external",
            "Pods" => "pods",
            "Object" => "object",
            "Resource" => "resource",
            "ContainerResource" => "containerResource",
            _ => {
                list.push("<unknown type>".to_owned());
                continue;
            }
        };
        let source = spec.get(field);
        let target = source.and_then(|s| s.get("target"));
        let current = statuses
            .get(i)
            .and_then(|s| s.get(field))
            .filter(|s| s.is_object())
            .map(|s| s.get("current"));
        let has_average_value = target.and_then(|t| t.get("averageValue")).is_some();
        let resource = source
            .and_then(|s| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let unknown = || "<unknown>".to_owned();
        list.push(match field {
            "pods" => format!(
                "{}/{}",
                current.map_or_else(unknown, |c| quantity(c, "averageValue")),
                quantity(target, "averageValue")
            ),
            "external" | "object" if has_average_value => {
                let current = current
                    .flatten()
                    .filter(|c| c.get("averageValue").is_some())
                    .map_or_else(unknown, |c| quantity(Some(c), "averageValue"));
                format!("{current}/{} (avg)", quantity(target, "averageValue"))
            }
            "external" | "object" => format!(
                "{}/{}",
                current.map_or_else(unknown, |c| quantity(c, "value")),
                quantity(target, "value")
            ),
            _ if has_average_value => format!(
                "{resource}: {}/{}",
                current.map_or_else(unknown, |c| quantity(c, "averageValue")),
                quantity(target, "averageValue")
            ),
            _ => {
                let percent = |v: Option<&Value>| {
                    v.and_then(|v| v.get("averageUtilization"))
                        .and_then(Value::as_i64)
                        .map(|p| format!("{p}%"))
                };
                let current = percent(current.flatten()).unwrap_or_else(unknown);
                let target = percent(target).unwrap_or_else(|| "<auto>".to_owned());
                format!("{resource}: {current}/{target}")
            }
        });
    }
    const MAX: usize = 2;
    let count = list.len();
    if count > MAX {
        format!("{} + {} more...", list[..MAX].join(", "), count - MAX)
    } else {
        list.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn metrics_show_current_over_target() {
        let specs = json!([
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "5"}}}
        ]);
        let statuses = json!([
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}
        ]);
        assert_eq!(
            metrics(specs.as_array().unwrap(), statuses.as_array().unwrap()),
            "cpu: 42%/80%, <unknown>/1k + 1 more..."
        );
        assert_eq!(metrics(&[], &[]), "<none>");
    }

    #[test]
    fn v1_prints_its_cpu_target_and_annotated_metrics() {
        let obj = json!({"apiVersion": "autoscaling/v1", "metadata": {"annotations": {
            "autoscaling.alpha.kubernetes.io/metrics": "[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"1k\"}}]"
        }}, "spec": {"targetCPUUtilizationPercentage": 50, "maxReplicas": 3}});
        let row = hpa_row(obj.as_object().unwrap(), Timestamp::UNIX_EPOCH);
        assert_eq!(row.cells[2], Cell::text("<unknown>/1k, cpu: <unknown>/50%"));
    }
}
