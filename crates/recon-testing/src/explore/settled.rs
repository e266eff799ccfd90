//! A controller run until it settles, once, without perturbation: the plain function for a
//! hand-written test of the whole loop (`Controller::run` on one cluster, on a paused clock).

use std::fmt;

use serde_json::Value;

use super::run::Outcome;
use super::trace::Entry;
use super::world::{World, object_words};
use crate::normalize::strip_server_fields;

/// What [`Scenario::settle`](super::Scenario::settle) gives: the cluster once the controller
/// settled after the last user action, the writes it sent, and what went wrong on the way.
///
/// ```
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube::api::{Api, Patch, PatchParams};
/// # use kube::runtime::{Controller, controller::Action, watcher};
/// # use recon_testing::explore::{Scenario, UserAction};
/// # use serde_json::json;
/// # async fn reconcile(cm: Arc<ConfigMap>, client: Arc<kube::Client>) -> Result<Action, kube::Error> {
/// #     if cm.metadata.annotations.as_ref().is_some_and(|a| a.contains_key("stamped")) {
/// #         return Ok(Action::await_change());
/// #     }
/// #     let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
/// #     let patch = json!({"metadata": {"annotations": {"stamped": "yes"}}});
/// #     api.patch("settings", &PatchParams::default(), &Patch::Merge(&patch)).await?;
/// #     Ok(Action::await_change())
/// # }
/// # fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<kube::Client>) -> Action {
/// #     Action::requeue(std::time::Duration::from_secs(5))
/// # }
/// let settings = json!({"apiVersion": "v1", "kind": "ConfigMap",
///                       "metadata": {"name": "settings", "namespace": "default"}});
/// let settled = Scenario::new("stamper")
///     .controller(|client| {
///         let api = Api::<ConfigMap>::namespaced(client.clone(), "default");
///         Controller::new(api, watcher::Config::default())
///             .run(reconcile, error_policy, Arc::new(client))
///     })
///     .action(UserAction::create(&settings))
///     .settle();
/// settled.assert_settled();
/// settled.assert_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "default",
///                  "annotations": {"stamped": "yes"}}}));
/// assert_eq!(settled.writes(), ["PATCH v1 configmaps default/settings, answered 200"]);
/// ```
#[derive(Debug, Clone)]
pub struct Settled {
    world: World,
    writes: Vec<String>,
    problems: Vec<String>,
}

impl Settled {
    pub(crate) fn new(outcome: Outcome) -> Self {
        let writes = outcome
            .trace
            .iter()
            .filter_map(|e| match e {
                Entry::Request(r) if r.write.is_some() => Some(r.answered()),
                _ => None,
            })
            .collect();
        let problems = outcome
            .findings
            .iter()
            .map(|f| format!("[{:?}] {}", f.kind, f.cause))
            .collect();
        Settled {
            world: outcome.world,
            writes,
            problems,
        }
    }

    /// The cluster once the controller settled (events, leases and CRDs left out).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Every write the controller sent, in order, with its answer:
    /// `POST v1 configmaps default/web, answered 201`.
    pub fn writes(&self) -> &[String] {
        &self.writes
    }

    /// What went wrong: the set-up or an action failed, the controller panicked, never
    /// stopped writing, kept failing, or left something behind (as the exploration's oracles
    /// word it).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Panics, with the problems, unless the controller settled cleanly.
    #[track_caller]
    pub fn assert_settled(&self) -> &Self {
        assert!(
            self.problems.is_empty(),
            "the controller did not settle cleanly:\n{}",
            self.problems.join("\n")
        );
        self
    }

    /// Panics, with a diff, unless the cluster holds the object `expected` names (by
    /// `apiVersion`, `kind`, namespace and name) and it equals `expected` once the fields the
    /// server sets (`uid`, `resourceVersion`, `creationTimestamp`, `generation`,
    /// `managedFields`, conditions' `lastTransitionTime`) are left out of both, as tables
    /// compare objects; an owner reference's `uid` is compared only if `expected` gives one.
    #[track_caller]
    pub fn assert_object(&self, expected: &Value) -> &Self {
        if let Err(why) = self.check_object(expected) {
            panic!("{why}");
        }
        self
    }

    /// Panics unless the cluster holds no object named as `expected` names one.
    #[track_caller]
    pub fn assert_absent(&self, expected: &Value) -> &Self {
        if let Err(why) = self.check_absent(expected) {
            panic!("{why}");
        }
        self
    }

    /// What [`assert_object`](Self::assert_object) checks, with the mismatch as an error.
    pub fn check_object(&self, expected: &Value) -> Result<(), String> {
        let key = object_words(expected);
        let Some(stored) = self.find(expected) else {
            return Err(format!("the settled cluster holds no {key}"));
        };
        let (mut want, mut got) = (expected.clone(), stored.clone());
        strip_server_fields(&mut want);
        strip_server_fields(&mut got);
        // An owner's uid is the server's to choose: compared only where the expectation
        // gives one.
        let wanted = want["metadata"]["ownerReferences"].as_array();
        let stored = got
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut);
        if let (Some(wanted), Some(stored)) = (wanted, stored) {
            for (w, g) in wanted.iter().zip(stored.iter_mut()) {
                if w.get("uid").is_none()
                    && let Some(g) = g.as_object_mut()
                {
                    g.remove("uid");
                }
            }
        }
        match crate::diff::json_diff(&want, &got, false) {
            Some(diff) => Err(format!(
                "{key} differs once settled (- expected, + stored):\n{diff}"
            )),
            None => Ok(()),
        }
    }

    /// What [`assert_absent`](Self::assert_absent) checks, with the mismatch as an error.
    pub fn check_absent(&self, expected: &Value) -> Result<(), String> {
        match self.find(expected) {
            Some(_) => Err(format!(
                "the settled cluster still holds {}",
                object_words(expected)
            )),
            None => Ok(()),
        }
    }

    fn find(&self, expected: &Value) -> Option<&Value> {
        let meta = &expected["metadata"];
        self.world.get(
            expected["apiVersion"].as_str().unwrap_or_default(),
            expected["kind"].as_str().unwrap_or_default(),
            meta["namespace"].as_str(),
            meta["name"].as_str().unwrap_or_default(),
        )
    }
}

impl fmt::Display for Settled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "settled with {} objects after {} writes",
            self.world.objects().len(),
            self.writes.len()
        )?;
        for problem in &self.problems {
            writeln!(f, "problem: {problem}")?;
        }
        Ok(())
    }
}
