//! The strings extension (cel-go's strings library, version 2), sets and regex functions,
//! with cel-go's results and errors; then the lists extensions.

use super::lists::{lists, set_contains};
use super::value::{self, EvalError, Result, Value, display, err, items};
use crate::schema::go_regexp::compile as compile_regex;

/// The strings, lists, sets and regex extensions, then the Kubernetes libraries.
pub(super) fn extensions<'a>(func: &str, member: bool, all: &[Value<'a>]) -> Result<Value<'a>> {
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
        _ => lists(func, member, all),
    }
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
