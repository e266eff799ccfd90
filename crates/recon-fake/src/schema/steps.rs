//! Field paths written into one buffer by the walks over schemas and values. A schema (and a
//! value with it) may nest as deep as Go reads, so every walk keeps its own list of what is
//! left to do rather than recursing; each item of it holds the length of its parent's path and
//! the [`Step`] below that, and going there truncates the buffer and writes the step. No path
//! is copied per level (a deep path is tens of kilobytes: a copy per level would take the
//! square of that).

use std::fmt::Write as _;

/// One step down a path.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// None: the same path (another schema of the same value).
    Here,
    /// `.name`, or `name` at the start of the path.
    Field(&'a str),
    /// `.name`, even at the start of the path.
    Member(&'a str),
    /// `[key]`.
    Key(&'a str),
    /// `[i]`.
    Index(usize),
    /// `.keyword[name]`, as schema paths name a property (`.properties[spec]`).
    Named(&'static str, &'a str),
    /// `.keyword[i]`, as schema paths name a clause (`.allOf[0]`).
    Nth(&'static str, usize),
}

impl Step<'_> {
    /// Makes `path` the path of this step below its first `parent` bytes.
    pub(crate) fn below(self, path: &mut String, parent: usize) {
        path.truncate(parent);
        // Written piece by piece: formatting is slower, and only numbers need it. (Writing into
        // a `String` cannot fail.)
        match self {
            Step::Here => {}
            Step::Field(name) if path.is_empty() => path.push_str(name),
            Step::Field(name) | Step::Member(name) => {
                path.push('.');
                path.push_str(name);
            }
            Step::Key(key) => {
                path.push('[');
                path.push_str(key);
                path.push(']');
            }
            Step::Index(i) => {
                let _ = write!(path, "[{i}]");
            }
            Step::Named(keyword, name) => {
                path.push('.');
                path.push_str(keyword);
                path.push('[');
                path.push_str(name);
                path.push(']');
            }
            Step::Nth(keyword, i) => {
                let _ = write!(path, ".{keyword}[{i}]");
            }
        }
    }
}
