//! Regular expressions as Go's `regexp` (RE2) accepts them, run on the `regex` crate.

use regex::Regex;

/// A regular expression as Go's `regexp` (RE2) would accept it.
pub(super) fn compile_regex(pattern: &str) -> std::result::Result<Regex, String> {
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
