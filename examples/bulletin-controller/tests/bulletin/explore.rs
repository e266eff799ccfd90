//! The controller under perturbation exploration: restarts, stale caches, lost or late watch
//! events, other writers and transient failures around a user's post, archive and delete.

use crate::scenario::{controller, post_archive_delete};

#[test]
fn the_bulletin_controller_survives_perturbations() {
    let report = post_archive_delete(controller()).explore();
    report.assert_clean();
    assert_eq!(report.explored, report.planned, "{report}");
}
