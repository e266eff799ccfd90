//! The structural schema of a custom resource version, read from its CRD's `openAPIV3Schema`
//! the way apiextensions-apiserver converts it for validation
//! (`validation.ConvertJSONSchemaPropsWithPostProcess` with
//! `StripUnsupportedFormatsPostProcessorForVersion`): one node per schema object, with the
//! value validations kube-openapi's validator reads and the `x-kubernetes-*` extensions.
//!
//! `default` is kept as the value defaulting copies in.

use std::collections::BTreeMap;

use recon_apimachinery::json::{Map, Value};
use regex::Regex;

use super::format::Format;

/// One JSON type a node may declare (`type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl JsonType {
    fn parse(s: &str) -> Option<JsonType> {
        Some(match s {
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
        }
    }
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone)]
pub(crate) enum Additional {
    Allows(bool),
    Schema(Box<Node>),
}

/// A `pattern`, compiled once; a pattern the regex engine refuses keeps its error text.
#[derive(Debug, Clone)]
pub(crate) enum Pattern {
    /// The pattern as written, and its matcher (whose own text may spell Go's classes out).
    Compiled {
        source: String,
        re: Regex,
    },
    Invalid {
        source: String,
        error: String,
    },
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// One schema node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// `type`, or `[integer, string]` for `x-kubernetes-int-or-string`; empty when untyped.
    pub(crate) types: Vec<JsonType>,
    pub(crate) nullable: bool,
    /// The format as the validator sees it: unsupported ones are stripped (empty).
    pub(crate) format: String,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) maximum: Option<f64>,
    pub(crate) exclusive_maximum: bool,
    pub(crate) minimum: Option<f64>,
    pub(crate) exclusive_minimum: bool,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) max_length: Option<i64>,
    pub(crate) min_length: Option<i64>,
    pub(crate) pattern: Option<Pattern>,
    pub(crate) max_items: Option<i64>,
    pub(crate) min_items: Option<i64>,
    pub(crate) max_properties: Option<i64>,
    pub(crate) min_properties: Option<i64>,
    pub(crate) required: Vec<String>,
    pub(crate) properties: BTreeMap<String, Node>,
    pub(crate) additional_properties: Option<Additional>,
    pub(crate) items: Option<Box<Node>>,
    pub(crate) default: Option<Value>,
    pub(crate) preserve_unknown_fields: bool,
    pub(crate) embedded_resource: bool,
    pub(crate) list_type: Option<ListType>,
    /// `allOf`, `anyOf`, `oneOf` and `not`: value validations of the same value (a structural
    /// schema declares no types there, so they only validate).
    pub(crate) all_of: Vec<Node>,
    pub(crate) any_of: Vec<Node>,
    pub(crate) one_of: Vec<Node>,
    pub(crate) not: Option<Box<Node>>,
}

impl Node {
    /// Reads a node; unknown or ill-typed keywords are ignored (the CRD's own validation is
    /// where they would be refused).
    pub(crate) fn parse(v: &Value) -> Node {
        let Some(m) = v.as_object() else {
            return Node::default();
        };
        let flag = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
        let int = |k: &str| m.get(k).and_then(Value::as_i64);
        let float = |k: &str| m.get(k).and_then(Value::as_f64);
        let int_or_string = flag("x-kubernetes-int-or-string");
        let types = if int_or_string {
            vec![JsonType::Integer, JsonType::String]
        } else {
            m.get("type")
                .and_then(Value::as_str)
                .and_then(JsonType::parse)
                .into_iter()
                .collect()
        };
        let format = m.get("format").and_then(Value::as_str).unwrap_or("");
        let format = Format::supported(format, &types);
        let list_type = match m.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => Some(ListType::Set),
            Some("map") => Some(ListType::Map(strings(m, "x-kubernetes-list-map-keys"))),
            Some("atomic") => Some(ListType::Atomic),
            _ => None,
        };
        Node {
            types,
            nullable: flag("nullable"),
            format,
            enumeration: m.get("enum").and_then(Value::as_array).cloned(),
            maximum: float("maximum"),
            exclusive_maximum: flag("exclusiveMaximum"),
            minimum: float("minimum"),
            exclusive_minimum: flag("exclusiveMinimum"),
            multiple_of: float("multipleOf"),
            max_length: int("maxLength"),
            min_length: int("minLength"),
            pattern: m
                .get("pattern")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(|p| match super::go_regexp::compile(p) {
                    Ok(re) => Pattern::Compiled {
                        source: p.to_owned(),
                        re,
                    },
                    Err(error) => Pattern::Invalid {
                        source: p.to_owned(),
                        error,
                    },
                }),
            max_items: int("maxItems"),
            min_items: int("minItems"),
            max_properties: int("maxProperties"),
            min_properties: int("minProperties"),
            required: strings(m, "required"),
            properties: m
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().map(|(k, v)| (k.clone(), Node::parse(v))).collect())
                .unwrap_or_default(),
            additional_properties: match m.get("additionalProperties") {
                Some(Value::Bool(b)) => Some(Additional::Allows(*b)),
                Some(v @ Value::Object(_)) => Some(Additional::Schema(Box::new(Node::parse(v)))),
                _ => None,
            },
            items: m
                .get("items")
                .filter(|v| v.is_object())
                .map(|v| Box::new(Node::parse(v))),
            default: m.get("default").filter(|d| !d.is_null()).cloned(),
            preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            list_type,
            all_of: nodes(m, "allOf"),
            any_of: nodes(m, "anyOf"),
            one_of: nodes(m, "oneOf"),
            not: m
                .get("not")
                .filter(|v| v.is_object())
                .map(|v| Box::new(Node::parse(v))),
        }
    }

    /// Whether this node or any below it (properties, items, `additionalProperties`) satisfies
    /// `pred`.
    pub(crate) fn any(&self, pred: &impl Fn(&Node) -> bool) -> bool {
        pred(self)
            || self.properties.values().any(|n| n.any(pred))
            || self.items.as_deref().is_some_and(|n| n.any(pred))
            || matches!(&self.additional_properties, Some(Additional::Schema(s)) if s.any(pred))
    }

    /// The schema of a property, or of any key when `additionalProperties` is a schema.
    pub(crate) fn child(&self, key: &str) -> Option<&Node> {
        self.properties
            .get(key)
            .or(match &self.additional_properties {
                Some(Additional::Schema(s)) => Some(s),
                _ => None,
            })
    }
}

/// The schemas of a list keyword (`allOf`, `anyOf`, `oneOf`).
fn nodes(m: &Map, key: &str) -> Vec<Node> {
    m.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Node::parse).collect())
        .unwrap_or_default()
}

fn strings(m: &Map, key: &str) -> Vec<String> {
    m.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
