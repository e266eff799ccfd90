//! YAML bodies as kube-apiserver reads them (`sigs.k8s.io/yaml.YAMLToJSON`, go-yaml v2): the
//! document's JSON, and for a malformed one the message go-yaml gives, worked out from
//! serde_saphyr's refusal of the same text.
//!
//! Both parsers descend from libyaml and mostly refuse the same documents for the same reason;
//! what differs is the wording of some problems and how the line is counted. go-yaml's `fail`
//! prints `line N: ` only when the problem's mark (0-based) is past the first line: a scanner
//! problem counts lines from 1, a parser problem from 0 (so the same line reads one less), and
//! a document ending inside an open flow collection is reported at the end of the stream, where
//! the scanner forces a new line. Problems without a known counterpart keep serde_saphyr's
//! message.

use recon_apimachinery::json::Value;
use serde_saphyr::options::{DuplicateKeyPolicy, Options};

/// A YAML body as JSON, or go-yaml's error for it (`yaml: ...`).
pub(crate) fn yaml_to_json(text: &str) -> Result<Value, String> {
    // go-yaml v2 decodes into a Go map: a repeated key keeps its last value, without error.
    let mut options = Options::default();
    options.duplicate_keys = DuplicateKeyPolicy::LastWins;
    serde_saphyr::from_str_with_options(text, options).map_err(|e| go_yaml_error(text, &e))
}

/// Which of go-yaml's two line counts a problem follows.
#[derive(Clone, Copy)]
enum Stage {
    Scanner,
    Parser,
}

/// `yaml: [line N: ]<problem>`, with `line0` the 0-based line of the problem's mark.
fn worded(stage: Stage, line0: usize, problem: &str) -> String {
    let line = match stage {
        Stage::Scanner => line0 + 1,
        Stage::Parser => line0,
    };
    if line0 == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {line}: {problem}")
    }
}

/// go-yaml's message for `text`, which serde_saphyr refused with `e`.
pub(crate) fn go_yaml_error(text: &str, e: &serde_saphyr::Error) -> String {
    let inner = e.without_snippet();
    let message = match inner {
        serde_saphyr::Error::ExternalMessage { msg, .. } => msg.clone(),
        other => other.to_string(),
    };
    // serde_saphyr counts lines from 1.
    let line0 = e
        .location()
        .and_then(|l| usize::try_from(l.line()).ok())
        .map_or(0, |l| l.saturating_sub(1));
    if message.starts_with("unclosed bracket ") {
        let problem = match innermost_open(text) {
            Some(open) => open.expecting(),
            None => "did not find expected node content".to_owned(),
        };
        return worded(Stage::Parser, stream_end_line(text), &problem);
    }
    if message.starts_with("mismatched bracket ") {
        return match first_mismatch(text) {
            Some((open, closer_line0)) => worded(
                Stage::Parser,
                closer_line0,
                &format!("did not find expected ',' or '{}'", open.closer()),
            ),
            None => format!("yaml: {message}"),
        };
    }
    if message == "misplaced bracket" {
        return worded(Stage::Parser, line0, "did not find expected node content");
    }
    if message == "unclosed quote" {
        // Scanned to the end of the input, wherever the quote opened.
        let end0 = text.matches('\n').count();
        return worded(Stage::Scanner, end0, "found unexpected end of stream");
    }
    if message == "mapping values are not allowed in this context" {
        return worded(Stage::Scanner, line0, &message);
    }
    if message == "unexpected character: ``'" {
        return worded(
            Stage::Scanner,
            line0,
            "found character that cannot start any token",
        );
    }
    if let Some(problem) = message
        .strip_prefix("while parsing ")
        .and_then(|rest| rest.split_once(", "))
        .map(|(_, problem)| problem)
    {
        return worded(Stage::Parser, line0, problem);
    }
    if message.starts_with("alias references unknown anchor")
        && let Some(name) = alias_at(text, line0, e)
    {
        return format!("yaml: unknown anchor '{name}' referenced");
    }
    format!("yaml: {message}")
}

/// The 0-based line of the end of the stream: the scanner ends the last line if it has text.
fn stream_end_line(text: &str) -> usize {
    let newlines = text.matches('\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// An open flow collection, and whether a node was read since its last separator.
#[derive(Debug, Clone, Copy)]
struct Open {
    bracket: char,
    /// A node came after the bracket or after the last `,`.
    has_node: bool,
}

impl Open {
    fn closer(self) -> char {
        if self.bracket == '[' { ']' } else { '}' }
    }

    /// What the parser wanted when the input ended inside this collection.
    fn expecting(self) -> String {
        if self.has_node {
            format!("did not find expected ',' or '{}'", self.closer())
        } else {
            "did not find expected node content".to_owned()
        }
    }
}

/// One pass over the flow brackets of `text`, outside quotes and comments; `on_close` sees each
/// closing bracket with the line it is on and the collection it closes, and stops the pass by
/// returning `false`. Returns the collections left open.
fn scan_brackets(
    text: &str,
    mut on_close: impl FnMut(char, usize, Option<Open>) -> bool,
) -> Vec<Open> {
    let mut open: Vec<Open> = Vec::new();
    let mut line0 = 0;
    let mut chars = text.chars().peekable();
    let mut previous = '\n';
    while let Some(c) = chars.next() {
        match c {
            '\n' => line0 += 1,
            '#' if previous.is_whitespace() => while chars.next_if(|&n| n != '\n').is_some() {},
            '"' | '\'' if matches!(previous, ' ' | '\t' | '\n' | '[' | '{' | ',' | ':') => {
                let mut escaped = false;
                for q in chars.by_ref() {
                    if q == '\n' {
                        line0 += 1;
                    }
                    if c == '"' && q == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    if q == c && !escaped {
                        break;
                    }
                    escaped = false;
                }
                if let Some(top) = open.last_mut() {
                    top.has_node = true;
                }
            }
            '[' | '{' => {
                if let Some(top) = open.last_mut() {
                    top.has_node = true;
                }
                open.push(Open {
                    bracket: c,
                    has_node: false,
                });
            }
            ']' | '}' => {
                let closed = open.pop();
                if !on_close(c, line0, closed) {
                    return open;
                }
            }
            ',' => {
                if let Some(top) = open.last_mut() {
                    top.has_node = false;
                }
            }
            _ if c.is_whitespace() || c == ':' => {}
            _ => {
                if let Some(top) = open.last_mut() {
                    top.has_node = true;
                }
            }
        }
        previous = c;
    }
    open
}

/// The innermost collection the text leaves open.
fn innermost_open(text: &str) -> Option<Open> {
    scan_brackets(text, |_, _, _| true).pop()
}

/// The first closing bracket of the wrong kind: the collection it meets and its 0-based line.
fn first_mismatch(text: &str) -> Option<(Open, usize)> {
    let mut found = None;
    scan_brackets(text, |closer, line0, closed| match closed {
        Some(open) if open.closer() != closer => {
            found = Some((open, line0));
            false
        }
        _ => true,
    });
    found
}

/// The anchor name of the alias serde_saphyr points at (`*name`).
fn alias_at(text: &str, line0: usize, e: &serde_saphyr::Error) -> Option<String> {
    let column0 = usize::try_from(e.location()?.column())
        .ok()?
        .checked_sub(1)?;
    let line = text.lines().nth(line0)?;
    let rest: String = line.chars().skip(column0).collect();
    let name: String = rest
        .strip_prefix('*')?
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        yaml_to_json(text).unwrap_err()
    }

    // Each as kube-apiserver 1.36 answered the same body (fixtures/conformance/decoding).
    #[test]
    fn common_problems_are_worded_as_go_yaml_words_them() {
        for (text, message) in [
            ("a: [", "yaml: line 1: did not find expected node content"),
            ("a: {", "yaml: line 1: did not find expected node content"),
            ("a: [\n", "yaml: line 1: did not find expected node content"),
            (
                "x: 1\na: [",
                "yaml: line 2: did not find expected node content",
            ),
            ("[1,", "yaml: line 1: did not find expected node content"),
            ("[1, 2", "yaml: line 1: did not find expected ',' or ']'"),
            ("{a: 1", "yaml: line 1: did not find expected ',' or '}'"),
            (
                "a: [1, [2",
                "yaml: line 1: did not find expected ',' or ']'",
            ),
            ("a: [1, {b: 2]", "yaml: did not find expected ',' or '}'"),
            ("{a: [1}", "yaml: did not find expected ',' or ']'"),
            ("a: ]", "yaml: did not find expected node content"),
            (
                "a: b: c",
                "yaml: mapping values are not allowed in this context",
            ),
            (
                "x: 1\na: b: c",
                "yaml: line 2: mapping values are not allowed in this context",
            ),
            (
                "key: value\n  bad: indent",
                "yaml: line 2: mapping values are not allowed in this context",
            ),
            ("\"a", "yaml: found unexpected end of stream"),
            ("'a", "yaml: found unexpected end of stream"),
            (
                "x: 1\na: \"b",
                "yaml: line 2: found unexpected end of stream",
            ),
            (
                "- a\nb: c",
                "yaml: line 1: did not find expected '-' indicator",
            ),
            (
                "a:\n  - b\n c: d",
                "yaml: line 2: did not find expected key",
            ),
            ("`", "yaml: found character that cannot start any token"),
            ("a: *b", "yaml: unknown anchor 'b' referenced"),
        ] {
            assert_eq!(error(text), message, "{text:?}");
        }
    }

    #[test]
    fn documents_read_as_go_yaml_reads_them() {
        assert_eq!(
            yaml_to_json("a: 1\na: 2").unwrap(),
            recon_apimachinery::json!({"a": 2})
        );
        assert_eq!(yaml_to_json("").unwrap(), Value::Null);
        assert_eq!(
            yaml_to_json("dryRun: [All]").unwrap(),
            recon_apimachinery::json!({"dryRun": ["All"]})
        );
    }
}
