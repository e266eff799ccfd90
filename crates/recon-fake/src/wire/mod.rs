//! The wire level: what kube-apiserver's Go code writes, byte for byte, and what every layer
//! above quotes in its answers. Of the rest of the server it imports only the field errors a
//! `Status` carries ([`crate::field`]) and Go's struct encodings ([`crate::gotype`]); JSON as Go
//! writes it is `recon_apimachinery::go_json`.
//!
//! - [`go_json_syntax`]: the syntax errors Go's `encoding/json` reads malformed JSON with;
//! - [`go_yaml`]: YAML bodies read as go-yaml reads them, with its errors;
//! - [`group`]: resources and kinds qualified by their API group;
//! - [`status`], [`error`]: `metav1.Status` errors, with the real codes and messages;
//! - [`media_type`]: `Content-Type` headers as the handlers parse them;
//! - [`nesting`]: how deep a stored object may nest;
//! - [`unified_diff`]: the unified diffs Go's validation quotes;
//! - [`object`]: objects as JSON maps, their `metadata` decoded as `metav1.ObjectMeta` is, and
//!   their stored bytes.

pub(crate) mod duplicate_fields;
pub(crate) mod error;
pub(crate) mod go_json_syntax;
pub(crate) mod go_yaml;
pub(crate) mod group;
pub(crate) mod media_type;
pub(crate) mod nesting;
pub(crate) mod object;
pub(crate) mod status;
pub(crate) mod unified_diff;
