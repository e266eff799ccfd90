//! The walks every container of a [`Value`] needs past the depth they recurse to
//! ([`crate::depth`]), without recursion: dropping, copying and
//! comparing a value take the same stack at ten levels as at a hundred thousand.

use super::{Array, Map, Value};

thread_local! {
    /// How deep the drops of arrays and objects on this thread have recursed.
    pub(super) static DROPPING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// How deep the copies of arrays and objects on this thread have recursed.
    pub(super) static COPYING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// How deep the comparisons of arrays and objects on this thread have recursed.
    pub(super) static COMPARING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl Value {
    /// Whether this is an array or an object.
    pub(super) fn is_container(&self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }
}

/// Drops `values` and everything in them, one container at a time: the containers among
/// them are emptied into a list of their own before they are dropped, so no drop reaches
/// below them (scalars go at once).
pub(super) fn teardown(values: impl Iterator<Item = Value>) {
    let mut pending: Vec<Value> = values.filter(Value::is_container).collect();
    while let Some(container) = pending.pop() {
        match container {
            Value::Array(mut items) => pending.extend(
                std::mem::take(&mut items.0)
                    .into_iter()
                    .filter(Value::is_container),
            ),
            Value::Object(mut fields) => pending.extend(
                std::mem::take(&mut fields)
                    .into_values()
                    .filter(Value::is_container),
            ),
            _ => {}
        }
    }
}

/// A container being copied: what is left of the original, the copy so far and, for an
/// object, the key of the field being copied.
enum Copying<'a> {
    Array(std::slice::Iter<'a, Value>, Vec<Value>),
    Object(super::map::Iter<'a>, Vec<(String, Value)>, &'a str),
}

impl<'a> Copying<'a> {
    /// A copy of `value` begun: a container to fill, or the whole copy of a scalar or of a
    /// container of scalars (copied as its collection copies itself, one level deep).
    fn open(value: &'a Value) -> Result<Self, Value> {
        match value {
            Value::Array(items) if !items.iter().any(Value::is_container) => {
                Err(Value::Array(Array(items.0.clone())))
            }
            Value::Object(fields) if !fields.values().any(Value::is_container) => {
                Err(Value::Object(Map(fields.0.clone())))
            }
            Value::Array(items) => Ok(Copying::Array(
                items.iter(),
                Vec::with_capacity(items.len()),
            )),
            Value::Object(fields) => Ok(Copying::Object(
                fields.iter(),
                Vec::with_capacity(fields.len()),
                "",
            )),
            Value::Null => Err(Value::Null),
            Value::Bool(b) => Err(Value::Bool(*b)),
            Value::Number(n) => Err(Value::Number(n.clone())),
            Value::String(s) => Err(Value::String(s.clone())),
        }
    }

    /// The next value of the original to copy.
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Copying::Array(items, _) => items.next(),
            Copying::Object(fields, _, key) => fields.next().map(|(k, v)| {
                *key = k;
                v
            }),
        }
    }

    /// Puts the copy of the value [`Copying::next`] gave last into this container's copy.
    fn attach(&mut self, copy: Value) {
        match self {
            Copying::Array(_, items) => items.push(copy),
            Copying::Object(_, fields, key) => fields.push(((*key).to_owned(), copy)),
        }
    }

    fn finish(self) -> Value {
        match self {
            Copying::Array(_, items) => Value::Array(Array(items)),
            // The fields come in key order: the map is built from them without sorting.
            Copying::Object(_, fields, _) => Value::Object(Map::from_sorted(fields)),
        }
    }
}

/// A copy of `value`, made one container at a time.
pub(super) fn copy(value: &Value) -> Value {
    let mut current = match Copying::open(value) {
        Ok(container) => container,
        Err(scalar) => return scalar,
    };
    let mut outer: Vec<Copying<'_>> = Vec::new();
    loop {
        match current.next() {
            Some(child) => match Copying::open(child) {
                Ok(inner) => outer.push(std::mem::replace(&mut current, inner)),
                Err(scalar) => current.attach(scalar),
            },
            None => {
                let done = current.finish();
                match outer.pop() {
                    Some(parent) => {
                        current = parent;
                        current.attach(done);
                    }
                    None => return done,
                }
            }
        }
    }
}

/// Whether `a` and `b` are equal, compared one container at a time.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    let mut pending = Vec::new();
    let (mut a, mut b) = (a, b);
    loop {
        let same = match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && {
                    pending.extend(x.iter().zip(y.iter()));
                    true
                }
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter().zip(y.iter()).all(|((kx, vx), (ky, vy))| {
                        pending.push((vx, vy));
                        kx == ky
                    })
            }
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Number(x), Value::Number(y)) => x == y,
            (Value::String(x), Value::String(y)) => x == y,
            _ => false,
        };
        if !same {
            return false;
        }
        match pending.pop() {
            Some((x, y)) => (a, b) = (x, y),
            None => return true,
        }
    }
}
