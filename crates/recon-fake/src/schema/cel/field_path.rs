//! A rule's `fieldPath` (`cel.ValidFieldPath`): a JSON path of `.name` and `['key']` steps
//! that must name fields of the schema, normalized to the `field.Path` it names.

use super::tree::SNode;
use crate::field::Path;

/// A rule's `fieldPath` relative to `schema`, normalized (`.a['b']` is `a.b`, a map key
/// `[k]`), or why it is not valid.
pub(super) fn normalize(json_path: &str, schema: &SNode) -> Result<String, String> {
    let tokens = tokenize(json_path);
    let mut path = Path::default();
    let mut node = schema;
    let mut it = tokens.iter();
    while let Some(tok) = it.next() {
        let name = match tok.as_str() {
            "[" => {
                let quoted = it.next().ok_or("unexpected end of JSON path")?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| format!("expected single quoted string but got {quoted}"))?;
                let name = unescape_single_quote(inner)?;
                match it.next().map(String::as_str) {
                    Some("]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                    None => return Err("unexpected end of JSON path".to_owned()),
                }
                name
            }
            "." => it.next().ok_or("unexpected end of JSON path")?.clone(),
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        if !node.properties.is_empty() {
            path = path.child(&name);
            node = node
                .properties
                .get(&name)
                .ok_or("does not refer to a valid field")?;
        } else if let Some(additional) = node.additional.as_deref() {
            path = path.key(&name);
            node = additional;
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
    }
    Ok(path.as_str().to_owned())
}

/// The scanner's tokens: `.`, `[` and `]` alone, a quoted string whole, anything else up to
/// the next of those.
fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\'' {
            let mut j = i + 1;
            let mut closed = false;
            while j < chars.len() {
                if chars[j] == '\'' && chars[j - 1] != '\\' {
                    closed = true;
                    break;
                }
                j += 1;
            }
            let end = if closed { j + 1 } else { chars.len() };
            out.push(chars[i..end].iter().collect());
            i = end;
            continue;
        }
        if matches!(chars[i], '.' | '[' | ']') {
            out.push(chars[i].to_string());
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !matches!(chars[i], '.' | '[' | ']') {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => {
                return Err(format!(
                    "invalid string literal: invalid escape char \\{other}"
                ));
            }
        });
    }
    Ok(out)
}
