//! Request-scoped values shared between sub-reconcilers: a `Stash` lives for one reconcile, and
//! a typed [`Stasher`] reads and writes one key of it.

use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Mutex;

/// Why a stashed value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StashError {
    /// Nothing is stashed under the key.
    #[error("no value stashed under {0:?}")]
    NotFound(String),
    /// A value of another type is stashed under the key.
    #[error("the value stashed under {key:?} is not a {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// The type that was asked for.
        expected: &'static str,
    },
}

/// The values stashed during one reconcile.
#[derive(Default)]
pub struct Stash {
    values: Mutex<HashMap<String, Box<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Stash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<String> = self.lock().keys().cloned().collect();
        f.debug_struct("Stash").field("keys", &keys).finish()
    }
}

impl Stash {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Box<dyn Any + Send + Sync>>> {
        self.values
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores `value` under `key`, replacing what was there.
    pub fn store<T: Any + Send + Sync>(&self, key: &str, value: T) {
        self.lock().insert(key.to_owned(), Box::new(value));
    }

    /// A copy of the value under `key`.
    pub fn retrieve<T: Any + Clone>(&self, key: &str) -> Result<T, StashError> {
        let values = self.lock();
        let value = values
            .get(key)
            .ok_or_else(|| StashError::NotFound(key.to_owned()))?;
        value
            .downcast_ref::<T>()
            .cloned()
            .ok_or_else(|| StashError::WrongType {
                key: key.to_owned(),
                expected: std::any::type_name::<T>(),
            })
    }

    /// Whether anything is stashed under `key`.
    pub fn has(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }

    /// Removes the value under `key`, returning it if it had type `T`.
    pub fn clear<T: Any>(&self, key: &str) -> Option<T> {
        let value = self.lock().remove(key)?;
        value.downcast::<T>().ok().map(|b| *b)
    }

    /// The keys stashed so far, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.lock().keys().cloned().collect();
        keys.sort();
        keys
    }
}

impl AsRef<Stash> for Stash {
    fn as_ref(&self) -> &Stash {
        self
    }
}

/// Typed access to one stash key (of a [`Stash`] or of a [`Context`](crate::Context)).
///
/// ```
/// use recon_core::{Stash, Stasher};
///
/// const TARGET_IMAGE: Stasher<String> = Stasher::new("target-image");
///
/// let stash = Stash::default();
/// TARGET_IMAGE.store(&stash, "registry/app:v1".to_owned());
/// assert_eq!(TARGET_IMAGE.retrieve(&stash).unwrap(), "registry/app:v1");
/// assert!(Stasher::<u32>::new("target-image").retrieve(&stash).is_err());
/// ```
pub struct Stasher<T> {
    key: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<T> Clone for Stasher<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Stasher<T> {}

impl<T> std::fmt::Debug for Stasher<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stasher<{}>({:?})", std::any::type_name::<T>(), self.key)
    }
}

impl<T: Any + Clone + Send + Sync> Stasher<T> {
    /// A stasher for `key`.
    pub const fn new(key: &'static str) -> Self {
        Stasher {
            key,
            value: PhantomData,
        }
    }

    /// The key.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// Stores `value`.
    pub fn store(&self, stash: &impl AsRef<Stash>, value: T) {
        stash.as_ref().store(self.key, value);
    }

    /// A copy of the stored value.
    pub fn retrieve(&self, stash: &impl AsRef<Stash>) -> Result<T, StashError> {
        stash.as_ref().retrieve(self.key)
    }

    /// A copy of the stored value, or `None` if there is none (of this type).
    pub fn retrieve_opt(&self, stash: &impl AsRef<Stash>) -> Option<T> {
        self.retrieve(stash).ok()
    }

    /// Whether a value is stored (of any type).
    pub fn has(&self, stash: &impl AsRef<Stash>) -> bool {
        stash.as_ref().has(self.key)
    }

    /// Removes the value, returning it.
    pub fn clear(&self, stash: &impl AsRef<Stash>) -> Option<T> {
        stash.as_ref().clear(self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_mistyped_values_are_distinct_errors() {
        let stash = Stash::default();
        let count: Stasher<u32> = Stasher::new("count");
        assert_eq!(
            count.retrieve(&stash),
            Err(StashError::NotFound("count".into()))
        );
        stash.store("count", "three");
        assert!(matches!(
            count.retrieve(&stash),
            Err(StashError::WrongType { .. })
        ));
        count.store(&stash, 3);
        assert_eq!(count.retrieve(&stash), Ok(3));
        assert_eq!(count.clear(&stash), Some(3));
        assert!(!count.has(&stash));
    }
}
