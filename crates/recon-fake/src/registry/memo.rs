//! Process-wide memos of pure work on CRDs, keyed by the JSON it was done on: every server of a
//! test process installs the same few CRDs, so each is compiled and checked once.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};

/// The most results a memo keeps: a test process installs a few CRDs many times over; one that
/// makes more (a fuzzer) starts again from empty.
const KEPT: usize = 256;

/// Results of a pure function by its input's key, shared by every server of the process.
pub(crate) struct Memo<K, V> {
    results: Mutex<Option<HashMap<K, V>>>,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// An empty memo (usable in a `static`).
    pub(crate) const fn new() -> Self {
        Memo {
            results: Mutex::new(None),
        }
    }

    /// The result for `key`: remembered, or made by `make` and remembered. `make` runs outside
    /// the lock, so two threads may both make a result the first time; both are the same.
    pub(crate) fn get_or_make(&self, key: K, make: impl FnOnce() -> V) -> V {
        let results = || self.results.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = results().as_ref().and_then(|r| r.get(&key)) {
            return known.clone();
        }
        let made = make();
        let mut guard = results();
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= KEPT {
            map.clear();
        }
        map.insert(key, made.clone());
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_made_once_per_key_and_the_memo_starts_again_when_full() {
        let memo = Memo::new();
        let made = std::cell::Cell::new(0);
        let get = |key: usize| {
            memo.get_or_make(key, || {
                made.set(made.get() + 1);
                key * 2
            })
        };
        assert_eq!((get(1), get(1), get(2)), (2, 2, 4));
        assert_eq!(made.get(), 2);
        for key in 3..=KEPT + 1 {
            get(key);
        }
        // Keys 1..=KEPT filled it; KEPT + 1 cleared it, so 1 is made again, KEPT + 1 is not.
        get(KEPT + 1);
        get(1);
        assert_eq!(made.get(), KEPT + 2);
    }
}
