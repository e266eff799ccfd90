//! Expected tracks.

use crate::sprocket::Sprocket;
use k8s_openapi::api::core::v1::ConfigMap;
use recon_core::{Reference, SyncReconciler};
use recon_testing::TestCase;

use crate::support::*;

/// Tracks the config map `w-config` (found or not).
fn track_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("TrackConfigMap").sync(async |ctx, _| {
        let _: Option<ConfigMap> = ctx.track_and_get(Some("default"), "w-config").await?;
        Ok(())
    })
}

fn tracked(name: &str) -> Reference {
    Reference::of::<ConfigMap>(Some("default"), name)
}

#[tokio::test]
async fn tracks_pass_when_the_tracked_references_match() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&sprocket(1)).expect_track(request(), tracked("w-config")),
        track_config_map,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn tracks_fail_with_a_diff_of_the_reference() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&sprocket(1)).expect_track(request(), tracked("w-settings")),
        track_config_map,
    )
    .await;
    assert_eq!(
        mismatches(&report, "tracks its config map"),
        ["expect.tracks[0]"]
    );
    assert_contains(
        &failure(&report),
        &[
            "-    \"name\": \"w-settings\",",
            "+    \"name\": \"w-config\",",
        ],
    );
}

#[tokio::test]
async fn an_unexpected_track_is_reported() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&sprocket(1)),
        track_config_map,
    )
    .await;
    assert_eq!(
        mismatches(&report, "tracks its config map"),
        ["expect.tracks[0]"]
    );
    assert_contains(
        &failure(&report),
        &["was observed but not expected", "\"w-config\""],
    );
}

#[tokio::test]
async fn a_malformed_given_track_fails_the_case_setup() {
    let mut bad = tracked("w-config");
    bad.selector = Some("app=w".into());
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&sprocket(1)).given_track(request(), bad),
        track_config_map,
    )
    .await;
    assert_eq!(mismatches(&report, "tracks its config map"), ["case setup"]);
    assert_contains(
        &failure(&report),
        &[
            "givenTracks[0]: cannot track ConfigMap.core in default named \"w-config\": needs exactly one of name and selector",
        ],
    );
}
