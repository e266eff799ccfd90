//! Storage, as etcd and the apiserver's storage layer keep objects: one global revision, the
//! objects of each resource in key order, and the history of changes that watches and continued
//! lists read.
//!
//! - [`stored`]: one stored object and its key;
//! - [`history`]: the bounded change log;
//! - [`store`]: the objects, their label index and the revision counter.

pub(crate) mod history;
pub(crate) mod store;
pub(crate) mod stored;
