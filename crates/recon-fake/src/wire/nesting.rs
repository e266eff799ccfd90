//! Objects nested deep: how deep the real server reads, and how the in-memory server reads,
//! writes, walks and drops them without overflowing its stack.
//!
//! kube-apiserver decodes every JSON body and every stored object with Go's scanner, which
//! refuses the 10001st nested array or object (`maxNestingDepth` of `encoding/json` and of
//! `sigs.k8s.io/json`): a request body deeper than that is refused when decoded, and an object
//! stored deeper than that (the write's own `managedFields` mirror its deepest field a few
//! levels further down) is written, but every later read of it fails with the decoder's
//! `invalid character '{' exceeded max depth`. Nothing shallower is refused.
//!
//! The server's values ([`Value`]) drop, copy, compare and print with a bounded stack at any
//! depth, and every walk over an object (merge patches, JSON patches, strategic merge, field
//! sets, server-side apply, pruning and defaulting, the Go-ordered encoder, the text quoted in
//! errors) keeps its own list of what is left to do. A request on an object as deep as Go
//! reads is served on a test thread's own stack. serde_json reads at most 127 levels by
//! recursion, so:
//! - bodies and stored objects too deep for serde_json are read by [`parse`], which keeps its
//!   open containers in a `Vec`, and deep unstructured objects are written by
//!   [`write_sorted`] the same way;
//! - depth is measured ([`value_depth`], [`text_depth`]) without recursion.

use recon_apimachinery::json::{Map, Value};

/// Go's `maxNestingDepth`: the deepest nesting of arrays and objects kube-apiserver decodes.
pub(crate) const GO_MAX_DEPTH: usize = 10_000;

/// The nesting up to which serde's recursive serialiser writes an unstructured object; deeper
/// ones are written by [`write_sorted`].
pub(crate) const SHALLOW: usize = 100;

/// How many arrays and objects nest in `value` along its deepest branch (a scalar is 0, `{}`
/// is 1, `{"a": []}` is 2), as Go's scanner counts them.
pub(crate) fn value_depth(value: &Value) -> usize {
    // Each pending value with the depth of the container it is in.
    let is_container = |v: &&Value| matches!(v, Value::Array(_) | Value::Object(_));
    let mut deepest = 0;
    let mut pending = vec![(value, 0)];
    while let Some((value, above)) = pending.pop() {
        let depth = above + 1;
        // Only containers go on the list: a scalar adds no level.
        match value {
            Value::Array(items) => {
                pending.extend(
                    items
                        .iter()
                        .filter(is_container)
                        .map(|child| (child, depth)),
                );
            }
            Value::Object(fields) => {
                pending.extend(
                    fields
                        .values()
                        .filter(is_container)
                        .map(|child| (child, depth)),
                );
            }
            _ => continue,
        }
        deepest = deepest.max(depth);
    }
    deepest
}

/// [`value_depth`] of an object: 1 and the depth of its deepest field.
pub(crate) fn object_depth(obj: &Map) -> usize {
    1 + obj.values().map(value_depth).max().unwrap_or(0)
}

/// The deepest nesting of brackets in a JSON text, outside strings; for text that is not JSON,
/// some count no smaller than the nesting of the JSON it starts with.
pub(crate) fn text_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut bytes = text.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                // To the closing quote, over escaped characters.
                while let Some(&c) = bytes.next() {
                    match c {
                        b'\\' => {
                            bytes.next();
                        }
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    deepest
}

/// Why an object seeded directly into the store is refused when it nests deeper than Go's
/// decoder reads (no request path: a request making one is answered as the real server
/// answers it, e.g. a JSON patch's 422 in `handlers::patch`).
pub(crate) fn too_deep() -> super::error::ApiError {
    super::error::ApiError::internal(&format!(
        "the object nests arrays and objects deeper than {GO_MAX_DEPTH} levels, more than kube-apiserver's decoder reads"
    ))
}

/// Whether serde_json refused a document only for nesting deeper than it reads.
pub(crate) fn is_recursion_limit(error: &serde_json::Error) -> bool {
    error.is_syntax() && error.to_string().starts_with("recursion limit exceeded")
}

/// A JSON document read as serde_json reads a [`Value`] (repeated keys: the last wins), without
/// recursion and at any depth, and whether any object in it repeats a key. Strings and numbers
/// are read by serde_json itself, so they are what it would make of them.
pub(crate) fn parse(text: &[u8]) -> serde_json::Result<(Value, bool)> {
    let mut reader = Reader {
        text,
        at: 0,
        repeats: false,
        repeated: None,
    };
    let value = reader.document()?;
    Ok((value, reader.repeats))
}

/// The paths of the keys `text` repeats in one object, in document order (`data.k`,
/// `spec.ports[0].port`), read as [`parse`] reads: without recursion, at any depth.
pub(crate) fn repeated_keys(text: &[u8]) -> serde_json::Result<Vec<String>> {
    let mut reader = Reader {
        text,
        at: 0,
        repeats: false,
        repeated: Some(Vec::new()),
    };
    reader.document()?;
    Ok(reader.repeated.unwrap_or_default())
}

/// [`parse`]'s state.
struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    repeats: bool,
    /// The paths of the repeated keys, when they are asked for.
    repeated: Option<Vec<String>>,
}

/// A container being read: an array's items so far, or an object's fields so far and the key
/// whose value comes next.
enum Open {
    Array(Vec<Value>),
    Object(Map, String),
}

/// The path of the value the innermost open container reads next: its keys joined by `.`, its
/// indices in brackets, as Go's strict decoder names a field.
fn path_of(open: &[Open]) -> String {
    let mut path = String::new();
    for container in open {
        match container {
            Open::Array(items) => path.push_str(&format!("[{}]", items.len())),
            Open::Object(_, key) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
        }
    }
    path
}

impl Reader<'_> {
    fn document(&mut self) -> serde_json::Result<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // One value: a scalar or an empty container is complete; any other container is
            // opened, and its first value read next.
            self.skip_space();
            let mut value = match self.peek() {
                Some(b'{') => {
                    self.at += 1;
                    self.skip_space();
                    if self.eat(b'}') {
                        Value::Object(Map::new())
                    } else {
                        let key = self.key()?;
                        open.push(Open::Object(Map::new(), key));
                        continue;
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    self.skip_space();
                    if self.eat(b']') {
                        Value::Array(Vec::new().into())
                    } else {
                        open.push(Open::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(_) => return Err(self.error("expected value")),
                None => return Err(self.error("EOF while parsing a value")),
            };
            // A complete value goes into the container it is in; every container that ends
            // after it is complete in turn.
            loop {
                self.skip_space();
                let Some(top) = open.last_mut() else {
                    if self.at < self.text.len() {
                        return Err(self.error("trailing characters"));
                    }
                    return Ok(value);
                };
                let close = match top {
                    Open::Array(items) => {
                        items.push(value);
                        b']'
                    }
                    Open::Object(fields, key) => {
                        fields.insert(std::mem::take(key), value);
                        b'}'
                    }
                };
                if self.eat(b',') {
                    if let Open::Object(fields, key) = top {
                        self.skip_space();
                        *key = self.key()?;
                        if fields.contains_key(key.as_str()) {
                            self.repeats = true;
                            if let Some(paths) = &mut self.repeated {
                                paths.push(path_of(&open));
                            }
                        }
                    }
                    break;
                }
                if !self.eat(close) {
                    return Err(self.error("expected `,` or the end of the container"));
                }
                value = match open.pop() {
                    Some(Open::Array(items)) => Value::Array(items.into()),
                    Some(Open::Object(fields, _)) => Value::Object(fields),
                    None => unreachable!("a container was just found open"),
                };
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        if found {
            self.at += 1;
        }
        found
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// An object's key and the colon after it.
    fn key(&mut self) -> serde_json::Result<String> {
        if self.peek() != Some(b'"') {
            return Err(self.error("key must be a string"));
        }
        let key = self.string()?;
        self.skip_space();
        if !self.eat(b':') {
            return Err(self.error("expected `:`"));
        }
        Ok(key)
    }

    /// The string starting at the quote under the cursor, unescaped by serde_json.
    fn string(&mut self) -> serde_json::Result<String> {
        let start = self.at;
        let mut end = start + 1;
        loop {
            match self.text.get(end) {
                Some(b'"') => break,
                Some(b'\\') => end += 2,
                Some(_) => end += 1,
                None => return Err(self.error("EOF while parsing a string")),
            }
        }
        self.at = end + 1;
        serde_json::from_slice(&self.text[start..=end])
    }

    /// The number under the cursor, read by serde_json.
    fn number(&mut self) -> serde_json::Result<Value> {
        let start = self.at;
        while matches!(
            self.peek(),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.at += 1;
        }
        serde_json::from_slice(&self.text[start..self.at])
    }

    fn literal(&mut self, word: &str, value: Value) -> serde_json::Result<Value> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected ident"))
        }
    }

    fn error(&self, what: &str) -> serde_json::Error {
        <serde_json::Error as serde::de::Error>::custom(format_args!("{what} at byte {}", self.at))
    }
}

/// Writes `obj` as compact JSON with every object's keys in order, leaving out its own fields
/// named in `skip`, without recursion: the bytes serde_json writes for it, at any depth.
pub(crate) fn write_sorted(out: &mut Vec<u8>, obj: &Map, skip: &[&str]) {
    /// A container being written: what is left of it, and whether anything of it was written.
    enum Open<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(std::vec::IntoIter<(&'a String, &'a Value)>, bool),
    }
    out.push(b'{');
    let mut open = vec![Open::Object(fields(obj, skip), false)];
    while let Some(top) = open.last_mut() {
        let next = match top {
            Open::Array(items, any) => items
                .next()
                .map(|v| (None, v, std::mem::replace(any, true))),
            Open::Object(entries, any) => entries
                .next()
                .map(|(k, v)| (Some(k), v, std::mem::replace(any, true))),
        };
        let Some((key, value, comma)) = next else {
            out.push(match open.pop() {
                Some(Open::Array(..)) => b']',
                _ => b'}',
            });
            continue;
        };
        if comma {
            out.push(b',');
        }
        if let Some(key) = key {
            write_scalar(out, key);
            out.push(b':');
        }
        match value {
            Value::Array(items) => {
                out.push(b'[');
                open.push(Open::Array(items.iter(), false));
            }
            Value::Object(map) => {
                out.push(b'{');
                open.push(Open::Object(fields(map, &[]), false));
            }
            scalar => write_scalar(out, scalar),
        }
    }
}

/// An object's fields in key order (a `Map` keeps them so), but those named in `skip`.
fn fields<'a>(map: &'a Map, skip: &[&str]) -> std::vec::IntoIter<(&'a String, &'a Value)> {
    let fields: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .collect();
    fields.into_iter()
}

/// A string, number, boolean or null, as serde_json writes it.
fn write_scalar(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    // Writing to a `Vec` cannot fail, and a scalar has nothing serde_json refuses.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// JSON text nested thousands of levels deep, for the tests of the walks that must not recurse
/// once a level.
#[cfg(test)]
pub(crate) mod deep_text {
    use recon_apimachinery::json::Value;

    /// `levels` objects, each the only field `a` of the one above, around `leaf`.
    pub(crate) fn nested(levels: usize, leaf: &str) -> String {
        format!("{}{leaf}{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
    }

    /// The schema [`nested`] matches: `levels` objects, each with the one property `a`, around
    /// the schema `leaf`.
    pub(crate) fn nested_schema(levels: usize, leaf: &str) -> String {
        format!(
            "{}{leaf}{}",
            r#"{"type":"object","properties":{"a":"#.repeat(levels),
            "}}".repeat(levels)
        )
    }

    /// `text` read without recursion, at any depth (past Go's limit too: a schema as deep as Go
    /// reads a CRD is deeper than Go reads on its own).
    pub(crate) fn read(text: &str) -> Value {
        match super::parse(text.as_bytes()) {
            Ok((value, _)) => value,
            Err(e) => panic!("{e}: {}", &text[..text.len().min(200)]),
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    /// `depth` objects, each the only field `a` of the one above, around a string.
    fn nested_text(depth: usize) -> String {
        format!("{}\"leaf\"{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn depth_counts_objects_and_arrays_along_the_deepest_branch() {
        assert_eq!(value_depth(&json!("scalar")), 0);
        assert_eq!(value_depth(&json!({})), 1);
        assert_eq!(
            value_depth(&json!({"x": 1, "y": [[{"z": {}}]], "w": []})),
            5
        );
        let Value::Object(obj) = json!({"a": [[]]}) else {
            unreachable!()
        };
        assert_eq!(object_depth(&obj), 3);
        assert_eq!(text_depth(br#"{"a": "{[[", "b": [{}], "c": "\"["}"#), 3);
        assert_eq!(text_depth(b""), 0);
    }

    // The iterative reader makes what serde_json makes, repeated keys and all, and refuses
    // what it refuses.
    #[test]
    fn the_reader_reads_as_serde_json_reads() {
        for text in [
            r#"{"a": [1, -2.5e3, 18446744073709551615, true, false, null, "x\u00e9\"\\"], "b": {}}"#,
            r#" [ [ ], { } , "" ] "#,
            r#"{"k": 1, "k": {"z": 2}, "j": [{"q": 0.1}]}"#,
            "0",
            r#""s""#,
        ] {
            let theirs: Value = serde_json::from_str(text).unwrap();
            let (ours, repeats) = parse(text.as_bytes()).unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(repeats, text.contains(r#""k": 1"#), "{text}");
        }
        for bad in [
            "",
            "{",
            "[1,]",
            r#"{"a" 1}"#,
            "{1: 2}",
            "[1] x",
            "tru",
            r#""\x""#,
            "[01]",
            "{\"a\":1,}",
        ] {
            assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
            assert!(parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    // No stack overflow on a test thread's stack, at Go's depth and far past it.
    #[test]
    fn deep_values_are_read_measured_written_and_dropped_without_recursion() {
        for depth in [GO_MAX_DEPTH, 100_000] {
            let text = nested_text(depth);
            let (value, _) = parse(text.as_bytes()).unwrap();
            assert_eq!(value_depth(&value), depth);
            assert_eq!(text_depth(text.as_bytes()), depth);
            let Value::Object(obj) = value else {
                unreachable!()
            };
            let mut out = Vec::new();
            write_sorted(&mut out, &obj, &[]);
            assert_eq!(out, text.as_bytes());
        }
    }

    #[test]
    fn writing_sorts_keys_and_skips_only_top_level_fields() {
        let Value::Object(obj) = json!({"kind": "K", "b": [1, {"kind": 2, "a": null}], "a": "é\n"})
        else {
            unreachable!()
        };
        let mut out = Vec::new();
        write_sorted(&mut out, &obj, &["kind"]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":"é\n","b":[1,{"a":null,"kind":2}]}"#
        );
        let mut empty = Vec::new();
        write_sorted(&mut empty, &Map::new(), &[]);
        assert_eq!(empty, b"{}");
    }

    #[test]
    fn only_serde_json_s_own_limit_is_a_recursion_limit() {
        let deep = serde_json::from_str::<Value>(&nested_text(200)).unwrap_err();
        assert!(is_recursion_limit(&deep));
        let bad = serde_json::from_str::<Value>("[1,]").unwrap_err();
        assert!(!is_recursion_limit(&bad));
    }
}
