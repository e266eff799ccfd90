//! What several tree tests share: the widget `w`, the same widget while a finalizer keeps it
//! after its deletion, tables and cases on it, the requests a reconcile sent, and events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResourceExt;
use recon_core::{Request, SyncReconciler};
use recon_fake::RequestOrigin;
use recon_test_fixtures::{Widget, widget};
use recon_testing::{EventRef, SubReconcilerTests, TestCase, TestEnv};

/// The live widget `w` of size 1, in namespace `default`.
pub(crate) fn live() -> Widget {
    let mut w = widget("w", 1);
    w.metadata.namespace = Some("default".to_owned());
    w
}

/// The widget `w`, deleted while a finalizer keeps it: terminating.
pub(crate) fn terminating() -> Widget {
    terminating_with(live(), &["example.com/keep"])
}

/// `w` deleted while these finalizers keep it.
pub(crate) fn terminating_with(mut w: Widget, finalizers: &[&str]) -> Widget {
    w.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
    w.metadata.deletion_timestamp = Some(Time("2024-01-01T00:00:00Z".parse().unwrap()));
    w
}

/// The event of the status patch ending a reconcile.
pub(crate) fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

/// The event `Ran` a step publishes saying `what` it did.
pub(crate) fn ran_event(what: &str) -> EventRef {
    EventRef::normal("Ran", what)
}

/// A reconcile of the widget `w`.
pub(crate) fn reconcile_w() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "w"))
}

/// A sub-reconciler table with the `Widget` CRD installed.
pub(crate) fn sub_tests() -> SubReconcilerTests {
    SubReconcilerTests::new().crd(&Widget::crd())
}

/// A step that does nothing.
pub(crate) fn noop() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("Noop").sync(async |_, _| Ok(()))
}

/// The annotation scripting what the step `step` does.
pub(crate) fn script_key(step: &str) -> String {
    format!("script.example.com/{step}")
}

/// The requests the reconciler sent, as `METHOD path -> code`.
pub(crate) fn sent(env: &TestEnv) -> Vec<String> {
    env.server()
        .requests()
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client)
        .map(ToString::to_string)
        .collect()
}

/// `w` kept by the finalizer `finalizer`.
pub(crate) fn with_finalizer(finalizer: &str, mut w: Widget) -> Widget {
    w.metadata.finalizers = Some(vec![finalizer.to_owned()]);
    w
}

/// The event of the patch adding or removing the finalizer `finalizer`.
pub(crate) fn finalizer_patched(finalizer: &str) -> EventRef {
    EventRef::normal(
        "FinalizerPatched",
        &format!("Patched finalizer \"{finalizer}\""),
    )
}
