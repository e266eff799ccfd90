//! What an exploration tells its user: every failure once, by cause, with the perturbation in
//! words, the difference it made, where the runs parted, and how to replay it.

use std::fmt;

use super::oracle::CauseKind;

/// One cause of failure and the schedules that found it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Failure {
    /// Which oracle failed.
    pub kind: CauseKind,
    /// What went wrong (the same for every schedule of the group).
    pub cause: String,
    /// The schedules that found it, the first one first (`reference` for the unperturbed run).
    pub schedules: Vec<String>,
    /// What the first schedule did, in words.
    pub perturbation: String,
    /// More about it: a diff of the final worlds, the writes that repeat.
    pub detail: String,
    /// Where the first schedule's trace parts from the reference run's.
    pub parting: String,
    /// One line that runs the first schedule again.
    pub replay: String,
    /// How to keep the first schedule as a regression test: a Rust test to paste, or an
    /// entry for a YAML file of kept schedules ([`Scenario::kept`](super::Scenario::kept)).
    pub regression: String,
}

/// What [`Scenario::explore`](super::Scenario::explore) found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The scenario's name.
    pub scenario: String,
    /// Schedules run (the reference run not counted).
    pub explored: usize,
    /// Schedules this part had to run.
    pub planned: usize,
    /// Requests the controller sent in the reference run.
    pub reference_requests: usize,
    /// The failures, grouped by cause.
    pub failures: Vec<Failure>,
    /// Schedules whose oracle did not apply, and why (the fresh start, when a user action
    /// needs what the controller makes).
    pub notes: Vec<String>,
}

impl Report {
    /// Whether every schedule passed.
    pub fn is_clean(&self) -> bool {
        self.failures.is_empty()
    }

    /// The failures of `kind`.
    pub fn failures_of(&self, kind: CauseKind) -> impl Iterator<Item = &Failure> + '_ {
        self.failures.iter().filter(move |f| f.kind == kind)
    }

    /// Panics with the report unless every schedule passed.
    #[track_caller]
    pub fn assert_clean(&self) {
        assert!(self.is_clean(), "{self}");
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "exploration of {}: {} of {} schedules explored (the reference run sent {} \
             requests), {} failure{}",
            self.scenario,
            self.explored,
            self.planned,
            self.reference_requests,
            self.failures.len(),
            if self.failures.len() == 1 { "" } else { "s" },
        )?;
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        for (i, failure) in self.failures.iter().enumerate() {
            writeln!(f)?;
            writeln!(f, "{}. [{:?}] {}", i + 1, failure.kind, failure.cause)?;
            let others = failure.schedules.len() - 1;
            write!(f, "   found by {}", failure.schedules[0])?;
            if others > 0 {
                let shown: Vec<&str> = failure.schedules[1..]
                    .iter()
                    .take(8)
                    .map(String::as_str)
                    .collect();
                write!(f, " and {others} more ({}", shown.join(", "))?;
                if others > shown.len() {
                    write!(f, ", ...")?;
                }
                write!(f, ")")?;
            }
            writeln!(f)?;
            writeln!(f, "   what happened: {}", failure.perturbation)?;
            if !failure.detail.is_empty() {
                for line in failure.detail.lines() {
                    writeln!(f, "   {line}")?;
                }
            }
            if !failure.parting.is_empty() {
                writeln!(f, "   where the runs part:")?;
                for line in failure.parting.lines() {
                    writeln!(f, "   {line}")?;
                }
            }
            writeln!(f, "   replay: {}", failure.replay)?;
            writeln!(f, "   regression test:")?;
            for line in failure.regression.lines() {
                writeln!(f, "     {line}")?;
            }
        }
        Ok(())
    }
}

/// The line that replays `schedule` in the test running now.
pub(crate) fn replay_line(schedule: &str) -> String {
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(|n| format!(" -- --exact {n}"))
        .unwrap_or_default();
    let package = std::env::var("CARGO_PKG_NAME")
        .map(|p| format!(" -p {p}"))
        .unwrap_or_default();
    format!("RECON_EXPLORE={schedule} cargo test{package}{test}")
}

/// One schedule kept as a regression test, in a YAML file [`Scenario::kept`] reads.
///
/// [`Scenario::kept`]: super::Scenario::kept
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    scenario: String,
    schedule: String,
    /// What the schedule found when it was kept, for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    found: Option<String>,
}

/// The ids of the schedules of `scenario` kept in the YAML file at `path`.
pub(crate) fn read_kept(path: &std::path::Path, scenario: &str) -> Result<Vec<String>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("kept schedules {shown}: {e}"))?;
    let entries: Vec<Kept> = serde_saphyr::from_str(&text).map_err(|e| {
        format!("kept schedules {shown}: not a list of {{scenario, schedule, found}}: {e}")
    })?;
    let ids: Vec<String> = entries
        .into_iter()
        .filter(|k| k.scenario == scenario)
        .map(|k| k.schedule)
        .collect();
    if ids.is_empty() {
        return Err(format!(
            "kept schedules {shown}: no schedule of scenario `{scenario}`"
        ));
    }
    Ok(ids)
}

/// How to keep `schedule` of the scenario as a regression test: a Rust test, or a YAML entry.
pub(crate) fn regression_test(
    scenario: &str,
    schedule: &str,
    kind: CauseKind,
    cause: &str,
) -> String {
    let name = crate::runner::snapshot_name(&format!("{scenario}_{schedule}"));
    let entry = Kept {
        scenario: scenario.to_owned(),
        schedule: schedule.to_owned(),
        found: Some(format!("[{kind:?}] {cause}")),
    };
    let yaml = serde_saphyr::to_string(&vec![entry]).unwrap_or_default();
    format!(
        "#[test]\nfn regression_{name}() {{\n    // `scenario()`: the Scenario \"{scenario}\" as your exploration test builds it.\n    scenario().only(\"{schedule}\").explore().assert_clean();\n}}\n# or, in the YAML file of kept schedules `scenario().kept(path)` runs:\n{}",
        yaml.trim_end()
    )
}
