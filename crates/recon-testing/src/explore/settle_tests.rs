//! A table of whole-controller cases: each case's givens and actions on the table's scenario,
//! run until the controller settles ([`Scenario::settle`]), then its expectations checked.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::action::UserAction;
use super::scenario::Scenario;
use super::settled::Settled;

/// What one case of a [`SettleTests`] table does and expects: the objects it adds to the
/// table's scenario, the user's actions, then what the settled cluster holds (objects compared
/// as tables compare them, the fields the server sets left out), what it no longer holds, the
/// writes the controller sent, and the problems the case expects (none, by default).
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SettleCase {
    givens: Vec<Value>,
    actions: Vec<UserAction>,
    objects: Vec<Value>,
    absent: Vec<Value>,
    writes: Option<Vec<String>>,
    problems: Vec<String>,
    errors: Vec<String>,
}

impl SettleCase {
    /// A case with nothing given, done or expected.
    pub fn new() -> Self {
        SettleCase::default()
    }

    /// An object the cluster holds before the controller starts.
    pub fn given(mut self, object: &impl Serialize) -> Self {
        match serde_json::to_value(object) {
            Ok(value) => self.givens.push(value),
            Err(e) => self.errors.push(format!("a given object: {e}")),
        }
        self
    }

    /// What the user does next; the controller settles after each action.
    pub fn action(mut self, action: UserAction) -> Self {
        self.actions.push(action);
        self
    }

    /// The settled cluster holds this object, as [`Settled::assert_object`] compares it.
    pub fn expect_object(mut self, object: &impl Serialize) -> Self {
        match serde_json::to_value(object) {
            Ok(value) => self.objects.push(value),
            Err(e) => self.errors.push(format!("an expected object: {e}")),
        }
        self
    }

    /// The settled cluster holds no object named as `object` names one.
    pub fn expect_absent(mut self, object: &impl Serialize) -> Self {
        match serde_json::to_value(object) {
            Ok(value) => self.absent.push(value),
            Err(e) => self.errors.push(format!("an object expected absent: {e}")),
        }
        self
    }

    /// The controller's writes, all of them in order, as [`Settled::writes`] words them
    /// (`POST v1 configmaps default/web, answered 201`).
    pub fn expect_writes(mut self, writes: &[&str]) -> Self {
        self.writes = Some(writes.iter().map(|w| (*w).to_owned()).collect());
        self
    }

    /// A problem the case expects (a substring of one of [`Settled::problems`]); any problem
    /// no expectation matches fails the case.
    pub fn expect_problem(mut self, problem: &str) -> Self {
        self.problems.push(problem.to_owned());
        self
    }

    /// Every way `settled` differs from the case's expectations.
    fn mismatches(&self, settled: &Settled) -> Vec<String> {
        let mut out = self.errors.clone();
        for problem in settled.problems() {
            if !self.problems.iter().any(|p| problem.contains(p.as_str())) {
                out.push(format!("unexpected problem: {problem}"));
            }
        }
        for expected in &self.problems {
            if !settled
                .problems()
                .iter()
                .any(|p| p.contains(expected.as_str()))
            {
                out.push(format!("expected a problem with {expected:?}, found none"));
            }
        }
        out.extend(
            self.objects
                .iter()
                .filter_map(|o| settled.check_object(o).err()),
        );
        out.extend(
            self.absent
                .iter()
                .filter_map(|o| settled.check_absent(o).err()),
        );
        if let Some(writes) = &self.writes
            && writes.as_slice() != settled.writes()
        {
            let shown = |w: &[String]| w.iter().map(|l| format!("\n    {l}")).collect::<String>();
            out.push(format!(
                "writes differ:\n  expected:{}\n  sent:{}",
                shown(writes),
                shown(settled.writes())
            ));
        }
        out
    }
}

/// A table of [`SettleCase`]s, each run on a fresh copy of one scenario (the controller, its
/// CRDs, what every case shares), in the order written.
///
/// ```
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube::api::{Api, Patch, PatchParams};
/// # use kube::runtime::{Controller, controller::Action, watcher};
/// # use kube::ResourceExt;
/// use recon_testing::explore::{Scenario, SettleCase, SettleTests, UserAction};
/// use serde_json::json;
/// # async fn reconcile(cm: Arc<ConfigMap>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
/// #     if cm.annotations().contains_key("stamped") { return Ok(Action::await_change()); }
/// #     let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
/// #     let patch = json!({"metadata": {"annotations": {"stamped": "yes"}}});
/// #     api.patch(&cm.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
/// #     Ok(Action::await_change())
/// # }
/// # fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<kube::Client>) -> Action {
/// #     Action::requeue(std::time::Duration::from_secs(5))
/// # }
///
/// let stamper = || {
///     Scenario::new("stamper").controller(|client| {
///         let api = Api::<ConfigMap>::namespaced(client.clone(), "default");
///         Controller::new(api, watcher::Config::default())
///             .run(reconcile, error_policy, Arc::new(client))
///     })
/// };
/// let settings = json!({"apiVersion": "v1", "kind": "ConfigMap",
///                       "metadata": {"name": "settings", "namespace": "default"}});
/// SettleTests::new()
///     .case("a new config map is stamped", SettleCase::new()
///         .action(UserAction::create(&settings))
///         .expect_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
///             "metadata": {"name": "settings", "namespace": "default",
///                          "annotations": {"stamped": "yes"}}}))
///         .expect_writes(&["PATCH v1 configmaps default/settings, answered 200"]))
///     .case("a deleted one is gone", SettleCase::new()
///         .given(&settings)
///         .action(UserAction::delete("v1", "ConfigMap", Some("default"), "settings"))
///         .expect_absent(&settings))
///     .run(stamper);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SettleTests {
    cases: Vec<(String, SettleCase)>,
}

impl SettleTests {
    /// An empty table.
    pub fn new() -> Self {
        SettleTests::default()
    }

    /// Adds the case `name`.
    pub fn case(mut self, name: &str, case: SettleCase) -> Self {
        self.cases.push((name.to_owned(), case));
        self
    }

    /// Runs every case on what `scenario` makes, and says which failed and why.
    pub fn check(&self, scenario: impl Fn() -> Scenario) -> SettleReport {
        let failures = self
            .cases
            .iter()
            .filter_map(|(name, case)| {
                let mut built = scenario();
                for given in &case.givens {
                    built = built.given(given);
                }
                for action in &case.actions {
                    built = built.action(action.clone());
                }
                let mismatches = case.mismatches(&built.settle());
                (!mismatches.is_empty()).then(|| (name.clone(), mismatches))
            })
            .collect();
        SettleReport {
            cases: self.cases.len(),
            failures,
        }
    }

    /// [`check`](Self::check), panicking with the report unless every case passed.
    #[track_caller]
    pub fn run(&self, scenario: impl Fn() -> Scenario) {
        let report = self.check(scenario);
        assert!(report.failures.is_empty(), "{report}");
    }
}

/// What a [`SettleTests`] table found: each failed case with its mismatches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SettleReport {
    /// How many cases ran.
    pub cases: usize,
    /// The failed cases, by name, in the order written, each with what did not match.
    pub failures: Vec<(String, Vec<String>)>,
}

impl fmt::Display for SettleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} of {} cases failed", self.failures.len(), self.cases)?;
        for (name, mismatches) in &self.failures {
            writeln!(f, "\ncase {name:?} failed:")?;
            for mismatch in mismatches {
                for line in mismatch.lines() {
                    writeln!(f, "  {line}")?;
                }
            }
        }
        Ok(())
    }
}
