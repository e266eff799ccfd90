//! The Website operator, run under kube's `Controller` as the crate docs run a
//! `ResourceReconciler`, under perturbation exploration: restarts, stale caches, lost or late
//! watch events, other writers and transient failures around a user's create, edit and delete
//! of a `Website`.
//!
//! The actions go through `v1`, the storage version: the exploration's server has no hook for
//! the in-process conversion `v1alpha1` needs (`main.rs` tests that path).

use std::sync::Arc;

use kube::Api;
use kube::runtime::watcher;
use recon_core::{Config, ResourceReconciler};
use recon_testing::explore::{Scenario, UserAction};
use serde_json::json;
use website_operator::{Website, crd, reconciler};

#[test]
fn website_survives_perturbations() {
    let site = |hosts: &[&str]| {
        json!({"apiVersion": "example.com/v1", "kind": "Website",
            "metadata": {"name": "blog", "namespace": "default"}, "spec": {"hosts": hosts}})
    };
    let report = Scenario::new("website")
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
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}
