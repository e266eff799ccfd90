//! One run of a scenario under one schedule: a fresh in-memory server on tokio's paused clock,
//! the controller on a task the run owns (so that a restart drops everything it held), the
//! user's actions one at a time, each followed by settling.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use jiff::Timestamp;
use recon_fake::{ApiServer, Clock};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::task::{JoinError, JoinHandle};
use tokio::time::{Instant, sleep_until};

use super::oracle::{CauseKind, Finding};
use super::perturbation::Perturbation;
use super::scenario::Scenario;
use super::tap::{ConcurrentWrite, Run, Signal, Stale, Tap, lock};
use super::trace::{Entry, Request};
use super::world::World;

/// The time every run starts at (its server's clock follows tokio's paused one from there).
const START: &str = "2025-01-01T00:00:00Z";

/// What kube-runtime's `controller::Error::ObjectNotFound` says.
const OBJECT_NOT_FOUND: &str = "that was not found in local store";

/// How kube-runtime's `controller::Error::QueueError` begins: a watch failed.
const QUEUE_ERROR: &str = "event queue error: ";

/// How a watch's 410 ends (kube's watcher lists again by itself).
const EXPIRED: &str = ": Expired";

/// The seed of every run's uids and generated names.
const SEED: u64 = 20_260_101;

/// What one run gave.
pub(crate) struct Outcome {
    pub(crate) trace: Vec<Entry>,
    /// The world once the last step settled.
    pub(crate) world: World,
    /// What the run found wrong on its own (without comparing with another run).
    pub(crate) findings: Vec<Finding>,
    pub(crate) concurrent: Option<ConcurrentWrite>,
    /// Why the schedule's oracle does not apply to this run, if it does not.
    pub(crate) inapplicable: Option<String>,
}

/// The server's clock: tokio's (paused) one, from [`START`].
struct VirtualClock {
    start: Timestamp,
    origin: Instant,
}

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        let elapsed = jiff::SignedDuration::try_from(self.origin.elapsed()).unwrap_or_default();
        self.start.saturating_add(elapsed).unwrap_or(self.start)
    }
}

/// Runs `scenario` under `plan` (the reference run when `None`), on a runtime of its own.
pub(crate) fn run(scenario: &Scenario, plan: Option<Perturbation>) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(drive(scenario, plan)),
        Err(e) => Outcome {
            trace: Vec::new(),
            world: World::default(),
            findings: vec![Finding::new(
                CauseKind::Setup,
                format!("no runtime for the run: {e}"),
            )],
            concurrent: None,
            inapplicable: None,
        },
    }
}

async fn drive(scenario: &Scenario, plan: Option<Perturbation>) -> Outcome {
    let start: Timestamp = START.parse().unwrap_or(Timestamp::UNIX_EPOCH);
    let clock = VirtualClock {
        start,
        origin: Instant::now(),
    };
    let server = ApiServer::builder().clock(clock).seed(SEED).build();
    let (signals_tx, signals) = unbounded_channel();
    let timing = scenario.timing;
    let run = Arc::new(Mutex::new(Run::new(
        plan,
        timing.settle_requests,
        timing.lag,
        signals_tx,
    )));
    let mut driver = Driver {
        scenario,
        server,
        run,
        signals,
        controller: None,
        findings: Vec::new(),
        broken: false,
        inapplicable: None,
    };
    driver.play(plan).await;
    driver.stop();
    let world = World::capture(&driver.server);
    driver.final_checks(&world);
    let mut run = lock(&driver.run);
    if std::env::var_os("RECON_EXPLORE_TRACE").is_some_and(|v| !v.is_empty()) {
        let schedule = plan.map_or_else(|| "reference".to_owned(), |p| p.to_string());
        let lines: Vec<String> = run.trace.iter().map(|e| format!("  {e}\n")).collect();
        eprint!("trace of {schedule}:\n{}", lines.concat());
    }
    Outcome {
        trace: std::mem::take(&mut run.trace),
        world,
        findings: driver.findings,
        concurrent: run.concurrent.take(),
        inapplicable: driver.inapplicable,
    }
}

struct Driver<'a> {
    scenario: &'a Scenario,
    server: ApiServer,
    run: Arc<Mutex<Run>>,
    signals: UnboundedReceiver<Signal>,
    controller: Option<JoinHandle<()>>,
    findings: Vec<Finding>,
    /// The run cannot go on (a step never settled, the controller died).
    broken: bool,
    inapplicable: Option<String>,
}

/// What woke a settling run.
enum Wake {
    Signal(Option<Signal>),
    Ended(Result<(), JoinError>),
    Timer,
}

impl Driver<'_> {
    async fn play(&mut self, plan: Option<Perturbation>) {
        if let Err(e) = self.set_up().await {
            self.findings.push(Finding::new(CauseKind::Setup, e));
            return;
        }
        if plan == Some(Perturbation::FreshStart) {
            self.start_on_final_spec().await;
            return;
        }
        self.start();
        self.step("the controller started").await;
        for (i, action) in self.scenario.actions.iter().enumerate() {
            if self.broken {
                return;
            }
            {
                let mut run = lock(&self.run);
                run.action_revision = self.server.resource_version();
                run.trace.push(Entry::Action(i + 1, action.to_string()));
            }
            if let Err(e) = action.perform(&self.server.setup_client()).await {
                let finding = Finding::new(
                    CauseKind::ActionFailed,
                    format!("user action {} failed: {e}", i + 1),
                );
                self.findings.push(finding);
            }
            self.step(&format!("user action {} ({action})", i + 1))
                .await;
        }
        if plan == Some(Perturbation::RestartAtEnd) && !self.broken {
            let mark = lock(&self.run).trace.len();
            self.restart("everything had settled".to_owned(), false);
            self.step("the fresh controller started").await;
            let changed: Vec<String> = lock(&self.run).trace[mark..]
                .iter()
                .filter_map(|e| match e {
                    Entry::Request(r) if r.changed && !is_record(r) => Some(r.words()),
                    _ => None,
                })
                .collect();
            if !changed.is_empty() {
                self.findings.push(Finding::new(
                    CauseKind::ResyncChanged,
                    format!(
                        "a fresh controller changed the settled world: {}",
                        changed.join("; ")
                    ),
                ).with_detail(
                    "The running controller stopped short of what a fresh one does on the same \
                     world: it missed a change it should have reacted to (an object it does not \
                     watch?), or its reconcile is not idempotent."
                        .to_owned(),
                ));
            }
        }
    }

    /// The user's actions with no controller running, then a controller on what they left.
    /// An action that fails alone (it needs what the controller makes) leaves no final spec.
    async fn start_on_final_spec(&mut self) {
        for (i, action) in self.scenario.actions.iter().enumerate() {
            lock(&self.run)
                .trace
                .push(Entry::Action(i + 1, action.to_string()));
            if let Err(e) = action.perform(&self.server.setup_client()).await {
                self.inapplicable = Some(format!(
                    "user action {} ({action}) fails with no controller running: {e}",
                    i + 1
                ));
                self.broken = true;
                return;
            }
        }
        self.start();
        self.step("the controller started on the final spec").await;
    }

    async fn set_up(&self) -> Result<(), String> {
        for crd in &self.scenario.crds {
            let name = crd.metadata.name.clone().unwrap_or_default();
            self.server
                .install_crd(crd)
                .await
                .map_err(|e| format!("installing the CRD {name}: {e}"))?;
        }
        for given in &self.scenario.givens {
            self.server
                .seed(given)
                .map_err(|e| format!("a given object: {e}"))?;
        }
        Ok(())
    }

    /// Starts the controller of the current generation.
    fn start(&mut self) {
        let generation = lock(&self.run).generation;
        let Some(factory) = self.scenario.factory.clone() else {
            return;
        };
        let tap = Tap {
            run: self.run.clone(),
            server: self.server.clone(),
            inner: self.server.client(),
            generation,
        };
        let client = kube::Client::new(tap, "default");
        let stream = match std::panic::catch_unwind(AssertUnwindSafe(|| factory(client))) {
            Ok(stream) => stream,
            Err(payload) => {
                let message = crate::runner::panic_message(&*payload);
                self.findings.push(Finding::new(
                    CauseKind::Panicked,
                    format!("building the controller panicked: {message}"),
                ));
                self.broken = true;
                return;
            }
        };
        let run = self.run.clone();
        self.controller = Some(tokio::spawn(async move {
            let mut stream = stream;
            while let Some(item) = stream.next().await {
                lock(&run).trace.push(Entry::Reconcile(generation, item));
            }
        }));
    }

    /// Stops the controller: its task, its watches, its requests under way.
    fn stop(&mut self) {
        if let Some(task) = self.controller.take() {
            task.abort();
        }
        let tasks = std::mem::take(&mut lock(&self.run).watch_tasks);
        tasks.iter().for_each(JoinHandle::abort);
    }

    fn restart(&mut self, why: String, stale: bool) {
        self.stop();
        {
            let mut run = lock(&self.run);
            run.generation += 1;
            let generation = run.generation;
            if stale {
                run.stale = Some(Stale {
                    generation,
                    revision: run.action_revision,
                    until: Instant::now() + self.scenario.timing.lag,
                });
            }
            run.trace.push(Entry::Restart(generation, why));
        }
        self.start();
    }

    /// Settles, then checks the invariants on the world.
    async fn step(&mut self, after: &str) {
        if self.broken {
            return;
        }
        self.settle(after).await;
        if self.scenario.invariants.is_empty() {
            return;
        }
        let world = World::capture(&self.server);
        for (name, check) in &self.scenario.invariants {
            if let Err(why) = check(&world) {
                let finding = Finding::new(CauseKind::Invariant, format!("{name}: {why}"))
                    .with_detail(format!("checked after {after}"));
                self.findings.push(finding);
            }
        }
    }

    /// Runs until no write changes anything for `quiet_for` (helpers included), handling the
    /// tap's signals; a step that never gets there breaks the run.
    async fn settle(&mut self, after: &str) {
        let timing = self.scenario.timing;
        lock(&self.run).begin_step();
        let limit = Instant::now() + timing.settle_limit;
        loop {
            let quiet_at = lock(&self.run).last_change + timing.quiet_for;
            let wake = {
                let signals = &mut self.signals;
                let controller = &mut self.controller;
                tokio::select! {
                    biased;
                    signal = signals.recv() => Wake::Signal(signal),
                    ended = ended(controller) => Wake::Ended(ended),
                    () = sleep_until(quiet_at.min(limit)) => Wake::Timer,
                }
            };
            match wake {
                Wake::Signal(Some(Signal::Restart { why, stale })) => self.restart(why, stale),
                Wake::Signal(Some(Signal::Exhausted)) => {
                    self.never_settled(after, "requests");
                    return;
                }
                Wake::Signal(None) => {}
                Wake::Ended(result) => {
                    self.controller = None;
                    self.ended(result);
                    return;
                }
                Wake::Timer => {
                    let now = Instant::now();
                    if lock(&self.run).last_change + timing.quiet_for > now {
                        if now >= limit {
                            self.never_settled(after, "time");
                            return;
                        }
                        continue;
                    }
                    if !self.help().await {
                        return;
                    }
                }
            }
        }
    }

    /// Runs the helpers; whether they changed anything.
    async fn help(&mut self) -> bool {
        let before = self.server.resource_version();
        if self.scenario.garbage_collector {
            let collected = self.server.collect_garbage();
            if !collected.is_empty() {
                let removed: Vec<String> = collected
                    .removed()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                let words = format!("garbage collector removed {}", removed.join(", "));
                lock(&self.run).trace.push(Entry::Helper(words));
            }
        }
        for (name, helper) in &self.scenario.helpers {
            let revision = self.server.resource_version();
            helper(self.server.setup_client()).await;
            if self.server.resource_version() != revision {
                lock(&self.run)
                    .trace
                    .push(Entry::Helper(format!("{name} wrote")));
            }
        }
        let changed = self.server.resource_version() != before;
        if changed {
            lock(&self.run).last_change = Instant::now();
        }
        changed
    }

    fn never_settled(&mut self, after: &str, by: &str) {
        self.broken = true;
        let run = lock(&self.run);
        let mut counts: Vec<(String, usize)> = Vec::new();
        let writes = run.trace.iter().rev().filter_map(|e| match e {
            Entry::Request(r) if r.changed && !is_record(r) => Some(r.words()),
            _ => None,
        });
        for words in writes.take(50) {
            match counts.iter_mut().find(|(w, _)| *w == words) {
                Some((_, n)) => *n += 1,
                None => counts.push((words, 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let repeated: Vec<String> = counts
            .iter()
            .filter(|(_, n)| *n > 1)
            .map(|(w, n)| format!("{w} ({n}x)"))
            .collect();
        let limit = match by {
            "requests" => format!("{} requests", self.scenario.timing.settle_requests),
            _ => format!("{:?} of virtual time", self.scenario.timing.settle_limit),
        };
        let cause = if repeated.is_empty() {
            "the controller never stops writing".to_owned()
        } else {
            format!(
                "the controller never stops writing: {}",
                repeated.join("; ")
            )
        };
        drop(run);
        self.findings.push(
            Finding::new(CauseKind::NotQuiescent, cause).with_detail(format!(
                "after {after} it still changed the world after {limit}: a write loop, or a \
                 status that changes on every reconcile (a time, a counter, a random value)"
            )),
        );
    }

    fn ended(&mut self, result: Result<(), JoinError>) {
        self.broken = true;
        let generation = lock(&self.run).generation;
        let (entry, cause) = match result {
            Err(e) if e.is_panic() => {
                let message = crate::runner::panic_message(&*e.into_panic());
                (
                    Entry::Panic(generation, message.clone()),
                    format!("the controller panicked: {message}"),
                )
            }
            _ => (
                Entry::Restart(generation, "its stream ended".to_owned()),
                "the controller's stream ended".to_owned(),
            ),
        };
        lock(&self.run).trace.push(entry);
        self.findings.push(Finding::new(CauseKind::Panicked, cause));
    }

    /// Checks of the final world and the last step: nothing stuck, nothing leaked.
    fn final_checks(&mut self, world: &World) {
        if self.broken {
            return;
        }
        let run = lock(&self.run);
        let since_change = run
            .trace
            .iter()
            .rposition(|e| matches!(e, Entry::Request(r) if r.changed && !is_record(r)))
            .map_or(0, |i| i + 1);
        // kube's `ObjectNotFound` (a reconcile scheduled for an object since deleted) is
        // reported once per schedule entry and never retried, and a watch that expired (each
        // one a dropped event's compaction ends gives one) is relisted by its watcher: neither
        // is a reconcile failing. A watch that keeps failing otherwise (a 403) still counts.
        let reconciles: Vec<&Result<String, String>> = run.trace[since_change..]
            .iter()
            .filter_map(|e| match e {
                Entry::Reconcile(_, result) => Some(result),
                _ => None,
            })
            .filter(|r| {
                !r.as_ref().is_err_and(|e| {
                    e.contains(OBJECT_NOT_FOUND)
                        || (e.starts_with(QUEUE_ERROR) && e.ends_with(EXPIRED))
                })
            })
            .collect();
        let errors = reconciles.iter().filter(|r| r.is_err()).count();
        if let (true, Some(Err(last))) = (errors >= 3, reconciles.last()) {
            let finding = Finding::new(
                CauseKind::Stuck,
                format!("a reconcile fails forever: {last}"),
            )
            .with_detail(format!(
                "{errors} reconciles failed after the world last changed, the last one too"
            ));
            self.findings.push(finding);
        }
        drop(run);
        for leak in world.leaks() {
            self.findings.push(Finding::new(CauseKind::Leaked, leak));
        }
    }
}

async fn ended(controller: &mut Option<JoinHandle<()>>) -> Result<(), JoinError> {
    match controller {
        Some(task) => task.await,
        None => futures::future::pending().await,
    }
}

/// Writes of records (events) and leadership (leases), which do not count as changes of the
/// world the controller manages.
pub(crate) fn is_record(request: &Request) -> bool {
    matches!(request.route.resource.as_str(), "events" | "leases")
}
