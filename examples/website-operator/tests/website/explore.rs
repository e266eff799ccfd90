//! The Website operator, run under kube's `Controller` as the crate docs run a
//! `ResourceReconciler`, under perturbation exploration: restarts, stale caches, lost or late
//! watch events, other writers and transient failures around a user's create, edit and delete
//! of a `Website`.
//!
//! The actions go through `v1`, the storage version: the exploration's server has no hook for
//! the in-process conversion `v1alpha1` needs (`website.rs` tests that path).

use std::sync::Arc;

use kube::Api;
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::{CauseKind, Scenario, UserAction};
use serde_json::json;
use website_operator::{Website, crd, reconciler};

/// How the engine words a watch that met 410 Expired, as a "stuck" reconcile.
const EXPIRED_WATCH: &str = "a reconcile fails forever: event queue error: error returned by \
                             apiserver during watch: too old resource version";

#[test]
fn website_survives_perturbations() {
    let site = |hosts: &[&str]| {
        json!({"apiVersion": "example.com/v1", "kind": "Website",
            "metadata": {"name": "blog", "namespace": "default"}, "spec": {"hosts": hosts}})
    };
    let mut report = Scenario::new("website")
        .crd(crd())
        .controller(|client| {
            let reconciler = reconciler(Config::new(client.clone(), "website-operator"));
            reconciler
                .controller(Api::<Website>::all(client), watcher::Config::default())
                .run(
                    ResourceReconciler::reconcile_object,
                    ResourceReconciler::error_policy,
                    Arc::new(reconciler),
                )
        })
        .action(UserAction::create(&site(&["blog.example.com"])))
        .action(UserAction::patch(&site(&[
            "blog.example.com",
            "www.blog.example.com",
        ])))
        .action(UserAction::delete(
            "example.com/v1",
            "Website",
            Some("default"),
            "blog",
        ))
        .explore();
    report.failures.retain(|f| match f.kind {
        // FALSE-ALARM: kube's event `Recorder` (which recon's reconciler publishes with) names
        // each Event `<object>.<wall clock in hex ns>`, and the engine compares the two
        // reference runs' traces with those names in. Dropped only when the runs part at an
        // Event write; remove once the engine leaves Event names out of the comparison.
        CauseKind::Nondeterministic => !parts_at_an_event_write(&f.parting),
        // FALSE-ALARM: a dropped event compacts the history, so each of the controller's three
        // watches (Websites; ConfigMaps as owned and as tracked) meets one 410 Expired when it
        // watches again, and kube's watcher lists again. The engine counts those `QueueError`s
        // as failed reconciles, three of which make it "stuck"; remove once it counts
        // reconciles only.
        CauseKind::Stuck => !f.cause.starts_with(EXPIRED_WATCH),
        _ => true,
    });
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}

/// Whether both runs' first differing trace lines are writes of an Event.
fn parts_at_an_event_write(parting: &str) -> bool {
    ["reference run:", "this run:"].iter().all(|side| {
        parting
            .split(side)
            .nth(1)
            .and_then(|rest| rest.lines().nth(1))
            .is_some_and(|line| line.contains(" events.k8s.io/v1 events "))
    })
}
