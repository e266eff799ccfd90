//! What the demo prints at the end: each step with the writes the operators sent in it, the
//! state the objects ended in, the webhook decisions, and the events published.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One step of the scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    /// What the step did.
    pub name: String,
    /// The writes the operators sent during the step, as `VERB resource` → count; `None`
    /// against a real cluster, which keeps no request log.
    pub writes: Option<BTreeMap<String, usize>>,
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
    /// The type and reason of every event published.
    pub events: BTreeSet<String>,
}

impl Summary {
    /// The summary without what varies from run to run: which writes fall in which step
    /// depends on how the controllers' watches interleave with the steps. What a snapshot test
    /// compares.
    pub fn redacted(&self) -> String {
        let mut stable = self.clone();
        for step in &mut stable.steps {
            step.writes = Some([("[writes]".to_owned(), 0)].into());
        }
        stable.to_string().replace("[writes] ×0", "[writes]")
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
            match &step.writes {
                None => writeln!(f, "       (a cluster keeps no request log)")?,
                Some(writes) if writes.is_empty() => writeln!(f, "       no writes")?,
                Some(writes) => {
                    let list: Vec<String> =
                        writes.iter().map(|(w, n)| format!("{w} ×{n}")).collect();
                    writeln!(f, "       {}", list.join(", "))?;
                }
            }
        }
        writeln!(f, "final state:")?;
        for line in &self.state {
            writeln!(f, "  {line}")?;
        }
        writeln!(f, "admission webhooks:")?;
        for line in &self.webhooks {
            writeln!(f, "  {line}")?;
        }
        writeln!(f, "events published (type and reason):")?;
        let events: Vec<&str> = self.events.iter().map(String::as_str).collect();
        writeln!(f, "  {}", events.join(", "))
    }
}
