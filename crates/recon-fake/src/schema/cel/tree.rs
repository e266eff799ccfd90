//! The parts of a structural schema that CEL reads, with the raw `x-kubernetes-validations` of
//! every node (apiextensions `schema.Structural` as `cel.NewValidator` walks it).

use std::collections::BTreeMap;

use recon_apimachinery::json::{Map, Value as Json};

use crate::teardown::{self, Tree};

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum ListType {
    /// Unset or `atomic`.
    #[default]
    Atomic,
    Set,
    Map(Vec<String>),
    /// Anything else (refused by CRD validation; an error when read).
    Other(String),
}

/// One `x-kubernetes-validations` entry, as the CRD gives it.
#[derive(Debug, Clone, Default)]
pub(super) struct RawRule {
    pub(super) rule: String,
    pub(super) message: String,
    pub(super) message_expression: String,
    pub(super) reason: Option<String>,
    pub(super) field_path: String,
    pub(super) optional_old_self: Option<bool>,
}

/// One schema node. Read, copied and compiled on the large stack of compilation (by
/// recursion); dropped without.
#[derive(Debug, Clone, Default)]
pub(super) struct SNode {
    /// `type`, empty when unset.
    pub(super) ty: String,
    /// `ty`, told apart without comparing names (values are read by it on every step).
    pub(super) json_type: JsonType,
    pub(super) format: String,
    pub(super) nullable: bool,
    pub(super) int_or_string: bool,
    pub(super) preserve_unknown: bool,
    pub(super) embedded: bool,
    pub(super) properties: BTreeMap<String, SNode>,
    /// `additionalProperties` when it is a schema.
    pub(super) additional: Option<Box<SNode>>,
    pub(super) items: Option<Box<SNode>>,
    pub(super) list_type: ListType,
    /// `x-kubernetes-map-type`.
    pub(super) map_type: Option<String>,
    pub(super) rules: Vec<RawRule>,
    pub(super) all_of: Vec<SNode>,
    /// For the root of a resource (the custom resource, or an embedded one): the node as its
    /// rules see it, with `apiVersion`, `kind` and `metadata.name`/`generateName` declared.
    pub(super) resource_view: Option<Box<SNode>>,
    /// What cost estimation reads: `maxLength`, `maxItems`, `maxProperties`, ...
    pub(super) bounds: Bounds,
}

/// The types a schema's `type` names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum JsonType {
    Object,
    Array,
    String,
    Number,
    Integer,
    Boolean,
    /// No `type`, or one of no other name.
    #[default]
    Other,
}

impl JsonType {
    fn of(ty: &str) -> JsonType {
        match ty {
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            _ => JsonType::Other,
        }
    }
}

/// The parts of a node that bound the size of its values, for cost estimation.
#[derive(Debug, Clone, Default)]
pub(super) struct Bounds {
    pub(super) max_length: Option<i64>,
    pub(super) max_items: Option<i64>,
    pub(super) max_properties: Option<i64>,
    pub(super) required: Vec<String>,
    /// The length of the longest string of `enum`, when there is an `enum`.
    pub(super) enum_max_len: Option<i64>,
    pub(super) has_default: bool,
}

impl SNode {
    /// Reads the schema of a custom resource: its root is a resource root.
    pub(super) fn resource(v: &Json) -> SNode {
        let mut node = SNode::parse(v);
        node.resource_view = Some(Box::new(node.with_type_and_object_meta()));
        node
    }

    fn parse(v: &Json) -> SNode {
        let Some(m) = v.as_object() else {
            return SNode::default();
        };
        let s = |k: &str| m.get(k).and_then(Json::as_str).unwrap_or("").to_owned();
        let flag = |k: &str| m.get(k).and_then(Json::as_bool).unwrap_or(false);
        let list_type = match m.get("x-kubernetes-list-type").and_then(Json::as_str) {
            None | Some("atomic") => ListType::Atomic,
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(strings(m, "x-kubernetes-list-map-keys")),
            Some(other) => ListType::Other(other.to_owned()),
        };
        let mut node = SNode {
            ty: s("type"),
            json_type: JsonType::of(m.get("type").and_then(Json::as_str).unwrap_or("")),
            format: s("format"),
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            embedded: flag("x-kubernetes-embedded-resource"),
            properties: m
                .get("properties")
                .and_then(Json::as_object)
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| (k.clone(), SNode::parse(v)))
                        .collect()
                })
                .unwrap_or_default(),
            additional: m
                .get("additionalProperties")
                .filter(|a| a.is_object())
                .map(|a| Box::new(SNode::parse(a))),
            items: m
                .get("items")
                .filter(|i| i.is_object())
                .map(|i| Box::new(SNode::parse(i))),
            list_type,
            map_type: m
                .get("x-kubernetes-map-type")
                .and_then(Json::as_str)
                .map(str::to_owned),
            rules: m
                .get("x-kubernetes-validations")
                .and_then(Json::as_array)
                .map(|rules| rules.iter().map(raw_rule).collect())
                .unwrap_or_default(),
            all_of: m
                .get("allOf")
                .and_then(Json::as_array)
                .map(|all| all.iter().map(SNode::parse).collect())
                .unwrap_or_default(),
            resource_view: None,
            bounds: bounds(m),
        };
        if node.embedded {
            node.resource_view = Some(Box::new(node.with_type_and_object_meta()));
        }
        node
    }

    /// The schema a resource root's rules see (`WithTypeAndObjectMeta`): `kind` and
    /// `apiVersion` strings and a `metadata` with only `name` and `generateName`, unless the
    /// schema already declares all four as strings.
    fn with_type_and_object_meta(&self) -> SNode {
        let is_string = |n: Option<&SNode>| n.is_some_and(|n| n.ty == "string");
        let meta = self.properties.get("metadata");
        if is_string(self.properties.get("kind"))
            && is_string(self.properties.get("apiVersion"))
            && meta.is_some_and(|m| {
                m.ty == "object"
                    && is_string(m.properties.get("name"))
                    && is_string(m.properties.get("generateName"))
            })
        {
            let mut same = self.clone();
            same.resource_view = None;
            return same;
        }
        let typed = |ty: &str| {
            let mut node = SNode::default();
            node.ty = ty.to_owned();
            node.json_type = JsonType::of(ty);
            node
        };
        let mut view = self.clone();
        view.resource_view = None;
        view.properties.insert("kind".to_owned(), typed("string"));
        view.properties
            .insert("apiVersion".to_owned(), typed("string"));
        let mut metadata = typed("object");
        for name in ["name", "generateName"] {
            metadata.properties.insert(name.to_owned(), typed("string"));
        }
        view.properties.insert("metadata".to_owned(), metadata);
        view
    }

    /// Whether this node or one below it (through properties, items and additional
    /// properties) has rules.
    pub(super) fn has_rules(&self) -> bool {
        !self.rules.is_empty()
            || self.items.as_deref().is_some_and(SNode::has_rules)
            || self.additional.as_deref().is_some_and(SNode::has_rules)
            || self.properties.values().any(SNode::has_rules)
    }

    /// The node whose shape a value of this node has in CEL (the resource view at a root).
    pub(super) fn view(&self) -> &SNode {
        self.resource_view.as_deref().unwrap_or(self)
    }
}

/// A derived drop would take a frame per level (compiled rules are dropped on any thread's
/// stack): see [`teardown`].
impl Drop for SNode {
    fn drop(&mut self) {
        teardown::drop_children(self);
    }
}

impl Tree for SNode {
    type Children = (BTreeMap<String, SNode>, [Option<Box<SNode>>; 3], Vec<SNode>);

    fn take_children(&mut self) -> Self::Children {
        (
            std::mem::take(&mut self.properties),
            [
                self.additional.take(),
                self.items.take(),
                self.resource_view.take(),
            ],
            std::mem::take(&mut self.all_of),
        )
    }

    fn each((properties, boxed, all_of): Self::Children, into: &mut Vec<SNode>) {
        into.extend(properties.into_values());
        into.extend(boxed.into_iter().flatten().map(|n| *n));
        into.extend(all_of);
    }
}

fn strings(m: &Map, key: &str) -> Vec<String> {
    m.get(key)
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn bounds(m: &Map) -> Bounds {
    let int = |k: &str| m.get(k).and_then(Json::as_i64);
    let enum_max_len = m
        .get("enum")
        .and_then(Json::as_array)
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.iter()
                .filter_map(Json::as_str)
                .map(|s| i64::try_from(s.len()).unwrap_or(i64::MAX))
                .max()
                .unwrap_or(0)
        });
    Bounds {
        max_length: int("maxLength"),
        max_items: int("maxItems"),
        max_properties: int("maxProperties"),
        required: strings(m, "required"),
        enum_max_len,
        has_default: m.get("default").is_some_and(|d| !d.is_null()),
    }
}

fn raw_rule(v: &Json) -> RawRule {
    let s = |k: &str| v.get(k).and_then(Json::as_str).unwrap_or("").to_owned();
    RawRule {
        rule: s("rule"),
        message: s("message"),
        message_expression: s("messageExpression"),
        reason: v.get("reason").and_then(Json::as_str).map(str::to_owned),
        field_path: s("fieldPath"),
        optional_old_self: v.get("optionalOldSelf").and_then(Json::as_bool),
    }
}
