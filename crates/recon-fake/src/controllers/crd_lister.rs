//! What the CRD controllers have read of the stored CRDs, as their informer's lister holds it:
//! each CRD decoded once per revision, the names each group's CRDs have accepted, and which CRDs
//! the naming and establishing controllers found settled. Without it every pass after every
//! write decoded and checked every CRD again, so installing n CRDs cost n² decodes.

use std::collections::BTreeMap;
use std::sync::Arc;

use recon_apimachinery::json::Value;

use super::crd_naming::GroupNames;
use crate::storage::by_revision::ByRevision;
use crate::storage::stored::Stored;
use crate::wire::object::{DecodeError, Object};

/// The stored CRDs by key (their name), in the store's order.
#[derive(Clone, Default)]
pub(crate) struct CrdLister {
    crds: ByRevision<Listed>,
    /// Per group, the names its CRDs have accepted, and a count that changes when they do.
    groups: BTreeMap<String, (GroupNames, u64)>,
    /// The last count given to a group.
    counted: u64,
}

#[derive(Clone)]
struct Listed {
    decoded: Result<Arc<Object>, DecodeError>,
    settled: Option<Settled>,
}

/// A CRD a pass of the naming and establishing controllers left as it was: the type it serves,
/// and the count of its group's accepted names then. What a pass does with a CRD depends only
/// on the CRD and on those names (its own type is served already, and only its own CRD
/// changes that), so while both hold a pass would leave it as it is again.
#[derive(Clone)]
struct Settled {
    group_names: u64,
    group: String,
    plural: String,
}

/// What a pass is to do with one CRD.
pub(crate) enum Listing {
    /// Check it: decoded, or the reason it does not decode.
    Check(Result<Arc<Object>, DecodeError>),
    /// Nothing: it is settled, serving `plural` in `group`.
    Settled { group: String, plural: String },
}

impl CrdLister {
    /// Brings the lister up to `stored`, the stored CRDs in key order: those gone are
    /// forgotten, and those written since are decoded again.
    pub(crate) fn catch_up<'s>(&mut self, stored: impl Iterator<Item = (&'s String, &'s Stored)>) {
        let changed = self.crds.catch_up(stored, |key, crd| Listed {
            decoded: crd.decode(key).map(Arc::new),
            settled: None,
        });
        if changed {
            self.count_group_names();
        }
    }

    /// Gathers each group's accepted names again, counting anew those that changed.
    fn count_group_names(&mut self) {
        let mut groups: BTreeMap<String, GroupNames> = BTreeMap::new();
        for crd in self.decoded() {
            groups.entry(group_of(crd).to_owned()).or_default().add(crd);
        }
        let before = std::mem::take(&mut self.groups);
        for (group, names) in groups {
            let count = match before.get(&group) {
                Some((was, count)) if *was == names => *count,
                _ => {
                    self.counted += 1;
                    self.counted
                }
            };
            self.groups.insert(group, (names, count));
        }
    }

    /// What the CRDs of `group` have accepted.
    pub(crate) fn group_names(&self, group: &str) -> GroupNames {
        self.groups
            .get(group)
            .map(|(names, _)| names.clone())
            .unwrap_or_default()
    }

    fn group_count(&self, group: &str) -> Option<u64> {
        self.groups.get(group).map(|(_, count)| *count)
    }

    /// Every CRD in key order, and what a pass is to do with it.
    pub(crate) fn pass(&self) -> Vec<(String, Listing)> {
        self.crds
            .iter()
            .map(|(key, listed)| {
                let listing = match &listed.settled {
                    Some(s) if Some(s.group_names) == self.group_count(&s.group) => {
                        Listing::Settled {
                            group: s.group.clone(),
                            plural: s.plural.clone(),
                        }
                    }
                    _ => Listing::Check(listed.decoded.clone()),
                };
                (key.clone(), listing)
            })
            .collect()
    }

    /// Notes that a pass left `key`, serving `plural` in `group` (its CRD's group), as it was.
    pub(crate) fn settle(&mut self, key: &str, group: &str, plural: &str) {
        let Some(group_names) = self.group_count(group) else {
            return;
        };
        if let Some(listed) = self.crds.get_mut(key) {
            listed.settled = Some(Settled {
                group_names,
                group: group.to_owned(),
                plural: plural.to_owned(),
            });
        }
    }

    /// The CRDs that decode, in key order.
    pub(crate) fn decoded(&self) -> impl Iterator<Item = &Object> + '_ {
        self.crds
            .iter()
            .filter_map(|(_, l)| l.decoded.as_deref().ok())
    }

    /// CRD `key` as it was stored at `revision`, if that is what the lister holds.
    pub(crate) fn at(&self, key: &str, revision: u64) -> Option<&Object> {
        self.crds.at(key, revision)?.decoded.as_deref().ok()
    }
}

/// `spec.group` of a CRD.
fn group_of(crd: &Object) -> &str {
    crd.get("spec")
        .and_then(|s| s.get("group"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn stored(group: &str, plural: &str, accepted: Value, revision: u64) -> Stored {
        let Value::Object(crd) = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "names": {"plural": plural, "kind": plural}},
            "status": {"acceptedNames": accepted},
        }) else {
            unreachable!("an object literal")
        };
        Stored::new(&crd, revision, None)
    }

    fn settled(lister: &CrdLister) -> Vec<String> {
        lister
            .pass()
            .into_iter()
            .filter(|(_, l)| matches!(l, Listing::Settled { .. }))
            .map(|(key, _)| key)
            .collect()
    }

    #[test]
    fn a_settled_crd_is_checked_again_once_its_group_accepts_other_names() {
        let mut lister = CrdLister::default();
        let names = |plural: &str| json!({"plural": plural, "kind": plural});
        let a = ("a.one".to_owned(), stored("one", "a", names("a"), 1));
        let other = ("b.two".to_owned(), stored("two", "b", names("b"), 2));
        let new = ("c.one".to_owned(), stored("one", "c", names("c"), 3));
        lister.catch_up([(&a.0, &a.1), (&other.0, &other.1)].into_iter());
        lister.settle("a.one", "one", "a");
        lister.settle("b.two", "two", "b");
        assert_eq!(settled(&lister), ["a.one", "b.two"]);

        // Read again, nothing changed: both stay settled.
        lister.catch_up([(&a.0, &a.1), (&other.0, &other.1)].into_iter());
        assert_eq!(settled(&lister), ["a.one", "b.two"]);

        // A CRD of group one that has accepted other names: the group's names change. (A new
        // one, which has accepted none, would add only the empty name, there already.)
        lister.catch_up([(&a.0, &a.1), (&other.0, &other.1), (&new.0, &new.1)].into_iter());
        assert_eq!(settled(&lister), ["b.two"]);

        // Written again (a new revision), a CRD is no longer settled.
        lister.settle("a.one", "one", "a");
        let b_again = stored("two", "b", names("b"), 4);
        lister.catch_up([(&a.0, &a.1), (&other.0, &b_again), (&new.0, &new.1)].into_iter());
        assert_eq!(settled(&lister), ["a.one"]);

        // A CRD gone frees its names.
        lister.catch_up([(&other.0, &b_again), (&new.0, &new.1)].into_iter());
        assert!(lister.at("a.one", 1).is_none());
        assert_eq!(lister.decoded().count(), 2);
    }
}
