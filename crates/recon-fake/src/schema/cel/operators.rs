//! The arithmetic and ordering operators (`+`, `-`, `*`, `/`, `%`, `<` and the others) on the
//! values they are defined for, with cel-go's overflow and error messages.

use std::cmp::Ordering;
use std::rc::Rc;

use super::syntax::Op;
use super::time::{Duration, Timestamp};
use super::tree::ListType;
use super::types::escape;
use super::value::{
    self, EvalError, List, Result, Value, equal, err, items, no_overload, numeric_cmp,
};

/// The error of an `int` operation whose result does not fit.
pub(super) fn overflow() -> EvalError {
    EvalError::new("integer overflow")
}

/// The relations and arithmetic operators of [`Op`] on any operands; `None` for the other
/// operators.
pub(super) fn binary<'a>(op: Op, a: &Value<'a>, b: &Value<'a>) -> Option<Result<Value<'a>>> {
    use Value as V;
    Some(match op {
        Op::Equal => equal(a, b).map(V::Bool),
        Op::NotEqual => equal(a, b).map(|same| V::Bool(!same)),
        Op::Less => compare(a, b).map(|o| V::Bool(o == Ordering::Less)),
        Op::LessEqual => compare(a, b).map(|o| V::Bool(o != Ordering::Greater)),
        Op::Greater => compare(a, b).map(|o| V::Bool(o == Ordering::Greater)),
        Op::GreaterEqual => compare(a, b).map(|o| V::Bool(o != Ordering::Less)),
        Op::Add => add(a, b),
        Op::Subtract => sub(a, b),
        Op::Multiply => arith(a, b, '*'),
        Op::Divide => arith(a, b, '/'),
        Op::Modulo => arith(a, b, '%'),
        _ => return None,
    })
}

/// [`binary`] when both operands are numbers, bools or null, whose cost is one whatever the
/// operator; `None` otherwise (strings, lists and the like cost by their size).
pub(super) fn on_scalars<'a>(op: Op, a: &Value<'a>, b: &Value<'a>) -> Option<Result<Value<'a>>> {
    let scalar = |v: &Value<'_>| {
        matches!(
            v,
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Uint(_) | Value::Double(_)
        )
    };
    if let (Value::Int(x), Value::Int(y)) = (a, b)
        && let Some(truth) = relate_ints(op, *x, *y)
    {
        return Some(Ok(Value::Bool(truth)));
    }
    if scalar(a) && scalar(b) {
        binary(op, a, b)
    } else {
        None
    }
}

/// A relation of [`Op`] between two ints, the commonest case in a loop, answered at once;
/// `None` for the other operators.
pub(super) fn relate_ints(op: Op, x: i64, y: i64) -> Option<bool> {
    Some(match op {
        Op::Equal => x == y,
        Op::NotEqual => x != y,
        Op::Less => x < y,
        Op::LessEqual => x <= y,
        Op::Greater => x > y,
        Op::GreaterEqual => x >= y,
        _ => return None,
    })
}

/// The ordering operators: numbers across types, strings (by bytes), bytes, bools,
/// timestamps and durations.
pub(super) fn compare(a: &Value<'_>, b: &Value<'_>) -> Result<Ordering> {
    use Value as V;
    match (a, b) {
        (V::Int(_) | V::Uint(_) | V::Double(_), V::Int(_) | V::Uint(_) | V::Double(_)) => {
            numeric_cmp(a, b).ok_or_else(|| EvalError::new("NaN values cannot be ordered"))
        }
        (V::String(x), V::String(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        (V::Bytes(x), V::Bytes(y)) => Ok(x.cmp(y)),
        (V::Bool(x), V::Bool(y)) => Ok(x.cmp(y)),
        (V::Timestamp(x), V::Timestamp(y)) => Ok(x.cmp(y)),
        (V::Duration(x), V::Duration(y)) => Ok(x.cmp(y)),
        _ => no_overload(),
    }
}

/// `+`: numbers of one type, strings, bytes, lists, and timestamps with durations.
pub(super) fn add<'a>(a: &Value<'a>, b: &Value<'a>) -> Result<Value<'a>> {
    use Value as V;
    match (a, b) {
        (V::Int(x), V::Int(y)) => x.checked_add(*y).map(V::Int).ok_or_else(overflow),
        (V::Uint(x), V::Uint(y)) => x
            .checked_add(*y)
            .map(V::Uint)
            .ok_or_else(|| EvalError::new("unsigned integer overflow")),
        (V::Double(x), V::Double(y)) => Ok(V::Double(x + y)),
        (V::String(x), V::String(y)) => Ok(V::string(&format!("{x}{y}"))),
        (V::Bytes(x), V::Bytes(y)) => Ok(V::Bytes(Rc::from([&x[..], &y[..]].concat()))),
        (V::List(x), V::List(y)) => concat(x, y).map(V::list),
        (V::Timestamp(t), V::Duration(d)) | (V::Duration(d), V::Timestamp(t)) => {
            Timestamp::checked(t.0 + i128::from(d.0))
                .map(V::Timestamp)
                .ok_or_else(|| EvalError::new("timestamp overflow"))
        }
        (V::Duration(x), V::Duration(y)) => {
            x.0.checked_add(y.0)
                .map(|d| V::Duration(Duration(d)))
                .ok_or_else(overflow)
        }
        _ => no_overload(),
    }
}

/// `+` on lists: a `set` list on the left takes the new elements of the right, a `map` list
/// takes the right's items by key (replacing or appending), any other list appends.
fn concat<'a>(x: &List<'a>, y: &List<'a>) -> Result<Vec<Value<'a>>> {
    let mut out = items(x)?;
    match x.list_type() {
        Some(ListType::Set) => {
            for v in y.items() {
                let v = v?;
                if value::position(&out, &v)?.is_none() {
                    out.push(v);
                }
            }
        }
        Some(ListType::Map(keys)) => {
            let escaped: Vec<Value<'_>> = keys
                .iter()
                .map(|k| Value::string(&escape(k).unwrap_or_else(|| k.clone())))
                .collect();
            let key_of = |v: &Value<'a>| -> Vec<Option<Value<'a>>> {
                match v {
                    Value::Map(m) => escaped
                        .iter()
                        .map(|k| m.find(k).and_then(std::result::Result::ok))
                        .collect(),
                    _ => Vec::new(),
                }
            };
            for v in y.items() {
                let v = v?;
                let wanted = key_of(&v);
                let same = |o: &Value<'a>| {
                    let k = key_of(o);
                    k.len() == wanted.len()
                        && k.iter().zip(&wanted).all(|(a, b)| match (a, b) {
                            (Some(a), Some(b)) => equal(a, b).unwrap_or(false),
                            (None, None) => true,
                            _ => false,
                        })
                };
                match out.iter().position(same) {
                    Some(i) => out[i] = v,
                    None => out.push(v),
                }
            }
        }
        _ => out.extend(items(y)?),
    }
    Ok(out)
}

/// `-`: numbers of one type, timestamps and durations.
pub(super) fn sub<'a>(a: &Value<'a>, b: &Value<'a>) -> Result<Value<'a>> {
    use Value as V;
    match (a, b) {
        (V::Int(x), V::Int(y)) => x.checked_sub(*y).map(V::Int).ok_or_else(overflow),
        (V::Uint(x), V::Uint(y)) => x
            .checked_sub(*y)
            .map(V::Uint)
            .ok_or_else(|| EvalError::new("unsigned integer overflow")),
        (V::Double(x), V::Double(y)) => Ok(V::Double(x - y)),
        (V::Timestamp(x), V::Timestamp(y)) => i64::try_from(x.0 - y.0)
            .map(|d| V::Duration(Duration(d)))
            .map_err(|_| overflow()),
        (V::Timestamp(t), V::Duration(d)) => Timestamp::checked(t.0 - i128::from(d.0))
            .map(V::Timestamp)
            .ok_or_else(|| EvalError::new("timestamp overflow")),
        (V::Duration(x), V::Duration(y)) => {
            x.0.checked_sub(y.0)
                .map(|d| V::Duration(Duration(d)))
                .ok_or_else(overflow)
        }
        _ => no_overload(),
    }
}

/// `*`, `/` and `%` (`op`) on numbers of one type.
pub(super) fn arith<'a>(a: &Value<'a>, b: &Value<'a>, op: char) -> Result<Value<'a>> {
    use Value as V;
    match (a, b, op) {
        (V::Int(_), V::Int(0), '/') | (V::Uint(_), V::Uint(0), '/') => err("division by zero"),
        (V::Int(_), V::Int(0), '%') | (V::Uint(_), V::Uint(0), '%') => err("modulus by zero"),
        (V::Int(x), V::Int(y), '*') => x.checked_mul(*y).map(V::Int).ok_or_else(overflow),
        (V::Int(x), V::Int(y), '/') => x.checked_div(*y).map(V::Int).ok_or_else(overflow),
        (V::Int(x), V::Int(y), _) => x.checked_rem(*y).map(V::Int).ok_or_else(overflow),
        (V::Uint(x), V::Uint(y), '*') => x
            .checked_mul(*y)
            .map(V::Uint)
            .ok_or_else(|| EvalError::new("unsigned integer overflow")),
        (V::Uint(x), V::Uint(y), '/') => Ok(V::Uint(x / y)),
        (V::Uint(x), V::Uint(y), _) => Ok(V::Uint(x % y)),
        (V::Double(x), V::Double(y), '*') => Ok(V::Double(x * y)),
        (V::Double(x), V::Double(y), '/') => Ok(V::Double(x / y)),
        _ => no_overload(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::cost::actual::call_cost;
    use super::*;

    const RELATIONS_AND_ARITHMETIC: [&str; 11] = [
        "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_+_", "_-_", "_*_", "_/_", "_%_",
    ];

    fn scalars() -> Vec<Value<'static>> {
        vec![
            Value::Null,
            Value::Bool(true),
            Value::Int(-7),
            Value::Int(0),
            Value::Int(i64::MAX),
            Value::Uint(3),
            Value::Uint(0),
            Value::Double(2.5),
            Value::Double(f64::NAN),
        ]
    }

    /// The interpreter answers these without looking the cost up by name, so the name's
    /// cost (`cost/actual.rs`, cel-go's `interpreter/runtimecost.go`) must be the one it
    /// charges: one, for every pair of scalar operands.
    #[test]
    fn scalar_operators_cost_one_as_runtimecost_charges() {
        for name in RELATIONS_AND_ARITHMETIC {
            let op = Op::of(name);
            for a in scalars() {
                for b in scalars() {
                    assert!(on_scalars(op, &a, &b).is_some(), "{name} {a:?} {b:?}");
                    let cost = call_cost(name, false, &[a.clone(), b.clone()]);
                    assert_eq!(cost, 1, "{name} {a:?} {b:?}");
                }
            }
        }
    }

    /// Two ints related at once are related as [`binary`] relates them.
    #[test]
    fn ints_are_related_as_binary_relates_them() {
        let ints = [i64::MIN, -1, 0, 1, i64::MAX];
        for name in RELATIONS_AND_ARITHMETIC {
            let op = Op::of(name);
            for x in ints {
                for y in ints {
                    let (a, b) = (Value::Int(x), Value::Int(y));
                    let fast = on_scalars(op, &a, &b).map(|r| r.map_err(|e| e.message));
                    let named = binary(op, &a, &b).map(|r| r.map_err(|e| e.message));
                    assert_eq!(format!("{fast:?}"), format!("{named:?}"), "{x} {name} {y}");
                }
            }
        }
    }

    /// Strings, lists and the like cost by their size: they take the named path.
    #[test]
    fn sized_operands_are_not_scalars() {
        let text = Value::String("abc".into());
        for name in RELATIONS_AND_ARITHMETIC {
            assert!(on_scalars(Op::of(name), &text, &text).is_none(), "{name}");
            assert!(
                on_scalars(Op::of(name), &Value::Int(1), &text).is_none(),
                "{name}"
            );
        }
        assert!(on_scalars(Op::And, &Value::Bool(true), &Value::Bool(true)).is_none());
    }
}
