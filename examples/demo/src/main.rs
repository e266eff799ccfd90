//! `cargo run -p recon-demo`: the example operators under kube's `Controller`, against recon's
//! embedded in-memory API server (no cluster, no kubeconfig), printing what happens as it
//! happens, then a summary.
//!
//! - `RUST_LOG` picks what is printed (default `info`; `debug` adds every request).
//! - `--cluster` runs the same scenario against the cluster of the current kubeconfig context
//!   (or the pod's service account); `--kubeconfig PATH` against the one in that file. It
//!   installs the example CRDs there and creates its objects in the namespace `recon-demo`. On
//!   a control plane without nodes it plays the kubelet, reporting its Pods running and ready.
//! - `--check` after either runs the scenario on the in-memory server first, then on the
//!   cluster, and fails unless the cluster run ends the same way (steps, final state, webhook
//!   answers, the events the operators published): `cargo xtask demo --real` does it against
//!   the project's own control plane.

use std::io::IsTerminal;
use std::process::ExitCode;

use kube::config::{KubeConfigOptions, Kubeconfig};
use recon_demo::Target;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .init();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.last().is_some_and(|a| a == "--check");
    if check {
        args.pop();
    }
    let target = match target(args).await {
        Ok(target) if check && target.is_in_memory() => {
            eprintln!(
                "recon-demo: --check compares a cluster run with the embedded one: add --cluster or --kubeconfig PATH"
            );
            return ExitCode::from(2);
        }
        Ok(target) => target,
        Err(message) => {
            eprintln!("recon-demo: {message}");
            return ExitCode::from(2);
        }
    };
    let embedded = if check {
        tracing::info!("==== first on the in-memory API server, to compare with");
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
    let summary = match recon_demo::run(&target).await {
        Ok(summary) => summary,
        Err(err) => {
            eprintln!("recon-demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("\n{summary}");
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

/// The API server the arguments ask for.
async fn target(args: Vec<String>) -> Result<Target, String> {
    let mut args = args.into_iter();
    match (args.next().as_deref(), args.next(), args.next()) {
        (None, _, _) => Ok(Target::in_memory()),
        (Some("--cluster"), None, _) => {
            let client = kube::Client::try_default()
                .await
                .map_err(|e| format!("cannot reach a cluster: {e}"))?;
            Ok(Target::Cluster(client))
        }
        (Some("--kubeconfig"), Some(path), None) => {
            let kubeconfig = Kubeconfig::read_from(&path)
                .map_err(|e| format!("cannot read the kubeconfig {path}: {e}"))?;
            let config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .map_err(|e| format!("cannot use the kubeconfig {path}: {e}"))?;
            let client = kube::Client::try_from(config)
                .map_err(|e| format!("cannot build a client from {path}: {e}"))?;
            Ok(Target::Cluster(client))
        }
        _ => Err("usage: recon-demo [--cluster | --kubeconfig PATH] [--check]".to_owned()),
    }
}
