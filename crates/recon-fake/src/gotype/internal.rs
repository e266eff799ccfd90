//! kube-apiserver's internal core and resource.k8s.io types as Go's JSON encoder writes them.
//! Validation quotes some values in that form: a pod or claim spec that changed where it may
//! not, as a unified diff of `json.MarshalIndent(spec, "", " ")` (`util/diff.Diff`); an
//! immutable Job template, ResourceClaim spec or allocation as `json.Marshal(value)`
//! (`field.Invalid`'s value).
//!
//! Internal types have no JSON tags: every field is written under its Go name, in declaration
//! order, zero values included, embedded structs flattened; the `metav1` types inside keep
//! their tags (`omitempty`). The layout comes from the Go sources
//! (`data/go-internal-types.json`, written by `xtask/record-go-internal-types.py`), which also
//! says which field of the served (v1) object each internal one is converted from.

use std::collections::HashMap;
use std::sync::LazyLock;

use recon_apimachinery::go_json::{go_json, write_go_string};
use recon_apimachinery::json::{Event, Map, Root, Value, walk};

use crate::wire::unified_diff::unified_diff;

/// Per internal struct its fields; the named scalar and map types' underlying types.
const LAYOUT: &str = include_str!("../../data/go-internal-types.json");

static TYPES: LazyLock<Layout> = LazyLock::new(|| Layout::read(LAYOUT));

/// Which object a value was read from: the stored one was written to etcd as protobuf, which
/// keeps no difference between an empty list or map and none; a decoded request body does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Stored,
    Decoded,
}

/// `json.Marshal` of the internal `root` type (`core.PodTemplateSpec`) converted from `v1`.
pub(crate) fn marshal(root: &str, v1: Option<&Value>, source: Source) -> String {
    let mut out = String::new();
    Node::of_type(root, v1, source).write(&mut out, None);
    out
}

/// `apiequality.Semantic.DeepEqual` of two values of the internal `root` type: their Go
/// values are the same (an unset field and its zero value alike, a nil and an empty list or
/// map alike, but a nil pointer and a pointer to zero not; quantities are canonical strings).
pub(crate) fn semantic_eq(root: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    marshal(root, a, Source::Stored) == marshal(root, b, Source::Stored)
}

/// `diff.Diff(old, new)` of the internal `root` type: the unified diff of the two values
/// marshalled with `json.MarshalIndent(v, "", " ")`; `old` is the stored object's.
pub(crate) fn diff(root: &str, old: Option<&Value>, new: Option<&Value>) -> String {
    let indented = |v, source| {
        let mut out = String::new();
        Node::of_type(root, v, source).write(&mut out, Some(0));
        out
    };
    unified_diff(
        &indented(old, Source::Stored),
        &indented(new, Source::Decoded),
    )
}

#[derive(Debug, Default)]
struct Layout {
    named: HashMap<String, String>,
    structs: HashMap<String, Vec<Field>>,
}

#[derive(Debug)]
enum Field {
    /// A field written as `key`, of Go type `ty`, read from `from` of the v1 object (tagged
    /// `metav1` fields are read from their own key).
    Plain {
        key: String,
        ty: String,
        from: String,
        omit_empty: bool,
        omit_zero: bool,
    },
    /// An embedded struct, its fields written as this one's; read from the same v1 object,
    /// or from its field `from` where v1 has the struct as a field of its own.
    Embedded { ty: String, from: Option<String> },
}

impl Layout {
    /// The layout in `document`; empty if it does not read (a test checks the recorded one).
    fn read(document: &str) -> Layout {
        let Ok(Value::Object(document)) = serde_json::from_str::<Value>(document) else {
            return Layout::default();
        };
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let named = document
            .get("named")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, ty)| Some((name.clone(), ty.as_str()?.to_owned())))
            .collect();
        let mut structs = HashMap::new();
        for (name, fields) in document
            .get("structs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let fields = fields
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| {
                    if let Some(ty) = text(f, "embed") {
                        return Some(Field::Embedded {
                            ty,
                            from: text(f, "from"),
                        });
                    }
                    let key = text(f, "key")?;
                    let omit = |what: &str| {
                        f.get("omit")
                            .and_then(Value::as_array)
                            .is_some_and(|o| o.iter().any(|v| v == what))
                    };
                    Some(Field::Plain {
                        from: text(f, "from").unwrap_or_else(|| key.clone()),
                        ty: text(f, "type")?,
                        omit_empty: omit("omitempty"),
                        omit_zero: omit("omitzero"),
                        key,
                    })
                })
                .collect();
            structs.insert(name.clone(), fields);
        }
        Layout { named, structs }
    }

    /// `ty` with named scalar and map types replaced by what they are.
    fn resolve<'a>(&'a self, ty: &'a str) -> &'a str {
        let mut ty = ty;
        while let Some(underlying) = self.named.get(ty) {
            ty = underlying;
        }
        ty
    }
}

/// A value as the encoder sees it: struct fields in order, map keys sorted.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Null,
    /// A literal written as it is: a number, `true`, `false`.
    Literal(String),
    Str(String),
    List(Vec<Node>),
    Object(Vec<(String, Node)>),
    /// A value of no known type (raw JSON), kept as it is and written with its keys sorted:
    /// it may nest as deep as Go reads, so it is written one container at a time.
    Raw(Value),
}

impl Node {
    /// The Go value of type `ty` converted from the v1 value `v` (absent: the zero value).
    fn of_type(ty: &str, v: Option<&Value>, source: Source) -> Node {
        let v = v.filter(|v| !v.is_null());
        let ty = TYPES.resolve(ty);
        if let Some(pointee) = ty.strip_prefix('*') {
            return match v {
                Some(v) => Node::of_type(pointee, Some(v), source),
                None => Node::Null,
            };
        }
        if let Some(item) = ty.strip_prefix("[]") {
            return match v.and_then(Value::as_array) {
                Some(items) if !(items.is_empty() && source == Source::Stored) => Node::List(
                    items
                        .iter()
                        .map(|i| Node::of_type(item, Some(i), source))
                        .collect(),
                ),
                _ => Node::Null,
            };
        }
        if let Some(rest) = ty.strip_prefix("map[") {
            let value_type = rest.split_once(']').map_or("", |(_, value)| value);
            return match v.and_then(Value::as_object) {
                // serde_json's map iterates in key order, as Go sorts map keys.
                Some(map) if !(map.is_empty() && source == Source::Stored) => Node::Object(
                    map.iter()
                        .map(|(k, i)| (k.clone(), Node::of_type(value_type, Some(i), source)))
                        .collect(),
                ),
                _ => Node::Null,
            };
        }
        match ty {
            "string" | "types.UID" => Node::Str(v.and_then(Value::as_str).unwrap_or("").into()),
            "bool" => Node::Literal(v.and_then(Value::as_bool).unwrap_or(false).to_string()),
            "int" | "int32" | "int64" | "float64" => {
                v.map_or_else(|| Node::Literal("0".into()), |v| Node::Literal(go_json(v)))
            }
            // Quantities are stored canonical, as Quantity.MarshalJSON writes them.
            "resource.Quantity" => Node::Str(v.and_then(Value::as_str).unwrap_or("0").into()),
            "intstr.IntOrString" => match v {
                Some(Value::String(s)) => Node::Str(s.clone()),
                Some(other) => Node::Literal(go_json(other)),
                None => Node::Literal("0".into()),
            },
            "metav1.Time" | "metav1.MicroTime" => v
                .and_then(Value::as_str)
                .map_or(Node::Null, |t| Node::Str(t.into())),
            "metav1.Duration" => Node::Str(v.and_then(Value::as_str).unwrap_or("0s").into()),
            _ => match TYPES.structs.get(ty) {
                Some(fields) => {
                    let mut out = Vec::new();
                    Node::fields(ty, fields, v, source, &mut out);
                    Node::Object(out)
                }
                // Raw JSON (`metav1.FieldsV1`) and anything the layout lacks.
                None => v.map_or(Node::Null, |v| Node::Raw(v.clone())),
            },
        }
    }

    /// The fields of struct `ty` read from `v`, embedded structs flattened, into `out`.
    fn fields(
        ty: &str,
        fields: &[Field],
        v: Option<&Value>,
        source: Source,
        out: &mut Vec<(String, Node)>,
    ) {
        let converted = (ty == "core.PodSpec").then(|| pod_spec_as_converted(v));
        let v = converted.as_ref().map_or(v, Some);
        for field in fields {
            match field {
                Field::Embedded { ty, from } => {
                    let inner = match from {
                        Some(key) => v.and_then(|v| v.get(key)),
                        None => v,
                    };
                    let resolved = TYPES.resolve(ty);
                    if let Some(fields) = TYPES.structs.get(resolved) {
                        Node::fields(resolved, fields, inner, source, out);
                    }
                }
                Field::Plain {
                    key,
                    ty,
                    from,
                    omit_empty,
                    omit_zero,
                } => {
                    let value = v.and_then(|v| v.get(from)).filter(|v| !v.is_null());
                    if *omit_zero && value.is_none() {
                        continue;
                    }
                    let node = Node::of_type(ty, value, source);
                    if *omit_empty && node.is_empty(TYPES.resolve(ty)) {
                        continue;
                    }
                    out.push((key.clone(), node));
                }
            }
        }
    }

    /// Whether `omitempty` leaves this value of type `ty` out: false, 0, "", a nil pointer,
    /// an empty list or map; never a struct.
    fn is_empty(&self, ty: &str) -> bool {
        match self {
            Node::Null => true,
            Node::Literal(l) => l == "false" || l == "0",
            Node::Str(s) => s.is_empty(),
            Node::List(items) => items.is_empty(),
            Node::Object(fields) => fields.is_empty() && ty.starts_with("map["),
            Node::Raw(v) => match v {
                Value::Null => true,
                Value::Bool(b) => !b,
                Value::Number(_) => go_json(v) == "0",
                Value::String(s) => s.is_empty(),
                Value::Array(items) => items.is_empty(),
                Value::Object(map) => map.is_empty() && ty.starts_with("map["),
            },
        }
    }

    /// Writes the value compact (`indent` None) or indented by one space per level, with
    /// `": "` after keys, as `json.MarshalIndent(v, "", " ")` does.
    fn write(&self, out: &mut String, indent: Option<usize>) {
        let newline = |out: &mut String, depth: usize| {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', depth));
        };
        match self {
            Node::Null => out.push_str("null"),
            Node::Raw(v) => match indent {
                None => out.push_str(&go_json(v)),
                Some(depth) => write_indented(out, v, depth),
            },
            Node::Literal(l) => out.push_str(l),
            Node::Str(s) => write_go_string(out, s),
            Node::List(items) if items.is_empty() => out.push_str("[]"),
            Node::Object(fields) if fields.is_empty() => out.push_str("{}"),
            Node::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if let Some(depth) = indent {
                        newline(out, depth + 1);
                    }
                    item.write(out, indent.map(|d| d + 1));
                }
                if let Some(depth) = indent {
                    newline(out, depth);
                }
                out.push(']');
            }
            Node::Object(fields) => {
                out.push('{');
                for (i, (key, item)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if let Some(depth) = indent {
                        newline(out, depth + 1);
                    }
                    write_go_string(out, key);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    item.write(out, indent.map(|d| d + 1));
                }
                if let Some(depth) = indent {
                    newline(out, depth);
                }
                out.push('}');
            }
        }
    }
}

/// `value` as `json.MarshalIndent(v, "", " ")` writes it `depth` levels in: one space a level,
/// `": "` after keys, empty containers as `[]` and `{}`. One container at a time.
fn write_indented(out: &mut String, value: &Value, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', depth));
    };
    let mut depth = depth;
    // Writing to a `String` cannot fail.
    let _ = walk(Root::Value(value), &mut |event| {
        match event {
            Event::Open(array, len) => {
                out.push(if array { '[' } else { '{' });
                depth += usize::from(len > 0);
            }
            Event::Item(key, first) => {
                if !first {
                    out.push(',');
                }
                newline(out, depth);
                if let Some(key) = key {
                    write_go_string(out, key);
                    out.push_str(": ");
                }
            }
            Event::Scalar(scalar) => out.push_str(&go_json(scalar)),
            Event::Close(array, len) => {
                if len > 0 {
                    depth -= 1;
                    newline(out, depth);
                }
                out.push(if array { ']' } else { '}' });
            }
        }
        Ok(())
    });
}

/// A v1 pod spec as `Convert_v1_PodSpec_To_core_PodSpec` leaves it: the security context
/// always set and holding the pod's host namespace settings, and the deprecated
/// `serviceAccount` standing in for an empty `serviceAccountName`.
fn pod_spec_as_converted(spec: Option<&Value>) -> Value {
    let mut spec = spec.and_then(Value::as_object).cloned().unwrap_or_default();
    let mut context = spec
        .get("securityContext")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(Map::new);
    for key in [
        "hostNetwork",
        "hostPID",
        "hostIPC",
        "shareProcessNamespace",
        "hostUsers",
    ] {
        match spec.get(key) {
            Some(value) => context.insert(key.into(), value.clone()),
            None => context.remove(key),
        };
    }
    spec.insert("securityContext".into(), Value::Object(context));
    if spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
        && let Some(deprecated) = spec.get("serviceAccount").cloned()
    {
        spec.insert("serviceAccountName".into(), deprecated);
    }
    Value::Object(spec)
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn the_recorded_layout_reads_and_has_its_roots() {
        let layout = Layout::read(LAYOUT);
        for root in [
            "core.PodSpec",
            "core.PodTemplateSpec",
            "core.PersistentVolumeClaimSpec",
        ] {
            assert!(layout.structs.contains_key(root), "{root} missing");
        }
        assert_eq!(
            layout.resolve("core.ResourceList"),
            "map[core.ResourceName]resource.Quantity"
        );
    }

    #[test]
    fn internal_fields_are_written_under_go_names_with_zero_values() {
        let text = marshal(
            "core.Toleration",
            Some(&json!({"key": "k", "operator": "Exists"})),
            Source::Decoded,
        );
        assert_eq!(
            text,
            r#"{"Key":"k","Operator":"Exists","Value":"","Effect":"","TolerationSeconds":null}"#
        );
    }

    #[test]
    fn a_template_flattens_its_metadata_with_metav1_tags() {
        let text = marshal(
            "core.PodTemplateSpec",
            Some(&json!({"metadata": {"labels": {"app": "a<b"}}, "spec": {}})),
            Source::Decoded,
        );
        assert!(
            text.starts_with(r#"{"labels":{"app":"a\u003cb"},"Spec":{"Volumes":null,"#),
            "{text}"
        );
        // Converted from v1: a security context is always there.
        assert!(
            text.contains(r#""SecurityContext":{"HostNetwork":false,"HostPID":false"#),
            "{text}"
        );
    }

    #[test]
    fn volumes_flatten_their_source_and_quantities_stay_canonical() {
        let text = marshal(
            "core.Volume",
            Some(&json!({"name": "v", "emptyDir": {"sizeLimit": "1Gi"}})),
            Source::Decoded,
        );
        assert!(
            text.starts_with(
                r#"{"Name":"v","HostPath":null,"EmptyDir":{"Medium":"","SizeLimit":"1Gi"},"#
            ),
            "{text}"
        );
    }

    #[test]
    fn stored_empty_lists_are_nil_and_decoded_ones_are_not() {
        let v = json!({"key": "k", "values": []});
        assert!(
            marshal("core.NodeSelectorRequirement", Some(&v), Source::Stored)
                .ends_with(r#""Values":null}"#)
        );
        assert!(
            marshal("core.NodeSelectorRequirement", Some(&v), Source::Decoded)
                .ends_with(r#""Values":[]}"#)
        );
    }

    #[test]
    fn semantic_equality_takes_zero_values_and_empty_lists_as_unset() {
        let a = json!({"containers": [{"name": "a", "args": []}], "hostname": ""});
        let b = json!({"containers": [{"name": "a"}]});
        assert!(semantic_eq("core.PodSpec", Some(&a), Some(&b)));
        let deadline = json!({"activeDeadlineSeconds": 0});
        assert!(!semantic_eq("core.PodSpec", Some(&deadline), Some(&b)));
    }

    #[test]
    fn a_diff_shows_the_changed_field_among_indented_go_names() {
        let old = json!({"containers": [{"name": "a", "image": "x"}], "restartPolicy": "Always"});
        let new = json!({"containers": [{"name": "a", "image": "x"}], "restartPolicy": "Never"});
        let text = diff("core.PodSpec", Some(&old), Some(&new));
        assert!(text.starts_with("@@ -"), "{text}");
        assert!(
            text.contains("- \"RestartPolicy\": \"Always\",\n+ \"RestartPolicy\": \"Never\",\n"),
            "{text}"
        );
        assert_eq!(diff("core.PodSpec", Some(&old), Some(&old)), "");
    }

    // Raw JSON (a type the layout lacks) is written as the tree of nodes wrote it, indented as
    // `json.MarshalIndent` indents, and at any depth on a test thread's stack.
    #[test]
    fn raw_values_are_written_indented_one_container_at_a_time() {
        let raw = json!({"b": [1, {"c": "<"}, [], {}], "a": null, "e": ""});
        let node = Node::of_type("unknown.Raw", Some(&raw), Source::Stored);
        let mut indented = String::new();
        node.write(&mut indented, Some(1));
        assert_eq!(
            indented,
            "{\n  \"a\": null,\n  \"b\": [\n   1,\n   {\n    \"c\": \"\\u003c\"\n   },\n   [],\n   {}\n  ],\n  \"e\": \"\"\n }"
        );
        assert_eq!(
            marshal("unknown.Raw", Some(&raw), Source::Stored),
            r#"{"a":null,"b":[1,{"c":"\u003c"},[],{}],"e":""}"#
        );

        let deep = (0..10_000).fold(json!(1), |inner, _| Value::Array(vec![inner].into()));
        let compact = marshal("unknown.Raw", Some(&deep), Source::Stored);
        assert_eq!(
            compact,
            format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000))
        );
        // Indented, a value's text grows with the square of its depth, as Go's does.
        let deep = (0..3_000).fold(json!(1), |inner, _| Value::Array(vec![inner].into()));
        let node = Node::of_type("unknown.Raw", Some(&deep), Source::Stored);
        let mut indented = String::new();
        node.write(&mut indented, Some(0));
        assert!(indented.contains(&format!("\n{}1\n", " ".repeat(3_000))));
        assert_eq!(indented.lines().count(), 6_001);
    }
}
