//! Conversion between the versions of a custom resource: a typed [`Conversion`] (one hub
//! version, spokes converting to and from it with plain Rust functions or `From` impls), a
//! [`ConversionHandler`] answering kube-apiserver's `ConversionReview`s, and
//! [`respond_conversion`], the HTTP side of a conversion webhook (routed by `WebhookServer`
//! with the `webhook-server` feature).
//!
//! A CRD with `conversion.strategy: Webhook` has kube-apiserver send every object it reads or
//! writes in another version than the one asked for to the webhook; a conversion that fails
//! makes those objects unreadable, so a conversion should be total and lose nothing: keep what
//! a version cannot hold in an annotation, and check round trips in tests.

mod error;
mod hub;
mod review;

pub use error::ConversionError;
pub use hub::Conversion;
pub use review::{CONVERSION_API_VERSION, ConversionHandler, respond_conversion};
