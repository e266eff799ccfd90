//! The echo controller, unchanged and wired as `main.rs` wires it, under perturbation
//! exploration: restarts, stale caches, lost or late watch events, other writers and transient
//! failures around a user's create, edit and delete of an `Echo`.

use std::sync::Arc;

use echo_controller::{Data, Echo, error_policy, reconcile};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{Controller, watcher};
use kube::{Api, CustomResourceExt};
use recon_testing::explore::{Scenario, UserAction};
use serde_json::json;

/// The scenario: the `Echo` CRD, the controller as `main.rs` builds it, and a user who
/// creates an `Echo`, edits it and deletes it. The exploration bench runs it too.
pub fn scenario() -> Scenario {
    let echo = |message: &str| {
        json!({"apiVersion": "examples.recon.dev/v1", "kind": "Echo",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"message": message}})
    };
    // The default quiet time (ten minutes) outlasts the 300 s resync and the 30 s retry, so a
    // run never moves on before a reconcile that would repair it.
    Scenario::new("echo")
        .crd(Echo::crd())
        .controller(|client| {
            Controller::new(Api::<Echo>::all(client.clone()), watcher::Config::default())
                .owns(
                    Api::<ConfigMap>::all(client.clone()),
                    watcher::Config::default(),
                )
                .run(reconcile, error_policy, Arc::new(Data::new(client)))
        })
        .action(UserAction::create(&echo("hi")))
        .action(UserAction::patch(&echo("bye")))
        .action(UserAction::delete(
            "examples.recon.dev/v1",
            "Echo",
            Some("default"),
            "hello",
        ))
}

#[test]
fn echo_survives_perturbations() {
    let report = scenario().explore();
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}
