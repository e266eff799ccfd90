//! Additional reconciles of the same resource.

use crate::sprocket::Sprocket;
use kube::Resource;
use recon_core::SyncReconciler;
use recon_testing::{CaseStatus, EventRef, TestCase};

use crate::support::*;

/// Counts its calls in the instance and publishes the count: state an additional reconcile
/// sees only if it runs the same instance.
fn counting() -> SyncReconciler<Sprocket> {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    SyncReconciler::<Sprocket>::new("Count").sync_with(calls, async |ctx, calls, w| {
        let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        ctx.publish(
            &w.object_ref(&()),
            recon_core::Event::normal("Called", "Count", format!("call {n}")),
        )
        .await;
        Ok(())
    })
}

#[tokio::test]
async fn an_additional_reconcile_runs_the_same_instance_in_its_own_cluster() {
    let first = TestCase::sub_reconcile(&sprocket(1))
        .expect_event(EventRef::normal("Called", "call 1"))
        .additional_reconcile(
            TestCase::sub_reconcile(&sprocket(2))
                .named("again")
                .expect_event(EventRef::normal("Called", "call 2")),
        )
        .additional_reconcile(
            TestCase::sub_reconcile(&sprocket(3))
                .named("skipped")
                .skip(),
        );
    let report = check_sub("first", first, counting).await;
    passes(&report);
    let names: Vec<(&str, &CaseStatus)> = report
        .cases
        .iter()
        .map(|c| (c.name.as_str(), &c.status))
        .collect();
    assert_eq!(
        names,
        [
            ("first", &CaseStatus::Passed),
            ("first / again", &CaseStatus::Passed),
            ("first / skipped", &CaseStatus::Skipped),
        ]
    );
}

#[tokio::test]
async fn a_failing_additional_reconcile_fails_the_table_under_its_own_name() {
    let first = TestCase::sub_reconcile(&sprocket(1))
        .expect_event(EventRef::normal("Called", "call 1"))
        .additional_reconcile(
            TestCase::sub_reconcile(&sprocket(2))
                .named("again")
                .expect_event(EventRef::normal("Called", "call 1")),
        );
    let text = failure(&check_sub("first", first, counting).await);
    assert_contains(&text, &["case \"first / again\" failed:", "call 2"]);
}
