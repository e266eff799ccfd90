//! The result of running a table: which cases passed, failed or were skipped, and every
//! mismatch of every failed case, rendered for a terminal or for a log.

use std::fmt::Write as _;

use recon_fake::rbac::NeededRules;

use crate::compare::Mismatch;
use crate::diff::{paint, use_color};

/// The variable that makes [`Report::assert_passed`] print what a table needed.
const NEEDED_RBAC_VAR: &str = "RECON_NEEDED_RBAC";

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseStatus {
    /// Every expectation was met.
    Passed,
    /// Marked `skip`, or left out because other cases are focused.
    Skipped,
    /// At least one expectation was not met.
    Failed(Vec<Mismatch>),
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseReport {
    /// The case name.
    pub name: String,
    /// How it ended.
    pub status: CaseStatus,
}

/// The result of a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Every case, in the order they ran.
    pub cases: Vec<CaseReport>,
    /// How many cases are focused (a focused table never passes: focus is for local work).
    pub focused: usize,
    /// The RBAC rules the code under test needed across the cases that ran: every request it
    /// sent, allowed or not (print it with [`NeededRules::to_cluster_role_yaml`], compare it
    /// with a manifest with [`OperatorRbac::check_grants`](crate::OperatorRbac::check_grants)).
    pub needed: NeededRules,
}

impl Report {
    /// Whether every case passed and none is focused.
    pub fn passed(&self) -> bool {
        self.focused == 0 && self.failures().next().is_none()
    }

    fn failures(&self) -> impl Iterator<Item = (&str, &[Mismatch])> {
        self.cases.iter().filter_map(|c| match &c.status {
            CaseStatus::Failed(m) => Some((c.name.as_str(), m.as_slice())),
            _ => None,
        })
    }

    /// The report as text: a summary, then each failed case with each mismatch.
    pub fn render(&self, color: bool) -> String {
        let (bold_red, reset) = if color {
            ("\x1b[1;31m", "\x1b[0m")
        } else {
            ("", "")
        };
        let failed = self.failures().count();
        let skipped = self
            .cases
            .iter()
            .filter(|c| c.status == CaseStatus::Skipped)
            .count();
        let mut out = format!(
            "{} of {} cases failed, {} skipped\n",
            failed,
            self.cases.len(),
            skipped
        );
        if self.focused > 0 {
            let _ = writeln!(
                out,
                "{bold_red}{} of {} cases are focused: remove `focus` before committing{reset}",
                self.focused,
                self.cases.len()
            );
        }
        for (name, mismatches) in self.failures() {
            let _ = writeln!(out, "\n{bold_red}case {name:?} failed:{reset}");
            for m in mismatches {
                let detail = if color {
                    paint(&m.detail)
                } else {
                    m.detail.clone()
                };
                let _ = writeln!(out, "  {}: {}", m.expectation, indent(&detail));
            }
        }
        out
    }

    /// Panics with the rendered report (coloured on a terminal) unless every case passed.
    /// With `RECON_NEEDED_RBAC` set, it first prints to stderr what the cases needed, as a
    /// ClusterRole ([`Report::needed`]).
    #[track_caller]
    pub fn assert_passed(&self) {
        if std::env::var_os(NEEDED_RBAC_VAR).is_some() {
            eprintln!(
                "{NEEDED_RBAC_VAR}: what the cases needed:\n{}",
                self.needed.to_cluster_role_yaml("needed")
            );
        }
        if !self.passed() {
            panic!("{}", self.render(use_color()));
        }
    }
}

/// Indents every line after the first, so multi-line details stay under their case.
fn indent(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or("").to_owned();
    for line in lines {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}
