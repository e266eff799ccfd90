//! A one-pass reader of JSON text into a [`Value`], for the text the server reads most: its
//! own stored bodies and well-formed requests.

use super::{Array, Map, Value};
use crate::scan::find_first;

/// The value `serde_json::from_slice::<Value>` reads from `text`, read in one pass without
/// serde's visitors; `None` where this reader leaves the text to serde_json, whose errors
/// callers report: any syntax error, invalid UTF-8, a number other than an integer that fits
/// 64 bits (fractions, exponents, `-0`), a lone surrogate escape, and nesting past
/// [`READ_DEPTH`] levels (serde_json refuses past 127, and callers that read deeper have their
/// own rules).
///
/// As serde_json, of a key repeated in one object the last value stays.
///
/// ```
/// use recon_apimachinery::json::{self, Value};
///
/// let text = br#"{"b": [1, -2, "x\n"], "a": {"a": null}, "a": true}"#;
/// let read = json::read(text).unwrap();
/// assert_eq!(read, serde_json::from_slice::<Value>(text).unwrap());
/// assert_eq!(json::read(b"[1.5]"), None);
/// ```
pub fn read(text: &[u8]) -> Option<Value> {
    read_noting_repeats(text).map(|(value, _)| value)
}

/// [`read`], and whether any object in the text repeats a key.
pub fn read_noting_repeats(text: &[u8]) -> Option<(Value, bool)> {
    // Checked once here, the text's strings are sliced from it without checking each.
    let text = std::str::from_utf8(text).ok()?;
    let mut reader = Reader {
        text,
        at: 0,
        repeats: false,
    };
    let value = reader.document()?;
    Some((value, reader.repeats))
}

/// How deep [`read`] nests arrays and objects.
pub const READ_DEPTH: usize = 100;

/// A container being read: where its items or fields start on the reader's stack of them, and
/// an object's key whose value comes next. Items and fields wait on two stacks shared by every
/// container, so that each container's own vector is allocated once, at its size.
enum Open {
    Array(usize),
    Object(usize, String),
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    repeats: bool,
}

impl Reader<'_> {
    fn document(&mut self) -> Option<Value> {
        let mut open: Vec<Open> = Vec::new();
        let mut items: Vec<Value> = Vec::new();
        let mut fields: Vec<(String, Value)> = Vec::new();
        loop {
            // One value: a scalar or an empty container is complete; any other container is
            // opened, and its first value read next.
            self.skip_space();
            let mut value = match self.peek()? {
                b'{' => {
                    self.at += 1;
                    self.skip_space();
                    if self.eat(b'}') {
                        Value::Object(Map::new())
                    } else if open.len() < READ_DEPTH {
                        let key = self.key()?;
                        open.push(Open::Object(fields.len(), key));
                        continue;
                    } else {
                        return None;
                    }
                }
                b'[' => {
                    self.at += 1;
                    self.skip_space();
                    if self.eat(b']') {
                        Value::Array(Array::default())
                    } else if open.len() < READ_DEPTH {
                        open.push(Open::Array(items.len()));
                        continue;
                    } else {
                        return None;
                    }
                }
                b'"' => Value::String(self.string()?),
                b't' => self.literal("true", Value::Bool(true))?,
                b'f' => self.literal("false", Value::Bool(false))?,
                b'n' => self.literal("null", Value::Null)?,
                _ => self.number()?,
            };
            // A complete value goes into the container it is in; every container that ends
            // after it is complete in turn.
            loop {
                self.skip_space();
                let Some(top) = open.last_mut() else {
                    return (self.at == self.text.len()).then_some(value);
                };
                let close = match top {
                    Open::Array(_) => {
                        items.push(value);
                        b']'
                    }
                    Open::Object(_, key) => {
                        fields.push((std::mem::take(key), value));
                        b'}'
                    }
                };
                if self.eat(b',') {
                    if let Open::Object(_, key) = top {
                        self.skip_space();
                        *key = self.key()?;
                    }
                    break;
                }
                if !self.eat(close) {
                    return None;
                }
                value = match open.pop()? {
                    Open::Array(start) => Value::Array(Array(items.drain(start..).collect())),
                    Open::Object(start, _) => {
                        let read = fields.len() - start;
                        let map = Map::from_unsorted(fields.drain(start..).collect());
                        self.repeats |= map.len() < read;
                        Value::Object(map)
                    }
                };
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
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
    fn key(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let key = self.string()?;
        self.skip_space();
        self.eat(b':').then_some(key)
    }

    /// The string whose opening quote is under the cursor.
    fn string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        let mut end = start;
        // Up to the closing quote or the first escape; a control character is not JSON.
        end = find_first(bytes, end, string_end);
        match *bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                return Some(self.text[start..end].to_owned());
            }
            b'\\' => {}
            _ => return None,
        }
        let mut out = String::from(&self.text[start..end]);
        let mut at = end;
        loop {
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(out);
                }
                b'\\' => {
                    let escaped = match *bytes.get(at + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let (c, len) = self.unicode_escape(at)?;
                            out.push(c);
                            at += len;
                            continue;
                        }
                        _ => return None,
                    };
                    out.push(escaped);
                    at += 2;
                }
                0..=0x1f => return None,
                _ => {
                    // Up to the next quote or escape, in one piece: the text is UTF-8, and
                    // both are ASCII, so the piece ends on a character boundary.
                    let run = find_first(bytes, at, string_end);
                    out.push_str(&self.text[at..run]);
                    at = run;
                }
            }
        }
    }

    /// The character of the `\u` escape at `at` (a surrogate pair takes two) and its length.
    fn unicode_escape(&self, at: usize) -> Option<(char, usize)> {
        let hex = |from: usize| {
            let digits = self.text.get(from..from + 4)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            u32::from_str_radix(digits, 16).ok()
        };
        let first = hex(at + 2)?;
        match first {
            0xD800..=0xDBFF => {
                if self.text.get(at + 6..at + 8)? != "\\u" {
                    return None;
                }
                let second = hex(at + 8)?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                Some((char::from_u32(c)?, 12))
            }
            0xDC00..=0xDFFF => None,
            _ => Some((char::from_u32(first)?, 6)),
        }
    }

    /// An integer that fits 64 bits, as serde_json reads it: `u64` when not negative, else
    /// `i64`.
    fn number(&mut self) -> Option<Value> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let negative = bytes[start] == b'-';
        let digits = start + usize::from(negative);
        let end = bytes[digits..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map_or(bytes.len(), |n| digits + n);
        let text = &self.text[digits..end];
        let leading_zero = text.len() > 1 && text.starts_with('0');
        if text.is_empty()
            || leading_zero
            || matches!(bytes.get(end), Some(b'.' | b'e' | b'E'))
            || (negative && text == "0")
        {
            return None;
        }
        let magnitude: u64 = text.parse().ok()?;
        self.at = end;
        let number = if negative {
            // `-9223372036854775808` is the one magnitude past `i64::MAX` that fits.
            let value = 0i64.checked_sub_unsigned(magnitude)?;
            serde_json::Number::from(value)
        } else {
            serde_json::Number::from(magnitude)
        };
        Some(Value::Number(number))
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            value
        })
    }
}

/// The bytes a string's plain run ends at: its closing quote, an escape, or a control
/// character (which JSON does not allow in a string).
fn string_end(b: u8) -> bool {
    // `|`, not `||`: no branch, so that a chunk is tested in vector instructions.
    (b == b'"') | (b == b'\\') | (b < 0x20)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::tests::any_value;

    /// What serde_json reads, or `None` where it refuses.
    fn serde_reads(text: &[u8]) -> Option<Value> {
        // serde_json stops at 128 levels: those texts are compared as they are read.
        serde_json::from_slice::<Value>(text).ok()
    }

    proptest! {
        // Whatever it reads, it reads as serde_json does: compact, pretty or broken text.
        #[test]
        fn reads_as_serde_json_does(value in any_value(), cut in any::<usize>(), byte in any::<u8>()) {
            for text in [value.to_string(), format!("{value:#}"), format!(" {value}\n")] {
                let text = text.into_bytes();
                let whole = read(&text);
                prop_assert!(whole.is_none() || whole == serde_reads(&text), "{}", String::from_utf8_lossy(&text));
                if !value.to_string().contains(['.', 'e']) {
                    prop_assert_eq!(whole, serde_reads(&text));
                }
                let mut broken = text.clone();
                let at = cut % broken.len();
                broken[at] = byte;
                let changed = read(&broken);
                prop_assert!(changed.is_none() || changed == serde_reads(&broken), "{:?}", broken);
                let truncated = read(&text[..at]);
                prop_assert!(truncated.is_none() || truncated == serde_reads(&text[..at]));
            }
        }
    }

    // Escapes, numbers and literals at their edges.
    #[test]
    fn edges_read_as_serde_json_reads_them() {
        let texts: &[&str] = &[
            r#""\u00e9\ud83d\ude00\/\b\f""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83dx""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            "\"\u{1}\"",
            "\"\u{7f}\"",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "-0",
            "0",
            "01",
            "-",
            "1.0",
            "1e3",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:1}",
            "[] x",
            "tru",
            "nul",
            "",
            "  ",
        ];
        for text in texts {
            let read = read(text.as_bytes());
            let serde = serde_reads(text.as_bytes());
            assert!(
                read.is_none() || read == serde,
                "{text}: {read:?} {serde:?}"
            );
        }
        assert_eq!(
            read(b"18446744073709551615"),
            serde_reads(b"18446744073709551615")
        );
        assert_eq!(
            read(b"-9223372036854775808"),
            serde_reads(b"-9223372036854775808")
        );
        assert_eq!(
            read(br#""\u00e9\ud83d\ude00\/\b\f""#),
            Some(Value::String("é😀/\u{8}\u{c}".to_owned()))
        );
        assert_eq!(read(b"\xff"), None);
        let repeats = |text: &str| read_noting_repeats(text.as_bytes()).map(|(_, r)| r);
        assert_eq!(repeats(r#"{"a":1,"b":{"c":1,"c":2}}"#), Some(true));
        assert_eq!(repeats(r#"{"a":1,"b":{"c":1,"d":[{"c":2}]}}"#), Some(false));
    }

    // Down to its depth and no deeper, where serde_json (and, past it, callers) read.
    #[test]
    fn a_text_deeper_than_it_reads_is_left_to_serde_json() {
        let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let deepest = nested(READ_DEPTH);
        assert_eq!(read(deepest.as_bytes()), serde_reads(deepest.as_bytes()));
        assert!(read(deepest.as_bytes()).is_some());
        assert_eq!(read(nested(READ_DEPTH + 1).as_bytes()), None);
        assert_eq!(read(nested(100_000).as_bytes()), None);
    }
}
