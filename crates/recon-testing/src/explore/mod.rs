//! Perturbation testing: the bugs that happen *between* reconciles, found in `cargo test`.
//!
//! A table checks one reconcile. Controllers break across reconciles: a restart between two
//! writes, a cache that lags behind the server, a watch event that never arrives, another writer
//! landing between a read and a write. [`Scenario::explore`] runs the controller as it runs in
//! production (a `kube::runtime::Controller` on a `kube::Client`, here one of the in-memory
//! server's) through the user's actions once as the *reference run*, then once per
//! *schedule*: the same run with one perturbation, enumerated from the reference run's trace as
//! Sieve does (OSDI 2022) rather than sampled:
//!
//! - **restart** at each write the controller sends, before it lands or after it lands but
//!   before the controller sees the answer (its caches, queue and tasks dropped);
//! - **stale view**: a restarted controller's cached lists (`resourceVersion=0`, what
//!   client-go's informers send, and kube's `watcher::Config::any_semantic()` when paging is
//!   off: `page_size: None`, since kube drops `resourceVersion=0` from a paged list) are served
//!   from before the user's last action, and its watch events held back, for a while; a list
//!   without a resourceVersion is a quorum read and is never stale, as on kube-apiserver 1.36;
//! - **missed, late and coalesced events**: a watch event is dropped (its watch ends, the
//!   history is compacted, the watcher relists after the 410), delivered late, or folded into
//!   the next event of the same object;
//! - **concurrent writer**: another writer changes the object the controller is about to write
//!   (the write then meets a 409 or lands over it, as the server decides);
//! - **transient failures**: a request fails once (500, 429 with `Retry-After`, or a write
//!   that lands but answers 504);
//! - a **fresh controller** on the settled world;
//! - a **fresh start on the final spec** (Acto's oracle, SOSP 2023): the user's actions made
//!   with no controller running, then a controller started on what they left; it must end
//!   where the sequence of changes ended (a renamed child must not leave the old one behind).
//!   When an action needs what the controller makes (deleting its child), the report notes
//!   that this check did not apply.
//!
//! The cluster's own controllers a scenario needs are played by helpers run whenever the
//! controller under test is quiet: the garbage collector is on by default, and
//! [`helpers::roll_out_deployments`] plays the Deployment controller ([`Scenario::helper`]).
//!
//! After each action the controller runs until quiescent: no write changing the world (events
//! and leases aside) for [`quiet_for`](Scenario::quiet_for) of virtual time, on tokio's paused
//! clock, so hours of requeues cost nothing. Every run is checked by the oracles
//! ([`CauseKind`]): it converges to the reference run's final world (compared with uids,
//! resourceVersions, times and generated names normalised; an object deleted and created again
//! is not the same object), it quiesces, nothing is stuck or leaked, no panic, the user's
//! invariants hold, no other writer's change is lost, and a fresh controller finds nothing to
//! change. The [`Report`] groups failures by cause, each with the perturbation in words, the
//! difference, where the runs part, a replay line and a regression test to paste. Runs are
//! deterministic: the same schedule gives the same trace, byte for byte (the exploration runs
//! the reference twice and reports a controller for which it does not).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams};
//! use kube::runtime::{Controller, controller::Action};
//! use recon_testing::explore::{Scenario, UserAction};
//! use serde_json::json;
//!
//! /// Stamps every ConfigMap labelled `stamp: "yes"` with an annotation.
//! async fn reconcile(cm: Arc<ConfigMap>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
//!     let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
//!     let name = cm.metadata.name.clone().unwrap_or_default();
//!     let patch = json!({"metadata": {"annotations": {"stamped": "yes"}}});
//!     api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
//!     Ok(Action::requeue(Duration::from_secs(300)))
//! }
//!
//! fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<kube::Client>) -> Action {
//!     Action::requeue(Duration::from_secs(5))
//! }
//!
//! let report = Scenario::new("stamper")
//!     .controller(|client| {
//!         let config = kube::runtime::watcher::Config::default().labels("stamp=yes");
//!         Controller::new(Api::<ConfigMap>::namespaced(client.clone(), "default"), config)
//!             .run(reconcile, error_policy, Arc::new(client))
//!     })
//!     .action(UserAction::create(&json!({
//!         "apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": {"name": "settings", "namespace": "default", "labels": {"stamp": "yes"}},
//!     })))
//!     .explore();
//! report.assert_clean();
//! assert!(report.explored > 10);
//! ```
//!
//! A schedule is replayed by its id: `RECON_EXPLORE=restart-after-write:2 cargo test ...`, or
//! [`Scenario::only`]; `RECON_EXPLORE_TRACE=1` prints each run's trace (every request, event,
//! reconcile and restart) to stderr. A failing schedule is kept as a regression test with
//! [`Scenario::only`] in a test of its own, or as an entry of a YAML file [`Scenario::kept`]
//! runs; each failure in a report prints both. Long explorations split into parts with
//! [`Scenario::part`] (or `RECON_EXPLORE_PART=i/n`): one test per part, which cargo-nextest's
//! `--partition` then spreads over machines. Schedules of one part run on every core.
//!
//! One kube-rs gap explorations find: after a missed DELETED event the watcher relists without
//! telling `owns`/`watches` what disappeared, so a controller that must react to a deleted
//! child needs a periodic requeue (the `ChildNotWatched` and `RetriesNotFound` fixed twins in
//! `tests/explore/patterns.rs` do this).
//!
//! [`Scenario::settle`] runs the same loop once, unperturbed, and hands back the settled
//! cluster ([`Settled`]) for a hand-written test of the whole controller.
//!
//! The example operators are explored this way in their tests: a plain kube-rs `Controller`
//! (`examples/echo-controller/tests/echo/explore.rs`, whose scenario `cargo xtask bench` also
//! times in schedules per second) and recon `ResourceReconciler`s run through `controller()`
//! (`examples/website-operator/tests/website/explore.rs` and the gateway and function
//! operators').

mod action;
pub mod helpers;
mod oracle;
mod perturbation;
mod report;
mod run;
mod scenario;
mod settle_tests;
mod settled;
mod tap;
mod trace;
mod world;

use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use action::{ActionError, USER_MANAGER, UserAction};
pub use oracle::CauseKind;
pub use perturbation::ScheduleIdError;
pub use report::{Failure, Report};
pub use scenario::Scenario;
pub use settle_tests::{SettleCase, SettleReport, SettleTests};
pub use settled::Settled;
pub use tap::CONCURRENT_ANNOTATION;
pub use world::World;

use oracle::{Finding, Found};
use perturbation::Perturbation;
use run::Outcome;

/// How often a long exploration says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What one schedule found: each finding with where its run parted from the reference, and
/// why its oracle did not apply, if it did not.
#[derive(Clone, Default)]
struct Judged {
    found: Vec<(Finding, String)>,
    inapplicable: Option<String>,
}

impl Scenario {
    /// Runs the controller through the user's actions once, without perturbation, each
    /// action followed by settling: the whole loop, for a hand-written test that then looks at
    /// the cluster ([`Settled`]). Schedules, [`only`](Self::only) and parts play no part.
    pub fn settle(&self) -> Settled {
        let mut outcome = guarded(self, None);
        let missing = self
            .factory
            .is_none()
            .then(|| "the scenario has no controller: give one with `Scenario::controller`".into());
        outcome.findings.extend(
            self.errors
                .iter()
                .cloned()
                .chain(missing)
                .map(|e| Finding::new(CauseKind::Setup, e)),
        );
        Settled::new(outcome)
    }

    /// Runs the reference run, then every schedule it offers (or the one
    /// [`only`](Self::only) names), and reports what failed, grouped by cause.
    pub fn explore(&self) -> Report {
        let mut report = Report {
            scenario: self.name.clone(),
            explored: 0,
            planned: 0,
            reference_requests: 0,
            failures: Vec::new(),
            notes: Vec::new(),
        };
        let mut found: Vec<Found> = Vec::new();
        let mut setup = self.errors.clone();
        if self.factory.is_none() {
            setup.push(
                "the scenario has no controller: give one with `Scenario::controller`".into(),
            );
        }
        let only = match std::env::var("RECON_EXPLORE") {
            Ok(id) if !id.is_empty() => Some(vec![id]),
            _ => self.chosen(&mut setup),
        };
        let part = match std::env::var("RECON_EXPLORE_PART") {
            Ok(text) if !text.is_empty() => parse_part(&text).unwrap_or_else(|e| {
                setup.push(e);
                self.part
            }),
            _ => self.part,
        };
        let chosen: Option<Vec<Perturbation>> = only.map(|ids| {
            ids.iter()
                .filter(|id| *id != "reference")
                .filter_map(|id| {
                    id.parse::<Perturbation>()
                        .map_err(|e| setup.push(e.to_string()))
                        .ok()
                })
                .collect()
        });
        if !setup.is_empty() {
            for cause in setup {
                found.push((
                    "setup".into(),
                    Finding::new(CauseKind::Setup, cause),
                    String::new(),
                ));
            }
            report.failures = self.failures(found, &[]);
            return report;
        }

        let reference = guarded(self, None);
        report.reference_requests = reference
            .trace
            .iter()
            .filter(|e| matches!(e, trace::Entry::Request(_)))
            .count();
        for finding in &reference.findings {
            found.push(("reference".into(), finding.clone(), String::new()));
        }
        let again = guarded(self, None);
        if !trace::same(&again.trace, &reference.trace) {
            let finding = Finding::new(
                CauseKind::Nondeterministic,
                "two reference runs differ: schedules cannot be replayed exactly".into(),
            )
            .with_detail(
                "The controller depends on something besides the requests it is answered: the \
                 wall clock, a random value, a thread of its own, an iteration order."
                    .into(),
            );
            found.push((
                "reference".into(),
                finding,
                oracle::parting(&reference.trace, &again.trace),
            ));
        }

        // A reference run that does not get to its end gives nothing to compare with.
        let broken = reference.findings.iter().any(|f| {
            matches!(
                f.kind,
                CauseKind::NotQuiescent | CauseKind::Panicked | CauseKind::ActionFailed
            )
        });
        let schedules: Vec<Perturbation> = match chosen {
            _ if broken => Vec::new(),
            Some(chosen) => chosen,
            None => perturbation::enumerate(&reference.trace)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| i % part.1 == part.0 - 1)
                .map(|(_, p)| p)
                .take(self.max_schedules)
                .collect(),
        };
        report.planned = schedules.len();
        let results = self.run_all(&reference, &schedules);
        report.explored = results.iter().filter(|r| r.is_some()).count();
        for (schedule, result) in schedules.iter().zip(results) {
            let result = result.unwrap_or_default();
            if let Some(why) = result.inapplicable {
                report.notes.push(format!("{schedule} not checked: {why}"));
            }
            for (finding, parting) in result.found {
                found.push((schedule.to_string(), finding, parting));
            }
        }
        report.failures = self.failures(found, &reference.trace);
        report
    }

    /// The schedule ids [`only`](Self::only) and [`kept`](Self::kept) name, if any; a kept
    /// file that cannot be used is a set-up error.
    fn chosen(&self, setup: &mut Vec<String>) -> Option<Vec<String>> {
        let mut ids = self.only.clone();
        if let Some(path) = &self.kept {
            match report::read_kept(path, &self.name) {
                Ok(kept) => ids.extend(kept),
                Err(e) => setup.push(e),
            }
        }
        (!ids.is_empty() || self.kept.is_some()).then_some(ids)
    }

    /// Runs `schedules` on the scenario's threads until done or out of time; each result is
    /// what its run found, with where it parted from the reference.
    fn run_all(&self, reference: &Outcome, schedules: &[Perturbation]) -> Vec<Option<Judged>> {
        let results: Mutex<Vec<Option<Judged>>> = Mutex::new(vec![None; schedules.len()]);
        let (next, done, failing) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        );
        let workers = self.threads.min(schedules.len());
        let started = Instant::now();
        // Each worker holds a sender: the channel closes when the last one is done.
        let (progress, finished) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let progress = progress.clone();
                let (next, done, failing, results) = (&next, &done, &failing, &results);
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= schedules.len() || started.elapsed() > self.time_budget {
                            break;
                        }
                        let outcome = guarded(self, Some(schedules[i]));
                        let findings = oracle::judge(
                            reference,
                            &outcome,
                            schedules[i],
                            self.convergence.as_ref(),
                        );
                        let parting = if findings.is_empty() {
                            String::new()
                        } else {
                            failing.fetch_add(1, Ordering::SeqCst);
                            oracle::parting(&reference.trace, &outcome.trace)
                        };
                        let found = findings.into_iter().map(|f| (f, parting.clone())).collect();
                        let judged = Judged {
                            found,
                            inapplicable: outcome.inapplicable,
                        };
                        results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(judged);
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                    drop(progress);
                });
            }
            drop(progress);
            let mut said = Instant::now();
            loop {
                let wait = PROGRESS_EVERY.saturating_sub(said.elapsed());
                if let Err(std::sync::mpsc::RecvTimeoutError::Disconnected) =
                    finished.recv_timeout(wait)
                {
                    break;
                }
                if said.elapsed() >= PROGRESS_EVERY {
                    said = Instant::now();
                    eprintln!(
                        "explore {}: {} of {} schedules, {} failing, {:.0?}",
                        self.name,
                        done.load(Ordering::SeqCst),
                        schedules.len(),
                        failing.load(Ordering::SeqCst),
                        started.elapsed(),
                    );
                }
            }
        });
        results.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn failures(&self, found: Vec<Found>, reference: &[trace::Entry]) -> Vec<Failure> {
        oracle::group(found)
            .into_iter()
            .map(|((kind, cause), mut members)| {
                let (schedule, finding, parting) = members.remove(0);
                let perturbation = match schedule.parse::<Perturbation>() {
                    Ok(p) => p.words(reference),
                    Err(_) if schedule == "reference" => "nothing: the reference run".to_owned(),
                    Err(_) => "nothing: the scenario's set-up".to_owned(),
                };
                let mut schedules = vec![schedule.clone()];
                schedules.extend(members.into_iter().map(|(s, _, _)| s));
                Failure {
                    kind,
                    regression: report::regression_test(&self.name, &schedule, kind, &cause),
                    cause,
                    perturbation,
                    detail: finding.detail,
                    parting,
                    replay: report::replay_line(&schedule),
                    schedules,
                }
            })
            .collect()
    }
}

/// A run, with a panic of the run itself (not of the controller, which the run reports)
/// turned into a finding.
fn guarded(scenario: &Scenario, plan: Option<Perturbation>) -> Outcome {
    std::panic::catch_unwind(AssertUnwindSafe(|| run::run(scenario, plan))).unwrap_or_else(
        |payload| Outcome {
            trace: Vec::new(),
            world: World::default(),
            findings: vec![Finding::new(
                CauseKind::Panicked,
                format!(
                    "the run panicked: {}",
                    crate::runner::panic_message(&*payload)
                ),
            )],
            concurrent: None,
            inapplicable: None,
        },
    )
}

/// `i/n` of `RECON_EXPLORE_PART`.
fn parse_part(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("RECON_EXPLORE_PART={text}: expected `i/n` with 1 <= i <= n");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}
