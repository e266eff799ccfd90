//! A request as the verb handlers see it, and what they answer, below the server's state.
//!
//! - [`route`]: the URL layout, the verb, the query;
//! - [`call`]: one routed resource request;
//! - [`reply`], [`watch_stream`]: the answer, and the body of a watch;
//! - [`list_options`], [`list_query`], [`delete_options`]: the options of lists, watches and
//!   deletes;
//! - [`negotiate`]: the response forms an `Accept` header asks for.

pub(crate) mod call;
pub(crate) mod delete_options;
pub(crate) mod list_options;
pub(crate) mod list_query;
pub(crate) mod negotiate;
pub(crate) mod reply;
pub(crate) mod route;
pub(crate) mod watch_stream;
