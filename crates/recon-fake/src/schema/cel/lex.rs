//! The tokens of CEL source (cel-go's lexer): identifiers, literals with their escapes, and
//! punctuation, each at its byte offset.

use super::syntax::{Issue, Lit};
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Lit(Lit),
    /// A number literal whose sign a preceding `-` may still take (`-9223372036854775808`).
    Int(String, u32),
    Float(f64),
    Punct(&'static str),
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) pos: usize,
}

const PUNCTS: [&str; 25] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}", "=",
];

pub(super) fn lex(source: &str) -> Result<Vec<Token>, Issue> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if source[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        // String and bytes literals, with their r/b prefixes.
        let prefix_len = string_prefix(&source[i..]);
        if let Some(plen) = prefix_len {
            let prefix = source[i..i + plen].to_ascii_lowercase();
            let (lit, len) = lex_string(
                source,
                i + plen,
                prefix.contains('r'),
                prefix.contains('b'),
                start,
            )?;
            let tok = if prefix.contains('b') {
                Tok::Lit(Lit::Bytes(lit))
            } else {
                Tok::Lit(Lit::String(String::from_utf8(lit).map_err(|_| Issue {
                    pos: start,
                    message: "Syntax error: invalid string literal".to_owned(),
                })?))
            };
            out.push(Token { tok, pos: start });
            i = i + plen + len;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &source[start..i];
            let tok = match word {
                "true" => Tok::Lit(Lit::Bool(true)),
                "false" => Tok::Lit(Lit::Bool(false)),
                "null" => Tok::Lit(Lit::Null),
                "in" => Tok::Punct("in"),
                _ => Tok::Ident(word.to_owned()),
            };
            out.push(Token { tok, pos: start });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, len) = lex_number(&source[i..]).ok_or_else(|| Issue {
                pos: start,
                message: "Syntax error: invalid number".to_owned(),
            })?;
            out.push(Token { tok, pos: start });
            i += len;
            continue;
        }
        let Some(p) = PUNCTS.iter().find(|p| source[i..].starts_with(**p)) else {
            return Err(Issue {
                pos: start,
                message: "Syntax error: token recognition error".to_owned(),
            });
        };
        out.push(Token {
            tok: Tok::Punct(p),
            pos: start,
        });
        i += p.len();
    }
    Ok(out)
}

/// The length of a string literal's prefix and opening quote position, if one starts here.
fn string_prefix(rest: &str) -> Option<usize> {
    let b = rest.as_bytes();
    let mut n = 0;
    while n < 2
        && b.get(n)
            .is_some_and(|c| matches!(c, b'r' | b'R' | b'b' | b'B'))
    {
        n += 1;
    }
    if matches!(b.get(n), Some(b'"' | b'\'')) {
        Some(n)
    } else {
        None
    }
}

/// A quoted literal at `at` (the opening quote): its bytes and its length.
fn lex_string(
    source: &str,
    at: usize,
    raw: bool,
    bytes: bool,
    start: usize,
) -> Result<(Vec<u8>, usize), Issue> {
    let bad = |message: &str| Issue {
        pos: start,
        message: format!("Syntax error: {message}"),
    };
    let rest = &source[at..];
    let quote = &rest[..1];
    let triple = rest.starts_with(&quote.repeat(3));
    let delim = if triple {
        quote.repeat(3)
    } else {
        quote.to_owned()
    };
    let body_start = delim.len();
    let mut out = Vec::new();
    let mut chars = rest[body_start..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if rest[body_start + i..].starts_with(&delim) {
            return Ok((out, body_start + i + delim.len()));
        }
        if !triple && (c == '\n' || c == '\r') {
            return Err(bad("unterminated string"));
        }
        if c != '\\' || raw {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err(bad("unterminated string"));
        };
        match e {
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(11),
            '\\' | '\'' | '"' | '`' | '?' => out.push(e as u8),
            'x' | 'X' | 'u' | 'U' => {
                let n = match e {
                    'x' | 'X' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = chars
                        .next()
                        .and_then(|(_, d)| d.to_digit(16))
                        .ok_or_else(|| bad("invalid escape"))?;
                    v = v * 16 + d;
                }
                if bytes && matches!(e, 'x' | 'X') {
                    out.push(u8::try_from(v).unwrap_or(0));
                } else {
                    let ch = char::from_u32(v).ok_or_else(|| bad("invalid unicode code point"))?;
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            '0'..='3' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let d = chars
                        .next()
                        .and_then(|(_, d)| d.to_digit(8))
                        .ok_or_else(|| bad("invalid escape"))?;
                    v = v * 8 + d;
                }
                // A byte in a bytes literal, a code point in a string.
                if bytes {
                    out.push(u8::try_from(v).unwrap_or(0));
                } else {
                    let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            _ => return Err(bad("invalid escape")),
        }
    }
    Err(bad("unterminated string"))
}

/// A number literal at the start of `rest`, and its length.
fn lex_number(rest: &str) -> Option<(Tok, usize)> {
    let b = rest.as_bytes();
    if rest.starts_with("0x") || rest.starts_with("0X") {
        let mut n = 2;
        while b.get(n).is_some_and(u8::is_ascii_hexdigit) {
            n += 1;
        }
        let digits = rest.get(2..n)?.to_owned();
        if matches!(b.get(n), Some(b'u' | b'U')) {
            let v = u64::from_str_radix(&digits, 16).ok()?;
            return Some((Tok::Lit(Lit::Uint(v)), n + 1));
        }
        return Some((Tok::Int(digits, 16), n));
    }
    let mut n = 0;
    while b.get(n).is_some_and(u8::is_ascii_digit) {
        n += 1;
    }
    let mut float = false;
    if b.get(n) == Some(&b'.') && b.get(n + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    if matches!(b.get(n), Some(b'e' | b'E')) {
        let mut m = n + 1;
        if matches!(b.get(m), Some(b'+' | b'-')) {
            m += 1;
        }
        if b.get(m).is_some_and(u8::is_ascii_digit) {
            float = true;
            n = m;
            while b.get(n).is_some_and(u8::is_ascii_digit) {
                n += 1;
            }
        }
    }
    let text = rest.get(..n)?;
    if float {
        return Some((Tok::Float(text.parse().ok()?), n));
    }
    if matches!(b.get(n), Some(b'u' | b'U')) {
        return Some((Tok::Lit(Lit::Uint(text.parse().ok()?)), n + 1));
    }
    Some((Tok::Int(text.to_owned(), 10), n))
}
