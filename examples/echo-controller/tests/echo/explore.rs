//! The echo controller, unchanged and wired as `main.rs` wires it, under perturbation
//! exploration: restarts, stale caches, lost or late watch events, other writers and transient
//! failures around a user's create, edit and delete of an `Echo`.

use std::sync::Arc;

use echo_controller::{Data, Echo, error_policy, reconcile};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{Controller, watcher};
use kube::{Api, CustomResourceExt};
use recon_testing::explore::{CauseKind, Scenario, UserAction};
use serde_json::json;

#[test]
fn echo_survives_perturbations() {
    let echo = |message: &str| {
        json!({"apiVersion": "examples.recon.dev/v1", "kind": "Echo",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"message": message}})
    };
    // The default quiet time (ten minutes) outlasts the 300 s resync and the 30 s retry, so a
    // run never moves on before a reconcile that would repair it.
    let mut report = Scenario::new("echo")
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
        .explore();
    // FALSE-ALARM: kube's event `Recorder` names each Event `<object>.<wall clock in hex ns>`,
    // and the engine compares the two reference runs' traces with those names in, so it calls
    // the controller nondeterministic. Only that report is dropped, and only when the runs part
    // at an Event write; remove this once the engine leaves Event names out of the comparison.
    report.failures.retain(|f| {
        !(f.kind == CauseKind::Nondeterministic && parts_at_an_event_write(&f.parting))
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
