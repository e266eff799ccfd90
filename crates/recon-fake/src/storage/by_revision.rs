//! What is worked out from each stored object of a resource, kept until the object changes, as
//! an informer's lister keeps what it read: bringing it up to date derives again only what was
//! written since, compares a revision for the rest, and decodes nothing else.

use std::collections::BTreeMap;

use super::stored::Stored;

/// A value derived from each stored object, by storage key, with the revision it was derived
/// at.
#[derive(Debug, Clone)]
pub(crate) struct ByRevision<T> {
    objects: BTreeMap<String, Derived<T>>,
    /// Counts the catch-ups, to tell which entries the last one saw.
    pass: u64,
}

#[derive(Debug, Clone)]
struct Derived<T> {
    revision: u64,
    seen: u64,
    value: T,
}

impl<T> Default for ByRevision<T> {
    fn default() -> Self {
        ByRevision {
            objects: BTreeMap::new(),
            pass: 0,
        }
    }
}

impl<T> ByRevision<T> {
    /// Brings it up to `stored`, every stored object of the resource: those gone are forgotten,
    /// and those new or written since are derived again with `derive`. Returns whether any was.
    pub(crate) fn catch_up<'s>(
        &mut self,
        stored: impl Iterator<Item = (&'s String, &'s Stored)>,
        mut derive: impl FnMut(&str, &Stored) -> T,
    ) -> bool {
        self.pass += 1;
        let pass = self.pass;
        let mut seen = 0;
        let mut changed = false;
        for (key, object) in stored {
            seen += 1;
            match self.objects.get_mut(key.as_str()) {
                Some(d) if d.revision == object.revision => d.seen = pass,
                Some(d) => {
                    changed = true;
                    *d = Derived {
                        revision: object.revision,
                        seen: pass,
                        value: derive(key, object),
                    }
                }
                None => {
                    changed = true;
                    let value = derive(key, object);
                    let derived = Derived {
                        revision: object.revision,
                        seen: pass,
                        value,
                    };
                    self.objects.insert(key.clone(), derived);
                }
            }
        }
        if self.objects.len() != seen {
            self.objects.retain(|_, d| d.seen == pass);
            changed = true;
        }
        changed
    }

    /// What was derived of each object, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &T)> + '_ {
        self.objects.iter().map(|(key, d)| (key, &d.value))
    }

    /// What was derived of `key`, if it was at `revision`.
    pub(crate) fn at(&self, key: &str, revision: u64) -> Option<&T> {
        let d = self.objects.get(key).filter(|d| d.revision == revision)?;
        Some(&d.value)
    }

    /// What was derived of `key`, to amend.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        self.objects.get_mut(key).map(|d| &mut d.value)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn only_what_was_written_since_is_derived_again_and_what_is_gone_is_forgotten() {
        let body = |text: &str| Bytes::from(text.to_owned());
        let (a, b, c) = ("a".to_owned(), "b".to_owned(), "c".to_owned());
        let mut derived = ByRevision::default();
        let mut calls = Vec::new();
        let derive = |calls: &mut Vec<String>, key: &str, s: &Stored| {
            calls.push(key.to_owned());
            s.revision * 10
        };
        let a1 = Stored::raw(body("{}"), 1);
        let b2 = Stored::raw(body("{}"), 2);
        let changed = derived.catch_up([(&a, &a1), (&b, &b2)].into_iter(), |k, s| {
            derive(&mut calls, k, s)
        });
        assert!(changed);
        assert_eq!(calls, ["a", "b"]);
        assert!(
            !derived.catch_up([(&a, &a1), (&b, &b2)].into_iter(), |k, s| {
                derive(&mut calls, k, s)
            })
        );
        assert_eq!(derived.at("b", 2), Some(&20));
        assert_eq!(derived.at("b", 3), None);

        // b written again, c new: only they are derived.
        let b3 = Stored::raw(body("{}"), 3);
        let c4 = Stored::raw(body("{}"), 4);
        calls.clear();
        derived.catch_up([(&a, &a1), (&b, &b3), (&c, &c4)].into_iter(), |k, s| {
            derive(&mut calls, k, s)
        });
        assert_eq!(calls, ["b", "c"]);
        let values: Vec<(&String, &u64)> = derived.iter().collect();
        assert_eq!(values, [(&a, &10), (&b, &30), (&c, &40)]);

        // a deleted.
        calls.clear();
        let changed = derived.catch_up([(&b, &b3), (&c, &c4)].into_iter(), |k, s| {
            derive(&mut calls, k, s)
        });
        assert!(changed, "a is gone");
        assert!(calls.is_empty());
        assert_eq!(
            derived.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["b", "c"]
        );
    }
}
