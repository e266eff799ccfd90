//! The small part of Kubernetes' apimachinery that both halves of recon need, with the real
//! apiserver's rules and error texts: the syntax of object names, label keys and values
//! ([`names`]), label and field selectors ([`selector`]), Go's aggregated error messages
//! ([`errors`]), Go's `%q` quoting ([`go_quote`]), JSON as Go writes and decodes it
//! ([`go_json`]), Go's time formats and durations ([`gotime`]), structured-merge-diff's values
//! ([`value`]) and the field sets of `managedFields` ([`fieldpath`]), over JSON values that
//! take a bounded stack at any depth ([`json`](mod@json)): objects nest as deep as Go decodes them, 10,000
//! levels, and no walk over them overflows a thread's stack.
//!
//! `recon-core`'s tracker validates references and matches selectors with it, and its
//! server-side apply reads `managedFields` with it; the in-memory API server (`recon-fake`)
//! answers list and watch requests, validates metadata, tracks field managers and reads and
//! writes Go's times with it. Neither reaches into the other for these rules.
//!
//! ```
//! use recon_apimachinery::selector::LabelSelector;
//!
//! let selector = LabelSelector::parse("app=web,tier in (front,back)").unwrap();
//! let labels = [("app", "web"), ("tier", "front")];
//! assert!(selector.matches(|key| labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)));
//!
//! let err = LabelSelector::parse("tier in (front").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "unable to parse requirement: found '', expected: ',' or ')'"
//! );
//! ```

mod depth;
pub mod errors;
pub mod fieldpath;
pub mod go_json;
pub mod gotime;
pub mod json;
pub mod names;
mod quote;
mod scan;
pub mod selector;
pub mod value;

pub use quote::{go_quote, go_quote_list};
