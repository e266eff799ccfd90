//! The tables: `ReconcilerTests` / `ReconcilerTestSuite` for `ResourceReconciler`s,
//! `SubReconcilerTests` / `SubReconcilerTestSuite` for sub-reconcilers, and
//! `AdmissionWebhookTests` / `AdmissionWebhookTestSuite` for admission webhooks. A `*Tests` table
//! is named cases, a `*TestSuite` cases that can be read from a YAML file; both run and report
//! their cases in the order written (a table is a list: a case may rely on what an earlier one
//! left in shared state, such as metrics).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use recon_core::admission::{Admission, AdmissionHandler};
use recon_core::{
    AggregateReconciler, Context, Outcome, Reconciled, Request, ResourceReconciler, Stash, Stasher,
    SubReconciler,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::case::TestCase;
use crate::compare::Mismatch;
use crate::env::TestEnv;
use crate::rbac::OperatorRbac;
use crate::report::{CaseStatus, Report};
use crate::runner::{
    Built, Executed, Input, Observed, SnapshotSink, Table, TableKind, block_on, overwrite_mode,
};
use crate::yaml::{FixtureError, LoadedSuite, load, overwrite, parse_str};

fn to_json(what: &str, value: &impl Serialize) -> Value {
    serde_json::to_value(value)
        .unwrap_or_else(|e| panic!("recon-testing: {what} cannot be serialised: {e}"))
}

/// The parts every table has.
#[derive(Default)]
struct Common {
    crds: Vec<Value>,
    sink: Option<SnapshotSink>,
    source: Option<LoadedSuite>,
    /// Rewrite the fixture file; `None` follows `RECON_FIXTURES`.
    overwrite: Option<bool>,
    /// The service account and RBAC the code under test runs under.
    rbac: Option<OperatorRbac>,
}

impl Common {
    fn from_file(path: &Path) -> Result<(Self, Vec<TestCase>), FixtureError> {
        let loaded = load(path)?;
        let cases = loaded.file.cases.clone();
        Ok((
            Common {
                crds: loaded.crds.clone(),
                sink: None,
                rbac: loaded.rbac.clone(),
                source: Some(loaded),
                overwrite: None,
            },
            cases,
        ))
    }

    /// Regenerates the fixture file from what the cases observed, when asked to.
    fn finish(&self, mut report: Report, observed: &[Option<Observed>]) -> Report {
        let rewrite = self.overwrite.unwrap_or_else(overwrite_mode);
        if let (true, Some(source)) = (rewrite, &self.source) {
            match overwrite(source, observed) {
                Ok(()) => {
                    eprintln!("recon-testing: rewrote {}", source.path.display());
                    // Rewritten cases match their fixture now; the others (a panic, a failing
                    // hook, a rejected snapshot, a setup error) still fail.
                    for (case, seen) in report.cases.iter_mut().zip(observed) {
                        if seen.as_ref().is_some_and(|o| o.rewritable) {
                            case.status = CaseStatus::Passed;
                        }
                    }
                }
                Err(e) => {
                    // The file is unchanged; the report says which cases fail.
                    eprintln!("recon-testing: {e}");
                }
            }
        }
        report
    }
}

/// Writes a JSON value into the stash as the key's type.
type StoreJson = Arc<dyn Fn(&Stash, &Value) -> Result<(), String> + Send + Sync>;
/// Reads the key's value from the stash as JSON.
type LoadJson = Arc<dyn Fn(&Stash) -> Option<Value> + Send + Sync>;

/// How one stash key is read from and written to JSON (see
/// [`SubReconcilerTestSuite::stash_type`]).
#[derive(Clone)]
struct StashCodec {
    store: StoreJson,
    load: LoadJson,
}

macro_rules! table_common {
    ($table:ident) => {
        impl $table {
            /// An empty table.
            pub fn new() -> Self {
                Self::default()
            }

            /// Installs `crd` (a `CustomResourceDefinition`) in every case's cluster.
            #[must_use]
            pub fn crd(mut self, crd: &impl Serialize) -> Self {
                self.common.crds.push(to_json("the CRD", crd));
                self
            }

            /// Where `snapshot` cases send what they observed: `recon_testing::snapshot!()`.
            #[must_use]
            pub fn snapshots(mut self, sink: SnapshotSink) -> Self {
                self.common.sink = Some(sink);
                self
            }

            /// Whether a table read from a file rewrites the file's expectations with what its
            /// cases observe (default: when `RECON_FIXTURES=overwrite`).
            #[must_use]
            pub fn overwrite_fixtures(mut self, overwrite: bool) -> Self {
                self.common.overwrite = Some(overwrite);
                self
            }

            /// Runs the code under test as `rbac`'s service account: its manifest is stored
            /// in every case's cluster, the clients the code is given act as the account, and
            /// a request the RBAC authorizer refuses fails the case, naming the rule that
            /// would allow it (see [`OperatorRbac`]).
            #[must_use]
            pub fn run_as(mut self, rbac: OperatorRbac) -> Self {
                self.common.rbac = Some(rbac);
                self
            }
        }
    };
}

/// `case(name, case)`, the order written, for a table of named cases.
macro_rules! named_cases {
    ($table:ident) => {
        impl $table {
            /// Adds the case `name`. A second case of the same name fails the table.
            #[must_use]
            pub fn case(mut self, name: &str, case: TestCase) -> Self {
                self.cases.push(case.named(name));
                self
            }
        }
    };
}

/// `case(case)`, the order written, and reading from YAML, for a suite. (Suites with fields
/// of their own take them from `Default`; for the others that update is needless.)
macro_rules! ordered_cases {
    ($table:ident) => {
        #[allow(clippy::needless_update)]
        impl $table {
            /// Adds a case (it needs a name).
            #[must_use]
            pub fn case(mut self, case: TestCase) -> Self {
                self.cases.push(case);
                self
            }

            /// The suite in a YAML file (see the crate docs for the format). rstest's `#[files]`
            /// glob is expanded when the test compiles: a build script printing
            /// `cargo::rerun-if-changed=tests/suites` (the suites' directory) makes cargo pick
            /// up a new file, as the examples' `build.rs` do; without one, touch the test file.
            pub fn from_yaml_file(path: impl AsRef<Path>) -> Result<Self, FixtureError> {
                let (common, cases) = Common::from_file(path.as_ref())?;
                Ok($table {
                    common,
                    cases,
                    ..$table::default()
                })
            }

            /// The suite in a YAML string (CRDs inline); `origin` names it in errors.
            pub fn from_yaml_str(origin: &str, text: &str) -> Result<Self, FixtureError> {
                let (cases, crds) = parse_str(origin, text)?;
                Ok($table {
                    common: Common {
                        crds,
                        ..Common::default()
                    },
                    cases,
                    ..$table::default()
                })
            }
        }
    };
}

/// Named cases for a [`ResourceReconciler`], run in the order written.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Request, ResourceReconciler, SyncReconciler};
/// use recon_testing::{ReconcilerTests, TestCase};
/// use serde_json::json;
///
/// let noop = || SyncReconciler::<ConfigMap>::new("Noop").sync(async |_, _| Ok(()));
/// ReconcilerTests::new()
///     .case("an unchanged config map sends no write", TestCase::reconcile(Request::namespaced("default", "c"))
///         .given(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})))
///     .run(|env| ResourceReconciler::new(env.config(), noop()));
/// ```
#[derive(Default)]
pub struct ReconcilerTests {
    common: Common,
    cases: Vec<TestCase>,
}

table_common!(ReconcilerTests);

named_cases!(ReconcilerTests);

/// Cases for a [`ResourceReconciler`], run in order; readable from YAML.
#[derive(Default)]
pub struct ReconcilerTestSuite {
    common: Common,
    cases: Vec<TestCase>,
}

table_common!(ReconcilerTestSuite);

ordered_cases!(ReconcilerTestSuite);

/// `check`, `run` and `run_async` for a table whose factory builds a `$subject` (bound by
/// `$bound`) and whose cases `$run_cases` runs.
macro_rules! runs_with {
    ($table:ident, $subject:ident: $bound:path, $run_cases:ident) => {
        impl $table {
            /// Runs every case; the report says which failed and why.
            pub async fn check<$subject: $bound>(
                &self,
                factory: impl Fn(&TestEnv) -> $subject,
            ) -> Report {
                $run_cases(&self.common, &self.cases, factory).await
            }

            /// Runs every case and panics with the report unless they all pass. Needs no
            /// runtime.
            #[track_caller]
            pub fn run<$subject: $bound>(&self, factory: impl Fn(&TestEnv) -> $subject) {
                block_on(self.check(factory)).assert_passed();
            }

            /// `run` inside an async test.
            pub async fn run_async<$subject: $bound>(
                &self,
                factory: impl Fn(&TestEnv) -> $subject,
            ) {
                self.check(factory).await.assert_passed();
            }
        }
    };
}

runs_with!(ReconcilerTests, T: RootReconciler, run_reconciler_cases);
runs_with!(ReconcilerTestSuite, T: RootReconciler, run_reconciler_cases);

/// What a reconciler table runs: a [`ResourceReconciler`] or an [`AggregateReconciler`]
/// (which ignores requests other than its own).
pub trait RootReconciler {
    /// Whether a case's `request` must name an object the cluster holds (or say it is
    /// missing): it does for reconcilers of an existing object, not for an
    /// [`AggregateReconciler`], which creates its own.
    const RECONCILES_EXISTING: bool = true;

    /// Reconciles `request` with the request time fixed at `now`.
    fn reconcile_request<'a>(
        &'a self,
        request: &'a Request,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Outcome, recon_core::Error>>;

    /// Whether an error this returns carries the requeue an error policy decided for it
    /// ([`recon_core::Error::outcome`]), so that a case compares its `result` after an error
    /// too: a [`kube_controller`](crate::kube_controller)'s does. Default: no (what follows an
    /// error is the controller's business, not the reconciler's).
    fn requeues_on_error(&self) -> bool {
        false
    }
}

impl<R: Reconciled> RootReconciler for ResourceReconciler<R> {
    fn reconcile_request<'a>(
        &'a self,
        request: &'a Request,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Outcome, recon_core::Error>> {
        Box::pin(self.reconcile_at(request, now))
    }
}

impl<R: Reconciled> RootReconciler for AggregateReconciler<R> {
    const RECONCILES_EXISTING: bool = false;

    fn reconcile_request<'a>(
        &'a self,
        request: &'a Request,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Outcome, recon_core::Error>> {
        Box::pin(async move {
            let ctx = Context::new(self.config().clone(), request.clone()).at(now);
            self.reconcile_in(&ctx).await
        })
    }
}

async fn run_reconciler_cases<T: RootReconciler>(
    common: &Common,
    cases: &[TestCase],
    factory: impl Fn(&TestEnv) -> T,
) -> Report {
    let table = Table {
        kind: TableKind::Reconciler,
        request_names_object: T::RECONCILES_EXISTING,
        crds: &common.crds,
        rbac: common.rbac.as_ref(),
        cases,
        sink: common.sink.as_ref(),
    };
    let built_once = Built::new();
    let (report, observed) = table
        .run(|env, case, _, reuse| {
            let built = built_once.get(reuse, || factory(&env));
            let request = case.request.clone().unwrap_or_default();
            let now = env.now();
            async move {
                match built {
                    Ok(reconciler) => {
                        let mut executed =
                            Executed::catching(reconciler.reconcile_request(&request, now)).await;
                        executed.requeue_on_error = reconciler.requeues_on_error();
                        executed
                    }
                    Err(payload) => Executed::factory_panicked(payload),
                }
            }
        })
        .await;
    common.finish(report, &observed)
}

/// Named cases for a sub-reconciler, run in the order written.
#[derive(Default)]
pub struct SubReconcilerTests {
    common: Common,
    codecs: BTreeMap<String, StashCodec>,
    cases: Vec<TestCase>,
}

table_common!(SubReconcilerTests);

/// Cases for a sub-reconciler, run in order; readable from YAML.
#[derive(Default)]
pub struct SubReconcilerTestSuite {
    common: Common,
    codecs: BTreeMap<String, StashCodec>,
    cases: Vec<TestCase>,
}

table_common!(SubReconcilerTestSuite);

macro_rules! sub_table {
    ($table:ident) => {
        impl $table {
            /// Reads and writes the stash key of `stasher` as a `T` (cases give and expect it
            /// as JSON). Keys not registered hold `serde_json::Value`s.
            #[must_use]
            pub fn stash_type<T>(mut self, stasher: Stasher<T>) -> Self
            where
                T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
            {
                let codec = StashCodec {
                    store: Arc::new(move |stash, value| {
                        let typed: T = serde_json::from_value(value.clone()).map_err(|e| {
                            format!(
                                "stashed.{}: not a {}: {e}",
                                stasher.key(),
                                std::any::type_name::<T>()
                            )
                        })?;
                        stasher.store(stash, typed);
                        Ok(())
                    }),
                    load: Arc::new(move |stash| {
                        stasher
                            .retrieve_opt(stash)
                            .and_then(|v| serde_json::to_value(v).ok())
                    }),
                };
                self.codecs.insert(stasher.key().to_owned(), codec);
                self
            }

            /// Runs every case; the report says which failed and why.
            pub async fn check<R, S>(&self, factory: impl Fn(&TestEnv) -> S) -> Report
            where
                R: Reconciled,
                S: SubReconciler<R>,
            {
                run_sub_cases(&self.common, &self.codecs, &self.cases, factory).await
            }

            /// Runs every case and panics with the report unless they all pass. Needs no runtime.
            #[track_caller]
            pub fn run<R, S>(&self, factory: impl Fn(&TestEnv) -> S)
            where
                R: Reconciled,
                S: SubReconciler<R>,
            {
                block_on(self.check(factory)).assert_passed();
            }

            /// `run` inside an async test.
            pub async fn run_async<R, S>(&self, factory: impl Fn(&TestEnv) -> S)
            where
                R: Reconciled,
                S: SubReconciler<R>,
            {
                self.check(factory).await.assert_passed();
            }
        }
    };
}

sub_table!(SubReconcilerTests);
sub_table!(SubReconcilerTestSuite);

named_cases!(SubReconcilerTests);

ordered_cases!(SubReconcilerTestSuite);

async fn run_sub_cases<R, S>(
    common: &Common,
    codecs: &BTreeMap<String, StashCodec>,
    cases: &[TestCase],
    factory: impl Fn(&TestEnv) -> S,
) -> Report
where
    R: Reconciled,
    S: SubReconciler<R>,
{
    let table = Table {
        kind: TableKind::SubReconciler,
        request_names_object: false,
        crds: &common.crds,
        rbac: common.rbac.as_ref(),
        cases,
        sink: common.sink.as_ref(),
    };
    let built_once = Built::new();
    let (report, observed) = table
        .run(|env, case, input, reuse| {
            let built = built_once.get(reuse, || factory(&env));
            let stashed = case.stashed.clone();
            let expected_resource = case.expect.resource.clone();
            async move {
                let sub = match built {
                    Ok(sub) => sub,
                    Err(payload) => return Executed::factory_panicked(payload),
                };
                let seeded = match input {
                    Input::Resource(seeded) => seeded,
                    Input::Nothing | Input::Request(_) => Value::Null,
                };
                let mut resource: R = match serde_json::from_value(seeded) {
                    Ok(r) => r,
                    Err(e) => {
                        return Executed::catching(async move {
                            Err(recon_core::Error::msg(format!(
                                "the resource is not a {}: {e}",
                                std::any::type_name::<R>()
                            )))
                        })
                        .await;
                    }
                };
                let meta = resource.meta();
                let request = Request {
                    namespace: meta.namespace.clone(),
                    name: meta.name.clone().unwrap_or_default(),
                };
                let ctx = Context::new(env.config(), request).at(env.now());
                for (key, value) in &stashed {
                    match codecs.get(key) {
                        Some(codec) => {
                            if let Err(e) = (codec.store)(ctx.stash(), value) {
                                return Executed::catching(async move {
                                    Err(recon_core::Error::msg(e))
                                })
                                .await;
                            }
                        }
                        None => ctx.stash().store(key, value.clone()),
                    }
                }
                // Compared as the Rust type writes them: the resource given (or expected) may
                // lack fields the type always writes, such as `"conditions": []`.
                let as_typed = |value: &Value| {
                    serde_json::from_value::<R>(value.clone())
                        .ok()
                        .and_then(|r| serde_json::to_value(r).ok())
                        .unwrap_or_else(|| value.clone())
                };
                let initial = serde_json::to_value(&resource).ok();
                let mut executed = Executed::catching(sub.reconcile(&ctx, &mut resource)).await;
                executed.resource = serde_json::to_value(&resource).ok();
                executed.expected_resource = expected_resource.as_ref().map(as_typed).or(initial);
                for key in ctx.stash().keys() {
                    let value = match codecs.get(&key) {
                        Some(codec) => (codec.load)(ctx.stash()),
                        None => ctx.stash().retrieve::<Value>(&key).ok(),
                    };
                    if let Some(value) = value {
                        executed.stashed.insert(key, value);
                    }
                }
                executed
            }
        })
        .await;
    common.finish(report, &observed)
}

/// Named cases for an admission webhook, run in the order written.
///
/// The factory builds the webhook, an [`AdmissionHandler`] such as an
/// [`AdmissionWebhookAdapter`](recon_core::AdmissionWebhookAdapter), once per case. Each case
/// gives the `admissionRequest` it decides and the `response` it expects (by default: allowed,
/// no patch), with any writes, events and tracks the webhook's tree makes, as reconciler cases
/// do. See the crate docs, "Admission webhook tables".
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::admission::AdmissionDenied;
/// use recon_core::{AdmissionWebhookAdapter, SyncReconciler};
/// use recon_testing::{AdmissionWebhookTests, ResponseSpec, TestCase};
/// use serde_json::json;
///
/// let team_label = || SyncReconciler::<ConfigMap>::new("TeamLabel").sync(async |_ctx, cm| {
///     let labels = cm.metadata.labels.get_or_insert_default();
///     if labels.get("team").is_some_and(|t| t == "nobody") {
///         return Err(AdmissionDenied::forbidden("team nobody does not exist").into());
///     }
///     labels.entry("team".into()).or_insert_with(|| "platform".into());
///     Ok(())
/// });
/// let config_map = |labels: serde_json::Value| json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "default", "labels": labels},
/// });
/// AdmissionWebhookTests::new()
///     .case("a config map without a team gets the platform team", TestCase::admit_json(
///             json!({"operation": "CREATE", "object": config_map(json!({}))}))
///         .expect_response(ResponseSpec::allowed().patch(json!([
///             {"op": "add", "path": "/metadata/labels/team", "value": "platform"},
///         ]))))
///     .case("team nobody is refused", TestCase::admit_json(
///             json!({"operation": "CREATE", "object": config_map(json!({"team": "nobody"}))}))
///         .expect_response(ResponseSpec::denied(403, "Forbidden", "team nobody does not exist")))
///     .case("a team is kept", TestCase::admit_json(
///             json!({"operation": "CREATE", "object": config_map(json!({"team": "a"}))})))
///     .run(|env| AdmissionWebhookAdapter::new(env.config(), team_label()));
/// ```
#[derive(Default)]
pub struct AdmissionWebhookTests {
    common: Common,
    cases: Vec<TestCase>,
}

table_common!(AdmissionWebhookTests);

named_cases!(AdmissionWebhookTests);

/// Cases for an admission webhook, run in order; readable from YAML (see the crate docs,
/// "Admission webhook tables").
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{AdmissionWebhookAdapter, SyncReconciler};
/// use recon_testing::AdmissionWebhookTestSuite;
///
/// let suite = AdmissionWebhookTestSuite::from_yaml_str("inline.yaml", r#"
/// cases:
///   - name: a config map gets a data key
///     admissionRequest:
///       operation: CREATE
///       object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
///     expect:
///       response:
///         allowed: true
///         patch:
///           - {op: add, path: /data, value: {seen: "yes"}}
/// "#).unwrap();
/// let mark = || SyncReconciler::<ConfigMap>::new("Mark").sync(async |_ctx, cm| {
///     cm.data.get_or_insert_default().insert("seen".into(), "yes".into());
///     Ok(())
/// });
/// suite.run(|env| AdmissionWebhookAdapter::new(env.config(), mark()));
/// ```
#[derive(Default)]
pub struct AdmissionWebhookTestSuite {
    common: Common,
    cases: Vec<TestCase>,
}

table_common!(AdmissionWebhookTestSuite);

ordered_cases!(AdmissionWebhookTestSuite);

runs_with!(AdmissionWebhookTests, H: AdmissionHandler, run_admission_cases);
runs_with!(AdmissionWebhookTestSuite, H: AdmissionHandler, run_admission_cases);

async fn run_admission_cases<H: AdmissionHandler>(
    common: &Common,
    cases: &[TestCase],
    factory: impl Fn(&TestEnv) -> H,
) -> Report {
    let table = Table {
        kind: TableKind::AdmissionWebhook,
        request_names_object: false,
        crds: &common.crds,
        rbac: common.rbac.as_ref(),
        cases,
        sink: common.sink.as_ref(),
    };
    let built_once = Built::new();
    let (report, observed) = table
        .run(|env, _case, input, reuse| {
            let built = built_once.get(reuse, || factory(&env));
            let now = env.now();
            async move {
                let handler = match built {
                    Ok(handler) => handler,
                    Err(payload) => return Executed::factory_panicked(payload),
                };
                let Input::Request(request) = input else {
                    // The runner completes the request of every admission case it runs.
                    return Executed::catching(async {
                        Err(recon_core::Error::msg("the case has no admission request"))
                    })
                    .await;
                };
                let uid = request.uid.clone();
                let mut answer = None;
                let mut executed = Executed::catching(async {
                    answer = Some(handler.handle_at(Admission::new(*request), now).await);
                    Ok(Outcome::done())
                })
                .await;
                if let Some(response) = &answer {
                    let (written, mut problems) = crate::admission::read_response(response, &uid);
                    if !handler.is_mutating() && response.patch.is_some() {
                        problems.push(Mismatch::new(
                            "response.patch",
                            "a validating webhook answered with a patch, which kube-apiserver refuses (\"validating webhook may not return response.patch\")",
                        ));
                    }
                    executed.response = written;
                    executed.problems = problems;
                }
                executed
            }
        })
        .await;
    common.finish(report, &observed)
}
