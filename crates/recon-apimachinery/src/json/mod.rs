//! JSON values that take a bounded stack at any depth.
//!
//! kube-apiserver keeps objects nested up to Go's decoding limit, 10,000 levels. A
//! `serde_json::Value` drops, clones and compares itself by recursion, a frame per level, so a
//! value a few thousand levels deep overflows a test thread's stack when it merely goes out of
//! scope. [`Value`] is the same tree (the same variants, methods and printing as
//! `serde_json::Value`, which it converts to and from), whose arrays ([`Array`]) and objects
//! ([`Map`]) drop, clone and compare by recursion only while they are shallow (the fastest
//! way, as serde_json's do): past 64 levels a walk keeps its own stack of the containers it is
//! in, so what it takes of the thread's stack is bounded whatever the depth. Printing,
//! conversion and [`merge_patch`] keep their own stack from the start.
//!
//! ```
//! use recon_apimachinery::json;
//! use recon_apimachinery::json::{Map, Value};
//!
//! let mut deep = Value::Null;
//! for _ in 0..100_000 {
//!     deep = Value::Object(Map::from_iter([("a", deep)]));
//! }
//! let copy = deep.clone();
//! assert!(copy == deep);
//! assert_eq!(json!({"b": [1, "x"], "a": null}).to_string(), r#"{"a":null,"b":[1,"x"]}"#);
//! // Both go out of scope here, without a frame per level.
//! ```

mod array;
pub mod map;
mod merge_patch;
mod read;
mod serde;
mod text;
mod tree;

use std::borrow::Cow;

pub use self::array::Array;
pub use self::map::Map;
pub use self::merge_patch::merge_patch;
pub use self::read::{READ_DEPTH, read, read_noting_repeats};
pub use self::serde::{from_value, to_value};
pub use self::text::{Event, Root, walk};
pub use serde_json::Number;

#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}

/// A JSON value as `serde_json::Value` is one, built the same way:
/// `json!({"a": [1, "x", null]})`. Its interpolated expressions are serialised by serde, as
/// serde_json's macro serialises them: by recursion, for shallow values.
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json::Value::from($crate::json::__private::serde_json::json!($($json)+))
    };
}

/// A JSON value: `serde_json::Value`'s variants, methods and printing, with arrays and
/// objects that drop, clone and compare with a bounded stack (see the [module](self)).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: an integer that fits an `i64` or `u64`, or a finite float.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Array),
    /// An object, its fields in key order.
    Object(Map),
}

/// The `Null` that indexing a value without that key or index answers.
static NULL: Value = Value::Null;

impl Value {
    /// The value at `index`: a key of an object or an index of an array.
    pub fn get<I: Key>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }

    /// The value at `index`, to change in place.
    pub fn get_mut<I: Key>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// Whether this is a number that fits an `i64`.
    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }

    /// Whether this is a number that fits a `u64`.
    pub fn is_u64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_u64())
    }

    /// Whether this is a float.
    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// The boolean this is.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number this is.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The `i64` this number is, if it fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The `u64` this number is, if it fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// This number as an `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    /// The string this is.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items of this array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(&items.0),
            _ => None,
        }
    }

    /// The items of this array, to change in place.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(items) => Some(&mut items.0),
            _ => None,
        }
    }

    /// The fields of this object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(fields) => Some(fields),
            _ => None,
        }
    }

    /// The fields of this object, to change in place.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(fields) => Some(fields),
            _ => None,
        }
    }

    /// The value at a JSON pointer (RFC 6901): `""` is this value, `/a/0` the first item of
    /// field `a`; `~1` stands for `/` and `~0` for `~` in a token.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        let mut target = self;
        for token in pointer_tokens(pointer)? {
            target = match target {
                Value::Object(fields) => fields.get(token.as_ref())?,
                Value::Array(items) => items.get(pointer_index(&token)?)?,
                _ => return None,
            };
        }
        Some(target)
    }

    /// The value at a JSON pointer, to change in place (see [`Value::pointer`]).
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        let mut target = self;
        for token in pointer_tokens(pointer)? {
            target = match target {
                Value::Object(fields) => fields.get_mut(token.as_ref())?,
                Value::Array(items) => items.get_mut(pointer_index(&token)?)?,
                _ => return None,
            };
        }
        Some(target)
    }

    /// This value, leaving `null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// The unescaped tokens of a JSON pointer; `None` for one that neither is empty nor starts
/// with `/`.
fn pointer_tokens(pointer: &str) -> Option<impl Iterator<Item = Cow<'_, str>>> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return None;
    }
    Some(pointer.split('/').skip(1).map(|token| {
        if token.contains('~') {
            Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
        } else {
            Cow::Borrowed(token)
        }
    }))
}

/// An array index in a JSON pointer: digits, without a leading zero or sign.
fn pointer_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// What indexes a [`Value`]: a key (`&str`, `String`) of an object or an index (`usize`) of
/// an array.
pub trait Key {
    /// The value at this index of `value`.
    fn index_into<'v>(&self, value: &'v Value) -> Option<&'v Value>;
    /// The value at this index of `value`, to change in place.
    fn index_into_mut<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value>;
    /// The value at this index of `value`, made if it is missing (`value["k"] = …`).
    fn index_or_insert<'v>(&self, value: &'v mut Value) -> &'v mut Value;
}

impl Key for usize {
    fn index_into<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        value.as_array()?.get(*self)
    }

    fn index_into_mut<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value> {
        value.as_array_mut()?.get_mut(*self)
    }

    fn index_or_insert<'v>(&self, value: &'v mut Value) -> &'v mut Value {
        match value {
            Value::Array(items) => {
                let len = items.len();
                match items.get_mut(*self) {
                    Some(item) => item,
                    None => panic!("cannot access index {self} of JSON array of length {len}"),
                }
            }
            other => panic!("cannot access index {self} of JSON {}", kind(other)),
        }
    }
}

impl Key for str {
    fn index_into<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        value.as_object()?.get(self)
    }

    fn index_into_mut<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value> {
        value.as_object_mut()?.get_mut(self)
    }

    fn index_or_insert<'v>(&self, value: &'v mut Value) -> &'v mut Value {
        if value.is_null() {
            *value = Value::Object(Map::new());
        }
        match value {
            Value::Object(fields) => fields.entry(self).or_insert(Value::Null),
            other => panic!("cannot access key {self:?} in JSON {}", kind(other)),
        }
    }
}

impl Key for String {
    fn index_into<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(value)
    }

    fn index_into_mut<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(value)
    }

    fn index_or_insert<'v>(&self, value: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(value)
    }
}

impl<T: Key + ?Sized> Key for &T {
    fn index_into<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        (**self).index_into(value)
    }

    fn index_into_mut<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(value)
    }

    fn index_or_insert<'v>(&self, value: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(value)
    }
}

/// What a value is, as serde_json names it in its indexing panics.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `value["key"]`, `value[0]`: the value there, or `null` if there is none.
impl<I: Key> std::ops::Index<I> for Value {
    type Output = Value;

    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

/// `value["key"] = …` adds the field if it is missing (and makes a `null` an object);
/// `value[0] = …` needs the item. Panics otherwise, as serde_json does.
impl<I: Key> std::ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<Cow<'_, str>> for Value {
    fn from(s: Cow<'_, str>) -> Self {
        Value::String(s.into_owned())
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(fields: Map) -> Self {
        Value::Object(fields)
    }
}

impl From<Array> for Value {
    fn from(items: Array) -> Self {
        Value::Array(items)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Self {
        Value::Array(items.into_iter().collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(items: &[T]) -> Self {
        Value::Array(items.iter().cloned().collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Self {
        value.map_or(Value::Null, Into::into)
    }
}

impl From<()> for Value {
    fn from((): ()) -> Self {
        Value::Null
    }
}

impl From<f64> for Value {
    /// `null` for a float JSON cannot hold (NaN, an infinity), as serde_json makes it.
    fn from(f: f64) -> Self {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Self {
        Value::from(f64::from(f))
    }
}

macro_rules! from_integer {
    ($($ty:ty)*) => {$(
        impl From<$ty> for Value {
            fn from(n: $ty) -> Self {
                Value::Number(n.into())
            }
        }
    )*};
}

from_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Value::Array(iter.into_iter().collect())
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Value {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Value::Object(iter.into_iter().collect())
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<Value> for str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<Value> for &str {
    fn eq(&self, other: &Value) -> bool {
        other == *self
    }
}

impl PartialEq<Value> for String {
    fn eq(&self, other: &Value) -> bool {
        other == self.as_str()
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<Value> for bool {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

/// Numbers compare as serde_json compares them with Rust numbers: as `i64`, `u64` or `f64`.
macro_rules! eq_number {
    ($($ty:ty => $as:ident as $wide:ty),* $(,)?) => {$(
        impl PartialEq<$ty> for Value {
            fn eq(&self, other: &$ty) -> bool {
                self.$as() == Some(<$wide>::from(*other))
            }
        }

        impl PartialEq<Value> for $ty {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }

        impl PartialEq<$ty> for &Value {
            fn eq(&self, other: &$ty) -> bool {
                *self == other
            }
        }
    )*};
}

eq_number!(
    i8 => as_i64 as i64, i16 => as_i64 as i64, i32 => as_i64 as i64, i64 => as_i64 as i64,
    u8 => as_u64 as u64, u16 => as_u64 as u64, u32 => as_u64 as u64, u64 => as_u64 as u64,
    f32 => as_f64 as f64, f64 => as_f64 as f64,
);

impl PartialEq<usize> for Value {
    fn eq(&self, other: &usize) -> bool {
        self.as_u64() == u64::try_from(*other).ok()
    }
}

impl PartialEq<isize> for Value {
    fn eq(&self, other: &isize) -> bool {
        self.as_i64() == i64::try_from(*other).ok()
    }
}

#[cfg(test)]
mod tests;
