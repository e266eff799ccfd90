//! Why an object could not be converted.

use crate::error::BoxError;

/// Why [`Conversion::convert`](super::Conversion::convert) could not convert an object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionError {
    /// The object is not a JSON object with an `apiVersion`.
    #[error("the object has no apiVersion")]
    NoApiVersion,
    /// A version the conversion does not know (neither the hub nor a spoke).
    #[error("{kind} has no version {api_version} to convert {direction}")]
    UnknownVersion {
        /// The kind converted.
        kind: String,
        /// The version asked for or found.
        api_version: String,
        /// `from` or `to`.
        direction: &'static str,
    },
    /// The object does not deserialize as its version's type.
    #[error("{name}: cannot read it as {api_version}: {source}")]
    Decode {
        /// `namespace/name` of the object.
        name: String,
        /// Its version.
        api_version: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A conversion function failed.
    #[error("{name}: converting {from} to {to}: {source}")]
    Convert {
        /// `namespace/name` of the object.
        name: String,
        /// The version converted from.
        from: String,
        /// The version converted to.
        to: String,
        /// The function's error.
        source: BoxError,
    },
    /// A converted object does not serialize.
    #[error("{name}: cannot write it as {api_version}: {source}")]
    Encode {
        /// `namespace/name` of the object.
        name: String,
        /// The version written.
        api_version: String,
        /// What serde said.
        source: serde_json::Error,
    },
}
