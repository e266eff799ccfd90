//! Before and after hooks of cases.

use std::sync::{Arc, Mutex};

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_fake::{Failure, Verb};
use recon_testing::{CaseStatus, EventRef, ReconcilerTests, TestCase};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn prepare_runs_before_the_reconcile() {
    // The config map the reconciler updates exists only because `prepare` stored it.
    let report = check(
        "updates a prepared config map",
        TestCase::reconcile(request())
            .given(&sprocket(2))
            .prepare(|env| {
                env.server()
                    .seed(&config_map("w-config", json!({"size": "1"})))
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
            .expect_update(&config_map("w-config", json!({"size": "2"}))),
        with(update_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn prepare_can_arm_a_reactor() {
    let report = check(
        "patch fails",
        with_config_map_at_1(2)
            .prepare(|env| {
                env.server()
                    .on(Verb::Patch, "configmaps")
                    .fail(Failure::Internal("etcd is down".into()));
                Ok(())
            })
            .expect_patch(size_patch("2"))
            .expect_error("etcd is down"),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_failing_prepare_fails_the_case_without_running_it() {
    let report = check(
        "prepare fails",
        TestCase::reconcile(request())
            .given(&sprocket(1))
            .prepare(|_| Err("no cluster for you".into())),
        with(panic_on_zero),
    )
    .await;
    assert_contains(&failure(&report), &["prepare: no cluster for you"]);
    assert_eq!(mismatches(&report, "prepare fails"), ["prepare"]);
}

#[tokio::test]
async fn verify_sees_what_was_observed_and_its_error_fails_the_case() {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "verify passes",
            TestCase::reconcile(request())
                .given(&sprocket(4))
                .expect_event(EventRef::normal("Sized", "size is 4"))
                .verify(|_, seen| {
                    if seen.events.len() == 1 && seen.events[0].reason == "Sized" {
                        Ok(())
                    } else {
                        Err(format!("unexpected events {:?}", seen.events))
                    }
                }),
        )
        .case(
            "verify fails",
            TestCase::reconcile(request())
                .given(&sprocket(4))
                .expect_event(EventRef::normal("Sized", "size is 5"))
                .verify(|_, _| Err("the sprocket is not shiny".into())),
        )
        .check(with(publish_size))
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    let text = failure(&report);
    assert_contains(&text, &["verify: the sprocket is not shiny"]);
    assert_eq!(
        mismatches(&report, "verify fails"),
        ["expect.events[0]", "verify"],
        "verify runs after the table's own comparisons, and both are reported"
    );
}

#[tokio::test]
async fn cleanup_runs_even_when_the_case_fails_and_its_error_fails_the_case() {
    let cleaned = Arc::new(Mutex::new(Vec::new()));
    let (a, b) = (cleaned.clone(), cleaned.clone());
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(
            "fails, then cleans up",
            TestCase::reconcile(request())
                .given(&sprocket(-1))
                .cleanup(move |_| {
                    a.lock().unwrap().push("fails");
                    Ok(())
                }),
        )
        .case(
            "passes, cleanup fails",
            TestCase::reconcile(request())
                .given(&sprocket(1))
                .cleanup(move |_| {
                    b.lock().unwrap().push("passes");
                    Err("could not clean up".into())
                }),
        )
        .check(with(reject_negative))
        .await;
    assert_eq!(*cleaned.lock().unwrap(), ["fails", "passes"]);
    assert_eq!(
        mismatches(&report, "fails, then cleans up"),
        ["expect.error"]
    );
    assert_eq!(mismatches(&report, "passes, cleanup fails"), ["cleanup"]);
    assert_contains(&failure(&report), &["cleanup: could not clean up"]);
}
