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
use crate::teardown::{self, Tree};

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
#[derive(Debug)]
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

/// One schema node. It is not `Clone` (a derived copy would recurse once per level): a
/// schema shares its tree.
#[derive(Debug, Default)]
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
    ///
    /// One node at a time, whatever the depth: each is read with empty children in their
    /// places, which are then read in turn from their own schemas.
    pub(crate) fn parse(v: &Value) -> Node {
        let mut root = Node::default();
        let mut pending = vec![(v, &mut root)];
        while let Some((v, node)) = pending.pop() {
            let Some(m) = v.as_object() else {
                continue;
            };
            node.read_keywords(m);
            let Node {
                properties,
                additional_properties,
                items,
                all_of,
                any_of,
                one_of,
                not,
                ..
            } = node;
            if let Some(p) = m.get("properties").and_then(Value::as_object) {
                *properties = p.keys().map(|k| (k.clone(), Node::default())).collect();
                pending.extend(p.values().zip(properties.values_mut()));
            }
            match m.get("additionalProperties") {
                Some(Value::Bool(b)) => *additional_properties = Some(Additional::Allows(*b)),
                Some(v @ Value::Object(_)) => {
                    if let Additional::Schema(s) =
                        additional_properties.insert(Additional::Schema(Box::default()))
                    {
                        pending.push((v, &mut **s));
                    }
                }
                _ => {}
            }
            if let Some(v) = m.get("items").filter(|v| v.is_object()) {
                pending.push((v, &mut **items.insert(Box::default())));
            }
            for (key, list) in [("allOf", all_of), ("anyOf", any_of), ("oneOf", one_of)] {
                let schemas = m.get(key).and_then(Value::as_array).map(Vec::as_slice);
                let schemas = schemas.unwrap_or_default();
                *list = schemas.iter().map(|_| Node::default()).collect();
                pending.extend(schemas.iter().zip(list.iter_mut()));
            }
            if let Some(v) = m.get("not").filter(|v| v.is_object()) {
                pending.push((v, &mut **not.insert(Box::default())));
            }
        }
        root
    }

    /// Reads a node's own keywords into it (in place: a node dropped is dearer than its fields),
    /// not the schemas below it.
    fn read_keywords(&mut self, m: &Map) {
        let flag = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
        let int = |k: &str| m.get(k).and_then(Value::as_i64);
        let float = |k: &str| m.get(k).and_then(Value::as_f64);
        let int_or_string = flag("x-kubernetes-int-or-string");
        self.types = if int_or_string {
            vec![JsonType::Integer, JsonType::String]
        } else {
            m.get("type")
                .and_then(Value::as_str)
                .and_then(JsonType::parse)
                .into_iter()
                .collect()
        };
        let format = m.get("format").and_then(Value::as_str).unwrap_or("");
        self.format = Format::supported(format, &self.types);
        self.list_type = match m.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => Some(ListType::Set),
            Some("map") => Some(ListType::Map(strings(m, "x-kubernetes-list-map-keys"))),
            Some("atomic") => Some(ListType::Atomic),
            _ => None,
        };
        self.nullable = flag("nullable");
        self.enumeration = m.get("enum").and_then(Value::as_array).cloned();
        self.maximum = float("maximum");
        self.exclusive_maximum = flag("exclusiveMaximum");
        self.minimum = float("minimum");
        self.exclusive_minimum = flag("exclusiveMinimum");
        self.multiple_of = float("multipleOf");
        self.max_length = int("maxLength");
        self.min_length = int("minLength");
        self.pattern = m
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
            });
        self.max_items = int("maxItems");
        self.min_items = int("minItems");
        self.max_properties = int("maxProperties");
        self.min_properties = int("minProperties");
        self.required = strings(m, "required");
        self.default = m.get("default").filter(|d| !d.is_null()).cloned();
        self.preserve_unknown_fields = flag("x-kubernetes-preserve-unknown-fields");
        self.embedded_resource = flag("x-kubernetes-embedded-resource");
    }

    /// Whether this node or any below it (properties, items, `additionalProperties`) satisfies
    /// `pred`, asked of each node in the order a recursion would visit them (without one).
    pub(crate) fn any(&self, pred: &impl Fn(&Node) -> bool) -> bool {
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            if pred(node) {
                return true;
            }
            if let Some(Additional::Schema(s)) = &node.additional_properties {
                pending.push(s);
            }
            pending.extend(node.items.as_deref());
            pending.extend(node.properties.values().rev());
        }
        false
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

/// A derived drop would take a frame per level: see [`teardown`].
impl Drop for Node {
    fn drop(&mut self) {
        teardown::drop_children(self);
    }
}

impl Tree for Node {
    type Children = (
        BTreeMap<String, Node>,
        Option<Additional>,
        [Option<Box<Node>>; 2],
        [Vec<Node>; 3],
    );

    fn take_children(&mut self) -> Self::Children {
        (
            std::mem::take(&mut self.properties),
            self.additional_properties.take(),
            [self.items.take(), self.not.take()],
            [
                std::mem::take(&mut self.all_of),
                std::mem::take(&mut self.any_of),
                std::mem::take(&mut self.one_of),
            ],
        )
    }

    fn each((properties, additional, boxed, lists): Self::Children, into: &mut Vec<Node>) {
        into.extend(properties.into_values());
        if let Some(Additional::Schema(s)) = additional {
            into.push(*s);
        }
        into.extend(boxed.into_iter().flatten().map(|n| *n));
        into.extend(lists.into_iter().flatten());
    }
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
