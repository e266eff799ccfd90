//! The command line: its flags, `--help`, and the client for `--cluster` or `--kubeconfig PATH`,
//! with errors that say which server could not be used and what to do instead.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::NAMESPACE;
use crate::failover::LEASE;

/// The usage line, also printed after a wrong argument.
pub const USAGE: &str = "usage: recon-demo [--cluster | --kubeconfig PATH] [--check]";

/// What `--help` prints.
pub fn help() -> String {
    format!(
        "\
recon-demo: recon's example operators (function-operator, gateway-operator) under kube-rs's
Controller, and its admission webhooks over HTTPS, playing a scenario: create a Gateway and a
Function, change them, ask the webhooks, delete the Function. It prints each reconcile with the
writes it sent and the events it published, then a summary. Then two replicas of the Function
operator run under recon's Runner with leader election on the Lease
`{LEASE}`, and hand over twice: the leader shuts down and releases the
Lease; the next loses the API server for its Lease, and the other takes over once it expired.
Last, a Website is created through its old version (v1alpha1) and reconciled by the Website
operator, which reads v1, the CRD converting through the operator's webhook.

{USAGE}

With no flag it runs against recon's embedded in-memory API server: no cluster, kubeconfig or
network needed. The demo then also plays what a cluster's own controllers would do (a
Deployment becoming available, the garbage collector).

Options:
  --cluster          run against the cluster of the current kubeconfig context (KUBECONFIG,
                     or ~/.kube/config), or the pod's service account inside a pod
  --kubeconfig PATH  run against the cluster of the current context of the kubeconfig PATH
  --check            with --cluster or --kubeconfig: run on the in-memory server first, then
                     on the cluster, and fail unless the cluster run ends the same way (steps,
                     final state, webhook answers, the events the operators published)
  -h, --help         print this help

On a cluster the demo installs the example CRDs (functions, gateways, widgets and websites in
operators.example.com and example.com), creates its objects in the namespace `{NAMESPACE}`
(created if missing), and leaves them there (the Lease too; the Function `relay` of the
failover and the Website `blog` are deleted). The websites CRD converts through a webhook the
demo serves on 127.0.0.1: only an API server on this machine reaches it. On a control plane
without nodes it plays the kubelet, reporting its Pods running and ready.

Environment:
  RUST_LOG  what is printed; default `info,recon_core=warn` (recon-core's own lines repeat
            the writes each block shows). `info` adds them back, `debug` adds the reads of
            each reconcile too; tower, hyper, rustls and kube_client stay at `warn` unless
            named (`RUST_LOG=debug,kube_client=debug`).
"
    )
}

/// What the arguments ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print [`help`].
    Help,
    /// Run the demo.
    Run {
        /// A cluster to run against, or `None` for the in-memory server.
        cluster: Option<Cluster>,
        /// Run on the in-memory server first and compare.
        check: bool,
    },
}

/// Which cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cluster {
    /// The current kubeconfig context, or the pod's service account.
    Current,
    /// The current context of this kubeconfig file.
    Kubeconfig(PathBuf),
}

/// Reads the arguments (without the program name). An error says what is wrong, without the
/// usage line.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut cluster = None;
    let mut check = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--cluster" => {
                // `--kubeconfig PATH` already names a cluster; `--cluster` adds nothing.
                cluster.get_or_insert(Cluster::Current);
            }
            "--kubeconfig" => match args.next() {
                Some(path) if !path.starts_with('-') => {
                    cluster = Some(Cluster::Kubeconfig(path.into()));
                }
                _ => return Err("--kubeconfig needs a PATH".to_owned()),
            },
            "--check" => check = true,
            other => match other.strip_prefix("--kubeconfig=") {
                Some("") => return Err("--kubeconfig needs a PATH".to_owned()),
                Some(path) => cluster = Some(Cluster::Kubeconfig(path.into())),
                None => return Err(format!("unknown argument `{other}`")),
            },
        }
    }
    if check && cluster.is_none() {
        return Err(
            "--check compares a cluster run with the embedded one: add --cluster or --kubeconfig PATH"
                .to_owned(),
        );
    }
    Ok(Command::Run { cluster, check })
}

/// How long the first request to a cluster may take.
const PROBE: Duration = Duration::from_secs(15);

/// A client for `cluster`, once the cluster has answered. The error names the kubeconfig and the
/// server, says why, and points to the in-memory run.
pub async fn connect(cluster: &Cluster) -> Result<(kube::Client, kube::Config), String> {
    let hint = "To run the demo without a cluster, leave out --cluster and --kubeconfig: it then \
                uses the embedded in-memory API server.";
    connect_to(cluster)
        .await
        .map_err(|e| format!("{e}\n{hint}"))
}

async fn connect_to(cluster: &Cluster) -> Result<(kube::Client, kube::Config), String> {
    let (config, source) = match cluster {
        Cluster::Kubeconfig(path) => {
            let source = format!("the kubeconfig {}", path.display());
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read {source}: {}", cause(&e)))?;
            let config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .map_err(|e| format!("cannot use {source}: {}", cause(&e)))?;
            (config, source)
        }
        Cluster::Current => {
            let source = current_source()?;
            let config = kube::Config::infer()
                .await
                .map_err(|e| format!("cannot use {source}: {}", cause(&e)))?;
            (config, source)
        }
    };
    let url = config.cluster_url.to_string();
    let client = kube::Client::try_from(config.clone()).map_err(|e| {
        format!(
            "cannot make a client for {url} (from {source}): {}",
            cause(&e)
        )
    })?;
    match tokio::time::timeout(PROBE, client.apiserver_version()).await {
        Ok(Ok(_)) => Ok((client, config)),
        Ok(Err(e)) => Err(format!(
            "cannot reach the cluster at {url} (from {source}): {}",
            cause(&e)
        )),
        Err(_) => Err(format!(
            "the cluster at {url} (from {source}) did not answer within {}s",
            PROBE.as_secs()
        )),
    }
}

/// Where `--cluster` takes its configuration from, as kube's `Config::infer` looks: the files
/// `KUBECONFIG` lists, `~/.kube/config`, or a pod's service account.
fn current_source() -> Result<String, String> {
    let listed = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    if let Some(paths) = listed {
        return Ok(format!(
            "the kubeconfig {}, which KUBECONFIG names",
            paths.display()
        ));
    }
    let default = std::env::home_dir().map(|home| home.join(".kube").join("config"));
    match default {
        Some(path) if path.exists() => Ok(format!("the kubeconfig {}", path.display())),
        _ if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            Ok("the pod's service account".to_owned())
        }
        default => Err(format!(
            "no kubeconfig found: KUBECONFIG is unset, {} does not exist, and this is not a pod",
            default
                .as_deref()
                .unwrap_or(Path::new("~/.kube/config"))
                .display()
        )),
    }
}

/// The reason at the bottom of an error chain (`Connection refused (os error 111)`), or the
/// API server's own message: the layers above it say only which layer failed.
fn cause(err: &(dyn StdError + 'static)) -> String {
    if let Some(err @ kube::Error::Api(_)) = err.downcast_ref::<kube::Error>() {
        return crate::explain(err);
    }
    let mut deepest = err;
    while let Some(source) = deepest.source() {
        deepest = source;
    }
    deepest.to_string()
}
