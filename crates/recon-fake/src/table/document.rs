//! The Table document as `encoding/json` writes `metav1.Table`
//! (apimachinery/pkg/apis/meta/v1/types.go): `TypeMeta`, `ListMeta`, `columnDefinitions`,
//! `rows`, each field in its Go declaration order.

use recon_apimachinery::go_json::write_go_string;

/// `TableColumnDefinition`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column<'a> {
    pub(crate) name: &'a str,
    pub(crate) ty: &'a str,
    pub(crate) format: &'a str,
    pub(crate) description: &'a str,
    pub(crate) priority: i64,
}

impl<'a> Column<'a> {
    pub(crate) const fn new(
        name: &'a str,
        ty: &'a str,
        format: &'a str,
        description: &'a str,
        priority: i64,
    ) -> Self {
        Column {
            name,
            ty,
            format,
            description,
            priority,
        }
    }
}

/// One cell: the Go values printers put in `TableRow.Cells`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

impl Cell {
    pub(crate) fn text(s: impl Into<String>) -> Self {
        Cell::Text(s.into())
    }

    fn write(&self, out: &mut String) {
        match self {
            Cell::Text(s) => write_go_string(out, s),
            Cell::Int(n) => out.push_str(&n.to_string()),
            Cell::Float(f) => out.push_str(&go_json_float(*f)),
            Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Cell::Null => out.push_str("null"),
        }
    }
}

/// A float64 as `encoding/json` writes it: plain decimals between 1e-6 and 1e21, otherwise an
/// exponent with its sign (`1e+21`, `1e-7`); NaN and infinities cannot occur in JSON input.
pub(crate) fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    let text = format!("{f:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => text,
    }
}

/// `TableRowCondition`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    pub(crate) ty: &'static str,
    pub(crate) status: &'static str,
    pub(crate) reason: String,
    pub(crate) message: &'static str,
}

/// `TableRow`: cells, conditions, and the object (`None`: `includeObject=None`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) cells: Vec<Cell>,
    pub(crate) conditions: Vec<Condition>,
    pub(crate) object: Option<Vec<u8>>,
}

impl Row {
    pub(crate) fn new(cells: Vec<Cell>) -> Self {
        Row {
            cells,
            ..Row::default()
        }
    }
}

/// The Table's `ListMeta`: the list's, or one object's `resourceVersion`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListMeta {
    pub(crate) resource_version: String,
    pub(crate) continue_token: String,
    pub(crate) remaining: Option<usize>,
}

/// The document. `columns` is `None` without headers (written `null`, as a nil slice is);
/// `null_rows` writes an empty row list as the nil slice it is for the default convertor.
pub(crate) fn write(
    api_version: &str,
    meta: &ListMeta,
    columns: Option<&[Column<'_>]>,
    rows: &[Row],
    null_rows: bool,
) -> Vec<u8> {
    let mut out = String::with_capacity(256 + rows.len() * 128);
    out.push_str(r#"{"kind":"Table","apiVersion":"#);
    write_go_string(&mut out, api_version);
    out.push_str(r#","metadata":{"#);
    let mut fields = Vec::new();
    if !meta.resource_version.is_empty() {
        let mut f = String::from(r#""resourceVersion":"#);
        write_go_string(&mut f, &meta.resource_version);
        fields.push(f);
    }
    if !meta.continue_token.is_empty() {
        let mut f = String::from(r#""continue":"#);
        write_go_string(&mut f, &meta.continue_token);
        fields.push(f);
    }
    if let Some(n) = meta.remaining {
        fields.push(format!(r#""remainingItemCount":{n}"#));
    }
    out.push_str(&fields.join(","));
    out.push_str(r#"},"columnDefinitions":"#);
    match columns {
        None => out.push_str("null"),
        Some(columns) => {
            out.push('[');
            for (i, c) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"name":"#);
                write_go_string(&mut out, c.name);
                out.push_str(r#","type":"#);
                write_go_string(&mut out, c.ty);
                out.push_str(r#","format":"#);
                write_go_string(&mut out, c.format);
                out.push_str(r#","description":"#);
                write_go_string(&mut out, c.description);
                out.push_str(&format!(r#","priority":{}}}"#, c.priority));
            }
            out.push(']');
        }
    }
    out.push_str(r#","rows":"#);
    if rows.is_empty() && null_rows {
        out.push_str("null}");
        return out.into_bytes();
    }
    out.push('[');
    let mut bytes = Vec::with_capacity(out.len());
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"cells":["#);
        for (j, cell) in row.cells.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            cell.write(&mut out);
        }
        out.push(']');
        if !row.conditions.is_empty() {
            out.push_str(r#","conditions":["#);
            for (j, c) in row.conditions.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                // `TableRowCondition`'s fields in order; reason and message are omitempty.
                out.push_str(r#"{"type":"#);
                write_go_string(&mut out, c.ty);
                out.push_str(r#","status":"#);
                write_go_string(&mut out, c.status);
                for (key, value) in [("reason", c.reason.as_str()), ("message", c.message)] {
                    if !value.is_empty() {
                        out.push_str(&format!(r#","{key}":"#));
                        write_go_string(&mut out, value);
                    }
                }
                out.push('}');
            }
            out.push(']');
        }
        out.push_str(r#","object":"#);
        // The object's bytes go in as they are; the text around them is moved out first.
        bytes.extend_from_slice(out.as_bytes());
        out.clear();
        match &row.object {
            Some(object) => bytes.extend_from_slice(object),
            None => bytes.extend_from_slice(b"null"),
        }
        out.push('}');
    }
    out.push_str("]}");
    bytes.extend_from_slice(out.as_bytes());
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_go_writes_them() {
        assert_eq!(go_json_float(3.0), "3");
        assert_eq!(go_json_float(1.5), "1.5");
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1e-7), "1e-7");
        assert_eq!(go_json_float(-0.25), "-0.25");
    }

    #[test]
    fn a_table_without_headers_or_objects() {
        let rows = vec![Row::new(vec![Cell::text("a"), Cell::Int(2), Cell::Null])];
        let meta = ListMeta {
            resource_version: "7".into(),
            ..ListMeta::default()
        };
        let doc = write("meta.k8s.io/v1", &meta, None, &rows, false);
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            r#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"columnDefinitions":null,"rows":[{"cells":["a",2,null],"object":null}]}"#
        );
        let empty = write("meta.k8s.io/v1", &ListMeta::default(), None, &[], true);
        assert!(
            String::from_utf8(empty)
                .unwrap()
                .ends_with(r#""rows":null}"#)
        );
    }
}
