//! `cargo run -p recon-demo`: the example operators under kube's `Controller`, against recon's
//! embedded in-memory API server (no cluster, no kubeconfig), printing what happens as it
//! happens, then a summary.
//!
//! - `RUST_LOG` picks what is printed (default `info`; `debug` adds every request).
//! - `--cluster` runs the same scenario against the cluster of the current kubeconfig context
//!   (or the pod's service account); `--kubeconfig PATH` against the one in that file. It
//!   installs the example CRDs there and creates its objects in the namespace `recon-demo`.

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
    let target = match target(std::env::args().skip(1).collect()).await {
        Ok(target) => target,
        Err(message) => {
            eprintln!("recon-demo: {message}");
            return ExitCode::from(2);
        }
    };
    match recon_demo::run(&target).await {
        Ok(summary) => {
            println!("\n{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("recon-demo: {err}");
            ExitCode::FAILURE
        }
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
        _ => Err("usage: recon-demo [--cluster | --kubeconfig PATH]".to_owned()),
    }
}
