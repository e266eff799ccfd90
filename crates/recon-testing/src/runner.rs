//! Running cases: build the clusters, run the reconcile, observe, compare, report. Shared by
//! every table type; what differs (how the reconcile is run) is passed in.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use jiff::Timestamp;
use recon_core::Outcome;
use recon_core::admission::AdmissionRequest;
use recon_fake::rbac::NeededRules;
use serde_json::Value;

use crate::admission;
use crate::case::TestCase;
use crate::compare::{Mismatch, Options, compare};
use crate::env::{Cluster, Givens, Templates, TestEnv};
use crate::error_spec::ObservedError;
use crate::expect::{ErrorSignal, Expectations, OutcomeSpec};
use crate::normalize::as_written;
use crate::observe::observe;
use crate::rbac::{OperatorRbac, first_forbidden};
use crate::report::{CaseReport, CaseStatus, Report};

/// The request time of cases that do not set one.
pub const DEFAULT_NOW: &str = "2024-01-01T00:00:00Z";

/// Receives what a `snapshot` case observed (see [`snapshot!`](crate::snapshot)).
pub type SnapshotSink = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// What a case that ran observed, for regenerating its fixture.
pub(crate) struct Observed {
    /// What the reconcile did, in the default cluster.
    pub(crate) expect: Expectations,
    /// What it did in each additional cluster.
    pub(crate) configs: BTreeMap<String, Expectations>,
    /// Whether writing these observations as the case's expectations makes the case pass: it
    /// failed only on expectations (not on a panic, a hook, its setup or a snapshot).
    pub(crate) rewritable: bool,
}

/// What running the reconcile gave.
pub(crate) struct Executed {
    /// The outcome, or the error.
    pub(crate) result: Result<Outcome, ObservedError>,
    /// The outcome a failed reconcile gathered before its error (or its error policy decided).
    pub(crate) error_outcome: Outcome,
    /// Whether a failed reconcile's outcome is compared with the case's `result`: a
    /// sub-reconciler's (what a `Sequence` hands on) or one an error policy decided.
    pub(crate) requeue_on_error: bool,
    /// The signals the error carried.
    pub(crate) error_signals: Vec<ErrorSignal>,
    /// The panic message, if it panicked.
    pub(crate) panic: Option<String>,
    /// Sub-reconcilers: the resource afterwards.
    pub(crate) resource: Option<Value>,
    /// Sub-reconcilers: what the stash held afterwards.
    pub(crate) stashed: BTreeMap<String, Value>,
    /// Sub-reconcilers that ran: the resource to compare with (the expected one, or the given
    /// one when the case expects it unchanged), as the resource's Rust type writes it.
    pub(crate) expected_resource: Option<Value>,
    /// Admission webhooks that answered: the response, as a case writes it.
    pub(crate) response: Option<Value>,
    /// What the run found wrong beyond the expectations (a response kube-apiserver would
    /// refuse); these fail the case and are not settled by rewriting its expectations.
    pub(crate) problems: Vec<Mismatch>,
}

/// Whether a case builds its reconciler with the table's factory, or runs the one its parent
/// case built (an additional reconcile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    No,
    Yes,
}

/// The reconciler of the case running: built by the factory, or, for an additional
/// reconcile, the one the case it belongs to built.
pub(crate) struct Built<T>(std::cell::RefCell<Option<std::rc::Rc<T>>>);

impl<T> Built<T> {
    pub(crate) fn new() -> Self {
        Built(std::cell::RefCell::new(None))
    }

    /// The reconciler to run: the last one built when `reuse` says so (and there is one),
    /// else a new one from `build`; a panicking factory's payload.
    pub(crate) fn get(
        &self,
        reuse: Reuse,
        build: impl FnOnce() -> T,
    ) -> Result<std::rc::Rc<T>, Box<dyn std::any::Any + Send>> {
        if reuse == Reuse::Yes
            && let Some(built) = self.0.borrow().clone()
        {
            return Ok(built);
        }
        let built = std::rc::Rc::new(std::panic::catch_unwind(AssertUnwindSafe(build))?);
        *self.0.borrow_mut() = Some(built.clone());
        Ok(built)
    }
}

/// What the runner prepared for a case before its run.
pub(crate) enum Input {
    /// Reconciler cases: nothing.
    Nothing,
    /// Sub-reconciler cases: the resource, as stored in the cluster.
    Resource(Value),
    /// Admission webhook cases: the request, its left-out fields filled in.
    Request(Box<AdmissionRequest>),
}

impl Executed {
    /// Runs `reconcile`, turning a panic into a report instead of a crash.
    pub(crate) async fn catching(
        reconcile: impl Future<Output = Result<Outcome, recon_core::Error>>,
    ) -> Self {
        let mut error_outcome = Outcome::done();
        let mut error_signals = Vec::new();
        let (result, panic) = match AssertUnwindSafe(reconcile).catch_unwind().await {
            Ok(Ok(outcome)) => (Ok(outcome), None),
            Ok(Err(err)) => {
                error_outcome = err.outcome();
                error_signals = ErrorSignal::of(&err);
                (Err(ObservedError::of(&err)), None)
            }
            Err(payload) => {
                let message = panic_message(&*payload);
                let text = format!("panicked: {message}");
                (Err(ObservedError::text(text)), Some(message))
            }
        };
        let mut executed = Executed::ended(result, error_outcome, panic);
        executed.error_signals = error_signals;
        executed
    }

    fn ended(
        result: Result<Outcome, ObservedError>,
        error_outcome: Outcome,
        panic: Option<String>,
    ) -> Self {
        Executed {
            result,
            error_outcome,
            requeue_on_error: false,
            error_signals: Vec::new(),
            panic,
            resource: None,
            stashed: BTreeMap::new(),
            expected_resource: None,
            response: None,
            problems: Vec::new(),
        }
    }

    /// The factory building the reconciler panicked (with `payload`): the case fails.
    pub(crate) fn factory_panicked(payload: Box<dyn std::any::Any + Send>) -> Self {
        let message = format!("the factory panicked: {}", panic_message(&*payload));
        let error = ObservedError::text(message.clone());
        Executed::ended(Err(error), Outcome::done(), Some(message))
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Whether rewriting a case's expectations can settle `mismatch`.
fn rewritable(mismatch: &Mismatch) -> bool {
    ["expect.", "additionalConfigs."]
        .iter()
        .any(|prefix| mismatch.expectation.starts_with(prefix))
}

/// Which kind of table a case belongs to, to check it has what that kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableKind {
    Reconciler,
    SubReconciler,
    AdmissionWebhook,
}

impl TableKind {
    /// What runs, in messages.
    fn what_runs(self) -> &'static str {
        match self {
            TableKind::Reconciler | TableKind::SubReconciler => "the reconcile",
            TableKind::AdmissionWebhook => "the webhook",
        }
    }
}

fn validate(case: &TestCase, kind: TableKind) -> Vec<String> {
    let mut errors = case.setup_errors.clone();
    if kind != TableKind::AdmissionWebhook {
        if case.admission_request.is_some() {
            errors.push("`admissionRequest` belongs to admission webhook cases".to_owned());
        }
        if case.expect.response.is_some() {
            errors.push("`response` belongs to admission webhook cases".to_owned());
        }
    }
    for (name, config) in &case.additional_configs {
        if config.expect.response.is_some() {
            errors.push(format!(
                "`additionalConfigs.{name}.expect.response`: the response is the case's; expect \
                 it in `expect.response`"
            ));
        }
    }
    match kind {
        TableKind::Reconciler => {
            if case.request.is_none() {
                errors.push("a reconciler case needs a `request`".to_owned());
            }
            if case.resource.is_some() || case.expect.resource.is_some() {
                errors.push(
                    "`resource` belongs to sub-reconciler cases; give the object in `given`"
                        .to_owned(),
                );
            }
            if !case.stashed.is_empty() || !case.expect.stashed.is_empty() {
                errors.push("`stashed` belongs to sub-reconciler cases".to_owned());
            }
        }
        TableKind::SubReconciler => {
            if case.resource.is_none() {
                errors.push("a sub-reconciler case needs a `resource`".to_owned());
            }
            if case.request.is_some() {
                errors.push(
                    "`request` belongs to reconciler cases; the resource's name is the request"
                        .to_owned(),
                );
            }
        }
        TableKind::AdmissionWebhook => {
            match &case.admission_request {
                None => {
                    errors.push("an admission webhook case needs an `admissionRequest`".to_owned())
                }
                Some(request) => errors.extend(admission::request_problems(request)),
            }
            if case.request.is_some() {
                errors.push(
                    "`request` belongs to reconciler cases; an admission case's object is in \
                     `admissionRequest`"
                        .to_owned(),
                );
            }
            if case.resource.is_some() || case.expect.resource.is_some() {
                errors.push(
                    "`resource` belongs to sub-reconciler cases; an admission case's object is \
                     in `admissionRequest`, and what the webhook changes is its `patch`"
                        .to_owned(),
                );
            }
            if !case.stashed.is_empty() || !case.expect.stashed.is_empty() {
                errors.push("`stashed` belongs to sub-reconciler cases".to_owned());
            }
            if case.expect.result != OutcomeSpec::default() {
                errors.push(
                    "`result` belongs to reconciler cases; a webhook answers with a `response`"
                        .to_owned(),
                );
            }
            if case.expect.error.is_some() {
                errors.push(
                    "`error`: a webhook answers every request, and an error is a refusal; \
                     expect it in `response` (allowed: false, with its status)"
                        .to_owned(),
                );
            }
            if let Some(response) = &case.expect.response {
                errors.extend(admission::response_problems(response, "expect.response"));
            }
        }
    }
    if let Err(e) = case.expect.result.outcome() {
        errors.push(e);
    }
    errors
}

/// A table of cases, ready to run.
pub(crate) struct Table<'a> {
    pub(crate) kind: TableKind,
    /// Whether a case's `request` must name a stored object (see
    /// [`RootReconciler::RECONCILES_EXISTING`](crate::RootReconciler::RECONCILES_EXISTING)).
    pub(crate) request_names_object: bool,
    pub(crate) crds: &'a [Value],
    /// The service account and RBAC the code under test runs under, if any.
    pub(crate) rbac: Option<&'a OperatorRbac>,
    pub(crate) cases: &'a [TestCase],
    pub(crate) sink: Option<&'a SnapshotSink>,
}

impl Table<'_> {
    /// Runs every case (only the focused ones, if any) with `exec`; returns the report and what
    /// each case observed.
    pub(crate) async fn run<F, Fut>(&self, exec: F) -> (Report, Vec<Option<Observed>>)
    where
        F: Fn(TestEnv, &TestCase, Input, Reuse) -> Fut,
        Fut: Future<Output = Executed>,
    {
        let focused = self.cases.iter().filter(|c| c.focus).count();
        let mut report = Report {
            cases: Vec::new(),
            focused,
            needed: NeededRules::default(),
        };
        let mut observed = Vec::new();
        let mut names = BTreeSet::new();
        let templates = Templates::new(self.crds, self.rbac);
        for case in self.cases {
            let left_out = case.skip || (focused > 0 && !case.focus);
            let (status, seen) = if !names.insert(case.name.as_str()) {
                let why = "another case of this table has the same name; give each its own";
                (CaseStatus::Failed(vec![Mismatch::new("name", why)]), None)
            } else if left_out {
                (CaseStatus::Skipped, None)
            } else {
                let (status, seen, needed) =
                    self.run_case(&templates, case, &exec, Reuse::No).await;
                report.needed.merge(&needed);
                (status, seen)
            };
            let ran = matches!(status, CaseStatus::Passed | CaseStatus::Failed(_));
            report.cases.push(CaseReport {
                name: case.name.clone(),
                status,
            });
            observed.push(seen);
            if !ran || left_out {
                continue;
            }
            // reconciler.io's `AdditionalReconciles`: more reconciles, each a case of its own
            // (its own given objects and expectations), by the same reconciler instance.
            for additional in &case.additional_reconciles {
                let status = if additional.skip {
                    CaseStatus::Skipped
                } else if additional.focus {
                    let why = "an additional reconcile cannot be focused; focus its case";
                    CaseStatus::Failed(vec![Mismatch::new("focus", why)])
                } else {
                    let (status, _, needed) = self
                        .run_case(&templates, additional, &exec, Reuse::Yes)
                        .await;
                    report.needed.merge(&needed);
                    status
                };
                report.cases.push(CaseReport {
                    name: format!("{} / {}", case.name, additional.name),
                    status,
                });
            }
        }
        (report, observed)
    }

    async fn run_case<F, Fut>(
        &self,
        templates: &Templates<'_>,
        case: &TestCase,
        exec: &F,
        reuse: Reuse,
    ) -> (CaseStatus, Option<Observed>, NeededRules)
    where
        F: Fn(TestEnv, &TestCase, Input, Reuse) -> Fut,
        Fut: Future<Output = Executed>,
    {
        let problems = validate(case, self.kind);
        if !problems.is_empty() {
            let mismatches = problems
                .into_iter()
                .map(|p| Mismatch::new("case", p))
                .collect();
            return (CaseStatus::Failed(mismatches), None, NeededRules::default());
        }
        let now = case
            .now
            .unwrap_or_else(|| DEFAULT_NOW.parse().unwrap_or(Timestamp::UNIX_EPOCH));
        let env = match build_env(case, templates, now).await {
            Ok(env) => env,
            Err(e) => {
                return (
                    CaseStatus::Failed(vec![Mismatch::new("case setup", e)]),
                    None,
                    NeededRules::default(),
                );
            }
        };
        let mut input = match &case.resource {
            None => Input::Nothing,
            Some(resource) => match env.server().seed(resource) {
                Ok(v) => Input::Resource(v),
                Err(e) => {
                    return (
                        CaseStatus::Failed(vec![Mismatch::new("resource", e.to_string())]),
                        None,
                        NeededRules::default(),
                    );
                }
            },
        };
        let mut mismatches = Vec::new();
        if let Some(prepare) = &case.hooks.prepare
            && let Err(e) = prepare(&env)
        {
            return (
                CaseStatus::Failed(vec![Mismatch::new("prepare", e)]),
                None,
                NeededRules::default(),
            );
        }
        if self.request_names_object
            && let Some(problem) = request_problem(case, env.server())
        {
            return (
                CaseStatus::Failed(vec![Mismatch::new("request", problem)]),
                None,
                NeededRules::default(),
            );
        }
        if self.kind == TableKind::AdmissionWebhook
            && let Some(written) = &case.admission_request
        {
            // After `prepare`, so that a CRD it installs serves the request's kind.
            match admission::complete_request(written, env.server()).await {
                Ok(request) => input = Input::Request(Box::new(request)),
                Err(e) => {
                    let mut mismatches = vec![Mismatch::new("admissionRequest", e)];
                    if let Some(cleanup) = &case.hooks.cleanup
                        && let Err(e) = cleanup(&env)
                    {
                        mismatches.push(Mismatch::new("cleanup", e));
                    }
                    return (CaseStatus::Failed(mismatches), None, NeededRules::default());
                }
            }
        }

        let mut executed = exec(env.clone(), case, input, reuse).await;
        // A sub-reconciler's error carries on what it gathered (a Sequence returns it to its
        // parent); a root's error goes to the controller's error policy, compared only when
        // the reconciler runs with one.
        executed.requeue_on_error |= self.kind == TableKind::SubReconciler;
        let requests = env.server().requests();
        let mut seen = observe(&env.default, &requests);
        let needed = NeededRules::from_requests(&requests);
        if self.rbac.is_some() || case.run_as.is_some() {
            mismatches.extend(first_forbidden(&requests));
        }
        match &executed.result {
            Ok(outcome) => seen.result = OutcomeSpec::of(*outcome),
            Err(error) => {
                // Written as the case wrote it while that still holds.
                seen.error = Some(match &case.expect.error {
                    Some(expected) => expected.rewritten(error),
                    None => error.written(),
                });
                if executed.requeue_on_error {
                    seen.result = OutcomeSpec::of(executed.error_outcome);
                }
            }
        }
        // What regenerated expectations keep: the signals the case listed that still hold.
        seen.error_signals = case
            .expect
            .error_signals
            .iter()
            .filter(|s| executed.error_signals.contains(s))
            .copied()
            .collect();
        seen.resource = executed.resource.clone();
        seen.stashed = executed.stashed.clone();
        seen.response = executed.response.clone();

        check_error(case, &executed, self.kind, &mut mismatches);
        mismatches.extend(executed.problems.iter().cloned());
        if self.kind == TableKind::Reconciler
            && !executed.requeue_on_error
            && case.expect.error.is_some()
            && case.expect.result != OutcomeSpec::default()
        {
            mismatches.push(Mismatch::new(
                "case",
                "`result` is not compared when the reconcile fails: without an error policy \
                 (`kube_controller`'s) the controller decides what follows an error; expect \
                 only the error",
            ));
        }
        let options = Options {
            server_fields: case.compare_server_fields,
            result_on_error: executed.requeue_on_error,
        };
        if case.snapshot {
            snapshot(case, &seen, self.sink, &mut mismatches);
        } else {
            let mut expected = case.expect.clone();
            if let Some(resource) = &executed.expected_resource {
                // The sub-reconciler ran: compare with what its runner says (the expected
                // resource, or the one given when the case expects it unchanged).
                expected.resource = Some(resource.clone());
            }
            if executed.response.is_some() && expected.response.is_none() {
                // The webhook answered; a case that expects no response expects it allowed,
                // unchanged.
                expected.response = Some(admission::default_response());
            }
            mismatches.extend(compare(&expected, &seen, options));
        }
        let mut configs = BTreeMap::new();
        for (name, config) in &case.additional_configs {
            if let Some(cluster) = env.cluster(name) {
                let mut theirs = observe(cluster, &cluster.server().requests());
                theirs.result = seen.result.clone();
                theirs.error = seen.error.clone();
                let mut expected = config.expect.clone();
                expected.result = seen.result.clone();
                expected.error = seen.error.clone();
                for m in compare(&expected, &theirs, options) {
                    mismatches.push(Mismatch::new(
                        format!("additionalConfigs.{name}.{}", m.expectation),
                        m.detail,
                    ));
                }
                configs.insert(name.clone(), theirs);
            }
        }
        if let Some(verify) = &case.hooks.verify
            && let Err(e) = verify(&env, &seen)
        {
            mismatches.push(Mismatch::new("verify", e));
        }
        if let Some(cleanup) = &case.hooks.cleanup
            && let Err(e) = cleanup(&env)
        {
            mismatches.push(Mismatch::new("cleanup", e));
        }
        let rewritable =
            !case.snapshot && executed.panic.is_none() && mismatches.iter().all(rewritable);
        let status = if mismatches.is_empty() {
            CaseStatus::Passed
        } else {
            CaseStatus::Failed(mismatches)
        };
        let observed = Observed {
            expect: seen,
            configs,
            rewritable,
        };
        (status, Some(observed), needed)
    }
}

/// Why a reconciler case's `request` is wrong: it names no object the cluster holds and the
/// case does not say it expects that, or it says so and the object is there.
fn request_problem(case: &TestCase, server: &recon_fake::ApiServer) -> Option<String> {
    let request = case.request.as_ref()?;
    let names = |object: &Value| {
        let meta = &object["metadata"];
        meta["name"].as_str() == Some(request.name.as_str())
            && meta["namespace"].as_str() == request.namespace.as_deref()
    };
    match (server.objects().iter().any(names), case.expect_missing) {
        (false, false) => Some(format!(
            "the case {:?} requests {request}, which names no object of the cluster (given or \
             stored by `prepare`); if it is missing on purpose, say so with `expectMissing: true` \
             (`.expect_missing()`)",
            case.name
        )),
        (true, true) => Some(format!(
            "the case {:?} expects {request} to be missing, but the cluster holds it",
            case.name
        )),
        _ => None,
    }
}

async fn build_env(
    case: &TestCase,
    templates: &Templates<'_>,
    now: Timestamp,
) -> Result<TestEnv, String> {
    let givens = Givens {
        given: &case.given,
        given_applied: &case.given_applied,
        api_given: &case.api_given,
        reactors: &case.reactors,
        tracks: &case.given_tracks,
        run_as: case.run_as.as_ref(),
    };
    let default = Cluster::new(templates, now, givens).await?;
    let mut additional = BTreeMap::new();
    for (name, config) in &case.additional_configs {
        let givens = Givens {
            given: &config.given,
            given_applied: &config.given_applied,
            api_given: &config.api_given,
            reactors: &config.reactors,
            tracks: &config.given_tracks,
            run_as: case.run_as.as_ref(),
        };
        let cluster = Cluster::new(templates, now, givens)
            .await
            .map_err(|e| format!("additionalConfigs.{name}.{e}"))?;
        additional.insert(name.clone(), cluster);
    }
    Ok(TestEnv {
        default,
        additional,
        now,
        metadata: case.metadata.clone(),
    })
}

/// The error and panic expectations.
fn check_error(case: &TestCase, executed: &Executed, kind: TableKind, out: &mut Vec<Mismatch>) {
    let what = kind.what_runs();
    match (&executed.panic, case.should_panic) {
        (Some(message), false) => {
            out.push(Mismatch::new(
                "shouldPanic",
                format!("{what} panicked: {message}"),
            ));
            return;
        }
        (None, true) => out.push(Mismatch::new(
            "shouldPanic",
            format!("{what} did not panic"),
        )),
        _ => {}
    }
    if executed.panic.is_some() {
        return;
    }
    match (&case.expect.error, &executed.result) {
        (None, Err(error)) => out.push(Mismatch::new(
            "expect.error",
            format!("the reconcile failed: {}", error.text),
        )),
        (Some(expected), Ok(_)) => out.push(Mismatch::new(
            "expect.error",
            format!(
                "the reconcile succeeded; expected an error {}",
                expected.describe()
            ),
        )),
        (Some(expected), Err(error)) => {
            let problems = expected.mismatches(error);
            if !problems.is_empty() {
                out.push(Mismatch::new("expect.error", problems.join("; ")));
            }
        }
        (None, Ok(_)) => {}
    }
    if executed.result.is_err() {
        let missing: Vec<ErrorSignal> = case
            .expect
            .error_signals
            .iter()
            .filter(|s| !executed.error_signals.contains(s))
            .copied()
            .collect();
        if !missing.is_empty() {
            out.push(Mismatch::new(
                "expect.errorSignals",
                format!(
                    "the error does not carry {missing:?}; it carries {:?}",
                    executed.error_signals
                ),
            ));
        }
    }
}

/// Hands a snapshot case's observations to the sink; a rejected snapshot fails the case.
fn snapshot(
    case: &TestCase,
    seen: &Expectations,
    sink: Option<&SnapshotSink>,
    out: &mut Vec<Mismatch>,
) {
    let Some(sink) = sink else {
        out.push(Mismatch::new(
            "snapshot",
            "the case asks for a snapshot but the table has no snapshot sink: add `.snapshots(recon_testing::snapshot!())`",
        ));
        return;
    };
    // As an author would write it: the fields the server sets would only churn snapshots.
    let value = as_written(seen, &Expectations::default(), case.compare_server_fields);
    let value = serde_json::to_value(&value).unwrap_or(Value::Null);
    let name = snapshot_name(&case.name);
    if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(|| sink(&name, &value))) {
        let new = payload
            .downcast_ref::<crate::snapshot_file::Rejected>()
            .and_then(|r| r.new);
        let what = match new {
            Some(true) => "is a new snapshot",
            Some(false) => "does not match its accepted snapshot",
            None => "is new or does not match",
        };
        out.push(Mismatch::new(
            "snapshot",
            format!(
                "{name:?} {what}; accept it with `cargo insta review` (after `cargo install \
                 cargo-insta`) or by running the test again with `INSTA_UPDATE=always`"
            ),
        ));
    }
}

/// A case name as a snapshot file name (or a Rust identifier's tail): lowercase letters,
/// digits and `_`.
pub(crate) fn snapshot_name(case: &str) -> String {
    let name: String = case
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "case".to_owned()
    } else {
        name
    }
}

/// Whether fixtures are being regenerated (`RECON_FIXTURES=overwrite`, as `cargo xtask
/// fixtures` sets it).
pub(crate) fn overwrite_mode() -> bool {
    std::env::var("RECON_FIXTURES").is_ok_and(|v| v == "overwrite")
}

/// Runs `future` to completion on a runtime of its own.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_ok() {
        panic!(
            "recon-testing: `run` starts its own Tokio runtime; inside `#[tokio::test]` call `run_async(..).await` instead"
        );
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("recon-testing: cannot start a Tokio runtime: {e}"))
        .block_on(future)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_names_are_file_safe() {
        assert_eq!(snapshot_name("Writes Status/once!"), "writes_status_once_");
        assert_eq!(snapshot_name(""), "case");
    }
}
