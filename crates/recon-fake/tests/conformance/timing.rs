//! Time mode (`RECON_CONFORMANCE=time`; `cargo xtask conformance --time` runs it on both real
//! servers): each scenario of the real server at hand runs on it through a `kube::Client`, then
//! on a fresh in-memory server exactly as the replay test runs it, set-up included (a new
//! server, its CRDs installed). The real side is timed without the clean-up that precedes it
//! and its CRDs are installed once, so the ratio is the least in-memory's advantage can be.
//! Each scenario appends `id, server, real seconds, in-memory seconds, in-memory set-up seconds`
//! (tab-separated; `-` for each time when it was not timed) to the file
//! `RECON_CONFORMANCE_TIMES` names. The set-up (the new server and its CRDs installed) is part
//! of the in-memory time, given apart to show where it goes.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::fixture::Scenario;
use super::record;
use super::runner::{self, Mode};
use super::transport::{Curl, Transport};

/// The longest a scenario may take on the real server (a few of the scenarios' quiet windows).
const REAL_LIMIT: Duration = Duration::from_secs(30);

pub fn enabled() -> bool {
    std::env::var("RECON_CONFORMANCE").is_ok_and(|v| v == "time")
}

/// Times `scenario` on the real server; `None` when it was not timed (noted in the file with
/// why). The caller holds [`record::one_at_a_time`].
pub async fn time_real(scenario: &Scenario) -> Result<Option<Duration>, String> {
    let file = times_file()?;
    if !scenario.controllers.is_empty()
        && std::env::var("RECON_KUBE_CONTROLLERS").as_deref() != Ok("1")
    {
        // As in record mode: without kube-controller-manager it would wait for it for good.
        return untimed(&file, scenario, "needs kube-controller-manager");
    }
    let curl = Curl::from_env()?;
    record::ensure_crds(&curl)?;
    let real = Transport::Fake(real_client().await?);
    let mode = Mode { compare: false };
    let on_real = async {
        record::clean(&real).await?;
        let started = Instant::now();
        let outcome = runner::run(scenario, &real, &mode).await;
        match &outcome.stopped {
            Some(why) => Err(why.clone()),
            None => Ok(started.elapsed()),
        }
    };
    match tokio::time::timeout(REAL_LIMIT, on_real).await {
        Ok(Ok(elapsed)) => Ok(Some(elapsed)),
        // A request the real server holds (a read waiting on a watch cache that stopped, an
        // eviction waiting on a controller that is not there), or a scenario that does not go
        // through on it this time, does not stop the others: it is counted as not timed.
        Ok(Err(why)) => untimed(&file, scenario, &why),
        Err(_) => {
            let why = format!("not done within {} s", REAL_LIMIT.as_secs());
            untimed(&file, scenario, &why)
        }
    }
}

/// Writes `scenario`'s times: on the real server, replayed in memory, and the in-memory
/// replay's set-up.
pub fn write(
    scenario: &Scenario,
    on_real: Duration,
    in_memory: Duration,
    setup: Duration,
) -> Result<(), String> {
    let line = format!(
        "{:.6}\t{:.6}\t{:.6}",
        on_real.as_secs_f64(),
        in_memory.as_secs_f64(),
        setup.as_secs_f64()
    );
    append(&times_file()?, scenario, &line)
}

fn times_file() -> Result<OsString, String> {
    std::env::var_os("RECON_CONFORMANCE_TIMES")
        .ok_or_else(|| "RECON_CONFORMANCE_TIMES names no file to write the times to".into())
}

/// Notes `scenario` as not timed, with why.
fn untimed(file: &OsStr, scenario: &Scenario, why: &str) -> Result<Option<Duration>, String> {
    eprintln!("{}: on the real server: {why}: not timed", scenario.id);
    append(file, scenario, "-\t-\t-").map(|()| None)
}

/// Appends `scenario`'s line, `fields` after its id and server.
fn append(file: &OsStr, scenario: &Scenario, fields: &str) -> Result<(), String> {
    let line = format!("{}\t{}\t{fields}\n", scenario.id, scenario.server.name());
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| format!("{}: {e}", Path::new(file).display()))
}

/// A client of the real server `KUBECONFIG` names (`xtask/*-apiserver.sh run` sets it).
async fn real_client() -> Result<kube::Client, String> {
    let kubeconfig = Kubeconfig::read().map_err(|e| format!("reading KUBECONFIG: {e}"))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("loading KUBECONFIG: {e}"))?;
    kube::Client::try_from(config).map_err(|e| format!("a client for the real server: {e}"))
}
