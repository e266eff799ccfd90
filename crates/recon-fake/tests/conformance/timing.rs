//! Time modes (`cargo xtask conformance --time` runs both, one after the other):
//!
//! - `RECON_CONFORMANCE=time`, with a real server: each scenario of that server runs on it
//!   through a `kube::Client`, timed without the clean-up that precedes it, its CRDs installed
//!   once; each appends `id, server, real seconds` (`-` when it was not timed, with why on
//!   stderr).
//! - `RECON_CONFORMANCE=time-memory`, with no real server running: every scenario is replayed
//!   on a fresh in-memory server exactly as the replay test runs it, set-up included (a new
//!   server, its CRDs installed), the server's drop afterwards left out as the real side's
//!   clean-up is; each appends `id, server, in-memory seconds, set-up seconds`.
//!
//! Timing the two sides apart keeps the real servers' own background work (etcd, watch caches,
//! garbage collection), which goes on after each of their scenarios, off the cores the
//! in-memory side is timed on. The lines are tab-separated, appended to the file
//! `RECON_CONFORMANCE_TIMES` names; the ratio is the least in-memory's advantage can be.

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

/// Which side a time mode times, if one is on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Real,
    InMemory,
}

pub fn side() -> Option<Side> {
    match std::env::var("RECON_CONFORMANCE").as_deref() {
        Ok("time") => Some(Side::Real),
        Ok("time-memory") => Some(Side::InMemory),
        _ => None,
    }
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
        Ok(Ok(elapsed)) => {
            append(&file, scenario, &format!("{:.6}", elapsed.as_secs_f64()))?;
            Ok(Some(elapsed))
        }
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

/// Writes `scenario`'s in-memory times: the whole replay, and its set-up.
pub fn write_in_memory(
    scenario: &Scenario,
    in_memory: Duration,
    setup: Duration,
) -> Result<(), String> {
    let line = format!("{:.6}\t{:.6}", in_memory.as_secs_f64(), setup.as_secs_f64());
    append(&times_file()?, scenario, &line)
}

fn times_file() -> Result<OsString, String> {
    std::env::var_os("RECON_CONFORMANCE_TIMES")
        .ok_or_else(|| "RECON_CONFORMANCE_TIMES names no file to write the times to".into())
}

/// Notes `scenario` as not timed, with why.
fn untimed(file: &OsStr, scenario: &Scenario, why: &str) -> Result<Option<Duration>, String> {
    eprintln!("{}: on the real server: {why}: not timed", scenario.id);
    append(file, scenario, "-").map(|()| None)
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
