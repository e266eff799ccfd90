//! A request as the verb handlers see it, below the server's state.

pub(crate) mod list_options;
pub(crate) mod route;
