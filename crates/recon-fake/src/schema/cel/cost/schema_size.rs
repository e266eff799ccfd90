//! The sizes a schema allows, as `common.SchemaDeclType` records them for cost estimation
//! (`MaxElements`, `MinSerializedSize`; Kubernetes `apiserver/pkg/cel/common/schemas.go`), and
//! how many times a node's rules may run in one object (`CELSchemaContext.MaxCardinality`).

use super::{MAX_REQUEST_BYTES, Range};
use crate::schema::cel::tree::SNode;
use crate::schema::cel::types::escape;

/// The most elements (characters, bytes, items, entries) a value of `s` has (`MaxElements`),
/// or `None` where `SchemaDeclType` has no type. `s` is the node as its values are seen (a
/// resource root's view).
pub(crate) fn max_elements(s: &SNode) -> Option<i64> {
    let b = &s.bounds;
    let per_request = MAX_REQUEST_BYTES - 2;
    if s.int_or_string {
        return Some(
            b.max_length
                .map_or(per_request, |l| l.max(0).saturating_mul(4)),
        );
    }
    match s.ty.as_str() {
        "array" => {
            let items = s.items.as_deref()?;
            let item_min = min_serialized_size(items.view())?;
            Some(
                b.max_items
                    .map_or(per_request / (item_min + 1), |n| n.max(0)),
            )
        }
        "object" => match s.additional.as_deref() {
            Some(values) => {
                let value_min = min_serialized_size(values.view())?;
                Some(
                    b.max_properties
                        .map_or(per_request / (value_min + 6), |n| n.max(0)),
                )
            }
            None => Some(0),
        },
        "string" => Some(match s.format.as_str() {
            "byte" => b.max_length.map_or(per_request, |l| l.max(0)),
            "duration" | "date-time" => 32,
            "date" => 12,
            _ => match (b.max_length, b.enum_max_len) {
                (Some(l), _) => l.max(0).saturating_mul(4),
                (None, Some(longest)) => longest,
                (None, None) => per_request,
            },
        }),
        "boolean" | "number" | "integer" => Some(0),
        _ => None,
    }
}

/// The fewest bytes a value of `s` takes in JSON (`MinSerializedSize`), or `None` where
/// `SchemaDeclType` has no type.
pub(crate) fn min_serialized_size(s: &SNode) -> Option<i64> {
    if s.int_or_string {
        return Some(1);
    }
    match s.ty.as_str() {
        "array" => s
            .items
            .as_deref()
            .and_then(|i| min_serialized_size(i.view()))
            .map(|_| 2),
        "object" => match s.additional.as_deref() {
            Some(values) => min_serialized_size(values.view()).map(|_| 2),
            None => {
                let mut size = 2_i64;
                for (name, prop) in &s.properties {
                    let Some(prop_min) = min_serialized_size(prop.view()) else {
                        continue;
                    };
                    if s.bounds.required.contains(name) && !prop.bounds.has_default {
                        let name_len = i64::try_from(name.len()).unwrap_or(i64::MAX);
                        size = size.saturating_add(name_len + prop_min + 4);
                    }
                }
                Some(size)
            }
        },
        "string" => Some(match s.format.as_str() {
            "duration" => 3,
            "date" => 12,
            "date-time" => 21,
            _ => 2,
        }),
        "boolean" => Some(4),
        "number" | "integer" => Some(1),
        _ => None,
    }
}

/// The size range of the value at `path` below `root` (the node a rule's `self` is), where
/// `path` is the rule's variable then field names, `@items`, `@values` or `@keys`
/// (`sizeEstimator.EstimateSize`).
pub(crate) fn size_at(root: &SNode, path: &[String]) -> Option<Range> {
    let mut node = root.view();
    let mut key = false;
    for step in path.iter().skip(1) {
        if key {
            // A map's keys are strings with no `MaxElements`.
            return None;
        }
        node = match step.as_str() {
            "@items" => node.items.as_deref()?.view(),
            "@values" => node.additional.as_deref()?.view(),
            "@keys" => {
                node.additional.as_deref()?;
                key = true;
                continue;
            }
            field => {
                let (_, prop) = node
                    .properties
                    .iter()
                    .find(|(name, _)| escape(name).as_deref() == Some(field))?;
                prop.view()
            }
        };
    }
    if key {
        return Some(Range::fixed(0));
    }
    let max = max_elements(node)?;
    Some(Range {
        min: 0,
        max: u64::try_from(max).unwrap_or(0),
    })
}

/// How many times the rules of a node may run for one object when nothing bounds it
/// (`maxCardinality`): as many as the smallest value of the node fits in a request.
pub(crate) fn unbounded_cardinality(s: &SNode) -> u64 {
    let min = min_serialized_size(s.view()).unwrap_or(0);
    u64::try_from(MAX_REQUEST_BYTES / (min + 1)).unwrap_or(0)
}

/// How many values a node's children may have per value of the node (`extractMaxElements`):
/// `None` when unbounded.
pub(crate) fn children_per_value(s: &SNode) -> Option<u64> {
    let bound = |n: Option<i64>| n.map(|n| u64::try_from(n.max(0)).unwrap_or(0));
    match s.ty.as_str() {
        "object" if s.additional.is_some() => bound(s.bounds.max_properties),
        "array" => bound(s.bounds.max_items),
        _ => Some(1),
    }
}
