//! recon: reconciler trees for kube-rs, and a faithful in-memory Kubernetes API server to test
//! them against.
//!
//! This release ships the in-memory API server, [`fake`]: a `kube::Client` backed by an
//! in-memory store that answers like kube-apiserver, records every request, and lets tests
//! inject failures and concurrent writes.

pub mod fake;
