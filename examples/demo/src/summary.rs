//! What the demo prints at the end: each step with the writes the operators sent in it, the
//! state the objects ended in, the webhook decisions, and the events published. It also carries
//! the transcript of what was printed on the way.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::output::Line;

/// One step of the scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    /// What the step did.
    pub name: String,
    /// The writes the operators sent during the step, as `VERB resource` → count.
    pub writes: BTreeMap<String, usize>,
}

/// The demo's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Where it ran.
    pub target: String,
    /// The steps, in order.
    pub steps: Vec<StepReport>,
    /// How the objects ended, a line each.
    pub state: Vec<String>,
    /// What the admission webhooks answered, a line each.
    pub webhooks: Vec<String>,
    /// The type and reason of every event the operators published.
    pub events: BTreeSet<String>,
    /// What was printed on the way, in order.
    pub transcript: Vec<Line>,
}

impl Summary {
    /// The transcript without what varies from run to run, a line each: how many reconciles
    /// that write nothing follow one that wrote depends on whether kube's controller gets the
    /// watch events that trigger them together or apart. So a reconcile that wrote nothing is
    /// kept only right after one of the same object that wrote (the scenario waits for that one
    /// before it goes on), as one. What a snapshot test compares.
    pub fn stable_transcript(&self) -> String {
        let mut out = Vec::new();
        let mut last_wrote: BTreeMap<&str, bool> = BTreeMap::new();
        for line in &self.transcript {
            if let Line::Reconcile { object, wrote, .. } = line {
                let after_a_write = last_wrote.insert(object, *wrote).unwrap_or(false);
                if !wrote && !after_a_write {
                    continue;
                }
            }
            out.push(line.text());
        }
        out.join("\n")
    }

    /// How this run (on a cluster) differs from `embedded`, the run on the in-memory server,
    /// a line each: the same steps, final state and webhook answers are expected, and every
    /// event the embedded run published (a cluster's own controllers publish more).
    pub fn differences_from(&self, embedded: &Summary) -> Vec<String> {
        let mut out = Vec::new();
        let names = |s: &Summary| s.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        if names(self) != names(embedded) {
            out.push(format!(
                "steps: {:?}, embedded {:?}",
                names(self),
                names(embedded)
            ));
        }
        for (what, mine, theirs) in [
            ("final state", &self.state, &embedded.state),
            ("webhooks", &self.webhooks, &embedded.webhooks),
        ] {
            for line in theirs.iter().filter(|l| !mine.contains(l)) {
                out.push(format!("{what}: missing `{line}`"));
            }
            for line in mine.iter().filter(|l| !theirs.contains(l)) {
                out.push(format!("{what}: unexpected `{line}`"));
            }
        }
        for event in embedded.events.difference(&self.events) {
            out.push(format!("events: `{event}` was not published"));
        }
        out
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== summary ({})", self.target)?;
        writeln!(f, "steps, and the writes the operators sent in each:")?;
        for (i, step) in self.steps.iter().enumerate() {
            writeln!(f, "  {}. {}", i + 1, step.name)?;
            writeln!(f, "       {}", describe_writes(&step.writes))?;
        }
        writeln!(f, "final state:")?;
        for line in &self.state {
            writeln!(f, "  {line}")?;
        }
        writeln!(f, "admission webhooks:")?;
        for line in &self.webhooks {
            writeln!(f, "  {line}")?;
        }
        writeln!(f, "events the operators published (type and reason):")?;
        let events: Vec<&str> = self.events.iter().map(String::as_str).collect();
        writeln!(f, "  {}", events.join(", "))?;
        if self
            .steps
            .iter()
            .any(|s| s.writes.contains_key(SERIES_REPEAT))
        {
            writeln!(
                f,
                "(an event series repeat: an event of the same type, reason, action and object as \
                 an earlier one, which kube's Recorder publishes as a PATCH of the earlier one's \
                 series count)"
            )?;
        }
        Ok(())
    }
}

/// How kube's `Recorder` publishes a repeat, in [`StepReport::writes`].
const SERIES_REPEAT: &str = "PATCH events";

/// `POST configmaps ×2, new events ×2, event series repeats ×4`: the events last, named for what
/// their requests are (kube's `Recorder` publishes an event like an earlier one as a PATCH of the
/// earlier one's series count).
fn describe_writes(writes: &BTreeMap<String, usize>) -> String {
    if writes.is_empty() {
        return "no writes".to_owned();
    }
    let mut list: Vec<String> = writes
        .iter()
        .filter(|(what, _)| !what.ends_with(" events"))
        .map(|(what, n)| format!("{what} ×{n}"))
        .collect();
    for (what, name) in [
        ("POST events", "new events"),
        (SERIES_REPEAT, "event series repeats"),
    ] {
        if let Some(n) = writes.get(what) {
            list.push(format!("{name} ×{n}"));
        }
    }
    // Anything else sent to events (an update or a delete) keeps its own name.
    for (what, n) in writes.iter().filter(|(w, _)| {
        w.ends_with(" events") && !matches!(w.as_str(), "POST events" | SERIES_REPEAT)
    }) {
        list.push(format!("{what} ×{n}"));
    }
    list.join(", ")
}
