//! What an exploration runs: the user's controller as it runs in production, the cluster it
//! starts from, and what the user does to it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{BoxStream, Stream, StreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde_json::Value;

use super::action::UserAction;
use super::world::World;

/// One reconcile's result as the controller's stream reported it: the object and what comes
/// next, or the error with its sources.
pub(crate) type Reconciled = Result<String, String>;

/// Builds a fresh controller on a client: called at the start and at every restart.
pub(crate) type Factory = Arc<dyn Fn(kube::Client) -> BoxStream<'static, Reconciled> + Send + Sync>;

/// A stand-in for a cluster controller the scenario needs (the garbage collector, a kubelet
/// marking Pods ready), run whenever the controller under test is quiet.
pub(crate) type Helper = Arc<dyn Fn(kube::Client) -> BoxFuture<'static, ()> + Send + Sync>;

/// A check of the world after every step of every run.
pub(crate) type Invariant = Arc<dyn Fn(&World) -> Result<(), String> + Send + Sync>;

/// Whether a perturbed run's final world is as good as the reference run's.
pub(crate) type Convergence = Arc<dyn Fn(&World, &World) -> Result<(), String> + Send + Sync>;

/// How long a run waits, in virtual time on tokio's paused clock, and how much work it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timing {
    /// A controller is quiescent once this long passes without a write that changes anything.
    pub(crate) quiet_for: Duration,
    /// A controller that is not quiescent after this long never will be.
    pub(crate) settle_limit: Duration,
    /// Requests a controller may send while settling after one step.
    pub(crate) settle_requests: usize,
    /// How long a delayed watch event, or a stale view, is held back.
    pub(crate) lag: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            quiet_for: Duration::from_secs(600),
            settle_limit: Duration::from_secs(4 * 3600),
            settle_requests: 1_000,
            lag: Duration::from_secs(30),
        }
    }
}

/// A controller, the cluster it starts in, and what the user does to it: the input of
/// [`Scenario::explore`].
///
/// The controller is given as a function from a [`kube::Client`] to the stream
/// `Controller::run` returns; the exploration calls it at the start and again at every restart,
/// with a client of its own in-memory server, and drops everything the old one held (its
/// caches, its queue, its tasks). Anything with the shape of `Controller::run`'s stream works:
/// items are `Result<T, E>` with `T: Debug` and `E: std::error::Error`.
///
/// See [the module docs](super) for an example.
#[derive(Clone)]
pub struct Scenario {
    pub(crate) name: String,
    pub(crate) crds: Vec<CustomResourceDefinition>,
    pub(crate) givens: Vec<Value>,
    pub(crate) actions: Vec<UserAction>,
    pub(crate) factory: Option<Factory>,
    pub(crate) helpers: Vec<(String, Helper)>,
    pub(crate) garbage_collector: bool,
    pub(crate) invariants: Vec<(String, Invariant)>,
    pub(crate) convergence: Option<Convergence>,
    pub(crate) timing: Timing,
    pub(crate) only: Vec<String>,
    /// A YAML file of schedules kept as regression tests.
    pub(crate) kept: Option<std::path::PathBuf>,
    pub(crate) part: (usize, usize),
    pub(crate) max_schedules: usize,
    pub(crate) time_budget: Duration,
    pub(crate) threads: usize,
    pub(crate) errors: Vec<String>,
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("crds", &self.crds.len())
            .field("givens", &self.givens.len())
            .field("actions", &self.actions)
            .finish_non_exhaustive()
    }
}

impl Scenario {
    /// An empty scenario called `name` (the name reports and replay lines use).
    pub fn new(name: impl Into<String>) -> Self {
        Scenario {
            name: name.into(),
            crds: Vec::new(),
            givens: Vec::new(),
            actions: Vec::new(),
            factory: None,
            helpers: Vec::new(),
            garbage_collector: true,
            invariants: Vec::new(),
            convergence: None,
            timing: Timing::default(),
            only: Vec::new(),
            kept: None,
            part: (1, 1),
            max_schedules: 5_000,
            time_budget: Duration::from_secs(600),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            errors: Vec::new(),
        }
    }

    /// The controller under test: `build` makes it from a client, as `main` does in
    /// production, and returns the stream `Controller::run` returns.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kube::runtime::{Controller, controller::Action};
    /// # use kube::Api;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # async fn reconcile(_: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, kube::Error> { Ok(Action::await_change()) }
    /// # fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<()>) -> Action { Action::await_change() }
    /// use recon_testing::explore::Scenario;
    ///
    /// let scenario = Scenario::new("configmaps").controller(|client| {
    ///     Controller::new(Api::<ConfigMap>::all(client), Default::default())
    ///         .run(reconcile, error_policy, Arc::new(()))
    /// });
    /// # let _ = scenario;
    /// ```
    ///
    /// A context built by an `async fn` is awaited at the head of the stream, as `main` awaits
    /// it before `run`: `stream::once(Context::new(client)).flat_map(|context|
    /// Controller::new(..).run(reconcile, error_policy, Arc::new(context)))`
    /// (`examples/bulletin-controller/tests/bulletin/scenario.rs` does this).
    pub fn controller<F, S, T, E>(mut self, build: F) -> Self
    where
        F: Fn(kube::Client) -> S + Send + Sync + 'static,
        S: Stream<Item = Result<T, E>> + Send + 'static,
        T: fmt::Debug + Send + 'static,
        E: std::error::Error + Send + 'static,
    {
        self.factory = Some(Arc::new(move |client| {
            build(client)
                .map(|item| item.map(|done| format!("{done:?}")).map_err(|e| chain(&e)))
                .boxed()
        }));
        self
    }

    /// Installs `crd` before anything else, as a cluster has it installed.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// An object the cluster holds when the controller starts (any serializable object with
    /// its `apiVersion` and `kind`: a k8s-openapi type, a `#[derive(CustomResource)]` type,
    /// a `serde_json::Value`).
    pub fn given(mut self, object: &impl Serialize) -> Self {
        match serde_json::to_value(object) {
            Ok(value) => self.givens.push(value),
            Err(e) => self.errors.push(format!("a given object: {e}")),
        }
        self
    }

    /// What the user does next; after each action the controller runs until it is quiescent.
    pub fn action(mut self, action: UserAction) -> Self {
        self.actions.push(action);
        self
    }

    /// Actions written as a YAML list, each item one of `create:`, `apply:`, `patch:` (a JSON
    /// merge patch, naming its object by `apiVersion`, `kind` and `metadata`) or `delete:`:
    ///
    /// ```
    /// use recon_testing::explore::Scenario;
    ///
    /// let scenario = Scenario::new("echo").actions_yaml(r#"
    /// - create:
    ///     apiVersion: v1
    ///     kind: ConfigMap
    ///     metadata: {name: settings, namespace: default}
    ///     data: {mode: fast}
    /// - patch:
    ///     apiVersion: v1
    ///     kind: ConfigMap
    ///     metadata: {name: settings, namespace: default}
    ///     data: {mode: slow}
    /// - delete: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: default}}
    /// "#).unwrap();
    /// # let _ = scenario;
    /// ```
    ///
    /// A document that is not such a list is an error naming the line and the item.
    pub fn actions_yaml(mut self, yaml: &str) -> Result<Self, super::action::ActionError> {
        self.actions.extend(UserAction::list_from_yaml(yaml)?);
        Ok(self)
    }

    /// Whether kube-controller-manager's garbage collector (and namespace controller) runs
    /// whenever the controller is quiet, as on a cluster; on by default.
    pub fn garbage_collector(mut self, on: bool) -> Self {
        self.garbage_collector = on;
        self
    }

    /// Runs `helper` with a client of the cluster whenever the controller is quiet: a stand-in
    /// for a cluster controller the scenario needs (a Deployment becoming available). What it
    /// writes wakes the controller as any write does; the run settles once neither writes.
    pub fn helper<F, Fut>(mut self, name: &str, helper: F) -> Self
    where
        F: Fn(kube::Client) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let helper: Helper = Arc::new(move |client| Box::pin(helper(client)));
        self.helpers.push((name.to_owned(), helper));
        self
    }

    /// A property of the world checked after every step of every run (the reference one
    /// included); an `Err` fails the schedule with its message.
    pub fn invariant<F>(mut self, name: &str, check: F) -> Self
    where
        F: Fn(&World) -> Result<(), String> + Send + Sync + 'static,
    {
        self.invariants.push((name.to_owned(), Arc::new(check)));
        self
    }

    /// Replaces the convergence check (by default, the perturbed final world equals the
    /// reference one, normalised): `check(reference, perturbed)`. For a controller whose
    /// final state may differ between runs in ways that do not matter (a generated name, the
    /// order of a list), check what does.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, Patch, PatchParams};
    /// use kube::runtime::{Controller, controller::Action, watcher};
    /// use recon_testing::explore::{Scenario, UserAction};
    /// use serde_json::json;
    ///
    /// /// Stamps each ConfigMap with an annotation.
    /// async fn reconcile(cm: Arc<ConfigMap>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
    ///     let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
    ///     let stamp = json!({"metadata": {"annotations": {"stamped": "yes"}}});
    ///     let name = cm.metadata.name.clone().unwrap_or_default();
    ///     api.patch(&name, &PatchParams::default(), &Patch::Merge(&stamp)).await?;
    ///     Ok(Action::requeue(Duration::from_secs(300)))
    /// }
    ///
    /// fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<kube::Client>) -> Action {
    ///     Action::requeue(Duration::from_secs(5))
    /// }
    ///
    /// let scenario = |wanted: &'static str| {
    ///     Scenario::new("stamper")
    ///         .controller(|client| {
    ///             let api = Api::<ConfigMap>::namespaced(client.clone(), "default");
    ///             Controller::new(api, watcher::Config::default().labels("stamp=yes"))
    ///                 .run(reconcile, error_policy, Arc::new(client))
    ///         })
    ///         .action(UserAction::create(&json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///             "metadata": {"name": "a", "namespace": "default", "labels": {"stamp": "yes"}}})))
    ///         // Converged: every stamped ConfigMap carries the wanted annotation.
    ///         .converges_when(move |_reference, perturbed| {
    ///             let unstamped: Vec<_> = perturbed
    ///                 .of_kind("ConfigMap")
    ///                 .filter(|cm| cm["metadata"]["labels"]["stamp"] == "yes")
    ///                 .filter(|cm| cm["metadata"]["annotations"]["stamped"] != wanted)
    ///                 .collect();
    ///             match unstamped.as_slice() {
    ///                 [] => Ok(()),
    ///                 missed => Err(format!("{} ConfigMaps not stamped {wanted:?}", missed.len())),
    ///             }
    ///         })
    ///         .max_schedules(5)
    ///         .explore()
    /// };
    /// scenario("yes").assert_clean();
    /// assert!(!scenario("twice").is_clean(), "a check no run meets fails the report");
    /// ```
    pub fn converges_when<F>(mut self, check: F) -> Self
    where
        F: Fn(&World, &World) -> Result<(), String> + Send + Sync + 'static,
    {
        self.convergence = Some(Arc::new(check));
        self
    }

    /// How long (virtual time) without a changing write makes the controller quiescent; ten
    /// minutes by default. It must be longer than the controller's retry delays, or a run
    /// moves on before a retry that would have repaired it.
    pub fn quiet_for(mut self, quiet: Duration) -> Self {
        self.timing.quiet_for = quiet;
        self
    }

    /// The most a run waits (virtual time, and requests sent) for the controller to settle
    /// after one step before reporting that it never does; four hours and 1,000 requests by
    /// default.
    pub fn settle_limit(mut self, limit: Duration, requests: usize) -> Self {
        self.timing.settle_limit = limit;
        self.timing.settle_requests = requests;
        self
    }

    /// How long a delayed watch event, or a restarted controller's stale view, lags behind
    /// (virtual time); 30 seconds by default.
    pub fn lag(mut self, lag: Duration) -> Self {
        self.timing.lag = lag;
        self
    }

    /// Runs only the schedule `id` (as a report prints it; `reference` for none but the
    /// reference run), and any others given the same way. The `RECON_EXPLORE` environment
    /// variable does the same for one schedule without editing the test.
    pub fn only(mut self, id: &str) -> Self {
        self.only.push(id.to_owned());
        self
    }

    /// Runs only the schedules of this scenario kept in the YAML file at `path` (relative
    /// paths from the crate's directory, as cargo runs tests), as [`only`](Self::only) does:
    /// the regression tests of an exploration, one entry per schedule, as a report prints
    /// them.
    ///
    /// ```yaml
    /// - scenario: web
    ///   schedule: restart-after-write:2
    ///   found: "[Diverged] the final world differs: extra v1 ConfigMap default/web-<generated 2>"
    /// ```
    ///
    /// A file that cannot be read, is not such a list, names no schedule of this scenario, or
    /// holds an id that is not a schedule is a set-up failure naming the file.
    pub fn kept(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.kept = Some(path.into());
        self
    }

    /// Runs part `i` of `n` (1-based) of the schedules, so that `n` tests (or CI machines)
    /// share an exploration; the reference run is made by every part. The `RECON_EXPLORE_PART`
    /// environment variable (`i/n`) does the same.
    pub fn part(mut self, i: usize, n: usize) -> Self {
        if n == 0 || i == 0 || i > n {
            self.errors
                .push(format!("part {i} of {n}: parts are numbered from 1 to n"));
        } else {
            self.part = (i, n);
        }
        self
    }

    /// Explores at most `n` schedules (5,000 by default); the report says how many it left.
    pub fn max_schedules(mut self, n: usize) -> Self {
        self.max_schedules = n;
        self
    }

    /// Starts no new schedule after `budget` of wall time (ten minutes by default); the
    /// report says how many it left.
    pub fn time_budget(mut self, budget: Duration) -> Self {
        self.time_budget = budget;
        self
    }

    /// Runs schedules on `n` threads (all cores by default).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }
}

/// An error and its sources, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}
