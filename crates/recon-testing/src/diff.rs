//! Expected-versus-actual JSON as a unified diff: pretty-printed with sorted keys so that only
//! real differences show; coloured when stderr is a terminal, plain when `NO_COLOR` is set or
//! stderr is redirected (a CI log, a file).

use std::fmt::Write as _;
use std::io::IsTerminal;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Whether diffs should be coloured: stderr is a terminal and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
pub fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// A unified diff from `expected` to `actual`, or `None` when they are equal.
///
/// ```
/// use recon_testing::json_diff;
/// use serde_json::json;
///
/// let diff = json_diff(&json!({"replicas": 2}), &json!({"replicas": 3}), false).unwrap();
/// assert!(diff.contains("-  \"replicas\": 2"));
/// assert!(diff.contains("+  \"replicas\": 3"));
/// assert_eq!(json_diff(&json!([1]), &json!([1]), false), None);
/// ```
pub fn json_diff(expected: &Value, actual: &Value, color: bool) -> Option<String> {
    if expected == actual {
        return None;
    }
    text_diff(&pretty(expected), &pretty(actual), color)
}

/// A unified diff of two texts, line by line, or `None` when they are equal. Texts without a
/// final newline are compared as if they had one.
///
/// ```
/// let diff = recon_testing::diff::text_diff(r#"{"a":1}"#, r#"{"a": 1}"#, false).unwrap();
/// assert!(diff.contains(r#"-{"a":1}"#) && diff.contains(r#"+{"a": 1}"#));
/// ```
pub fn text_diff(expected: &str, actual: &str, color: bool) -> Option<String> {
    if expected == actual {
        return None;
    }
    let line = |s: &str| {
        if s.ends_with('\n') {
            s.to_owned()
        } else {
            format!("{s}\n")
        }
    };
    let (expected, actual) = (line(expected), line(actual));
    let diff = TextDiff::from_lines(&expected, &actual);
    let mut out = String::from("--- expected\n+++ actual\n");
    for group in diff.grouped_ops(3) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{},{} +{},{} @@",
            old.start + 1,
            old.len(),
            new.start + 1,
            new.len()
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                let _ = writeln!(out, "{sign}{}", change.value().trim_end_matches('\n'));
            }
        }
    }
    Some(if color { paint(&out) } else { out })
}

/// Colours the lines of unified diffs in `text`: removals red, additions green, hunk headers
/// cyan. Other lines are left as they are.
pub(crate) fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let code = if body.starts_with('-') {
            RED
        } else if body.starts_with('+') {
            GREEN
        } else if body.starts_with("@@") {
            CYAN
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            let _ = write!(out, "{code}{body}{RESET}{newline}");
        }
    }
    out
}

/// Panics with a diff (coloured per [`use_color`]) when `expected` and `actual` differ.
///
/// ```should_panic
/// recon_testing::assert_json_eq(&serde_json::json!({"a": 1}), &serde_json::json!({"a": 2}));
/// ```
#[track_caller]
pub fn assert_json_eq(expected: &Value, actual: &Value) {
    if let Some(diff) = json_diff(expected, actual, use_color()) {
        panic!("JSON values differ\n{diff}");
    }
}

/// Pretty JSON with keys sorted at every level and a final newline.
fn pretty(value: &Value) -> String {
    let mut value = value.clone();
    value.sort_all_objects();
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_values_have_no_diff_whatever_the_key_order() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
        assert_eq!(json_diff(&a, &b, false), None);
    }

    #[test]
    fn a_plain_diff_has_headers_hunks_and_no_escape_codes() {
        let diff = json_diff(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 3}), false).unwrap();
        assert_eq!(
            diff,
            "--- expected\n+++ actual\n@@ -1,4 +1,4 @@\n {\n   \"a\": 1,\n-  \"b\": 2\n+  \"b\": 3\n }\n"
        );
    }

    #[test]
    fn a_coloured_diff_paints_removed_red_and_added_green() {
        let diff = json_diff(&json!([1]), &json!([2]), true).unwrap();
        assert!(diff.contains("\x1b[31m-  1\x1b[0m"), "{diff:?}");
        assert!(diff.contains("\x1b[32m+  2\x1b[0m"), "{diff:?}");
    }

    #[test]
    fn unchanged_lines_far_from_a_change_are_left_out() {
        let expected: Value = (0..20).collect::<Vec<i32>>().into();
        let mut actual = expected.clone();
        actual[10] = json!(99);
        let diff = json_diff(&expected, &actual, false).unwrap();
        assert!(
            !diff.contains("  0,"),
            "context is limited to 3 lines:\n{diff}"
        );
        assert!(diff.contains("-  10,") && diff.contains("+  99,"), "{diff}");
    }

    #[test]
    fn assert_json_eq_panics_with_the_diff() {
        let caught =
            std::panic::catch_unwind(|| assert_json_eq(&json!({"x": true}), &json!({"x": false})));
        let message = caught.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("JSON values differ"), "{message}");
        assert!(message.contains("\"x\": false"), "{message}");
    }
}
