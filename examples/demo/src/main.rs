//! `cargo run -p recon-demo`: the example operators under kube's `Controller`, against recon's
//! embedded in-memory API server (no cluster, no kubeconfig), printing what happens as it
//! happens, then a summary. `--help` describes the flags (see [`recon_demo::cli`]).
//!
//! - After the scenario, two replicas of the Function operator run under recon's `Runner` with
//!   leader election, and hand over twice (a graceful shutdown, then a lost Lease).
//! - Then a Website is written through its old version (`v1alpha1`) and reconciled by the
//!   Website operator, which reads `v1`: the CRD converts through the operator's webhook.
//! - `RUST_LOG` picks what is printed (default `info,recon_core=warn`; `debug` adds each
//!   reconcile's reads).
//! - `--cluster` runs the same scenario against the cluster of the current kubeconfig context
//!   (or the pod's service account); `--kubeconfig PATH` against the one in that file. It
//!   installs the example CRDs there and creates its objects in the namespace `recon-demo`. On
//!   a control plane without nodes it plays the kubelet, reporting its Pods running and ready.
//! - `--check` after either runs the scenario on the in-memory server first, then on the
//!   cluster, and fails unless the cluster run ends the same way (steps, final state, webhook
//!   answers, the events the operators published): `cargo xtask demo --real` does it against
//!   the project's own control plane.

use std::process::ExitCode;

use recon_demo::Target;
use recon_demo::cli::{self, Command};

#[tokio::main]
async fn main() -> ExitCode {
    let (cluster, check) = match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            print!("{}", cli::help());
            return ExitCode::SUCCESS;
        }
        Ok(Command::Run { cluster, check }) => (cluster, check),
        Err(message) => {
            eprintln!(
                "recon-demo: {message}\n{}\n(--help describes them)",
                cli::USAGE
            );
            return ExitCode::from(2);
        }
    };
    let target = match &cluster {
        None => Target::in_memory(),
        Some(cluster) => match cli::connect(cluster).await {
            Ok((client, config)) => Target::Cluster(client, Box::new(config)),
            Err(message) => {
                eprintln!("recon-demo: {message}");
                return ExitCode::FAILURE;
            }
        },
    };
    // Installed once the cluster answered: kube's client logs a failed connection as an error of
    // its own, which the message of `connect` already says better.
    let rust_log = std::env::var("RUST_LOG").ok();
    let subscriber = recon_demo::logging::subscriber(rust_log.as_deref(), std::io::stdout);
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        eprintln!("recon-demo: a tracing subscriber was already installed; keeping it");
    }
    let embedded = if check {
        println!("==== first on the in-memory API server, to compare with");
        match recon_demo::run(&Target::in_memory()).await {
            Ok(summary) => Some(summary),
            Err(err) => {
                eprintln!("recon-demo: the embedded run: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    if embedded.is_some() {
        println!("\n==== then on the cluster");
    }
    let summary = match recon_demo::run(&target).await {
        Ok(summary) => summary,
        Err(err) => {
            eprintln!("recon-demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("\n{summary}");
    println!("\n==== two replicas of the Function operator under recon's Runner, and a failover");
    if let Err(err) = recon_demo::failover::run(&target).await {
        eprintln!("recon-demo: the failover: {err}");
        return ExitCode::FAILURE;
    }
    println!("\n==== a Website written through its old version (v1alpha1), reconciled as v1");
    if let Err(err) = recon_demo::versions::run(&target).await {
        eprintln!("recon-demo: the versions: {err}");
        return ExitCode::FAILURE;
    }
    let Some(embedded) = embedded else {
        return ExitCode::SUCCESS;
    };
    let differences = summary.differences_from(&embedded);
    if differences.is_empty() {
        println!("the cluster run ended as the embedded one did");
        ExitCode::SUCCESS
    } else {
        eprintln!("recon-demo: the cluster run differs from the embedded one:");
        for line in differences {
            eprintln!("  {line}");
        }
        ExitCode::FAILURE
    }
}
