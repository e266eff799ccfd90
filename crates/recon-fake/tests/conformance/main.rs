//! Differential conformance: every scenario under `fixtures/conformance/` was recorded from a
//! real API server (apiextensions-apiserver 1.36, kube-apiserver's custom resource code, with
//! etcd; for `server: kube-apiserver` scenarios of built-in kinds, kube-apiserver 1.36 without
//! controllers); here each one is replayed on a fresh in-memory `ApiServer` and must get the
//! same answers, after normalising what differs only by identity (uids, resourceVersions,
//! timestamps, generated names, namespaces, allocated addresses and ports).
//!
//! `RECON_CONFORMANCE=record` with the `REAL_APISERVER_*` variables set records them again
//! instead (`cargo xtask conformance --record` does it all); `RECON_CONFORMANCE=time` times
//! them on a real server and `time-memory` in memory (`cargo xtask conformance --time` runs
//! both). The format is described in the
//! CONTRIBUTING.md, section "Conformance".

mod conversion;
mod fixture;
mod nest;
mod normalize;
mod record;
mod runner;
mod timing;
mod transport;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fixture::Scenario;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use recon_fake::{ApiServer, ManualClock};
use rstest::rstest;
use runner::Outcome;
use transport::Transport;

/// Scenarios the in-memory server is known to answer differently, with why (`bug:` marks a
/// difference outside the features still to come). Each must still differ: once a gap is
/// closed its test fails until the entry is removed.
const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        "patch/strategic-merge-into-a-raw-extension",
        "bug: a strategic merge patch bringing an object where a RawExtension holds one is \
         merged; the real patch library looks the key up in the RawExtension struct and fails \
         with a 500 (`unable to find api field in struct RawExtension ...`): the patch schema \
         (`strategic/schema.rs`) knows tagged fields only, not which structs have no JSON fields",
    ),
    (
        "versions/none-strategy-unchanged-update-through-another-version",
        "bug: an update through a version the CRD does not store is never taken for a no-op \
     (the real server compares with etcd's bytes, which hold the object without the storage \
     version's defaults: it writes the first such update that changes nothing, not the next)",
    ),
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("cannot build a Tokio runtime: {e}"))
}

/// Replays `scenario` on a paused Tokio clock: a wait (an event's `timeout`, a `quiet` window,
/// the server's own timers) moves the clock only once the server and the client have nothing
/// left to do, so it lasts as long as the recording says and costs no wall time.
fn replay_on_paused_clock(scenario: &Scenario) -> Result<Replayed, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .map_err(|e| format!("cannot build a Tokio runtime: {e}"))?
        .block_on(replay(scenario))
}

/// A replay's outcome and times.
struct Replayed {
    outcome: Outcome,
    /// From the new server to the last step's answer checked: what the real side's time is
    /// to the in-memory side, with the set-up it does not time added. The runtime's start
    /// and the server's drop afterwards are left out, as the real side leaves out its
    /// clean-up.
    took: Duration,
    /// Of which the new server and its CRDs installed.
    setup: Duration,
}

async fn replay(scenario: &Scenario) -> Result<Replayed, String> {
    let started = Instant::now();
    // A stopped clock: a real recording takes well under a second, and times truncated to the
    // second order some lists (`managedFields` by operation, then second, then manager), so a
    // replay crossing a second boundary would order them differently from the recording.
    let clock = ManualClock::new(
        "2024-01-01T00:00:00Z"
            .parse()
            .map_err(|e| format!("bad replay time: {e}"))?,
    );
    let mut builder = ApiServer::builder().clock(clock);
    for controller in &scenario.controllers {
        builder = match controller {
            fixture::Controller::RootCaPublisher => builder.publish_root_ca(true),
            fixture::Controller::ClusterRoleAggregation => builder,
        };
    }
    let server = builder.build();
    // The webhook the recorder served to the real server, called in-process.
    server.serve_conversion("morphs.conformance.example.com", conversion::in_process);
    for (name, manifest) in &scenario.crds {
        let crd: CustomResourceDefinition = serde_json::from_value(manifest.clone())
            .map_err(|e| format!("crds/{name}.yaml is not a CustomResourceDefinition: {e}"))?;
        server
            .install_crd(&crd)
            .await
            .map_err(|e| format!("installing crds/{name}.yaml failed: {e}"))?;
    }
    let setup = started.elapsed();
    let mode = runner::Mode { compare: true };
    let outcome = runner::run(scenario, &Transport::Fake(server.client()), &mode).await;
    Ok(Replayed {
        outcome,
        took: started.elapsed(),
        setup,
    })
}

#[rstest]
fn scenario(
    #[files("../../fixtures/conformance/*/*.yaml")]
    #[exclude("/crds/")]
    path: PathBuf,
) {
    let scenario = fixture::load(&path).unwrap_or_else(|e| panic!("{e}"));
    match timing::side() {
        Some(timing::Side::Real) => {
            if record::records(&scenario) {
                let _one = record::one_at_a_time();
                runtime()
                    .block_on(timing::time_real(&scenario))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            return;
        }
        Some(timing::Side::InMemory) => {
            let _one = record::one_at_a_time();
            let replayed = replay_on_paused_clock(&scenario)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if let Some(why) = &replayed.outcome.stopped {
                panic!("{} in memory: {why}", path.display());
            }
            timing::write_in_memory(&scenario, replayed.took, replayed.setup)
                .unwrap_or_else(|e| panic!("{e}"));
            return;
        }
        None => {}
    }
    if record::enabled() {
        if !record::records(&scenario) {
            eprintln!(
                "{}: recorded from {}, not this server: left as it is",
                scenario.id,
                scenario.server.name()
            );
            return;
        }
        let _one = record::one_at_a_time();
        runtime()
            .block_on(record::record(&scenario))
            .unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    let Replayed { outcome, .. } =
        replay_on_paused_clock(&scenario).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let gap = KNOWN_GAPS.iter().find(|(id, _)| *id == scenario.id);
    match (gap, outcome.differs()) {
        (None, false) => {}
        (None, true) => panic!(
            "the in-memory server answers differently from the real one\n{}",
            outcome.report(&scenario)
        ),
        (Some((_, why)), true) => {
            eprintln!("known gap ({why}):\n{}", outcome.report(&scenario));
        }
        (Some((id, why)), false) => panic!(
            "{id} is listed in KNOWN_GAPS ({why}) but now matches the real server: \
             remove it from the list"
        ),
    }
}

#[test]
fn known_gaps_name_scenarios_that_exist() {
    let ids: Vec<String> = fixture::all_scenario_files()
        .iter()
        .map(|p| fixture::scenario_id(p))
        .collect();
    for (id, _) in KNOWN_GAPS {
        assert!(
            ids.iter().any(|s| s == id),
            "KNOWN_GAPS names {id}, which is not a scenario under {}",
            fixture::ROOT
        );
    }
}

#[test]
fn every_scenario_file_parses() {
    let files = fixture::all_scenario_files();
    assert!(files.len() >= 75, "only {} scenarios", files.len());
    for path in files {
        if let Err(e) = fixture::load(&path) {
            panic!("{e}");
        }
    }
}
