//! A JSON object's fields.
//!
//! Most objects a server handles are small: a `metadata` of eight fields, ten labels. A
//! `BTreeMap` gives each of them a node of eleven slots, searches it by ordering comparisons,
//! and walks its nodes to drop or copy it. A [`Map`] of up to 32 fields is a sorted
//! vector instead: a lookup compares lengths before bytes, and dropping, copying and
//! comparing are loops over one allocation. Past 32 fields it becomes a `BTreeMap`,
//! so that no sequence of insertions into a large object (a hostile body's million keys)
//! costs more than a tree's logarithm each.

use std::collections::BTreeMap;
use std::collections::btree_map;

use super::{Value, tree};
use crate::depth;

/// The most fields a [`Map`] keeps in a sorted vector.
const SMALL: usize = 32;

/// Up to this many fields, a lookup scans them comparing lengths first; past it, it bisects.
const SCAN: usize = 8;

/// A JSON object's fields, in key order, with the methods of a `BTreeMap<String, Value>`; it
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
pub struct Map(pub(super) Fields);

/// How a [`Map`] keeps its fields.
#[derive(Clone)]
pub(super) enum Fields {
    /// At most [`SMALL`] fields, sorted by key, no key twice.
    Small(Vec<(String, Value)>),
    /// More.
    Large(BTreeMap<String, Value>),
}

impl Default for Fields {
    fn default() -> Self {
        Fields::Small(Vec::new())
    }
}

/// Where `key` is among sorted `fields`, or where it would go.
#[inline]
fn search(fields: &[(String, Value)], key: &str) -> Result<usize, usize> {
    fields.binary_search_by(|(k, _)| k.as_str().cmp(key))
}

/// The index of `key` among sorted `fields`.
#[inline]
fn find(fields: &[(String, Value)], key: &str) -> Option<usize> {
    if fields.len() <= SCAN {
        fields.iter().position(|(k, _)| k == key)
    } else {
        search(fields, key).ok()
    }
}

impl Map {
    /// An empty object.
    pub fn new() -> Self {
        Map(Fields::default())
    }

    /// An empty object with room for `capacity` fields.
    pub fn with_capacity(capacity: usize) -> Self {
        Map(Fields::Small(Vec::with_capacity(capacity.min(SMALL))))
    }

    /// An object of `fields`, which are in key order with no key twice.
    pub(super) fn from_sorted(fields: Vec<(String, Value)>) -> Self {
        debug_assert!(fields.windows(2).all(|w| w[0].0 < w[1].0));
        if fields.len() <= SMALL {
            Map(Fields::Small(fields))
        } else {
            Map(Fields::Large(fields.into_iter().collect()))
        }
    }

    /// An object of `fields` in any order; of a key given twice, the last value stays, as
    /// inserting them one by one keeps it.
    pub(super) fn from_unsorted(mut fields: Vec<(String, Value)>) -> Self {
        if fields.len() > SMALL {
            return Map(Fields::Large(fields.into_iter().collect()));
        }
        if !fields.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: of equal keys, the last given is last; `dedup_by` keeps the first of a
            // run, so each later value is swapped into it before its own slot goes.
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            fields.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    std::mem::swap(&mut later.1, &mut kept.1);
                }
                same
            });
        }
        Map(Fields::Small(fields))
    }

    /// How many fields there are (also as a path: `Option::map_or(0, Map::len)`).
    pub fn len(&self) -> usize {
        match &self.0 {
            Fields::Small(fields) => fields.len(),
            Fields::Large(fields) => fields.len(),
        }
    }

    /// Whether there are no fields (also as a path: `Option::is_some_and(Map::is_empty)`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.0 {
            Fields::Small(fields) => find(fields, key).map(|i| &fields[i].1),
            Fields::Large(fields) => fields.get(key),
        }
    }

    /// The value of `key`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match &mut self.0 {
            Fields::Small(fields) => find(fields, key).map(|i| &mut fields[i].1),
            Fields::Large(fields) => fields.get_mut(key),
        }
    }

    /// The stored key and the value of `key`.
    pub fn get_key_value(&self, key: &str) -> Option<(&String, &Value)> {
        match &self.0 {
            Fields::Small(fields) => find(fields, key).map(|i| (&fields[i].0, &fields[i].1)),
            Fields::Large(fields) => fields.get_key_value(key),
        }
    }

    /// Whether there is a field `key`.
    #[inline]
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match &mut self.0 {
            Fields::Small(fields) => {
                // Fields often come in key order: appending needs no search.
                if fields.last().is_none_or(|(last, _)| *last < key) {
                    if fields.len() < SMALL {
                        fields.push((key, value));
                        return None;
                    }
                } else {
                    match search(fields, &key) {
                        Ok(i) => return Some(std::mem::replace(&mut fields[i].1, value)),
                        Err(i) if fields.len() < SMALL => {
                            fields.insert(i, (key, value));
                            return None;
                        }
                        Err(_) => {}
                    }
                }
                self.grow().insert(key, value)
            }
            Fields::Large(fields) => fields.insert(key, value),
        }
    }

    /// The fields as a `BTreeMap`, which they now are: a small map grown too large.
    fn grow(&mut self) -> &mut BTreeMap<String, Value> {
        if let Fields::Small(fields) = &mut self.0 {
            let fields = std::mem::take(fields);
            self.0 = Fields::Large(fields.into_iter().collect());
        }
        match &mut self.0 {
            Fields::Large(fields) => fields,
            Fields::Small(_) => unreachable!("grown above"),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.remove_entry(key).map(|(_, value)| value)
    }

    /// Removes `key`, returning the stored key and its value.
    pub fn remove_entry(&mut self, key: &str) -> Option<(String, Value)> {
        match &mut self.0 {
            Fields::Small(fields) => find(fields, key).map(|i| fields.remove(i)),
            Fields::Large(fields) => fields.remove_entry(key),
        }
    }

    /// Removes every field.
    pub fn clear(&mut self) {
        *self = Map::new();
    }

    /// Keeps only the fields `keep` says to, in key order.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        match &mut self.0 {
            Fields::Small(fields) => fields.retain_mut(|(k, v)| keep(k, v)),
            Fields::Large(fields) => fields.retain(|k, v| keep(k, v)),
        }
    }

    /// Moves every field of `other` into this object (replacing fields of the same key),
    /// leaving `other` empty.
    pub fn append(&mut self, other: &mut Map) {
        let other = std::mem::take(other);
        self.extend(other);
    }

    /// The entry of `key`, to read or fill in place.
    pub fn entry(&mut self, key: impl Into<String>) -> Entry<'_> {
        let key = key.into();
        // Where the key is or goes among small fields with room for it; `None` for a tree.
        let place = match &self.0 {
            Fields::Small(fields) => {
                Some(search(fields, &key)).filter(|at| at.is_ok() || fields.len() < SMALL)
            }
            Fields::Large(_) => None,
        };
        if place.is_none() {
            return match self.grow().entry(key) {
                btree_map::Entry::Occupied(entry) => {
                    Entry::Occupied(OccupiedEntry(Occupied::Large(entry)))
                }
                btree_map::Entry::Vacant(entry) => Entry::Vacant(VacantEntry(Vacant::Large(entry))),
            };
        }
        match (&mut self.0, place) {
            (Fields::Small(fields), Some(Ok(index))) => {
                Entry::Occupied(OccupiedEntry(Occupied::Small(fields, index)))
            }
            (Fields::Small(fields), Some(Err(index))) => {
                Entry::Vacant(VacantEntry(Vacant::Small(fields, key, index)))
            }
            _ => unreachable!("a place is found only among small fields"),
        }
    }

    /// The first field in key order.
    pub fn first_key_value(&self) -> Option<(&String, &Value)> {
        self.iter().next()
    }

    /// The last field in key order.
    pub fn last_key_value(&self) -> Option<(&String, &Value)> {
        self.iter().next_back()
    }

    /// The fields in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.0 {
            Fields::Small(fields) => Walk::Small(fields.iter()),
            Fields::Large(fields) => Walk::Large(fields.iter()),
        })
    }

    /// The fields in key order, their values to change in place.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(match &mut self.0 {
            Fields::Small(fields) => Walk::Small(fields.iter_mut()),
            Fields::Large(fields) => Walk::Large(fields.iter_mut()),
        })
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.iter().map(|(_, v)| v)
    }

    /// The values in key order, to change in place.
    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.iter_mut().map(|(_, v)| v)
    }

    /// The keys in order, the values dropped.
    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = String> {
        self.into_iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> {
        self.into_iter().map(|(_, v)| v)
    }
}

impl Fields {
    /// The values, for [`tree::teardown`].
    fn into_values(self) -> impl Iterator<Item = Value> {
        IntoIter::from(self).map(|(_, v)| v)
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
            |_| {
                Map::from_sorted(
                    self.iter()
                        .map(|(k, v)| (k.clone(), tree::copy(v)))
                        .collect(),
                )
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
                |(a, b)| match (&a.0, &b.0) {
                    (Fields::Small(a), Fields::Small(b)) => a == b,
                    _ => a.iter().zip(b.iter()).all(|(x, y)| x == y),
                },
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
        if fields.len() <= SMALL {
            Map(Fields::Small(fields.into_iter().collect()))
        } else {
            Map(Fields::Large(fields))
        }
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Map::from_unsorted(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl<K: Into<String>, V: Into<Value>> Extend<(K, V)> for Map {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.into(), v.into());
        }
    }
}

/// A walk over either kind of [`Fields`].
#[derive(Clone)]
enum Walk<S, L> {
    Small(S),
    Large(L),
}

/// Forwards an iterator's methods to whichever walk it is, mapping a small field by `$small`.
macro_rules! walk_iterator {
    ($name:ty, $item:ty, $small:expr) => {
        impl<'a> Iterator for $name {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                match &mut self.0 {
                    Walk::Small(fields) => fields.next().map($small),
                    Walk::Large(fields) => fields.next(),
                }
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                match &self.0 {
                    Walk::Small(fields) => fields.size_hint(),
                    Walk::Large(fields) => fields.size_hint(),
                }
            }
        }

        impl<'a> DoubleEndedIterator for $name {
            fn next_back(&mut self) -> Option<Self::Item> {
                match &mut self.0 {
                    Walk::Small(fields) => fields.next_back().map($small),
                    Walk::Large(fields) => fields.next_back(),
                }
            }
        }

        impl<'a> ExactSizeIterator for $name {}
    };
}

/// The fields of a [`Map`] in key order: [`Map::iter`].
#[derive(Clone)]
pub struct Iter<'a>(
    Walk<std::slice::Iter<'a, (String, Value)>, btree_map::Iter<'a, String, Value>>,
);

impl Default for Iter<'_> {
    /// No fields.
    fn default() -> Self {
        Iter(Walk::Small([].iter()))
    }
}

walk_iterator!(Iter<'a>, (&'a String, &'a Value), |(k, v)| (k, v));

/// The fields of a [`Map`] in key order, their values to change: [`Map::iter_mut`].
pub struct IterMut<'a>(
    Walk<std::slice::IterMut<'a, (String, Value)>, btree_map::IterMut<'a, String, Value>>,
);

walk_iterator!(IterMut<'a>, (&'a String, &'a mut Value), |(k, v)| (&*k, v));

/// The fields of a [`Map`] in key order, moved out: `Map::into_iter`.
pub struct IntoIter(Walk<std::vec::IntoIter<(String, Value)>, btree_map::IntoIter<String, Value>>);

impl From<Fields> for IntoIter {
    fn from(fields: Fields) -> Self {
        IntoIter(match fields {
            Fields::Small(fields) => Walk::Small(fields.into_iter()),
            Fields::Large(fields) => Walk::Large(fields.into_iter()),
        })
    }
}

walk_iterator!(IntoIter, (String, Value), |field| field);

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = IntoIter;

    fn into_iter(mut self) -> Self::IntoIter {
        IntoIter::from(std::mem::take(&mut self.0))
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// A field of a [`Map`], there or not: [`Map::entry`].
pub enum Entry<'a> {
    /// The field is not there.
    Vacant(VacantEntry<'a>),
    /// The field is there.
    Occupied(OccupiedEntry<'a>),
}

/// A field not in a [`Map`], to insert.
pub struct VacantEntry<'a>(Vacant<'a>);

enum Vacant<'a> {
    /// The sorted fields, the key, and where it goes (there is room for it).
    Small(&'a mut Vec<(String, Value)>, String, usize),
    Large(btree_map::VacantEntry<'a, String, Value>),
}

/// A field in a [`Map`].
pub struct OccupiedEntry<'a>(Occupied<'a>);

enum Occupied<'a> {
    /// The sorted fields and where the field is.
    Small(&'a mut Vec<(String, Value)>, usize),
    Large(btree_map::OccupiedEntry<'a, String, Value>),
}

impl<'a> Entry<'a> {
    /// The field's value, `value` inserted first if there is none.
    pub fn or_insert(self, value: Value) -> &'a mut Value {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(value),
        }
    }

    /// The field's value, `make()` inserted first if there is none.
    pub fn or_insert_with(self, make: impl FnOnce() -> Value) -> &'a mut Value {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(make()),
        }
    }

    /// The field's value, `null` inserted first if there is none.
    pub fn or_default(self) -> &'a mut Value {
        self.or_insert(Value::Null)
    }

    /// `change`s the field's value if there is one.
    pub fn and_modify(mut self, change: impl FnOnce(&mut Value)) -> Self {
        if let Entry::Occupied(entry) = &mut self {
            change(entry.get_mut());
        }
        self
    }

    /// The field's key.
    pub fn key(&self) -> &String {
        match self {
            Entry::Occupied(entry) => entry.key(),
            Entry::Vacant(entry) => entry.key(),
        }
    }
}

impl<'a> VacantEntry<'a> {
    /// The key the field would have.
    pub fn key(&self) -> &String {
        match &self.0 {
            Vacant::Small(_, key, _) => key,
            Vacant::Large(entry) => entry.key(),
        }
    }

    /// Inserts the field with `value`, returning the value in place.
    pub fn insert(self, value: Value) -> &'a mut Value {
        match self.0 {
            Vacant::Small(fields, key, index) => {
                fields.insert(index, (key, value));
                &mut fields[index].1
            }
            Vacant::Large(entry) => entry.insert(value),
        }
    }
}

impl<'a> OccupiedEntry<'a> {
    /// The field's key.
    pub fn key(&self) -> &String {
        match &self.0 {
            Occupied::Small(fields, index) => &fields[*index].0,
            Occupied::Large(entry) => entry.key(),
        }
    }

    /// The field's value.
    pub fn get(&self) -> &Value {
        match &self.0 {
            Occupied::Small(fields, index) => &fields[*index].1,
            Occupied::Large(entry) => entry.get(),
        }
    }

    /// The field's value, to change in place.
    pub fn get_mut(&mut self) -> &mut Value {
        match &mut self.0 {
            Occupied::Small(fields, index) => &mut fields[*index].1,
            Occupied::Large(entry) => entry.get_mut(),
        }
    }

    /// The field's value, to change in place for as long as the map is borrowed.
    pub fn into_mut(self) -> &'a mut Value {
        match self.0 {
            Occupied::Small(fields, index) => &mut fields[index].1,
            Occupied::Large(entry) => entry.into_mut(),
        }
    }

    /// Replaces the field's value, returning the old one.
    pub fn insert(&mut self, value: Value) -> Value {
        std::mem::replace(self.get_mut(), value)
    }

    /// Removes the field, returning its value.
    pub fn remove(self) -> Value {
        match self.0 {
            Occupied::Small(fields, index) => fields.remove(index).1,
            Occupied::Large(entry) => entry.remove(),
        }
    }
}

/// `fields["key"]`: the field's value; panics if there is none, as a `BTreeMap` does.
impl std::ops::Index<&str> for Map {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no field {key:?} in the object"),
        }
    }
}

/// `fields["key"] = …` on a field that is there; panics if there is none.
impl std::ops::IndexMut<&str> for Map {
    fn index_mut(&mut self, key: &str) -> &mut Value {
        match self.get_mut(key) {
            Some(value) => value,
            None => panic!("no field {key:?} in the object"),
        }
    }
}
