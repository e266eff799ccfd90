//! `cargo xtask conformance --record-builtin`: the built-in kinds' scenarios recorded again from
//! the project's kube-apiserver. The `deep/` scenarios store objects nested past what Go's
//! decoder reads, after which that server's watch cache of their kind stops serving
//! (`cacher ... exceeded max depth`) and later reads of the kind wait or fail: recorded in the same
//! run as the others, they would spoil the recordings after them. So every scenario but those is
//! recorded on one server, and each `deep/` one on a fresh server of its own (etcd starts empty).
//! The scenarios that need controllers (`controllers:`) are recorded last, on a server of their
//! own with kube-controller-manager (`RECON_KUBE_CONTROLLERS=1`), which the others must not have.

use std::path::Path;
use std::process::{Command, ExitCode};

/// The script that runs the server, and the test filter that names a `deep/` scenario.
const SCRIPT: &str = "xtask/kube-apiserver.sh";
const DEEP: &str = "_conformance_deep_";

pub fn builtin(root: &Path) -> ExitCode {
    crate::exit_code("conformance --record-builtin", record(root))
}

fn record(root: &Path) -> Result<(), String> {
    // rstest lists the scenario files when it compiles: new ones need a rebuild.
    let main = root.join("crates/recon-fake/tests/conformance/main.rs");
    status(Command::new("touch").arg(&main), "touch")?;
    // Those that need controllers leave themselves out of this run.
    status(
        recording(root).args(["scenario::", "--", "--skip", DEEP]),
        "recording the scenarios but `deep/`",
    )?;
    for name in scenarios(root)?.iter().filter(|name| name.contains(DEEP)) {
        status(
            recording(root).args(["--", "--exact", name]),
            &format!("recording {name}"),
        )?;
    }
    // Only those that need controllers record themselves in this run.
    status(
        recording(root)
            .env("RECON_KUBE_CONTROLLERS", "1")
            .arg("scenario::"),
        "recording the scenarios that need controllers",
    )?;
    status(
        Command::new("git").current_dir(root).args([
            "status",
            "--short",
            "--",
            "fixtures/conformance",
        ]),
        "git status",
    )?;
    status(
        Command::new("cargo").current_dir(root).args([
            "test",
            "-p",
            "recon-fake",
            "--test",
            "conformance",
        ]),
        "replaying the scenarios",
    )
}

/// `cargo test` of the conformance scenarios in record mode, on a kube-apiserver started for it.
fn recording(root: &Path) -> Command {
    let mut command = Command::new("bash");
    command
        .current_dir(root)
        .args([SCRIPT, "run", "cargo", "test", "-p", "recon-fake"])
        .args(["--test", "conformance"])
        .env("RECON_CONFORMANCE", "record");
    command
}

/// The full names of the scenario tests, as the test binary lists them.
fn scenarios(root: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("cargo")
        .current_dir(root)
        .args(["test", "-q", "-p", "recon-fake", "--test", "conformance"])
        .args(["--", "--list", "--format", "terse"])
        .output()
        .map_err(|e| format!("listing the scenarios: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "listing the scenarios failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}

fn status(command: &mut Command, what: &str) -> Result<(), String> {
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{what} failed ({s})")),
        Err(e) => Err(format!("{what}: {e}")),
    }
}
