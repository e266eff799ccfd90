//! Go's `encoding/json` syntax check (`checkValid` and the scanner of `scanner.go`), for the
//! words of its `SyntaxError`: `json.Unmarshal` scans the whole input before decoding anything,
//! so the first malformed byte is what the real server reports, worded as
//! `invalid character 'x' looking for beginning of value` or `unexpected end of JSON input`.
//!
//! serde_json refuses the same documents (and more: invalid UTF-8 in strings, nesting past 128)
//! with its own wording; this scanner is only consulted for the message. It keeps its state in a
//! stack, not in recursion, so no input can overflow the stack here.

/// Go's `maxNestingDepth`: the scanner refuses the 10001st nested array or object.
const MAX_DEPTH: usize = 10_000;

/// The text of the `SyntaxError` Go's `json.Unmarshal` returns for `data`; `None` when Go's
/// scanner accepts it.
pub(crate) fn syntax_error(data: &[u8]) -> Option<String> {
    let mut scanner = Scanner {
        step: Step::BeginValue,
        stack: Vec::new(),
        end_top: false,
    };
    for &c in data {
        if let Err(e) = scanner.step(c) {
            return Some(e);
        }
    }
    scanner.eof().err()
}

/// Why `body`, which serde_json refused with `error`, does not read as JSON, in Go's words when
/// Go's scanner refuses it too; otherwise (a number out of range, invalid UTF-8 in a string)
/// serde_json's.
pub(crate) fn worded(body: &[u8], error: &serde_json::Error) -> String {
    syntax_error(body).unwrap_or_else(|| error.to_string())
}

/// What the scanner expects next (one of Go's `state*` functions).
#[derive(Debug, Clone, Copy)]
enum Step {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEscape,
    /// Inside `\u`, with this many hex digits read.
    InUnicodeEscape(u8),
    Negative,
    /// In the integer part, after a non-zero first digit.
    Digits,
    /// After a leading `0`.
    Zero,
    Dot,
    Fraction,
    Exponent,
    ExponentSign,
    ExponentDigits,
    /// Inside `true`, `false` or `null`, `at` letters read.
    Literal {
        word: &'static str,
        at: usize,
    },
}

/// What the innermost open container waits for (Go's `parse*` states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

struct Scanner {
    step: Step,
    stack: Vec<Parse>,
    /// A complete top-level value has been read.
    end_top: bool,
}

/// `isSpace`: the four whitespace bytes of JSON.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// `SyntaxError`'s text for byte `c` in `context`.
fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

/// Go's `quoteChar`: the byte as a Go character literal, read as the code point of the same
/// number (Go converts the byte to a rune), `'` and `"` special-cased.
pub(crate) fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        b'\\' => r"'\\'".to_owned(),
        0x07 => r"'\a'".to_owned(),
        0x08 => r"'\b'".to_owned(),
        0x0c => r"'\f'".to_owned(),
        b'\n' => r"'\n'".to_owned(),
        b'\r' => r"'\r'".to_owned(),
        b'\t' => r"'\t'".to_owned(),
        0x0b => r"'\v'".to_owned(),
        // `strconv.IsPrint` of Latin-1: ASCII graphics and space, and U+00A1 to U+00FF but
        // the soft hyphen.
        0x20..=0x7e => format!("'{}'", c as char),
        0xa1..=0xff if c != 0xad => format!("'{}'", char::from(c)),
        0x00..=0x1f | 0x7f => format!(r"'\x{c:02x}'"),
        _ => format!(r"'\u{c:04x}'"),
    }
}

impl Scanner {
    /// Feeds one byte; `Err` is the syntax error it makes.
    fn step(&mut self, c: u8) -> Result<(), String> {
        match self.step {
            Step::BeginValueOrEmpty => {
                if is_space(c) {
                    return Ok(());
                }
                if c == b']' {
                    return self.end_value(c);
                }
                self.begin_value(c)
            }
            Step::BeginValue => self.begin_value(c),
            Step::BeginStringOrEmpty => {
                if is_space(c) {
                    return Ok(());
                }
                if c == b'}' {
                    if let Some(top) = self.stack.last_mut() {
                        *top = Parse::ObjectValue;
                    }
                    return self.end_value(c);
                }
                self.begin_string(c)
            }
            Step::BeginString => self.begin_string(c),
            Step::EndValue => self.end_value(c),
            Step::EndTop => {
                if is_space(c) {
                    Ok(())
                } else {
                    Err(invalid(c, "after top-level value"))
                }
            }
            Step::InString => {
                match c {
                    b'"' => self.step = Step::EndValue,
                    b'\\' => self.step = Step::InStringEscape,
                    0x00..=0x1f => return Err(invalid(c, "in string literal")),
                    _ => {}
                }
                Ok(())
            }
            Step::InStringEscape => {
                self.step = match c {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => Step::InString,
                    b'u' => Step::InUnicodeEscape(0),
                    _ => return Err(invalid(c, "in string escape code")),
                };
                Ok(())
            }
            Step::InUnicodeEscape(read) => {
                if !c.is_ascii_hexdigit() {
                    return Err(invalid(c, r"in \u hexadecimal character escape"));
                }
                self.step = if read == 3 {
                    Step::InString
                } else {
                    Step::InUnicodeEscape(read + 1)
                };
                Ok(())
            }
            Step::Negative => {
                self.step = match c {
                    b'0' => Step::Zero,
                    b'1'..=b'9' => Step::Digits,
                    _ => return Err(invalid(c, "in numeric literal")),
                };
                Ok(())
            }
            Step::Digits => {
                if c.is_ascii_digit() {
                    return Ok(());
                }
                self.after_integer(c)
            }
            Step::Zero => self.after_integer(c),
            Step::Dot => {
                if !c.is_ascii_digit() {
                    return Err(invalid(c, "after decimal point in numeric literal"));
                }
                self.step = Step::Fraction;
                Ok(())
            }
            Step::Fraction => match c {
                b'0'..=b'9' => Ok(()),
                b'e' | b'E' => {
                    self.step = Step::Exponent;
                    Ok(())
                }
                _ => self.end_value(c),
            },
            Step::Exponent => {
                if matches!(c, b'+' | b'-') {
                    self.step = Step::ExponentSign;
                    return Ok(());
                }
                self.exponent_sign(c)
            }
            Step::ExponentSign => self.exponent_sign(c),
            Step::ExponentDigits => {
                if c.is_ascii_digit() {
                    return Ok(());
                }
                self.end_value(c)
            }
            Step::Literal { word, at } => {
                let expected = word.as_bytes()[at];
                if c != expected {
                    return Err(invalid(
                        c,
                        &format!("in literal {word} (expecting {})", quote_char(expected)),
                    ));
                }
                self.step = if at + 1 == word.len() {
                    Step::EndValue
                } else {
                    Step::Literal { word, at: at + 1 }
                };
                Ok(())
            }
        }
    }

    /// `stateBeginValue`.
    fn begin_value(&mut self, c: u8) -> Result<(), String> {
        self.step = match c {
            _ if is_space(c) => Step::BeginValue,
            b'{' => {
                self.push(c, Parse::ObjectKey)?;
                Step::BeginStringOrEmpty
            }
            b'[' => {
                self.push(c, Parse::ArrayValue)?;
                Step::BeginValueOrEmpty
            }
            b'"' => Step::InString,
            b'-' => Step::Negative,
            b'0' => Step::Zero,
            b'1'..=b'9' => Step::Digits,
            b't' => Step::Literal {
                word: "true",
                at: 1,
            },
            b'f' => Step::Literal {
                word: "false",
                at: 1,
            },
            b'n' => Step::Literal {
                word: "null",
                at: 1,
            },
            _ => return Err(invalid(c, "looking for beginning of value")),
        };
        Ok(())
    }

    /// `stateBeginString`.
    fn begin_string(&mut self, c: u8) -> Result<(), String> {
        match c {
            _ if is_space(c) => self.step = Step::BeginString,
            b'"' => self.step = Step::InString,
            _ => return Err(invalid(c, "looking for beginning of object key string")),
        }
        Ok(())
    }

    /// `state0`: after the integer part of a number.
    fn after_integer(&mut self, c: u8) -> Result<(), String> {
        match c {
            b'.' => self.step = Step::Dot,
            b'e' | b'E' => self.step = Step::Exponent,
            _ => return self.end_value(c),
        }
        Ok(())
    }

    /// `stateESign`.
    fn exponent_sign(&mut self, c: u8) -> Result<(), String> {
        if !c.is_ascii_digit() {
            return Err(invalid(c, "in exponent of numeric literal"));
        }
        self.step = Step::ExponentDigits;
        Ok(())
    }

    /// `pushParseState`, with Go's depth limit.
    fn push(&mut self, c: u8, parse: Parse) -> Result<(), String> {
        self.stack.push(parse);
        if self.stack.len() > MAX_DEPTH {
            return Err(invalid(c, "exceeded max depth"));
        }
        Ok(())
    }

    /// `popParseState`.
    fn pop(&mut self) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.step = Step::EndTop;
            self.end_top = true;
        } else {
            self.step = Step::EndValue;
        }
    }

    /// `stateEndValue`: a value just ended; what may follow depends on its container.
    fn end_value(&mut self, c: u8) -> Result<(), String> {
        let Some(&top) = self.stack.last() else {
            self.step = Step::EndTop;
            self.end_top = true;
            return self.step(c);
        };
        if is_space(c) {
            self.step = Step::EndValue;
            return Ok(());
        }
        match (top, c) {
            (Parse::ObjectKey, b':') => {
                if let Some(top) = self.stack.last_mut() {
                    *top = Parse::ObjectValue;
                }
                self.step = Step::BeginValue;
            }
            (Parse::ObjectKey, _) => return Err(invalid(c, "after object key")),
            (Parse::ObjectValue, b',') => {
                if let Some(top) = self.stack.last_mut() {
                    *top = Parse::ObjectKey;
                }
                self.step = Step::BeginString;
            }
            (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => self.pop(),
            (Parse::ObjectValue, _) => return Err(invalid(c, "after object key:value pair")),
            (Parse::ArrayValue, b',') => self.step = Step::BeginValue,
            (Parse::ArrayValue, _) => return Err(invalid(c, "after array element")),
        }
        Ok(())
    }

    /// `eof`: a number still open ends at the end of input; anything else open is
    /// `unexpected end of JSON input`.
    fn eof(&mut self) -> Result<(), String> {
        if self.end_top {
            return Ok(());
        }
        // Go feeds a space, which ends a pending number.
        self.step(b' ')?;
        if self.end_top {
            Ok(())
        } else {
            Err("unexpected end of JSON input".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> Option<String> {
        syntax_error(text.as_bytes())
    }

    #[test]
    fn valid_documents_have_no_error() {
        for text in [
            "{}",
            " [ ] ",
            r#"{"a": [1, -2.5e+3, 0, 0.0, true, false, null, "s\u00e9\n"]}"#,
            "12",
            "-0",
            r#""x""#,
        ] {
            assert_eq!(error(text), None, "{text}");
        }
    }

    // Each as Go's json.Unmarshal words it (and kube-apiserver 1.36 answered, for the ones
    // recorded in fixtures/conformance).
    #[test]
    fn errors_are_worded_as_go_words_them() {
        for (text, message) in [
            ("", "unexpected end of JSON input"),
            ("   ", "unexpected end of JSON input"),
            (r#"{"a":"#, "unexpected end of JSON input"),
            ("[1,", "unexpected end of JSON input"),
            (
                "garbage",
                "invalid character 'g' looking for beginning of value",
            ),
            (
                r#"{"a":x}"#,
                "invalid character 'x' looking for beginning of value",
            ),
            (
                r#"{"a":1,}"#,
                "invalid character '}' looking for beginning of object key string",
            ),
            (
                "{bad",
                "invalid character 'b' looking for beginning of object key string",
            ),
            (r#"{"a" 1}"#, "invalid character '1' after object key"),
            (
                r#"{"a":1 "b"}"#,
                "invalid character '\"' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("{} x", "invalid character 'x' after top-level value"),
            // At the end Go feeds a space, which an open literal or number chokes on.
            (
                "tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            (
                "trUe",
                "invalid character 'U' in literal true (expecting 'u')",
            ),
            (
                "nul",
                "invalid character ' ' in literal null (expecting 'l')",
            ),
            (
                "fals3",
                "invalid character '3' in literal false (expecting 'e')",
            ),
            ("-x", "invalid character 'x' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "1e+",
                "invalid character ' ' in exponent of numeric literal",
            ),
            ("-", "invalid character ' ' in numeric literal"),
            (r#""abc"#, "unexpected end of JSON input"),
            (
                "1ex",
                "invalid character 'x' in exponent of numeric literal",
            ),
            ("01", "invalid character '1' after top-level value"),
            ("\"a\u{1}\"", r"invalid character '\x01' in string literal"),
            (r#""\q""#, "invalid character 'q' in string escape code"),
            (
                r#""\u12x4""#,
                r"invalid character 'x' in \u hexadecimal character escape",
            ),
            (
                "'a'",
                r"invalid character '\'' looking for beginning of value",
            ),
            (
                "\\",
                r"invalid character '\\' looking for beginning of value",
            ),
        ] {
            assert_eq!(error(text).as_deref(), Some(message), "{text}");
        }
    }

    #[test]
    fn bytes_are_quoted_as_the_latin_1_code_point_of_their_value() {
        assert_eq!(
            syntax_error(&[0x9e]).as_deref(),
            Some(r"invalid character '\u009e' looking for beginning of value")
        );
        assert_eq!(
            syntax_error(&[0xe9]).as_deref(),
            Some("invalid character 'é' looking for beginning of value")
        );
        assert_eq!(quote_char(0xad), r"'\u00ad'");
        assert_eq!(quote_char(0x7f), r"'\x7f'");
        assert_eq!(quote_char(b'\n'), r"'\n'");
    }

    #[test]
    fn nesting_is_refused_past_go_s_limit_without_recursion() {
        let deep = "[".repeat(MAX_DEPTH);
        assert_eq!(
            error(&deep).as_deref(),
            Some("unexpected end of JSON input")
        );
        let deeper = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(
            error(&deeper).as_deref(),
            Some("invalid character '[' exceeded max depth")
        );
        let closed = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(error(&closed), None);
    }
}
