//! The controllers: what a cluster runs beside kube-apiserver, here run by the server itself.
//!
//! - [`apiextensions`]: the CRD controllers, run right after each write as a real server's
//!   would have caught up.

pub(crate) mod apiextensions;
pub(crate) mod client;
pub(crate) mod garbage_collector;
pub(crate) mod namespace_controller;
pub(crate) mod report;
