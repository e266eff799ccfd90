//! The verb handlers, each an `impl State` block, as kube-apiserver's REST handlers and registry
//! stores serve a request: decode, admit, validate, store, answer.

pub(crate) mod admission;
pub(crate) mod create;
pub(crate) mod decode;
pub(crate) mod delete;
pub(crate) mod discovery;
pub(crate) mod field_manager;
pub(crate) mod field_validation;
pub(crate) mod namespace_lifecycle;
pub(crate) mod paging;
pub(crate) mod patch;
pub(crate) mod read;
pub(crate) mod update;
pub(crate) mod validation;
pub(crate) mod watch;
