//! What a call costs when it runs, from its arguments (cel-go's `CostTracker.costCall` with
//! the Kubernetes `CostEstimator.CallCost` and the lists and sets extensions' trackers).
//!
//! cel-go adds a call's cost after the call returns; recon charges it before the call, from
//! the arguments, so that a call over the limit is refused before it allocates. The result is
//! the same: the evaluation stops with the cost limit's error either way.

use super::{LIST_CREATE, REGEX_LENGTH, STRING_TRAVERSAL, by_factor};
use crate::schema::cel::value::Value;

/// The longest string, bytes or list a call may build. The real server has no such bound (a
/// `replace` whose replacement is itself a `replace` grows the result geometrically until the
/// process runs out of memory); recon refuses the call as over the cost limit instead.
pub(crate) const MAX_RESULT_LEN: u64 = 32 << 20;

/// The cost of calling `func` on `args` (the receiver first when `member`: a method), or
/// `u64::MAX` for a call whose result would be longer than [`MAX_RESULT_LEN`].
pub(crate) fn call_cost(func: &str, member: bool, args: &[Value<'_>]) -> u64 {
    let size = |i: usize| args.get(i).map_or(1, |v| size_of(v));
    let traverse = |n: u64, factor: f64| by_factor(n, factor);
    match (func, args) {
        // The sets and lists extensions' trackers.
        ("sets.contains" | "sets.intersects", [a, b]) => {
            1 + traverse(size_of(a).saturating_mul(size_of(b)), 1.0)
        }
        ("sets.equivalent", [a, b]) => 1 + traverse(size_of(a).saturating_mul(size_of(b)), 2.0),
        ("slice", [Value::List(l), Value::Int(from), Value::Int(to)]) => {
            let len = l.len() as i64;
            let n = (*to)
                .clamp(0, len)
                .saturating_sub((*from).clamp(0, len))
                .max(0);
            allocating_list(1.0, n as u64)
        }
        ("lists.range", [Value::Int(n)]) => allocating_list(1.0, u64::try_from(*n).unwrap_or(0)),
        ("reverse", [v]) => allocating_list(1.0, size_of(v)),
        ("flatten", [v, rest @ ..]) => {
            let depth = match rest {
                [Value::Int(d)] => *d as f64,
                _ => 1.0,
            };
            allocating_list(depth, size_of(v))
        }
        ("distinct" | "sort", [v]) => self_compare(v),
        // The Kubernetes library.
        ("isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf", [v, ..]) => traversal(v),
        (
            "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "jsonpatch.escapeKey",
            [v, ..],
        )
        | (
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver",
            [v, ..],
        ) => traverse(size_of(v), STRING_TRAVERSAL),
        (
            "replace",
            [
                Value::String(s),
                Value::String(old),
                Value::String(new),
                rest @ ..,
            ],
        ) => {
            let limit = match rest {
                [Value::Int(n)] => *n,
                _ => -1,
            };
            if replaced_len(s, old, new, limit) > MAX_RESULT_LEN {
                return u64::MAX;
            }
            traverse(size(0), 2.0 * STRING_TRAVERSAL)
        }
        ("split", [v, ..]) => traverse(size_of(v), 2.0 * STRING_TRAVERSAL),
        ("join", [Value::List(l), rest @ ..]) => {
            let items: u64 = l
                .items()
                .iter()
                .map(|i| i.as_ref().map_or(0, size_of))
                .fold(0, u64::saturating_add);
            let separators = rest.first().map_or(0, |v| size_of(v));
            let len =
                items.saturating_add(separators.saturating_mul(l.len().saturating_sub(1) as u64));
            if len > MAX_RESULT_LEN {
                return u64::MAX;
            }
            traverse(len, 2.0 * STRING_TRAVERSAL)
        }
        ("find" | "findAll", [s, re, ..]) => {
            let text = traverse(size_of(s).saturating_add(1), STRING_TRAVERSAL);
            text.saturating_mul(traverse(size_of(re), REGEX_LENGTH))
        }
        ("ip", [Value::Ext(_)]) => 1,
        ("ip", [v]) => traverse(size_of(v), STRING_TRAVERSAL),
        ("ip.isCanonical", [v]) => traverse(size_of(v), 2.0 * STRING_TRAVERSAL),
        ("containsIP" | "containsCIDR", [cidr, other]) => {
            let c = size_of(cidr);
            let mut cost = traverse(c.saturating_add(c), STRING_TRAVERSAL);
            if func == "containsCIDR" {
                cost = cost.saturating_add(traverse(c, STRING_TRAVERSAL) + 1);
            }
            if matches!(other, Value::String(_)) {
                cost = cost.saturating_add(traverse(size_of(other), STRING_TRAVERSAL));
            }
            cost
        }
        // cel-go's own.
        ("startsWith" | "endsWith" | "format", [v, ..]) | ("strings.quote", [v]) => {
            traverse(size_of(v), STRING_TRAVERSAL)
        }
        ("bytes", [v @ Value::String(_)]) | ("string", [v @ Value::Bytes(_)]) => {
            traverse(size_of(v), STRING_TRAVERSAL)
        }
        ("@in", [_, c @ Value::List(_)]) => size_of(c),
        ("_<_" | "_<=_" | "_>_" | "_>=_", [a @ (Value::String(_) | Value::Bytes(_)), b])
        | ("_==_" | "_!=_", [a, b])
            if !matches!(a, Value::Ext(_)) =>
        {
            traverse(size_of(a).min(size_of(b)), STRING_TRAVERSAL)
        }
        ("_+_", [a @ (Value::String(_) | Value::Bytes(_)), b]) => {
            traverse(size_of(a).saturating_add(size_of(b)), STRING_TRAVERSAL)
        }
        ("matches", [s, re]) if member => {
            let text = traverse(size_of(s).saturating_add(1), STRING_TRAVERSAL);
            text.saturating_mul(traverse(size_of(re), REGEX_LENGTH))
        }
        ("contains", [s, sub]) => traverse(size_of(s), STRING_TRAVERSAL)
            .saturating_mul(traverse(size_of(sub), STRING_TRAVERSAL)),
        _ => 1,
    }
}

/// `actualSize`: characters of a string, bytes, entries of a list or map, the value of a
/// present optional; one for anything else.
pub(crate) fn size_of(v: &Value<'_>) -> u64 {
    match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.len() as u64,
        Value::Optional(Some(inner)) => size_of(inner),
        _ => 1,
    }
}

/// `trackAllocatingListCall`.
fn allocating_list(factor: f64, size: u64) -> u64 {
    ((size as f64 * factor) as u64).saturating_add(1 + LIST_CREATE)
}

/// `trackListSelfCompare`: every pair compared, twice, strings a bit more.
fn self_compare(v: &Value<'_>) -> u64 {
    let n = size_of(v);
    let strings = matches!(v, Value::List(l) if matches!(l.get(0), Some(Ok(Value::String(_) | Value::Bytes(_)))));
    let factor = if strings { 2.0 + STRING_TRAVERSAL } else { 2.0 };
    allocating_list(factor, n.saturating_mul(n))
}

/// `traversalCost`: a tenth per character or byte of every string inside, one per other
/// value (the Kubernetes list functions' cost). A sum over everything inside, one value at a
/// time (a value read through its schema nests as deep as the object).
fn traversal(v: &Value<'_>) -> u64 {
    let mut total = 0_u64;
    let mut pending = vec![v.clone()];
    while let Some(v) = pending.pop() {
        let own = match &v {
            Value::String(s) => (s.len() as f64 * STRING_TRAVERSAL) as u64,
            Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL) as u64,
            Value::List(l) => {
                let mut unreadable = 0_u64;
                for item in l.items() {
                    match item {
                        Ok(item) => pending.push(item),
                        Err(_) => unreadable += 1,
                    }
                }
                unreadable
            }
            Value::Map(m) => {
                let mut unreadable = 0_u64;
                for k in m.keys() {
                    match m.find(&k).and_then(Result::ok) {
                        Some(value) => pending.push(value),
                        None => unreadable += 1,
                    }
                    pending.push(k);
                }
                unreadable
            }
            _ => 1,
        };
        total = total.saturating_add(own);
    }
    total
}

/// The length in bytes of Go's `strings.Replace(s, old, new, n)`.
fn replaced_len(s: &str, old: &str, new: &str, limit: i64) -> u64 {
    if limit == 0 {
        return s.len() as u64;
    }
    let found = if old.is_empty() {
        s.chars().count() as u64 + 1
    } else {
        s.matches(old).count() as u64
    };
    let count = match u64::try_from(limit) {
        Ok(n) => found.min(n),
        Err(_) => found,
    };
    let removed = count.saturating_mul(old.len() as u64);
    (s.len() as u64)
        .saturating_sub(removed)
        .saturating_add(count.saturating_mul(new.len() as u64))
}
