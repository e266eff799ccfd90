//! A custom resource's columns: Name, then its version's additionalPrinterColumns, or Age when
//! it declares none (apiextensions-apiserver/pkg/apiserver/helpers.go,
//! `serveDefaultColumnsIfEmpty`), each cell read with its JSONPath and typed as its column says
//! (apiextensions-apiserver/pkg/registry/customresource/tableconvertor/tableconvertor.go).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::document::{Cell, Column};
use super::jsonpath::{self, JsonPath};
use super::printers::{CREATION_TIMESTAMP_DESCRIPTION, NAME_DESCRIPTION};
use super::{age, name_of, timestamp};
use crate::wire::object::Object;

/// One declared column.
#[derive(Debug, Clone, PartialEq)]
struct CustomColumn {
    name: String,
    ty: String,
    format: String,
    description: String,
    priority: i64,
    /// `None` when the path is outside what [`JsonPath`] reads: its cells are empty.
    path: Option<JsonPath>,
}

/// The columns of one served version of a CRD.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CustomColumns {
    columns: Vec<CustomColumn>,
}

impl CustomColumns {
    /// The columns of a CRD version (`spec.versions[*]`).
    pub(crate) fn of_version(version: &Object) -> Self {
        let declared = version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .filter(|columns| !columns.is_empty());
        let columns = match declared {
            Some(declared) => declared
                .iter()
                .filter_map(Value::as_object)
                .map(|c| {
                    let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    let path = text("jsonPath");
                    let description = match text("description") {
                        d if d.is_empty() => format!(
                            "Custom resource definition column (in JSONPath format): {path}"
                        ),
                        d => d,
                    };
                    CustomColumn {
                        name: text("name"),
                        ty: text("type"),
                        format: text("format"),
                        description,
                        priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                        path: JsonPath::parse(&path),
                    }
                })
                .collect(),
            None => vec![CustomColumn {
                name: "Age".into(),
                ty: "date".into(),
                format: String::new(),
                description: CREATION_TIMESTAMP_DESCRIPTION.into(),
                priority: 0,
                path: JsonPath::parse(".metadata.creationTimestamp"),
            }],
        };
        CustomColumns { columns }
    }

    /// The columns of a custom resource's Scale (apiextensions-apiserver helpers.go,
    /// `getScaleColumnsForVersion`): Desired when the version declares a `specReplicasPath`,
    /// Available when a `statusReplicasPath`, then Age, read from the Scale.
    pub(crate) fn of_scale(spec_replicas: bool, status_replicas: bool) -> Self {
        let column = |name: &str, ty: &str, description: &str, path: &str| CustomColumn {
            name: name.into(),
            ty: ty.into(),
            format: String::new(),
            description: description.into(),
            priority: 0,
            path: JsonPath::parse(path),
        };
        let mut columns = Vec::new();
        if spec_replicas {
            columns.push(column(
                "Desired",
                "integer",
                "Number of desired replicas",
                ".spec.replicas",
            ));
        }
        if status_replicas {
            columns.push(column(
                "Available",
                "integer",
                "Number of actual replicas",
                ".status.replicas",
            ));
        }
        columns.push(column(
            "Age",
            "date",
            CREATION_TIMESTAMP_DESCRIPTION,
            ".metadata.creationTimestamp",
        ));
        CustomColumns { columns }
    }

    pub(crate) fn columns(&self) -> Vec<Column<'_>> {
        let mut out = vec![Column::new("Name", "string", "name", NAME_DESCRIPTION, 0)];
        out.extend(self.columns.iter().map(|c| Column {
            name: &c.name,
            ty: &c.ty,
            format: &c.format,
            description: &c.description,
            priority: c.priority,
        }));
        out
    }

    /// The cells of `obj`: its name, then each column's value, `null` when the path finds
    /// nothing or the value is not of the column's type.
    pub(crate) fn cells(&self, obj: &Object, now: Timestamp) -> Vec<Cell> {
        let data = Value::Object(obj.clone());
        let mut cells = vec![Cell::text(name_of(obj))];
        for column in &self.columns {
            let found = column.path.as_ref().and_then(|p| p.first(&data));
            cells.push(match found {
                None => Cell::Null,
                Some(value) if column.ty == "string" => Cell::Text(jsonpath::print(value)),
                Some(value) => typed(&column.ty, value, now),
            });
        }
        cells
    }
}

/// `cellForJSONValue`: a value as a column of type `ty` holds it.
fn typed(ty: &str, value: &Value, now: Timestamp) -> Cell {
    match (ty, value) {
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Cell::Int(i),
            // Go converts a float64 to int64 toward zero.
            (None, Some(f)) => Cell::Int(f as i64),
            _ => Cell::Null,
        },
        ("number", Value::Number(n)) => n.as_f64().map_or(Cell::Null, Cell::Float),
        ("boolean", Value::Bool(b)) => Cell::Bool(*b),
        ("date", Value::String(s)) if s.is_empty() || s == "null" => {
            Cell::text(age::since(None, now))
        }
        ("date", Value::String(s)) => match timestamp(s) {
            Some(t) => Cell::text(age::since(Some(t), now)),
            None => Cell::text("<invalid>"),
        },
        _ => Cell::Null,
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn columns(version: Value) -> CustomColumns {
        CustomColumns::of_version(version.as_object().unwrap())
    }

    #[test]
    fn declared_columns_type_their_cells() {
        let now: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let c = columns(json!({"additionalPrinterColumns": [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "priority": 1},
            {"name": "On", "type": "boolean", "jsonPath": ".spec.on", "description": "switch"},
            {"name": "Mode", "type": "string", "jsonPath": ".spec.mode"},
            {"name": "Since", "type": "date", "jsonPath": ".spec.since"},
            {"name": "Bad", "type": "date", "jsonPath": ".spec.mode"},
        ]}));
        let obj = json!({
            "metadata": {"name": "a"},
            "spec": {"size": 2.7, "ratio": 3, "on": "yes", "since": "2026-01-01T00:05:00Z",
                     "mode": "fast"}
        });
        assert_eq!(
            c.cells(obj.as_object().unwrap(), now),
            vec![
                Cell::text("a"),
                Cell::Int(2),
                Cell::Float(3.0),
                Cell::Null,
                Cell::text("fast"),
                Cell::text("5m"),
                Cell::text("<invalid>"),
            ]
        );
        let headers = c.columns();
        assert_eq!(headers[0].name, "Name");
        assert_eq!(
            headers[1].description,
            "Custom resource definition column (in JSONPath format): .spec.size"
        );
        assert_eq!(headers[2].priority, 1);
        assert_eq!(headers[3].description, "switch");
    }

    #[test]
    fn no_declared_columns_is_age() {
        let c = columns(json!({"name": "v1"}));
        let headers = c.columns();
        assert_eq!(headers.len(), 2);
        assert_eq!((headers[1].name, headers[1].ty), ("Age", "date"));
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let obj = json!({"metadata": {"name": "a", "creationTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(
            c.cells(obj.as_object().unwrap(), now),
            vec![Cell::text("a"), Cell::text("60m")]
        );
    }
}
