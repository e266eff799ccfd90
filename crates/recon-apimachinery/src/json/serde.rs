//! A [`Value`] through serde, and to and from `serde_json::Value`.
//!
//! serde walks by recursion, and serde_json stops reading at 128 levels: serialising or
//! deserialising a [`Value`] this way is for the shallow values typed structs make and read.
//! The conversions to and from `serde_json::Value` take one container at a time.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::{Array, Map, Number, Value};

impl Serialize for Value {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => n.serialize(serializer),
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(items) => items.serialize(serializer),
            Value::Object(fields) => fields.serialize(serializer),
        }
    }
}

impl Serialize for Array {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for item in self.iter() {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Builds a [`Value`] from what a deserializer reads.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    #[inline]
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    #[inline]
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    #[inline]
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    #[inline]
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    #[inline]
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    #[inline]
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    #[inline]
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Deserialize::deserialize(deserializer)
    }

    #[inline]
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(Array(items)))
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(field) = map.next_entry::<String, Value>()? {
            fields.push(field);
        }
        Ok(Value::Object(Map::from_unsorted(fields)))
    }
}

impl<'de> Deserialize<'de> for Value {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Map, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(fields) => Ok(fields),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a JSON object",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Array {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Array, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(items) => Ok(items),
            other => Err(de::Error::invalid_type(unexpected(&other), &"a JSON array")),
        }
    }
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// A JSON value being converted: the rest of the original container, the converted items or
/// fields so far, and, for an object, the key of the field being converted.
enum Converting<I, O, T> {
    Array(I, Vec<T>),
    Object(O, Vec<(String, T)>, String),
}

/// Converts a tree of one JSON type into the other, one container at a time: `open` splits a
/// value into a container to convert or a converted scalar, `array` and `object` build.
fn convert<S, T, I, O>(
    root: S,
    open: impl Fn(S) -> Result<Converting<I, O, T>, T>,
    array: impl Fn(Vec<T>) -> T,
    object: impl Fn(Vec<(String, T)>) -> T,
) -> T
where
    I: Iterator<Item = S>,
    O: Iterator<Item = (String, S)>,
{
    let mut current = match open(root) {
        Ok(container) => container,
        Err(scalar) => return scalar,
    };
    let mut outer = Vec::new();
    loop {
        let next = match &mut current {
            Converting::Array(items, _) => items.next(),
            Converting::Object(fields, _, key) => fields.next().map(|(k, v)| {
                *key = k;
                v
            }),
        };
        let done = match next {
            Some(child) => match open(child) {
                Ok(inner) => {
                    outer.push(std::mem::replace(&mut current, inner));
                    continue;
                }
                Err(scalar) => scalar,
            },
            None => {
                let done = match current {
                    Converting::Array(_, items) => array(items),
                    Converting::Object(_, fields, _) => object(fields),
                };
                match outer.pop() {
                    Some(parent) => current = parent,
                    None => return done,
                }
                done
            }
        };
        match &mut current {
            Converting::Array(_, items) => items.push(done),
            Converting::Object(_, fields, key) => fields.push((std::mem::take(key), done)),
        }
    }
}

impl From<serde_json::Value> for Value {
    fn from(value: serde_json::Value) -> Self {
        convert(
            value,
            |value| match value {
                serde_json::Value::Array(items) => {
                    Ok(Converting::Array(items.into_iter(), Vec::new()))
                }
                serde_json::Value::Object(fields) => Ok(Converting::Object(
                    fields.into_iter(),
                    Vec::new(),
                    String::new(),
                )),
                serde_json::Value::Null => Err(Value::Null),
                serde_json::Value::Bool(b) => Err(Value::Bool(b)),
                serde_json::Value::Number(n) => Err(Value::Number(n)),
                serde_json::Value::String(s) => Err(Value::String(s)),
            },
            |items| Value::Array(Array(items)),
            |fields| Value::Object(Map::from_unsorted(fields)),
        )
    }
}

impl From<Value> for serde_json::Value {
    fn from(value: Value) -> Self {
        convert(
            value,
            |value| match value {
                Value::Array(items) => Ok(Converting::Array(items.into_iter(), Vec::new())),
                Value::Object(fields) => Ok(Converting::Object(
                    fields.into_iter(),
                    Vec::new(),
                    String::new(),
                )),
                Value::Null => Err(serde_json::Value::Null),
                Value::Bool(b) => Err(serde_json::Value::Bool(b)),
                Value::Number(n) => Err(serde_json::Value::Number(n)),
                Value::String(s) => Err(serde_json::Value::String(s)),
            },
            serde_json::Value::Array,
            |fields| serde_json::Value::Object(fields.into_iter().collect()),
        )
    }
}

/// `value` serialised into a [`Value`], as `serde_json::to_value` does.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    serde_json::to_value(value).map(Value::from)
}

/// A `T` deserialised from `value`, as `serde_json::from_value` does.
pub fn from_value<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    serde_json::from_value(serde_json::Value::from(value))
}
