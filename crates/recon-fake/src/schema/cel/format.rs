//! `string.format(list)` of cel-go's strings extension (the `en_US` locale): `%s`, `%d`,
//! `%f`, `%e`, `%b`, `%x`, `%X`, `%o` and `%%`.

use recon_apimachinery::go_json::go_float;
use recon_apimachinery::go_quote;

use super::value::{EvalError, Result, Value, display, entries};

/// Formats `args` into `template`.
pub(super) fn format(template: &str, args: &[Value<'_>]) -> Result<String> {
    let mut out = String::new();
    let mut chars = template.char_indices().peekable();
    let mut arg = 0usize;
    while let Some((i, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if let Some((_, '%')) = chars.peek() {
            chars.next();
            out.push('%');
            continue;
        }
        let Some(value) = args.get(arg) else {
            return Err(EvalError::new(format!("index {arg} out of range")));
        };
        if i + 1 >= template.len() {
            return Err(EvalError::new("unexpected end of string"));
        }
        let mut precision: Option<usize> = None;
        if let Some((_, '.')) = chars.peek() {
            chars.next();
            let mut digits = String::new();
            while let Some((_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            if chars.peek().is_none() {
                return Err(clause_error(
                    "error while parsing precision: could not find end of precision specifier",
                ));
            }
            precision = Some(digits.parse().map_err(|_| clause_error(EMPTY_PRECISION))?);
        }
        let Some((_, verb)) = chars.next() else {
            return Err(EvalError::new("unexpected end of string"));
        };
        let text = match verb {
            's' => string_clause(value)?,
            'd' => match value {
                Value::Int(n) => n.to_string(),
                Value::Uint(n) => n.to_string(),
                other => {
                    return Err(formatting_error(&format!(
                        "decimal clause can only be used on integers, was given {}",
                        other.type_name()
                    )));
                }
            },
            'f' | 'e' => {
                let f = match value {
                    Value::Double(f) => *f,
                    Value::String(s) if matches!(&**s, "NaN" | "Infinity" | "-Infinity") => {
                        match &**s {
                            "NaN" => f64::NAN,
                            "Infinity" => f64::INFINITY,
                            _ => f64::NEG_INFINITY,
                        }
                    }
                    other => {
                        let kind = if verb == 'f' {
                            "fixed-point clause can only be used on doubles"
                        } else {
                            "scientific clause can only be used on doubles"
                        };
                        return Err(formatting_error(&format!(
                            "{kind}, was given {}",
                            other.type_name()
                        )));
                    }
                };
                let p = precision.unwrap_or(6);
                if verb == 'f' {
                    fixed(f, p)
                } else {
                    scientific(f, p)
                }
            }
            'b' => match value {
                Value::Int(n) => {
                    if *n < 0 {
                        format!("-{:b}", n.unsigned_abs())
                    } else {
                        format!("{n:b}")
                    }
                }
                Value::Uint(n) => format!("{n:b}"),
                Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
                other => {
                    return Err(formatting_error(&format!(
                        "only integers and bools can be formatted as binary, was given {}",
                        other.type_name()
                    )));
                }
            },
            'o' => match value {
                Value::Int(n) if *n < 0 => format!("-{:o}", n.unsigned_abs()),
                Value::Int(n) => format!("{n:o}"),
                Value::Uint(n) => format!("{n:o}"),
                other => {
                    return Err(formatting_error(&format!(
                        "octal clause can only be used on integers, was given {}",
                        other.type_name()
                    )));
                }
            },
            'x' | 'X' => {
                let hex = match value {
                    Value::Int(n) if *n < 0 => format!("-{:x}", n.unsigned_abs()),
                    Value::Int(n) => format!("{n:x}"),
                    Value::Uint(n) => format!("{n:x}"),
                    Value::String(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                    Value::Bytes(b) => b.iter().map(|b| format!("{b:02x}")).collect(),
                    other => {
                        return Err(formatting_error(&format!(
                            "only integers, byte buffers, and strings can be formatted as hex, was given {}",
                            other.type_name()
                        )));
                    }
                };
                if verb == 'X' { hex.to_uppercase() } else { hex }
            }
            other => {
                return Err(clause_error(&format!(
                    "unrecognized formatting clause \"{other}\""
                )));
            }
        };
        out.push_str(&text);
        arg += 1;
    }
    Ok(out)
}

/// Go's error for a `%.` with no digits.
pub(super) const EMPTY_PRECISION: &str = "error while parsing precision: error while converting \
     precision to integer: strconv.Atoi: parsing \"\": invalid syntax";

fn clause_error(message: &str) -> EvalError {
    EvalError::new(format!("could not parse formatting clause: {message}"))
}

fn formatting_error(message: &str) -> EvalError {
    EvalError::new(format!("error during formatting: {message}"))
}

/// `%s`: lists and maps as CEL literals, other values as `string()` converts them.
///
/// A list or map read through its schema nests as deep as the object (as deep as Go reads):
/// the lists and maps being written are a list of their own, each with what it wrote so far,
/// rather than the call stack.
fn string_clause(v: &Value<'_>) -> Result<String> {
    let mut stack = match open(v, false)? {
        Opened::Text(text) => return Ok(text),
        Opened::Literal(literal) => vec![literal],
    };
    // The text of the member the literal on top asked for.
    let mut written: Option<String> = None;
    while let Some(top) = stack.last_mut() {
        let next = match top {
            Literal::List(items, parts) => {
                parts.extend(written.take());
                match items.next() {
                    Some(item) => item?,
                    None => {
                        written = Some(format!("[{}]", parts.join(", ")));
                        stack.pop();
                        continue;
                    }
                }
            }
            Literal::Map(entries, pairs, key) => {
                if let Some(text) = written.take() {
                    pairs.push((std::mem::take(key), text));
                }
                match entries.next() {
                    Some((k, v)) => {
                        *key = match &k {
                            Value::String(s) => go_quote(s),
                            Value::Bool(_) | Value::Int(_) | Value::Uint(_) => display(&k),
                            other => {
                                return Err(EvalError::new(format!(
                                    "no formatting function for map key of type {}",
                                    other.type_name()
                                )));
                            }
                        };
                        v
                    }
                    None => {
                        pairs.sort_by(|a, b| a.0.cmp(&b.0));
                        let parts: Vec<String> =
                            pairs.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                        written = Some(format!("{{{}}}", parts.join(", ")));
                        stack.pop();
                        continue;
                    }
                }
            }
        };
        match open(&next, true)? {
            Opened::Text(text) => written = Some(text),
            Opened::Literal(literal) => stack.push(literal),
        }
    }
    Ok(written.unwrap_or_default())
}

/// A list or map being written as a CEL literal: what is left of it, and what it wrote so far
/// (for a map, the key of the entry whose value is being written).
enum Literal<'a> {
    List(std::vec::IntoIter<Result<Value<'a>>>, Vec<String>),
    Map(
        std::vec::IntoIter<(Value<'a>, Value<'a>)>,
        Vec<(String, String)>,
        String,
    ),
}

/// A value's text begun: whole, or a list or map whose members are to be written.
enum Opened<'a> {
    Text(String),
    Literal(Literal<'a>),
}

/// The text of `v` under `%s`, or of `v` as an element of a list or map inside it (`member`:
/// as a CEL literal).
fn open<'a>(v: &Value<'a>, member: bool) -> Result<Opened<'a>> {
    let text = match v {
        Value::String(s) if member => go_quote(s),
        Value::Bytes(b) if member => format!("b{}", go_quote(&String::from_utf8_lossy(b))),
        Value::Double(f) if member && f.is_finite() => format!("{f:.6}"),
        Value::Double(f) if member => go_quote(&go_float(*f)),
        Value::Timestamp(t) if member => format!("timestamp({})", go_quote(&t.rfc3339())),
        Value::Duration(d) if member => format!("duration({})", go_quote(&d.seconds_text())),
        Value::Type(t) if member => format!("type({t})"),
        Value::List(l) => {
            return Ok(Opened::Literal(Literal::List(
                l.items().into_iter(),
                Vec::new(),
            )));
        }
        Value::Map(m) => {
            return Ok(Opened::Literal(Literal::Map(
                entries(m)?.into_iter(),
                Vec::new(),
                String::new(),
            )));
        }
        Value::Null => "null".to_owned(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Type(t) => t.to_string(),
        Value::Bool(_)
        | Value::Int(_)
        | Value::Uint(_)
        | Value::Double(_)
        | Value::String(_)
        | Value::Duration(_)
        | Value::Timestamp(_) => display(v),
        other => {
            return Err(formatting_error(&format!(
                "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                other.type_name()
            )));
        }
    };
    Ok(Opened::Text(text))
}

/// `%.Nf` in `en_US`: digits grouped by thousands.
fn fixed(f: f64, precision: usize) -> String {
    if !f.is_finite() {
        return go_float(f);
    }
    let text = format!("{:.*}", precision, f.abs());
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, c) in int_part.chars().enumerate() {
        if i > 0 && (int_part.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if f.is_sign_negative() && f != 0.0 {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// `%.Ne` as `en_US` prints it: `1.234568×10⁰⁴` (the exponent in superscript digits, at
/// least two, with a superscript minus when negative).
fn scientific(f: f64, precision: usize) -> String {
    if !f.is_finite() {
        return go_float(f);
    }
    let text = format!("{:.*e}", precision, f);
    let Some((mantissa, exp)) = text.split_once('e') else {
        return text;
    };
    let (negative, digits) = match exp.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, exp),
    };
    let superscript = |c: char| match c {
        '0' => '\u{2070}',
        '1' => '\u{b9}',
        '2' => '\u{b2}',
        '3' => '\u{b3}',
        d => char::from_u32(0x2070 + d.to_digit(10).unwrap_or(0)).unwrap_or(d),
    };
    let mut out = format!("{mantissa}\u{d7}10");
    if negative {
        out.push('\u{207b}');
    }
    out.extend(format!("{digits:0>2}").chars().map(superscript));
    out
}
