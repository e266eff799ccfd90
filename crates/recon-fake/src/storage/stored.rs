//! One stored object, and the key it is stored under.

use bytes::Bytes;
use recon_apimachinery::json::Value;

use super::labels::Labels;
use crate::wire::nesting;
use crate::wire::object::{DecodeError, Object, decode_body, encode_body_as};

/// One stored object.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    /// The object's JSON without `apiVersion` and `kind`: a built-in's fields in its Go
    /// struct's order, anything else with its keys sorted ([`encode_body_as`]).
    pub(crate) body: Bytes,
    /// `metadata.resourceVersion`, as a number.
    pub(crate) revision: u64,
    /// `metadata.labels`, kept decoded for selectors; shared with the history's copies.
    pub(crate) labels: Labels,
    /// Whether `body` decodes. It is known when the body is made, so that reads serving the
    /// bytes as they are need not decode them to know: the server reads back what it wrote
    /// unless it nests deeper than Go's decoder reads ([`nesting::GO_MAX_DEPTH`]).
    pub(super) readable: bool,
}

impl Stored {
    /// `obj` as stored at `revision` (which `obj` carries), a built-in written as the Go struct
    /// `stored_as` when it does not say its `apiVersion` and `kind`.
    pub(crate) fn new(obj: &Object, revision: u64, stored_as: Option<&str>) -> Stored {
        let body = encode_body_as(obj, stored_as);
        // Each level of nesting takes two bytes of the body, its brackets: a body shorter than
        // twice Go's limit is within it, and only a longer one is measured. (The body leaves
        // out `apiVersion` and `kind`, which are strings here; measured otherwise.)
        let typed = ["apiVersion", "kind"]
            .iter()
            .all(|k| !matches!(obj.get(k), Some(Value::Array(_) | Value::Object(_))));
        let readable = (typed && body.len() < 2 * (nesting::GO_MAX_DEPTH + 1))
            || nesting::object_depth(obj) <= nesting::GO_MAX_DEPTH;
        Stored {
            body,
            revision,
            labels: Labels::of(obj),
            readable,
        }
    }

    /// Bytes stored as they are, as a corrupted etcd value would be: the tests' way to hold a
    /// body the server cannot read.
    #[cfg(test)]
    pub(crate) fn raw(body: Bytes, revision: u64) -> Stored {
        let decoded = decode_body("", &body);
        Stored {
            labels: decoded.as_ref().map(Labels::of).unwrap_or_default(),
            readable: decoded.is_ok(),
            body,
            revision,
        }
    }

    /// Whether the body decodes.
    pub(crate) fn readable(&self) -> bool {
        self.readable
    }

    /// The body, to be served as it is; `Err` when it does not decode (the real server decodes
    /// every object it reads, and fails the read).
    pub(crate) fn served(&self, key: &str) -> Result<&Bytes, DecodeError> {
        if !self.readable {
            decode_body(key, &self.body)?;
        }
        Ok(&self.body)
    }

    /// The object stored under `key`, decoded.
    pub(crate) fn decode(&self, key: &str) -> Result<Object, DecodeError> {
        decode_body(key, &self.body)
    }

    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key)
    }
}

/// The storage key of an object: `<namespace>/<name>`, or `<name>` when cluster-scoped. Listing
/// in key order is the order etcd returns (byte order, so `a-b/x` sorts before `a/x`).
pub(crate) fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json::{Array, Map};

    use super::*;

    /// An object whose field `a` holds arrays nested `depth - 1` deep: `depth` levels in all.
    fn nested(depth: usize) -> Object {
        let mut value = Value::from("leaf");
        for _ in 1..depth {
            value = Value::Array(Array::from(vec![value]));
        }
        Map::from_iter([("a", value)])
    }

    // Go decodes 10,000 levels (`maxNestingDepth`); a body one level deeper is stored but does
    // not read back. Short bodies are within the limit by their length alone.
    #[test]
    fn a_body_reads_back_down_to_go_s_depth_and_no_deeper() {
        for (depth, readable) in [
            (1, true),
            (50, true),
            (nesting::GO_MAX_DEPTH, true),
            (nesting::GO_MAX_DEPTH + 1, false),
        ] {
            let stored = Stored::new(&nested(depth), 2, None);
            assert_eq!(stored.readable(), readable, "{depth} levels");
            assert_eq!(stored.decode("k").is_ok(), readable, "{depth} levels");
        }
    }
}
