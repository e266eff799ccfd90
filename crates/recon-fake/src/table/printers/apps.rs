//! The apps group's printers (pkg/printers/internalversion/printers.go: `printDeployment`).

use serde_json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, int_at, list_at, name, text, wide};
use crate::wire::object::Object;

pub(super) const DEPLOYMENT: Printer = Printer {
    group: "apps",
    kind: "Deployment",
    columns: &[
        NAME,
        text("Ready", "Number of the pod with ready state"),
        text(
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
        ),
        text(
            "Available",
            "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        wide("Containers", "Names of each container in the template."),
        wide(
            "Images",
            "Images referenced by each container in the template.",
        ),
        wide(
            "Selector",
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
        ),
    ],
    row: |obj, now| {
        let (containers, images) = container_cells(obj);
        Row::new(vec![
            name(obj),
            Cell::text(format!(
                "{}/{}",
                int_at(obj, &["status", "readyReplicas"]),
                int_at(obj, &["spec", "replicas"])
            )),
            Cell::Int(int_at(obj, &["status", "updatedReplicas"])),
            Cell::Int(int_at(obj, &["status", "availableReplicas"])),
            age_of(obj, now),
            containers,
            images,
            Cell::text(selector_string(at(obj, &["spec", "selector"]))),
        ])
    },
};

/// `layoutContainerCells` of the pod template: container names and images, comma-joined.
fn container_cells(obj: &Object) -> (Cell, Cell) {
    let containers = list_at(obj, &["spec", "template", "spec", "containers"]);
    let field = |key: &str| {
        containers
            .iter()
            .map(|c| c.get(key).and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(",")
    };
    (Cell::text(field("name")), Cell::text(field("image")))
}

/// A `LabelSelector` as `metav1.LabelSelectorAsSelector(...).String()` writes it: requirements
/// sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-joined; no selector
/// selects nothing and writes nothing, a malformed one is `<invalid>`.
fn selector_string(selector: Option<&Value>) -> String {
    let Some(selector) = selector.and_then(Value::as_object) else {
        return String::new();
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for expr in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let text = match expr.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.to_owned(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return "<invalid>".to_owned(),
        };
        requirements.push((key.to_owned(), text));
    }
    // `internalSelector` sorts its requirements by key, stably.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn selectors_are_written_sorted() {
        let selector = json!({
            "matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["b", "a"]},
                {"key": "gone", "operator": "DoesNotExist"}
            ]
        });
        assert_eq!(
            selector_string(Some(&selector)),
            "app=x,env in (a,b),!gone,tier=web"
        );
        assert_eq!(selector_string(None), "");
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        assert_eq!(selector_string(Some(&bad)), "<invalid>");
    }

    #[test]
    fn deployments_print_replicas_and_template() {
        let obj = json!({
            "metadata": {"name": "d"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"spec": {"containers": [
                        {"name": "a", "image": "i:1"}, {"name": "b", "image": "i:2"}]}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 2}
        });
        let row = (DEPLOYMENT.row)(obj.as_object().unwrap(), jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(row.cells[1..4], [Cell::text("1/3"), Cell::Int(2), Cell::Int(0)]);
        assert_eq!(row.cells[5..], [
            Cell::text("a,b"),
            Cell::text("i:1,i:2"),
            Cell::text("app=d")
        ]);
    }
}
