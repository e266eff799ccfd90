//! The functions: cel-go's standard library (operators, conversions, strings, timestamps),
//! optionals, and the strings, lists, sets and regex extensions, with cel-go's results and
//! error messages. The Kubernetes library types (quantity, IP, CIDR, URL, semver, named
//! formats) are left to [`super::ext`].

use std::cmp::Ordering;
use std::rc::Rc;

use regex::Regex;

use super::super::number::go_float;
use super::eval::Env;
use super::ext;
use super::time::{self, Duration, Timestamp};
use super::tree::ListType;
use super::types::escape;
use super::value::{self, EvalError, List, MapVal, Result, Value, equal, numeric_cmp};

/// A regular expression as Go's `regexp` (RE2) would accept it.
pub(super) fn compile_regex(pattern: &str) -> std::result::Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("error parsing regexp: {e}"))
}

/// `%v` of a value in an error message (`no such key: a`).
pub(super) fn display(v: &Value<'_>) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => go_float(*d),
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Duration(d) => d.seconds_text(),
        Value::Timestamp(t) => t.rfc3339(),
        Value::Type(t) => t.to_string(),
        other => other.type_name().to_string(),
    }
}

fn no_overload<T>() -> Result<T> {
    Err(EvalError::no_overload())
}

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(EvalError::new(message))
}

/// Calls `func` (resolved by the checker) on evaluated arguments.
pub(super) fn call<'a>(
    func: &str,
    target: Option<Value<'a>>,
    args: Vec<Value<'a>>,
    env: &mut Env<'a>,
) -> Result<Value<'a>> {
    use Value as V;
    let member = target.is_some();
    let mut all: Vec<Value<'a>> = target.into_iter().collect();
    all.extend(args);
    match (func, all.as_slice()) {
        ("_==_", [a, b]) => Ok(V::Bool(equal(a, b)?)),
        ("_!=_", [a, b]) => Ok(V::Bool(!equal(a, b)?)),
        ("!_", [V::Bool(b)]) => Ok(V::Bool(!b)),
        ("_<_", [a, b]) => Ok(V::Bool(compare(a, b)? == Ordering::Less)),
        ("_<=_", [a, b]) => Ok(V::Bool(compare(a, b)? != Ordering::Greater)),
        ("_>_", [a, b]) => Ok(V::Bool(compare(a, b)? == Ordering::Greater)),
        ("_>=_", [a, b]) => Ok(V::Bool(compare(a, b)? != Ordering::Less)),
        ("_+_", [a, b]) => add(a, b, env),
        ("_-_", [a, b]) => sub(a, b),
        ("_*_", [a, b]) => arith(a, b, '*'),
        ("_/_", [a, b]) => arith(a, b, '/'),
        ("_%_", [a, b]) => arith(a, b, '%'),
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
            env.charge(u64::try_from(s.len() / 10).unwrap_or(u64::MAX))?;
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
        _ => extensions(func, member, &all, env),
    }
}

fn overflow() -> EvalError {
    EvalError::new("integer overflow")
}

/// The strings, lists, sets and regex extensions, then the Kubernetes libraries.
fn extensions<'a>(
    func: &str,
    member: bool,
    all: &[Value<'a>],
    env: &mut Env<'a>,
) -> Result<Value<'a>> {
    use Value as V;
    match (func, all) {
        ("charAt", [V::String(s), V::Int(i)]) => {
            let chars: Vec<char> = s.chars().collect();
            match usize::try_from(*i) {
                Ok(i) if i < chars.len() => Ok(V::string(&chars[i].to_string())),
                Ok(i) if i == chars.len() => Ok(V::string("")),
                _ => err(format!("index out of range: {i}")),
            }
        }
        ("indexOf", [V::String(s), V::String(sub), rest @ ..]) => {
            let offset = match rest {
                [V::Int(o)] => *o,
                _ => 0,
            };
            index_of(s, sub, offset).map(V::Int)
        }
        ("lastIndexOf", [V::String(s), V::String(sub), rest @ ..]) => {
            let len = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
            match rest {
                [V::Int(o)] => last_index_of(s, sub, *o).map(V::Int),
                _ if sub.is_empty() => Ok(V::Int(len)),
                _ if s.len() < sub.len() => Ok(V::Int(-1)),
                _ => last_index_of(s, sub, len - 1).map(V::Int),
            }
        }
        ("lowerAscii", [V::String(s)]) => Ok(V::string(&s.to_ascii_lowercase())),
        ("upperAscii", [V::String(s)]) => Ok(V::string(&s.to_ascii_uppercase())),
        ("replace", [V::String(s), V::String(old), V::String(new), rest @ ..]) => {
            let n = match rest {
                [V::Int(n)] => *n,
                _ => -1,
            };
            env.charge(u64::try_from(s.len() / 10).unwrap_or(u64::MAX))?;
            Ok(V::string(&go_replace(s, old, new, n)))
        }
        ("split", [V::String(s), V::String(sep), rest @ ..]) => {
            let n = match rest {
                [V::Int(n)] => *n,
                _ => -1,
            };
            Ok(V::list(
                go_split(s, sep, n).iter().map(|p| V::string(p)).collect(),
            ))
        }
        ("substring", [V::String(s), V::Int(start), rest @ ..]) => {
            let chars: Vec<char> = s.chars().collect();
            let len = chars.len();
            let end = match rest {
                [V::Int(end)] => *end,
                _ => {
                    return match usize::try_from(*start).ok().filter(|s| *s <= len) {
                        Some(a) => Ok(V::string(&chars[a..].iter().collect::<String>())),
                        None => err(format!("index out of range: {start}")),
                    };
                }
            };
            if start > &end {
                return err(format!(
                    "invalid substring range. start: {start}, end: {end}"
                ));
            }
            let (Ok(a), Ok(b)) = (usize::try_from(*start), usize::try_from(end)) else {
                let bad = if *start < 0 { start } else { &end };
                return err(format!("index out of range: {bad}"));
            };
            if a > len {
                return err(format!("index out of range: {start}"));
            }
            if b > len {
                return err(format!("index out of range: {end}"));
            }
            Ok(V::string(&chars[a..b].iter().collect::<String>()))
        }
        ("trim", [V::String(s)]) => Ok(V::string(s.trim())),
        ("join", [V::List(l), rest @ ..]) => {
            let sep = match rest {
                [V::String(sep)] => sep.to_string(),
                _ => String::new(),
            };
            let mut parts = Vec::new();
            for item in l.items() {
                match item? {
                    V::String(s) => parts.push(s.to_string()),
                    other => return err(format!("join: invalid input: {}", display(&other))),
                }
            }
            Ok(V::string(&parts.join(&sep)))
        }
        ("strings.quote", [V::String(s)]) => Ok(V::string(&quote(s))),
        ("format", [V::String(f), V::List(args)]) => {
            let args: Vec<Value<'a>> = args.items().into_iter().collect::<Result<_>>()?;
            super::format::format(f, &args).map(|s| V::string(&s))
        }
        ("sets.contains", [V::List(a), V::List(b)]) => set_contains(a, b).map(V::Bool),
        ("sets.equivalent", [V::List(a), V::List(b)]) => {
            Ok(V::Bool(set_contains(a, b)? && set_contains(b, a)?))
        }
        ("sets.intersects", [V::List(a), V::List(b)]) => {
            let xs = items(a)?;
            for y in b.items() {
                if value::position(&xs, &y?)?.is_some() {
                    return Ok(V::Bool(true));
                }
            }
            Ok(V::Bool(false))
        }
        ("find", [V::String(s), V::String(re)]) => {
            let re = compile_regex(re).map_err(EvalError::new)?;
            Ok(V::string(re.find(s).map_or("", |m| m.as_str())))
        }
        ("findAll", [V::String(s), V::String(re), rest @ ..]) => {
            let re = compile_regex(re).map_err(EvalError::new)?;
            let n = match rest {
                [V::Int(n)] => *n,
                _ => -1,
            };
            let limit = usize::try_from(n).unwrap_or(usize::MAX);
            Ok(V::list(
                re.find_iter(s)
                    .take(limit)
                    .map(|m| V::string(m.as_str()))
                    .collect(),
            ))
        }
        _ => lists(func, member, all, env),
    }
}

fn items<'a>(l: &List<'a>) -> Result<Vec<Value<'a>>> {
    l.items().into_iter().collect()
}

fn set_contains(a: &List<'_>, b: &List<'_>) -> Result<bool> {
    let xs = items(a)?;
    for y in b.items() {
        if value::position(&xs, &y?)?.is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The lists extensions (Kubernetes' and cel-go's).
fn lists<'a>(func: &str, member: bool, all: &[Value<'a>], env: &mut Env<'a>) -> Result<Value<'a>> {
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
                acc = add(&acc, x, env)?;
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
            flatten(l, depth, &mut out, env)?;
            Ok(V::list(out))
        }
        ("lists.range", [V::Int(n)]) => {
            let n = u64::try_from(*n).unwrap_or(0);
            env.charge(n)?;
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

fn flatten<'a>(
    l: &List<'a>,
    depth: i64,
    out: &mut Vec<Value<'a>>,
    env: &mut Env<'a>,
) -> Result<()> {
    for x in l.items() {
        env.charge(1)?;
        match x? {
            Value::List(inner) if depth > 0 => flatten(&inner, depth - 1, out, env)?,
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

fn add<'a>(a: &Value<'a>, b: &Value<'a>, env: &mut Env<'a>) -> Result<Value<'a>> {
    use Value as V;
    match (a, b) {
        (V::Int(x), V::Int(y)) => x.checked_add(*y).map(V::Int).ok_or_else(overflow),
        (V::Uint(x), V::Uint(y)) => x
            .checked_add(*y)
            .map(V::Uint)
            .ok_or_else(|| EvalError::new("unsigned integer overflow")),
        (V::Double(x), V::Double(y)) => Ok(V::Double(x + y)),
        (V::String(x), V::String(y)) => {
            env.charge(u64::try_from((x.len() + y.len()) / 10).unwrap_or(u64::MAX))?;
            Ok(V::string(&format!("{x}{y}")))
        }
        (V::Bytes(x), V::Bytes(y)) => Ok(V::Bytes(Rc::from([&x[..], &y[..]].concat()))),
        (V::List(x), V::List(y)) => {
            env.charge(u64::try_from(x.len() + y.len()).unwrap_or(u64::MAX))?;
            concat(x, y).map(V::list)
        }
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

fn sub<'a>(a: &Value<'a>, b: &Value<'a>) -> Result<Value<'a>> {
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

fn arith<'a>(a: &Value<'a>, b: &Value<'a>, op: char) -> Result<Value<'a>> {
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

fn index<'a>(c: &Value<'a>, i: &Value<'a>) -> Result<Value<'a>> {
    match c {
        Value::List(List::Json(items, _)) => {
            let Value::Int(n) = i else {
                return err(format!("unsupported index: {}", display(i)));
            };
            match usize::try_from(*n).ok().filter(|n| *n < items.len()) {
                Some(n) => c_list(c).and_then(|l| l.get(n)).unwrap_or_else(no_overload),
                None => err(format!("index out of bounds: {n}")),
            }
        }
        Value::List(l @ List::Owned(_)) => {
            let n = match i {
                Value::Int(n) => *n,
                Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                #[allow(clippy::cast_possible_truncation)]
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

fn c_list<'b, 'a>(c: &'b Value<'a>) -> Option<&'b List<'a>> {
    match c {
        Value::List(l) => Some(l),
        _ => None,
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
        #[allow(clippy::cast_precision_loss)]
        ("double", V::Int(i)) => Ok(V::Double(*i as f64)),
        #[allow(clippy::cast_precision_loss)]
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
        ("timestamp", V::String(s)) => {
            time::parse_timestamp(s).map(V::Timestamp).ok_or_else(|| {
                EvalError::new(format!(
                    "invalid RFC 3339 timestamp {}",
                    super::super::super::error::go_quote(s)
                ))
            })
        }
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
    #[allow(clippy::cast_precision_loss)]
    if d.is_nan() || d <= i64::MIN as f64 || d >= i64::MAX as f64 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    Some(d as i64)
}

fn double_to_uint(d: f64) -> Option<u64> {
    #[allow(clippy::cast_precision_loss)]
    if d.is_nan() || d < 0.0 || d >= u64::MAX as f64 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
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
        "getFullYear" => i64::from(dt.year()),
        "getMonth" => i64::from(dt.month()) - 1,
        "getDayOfYear" => i64::from(dt.day_of_year()) - 1,
        "getDayOfMonth" => i64::from(dt.day()) - 1,
        "getDate" => i64::from(dt.day()),
        "getDayOfWeek" => i64::from(dt.weekday().to_sunday_zero_offset()),
        "getHours" => i64::from(dt.hour()),
        "getMinutes" => i64::from(dt.minute()),
        "getSeconds" => i64::from(dt.second()),
        _ => i64::from(dt.subsec_nanosecond()) / 1_000_000,
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

/// `strings.indexOf` with an offset, in code points.
fn index_of(s: &str, sub: &str, offset: i64) -> Result<i64> {
    let Ok(off) = usize::try_from(offset) else {
        return err(format!("index out of range: {offset}"));
    };
    let chars: Vec<char> = s.chars().collect();
    let subs: Vec<char> = sub.chars().collect();
    let at = |i: usize| i64::try_from(i).unwrap_or(i64::MAX);
    if subs.is_empty() {
        return Ok(if off > chars.len() {
            at(chars.len())
        } else {
            offset
        });
    }
    if off >= chars.len() {
        return Ok(-1);
    }
    Ok(chars
        .get(off..)
        .and_then(|rest| rest.windows(subs.len()).position(|w| w == subs.as_slice()))
        .map_or(-1, |i| at(i + off)))
}

fn last_index_of(s: &str, sub: &str, offset: i64) -> Result<i64> {
    let Ok(mut off) = usize::try_from(offset) else {
        return err(format!("index out of range: {offset}"));
    };
    let chars: Vec<char> = s.chars().collect();
    let subs: Vec<char> = sub.chars().collect();
    let at = |i: usize| i64::try_from(i).unwrap_or(i64::MAX);
    if subs.is_empty() {
        return Ok(if off > chars.len() {
            at(chars.len())
        } else {
            offset
        });
    }
    if off >= chars.len() || subs.len() > chars.len() {
        return Ok(-1);
    }
    off = off.min(chars.len() - subs.len());
    for i in (0..=off).rev() {
        if chars.get(i..i + subs.len()) == Some(subs.as_slice()) {
            return Ok(at(i));
        }
    }
    Ok(-1)
}

/// Go's `strings.Replace(s, old, new, n)` (`n < 0`: every occurrence).
fn go_replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if n < 0 {
        return if old.is_empty() {
            go_replace(s, old, new, i64::MAX)
        } else {
            s.replace(old, new)
        };
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    if old.is_empty() {
        // An empty `old` matches before every character and at the end.
        let mut out = String::new();
        let mut count = 0;
        for c in s.chars() {
            if count < limit {
                out.push_str(new);
                count += 1;
            }
            out.push(c);
        }
        if count < limit {
            out.push_str(new);
        }
        return out;
    }
    s.replacen(old, new, limit)
}

/// Go's `strings.SplitN(s, sep, n)` (`n < 0`: every part; `0`: none).
fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    if sep.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        if chars.len() <= limit {
            return chars;
        }
        let mut out: Vec<String> = chars.iter().take(limit - 1).cloned().collect();
        out.push(chars[limit - 1..].concat());
        return out;
    }
    s.splitn(limit, sep).map(str::to_owned).collect()
}

/// `strings.quote`: a double-quoted CEL string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The entries of a map value, for formatting.
pub(super) fn entries<'a>(m: &MapVal<'a>) -> Result<Vec<(Value<'a>, Value<'a>)>> {
    let mut out = Vec::new();
    for k in m.keys() {
        if let Some(v) = m.find(&k) {
            out.push((k, v?));
        }
    }
    Ok(out)
}
