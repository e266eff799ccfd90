//! One stored object, and the key it is stored under.

use std::sync::Arc;

use bytes::Bytes;

/// One stored object.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    /// The object's JSON without `apiVersion` and `kind`, keys sorted.
    pub(crate) body: Bytes,
    /// `metadata.resourceVersion`, as a number.
    pub(crate) revision: u64,
    /// `metadata.labels`, kept decoded for selectors; shared with the history's copies.
    pub(crate) labels: Arc<[(String, String)]>,
}

impl Stored {
    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.labels[i].1.as_str())
    }
}

/// The storage key of an object: `<namespace>/<name>`, or `<name>` when cluster-scoped. Listing
/// in key order is the order etcd returns (byte order, so `a-b/x` sorts before `a/x`).
pub(crate) fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}
