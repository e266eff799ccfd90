//! The in-memory API server through `kube::Api` and raw requests, one module per area.

#![recursion_limit = "256"] // the CRDs written with `json!` in `schema_validation`

mod access_reviews;
mod admission_names;
mod autoscaling;
mod byte_order;
mod cluster;
mod crd_deletion;
mod create;
mod deep;
mod delete;
mod discovery;
mod fork;
mod gc;
mod inspect;
mod list;
mod namespaces;
mod paging;
mod patch;
mod pod_subresources;
mod reactors;
mod routing;
mod scale;
mod schema_cel;
mod schema_decoding;
mod schema_validation;
mod status;
mod support;
mod tables;
mod update;
mod watch;
