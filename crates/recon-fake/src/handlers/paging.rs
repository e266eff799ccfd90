//! Lists at a revision and in pages: `limit` / `continue` and `resourceVersionMatch=Exact`, as
//! etcd3's `GetList` serves them (k8s.io/apiserver `pkg/storage/etcd3/store.go`,
//! `pkg/storage/continue.go`). Every page of a list reads the revision of its first page; a past
//! revision is rebuilt by undoing the retained changes made since, and one older than the
//! retained history is `410 Expired`, as after an etcd compaction.

use std::collections::BTreeMap;

use base64::Engine;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde::{Deserialize, Serialize};

use crate::handlers::read::unreadable;
use crate::request::call::Call;
use crate::request::list_options::{ListOptions, Match, list_too_old};
use crate::request::list_query::ListQuery;
use crate::state::State;
use crate::storage::stored::Stored;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::status::{Reason, StatusCause, StatusDetails};

/// Go's `base64.RawURLEncoding`: URL-safe, unpadded, and lenient about the unused bits of the
/// last character.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// The version every continue token carries.
const TOKEN_VERSION: &str = "meta.k8s.io/v1";

/// The decoded form of a continue token: base64url (unpadded) JSON, as the real server writes it.
#[derive(Debug, Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: i64,
    /// The next storage key, relative to the list's prefix, with a leading `/` and a trailing NUL.
    start: String,
}

/// Where a list reads: at which revision, from which storage key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadPoint {
    pub(crate) revision: u64,
    /// The first storage key to return (inclusive).
    pub(crate) start: Option<String>,
    /// Whether the list reads the current state (so the label index may be used).
    pub(crate) current: bool,
}

/// One page of a list.
pub(crate) struct Page {
    pub(crate) items: Vec<(String, Stored)>,
    /// The token for the next page; `None` on the last one.
    pub(crate) continue_token: Option<String>,
    /// Objects after this page, counted only for lists without selectors (as etcd3 does).
    pub(crate) remaining: Option<usize>,
}

/// The storage-key prefix of a list: `<namespace>/` or nothing.
fn list_prefix(namespace: Option<&str>) -> String {
    namespace.map(|ns| format!("{ns}/")).unwrap_or_default()
}

fn invalid_token(why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "invalid continue token: continue key is not valid: {why}"
    ))
}

/// The first error Go's decoder reports for `data`, for the common malformed inputs.
fn json_error(data: &[u8], err: &serde_json::Error) -> String {
    match data.iter().find(|b| !b.is_ascii_whitespace()) {
        None => "unexpected end of JSON input".to_owned(),
        Some(b)
            if !matches!(
                b,
                b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            ) =>
        {
            format!(
                "invalid character {} looking for beginning of value",
                go_char(*b)
            )
        }
        Some(_) if err.is_eof() => "unexpected end of JSON input".to_owned(),
        Some(_) => err.to_string(),
    }
}

/// Go's `quoteChar`: `'x'`, with `\'` and `\\` escaped and other bytes as `'\x..'`.
fn go_char(b: u8) -> String {
    match b {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        0x20..=0x7e => format!("'{}'", b as char),
        _ => format!("'\\x{b:02x}'"),
    }
}

/// `storage.DecodeContinue`: the revision and the absolute start key of a token.
fn decode_token(token: &str, prefix: &str) -> Result<(u64, String), ApiError> {
    let data = RAW_URL.decode(token).map_err(|e| {
        let at = match e {
            base64::DecodeError::InvalidByte(i, _)
            | base64::DecodeError::InvalidLastSymbol(i, _) => i,
            _ => token.len(),
        };
        invalid_token(&format!("illegal base64 data at input byte {at}"))
    })?;
    let decoded: ContinueToken =
        serde_json::from_slice(&data).map_err(|e| invalid_token(&json_error(&data, &e)))?;
    if decoded.v != TOKEN_VERSION {
        return Err(invalid_token(&format!(
            "got incorrect encoded start resourceVersion (version {})",
            decoded.v
        )));
    }
    let Ok(revision) = u64::try_from(decoded.rv) else {
        return Err(invalid_token(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    };
    if revision == 0 {
        return Err(invalid_token(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    let relative = decoded.start.strip_prefix('/').unwrap_or(&decoded.start);
    if relative.split('/').any(|segment| segment == "..") {
        return Err(invalid_token("path traversal attempt detected"));
    }
    Ok((revision, format!("{prefix}{relative}")))
}

/// The token of a page that ended at `last_key`.
fn encode_token(revision: u64, last_key: &str, prefix: &str) -> String {
    let relative = last_key.strip_prefix(prefix).unwrap_or(last_key);
    let token = ContinueToken {
        v: TOKEN_VERSION.to_owned(),
        rv: i64::try_from(revision).unwrap_or(i64::MAX),
        start: format!("/{relative}\u{0}"),
    };
    RAW_URL.encode(serde_json::to_vec(&token).unwrap_or_default())
}

/// `Too large resource version`: the revision is in the future (the real server waits three
/// seconds for it first).
fn too_large(requested: u64, current: u64) -> ApiError {
    ApiError::new(
        504,
        Reason::Timeout,
        format!("Too large resource version: {requested}, current: {current}"),
    )
    .with_details(StatusDetails {
        causes: vec![StatusCause {
            reason: "ResourceVersionTooLarge".to_owned(),
            message: "Too large resource version".to_owned(),
            field: String::new(),
        }],
        retry_after_seconds: Some(1),
        ..StatusDetails::default()
    })
}

impl State {
    /// Where a list with these options reads.
    pub(crate) fn read_point(
        &self,
        call: &Call<'_>,
        options: &ListOptions,
    ) -> Result<ReadPoint, ApiError> {
        let current = self.store.revision();
        let resource = call.rt.group_resource();
        if let Some(token) = &options.continue_token {
            if options.resource_version.is_some() {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (revision, start) = decode_token(token, &list_prefix(call.namespace()))?;
            if revision < self.store.history.oldest(&resource) {
                return Err(ApiError::new(
                    410,
                    Reason::Expired,
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                ));
            }
            return Ok(ReadPoint {
                revision,
                start: Some(start),
                current: revision == current,
            });
        }
        let at = |revision: u64| ReadPoint {
            revision,
            start: None,
            current: revision == current,
        };
        match (options.resource_version, options.resource_version_match) {
            (Some(requested), _) if requested > current => Err(too_large(requested, current)),
            (Some(requested), Match::Exact) => {
                if requested < self.store.history.oldest(&resource) {
                    return Err(list_too_old());
                }
                Ok(at(requested))
            }
            _ => Ok(at(current)),
        }
    }

    /// The page of `call`'s list at `point`: up to `limit` matching objects (all with 0). As
    /// etcd3's `GetList`, every object read until the page is full is decoded before the
    /// selectors filter it: one that does not decode fails the list.
    pub(crate) fn page(
        &self,
        call: &Call<'_>,
        query: &ListQuery,
        point: &ReadPoint,
        limit: usize,
        selective: bool,
    ) -> Result<Page, ApiError> {
        let resource = call.rt.group_resource();
        let prefix = list_prefix(call.namespace());
        let from = point.start.clone().unwrap_or_else(|| prefix.clone());
        let undone = self.undone_since(&resource, point.revision, &prefix, &from);
        let mut stored = self
            .store
            .list_from(&resource, &prefix, &from)
            .filter(|(key, _)| !undone.contains_key(key.as_str()))
            .map(|(key, s)| (key.as_str(), s))
            .peekable();
        let mut restored = undone
            .iter()
            .filter_map(|(key, s)| s.as_ref().map(|s| (key.as_str(), s)))
            .peekable();
        // Both sources are in key order: merge them.
        let merged = std::iter::from_fn(move || match (stored.peek(), restored.peek()) {
            (Some(a), Some(b)) if a.0 < b.0 => stored.next(),
            (Some(_), Some(_)) | (None, Some(_)) => restored.next(),
            (Some(_), None) => stored.next(),
            (None, None) => None,
        });
        let scope = query.scope(call);
        let mut items = Vec::new();
        let mut merged = merged.filter(|(key, _)| scope.contains(key));
        for (key, s) in merged.by_ref() {
            let selected = s
                .served(key)
                .and_then(|_| query.matches(&call.rt, key, s))
                .map_err(unreadable)?;
            if selected {
                items.push((key.to_owned(), s.clone()));
                if limit > 0 && items.len() == limit {
                    break;
                }
            }
        }
        // Past a full page nothing more is read; an object there that does not decode counts
        // as one to come, and fails the page that reads it.
        let remaining = if limit > 0 {
            merged
                .filter(|(key, s)| query.matches(&call.rt, key, s).unwrap_or(true))
                .count()
        } else {
            0
        };
        let continue_token = (remaining > 0)
            .then(|| items.last())
            .flatten()
            .map(|(key, _)| encode_token(point.revision, key, &prefix));
        Ok(Page {
            continue_token,
            remaining: (remaining > 0 && !selective).then_some(remaining),
            items,
        })
    }

    /// For each key of the list changed after `revision`, its value at `revision` (`None`: it did
    /// not exist then), from `from` on.
    fn undone_since(
        &self,
        resource: &GroupResource,
        revision: u64,
        prefix: &str,
        from: &str,
    ) -> BTreeMap<String, Option<Stored>> {
        let mut undone = BTreeMap::new();
        for change in self.store.history.since(resource, revision) {
            if change.key.starts_with(prefix) && change.key.as_str() >= from {
                undone
                    .entry(change.key.clone())
                    .or_insert_with(|| change.previous.clone());
            }
        }
        undone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_the_revision_and_the_next_key_relative_to_the_list_prefix() {
        // A real server's token for the page ending at `w1/b`, listed in namespace `w1`.
        let real = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTksInN0YXJ0IjoiL2JcdTAwMDAifQ";
        assert_eq!(decode_token(real, "w1/").unwrap(), (19, "w1/b\u{0}".into()));
        let ours = encode_token(19, "w1/b", "w1/");
        assert_eq!(
            decode_token(&ours, "w1/").unwrap(),
            (19, "w1/b\u{0}".into())
        );
    }

    #[test]
    fn a_malformed_token_is_a_bad_request_with_the_decoders_words() {
        assert_eq!(
            decode_token("abc", "").unwrap_err().message(),
            "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value"
        );
        assert!(
            decode_token("!!", "")
                .unwrap_err()
                .message()
                .contains("illegal base64 data at input byte 0")
        );
    }
}
