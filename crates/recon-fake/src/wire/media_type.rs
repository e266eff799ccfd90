//! `Content-Type` headers as the apiserver reads them.
//!
//! Two rules, from two places in k8s.io/apiserver:
//! - request bodies of create, update and delete go through
//!   `negotiation.NegotiateInputSerializerForMediaType`: an empty header means JSON, anything
//!   else must pass Go's `mime.ParseMediaType` (RFC 2045 tokens, `;`-separated `key=value`
//!   parameters, no conflicting duplicates), and its lower-cased media type must be one the
//!   resource serves;
//! - the patch handler cuts the header at its first `;` (only when that is not the first byte)
//!   and compares what is left verbatim with the patch types, so there case and spaces matter.
//!
//! Either way an unusable header is 415 UnsupportedMediaType. Before either, kube-apiserver's
//! router (go-restful, not the apiextensions server's) turns away a PATCH whose header names no
//! patch type it consumes, with a message of its own.

/// The media types a request body may have, as the 415 for any other lists them.
pub(crate) const BODY_MEDIA_TYPES: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The media type of a request body's `Content-Type`, lower-cased, as
/// `NegotiateInputSerializerForMediaType` matches it; `None` when Go's `mime.ParseMediaType`
/// rejects the header. An empty header is `application/json`, the first type every resource
/// serves.
pub(crate) fn body_media_type(header: &str) -> Option<String> {
    if header.is_empty() {
        return Some("application/json".to_owned());
    }
    parse_media_type(header)
}

/// The patch type of a PATCH's `Content-Type`: the header up to its first `;`, unless the `;`
/// leads (`patch.go`, "Remove "; charset=" if included in header").
pub(crate) fn patch_media_type(header: &str) -> &str {
    match header.find(';') {
        Some(i) if i > 0 => &header[..i],
        _ => header,
    }
}

/// go-restful's `Route.matchesContentType` for a PATCH route consuming `consumed`: some
/// `,`-separated entry, cut at `;` and stripped of spaces, is one of them verbatim; a missing
/// header is `application/octet-stream`.
pub(crate) fn routed_patch_type(header: &str, consumed: &[&str]) -> bool {
    let header = if header.is_empty() {
        "application/octet-stream"
    } else {
        header
    };
    header.split(',').any(|entry| {
        let media = entry
            .split(';')
            .next()
            .unwrap_or_default()
            .trim_matches(' ');
        consumed.contains(&media)
    })
}

/// Go's `mime.ParseMediaType`, keeping only whether it fails and the media type.
fn parse_media_type(header: &str) -> Option<String> {
    let (base, mut rest) = header.split_at(header.find(';').unwrap_or(header.len()));
    let media = base.to_lowercase().trim().to_owned();
    check_media_type(&media)?;
    let mut seen: Vec<(String, String)> = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let Some((key, value, after)) = media_param(rest) else {
            // A lone trailing `;` is forgiven; anything else unparsable fails.
            if rest.trim() == ";" {
                break;
            }
            return None;
        };
        // Repeats are tolerated only when they agree.
        match seen.iter().find(|(k, _)| *k == key) {
            Some((_, v)) if *v != value => return None,
            Some(_) => {}
            None => seen.push((key, value)),
        }
        rest = after;
    }
    Some(media)
}

/// `checkMediaTypeDisposition`: `token` or `token/token`, nothing else.
fn check_media_type(media: &str) -> Option<()> {
    let (main, rest) = token(media);
    if main.is_empty() {
        return None;
    }
    if rest.is_empty() {
        return Some(());
    }
    let (sub, rest) = token(rest.strip_prefix('/')?);
    (!sub.is_empty() && rest.is_empty()).then_some(())
}

/// `consumeMediaParam`: `; key = value`, with the key lower-cased; `None` when `s` does not
/// start with one.
fn media_param(s: &str) -> Option<(String, String, &str)> {
    let rest = s.trim_start().strip_prefix(';')?.trim_start();
    let (key, rest) = token(rest);
    if key.is_empty() {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let (value, after) = param_value(rest)?;
    Some((key.to_lowercase(), value, after))
}

/// `consumeValue`: a token or a quoted string; `None` for an empty token or an unclosed quote.
fn param_value(s: &str) -> Option<(String, &str)> {
    let Some(quoted) = s.strip_prefix('"') else {
        let (value, rest) = token(s);
        return (!value.is_empty()).then(|| (value.to_owned(), rest));
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &quoted[i + 1..])),
            // Go keeps a backslash literally unless it escapes a special character.
            '\\' if quoted[i + 1..].starts_with(is_tspecial) => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            '\r' | '\n' => return None,
            _ => value.push(c),
        }
    }
    None
}

/// `consumeToken`: the longest prefix of token characters, and the rest.
fn token(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !is_token_char(c)).unwrap_or(s.len());
    s.split_at(end)
}

/// RFC 1521 token characters: printable ASCII other than space and the specials.
fn is_token_char(c: char) -> bool {
    c.is_ascii() && c > ' ' && c != '\x7f' && !is_tspecial(c)
}

fn is_tspecial(c: char) -> bool {
    "()<>@,;:\\\"/[]?=".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    // kube-apiserver 1.36 took the rows with a served type (JSON, YAML) for a ConfigMap POST and
    // answered 415 to every other row.
    #[test]
    fn body_media_types_as_kube_apiserver_negotiates_them() {
        let rows: &[(&str, Option<&str>)] = &[
            ("", Some("application/json")),
            ("application/json; charset=utf-8", Some("application/json")),
            ("APPLICATION/JSON", Some("application/json")),
            ("application/yaml;", Some("application/yaml")),
            (";;;", None),
            (";", None),
            ("application/json;;;", None),
            ("application/json;=", None),
            ("application/json ;x", None),
            ("application/json; a=b; a=c", None),
            ("*/*", Some("*/*")),
            ("application/*", Some("application/*")),
        ];
        for (header, want) in rows {
            assert_eq!(
                body_media_type(header).as_deref(),
                *want,
                "Content-Type {header:?}"
            );
        }
    }

    // Go's mime.ParseMediaType: agreeing repeats, quoted values with escapes, unclosed quotes.
    #[test]
    fn parameters_follow_go_mime_parsing() {
        assert!(parse_media_type("text/plain; a=b; A=b").is_some());
        assert!(parse_media_type(r#"text/plain; a="x\"y""#).is_some());
        assert!(parse_media_type(r#"text/plain; a="x"#).is_none());
        assert!(parse_media_type("text/plain; a=\"x\ny\"").is_none());
        assert!(parse_media_type("text/plain; a=").is_none());
        assert!(parse_media_type("text/plain/x").is_none());
        assert!(parse_media_type("text/").is_none());
        assert!(parse_media_type("t\u{e9}xt/plain").is_none());
        assert_eq!(
            parse_media_type(" Text/Plain ").as_deref(),
            Some("text/plain")
        );
    }

    #[test]
    fn the_router_matches_patch_types_verbatim_after_cutting_parameters() {
        let consumed = ["application/merge-patch+json"];
        assert!(routed_patch_type(
            " application/merge-patch+json ;x",
            &consumed
        ));
        assert!(routed_patch_type(
            "text/plain, application/merge-patch+json",
            &consumed
        ));
        assert!(!routed_patch_type(
            "APPLICATION/MERGE-PATCH+JSON",
            &consumed
        ));
        assert!(!routed_patch_type(
            "\tapplication/merge-patch+json",
            &consumed
        ));
        assert!(!routed_patch_type("", &consumed));
    }

    #[test]
    fn patch_types_cut_at_the_first_non_leading_semicolon() {
        assert_eq!(
            patch_media_type("application/merge-patch+json; charset=utf-8"),
            "application/merge-patch+json"
        );
        assert_eq!(
            patch_media_type("application/merge-patch+json ;x"),
            "application/merge-patch+json "
        );
        assert_eq!(patch_media_type(";application/json"), ";application/json");
        assert_eq!(patch_media_type(""), "");
    }
}
