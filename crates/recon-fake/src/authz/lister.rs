//! What the RBAC authorizer has read of the bindings and roles, as its informers keep them
//! (`plugin/pkg/auth/authorizer/rbac`'s listers): each object decoded once, then read from
//! here until it is written again.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use recon_apimachinery::json::Value;

use super::rbac::GROUP;
use crate::storage::store::Store;
use crate::storage::stored::Stored;
use crate::wire::group::GroupResource;
use crate::wire::object::read_json;

/// The decoded bindings and roles by resource (`clusterrolebindings`, `rolebindings`,
/// `clusterroles`, `roles`) and storage key, each with the revision it was decoded at (`None`:
/// a body that does not decode, which the authorizer skips).
#[derive(Debug, Clone, Default)]
pub(crate) struct RbacLister {
    read: RefCell<HashMap<&'static str, HashMap<String, Decoded>>>,
}

type Decoded = (u64, Option<Arc<Value>>);

impl RbacLister {
    /// The object of `resource` stored at `key` as `stored`, decoded, or `None` when it does
    /// not decode. `store` is what holds it: entries of objects gone from it are forgotten
    /// once they outnumber those still there.
    pub(crate) fn read(
        &self,
        store: &Store,
        resource: &'static str,
        key: &str,
        stored: &Stored,
    ) -> Option<Arc<Value>> {
        let mut read = self.read.borrow_mut();
        let decoded = read.entry(resource).or_default();
        if let Some((revision, value)) = decoded.get(key)
            && *revision == stored.revision
        {
            return value.clone();
        }
        let value = read_json(&stored.body).ok().map(Arc::new);
        decoded.insert(key.to_owned(), (stored.revision, value.clone()));
        let collection = GroupResource::new(GROUP, resource);
        if decoded.len() > 2 * store.len(&collection) + 16 {
            decoded.retain(|key, (revision, _)| {
                store
                    .get(&collection, key)
                    .is_some_and(|s| s.revision == *revision)
            });
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn an_object_is_decoded_again_only_once_written_again() {
        let store = Store::default();
        let lister = RbacLister::default();
        let first = Stored::raw(Bytes::from_static(br#"{"a":1}"#), 3);
        let a = lister.read(&store, "roles", "ns/r", &first);
        assert_eq!(a.as_deref(), Some(&recon_apimachinery::json!({"a": 1})));
        // The same revision is not read again: a different body there would not be seen.
        let same = Stored::raw(Bytes::from_static(br#"{"a":2}"#), 3);
        let again = lister.read(&store, "roles", "ns/r", &same);
        assert!(Arc::ptr_eq(
            &a.unwrap_or_default(),
            &again.unwrap_or_default()
        ));
        let written = Stored::raw(Bytes::from_static(br#"{"a":2}"#), 4);
        let b = lister.read(&store, "roles", "ns/r", &written);
        assert_eq!(b.as_deref(), Some(&recon_apimachinery::json!({"a": 2})));
        let broken = Stored::raw(Bytes::from_static(b"{"), 5);
        assert_eq!(lister.read(&store, "roles", "ns/r", &broken), None);
    }

    #[test]
    fn what_is_gone_from_the_store_is_forgotten() {
        let store = Store::default();
        let lister = RbacLister::default();
        for i in 0..40 {
            let stored = Stored::raw(Bytes::from_static(b"{}"), i);
            lister.read(&store, "roles", &format!("ns/r{i}"), &stored);
        }
        let held = lister.read.borrow()["roles"].len();
        assert!(held <= 17, "{held} entries kept of an empty store");
    }
}
