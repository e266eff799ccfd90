//! The lists extensions (Kubernetes' lists library and cel-go's, version 3), with their
//! results and errors; then the Kubernetes library types.

use std::cmp::Ordering;
use std::rc::Rc;

use super::ext;
use super::operators::{add, compare};
use super::time::Duration;
use super::value::{self, List, Result, Value, equal, err, items};

pub(super) fn set_contains(a: &List<'_>, b: &List<'_>) -> Result<bool> {
    let xs = items(a)?;
    for y in b.items() {
        if value::position(&xs, &y?)?.is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The lists extensions (Kubernetes' and cel-go's).
pub(super) fn lists<'a>(func: &str, member: bool, all: &[Value<'a>]) -> Result<Value<'a>> {
    use Value as V;
    match (func, all) {
        ("indexOf" | "lastIndexOf", [V::List(l), x]) => {
            let xs = items(l)?;
            let mut found = -1;
            for (i, v) in xs.iter().enumerate() {
                if equal(v, x)? {
                    found = i64::try_from(i).unwrap_or(i64::MAX);
                    if func == "indexOf" {
                        break;
                    }
                }
            }
            Ok(V::Int(found))
        }
        ("isSorted", [V::List(l)]) => {
            let xs = items(l)?;
            for pair in xs.windows(2) {
                if let [a, b] = pair
                    && compare(a, b)? == Ordering::Greater
                {
                    return Ok(V::Bool(false));
                }
            }
            Ok(V::Bool(true))
        }
        ("sum", [V::List(l)]) => {
            let xs = items(l)?;
            let mut acc = match xs.first() {
                Some(V::Uint(_)) => V::Uint(0),
                Some(V::Double(_)) => V::Double(0.0),
                Some(V::Duration(_)) => V::Duration(Duration(0)),
                _ => V::Int(0),
            };
            for x in &xs {
                acc = add(&acc, x)?;
            }
            Ok(acc)
        }
        ("min" | "max", [V::List(l)]) => {
            let xs = items(l)?;
            let Some(mut best) = xs.first().cloned() else {
                return err(format!("{func} called on empty list"));
            };
            for x in xs.iter().skip(1) {
                let o = compare(x, &best)?;
                if (func == "min" && o == Ordering::Less)
                    || (func == "max" && o == Ordering::Greater)
                {
                    best = x.clone();
                }
            }
            Ok(best)
        }
        ("slice", [V::List(l), V::Int(start), V::Int(end)]) => {
            let len = l.len();
            if *start < 0 || *end < 0 {
                return err(format!(
                    "cannot slice({start}, {end}), negative indexes not supported"
                ));
            }
            if start > end {
                return err(format!(
                    "cannot slice({start}, {end}), start index must be less than or equal to end index"
                ));
            }
            let (a, b) = (
                usize::try_from(*start).unwrap_or(usize::MAX),
                usize::try_from(*end).unwrap_or(usize::MAX),
            );
            if b > len {
                return err(format!(
                    "cannot slice({start}, {end}), list is length {len}"
                ));
            }
            let xs = items(l)?;
            Ok(V::list(xs.get(a..b).map(<[_]>::to_vec).unwrap_or_default()))
        }
        ("flatten", [V::List(l), rest @ ..]) => {
            let depth = match rest {
                [V::Int(d)] => *d,
                _ => 1,
            };
            if depth < 0 {
                return err("level must be non-negative");
            }
            let mut out = Vec::new();
            flatten(l, depth, &mut out)?;
            Ok(V::list(out))
        }
        ("lists.range", [V::Int(n)]) => {
            let n = u64::try_from(*n).unwrap_or(0);
            Ok(V::list(
                (0..n)
                    .map(|i| V::Int(i64::try_from(i).unwrap_or(i64::MAX)))
                    .collect(),
            ))
        }
        ("distinct", [V::List(l)]) => {
            let mut out: Vec<Value<'a>> = Vec::new();
            for x in l.items() {
                let x = x?;
                if value::position(&out, &x)?.is_none() {
                    out.push(x);
                }
            }
            Ok(V::list(out))
        }
        ("reverse", [V::List(l)]) => {
            let mut xs = items(l)?;
            xs.reverse();
            Ok(V::list(xs))
        }
        ("sort", [V::List(l)]) => {
            let xs = items(l)?;
            let order = sort_order(&xs)?;
            Ok(V::list(
                order
                    .into_iter()
                    .filter_map(|i| xs.get(i).cloned())
                    .collect(),
            ))
        }
        ("first" | "last", [V::List(l)]) => {
            let i = if func == "first" {
                0
            } else {
                l.len().wrapping_sub(1)
            };
            match l.get(i) {
                Some(v) => Ok(V::Optional(Some(Rc::new(v?)))),
                None => Ok(V::Optional(None)),
            }
        }
        _ => ext::call(func, member, all),
    }
}

/// The elements of `l`, those that are lists flattened `depth` levels down, in order: one list
/// at a time (a list read through its schema nests as deep as the object).
fn flatten<'a>(l: &List<'a>, depth: i64, out: &mut Vec<Value<'a>>) -> Result<()> {
    let mut lists = vec![(l.items().into_iter(), depth)];
    while let Some((items, depth)) = lists.last_mut() {
        let Some(x) = items.next() else {
            lists.pop();
            continue;
        };
        match x? {
            Value::List(inner) if *depth > 0 => {
                let below = *depth - 1;
                lists.push((inner.items().into_iter(), below));
            }
            v => out.push(v),
        }
    }
    Ok(())
}

/// The order that sorts `keys` (stably); they must be of one comparable type.
pub(super) fn sort_order(keys: &[Value<'_>]) -> Result<Vec<usize>> {
    if let Some(first) = keys.first() {
        let comparable = matches!(
            first,
            Value::Int(_)
                | Value::Uint(_)
                | Value::Double(_)
                | Value::Bool(_)
                | Value::String(_)
                | Value::Bytes(_)
                | Value::Duration(_)
                | Value::Timestamp(_)
        );
        if !comparable {
            return err("list elements must be comparable");
        }
        if keys
            .iter()
            .any(|k| std::mem::discriminant(k) != std::mem::discriminant(first))
        {
            return err("list elements must have the same type");
        }
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut failed = None;
    order.sort_by(|a, b| match (keys.get(*a), keys.get(*b)) {
        (Some(x), Some(y)) => compare(x, y).unwrap_or_else(|e| {
            failed = Some(e);
            Ordering::Equal
        }),
        _ => Ordering::Equal,
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(order),
    }
}
