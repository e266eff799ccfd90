//! A JSON array's items.

use std::ops::{Deref, DerefMut};

use super::{Value, tree};
use crate::depth;

/// A JSON array's items: a [`Vec`] (all of whose methods it has) that drops, clones and
/// compares with a bounded stack at any depth (see the [module](super)).
///
/// ```
/// use recon_apimachinery::json::{Array, Value};
///
/// let mut items = Array::from(vec![Value::from(1)]);
/// items.push(Value::from("two"));
/// assert_eq!(items.len(), 2);
/// assert_eq!(Value::Array(items).to_string(), r#"[1,"two"]"#);
/// ```
#[derive(Default)]
pub struct Array(pub(super) Vec<Value>);

impl Array {
    /// The items as the [`Vec`] they are.
    pub fn into_vec(mut self) -> Vec<Value> {
        std::mem::take(&mut self.0)
    }
}

impl Deref for Array {
    type Target = Vec<Value>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Array {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        depth::recurse(
            &tree::DROPPING,
            std::mem::take(&mut self.0),
            drop,
            |items| tree::teardown(items.into_iter()),
        );
    }
}

impl Clone for Array {
    fn clone(&self) -> Self {
        depth::recurse(
            &tree::COPYING,
            &self.0,
            |items| Array(items.clone()),
            |items| Array(items.iter().map(tree::copy).collect()),
        )
    }
}

impl PartialEq for Array {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && depth::recurse(
                &tree::COMPARING,
                (self, other),
                |(a, b)| a.0 == b.0,
                |(a, b)| a.iter().zip(b.iter()).all(|(a, b)| tree::equal(a, b)),
            )
    }
}

impl Eq for Array {}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::text::debug_items(f, self)
    }
}

impl From<Vec<Value>> for Array {
    fn from(items: Vec<Value>) -> Self {
        Array(items)
    }
}

impl<T: Into<Value>> FromIterator<T> for Array {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> Extend<T> for Array {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.0.extend(iter.into_iter().map(Into::into));
    }
}

impl IntoIterator for Array {
    type Item = Value;
    type IntoIter = std::vec::IntoIter<Value>;

    fn into_iter(mut self) -> Self::IntoIter {
        std::mem::take(&mut self.0).into_iter()
    }
}

impl<'a> IntoIterator for &'a Array {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Array {
    type Item = &'a mut Value;
    type IntoIter = std::slice::IterMut<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}
