//! Deep objects in scenarios (issue 36): thousands of nested levels are neither writable nor
//! readable in a YAML file, nor readable by serde_json (128 levels).
//!
//! - Requests: `${nest:N:LEAF}` in a `rawBody` stands for `N` objects, each the only field `a`
//!   of the one above, around `LEAF` (a JSON scalar: `"x"`, `1`, `null`):
//!   `${nest:2:"x"}` is `{"a":{"a":"x"}}`. `${schema:N:TYPE}` is the schema such an object
//!   matches: `N` objects, each with the one property `a`, around a field of type `TYPE`;
//!   `${schema:1:string}` is `{"type":"object","properties":{"a":{"type":"string"}}}`.
//! - Answers: a response body or watch event too deep for serde_json is read with every
//!   container that opens [`FOLD_AT`] levels down and nests at least [`FOLD_MIN`] levels of its
//!   own replaced by a string naming it: its first bytes, its depth, its length and a digest
//!   (`{"a":{"a":{"a":… (5995 levels, 29975 bytes, sha256 0a1b2c3d4e5f6a7b)`). Recording and
//!   replay read answers alike, so both sides must send the same bytes there. Folding starts
//!   below what the normaliser rewrites (times, uids and versions sit higher in an object or
//!   event), so what is folded needs no normalising.
//! - Long strings: a string of a normalised answer longer than [`LONG_STRING`] bytes (a
//!   message quoting a deep object whole, as a JSON patch's 422 does) is replaced by its first
//!   [`LONG_HEAD`] and last [`LONG_TAIL`] characters around its length and a digest
//!   (`" \"\" is invalid: patch: …(175606 bytes, sha256 0a1b2c3d4e5f6a7b)…json parse error:
//!   invalid character '{' exceeded max depth"`). It is folded after normalising (uids,
//!   resourceVersions, times and namespaces inside it are rewritten first), so the digest
//!   compares the normalised text; the longest string recorded whole is well below the bound.

use sha2::{Digest, Sha256};

/// The depth at which containers are folded: below every time, uid and version of a list's
/// items (the `fieldsV1` of an item's managedFields entry opens at 7).
pub const FOLD_AT: usize = 8;
/// The least nesting of its own a container needs to be folded.
pub const FOLD_MIN: usize = 64;
/// The deepest `${nest:N:...}`: past Go's decoder limit, for the bodies it refuses.
const MAX_NEST: usize = 20_000;
/// How much of a folded container its summary shows.
const SHOWN: usize = 24;
/// The longest string of an answer compared as it is; longer ones are folded.
pub const LONG_STRING: usize = 64 << 10;
/// How many characters a folded string's summary shows of its start.
pub const LONG_HEAD: usize = 96;
/// How many characters a folded string's summary shows of its end (where an error message
/// that quotes an object says what is wrong with it).
pub const LONG_TAIL: usize = 160;

/// `${nest:N:LEAF}`: the nested objects; `None` for a reference of another form, `Err` for a
/// malformed one.
pub fn nesting(name: &str) -> Option<Result<String, String>> {
    let rest = name.strip_prefix("nest:")?;
    let bad = || {
        format!(
            "`${{{name}}}`: nesting is `${{nest:N:LEAF}}`, N up to {MAX_NEST} and LEAF a JSON \
             string, number, boolean or null"
        )
    };
    let Some((depth, leaf)) = rest.split_once(':') else {
        return Some(Err(bad()));
    };
    let leaf_ok = serde_json::from_str::<serde_json::Value>(leaf)
        .is_ok_and(|v| !v.is_object() && !v.is_array());
    Some(match depth.parse::<usize>() {
        Ok(n) if n <= MAX_NEST && leaf_ok => {
            Ok(format!("{}{leaf}{}", r#"{"a":"#.repeat(n), "}".repeat(n)))
        }
        _ => Err(bad()),
    })
}

/// `${schema:N:TYPE}`: the nested schemas; `None` for a reference of another form, `Err` for a
/// malformed one.
pub fn schema_nesting(name: &str) -> Option<Result<String, String>> {
    let rest = name.strip_prefix("schema:")?;
    let bad = || {
        format!(
            "`${{{name}}}`: a nested schema is `${{schema:N:TYPE}}`, N up to {MAX_NEST} and TYPE \
             a JSON schema type (`string`, `integer`, ...)"
        )
    };
    let Some((depth, ty)) = rest.split_once(':') else {
        return Some(Err(bad()));
    };
    let ty_ok = !ty.is_empty() && ty.bytes().all(|b| b.is_ascii_lowercase());
    Some(match depth.parse::<usize>() {
        Ok(n) if n <= MAX_NEST && ty_ok => Ok(format!(
            r#"{}{{"type":"{ty}"}}{}"#,
            r#"{"type":"object","properties":{"a":"#.repeat(n),
            "}}".repeat(n)
        )),
        _ => Err(bad()),
    })
}

/// `text` with its deep containers folded (see the module); `None` when none is folded.
pub fn fold(text: &[u8]) -> Option<Vec<u8>> {
    // The containers to fold: their first and last byte.
    let mut spans = Vec::new();
    let (mut depth, mut open_at, mut deepest) = (0usize, None, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if depth == FOLD_AT {
                        open_at = Some(i);
                        deepest = depth;
                    }
                    deepest = deepest.max(depth);
                }
                b'}' | b']' => {
                    if depth == FOLD_AT
                        && let Some(start) = open_at.take()
                        && deepest + 1 - FOLD_AT >= FOLD_MIN
                    {
                        spans.push((start, i, deepest + 1 - FOLD_AT));
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
        }
        i += 1;
    }
    if spans.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, levels) in spans {
        out.extend_from_slice(&text[copied..start]);
        let folded = &text[start..=end];
        let digest = Sha256::digest(folded);
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let shown = String::from_utf8_lossy(&folded[..SHOWN.min(folded.len())]);
        let summary = format!(
            "{shown}… ({levels} levels, {} bytes, sha256 {hex})",
            folded.len()
        );
        out.extend_from_slice(serde_json::Value::String(summary).to_string().as_bytes());
        copied = end + 1;
    }
    out.extend_from_slice(&text[copied..]);
    Some(out)
}

/// A response or event read as JSON, folded first when serde_json cannot read it as it is.
pub fn read(text: &[u8]) -> serde_json::Result<serde_json::Value> {
    serde_json::from_slice(text).or_else(|e| match fold(text) {
        Some(folded) => serde_json::from_slice(&folded),
        None => Err(e),
    })
}

/// Folds, in place, every string of `value` (keys too) longer than [`LONG_STRING`] bytes into
/// its summary (see the module); the rest stays as it is.
pub fn fold_long_strings(value: &mut serde_json::Value) {
    use serde_json::Value;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(text) => {
                if let Some(summary) = long_string_summary(text) {
                    *text = summary;
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Object(map) => {
                let long: Vec<String> = map
                    .keys()
                    .filter(|k| k.len() > LONG_STRING)
                    .cloned()
                    .collect();
                for key in long {
                    if let (Some(v), Some(summary)) = (map.remove(&key), long_string_summary(&key))
                    {
                        map.insert(summary, v);
                    }
                }
                pending.extend(map.values_mut());
            }
            _ => {}
        }
    }
}

/// The summary of `text` when it is longer than [`LONG_STRING`] bytes.
fn long_string_summary(text: &str) -> Option<String> {
    if text.len() <= LONG_STRING {
        return None;
    }
    let head: String = text.chars().take(LONG_HEAD).collect();
    let tail_start = text
        .char_indices()
        .rev()
        .nth(LONG_TAIL - 1)
        .map_or(0, |(i, _)| i);
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Some(format!(
        "{head}…({} bytes, sha256 {hex})…{}",
        text.len(),
        &text[tail_start..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_writes_objects_around_a_scalar() {
        assert_eq!(
            nesting(r#"nest:2:"x""#).unwrap().unwrap(),
            r#"{"a":{"a":"x"}}"#
        );
        assert_eq!(nesting("nest:0:1").unwrap().unwrap(), "1");
        assert!(nesting("pad:3").is_none());
        for bad in [
            "nest:2",
            "nest:x:1",
            "nest:2:{",
            "nest:2:[]",
            "nest:99999:1",
        ] {
            assert!(nesting(bad).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn schema_nesting_writes_the_schema_of_a_nesting() {
        assert_eq!(
            schema_nesting("schema:2:string").unwrap().unwrap(),
            r#"{"type":"object","properties":{"a":{"type":"object","properties":{"a":{"type":"string"}}}}}"#
        );
        assert_eq!(
            schema_nesting("schema:0:integer").unwrap().unwrap(),
            r#"{"type":"integer"}"#
        );
        assert!(schema_nesting("nest:2:1").is_none());
        for bad in [
            "schema:2",
            "schema:x:string",
            "schema:2:",
            "schema:2:\"",
            "schema:99999:string",
        ] {
            assert!(schema_nesting(bad).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn deep_containers_fold_and_shallow_ones_stay() {
        let deep = nesting(r#"nest:100:"x""#).unwrap().unwrap();
        let text = format!(r#"{{"spec":{deep},"s":"{{[{{","n":[1]}}"#);
        let folded = String::from_utf8(fold(text.as_bytes()).unwrap()).unwrap();
        let value: serde_json::Value = serde_json::from_str(&folded).unwrap();
        let at = &value["spec"]["a"]["a"]["a"]["a"]["a"]["a"];
        let summary = at.as_str().unwrap();
        assert!(
            summary.starts_with(r#"{"a":{"a":{"a":{"a":{"a"…"#),
            "{summary}"
        );
        assert!(summary.contains("(94 levels, "), "{summary}");
        assert_eq!(value["s"], "{[{");
        assert!(fold(br#"{"a":[[[[[[[[1]]]]]]]]}"#).is_none());
        assert!(read(text.as_bytes()).is_ok());
    }

    #[test]
    fn long_strings_fold_to_their_ends_and_a_digest() {
        let long = format!("start{}end", "é".repeat(LONG_STRING));
        let mut value = serde_json::json!({
            "message": long,
            "short": "x".repeat(LONG_STRING),
            "items": [long.clone()],
        });
        fold_long_strings(&mut value);
        let folded = value["message"].as_str().unwrap();
        assert!(folded.starts_with("startéé"), "{folded}");
        assert!(folded.ends_with("éééend"), "{folded}");
        assert!(
            folded.contains(&format!("…({} bytes, sha256 ", long.len())),
            "{folded}"
        );
        assert_eq!(
            folded.chars().count(),
            LONG_HEAD
                + LONG_TAIL
                + format!("…({} bytes, sha256 0123456789abcdef)…", long.len())
                    .chars()
                    .count()
        );
        assert_eq!(value["items"][0], value["message"]);
        // Exactly the bound: compared whole.
        assert_eq!(value["short"].as_str().map(str::len), Some(LONG_STRING));
        // One byte changed anywhere changes the digest.
        let mut other = serde_json::json!(long.replacen('é', "e", 1));
        fold_long_strings(&mut other);
        assert_ne!(other, value["message"]);
        assert_eq!(long_string_summary("short"), None);
    }
}
