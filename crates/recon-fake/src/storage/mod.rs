//! Storage, as etcd and the apiserver's storage layer keep objects: one global revision, the
//! objects of each resource in key order, and the history of changes that watches and continued
//! lists read.
//!
//! - [`stored`]: one stored object and its key;
//! - [`labels`]: an object's labels as selectors and the label index read them;
//! - [`history`]: the bounded change log;
//! - [`store`]: the objects, their label index and the revision counter;
//! - [`write_limit`]: etcd's limits on the size of one write;
//! - [`by_revision`]: what is worked out from each stored object, kept until it changes.

pub(crate) mod by_revision;
pub(crate) mod history;
pub(crate) mod labels;
pub(crate) mod store;
pub(crate) mod stored;
pub(crate) mod write_limit;
