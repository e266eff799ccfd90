//! Unified diffs of text as kube-apiserver writes them into validation messages
//! (`k8s.io/apimachinery/pkg/util/diff.Diff`, which hands two pretty-printed JSON documents to
//! `github.com/pmezard/go-difflib`): the lines matched by the Ratcliff/Obershelp longest-match
//! rule with its "popular line" heuristic, grouped with 3 lines of context, no file header.
//!
//! The same lines must come out as Go's, so the matching follows difflib's choices exactly:
//! the longest matching block, the earliest in the old text, then the earliest in the new one;
//! lines occurring in more than 1% of a new text of 200 lines or more are not used to anchor a
//! match (they only extend one). Blocks are found with an explicit work list, not recursion,
//! so a text of any length cannot exhaust the stack.

use std::collections::HashMap;
use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// `diff.Diff`'s text for `old` and `new`: empty when they are equal.
///
/// ```text
/// @@ -2,3 +2,3 @@
///   "a": 1,
/// - "b": 2,
/// + "b": 3,
///   "c": 4
/// ```
pub(crate) fn unified_diff(old: &str, new: &str) -> String {
    let a = split_lines(old);
    let b = split_lines(new);
    let mut out = String::new();
    for group in grouped_opcodes(&opcodes(&a, &b)) {
        let (first, last) = (group[0], group[group.len() - 1]);
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            unified_range(first.i1, last.i2),
            unified_range(first.j1, last.j2)
        );
        for op in group {
            let (removed, added) = match op.tag {
                Tag::Equal => {
                    for line in &a[op.i1..op.i2] {
                        out.push(' ');
                        out.push_str(line);
                    }
                    continue;
                }
                Tag::Replace => (true, true),
                Tag::Delete => (true, false),
                Tag::Insert => (false, true),
            };
            if removed {
                for line in &a[op.i1..op.i2] {
                    out.push('-');
                    out.push_str(line);
                }
            }
            if added {
                for line in &b[op.j1..op.j2] {
                    out.push('+');
                    out.push_str(line);
                }
            }
        }
    }
    out
}

/// `difflib.SplitLines`: each line keeps its `\n`, and the last one gets one too.
fn split_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    match lines.last_mut() {
        Some(last) if !last.ends_with('\n') => last.push('\n'),
        // Go's SplitAfter leaves an empty last piece after a final newline (or for "").
        _ => lines.push("\n".to_owned()),
    }
    lines
}

/// `formatRangeUnified`: `start,length`, or `start` alone for one line.
fn unified_range(start: usize, stop: usize) -> String {
    let length = stop - start;
    match length {
        1 => (start + 1).to_string(),
        0 => format!("{start},0"),
        _ => format!("{},{length}", start + 1),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

/// An edit: `a[i1..i2]` becomes `b[j1..j2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpCode {
    tag: Tag,
    i1: usize,
    i2: usize,
    j1: usize,
    j2: usize,
}

/// A run of `size` equal lines at `a[a..]` and `b[b..]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Block {
    a: usize,
    b: usize,
    size: usize,
}

/// The matcher's view of the new text: where each line occurs, popular lines left out.
struct Matcher<'a> {
    a: &'a [String],
    b: &'a [String],
    b2j: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Matcher<'a> {
    fn new(a: &'a [String], b: &'a [String]) -> Self {
        let mut b2j: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, line) in b.iter().enumerate() {
            b2j.entry(line.as_str()).or_default().push(j);
        }
        // The "autojunk" heuristic: in a text of 200 lines or more, a line occurring more
        // than 1% of the time anchors no match.
        if b.len() >= 200 {
            let limit = b.len() / 100 + 1;
            b2j.retain(|_, places| places.len() <= limit);
        }
        Matcher { a, b, b2j }
    }

    /// `find_longest_match` in `a[alo..ahi]` and `b[blo..bhi]`, extended over the lines the
    /// heuristic left out.
    fn longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Block {
        let (mut besti, mut bestj, mut best) = (alo, blo, 0);
        // Length of the match ending at b[j] with the previous line of a.
        let mut lengths: HashMap<usize, usize> = HashMap::new();
        for i in alo..ahi {
            let mut next: HashMap<usize, usize> = HashMap::new();
            if let Some(places) = self.b2j.get(self.a[i].as_str()) {
                for &j in places {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = j
                        .checked_sub(1)
                        .and_then(|p| lengths.get(&p))
                        .copied()
                        .unwrap_or(0)
                        + 1;
                    next.insert(j, k);
                    if k > best {
                        (besti, bestj, best) = (i + 1 - k, j + 1 - k, k);
                    }
                }
            }
            lengths = next;
        }
        // No line is junk here (no junk function), so both of difflib's extension passes
        // reduce to growing the match over equal neighbours.
        while besti > alo && bestj > blo && self.a[besti - 1] == self.b[bestj - 1] {
            (besti, bestj, best) = (besti - 1, bestj - 1, best + 1);
        }
        while besti + best < ahi
            && bestj + best < bhi
            && self.a[besti + best] == self.b[bestj + best]
        {
            best += 1;
        }
        Block {
            a: besti,
            b: bestj,
            size: best,
        }
    }

    /// `GetMatchingBlocks`: the matches in order, adjacent ones joined, then the sentinel.
    fn matching_blocks(&self) -> Vec<Block> {
        let mut found = Vec::new();
        let mut pending = vec![(0, self.a.len(), 0, self.b.len())];
        while let Some((alo, ahi, blo, bhi)) = pending.pop() {
            let m = self.longest_match(alo, ahi, blo, bhi);
            if m.size == 0 {
                continue;
            }
            found.push(m);
            if alo < m.a && blo < m.b {
                pending.push((alo, m.a, blo, m.b));
            }
            if m.a + m.size < ahi && m.b + m.size < bhi {
                pending.push((m.a + m.size, ahi, m.b + m.size, bhi));
            }
        }
        // The recursion in difflib yields the blocks in order; a sort does the same here.
        found.sort_unstable();
        let mut joined: Vec<Block> = Vec::with_capacity(found.len() + 1);
        for m in found {
            match joined.last_mut() {
                Some(last) if last.a + last.size == m.a && last.b + last.size == m.b => {
                    last.size += m.size;
                }
                _ => joined.push(m),
            }
        }
        joined.push(Block {
            a: self.a.len(),
            b: self.b.len(),
            size: 0,
        });
        joined
    }
}

/// `GetOpCodes`: the edits turning `a` into `b`.
fn opcodes(a: &[String], b: &[String]) -> Vec<OpCode> {
    let (mut i, mut j) = (0, 0);
    let mut codes = Vec::new();
    for m in Matcher::new(a, b).matching_blocks() {
        let tag = match (i < m.a, j < m.b) {
            (true, true) => Some(Tag::Replace),
            (true, false) => Some(Tag::Delete),
            (false, true) => Some(Tag::Insert),
            (false, false) => None,
        };
        if let Some(tag) = tag {
            codes.push(OpCode {
                tag,
                i1: i,
                i2: m.a,
                j1: j,
                j2: m.b,
            });
        }
        (i, j) = (m.a + m.size, m.b + m.size);
        if m.size > 0 {
            codes.push(OpCode {
                tag: Tag::Equal,
                i1: m.a,
                i2: i,
                j1: m.b,
                j2: j,
            });
        }
    }
    codes
}

/// `GetGroupedOpCodes(3)`: the edits in hunks, each with up to 3 equal lines around it; none
/// when the texts are equal.
fn grouped_opcodes(codes: &[OpCode]) -> Vec<Vec<OpCode>> {
    let mut codes = codes.to_vec();
    if codes.is_empty() {
        codes.push(OpCode {
            tag: Tag::Equal,
            i1: 0,
            i2: 1,
            j1: 0,
            j2: 1,
        });
    }
    if let Some(first) = codes.first_mut().filter(|c| c.tag == Tag::Equal) {
        first.i1 = first.i1.max(first.i2.saturating_sub(CONTEXT));
        first.j1 = first.j1.max(first.j2.saturating_sub(CONTEXT));
    }
    if let Some(last) = codes.last_mut().filter(|c| c.tag == Tag::Equal) {
        last.i2 = last.i2.min(last.i1 + CONTEXT);
        last.j2 = last.j2.min(last.j1 + CONTEXT);
    }
    let mut groups = Vec::new();
    let mut group = Vec::new();
    for mut c in codes {
        if c.tag == Tag::Equal && c.i2 - c.i1 > 2 * CONTEXT {
            group.push(OpCode {
                i2: c.i2.min(c.i1 + CONTEXT),
                j2: c.j2.min(c.j1 + CONTEXT),
                ..c
            });
            groups.push(std::mem::take(&mut group));
            c.i1 = c.i1.max(c.i2 - CONTEXT);
            c.j1 = c.j1.max(c.j2 - CONTEXT);
        }
        group.push(c);
    }
    if !(group.is_empty() || group.len() == 1 && group[0].tag == Tag::Equal) {
        groups.push(group);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified_diff("a\nb", "a\nb"), "");
        assert_eq!(unified_diff("", ""), "");
    }

    #[test]
    fn one_changed_line_with_three_lines_of_context() {
        let old = numbered(10);
        let new = old.replace("line 5\n", "line five\n");
        assert_eq!(
            unified_diff(&old, &new),
            "@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n \
             line 7\n line 8\n"
        );
    }

    #[test]
    fn distant_changes_are_separate_hunks_and_near_ones_share_one() {
        let old = numbered(20);
        let far = old
            .replace("line 2\n", "two\n")
            .replace("line 18\n", "eighteen\n");
        assert_eq!(unified_diff(&old, &far).matches("@@ -").count(), 2);
        let near = old
            .replace("line 2\n", "two\n")
            .replace("line 8\n", "eight\n");
        assert_eq!(unified_diff(&old, &near).matches("@@ -").count(), 1);
    }

    #[test]
    fn insertions_and_deletions_print_empty_ranges_as_difflib() {
        // Python's difflib.unified_diff(["a\n"], ["a\n", "b\n"], n=3) gives "@@ -1 +1,2 @@".
        assert_eq!(unified_diff("a", "a\nb"), "@@ -1 +1,2 @@\n a\n+b\n");
        assert_eq!(unified_diff("", "x"), "@@ -1 +1 @@\n-\n+x\n");
        assert_eq!(unified_diff("a\nb", "b"), "@@ -1,2 +1 @@\n-a\n b\n");
    }

    #[test]
    fn the_longest_match_wins_over_an_earlier_short_one() {
        // difflib anchors on the three-line run, so "x" is reported as removed first.
        assert_eq!(
            unified_diff("x\na\nb\nc", "a\nb\nc\nx"),
            "@@ -1,4 +1,4 @@\n-x\n a\n b\n c\n+x\n"
        );
    }

    #[test]
    fn popular_lines_do_not_anchor_matches_in_long_texts() {
        // 300 lines, 250 of them "}": a line that frequent is left out of the index, so the
        // match is anchored on the unique lines and only extended over the braces.
        let mut old = String::new();
        for i in 0..50 {
            let _ = writeln!(old, "key {i}");
            for _ in 0..5 {
                old.push_str("}\n");
            }
        }
        let new = old.replace("key 25\n", "key twenty-five\n");
        let diff = unified_diff(&old, &new);
        assert!(diff.contains("-key 25\n+key twenty-five\n"), "{diff}");
        assert_eq!(diff.matches("@@ -").count(), 1, "{diff}");
    }

    #[test]
    fn many_blocks_are_found_without_recursion() {
        // Every other line changed: 2,000 matching blocks, each split off the one before.
        let old = numbered(4_000);
        let new: String = (1..=4_000)
            .map(|i| {
                if i % 2 == 0 {
                    format!("line {i}\n")
                } else {
                    format!("changed {i}\n")
                }
            })
            .collect();
        let diff = unified_diff(&old, &new);
        assert_eq!(diff.matches("\n-line").count(), 2_000);
    }
}
