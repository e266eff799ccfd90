//! Reading the fields of a decoded object as Go reads its struct: a missing or `null` field is
//! the zero value (`""`, an empty list, a nil pointer).

use recon_apimachinery::json::Value;

/// The string at `key` of `v`, or "" (Go's zero value) when absent or of another type.
pub(crate) fn str_at<'a>(v: Option<&'a Value>, key: &str) -> &'a str {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The integer at `key` of `v`, if there is one.
pub(crate) fn int_at(v: Option<&Value>, key: &str) -> Option<i64> {
    v.and_then(|v| v.get(key)).and_then(Value::as_i64)
}

/// The list at `key` of `v`; empty when absent or null.
pub(crate) fn list_at<'a>(v: Option<&'a Value>, key: &str) -> &'a [Value] {
    crate::wire::object::list_items(v.and_then(|v| v.get(key)))
}

/// Whether `key` of `v` is set (present and not null), as a Go pointer or slice is non-nil.
pub(crate) fn is_set(v: Option<&Value>, key: &str) -> bool {
    v.and_then(|v| v.get(key)).is_some_and(|v| !v.is_null())
}
