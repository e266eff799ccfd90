//! The `ListOptions` of a list or watch: `resourceVersion`, `resourceVersionMatch`, `limit`,
//! `continue`, `sendInitialEvents`, `allowWatchBookmarks` and `timeoutSeconds`, checked as
//! `ValidateListOptions` (k8s.io/apimachinery `pkg/apis/meta/internalversion/validation`) checks
//! them. Messages were checked against a real apiserver.

use super::route::Query;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::wire::error::ApiError;
use crate::wire::group::GroupKind;
use crate::wire::status::Reason;

/// How `resourceVersion` is to be matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// No `resourceVersionMatch`: the legacy meaning of each `resourceVersion` form.
    Unset,
    NotOlderThan,
    Exact,
}

/// Parsed and validated list or watch options.
#[derive(Debug, Clone)]
pub(crate) struct ListOptions {
    /// `None` when unset or empty.
    pub(crate) resource_version: Option<u64>,
    pub(crate) resource_version_match: Match,
    /// `limit`; zero or absent means everything.
    pub(crate) limit: usize,
    /// The raw `continue` token.
    pub(crate) continue_token: Option<String>,
    pub(crate) send_initial_events: Option<bool>,
    pub(crate) allow_bookmarks: bool,
    pub(crate) timeout_seconds: Option<u64>,
}

impl ListOptions {
    /// The options of a list (`watch == false`) or a watch request.
    pub(crate) fn parse(query: &Query, watch: bool) -> Result<Self, ApiError> {
        let raw_rv = query.get("resourceVersion").unwrap_or("");
        let raw_match = query.get("resourceVersionMatch").unwrap_or("");
        let continue_token = query
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        let send_initial_events = query.get("sendInitialEvents").map(parse_bool);
        let errors = if watch {
            watch_errors(raw_match, send_initial_events, continue_token.is_some())
        } else {
            list_errors(
                raw_rv,
                raw_match,
                send_initial_events,
                continue_token.is_some(),
            )
        };
        if !errors.is_empty() {
            return Err(ApiError::invalid(
                &GroupKind::new("meta.k8s.io", "ListOptions"),
                "",
                &errors,
            ));
        }
        let resource_version = if raw_rv.is_empty() {
            None
        } else {
            Some(parse_revision(raw_rv).map_err(|why| {
                let detail = format!("resourceVersion: Invalid value: \"{raw_rv}\": {why}");
                if watch {
                    // The watch path returns the storage error unconverted: a 500 without reason.
                    ApiError::internal_unknown(detail)
                } else {
                    ApiError::bad_request(format!("invalid resource version: {detail}"))
                }
            })?)
        };
        let resource_version_match = match raw_match {
            "NotOlderThan" => Match::NotOlderThan,
            "Exact" => Match::Exact,
            _ => Match::Unset,
        };
        Ok(ListOptions {
            resource_version,
            resource_version_match,
            limit: query
                .get("limit")
                .and_then(|l| l.parse::<i64>().ok())
                .map_or(0, |l| usize::try_from(l).unwrap_or(0)),
            continue_token,
            send_initial_events,
            allow_bookmarks: query.flag("allowWatchBookmarks"),
            timeout_seconds: query.get("timeoutSeconds").and_then(|t| t.parse().ok()),
        })
    }

    /// Whether a watch starts with synthetic ADDED events for what exists: asked for with
    /// `sendInitialEvents=true`, and implied by an unset or `"0"` resourceVersion.
    pub(crate) fn initial_events(&self) -> bool {
        self.send_initial_events
            .unwrap_or(matches!(self.resource_version, None | Some(0)))
    }
}

/// `strconv.ParseBool`; anything else reads as false (the query decoder rejects it upstream,
/// which no client sends).
fn parse_bool(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// `strconv.ParseUint(rv, 10, 64)`, with Go's error wording.
pub(crate) fn parse_revision(raw: &str) -> Result<u64, String> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseUint: parsing \"{raw}\": invalid syntax"
        ));
    }
    raw.parse::<u64>()
        .map_err(|_| format!("strconv.ParseUint: parsing \"{raw}\": value out of range"))
}

fn forbidden(field: &str, detail: &str) -> FieldError {
    FieldError::new(ErrorType::Forbidden, field, BadValue::Omit, detail)
}

fn not_supported(field: &str, value: &str, supported: &[&str]) -> FieldError {
    let list: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
    FieldError::new(
        ErrorType::NotSupported,
        field,
        BadValue::Str(value.to_owned()),
        format!("supported values: {}", list.join(", ")),
    )
}

/// `validateWatchOptions`.
fn watch_errors(
    raw_match: &str,
    send_initial_events: Option<bool>,
    has_continue: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if send_initial_events.is_some() && raw_match != "NotOlderThan" {
        errors.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !raw_match.is_empty() {
        if send_initial_events.is_none() {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if raw_match != "NotOlderThan" {
            errors.push(not_supported(
                "resourceVersionMatch",
                raw_match,
                &["NotOlderThan"],
            ));
        }
        if has_continue {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    errors
}

/// `ValidateListOptions` for a list.
fn list_errors(
    raw_rv: &str,
    raw_match: &str,
    send_initial_events: Option<bool>,
    has_continue: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !raw_match.is_empty() {
        if raw_rv.is_empty() {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if has_continue {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if raw_match != "Exact" && raw_match != "NotOlderThan" {
            errors.push(not_supported(
                "resourceVersionMatch",
                raw_match,
                &["Exact", "NotOlderThan", ""],
            ));
        }
        if raw_match == "Exact" && raw_rv == "0" {
            errors.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if send_initial_events.is_some() {
        errors.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    errors
}

/// 410 for a list at a revision the history no longer has.
pub(crate) fn list_too_old() -> ApiError {
    ApiError::new(
        410,
        Reason::Expired,
        "The resourceVersion for the provided list is too old.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str, watch: bool) -> Result<ListOptions, ApiError> {
        ListOptions::parse(&Query::parse(query), watch)
    }

    #[test]
    fn watch_resource_version_match_needs_send_initial_events_as_a_real_server_says() {
        let err = parse("resourceVersionMatch=NotOlderThan", true).unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (
                422,
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            )
        );
        let err = parse("sendInitialEvents=true&resourceVersionMatch=Exact", true).unwrap_err();
        assert_eq!(
            err.message(),
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]"
        );
    }

    #[test]
    fn list_options_forbid_send_initial_events_and_a_match_without_a_version() {
        assert_eq!(
            parse("sendInitialEvents=true", false)
                .unwrap_err()
                .message(),
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
        );
        assert_eq!(
            parse("resourceVersionMatch=NotOlderThan", false)
                .unwrap_err()
                .message(),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
    }

    #[test]
    fn a_malformed_resource_version_is_a_bad_request_on_list_and_a_500_on_watch() {
        let list = parse("resourceVersion=abc", false).unwrap_err();
        assert_eq!(
            (list.code(), list.message()),
            (
                400,
                "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
            )
        );
        let watch = parse("resourceVersion=abc", true).unwrap_err();
        assert_eq!(
            (watch.code(), watch.message()),
            (
                500,
                "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
            )
        );
    }

    #[test]
    fn initial_events_follow_the_resource_version_unless_asked_explicitly() {
        assert!(parse("", true).unwrap().initial_events());
        assert!(parse("resourceVersion=0", true).unwrap().initial_events());
        assert!(!parse("resourceVersion=5", true).unwrap().initial_events());
        let streaming = parse(
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=5",
            true,
        )
        .unwrap();
        assert!(streaming.initial_events());
    }
}
