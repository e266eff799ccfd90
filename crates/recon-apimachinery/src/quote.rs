//! Go's `strconv.Quote`, which the apiserver's messages use for names, values and selectors.

use std::fmt::Write as _;

/// Go's `%q` of a string (`strconv.Quote`): `"` and `\` backslashed, the usual C escapes,
/// `\xNN` for other ASCII controls, and `\uNNNN` / `\UNNNNNNNN` for non-printable runes.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_go_printable(c) => out.push(c),
            c if u32::from(c) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// Go's `strconv.IsPrint` for non-ASCII runes: everything but general categories C* and Z*.
/// `str::escape_debug` escapes exactly those categories (plus combining marks at the very
/// start of a string, hence the leading ASCII letter).
fn is_go_printable(c: char) -> bool {
    let probe: String = ['a', c].into_iter().collect();
    probe.escape_debug().count() == 2
}

/// Go's `%q` of a `[]string`: each item quoted as [`go_quote`] does, space-separated, in
/// brackets (`["a" "b"]`).
pub fn go_quote_list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| go_quote(i.as_ref())).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_quote_each_item_between_brackets() {
        assert_eq!(super::go_quote_list(&["a", "b\"c"]), r#"["a" "b\"c"]"#);
        assert_eq!(super::go_quote_list::<&str>(&[]), "[]");
    }

    use super::*;

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(go_quote("\u{1}"), r#""\x01""#);
        assert_eq!(go_quote("ünï"), "\"ünï\"");
    }
}
