//! Go's `regexp` (RE2 with Perl flags), once for the server: [`check`] refuses what Go's parser
//! refuses, with its text (a CRD `pattern` Go cannot compile), and [`compile`] builds a matcher
//! on the `regex` crate that matches as Go's does (Perl classes are ASCII), for CRD patterns and
//! CEL's `matches` and `find`.

use regex::Regex;

/// `regexp/syntax.ErrorCode`s.
const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_PAREN: &str = "missing closing )";
const UNEXPECTED_PAREN: &str = "unexpected )";
const MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const INVALID_ESCAPE: &str = "invalid escape sequence";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const INVALID_CHAR_RANGE: &str = "invalid character class range";
const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";

const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Go's `*syntax.Error` text.
fn error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

/// What sits on top of the parser's stack: whether a repetition has an operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Top {
    /// Nothing, `(` or `|`: a repetition here has no argument.
    Nothing,
    Operand,
}

/// Checks `pattern` as Go's `regexp/syntax.Parse` does with `syntax.Perl`, following its
/// error paths (not the size limits, nor repetitions nested beyond 1000 copies).
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    let whole = pattern;
    let mut t = pattern;
    let mut top = Top::Nothing;
    let mut depth = 0usize;
    // The text from the previous repetition operator on, if the last token was one.
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' if t[1..].starts_with('?') => {
                let (rest, group) = perl_flags(t)?;
                if group {
                    depth += 1;
                    top = Top::Nothing;
                }
                t = rest;
            }
            '(' => {
                depth += 1;
                top = Top::Nothing;
                t = &t[1..];
            }
            '|' => {
                top = Top::Nothing;
                t = &t[1..];
            }
            ')' => {
                if depth == 0 {
                    return Err(error(UNEXPECTED_PAREN, whole));
                }
                depth -= 1;
                top = Top::Operand;
                t = &t[1..];
            }
            '[' => {
                t = class(t)?;
                top = Top::Operand;
            }
            '*' | '+' | '?' => {
                let after = repetition(top, t, &t[1..], last_repeat)?;
                repeat = Some(t);
                t = after;
            }
            '{' => match counted(t) {
                Some((min, max, after)) => {
                    let too_many = min > 1000 || max > 1000;
                    if too_many || u64::try_from(max).is_ok_and(|max| min > max) {
                        return Err(error(INVALID_REPEAT_SIZE, &t[..t.len() - after.len()]));
                    }
                    let after = repetition(top, t, after, last_repeat)?;
                    repeat = Some(t);
                    t = after;
                }
                None => {
                    top = Top::Operand;
                    t = &t[1..];
                }
            },
            '\\' => {
                t = top_level_escape(t)?;
                top = Top::Operand;
            }
            _ => {
                top = Top::Operand;
                t = &t[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    if depth > 0 {
        return Err(error(MISSING_PAREN, whole));
    }
    Ok(())
}

/// `parser.repeat`: `before` starts at the operator, `after` follows it. Returns the text
/// after the operator and its non-greedy `?`.
fn repetition<'a>(
    top: Top,
    before: &'a str,
    after: &'a str,
    last_repeat: Option<&str>,
) -> Result<&'a str, String> {
    let after = after.strip_prefix('?').unwrap_or(after);
    if let Some(last) = last_repeat {
        return Err(error(INVALID_REPEAT_OP, &last[..last.len() - after.len()]));
    }
    if top == Top::Nothing {
        return Err(error(
            MISSING_REPEAT_ARGUMENT,
            &before[..before.len() - after.len()],
        ));
    }
    Ok(after)
}

/// `parser.parseRepeat`: `{n}`, `{n,}` (an open maximum, -1) or `{n,m}`, and the text
/// after it; `None` when the `{` is a literal.
fn counted(s: &str) -> Option<(u64, i64, &str)> {
    let (min, s) = int(s.strip_prefix('{')?)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (i64::try_from(min).unwrap_or(i64::MAX), s),
        Some(s) if s.starts_with('}') => (-1, s),
        Some(s) => {
            let (max, s) = int(s)?;
            (i64::try_from(max).unwrap_or(i64::MAX), s)
        }
    };
    Some((min, max, s.strip_prefix('}')?))
}

/// `parser.parseInt`: digits without a leading zero (a number too large for Go is
/// `u64::MAX`, too large for a repetition too).
fn int(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let n = s[..digits].bytes().try_fold(0u64, |n, d| {
        (n < 100_000_000).then(|| n * 10 + u64::from(d - b'0'))
    });
    Some((n.unwrap_or(u64::MAX), &s[digits..]))
}

/// `parser.parsePerlFlags` on `(?...`: the rest, and whether a group opens.
fn perl_flags(s: &str) -> Result<(&str, bool), String> {
    let named = if s.starts_with("(?P<") && s.len() > 4 {
        Some(4)
    } else if s.starts_with("(?<") && s.len() > 3 {
        Some(3)
    } else {
        None
    };
    if let Some(begin) = named {
        let Some(end) = s.find('>') else {
            return Err(error(INVALID_NAMED_CAPTURE, s));
        };
        let name = &s[begin..end];
        if name.is_empty() || !name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()) {
            return Err(error(INVALID_NAMED_CAPTURE, &s[..=end]));
        }
        return Ok((&s[end + 1..], true));
    }
    let mut t = &s[2..];
    let (mut negated, mut saw_flag) = (false, false);
    while let Some(c) = t.chars().next() {
        t = &t[c.len_utf8()..];
        match c {
            'i' | 'm' | 's' | 'U' => saw_flag = true,
            '-' if !negated => {
                negated = true;
                saw_flag = false;
            }
            ':' | ')' if !negated || saw_flag => return Ok((t, c == ':')),
            _ => break,
        }
    }
    Err(error(INVALID_PERL_OP, &s[..s.len() - t.len()]))
}

/// A `\` outside a class: `\A`, `\b`, `\B`, `\z`, `\Q...\E`, a Unicode or Perl class, or
/// an escaped character.
fn top_level_escape(t: &str) -> Result<&str, String> {
    match t.as_bytes().get(1) {
        Some(b'A' | b'b' | b'B' | b'z') => return Ok(&t[2..]),
        Some(b'C') => return Err(error(INVALID_ESCAPE, &t[..2])),
        Some(b'Q') => return Ok(t[2..].split_once("\\E").map_or("", |(_, rest)| rest)),
        _ => {}
    }
    if let Some(rest) = unicode_class(t)? {
        return Ok(rest);
    }
    if let Some(rest) = perl_class(t) {
        return Ok(rest);
    }
    escape(t)
}

/// `\d`, `\D`, `\s`, `\S`, `\w`, `\W`.
fn perl_class(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    (b.first() == Some(&b'\\') && matches!(b.get(1), Some(b'd' | b'D' | b's' | b'S' | b'w' | b'W')))
        .then(|| &t[2..])
}

/// `parser.parseUnicodeClass`: `\pL`, `\p{Greek}`, `\P{^Lu}`. A name is accepted when the
/// `regex` crate knows it (it knows at least Go's categories and scripts).
fn unicode_class(s: &str) -> Result<Option<&str>, String> {
    if !(s.starts_with("\\p") || s.starts_with("\\P")) {
        return Ok(None);
    }
    let t = &s[2..];
    let (seq, name, rest) = match t.chars().next() {
        Some('{') => {
            let Some(end) = s.find('}') else {
                return Err(error(INVALID_CHAR_RANGE, s));
            };
            (&s[..=end], &s[3..end], &s[end + 1..])
        }
        Some(c) => (
            &s[..2 + c.len_utf8()],
            &t[..c.len_utf8()],
            &t[c.len_utf8()..],
        ),
        None => (s, "", ""),
    };
    let name = name.strip_prefix('^').unwrap_or(name);
    let known = name == "Any"
        || (!name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && regex::Regex::new(&format!("\\p{{{name}}}")).is_ok());
    if known {
        Ok(Some(rest))
    } else {
        Err(error(INVALID_CHAR_RANGE, seq))
    }
}

/// `parser.parseEscape`: an escaped character, `\` first; returns the rest.
fn escape(s: &str) -> Result<&str, String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(error(TRAILING_BACKSLASH, ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| Err(error(INVALID_ESCAPE, &s[..s.len() - t.len()]));
    let octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match c {
        '1'..='7' if !octal(t) => invalid(t),
        '0'..='7' => {
            for _ in 1..3 {
                if !octal(t) {
                    break;
                }
                t = &t[1..];
            }
            Ok(t)
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let (mut digits, mut value) = (0u32, 0u32);
                loop {
                    let Some(c) = t.chars().next() else {
                        return invalid(t);
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return invalid(t);
                    };
                    value = value * 16 + v;
                    if value > 0x10_FFFF {
                        return invalid(t);
                    }
                    digits += 1;
                }
                return if digits == 0 { invalid(t) } else { Ok(t) };
            }
            // Two hex digits (the second read even when the first is not one).
            let second = t.chars().next();
            t = second.map_or(t, |d| &t[d.len_utf8()..]);
            if c.is_ascii_hexdigit() && second.is_some_and(|d| d.is_ascii_hexdigit()) {
                Ok(t)
            } else {
                invalid(t)
            }
        }
        'a' | 'f' | 'n' | 'r' | 't' | 'v' => Ok(t),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok(t),
        _ => invalid(t),
    }
}

/// `parser.parseClass` on `[...`: returns the text after the class.
fn class(s: &str) -> Result<&str, String> {
    let mut t = &s[1..];
    t = t.strip_prefix('^').unwrap_or(t);
    let mut first = true;
    while t.is_empty() || !t.starts_with(']') || first {
        first = false;
        if t.starts_with("[:")
            && let Some(i) = t[2..].find(":]")
        {
            let name = &t[..i + 4];
            let inner = &name[2..name.len() - 2];
            if !POSIX_CLASSES.contains(&inner.strip_prefix('^').unwrap_or(inner)) {
                return Err(error(INVALID_CHAR_RANGE, name));
            }
            t = &t[name.len()..];
            continue;
        }
        if let Some(rest) = unicode_class(t)? {
            t = rest;
            continue;
        }
        if let Some(rest) = perl_class(t) {
            t = rest;
            continue;
        }
        let range = t;
        let (lo, rest) = class_char(t, s)?;
        t = rest;
        if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
            let (hi, rest) = class_char(&t[1..], s)?;
            t = rest;
            if hi < lo {
                return Err(error(INVALID_CHAR_RANGE, &range[..range.len() - t.len()]));
            }
        }
    }
    Ok(&t[1..])
}

/// `parser.parseClassChar`: one character of a class (escapes decoded) and the rest.
fn class_char<'a>(t: &'a str, whole_class: &str) -> Result<(char, &'a str), String> {
    let Some(c) = t.chars().next() else {
        return Err(error(MISSING_BRACKET, whole_class));
    };
    if c == '\\' {
        let rest = escape(t)?;
        return Ok((escaped_char(&t[1..t.len() - rest.len()]), rest));
    }
    Ok((c, &t[c.len_utf8()..]))
}

/// The character a valid escape (without its `\`) stands for, to order a range's ends.
fn escaped_char(e: &str) -> char {
    let parse = |digits: &str, radix| {
        u32::from_str_radix(digits, radix)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or_default()
    };
    match e.chars().next() {
        Some('0'..='7') => parse(e, 8),
        Some('x') => parse(e[1..].trim_matches(|c| c == '{' || c == '}'), 16),
        Some('a') => '\u{7}',
        Some('f') => '\u{c}',
        Some('n') => '\n',
        Some('r') => '\r',
        Some('t') => '\t',
        Some('v') => '\u{b}',
        Some(c) => c,
        None => '\0',
    }
}

/// A regular expression as Go's `regexp` (RE2) would accept it.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(&ascii_classes(pattern))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("error parsing regexp: {e}"))
}

/// RE2's Perl classes are ASCII (`\d` is `[0-9]`), the `regex` crate's Unicode: spell them
/// out, inside brackets too.
fn ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let (inside, outside) = match next {
                    'd' => ("0-9", "[0-9]"),
                    'D' => ("", "[^0-9]"),
                    'w' => ("0-9A-Za-z_", "[0-9A-Za-z_]"),
                    'W' => ("", "[^0-9A-Za-z_]"),
                    's' => ("\\t\\n\\f\\r ", "[\\t\\n\\f\\r ]"),
                    'S' => ("", "[^\\t\\n\\f\\r ]"),
                    'b' if !in_class => ("", "(?-u:\\b)"),
                    'B' if !in_class => ("", "(?-u:\\B)"),
                    _ => ("", ""),
                };
                match (in_class, inside, outside) {
                    (true, i, _) if !i.is_empty() => out.push_str(i),
                    (false, _, o) if !o.is_empty() => out.push_str(o),
                    _ => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` or `^]` right after the bracket is a literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}
