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
    /// A test to paste that keeps the first schedule as a regression test.
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

/// A test that keeps `schedule` of the scenario as a regression test.
pub(crate) fn regression_test(scenario: &str, schedule: &str) -> String {
    let name = crate::runner::snapshot_name(&format!("{scenario}_{schedule}"));
    format!(
        "#[test]\nfn regression_{name}() {{\n    // `scenario()`: the Scenario \"{scenario}\" as your exploration test builds it.\n    scenario().only(\"{schedule}\").explore().assert_clean();\n}}"
    )
}
