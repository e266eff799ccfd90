//! The verb handlers, each an `impl State` block, as kube-apiserver's REST handlers and registry
//! stores serve a request: decode, admit, validate, store, answer.
//!
//! - [`create`], [`read`], [`update`], [`patch`], [`delete`], [`watch`]: the verbs; [`paging`]:
//!   continued lists;
//! - [`scale`]: the `/scale` subresource of the replicated kinds and custom resources;
//! - [`discovery`]: the discovery documents;
//! - [`decode`], [`field_validation`]: request bodies and what their unknown fields cost;
//! - [`field_manager`]: `managedFields` on every write;
//! - [`validation`]: the generic `ObjectMeta` checks of every strategy;
//! - [`admission`], [`namespace_lifecycle`]: the admission steps; [`admin_access`]: the DRA
//!   claim strategies' namespace check;
//! - [`admission`], [`namespace_lifecycle`]: the admission steps; [`param_access`]: the read
//!   access an admission policy's params need;
//! - [`subresources`]: the subresources beside `status`, and the resources that store nothing;
//!   [`eviction`], [`binding`], [`pod_parts`] (`ephemeralcontainers`, `resize`) and [`token`]
//!   (TokenRequest, TokenReview) serve some of them, reading their bodies with
//!   [`subresource_body`].

pub(crate) mod access_reviews;
pub(crate) mod admin_access;
pub(crate) mod admission;
pub(crate) mod binding;
pub(crate) mod component_status;
pub(crate) mod create;
pub(crate) mod decode;
pub(crate) mod delete;
pub(crate) mod discovery;
pub(crate) mod eviction;
pub(crate) mod field_manager;
pub(crate) mod field_validation;
pub(crate) mod namespace_lifecycle;
pub(crate) mod paging;
pub(crate) mod param_access;
pub(crate) mod patch;
pub(crate) mod pod_parts;
pub(crate) mod read;
pub(crate) mod reviews;
pub(crate) mod scale;
pub(crate) mod subresource_body;
pub(crate) mod subresources;
pub(crate) mod token;
#[cfg(test)]
mod unreadable_tests;
pub(crate) mod update;
pub(crate) mod validation;
pub(crate) mod watch;

use crate::wire::error::ApiError;
use crate::wire::status::Reason;

/// `MaxRequestBodyBytes` of kube-apiserver: 3 MiB.
const MAX_REQUEST_BODY_BYTES: usize = 3 << 20;

/// `limitedReadBody`: a body over the limit is refused before anything reads it.
pub(crate) fn check_body_size(body: &[u8]) -> Result<(), ApiError> {
    if body.len() > MAX_REQUEST_BODY_BYTES {
        return Err(ApiError::new(
            413,
            Reason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
        ));
    }
    Ok(())
}
