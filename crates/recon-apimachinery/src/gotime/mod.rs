//! Go's `time` package as kube-apiserver's texts need it: `time.Parse` and `Time.Format` with
//! the RFC 3339 layouts of `metav1.Time`, `metav1.MicroTime` and `time.RFC3339Nano`, with Go's
//! error texts ([`parse`], [`format()`]); the second precision a `metav1.Time` keeps
//! ([`truncate_to_second`]); `time.ParseDuration` ([`parse_duration`]); and the calendar
//! arithmetic under them ([`civil`]).
//!
//! ```
//! use recon_apimachinery::gotime::{Layout, canonical};
//!
//! assert_eq!(
//!     canonical(Layout::Time, "2026-11-27T12:00:00.75+02:00").unwrap(),
//!     "2026-11-27T10:00:00Z"
//! );
//! assert_eq!(
//!     canonical(Layout::MicroTime, "2026-11-27T10:00:22Z").unwrap_err(),
//!     r#"parsing time "2026-11-27T10:00:22Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
//! );
//! ```

pub mod civil;
mod duration;
mod layout;

pub use duration::parse_duration;
pub use layout::{Layout, canonical, format, format_unix, parse, truncate_to_second};
