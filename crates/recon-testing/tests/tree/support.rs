//! What several tree tests share: the widget `w`, the same widget while a finalizer keeps it
//! after its deletion, and the event of a status patch.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use recon_test_fixtures::{Widget, widget};
use recon_testing::EventRef;

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
