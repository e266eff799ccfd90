//! What the demo prints, as it prints it: each line goes to `tracing` (what `RUST_LOG` shows,
//! in the format of [`crate::logging`]) and into the transcript the summary carries (what the
//! snapshot test reads, whatever `RUST_LOG` says).

use std::sync::{Arc, Mutex};

use crate::observe::lock;

/// One thing the demo printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `== create a Function`: a step begins.
    Step(String),
    /// A reconcile, and under it each write it sent and each event it published.
    Reconcile {
        /// `Gateway edge`: the object reconciled.
        object: String,
        /// Whether it sent a write.
        wrote: bool,
        /// The lines printed.
        text: String,
    },
    /// Anything else: what the scenario does or plays, the webhooks' answers, events published
    /// by others than the operators.
    Note(String),
}

impl Line {
    /// The line as printed.
    pub fn text(&self) -> String {
        match self {
            Line::Step(name) => format!("== {name}"),
            Line::Reconcile { text, .. } | Line::Note(text) => text.clone(),
        }
    }
}

/// The printer, shared by the scenario and the operators' reconciles. Clones share the
/// transcript.
#[derive(Debug, Clone, Default)]
pub(crate) struct Output {
    transcript: Arc<Mutex<Vec<Line>>>,
}

impl Output {
    pub(crate) fn step(&self, name: &str) {
        self.print(Line::Step(name.to_owned()));
    }

    pub(crate) fn note(&self, text: impl Into<String>) {
        self.print(Line::Note(text.into()));
    }

    /// A reconcile's block: `text` is printed, `with_reads` (the same block with the reads
    /// listed too) instead when debug lines are on.
    pub(crate) fn reconcile(&self, object: &str, wrote: bool, text: String, with_reads: String) {
        // One event for the whole block, so that no other line lands inside it.
        let shown = if tracing::enabled!(tracing::Level::DEBUG) {
            &with_reads
        } else {
            &text
        };
        tracing::info!("{shown}");
        lock(&self.transcript).push(Line::Reconcile {
            object: object.to_owned(),
            wrote,
            text,
        });
    }

    fn print(&self, line: Line) {
        tracing::info!("{}", line.text());
        lock(&self.transcript).push(line);
    }

    /// Everything printed so far.
    pub(crate) fn transcript(&self) -> Vec<Line> {
        lock(&self.transcript).clone()
    }
}
