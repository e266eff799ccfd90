//! A JSON object's fields.

use std::collections::BTreeMap;
use std::collections::btree_map;
use std::ops::{Deref, DerefMut};

use super::{Value, tree};
use crate::depth;

/// A JSON object's fields, in key order: a [`BTreeMap`] (all of whose methods it has) that
/// drops, clones and compares with a bounded stack at any depth (see the [module](super)).
///
/// ```
/// use recon_apimachinery::json::{Map, Value};
///
/// let mut fields = Map::new();
/// fields.insert("b".to_owned(), Value::from(2));
/// fields.entry("a").or_insert(Value::from(1));
/// assert_eq!(fields.keys().collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(Value::Object(fields).to_string(), r#"{"a":1,"b":2}"#);
/// ```
#[derive(Default)]
pub struct Map(pub(super) BTreeMap<String, Value>);

impl Map {
    /// An empty object.
    pub fn new() -> Self {
        Map(BTreeMap::new())
    }

    /// An empty object (a `BTreeMap` has no capacity: as `serde_json::Map::with_capacity`).
    pub fn with_capacity(_capacity: usize) -> Self {
        Map::new()
    }

    /// The entry of `key`, to read or fill in place.
    pub fn entry(&mut self, key: impl Into<String>) -> btree_map::Entry<'_, String, Value> {
        self.0.entry(key.into())
    }

    /// How many fields there are (also as a path: `Option::map_or(0, Map::len)`).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no fields (also as a path: `Option::is_some_and(Map::is_empty)`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Deref for Map {
    type Target = BTreeMap<String, Value>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Map {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        depth::recurse(
            &tree::DROPPING,
            std::mem::take(&mut self.0),
            drop,
            |fields| tree::teardown(fields.into_values()),
        );
    }
}

impl Clone for Map {
    fn clone(&self) -> Self {
        depth::recurse(
            &tree::COPYING,
            &self.0,
            |fields| Map(fields.clone()),
            |fields| {
                Map(fields
                    .iter()
                    .map(|(k, v)| (k.clone(), tree::copy(v)))
                    .collect())
            },
        )
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && depth::recurse(
                &tree::COMPARING,
                (self, other),
                |(a, b)| a.0 == b.0,
                |(a, b)| {
                    a.iter()
                        .zip(b.iter())
                        .all(|((ka, a), (kb, b))| ka == kb && tree::equal(a, b))
                },
            )
    }
}

impl Eq for Map {}

impl std::fmt::Debug for Map {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::text::debug_fields(f, self)
    }
}

impl From<BTreeMap<String, Value>> for Map {
    fn from(fields: BTreeMap<String, Value>) -> Self {
        Map(fields)
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Map(iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect())
    }
}

impl<K: Into<String>, V: Into<Value>> Extend<(K, V)> for Map {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        self.0
            .extend(iter.into_iter().map(|(k, v)| (k.into(), v.into())));
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = btree_map::IntoIter<String, Value>;

    fn into_iter(mut self) -> Self::IntoIter {
        std::mem::take(&mut self.0).into_iter()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = btree_map::Iter<'a, String, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = btree_map::IterMut<'a, String, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

/// `fields["key"]`: the field's value; panics if there is none, as a `BTreeMap` does.
impl std::ops::Index<&str> for Map {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        &self.0[key]
    }
}

/// `fields["key"] = …` on a field that is there; panics if there is none.
impl std::ops::IndexMut<&str> for Map {
    fn index_mut(&mut self, key: &str) -> &mut Value {
        match self.0.get_mut(key) {
            Some(value) => value,
            None => panic!("no field {key:?} in the object"),
        }
    }
}
