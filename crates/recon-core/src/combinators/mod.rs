//! Sub-reconcilers made of other sub-reconcilers: in order ([`Sequence`]), on a condition
//! ([`IfThen`], [`While`]), once per item ([`ForEach`]), around hooks ([`Advice`], [`Always`],
//! [`TryCatch`]), with another config, shape or watches ([`WithConfig`], [`CastResource`],
//! [`OverrideSetup`]), behind a finalizer ([`WithFinalizer`]), or quiet while failures are
//! transient ([`SuppressTransientErrors`]).

mod advice;
mod always;
mod cast;
mod finalizer;
mod for_each;
mod if_then;
mod override_setup;
mod sequence;
mod suppress_transient_errors;
mod try_catch;
mod while_loop;
mod with_config;

pub use advice::Advice;
pub use always::Always;
pub use cast::CastResource;
pub use finalizer::{WithFinalizer, add_finalizer, clear_finalizer};
pub use for_each::{Cursor, ForEach};
pub use if_then::IfThen;
pub use override_setup::OverrideSetup;
pub use sequence::Sequence;
pub use suppress_transient_errors::{
    DEFAULT_FORGET_AFTER, DEFAULT_THRESHOLD, SuppressTransientErrors,
};
pub use try_catch::TryCatch;
pub use while_loop::{DEFAULT_MAX_ITERATIONS, MaxIterationsExceeded, WHILE_ITERATION, While};
pub use with_config::WithConfig;
