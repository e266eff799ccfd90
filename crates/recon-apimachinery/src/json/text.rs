//! A [`Value`] printed as serde_json prints its own: `Display` as compact JSON (`{:#}` as
//! pretty JSON), `Debug` as `Object {"a": Number(1)}`; one container at a time.

use std::fmt::{self, Write};

use super::{Map, Value};

/// What [`walk`] meets, in document order.
pub enum Event<'a> {
    /// An array (`true`) or object starts, with this many items.
    Open(bool, usize),
    /// The next item of the innermost container: its key in an object; whether it is the
    /// first.
    Item(Option<&'a str>, bool),
    /// A string, number, boolean or null.
    Scalar(&'a Value),
    /// The innermost container ends: an array (`true`) or object, and how many items it had.
    Close(bool, usize),
}

/// A container being walked: what is left of it, its size, and whether an item was met.
enum Level<'a> {
    Array(std::slice::Iter<'a, Value>, usize, bool),
    Object(super::map::Iter<'a>, usize, bool),
}

/// Where a [`walk`] starts: a value, or the items or fields of a container.
pub enum Root<'a> {
    /// A value.
    Value(&'a Value),
    /// The items of an array.
    Items(&'a [Value]),
    /// The fields of an object.
    Fields(&'a Map),
}

/// Walks `root` one container at a time (its own stack, not the call stack, so a value of any
/// depth is walked), telling `emit` what it meets in document order; the first error `emit`
/// returns ends the walk. Objects are walked in key order.
///
/// ```
/// use recon_apimachinery::json;
/// use recon_apimachinery::json::{Event, Root, walk};
///
/// let mut text = String::new();
/// walk(Root::Value(&json!({"a": [1]})), &mut |event| {
///     match event {
///         Event::Open(array, _) => text.push(if array { '[' } else { '{' }),
///         Event::Item(key, _) => text.push_str(key.unwrap_or("-")),
///         Event::Scalar(value) => text.push_str(&value.to_string()),
///         Event::Close(array, _) => text.push(if array { ']' } else { '}' }),
///     }
///     Ok(())
/// })
/// .unwrap();
/// assert_eq!(text, "{a[-1]}");
/// ```
pub fn walk<'a>(root: Root<'a>, emit: &mut impl FnMut(Event<'a>) -> fmt::Result) -> fmt::Result {
    let mut levels = Vec::new();
    match root {
        Root::Value(value) => open(value, &mut levels, emit)?,
        Root::Items(items) => {
            emit(Event::Open(true, items.len()))?;
            levels.push(Level::Array(items.iter(), items.len(), false));
        }
        Root::Fields(fields) => {
            emit(Event::Open(false, fields.len()))?;
            levels.push(Level::Object(fields.iter(), fields.len(), false));
        }
    }
    while let Some(top) = levels.last_mut() {
        let next = match top {
            Level::Array(items, _, any) => items
                .next()
                .map(|v| (None, v, std::mem::replace(any, true))),
            Level::Object(fields, _, any) => fields
                .next()
                .map(|(k, v)| (Some(k.as_str()), v, std::mem::replace(any, true))),
        };
        match next {
            Some((key, value, any)) => {
                emit(Event::Item(key, !any))?;
                open(value, &mut levels, emit)?;
            }
            None => {
                let (array, len) = match top {
                    Level::Array(_, len, _) => (true, *len),
                    Level::Object(_, len, _) => (false, *len),
                };
                levels.pop();
                emit(Event::Close(array, len))?;
            }
        }
    }
    Ok(())
}

fn open<'a>(
    value: &'a Value,
    levels: &mut Vec<Level<'a>>,
    emit: &mut impl FnMut(Event<'a>) -> fmt::Result,
) -> fmt::Result {
    match value {
        Value::Array(items) => {
            emit(Event::Open(true, items.len()))?;
            levels.push(Level::Array(items.iter(), items.len(), false));
        }
        Value::Object(fields) => {
            emit(Event::Open(false, fields.len()))?;
            levels.push(Level::Object(fields.iter(), fields.len(), false));
        }
        scalar => emit(Event::Scalar(scalar))?,
    }
    Ok(())
}

/// A string as JSON writes it, escaped as serde_json escapes.
fn write_string(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_str(&serde_json::to_string(s).map_err(|_| fmt::Error)?)
}

fn write_scalar(f: &mut impl Write, value: &Value) -> fmt::Result {
    match value {
        Value::Null => f.write_str("null"),
        Value::Bool(b) => write!(f, "{b}"),
        Value::Number(n) => write!(f, "{n}"),
        Value::String(s) => write_string(f, s),
        Value::Array(_) | Value::Object(_) => Ok(()),
    }
}

/// `root` as JSON, compact or, with `pretty`, indented by two spaces as serde_json's
/// pretty printer indents.
fn write_json(f: &mut impl Write, root: Root<'_>, pretty: bool) -> fmt::Result {
    let mut depth = 0usize;
    walk(root, &mut |event| match event {
        Event::Open(array, len) => {
            if len > 0 {
                depth += 1;
            }
            f.write_char(if array { '[' } else { '{' })
        }
        Event::Item(key, first) => {
            if !first {
                f.write_char(',')?;
            }
            if pretty {
                f.write_char('\n')?;
                indent(f, depth)?;
            }
            if let Some(key) = key {
                write_string(f, key)?;
                f.write_str(if pretty { ": " } else { ":" })?;
            }
            Ok(())
        }
        Event::Scalar(value) => write_scalar(f, value),
        Event::Close(array, len) => {
            if len > 0 {
                depth -= 1;
                if pretty {
                    f.write_char('\n')?;
                    indent(f, depth)?;
                }
            }
            f.write_char(if array { ']' } else { '}' })
        }
    })
}

fn indent(f: &mut impl Write, depth: usize) -> fmt::Result {
    for _ in 0..depth {
        f.write_str("  ")?;
    }
    Ok(())
}

/// serde_json's `Debug` of a value: `Null`, `Bool(true)`, `Number(1)`, `String("x")`,
/// `Array [..]` and `Object {"k": ..}`.
fn write_debug(f: &mut fmt::Formatter<'_>, root: Root<'_>) -> fmt::Result {
    let named = matches!(root, Root::Value(_));
    let mut outermost = true;
    walk(root, &mut |event| match event {
        Event::Open(array, _) => {
            if named || !std::mem::take(&mut outermost) {
                f.write_str(if array { "Array " } else { "Object " })?;
            }
            f.write_char(if array { '[' } else { '{' })
        }
        Event::Item(key, first) => {
            if !first {
                f.write_str(", ")?;
            }
            match key {
                Some(key) => write!(f, "{key:?}: "),
                None => Ok(()),
            }
        }
        Event::Scalar(value) => match value {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Number(n) => write!(f, "Number({n})"),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Array(_) | Value::Object(_) => Ok(()),
        },
        Event::Close(array, _) => f.write_char(if array { ']' } else { '}' }),
    })
}

pub(super) fn debug_items(f: &mut fmt::Formatter<'_>, items: &[Value]) -> fmt::Result {
    write_debug(f, Root::Items(items))
}

pub(super) fn debug_fields(f: &mut fmt::Formatter<'_>, fields: &Map) -> fmt::Result {
    write_debug(f, Root::Fields(fields))
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pretty = f.alternate();
        write_json(f, Root::Value(self), pretty)
    }
}

/// An object as JSON, as its [`Value`] prints.
impl fmt::Display for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pretty = f.alternate();
        write_json(f, Root::Fields(self), pretty)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_debug(f, Root::Value(self))
    }
}
