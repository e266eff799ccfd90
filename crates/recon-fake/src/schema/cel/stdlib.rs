//! The functions: cel-go's standard library (conversions, strings, timestamps; the arithmetic
//! and ordering operators are [`super::operators`]), optionals, and the strings, lists, sets and
//! regex extensions, with cel-go's results and error messages. The Kubernetes library types
//! (quantity, IP, CIDR, URL, semver, named formats) are left to [`super::ext`].

use std::rc::Rc;

use recon_apimachinery::go_json::go_float;
use recon_apimachinery::go_quote;

use super::operators::{binary, overflow};
use super::syntax::Op;
use super::time::{self, Timestamp};
use super::value::{EvalError, Result, Value, display, equal, err, no_overload};
use crate::schema::go_regexp::compile as compile_regex;

/// Calls `func` (resolved by the checker) on evaluated arguments, the receiver first when
/// `member` (a method).
pub(super) fn call<'a>(func: &str, member: bool, all: &[Value<'a>]) -> Result<Value<'a>> {
    use Value as V;
    if let [a, b] = all
        && let Some(answer) = binary(Op::of(func), a, b)
    {
        return answer;
    }
    match (func, all) {
        ("!_", [V::Bool(b)]) => Ok(V::Bool(!b)),
        ("-_", [V::Int(i)]) => i.checked_neg().map(V::Int).ok_or_else(overflow),
        ("-_", [V::Double(d)]) => Ok(V::Double(-d)),
        ("_[_]", [c, i]) => index(c, i),
        ("_[?_]", [c, i]) => opt_index(c, i),
        ("@in", [x, c]) => contains_value(c, x).map(V::Bool),
        ("size", [v]) => size(v).map(V::Int),
        ("type", [v]) => Ok(V::Type(v.type_name())),
        ("dyn", [v]) => Ok(v.clone()),
        (
            "int" | "uint" | "double" | "string" | "bytes" | "bool" | "timestamp" | "duration",
            [v],
        ) if !matches!(v, V::Ext(_)) => convert(func, v),
        ("contains", [V::String(s), V::String(t)]) => Ok(V::Bool(s.contains(&**t))),
        ("startsWith", [V::String(s), V::String(t)]) => Ok(V::Bool(s.starts_with(&**t))),
        ("endsWith", [V::String(s), V::String(t)]) => Ok(V::Bool(s.ends_with(&**t))),
        ("matches", [V::String(s), V::String(re)]) => {
            let re = compile_regex(re).map_err(EvalError::new)?;
            Ok(V::Bool(re.is_match(s)))
        }
        (
            "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
            | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
            [V::Timestamp(t), rest @ ..],
        ) => timestamp_part(func, *t, rest),
        ("getHours", [V::Duration(d)]) => Ok(V::Int(d.0 / 3_600_000_000_000)),
        ("getMinutes", [V::Duration(d)]) => Ok(V::Int(d.0 / 60_000_000_000)),
        ("getSeconds", [V::Duration(d)]) => Ok(V::Int(d.0 / 1_000_000_000)),
        ("getMilliseconds", [V::Duration(d)]) => Ok(V::Int(d.0 / 1_000_000)),
        ("optional.of", [v]) => Ok(V::Optional(Some(Rc::new(v.clone())))),
        ("optional.ofNonZeroValue", [v]) => {
            Ok(V::Optional((!is_zero(v)?).then(|| Rc::new(v.clone()))))
        }
        ("optional.none", []) => Ok(V::Optional(None)),
        ("hasValue", [V::Optional(o)]) => Ok(V::Bool(o.is_some())),
        ("value", [V::Optional(o)]) => match o {
            Some(v) => Ok((**v).clone()),
            None => err("optional.none() dereference"),
        },
        ("or", [V::Optional(o), other @ V::Optional(_)]) => Ok(match o {
            Some(_) => V::Optional(o.clone()),
            None => other.clone(),
        }),
        ("orValue", [V::Optional(o), other]) => Ok(match o {
            Some(v) => (**v).clone(),
            None => other.clone(),
        }),
        _ => super::strings::extensions(func, member, all),
    }
}

fn index<'a>(c: &Value<'a>, i: &Value<'a>) -> Result<Value<'a>> {
    match c {
        Value::List(l) => {
            // `types.IndexOrError`: an int, a uint, or a whole double.
            let n = match i {
                Value::Int(n) => *n,
                Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Double(d) if d.fract() == 0.0 && d.is_finite() => *d as i64,
                Value::Double(d) => {
                    return err(format!("unsupported index value {} in list", go_float(*d)));
                }
                other => {
                    return err(format!(
                        "unsupported index type '{}' in list",
                        other.type_name()
                    ));
                }
            };
            match usize::try_from(n).ok().and_then(|n| l.get(n)) {
                Some(v) => v,
                None => err(format!("index out of bounds: {n}")),
            }
        }
        Value::Map(m) => match m.find(i) {
            Some(v) => v,
            None => err(format!("no such key: {}", display(i))),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        _ => no_overload(),
    }
}

fn opt_index<'a>(c: &Value<'a>, i: &Value<'a>) -> Result<Value<'a>> {
    match c {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        Value::List(l) => {
            let n = match i {
                Value::Int(n) => usize::try_from(*n).ok(),
                _ => return no_overload(),
            };
            match n.and_then(|n| l.get(n)) {
                Some(v) => Ok(Value::Optional(Some(Rc::new(v?)))),
                None => Ok(Value::Optional(None)),
            }
        }
        Value::Map(m) => match m.find(i) {
            Some(v) => Ok(Value::Optional(Some(Rc::new(v?)))),
            None => Ok(Value::Optional(None)),
        },
        _ => no_overload(),
    }
}

fn contains_value(c: &Value<'_>, x: &Value<'_>) -> Result<bool> {
    match c {
        Value::List(l) => {
            for item in l.items() {
                if equal(&item?, x)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Map(m) => match m.find(x) {
            Some(v) => v.map(|_| true),
            None => Ok(false),
        },
        _ => no_overload(),
    }
}

fn size(v: &Value<'_>) -> Result<i64> {
    let n = match v {
        Value::String(s) => s.chars().count(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.len(),
        _ => return no_overload(),
    };
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A conversion function (`int(x)`, `string(x)`, ...).
fn convert<'a>(to: &str, v: &Value<'a>) -> Result<Value<'a>> {
    use Value as V;
    let conversion_error = |v: &Value<'_>| -> EvalError {
        let target = match to {
            "timestamp" => "google.protobuf.Timestamp",
            "duration" => "google.protobuf.Duration",
            other => other,
        };
        EvalError::new(format!(
            "type conversion error from '{}' to '{target}'",
            v.type_name()
        ))
    };
    match (to, v) {
        ("int", V::Int(_))
        | ("uint", V::Uint(_))
        | ("double", V::Double(_))
        | ("string", V::String(_))
        | ("bytes", V::Bytes(_))
        | ("bool", V::Bool(_))
        | ("timestamp", V::Timestamp(_))
        | ("duration", V::Duration(_)) => Ok(v.clone()),
        ("int", V::Uint(u)) => i64::try_from(*u).map(V::Int).map_err(|_| overflow()),
        ("int", V::Double(d)) => double_to_int(*d).map(V::Int).ok_or_else(overflow),
        ("int", V::String(s)) => s.parse().map(V::Int).map_err(|_| conversion_error(v)),
        ("int", V::Timestamp(t)) => Ok(V::Int(t.seconds())),
        ("int", V::Duration(d)) => Ok(V::Int(d.0)),
        ("uint", V::Int(i)) => u64::try_from(*i)
            .map(V::Uint)
            .map_err(|_| EvalError::new("unsigned integer overflow")),
        ("uint", V::Double(d)) => double_to_uint(*d)
            .map(V::Uint)
            .ok_or_else(|| EvalError::new("unsigned integer overflow")),
        ("uint", V::String(s)) => s.parse().map(V::Uint).map_err(|_| conversion_error(v)),
        ("double", V::Int(i)) => Ok(V::Double(*i as f64)),
        ("double", V::Uint(u)) => Ok(V::Double(*u as f64)),
        ("double", V::String(s)) => parse_go_float(s)
            .map(V::Double)
            .ok_or_else(|| conversion_error(v)),
        ("string", V::Bool(b)) => Ok(V::string(&b.to_string())),
        ("string", V::Int(i)) => Ok(V::string(&i.to_string())),
        ("string", V::Uint(u)) => Ok(V::string(&u.to_string())),
        ("string", V::Double(d)) => Ok(V::string(&go_float(*d))),
        ("string", V::Bytes(b)) => std::str::from_utf8(b)
            .map(V::string)
            .map_err(|_| EvalError::new("invalid UTF-8 in bytes, cannot convert to string")),
        ("string", V::Timestamp(t)) => Ok(V::string(&t.rfc3339())),
        ("string", V::Duration(d)) => Ok(V::string(&d.seconds_text())),
        ("bytes", V::String(s)) => Ok(V::Bytes(Rc::from(s.as_bytes()))),
        ("bool", V::String(s)) => match &**s {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(V::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(V::Bool(false)),
            _ => Err(conversion_error(v)),
        },
        ("timestamp", V::Int(i)) => Timestamp::checked(i128::from(*i) * 1_000_000_000)
            .map(V::Timestamp)
            .ok_or_else(|| EvalError::new("timestamp overflow")),
        ("timestamp", V::String(s)) => time::parse_timestamp(s)
            .map(V::Timestamp)
            .ok_or_else(|| EvalError::new(format!("invalid RFC 3339 timestamp {}", go_quote(s)))),
        ("duration", V::String(s)) => time::parse_duration(s)
            .map(V::Duration)
            .ok_or_else(|| conversion_error(v)),
        _ => no_overload(),
    }
}

/// Go's `strconv.ParseFloat` for the forms Rust also reads (plus Go's `Inf` spellings).
fn parse_go_float(s: &str) -> Option<f64> {
    match s {
        "inf" | "+inf" | "Inf" | "+Inf" | "infinity" | "+infinity" | "Infinity" => {
            Some(f64::INFINITY)
        }
        "-inf" | "-Inf" | "-infinity" | "-Infinity" => Some(f64::NEG_INFINITY),
        "nan" | "NaN" => Some(f64::NAN),
        _ if s
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

fn double_to_int(d: f64) -> Option<i64> {
    // The range a float64 can hold that fits in an int64 (`doubleToInt64Checked`).
    if d.is_nan() || d <= i64::MIN as f64 || d >= i64::MAX as f64 {
        return None;
    }
    Some(d as i64)
}

fn double_to_uint(d: f64) -> Option<u64> {
    if d.is_nan() || d < 0.0 || d >= u64::MAX as f64 {
        return None;
    }
    Some(d as u64)
}

fn timestamp_part<'a>(func: &str, t: Timestamp, rest: &[Value<'a>]) -> Result<Value<'a>> {
    let tz = match rest {
        [Value::String(z)] => Some(&**z),
        [] => None,
        _ => return no_overload(),
    };
    let dt = t.civil(tz).map_err(EvalError::new)?;
    let v = match func {
        "getFullYear" => dt.year,
        "getMonth" => dt.month - 1,
        "getDayOfYear" => dt.day_of_year,
        "getDayOfMonth" => dt.day - 1,
        "getDate" => dt.day,
        "getDayOfWeek" => dt.weekday,
        "getHours" => dt.hour,
        "getMinutes" => dt.minute,
        "getSeconds" => dt.second,
        _ => dt.nanos / 1_000_000,
    };
    Ok(Value::Int(v))
}

/// Whether a value is its type's zero value (`optional.ofNonZeroValue`).
fn is_zero(v: &Value<'_>) -> Result<bool> {
    Ok(match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::Duration(d) => d.0 == 0,
        Value::Timestamp(t) => t.0 == 0,
        Value::List(l) => l.len() == 0,
        Value::Map(m) => m.len() == 0,
        Value::Optional(o) => o.is_none(),
        _ => false,
    })
}
