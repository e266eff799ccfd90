//! autoscaling/v1 HorizontalPodAutoscalers: stored as autoscaling/v2, whose form stands for
//! the internal type here, and converted on the way in and out as
//! `pkg/apis/autoscaling/v1/conversion.go` converts them.
//!
//! v1 has one metric, a CPU utilization target (`targetCPUUtilizationPercentage`), and one
//! current value of it. The rest rides in annotations, JSON of the older `MetricSpec`,
//! `MetricStatus` and condition types of `k8s.io/api/autoscaling/v1` (the behavior as the
//! internal type, whose fields have no JSON names): written when an object is served at v1,
//! read back (and removed) when one is written at v1. An annotation that does not decode is
//! ignored, and dropped all the same.

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

use crate::gotype::{self, GoType};
use crate::wire::object::{Object, list_items};

/// `MetricSpecsAnnotation` (pkg/apis/autoscaling/annotations.go).
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `MetricStatusesAnnotation`.
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `HorizontalPodAutoscalerConditionsAnnotation`.
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `BehaviorSpecsAnnotation`.
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// The annotations `DropRoundTripHorizontalPodAutoscalerAnnotations`
/// (pkg/apis/autoscaling/helpers.go) removes.
const ROUND_TRIP: [&str; 6] = [
    METRICS,
    BEHAVIOR,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    CURRENT_METRICS,
    CONDITIONS,
];

/// The struct a label selector is written as.
const LABEL_SELECTOR: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector";

/// Converts a HorizontalPodAutoscaler from `from` to `to` (each `v1` or `v2`), `apiVersion`
/// included.
pub(crate) fn convert(obj: &mut Object, from: &str, to: &str) {
    match (from, to) {
        ("v2", "v1") => to_v1(obj),
        ("v1", "v2") => from_v1(obj),
        _ => {}
    }
    obj.insert(
        "apiVersion".into(),
        Value::String(format!("autoscaling/{to}")),
    );
}

/// [`convert`] of an object, whatever version it is in, into `api_version`: what field
/// management compares a manager's fields in.
pub(crate) fn convert_value(obj: &Value, api_version: &str) -> Value {
    let Value::Object(map) = obj else {
        return obj.clone();
    };
    let version = |api_version: &str| {
        api_version
            .strip_prefix("autoscaling/")
            .unwrap_or(api_version)
            .to_owned()
    };
    let from = version(map.get("apiVersion").and_then(Value::as_str).unwrap_or(""));
    let mut converted = map.clone();
    convert(&mut converted, &from, &version(api_version));
    Value::Object(converted)
}

/// `DropRoundTripHorizontalPodAutoscalerAnnotations`: the annotations that carry what v1
/// cannot express removed (no annotations left, none at all).
pub(crate) fn drop_round_trip_annotations(obj: &mut Object) {
    let Some(Value::Object(meta)) = obj.get_mut("metadata") else {
        return;
    };
    let Some(Value::Object(annotations)) = meta.get_mut("annotations") else {
        return;
    };
    if !ROUND_TRIP.iter().any(|key| annotations.contains_key(key)) {
        return;
    }
    for key in ROUND_TRIP {
        annotations.remove(key);
    }
    if annotations.is_empty() {
        meta.remove("annotations");
    }
}

fn get<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    get(value, path).and_then(Value::as_str).unwrap_or("")
}

/// Whether a v2 metric is the CPU utilization target v1 has a field for (a `Resource` metric
/// named `cpu` with an `averageUtilization`).
fn is_cpu_utilization(metric: &Value) -> bool {
    text(metric, &["type"]) == "Resource"
        && text(metric, &["resource", "name"]) == "cpu"
        && get(metric, &["resource", "target", "averageUtilization"]).is_some()
}

// ---- v2 to v1 ----------------------------------------------------------------------------

/// `Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler`.
fn to_v1(obj: &mut Object) {
    let hpa = Value::Object(std::mem::take(obj));
    let spec = hpa.get("spec").cloned().unwrap_or(Value::Null);
    let status = hpa.get("status").cloned().unwrap_or(Value::Null);
    let Value::Object(mut out) = hpa else {
        return;
    };
    drop_round_trip_annotations(&mut out);
    let mut added = Map::new();

    let metrics = list_items(spec.get("metrics"));
    let others: Vec<String> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(|metric| metric_v1(metric, Half::Spec))
        .collect();
    if !others.is_empty() {
        added.insert(METRICS.into(), Value::String(array(&others)));
    }
    let current = list_items(status.get("currentMetrics"));
    if !current.is_empty() {
        let written: Vec<String> = current
            .iter()
            .map(|metric| metric_v1(metric, Half::Status))
            .collect();
        added.insert(CURRENT_METRICS.into(), Value::String(array(&written)));
    }
    if let Some(behavior) = get(&spec, &["behavior"]) {
        added.insert(BEHAVIOR.into(), Value::String(behavior_internal(behavior)));
    }
    let conditions = list_items(status.get("conditions"));
    if !conditions.is_empty() {
        let written: Vec<String> = conditions.iter().map(condition_v1).collect();
        added.insert(CONDITIONS.into(), Value::String(array(&written)));
    }
    if !added.is_empty() {
        let meta = out
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if !annotations.is_object() {
                *annotations = Value::Object(Map::new());
            }
            if let Value::Object(annotations) = annotations {
                annotations.extend(added);
            }
        }
    }

    // `Convert_autoscaling_HorizontalPodAutoscalerSpec_To_v1_HorizontalPodAutoscalerSpec`.
    let mut v1_spec = Map::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = get(&spec, &[key]) {
            v1_spec.insert(key.into(), v.clone());
        }
    }
    if let Some(target) = metrics
        .iter()
        .find(|m| is_cpu_utilization(m))
        .and_then(|m| get(m, &["resource", "target", "averageUtilization"]).cloned())
    {
        v1_spec.insert("targetCPUUtilizationPercentage".into(), target);
    }
    out.insert("spec".into(), Value::Object(v1_spec));

    // `Convert_autoscaling_HorizontalPodAutoscalerStatus_To_v1_HorizontalPodAutoscalerStatus`:
    // the last current CPU utilization is the one kept.
    let mut v1_status = Map::new();
    for key in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(v) = get(&status, &[key]) {
            v1_status.insert(key.into(), v.clone());
        }
    }
    if let Some(utilization) = current
        .iter()
        .filter(|m| text(m, &["type"]) == "Resource" && text(m, &["resource", "name"]) == "cpu")
        .filter_map(|m| get(m, &["resource", "current", "averageUtilization"]))
        .next_back()
    {
        v1_status.insert(
            "currentCPUUtilizationPercentage".into(),
            utilization.clone(),
        );
    }
    out.insert("status".into(), Value::Object(v1_status));
    if let Some(name) = gotype::kind_struct("autoscaling", "v1", "HorizontalPodAutoscaler") {
        gotype::fill_zero_fields_of(name, &mut out);
    }
    *obj = out;
}

/// A JSON object of already written members, in order.
fn object(members: &[(&str, String)]) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&go_json_string(key));
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

fn array(items: &[String]) -> String {
    format!("[{}]", items.join(","))
}

/// A value as Go writes it: a string escaped as `encoding/json` does, anything else as is.
fn scalar(value: &Value) -> String {
    let mut out = String::new();
    gotype::write_value(None, value, &mut out);
    out
}

/// The member `key` of an optional (`omitempty`) value, when it is set.
fn optional(members: &mut Vec<(&'static str, String)>, key: &'static str, value: Option<&Value>) {
    if let Some(v) = value {
        members.push((key, scalar(v)));
    }
}

/// A `resource.Quantity` that is not a pointer: `"0"` when unset.
fn quantity(value: Option<&Value>) -> String {
    value.map_or_else(|| go_json_string("0"), scalar)
}

/// A `*metav1.LabelSelector` (`omitempty`).
fn selector(members: &mut Vec<(&'static str, String)>, key: &'static str, value: Option<&Value>) {
    if let Some(v) = value {
        let mut out = String::new();
        gotype::write_value(Some(&GoType::Struct(LABEL_SELECTOR.into())), v, &mut out);
        members.push((key, out));
    }
}

/// `autoscalingv1.CrossVersionObjectReference` of a v2 one: kind, name, apiVersion
/// (`omitempty`).
fn reference(value: Option<&Value>) -> String {
    let v = value.unwrap_or(&Value::Null);
    let mut members = vec![
        ("kind", go_json_string(text(v, &["kind"]))),
        ("name", go_json_string(text(v, &["name"]))),
    ];
    let api_version = text(v, &["apiVersion"]);
    if !api_version.is_empty() {
        members.push(("apiVersion", go_json_string(api_version)));
    }
    object(&members)
}

/// Which half of a v2 metric is converted: a spec's `target` or a status's `current`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    /// `autoscalingv1.MetricSpec`.
    Spec,
    /// `autoscalingv1.MetricStatus`.
    Status,
}

/// A v2 metric as `autoscalingv1.MetricSpec` or, for a current metric,
/// `autoscalingv1.MetricStatus` (the conversions of their sources in
/// pkg/apis/autoscaling/v1/conversion.go).
fn metric_v1(metric: &Value, half: Half) -> String {
    let at = match half {
        Half::Spec => "target",
        Half::Status => "current",
    };
    let name = |spec: &'static str, status: &'static str| match half {
        Half::Spec => spec,
        Half::Status => status,
    };
    let metric_name = |source: &Value| go_json_string(text(source, &["metric", "name"]));
    let mut members = vec![("type", go_json_string(text(metric, &["type"])))];
    if let Some(source) = get(metric, &["object"]) {
        let mut fields = vec![
            ("target", reference(get(source, &["describedObject"]))),
            ("metricName", metric_name(source)),
            (
                name("targetValue", "currentValue"),
                quantity(get(source, &[at, "value"])),
            ),
        ];
        selector(
            &mut fields,
            "selector",
            get(source, &["metric", "selector"]),
        );
        optional(
            &mut fields,
            "averageValue",
            get(source, &[at, "averageValue"]),
        );
        members.push(("object", object(&fields)));
    }
    if let Some(source) = get(metric, &["pods"]) {
        let mut fields = vec![
            ("metricName", metric_name(source)),
            (
                name("targetAverageValue", "currentAverageValue"),
                quantity(get(source, &[at, "averageValue"])),
            ),
        ];
        selector(
            &mut fields,
            "selector",
            get(source, &["metric", "selector"]),
        );
        members.push(("pods", object(&fields)));
    }
    for (key, container) in [("resource", false), ("containerResource", true)] {
        if let Some(source) = get(metric, &[key]) {
            let mut fields = vec![("name", go_json_string(text(source, &["name"])))];
            optional(
                &mut fields,
                name("targetAverageUtilization", "currentAverageUtilization"),
                get(source, &[at, "averageUtilization"]),
            );
            let average = get(source, &[at, "averageValue"]);
            match half {
                Half::Spec => optional(&mut fields, "targetAverageValue", average),
                // A status's current value is a struct: never left out.
                Half::Status => fields.push(("currentAverageValue", quantity(average))),
            }
            if container {
                fields.push(("container", go_json_string(text(source, &["container"]))));
            }
            members.push((key, object(&fields)));
        }
    }
    if let Some(source) = get(metric, &["external"]) {
        let mut fields = vec![("metricName", metric_name(source))];
        selector(
            &mut fields,
            "metricSelector",
            get(source, &["metric", "selector"]),
        );
        let value = get(source, &[at, "value"]);
        match half {
            Half::Spec => optional(&mut fields, "targetValue", value),
            Half::Status => fields.push(("currentValue", quantity(value))),
        }
        optional(
            &mut fields,
            name("targetAverageValue", "currentAverageValue"),
            get(source, &[at, "averageValue"]),
        );
        members.push(("external", object(&fields)));
    }
    object(&members)
}

/// A v2 condition as `autoscalingv1.HorizontalPodAutoscalerCondition`: an unset transition
/// time is written `null` (a struct is never left out).
fn condition_v1(condition: &Value) -> String {
    let mut members = vec![
        ("type", go_json_string(text(condition, &["type"]))),
        ("status", go_json_string(text(condition, &["status"]))),
        (
            "lastTransitionTime",
            get(condition, &["lastTransitionTime"]).map_or_else(|| "null".to_owned(), scalar),
        ),
    ];
    for key in ["reason", "message"] {
        let value = text(condition, &[key]);
        if !value.is_empty() {
            members.push((key, go_json_string(value)));
        }
    }
    object(&members)
}

/// The internal `HorizontalPodAutoscalerBehavior` (pkg/apis/autoscaling/types.go) as
/// `json.Marshal` writes it: Go's field names, every field, `null` for a nil pointer or slice.
fn behavior_internal(behavior: &Value) -> String {
    let rules = |key: &str| match get(behavior, &[key]) {
        None => "null".to_owned(),
        Some(rules) => {
            let policies = get(rules, &["policies"]).map_or_else(
                || "null".to_owned(),
                |p| {
                    let written: Vec<String> = list_items(Some(p))
                        .iter()
                        .map(|policy| {
                            object(&[
                                ("Type", go_json_string(text(policy, &["type"]))),
                                ("Value", number(policy, "value")),
                                ("PeriodSeconds", number(policy, "periodSeconds")),
                            ])
                        })
                        .collect();
                    array(&written)
                },
            );
            let or_null = |key: &str| get(rules, &[key]).map_or_else(|| "null".to_owned(), scalar);
            object(&[
                (
                    "StabilizationWindowSeconds",
                    or_null("stabilizationWindowSeconds"),
                ),
                ("SelectPolicy", or_null("selectPolicy")),
                ("Policies", policies),
                ("Tolerance", or_null("tolerance")),
            ])
        }
    };
    object(&[
        ("ScaleUp", rules("scaleUp")),
        ("ScaleDown", rules("scaleDown")),
    ])
}

/// An `int32` that is not a pointer: `0` when unset.
fn number(value: &Value, key: &str) -> String {
    get(value, &[key]).map_or_else(|| "0".to_owned(), scalar)
}

// ---- v1 to v2 ----------------------------------------------------------------------------

/// `Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`.
fn from_v1(obj: &mut Object) {
    let annotation = |key: &str| -> Option<Value> {
        let text = obj
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)?;
        serde_json::from_str(text).ok()
    };
    let other_metrics = annotation(METRICS).and_then(|v| decode_list(&v, metric_spec_from_v1));
    let behavior = annotation(BEHAVIOR).and_then(|v| behavior_from_internal(&v));
    let current_metrics =
        annotation(CURRENT_METRICS).and_then(|v| decode_list(&v, metric_status_from_v1));
    let conditions = annotation(CONDITIONS).and_then(|v| decode_list(&v, condition_from_v1));

    let spec = obj.remove("spec").unwrap_or(Value::Null);
    let status = obj.remove("status").unwrap_or(Value::Null);

    // `Convert_v1_HorizontalPodAutoscalerSpec_To_autoscaling_HorizontalPodAutoscalerSpec`.
    let mut v2_spec = Map::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = get(&spec, &[key]) {
            v2_spec.insert(key.into(), v.clone());
        }
    }
    let cpu = |utilization: Value| {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization}}})
    };
    let mut metrics: Vec<Value> = get(&spec, &["targetCPUUtilizationPercentage"])
        .map(|target| cpu(target.clone()))
        .into_iter()
        .collect();
    if let Some(others) = other_metrics {
        // The annotation's metrics first, then the CPU target.
        metrics = others
            .into_iter()
            .chain(metrics.into_iter().take(1))
            .collect();
    }
    if let Some(behavior) = behavior {
        v2_spec.insert("behavior".into(), behavior);
    }
    if metrics.is_empty() {
        // `autoscaling.DefaultCPUUtilization`.
        metrics.push(cpu(Value::from(80)));
    }
    v2_spec.insert("metrics".into(), Value::Array(metrics.into()));
    obj.insert("spec".into(), Value::Object(v2_spec));

    // `Convert_v1_HorizontalPodAutoscalerStatus_To_autoscaling_HorizontalPodAutoscalerStatus`,
    // whose current metrics the annotation replaces.
    let mut v2_status = Map::new();
    for key in ["observedGeneration", "lastScaleTime", "desiredReplicas"] {
        if let Some(v) = get(&status, &[key]) {
            v2_status.insert(key.into(), v.clone());
        }
    }
    // v2 leaves out a zero `currentReplicas`, which v1 always writes.
    if let Some(replicas) = get(&status, &["currentReplicas"]).filter(|r| *r != 0) {
        v2_status.insert("currentReplicas".into(), replicas.clone());
    }
    let current = match current_metrics {
        Some(current) => Some(current),
        None => get(&status, &["currentCPUUtilizationPercentage"]).map(|utilization| {
            vec![json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": utilization}}})]
        }),
    };
    if let Some(current) = current {
        v2_status.insert("currentMetrics".into(), Value::Array(current.into()));
    }
    if let Some(conditions) = conditions {
        v2_status.insert("conditions".into(), Value::Array(conditions.into()));
    }
    obj.insert("status".into(), Value::Object(v2_status));
    drop_round_trip_annotations(obj);
}

/// A JSON array decoded item by item, `None` (the annotation ignored) when it is not an array
/// or an item does not decode; `null` decodes as no items.
fn decode_list(value: &Value, item: fn(&Value) -> Option<Value>) -> Option<Vec<Value>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => items.iter().map(item).collect(),
        _ => None,
    }
}

/// The member `key` of a JSON object as `encoding/json` finds it: the exact name, else one
/// equal but for case. `Ok(None)` when absent or `null`; `Err` when `value` is not an object.
fn member<'a>(value: &'a Value, key: &str) -> Result<Option<&'a Value>, ()> {
    let map = match value {
        Value::Object(map) => map,
        Value::Null => return Ok(None),
        _ => return Err(()),
    };
    let found = map.get(key).or_else(|| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    });
    Ok(found.filter(|v| !v.is_null()))
}

/// A string field: `""` when absent.
fn string_member(value: &Value, key: &str) -> Option<String> {
    match member(value, key).ok()? {
        None => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    }
}

/// An optional `*int32`.
fn int_member(value: &Value, key: &str) -> Result<Option<Value>, ()> {
    match member(value, key)? {
        None => Ok(None),
        Some(Value::Number(n)) if n.as_i64().and_then(|i| i32::try_from(i).ok()).is_some() => {
            Ok(Some(Value::Number(n.clone())))
        }
        Some(_) => Err(()),
    }
}

/// An optional `*resource.Quantity`, canonical.
fn quantity_member(value: &Value, key: &str) -> Result<Option<Value>, ()> {
    let text = match member(value, key)? {
        None => return Ok(None),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(()),
    };
    gotype::quantity::canonical(&text)
        .map(|q| Some(Value::String(q)))
        .map_err(|_| ())
}

/// A `resource.Quantity` that is not a pointer: zero when absent.
fn zero_quantity_member(value: &Value, key: &str) -> Result<Value, ()> {
    Ok(quantity_member(value, key)?.unwrap_or_else(|| Value::from("0")))
}

/// A `*metav1.LabelSelector`: `matchLabels` a map of strings, `matchExpressions` a list of
/// requirements (`key`, `operator`, `values`), empty ones left out as Go writes them.
fn selector_member(value: &Value, key: &str) -> Result<Option<Value>, ()> {
    let Some(selector) = member(value, key)? else {
        return Ok(None);
    };
    if !selector.is_object() {
        return Err(());
    }
    let mut out = Map::new();
    match member(selector, "matchLabels")? {
        None => {}
        Some(Value::Object(labels)) => {
            if labels.values().any(|v| !v.is_string() && !v.is_null()) {
                return Err(());
            }
            // A `null` value decodes as the empty string.
            let labels: Map = labels
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str().unwrap_or(""))))
                .collect();
            if !labels.is_empty() {
                out.insert("matchLabels".into(), Value::Object(labels));
            }
        }
        Some(_) => return Err(()),
    }
    match member(selector, "matchExpressions")? {
        None => {}
        Some(Value::Array(requirements)) => {
            let requirements = requirements
                .iter()
                .map(requirement)
                .collect::<Result<Vec<Value>, ()>>()?;
            if !requirements.is_empty() {
                out.insert("matchExpressions".into(), Value::Array(requirements.into()));
            }
        }
        Some(_) => return Err(()),
    }
    Ok(Some(Value::Object(out)))
}

/// A `metav1.LabelSelectorRequirement`.
fn requirement(value: &Value) -> Result<Value, ()> {
    if !value.is_object() && !value.is_null() {
        return Err(());
    }
    let text = |key: &str| string_member(value, key).ok_or(());
    let mut out = Map::new();
    out.insert("key".into(), Value::String(text("key")?));
    out.insert("operator".into(), Value::String(text("operator")?));
    match member(value, "values")? {
        None => {}
        Some(Value::Array(values)) => {
            let values = values
                .iter()
                .map(|v| match v {
                    Value::String(_) => Ok(v.clone()),
                    Value::Null => Ok(Value::from("")),
                    _ => Err(()),
                })
                .collect::<Result<Vec<Value>, ()>>()?;
            if !values.is_empty() {
                out.insert("values".into(), Value::Array(values.into()));
            }
        }
        Some(_) => return Err(()),
    }
    Ok(Value::Object(out))
}

fn insert_some(map: &mut Map, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

/// The v2 `MetricIdentifier` of a v1 metric source: its `metricName`, and the selector at
/// `selector`; `None` when either does not decode.
fn identifier(source: &Value, selector: &str) -> Option<Value> {
    let mut metric = Map::new();
    metric.insert(
        "name".into(),
        Value::String(string_member(source, "metricName")?),
    );
    insert_some(
        &mut metric,
        "selector",
        selector_member(source, selector).ok()?,
    );
    Some(Value::Object(metric))
}

/// A v2 `CrossVersionObjectReference` of a v1 one.
fn reference_from_v1(value: &Value, key: &str) -> Option<Value> {
    let target = member(value, key).ok()?.unwrap_or(&Value::Null);
    let mut reference = Map::new();
    reference.insert("kind".into(), Value::String(string_member(target, "kind")?));
    reference.insert("name".into(), Value::String(string_member(target, "name")?));
    let api_version = string_member(target, "apiVersion")?;
    if !api_version.is_empty() {
        reference.insert("apiVersion".into(), Value::String(api_version));
    }
    Some(Value::Object(reference))
}

/// An `autoscalingv1.MetricSpec` as a v2 metric.
fn metric_spec_from_v1(metric: &Value) -> Option<Value> {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(string_member(metric, "type")?));
    if let Some(source) = member(metric, "object").ok()? {
        // `Convert_v1_ObjectMetricSource_To_autoscaling_ObjectMetricSource`.
        let average = quantity_member(source, "averageValue").ok()?;
        let value = zero_quantity_member(source, "targetValue").ok()?;
        let mut target = Map::new();
        if average.is_none() {
            target.insert("type".into(), Value::from("Value"));
            target.insert("value".into(), value);
        } else {
            target.insert("type".into(), Value::from("AverageValue"));
            if value != "0" {
                target.insert("value".into(), value);
            }
        }
        insert_some(&mut target, "averageValue", average);
        out.insert(
            "object".into(),
            json!({
                "describedObject": reference_from_v1(source, "target")?,
                "target": target,
                "metric": identifier(source, "selector")?,
            }),
        );
    }
    if let Some(source) = member(metric, "pods").ok()? {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier(source, "selector")?,
                "target": {"type": "AverageValue",
                    "averageValue": zero_quantity_member(source, "targetAverageValue").ok()?},
            }),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = member(metric, key).ok()? {
            let utilization = int_member(source, "targetAverageUtilization").ok()?;
            let mut target = Map::new();
            let kind = if utilization.is_some() {
                "Utilization"
            } else {
                "AverageValue"
            };
            target.insert("type".into(), Value::from(kind));
            insert_some(
                &mut target,
                "averageValue",
                quantity_member(source, "targetAverageValue").ok()?,
            );
            insert_some(&mut target, "averageUtilization", utilization);
            let mut converted = Map::new();
            converted.insert("name".into(), Value::String(string_member(source, "name")?));
            converted.insert("target".into(), Value::Object(target));
            if key == "containerResource" {
                converted.insert(
                    "container".into(),
                    Value::String(string_member(source, "container")?),
                );
            }
            out.insert(key.into(), Value::Object(converted));
        }
    }
    if let Some(source) = member(metric, "external").ok()? {
        let value = quantity_member(source, "targetValue").ok()?;
        let mut target = Map::new();
        let kind = if value.is_some() {
            "Value"
        } else {
            "AverageValue"
        };
        target.insert("type".into(), Value::from(kind));
        insert_some(&mut target, "value", value);
        insert_some(
            &mut target,
            "averageValue",
            quantity_member(source, "targetAverageValue").ok()?,
        );
        out.insert(
            "external".into(),
            json!({
                "metric": identifier(source, "metricSelector")?,
                "target": target,
            }),
        );
    }
    Some(Value::Object(out))
}

/// An `autoscalingv1.MetricStatus` as a v2 current metric.
fn metric_status_from_v1(metric: &Value) -> Option<Value> {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(string_member(metric, "type")?));
    if let Some(source) = member(metric, "object").ok()? {
        let mut current = Map::new();
        current.insert(
            "value".into(),
            zero_quantity_member(source, "currentValue").ok()?,
        );
        insert_some(
            &mut current,
            "averageValue",
            quantity_member(source, "averageValue").ok()?,
        );
        out.insert(
            "object".into(),
            json!({
                "describedObject": reference_from_v1(source, "target")?,
                "current": current,
                "metric": identifier(source, "selector")?,
            }),
        );
    }
    if let Some(source) = member(metric, "pods").ok()? {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier(source, "selector")?,
                "current": {"averageValue":
                    zero_quantity_member(source, "currentAverageValue").ok()?},
            }),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = member(metric, key).ok()? {
            let mut current = Map::new();
            current.insert(
                "averageValue".into(),
                zero_quantity_member(source, "currentAverageValue").ok()?,
            );
            insert_some(
                &mut current,
                "averageUtilization",
                int_member(source, "currentAverageUtilization").ok()?,
            );
            let mut converted = Map::new();
            converted.insert("name".into(), Value::String(string_member(source, "name")?));
            converted.insert("current".into(), Value::Object(current));
            if key == "containerResource" {
                converted.insert(
                    "container".into(),
                    Value::String(string_member(source, "container")?),
                );
            }
            out.insert(key.into(), Value::Object(converted));
        }
    }
    if let Some(source) = member(metric, "external").ok()? {
        let mut current = Map::new();
        current.insert(
            "value".into(),
            zero_quantity_member(source, "currentValue").ok()?,
        );
        insert_some(
            &mut current,
            "averageValue",
            quantity_member(source, "currentAverageValue").ok()?,
        );
        out.insert(
            "external".into(),
            json!({
                "metric": identifier(source, "metricSelector")?,
                "current": current,
            }),
        );
    }
    Some(Value::Object(out))
}

/// An `autoscalingv1.HorizontalPodAutoscalerCondition` as a v2 one.
fn condition_from_v1(condition: &Value) -> Option<Value> {
    let mut out = Map::new();
    out.insert(
        "type".into(),
        Value::String(string_member(condition, "type")?),
    );
    out.insert(
        "status".into(),
        Value::String(string_member(condition, "status")?),
    );
    match member(condition, "lastTransitionTime").ok()? {
        None => {}
        Some(Value::String(time)) => {
            let time = recon_apimachinery::gotime::canonical(
                recon_apimachinery::gotime::Layout::Time,
                time,
            )
            .ok()?;
            out.insert("lastTransitionTime".into(), Value::String(time));
        }
        Some(_) => return None,
    }
    for key in ["reason", "message"] {
        let value = string_member(condition, key)?;
        if !value.is_empty() {
            out.insert(key.into(), Value::String(value));
        }
    }
    Some(Value::Object(out))
}

/// The internal behavior of the annotation as v2's: `None` when it does not decode or sets
/// neither direction.
fn behavior_from_internal(value: &Value) -> Option<Value> {
    let mut out = Map::new();
    for (field, key) in [("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")] {
        let Some(rules) = member(value, field).ok()? else {
            continue;
        };
        let mut converted = Map::new();
        insert_some(
            &mut converted,
            "stabilizationWindowSeconds",
            int_member(rules, "StabilizationWindowSeconds").ok()?,
        );
        match member(rules, "SelectPolicy").ok()? {
            None => {}
            Some(Value::String(policy)) => {
                converted.insert("selectPolicy".into(), Value::String(policy.clone()));
            }
            Some(_) => return None,
        }
        match member(rules, "Policies").ok()? {
            None => {}
            Some(Value::Array(policies)) => {
                let converted_policies = policies
                    .iter()
                    .map(|policy| {
                        Some(json!({
                            "type": string_member(policy, "Type")?,
                            "value": int_member(policy, "Value").ok()?.unwrap_or(Value::from(0)),
                            "periodSeconds":
                                int_member(policy, "PeriodSeconds").ok()?.unwrap_or(Value::from(0)),
                        }))
                    })
                    .collect::<Option<Vec<Value>>>()?;
                if !converted_policies.is_empty() {
                    converted.insert("policies".into(), Value::Array(converted_policies.into()));
                }
            }
            Some(_) => return None,
        }
        insert_some(
            &mut converted,
            "tolerance",
            quantity_member(rules, "Tolerance").ok()?,
        );
        out.insert(key.into(), Value::Object(converted));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests;
