//! `cargo xtask conformance --record-builtin`: the built-in kinds' scenarios recorded again from
//! the project's kube-apiserver. The `deep/` scenarios store objects nested past what Go's
//! decoder reads, after which that server's watch cache of their kind stops serving
//! (`cacher ... exceeded max depth`) and later reads of the kind wait or fail: recorded in the same
//! run as the others, they would spoil the recordings after them. So every scenario but those is
//! recorded on one server, and each `deep/` one on a fresh server of its own (etcd starts empty).
//! A scenario that needs controllers (`controllers:`) is recorded on a server of its own with
//! kube-controller-manager (`RECON_KUBE_CONTROLLERS=1`), which the others must not have.

use std::path::Path;
use std::process::{Command, ExitCode};

/// The script that runs the server, and the test filter that names a `deep/` scenario.
const SCRIPT: &str = "xtask/kube-apiserver.sh";
const DEEP: &str = "_conformance_deep_";

pub fn builtin(root: &Path) -> ExitCode {
    match record(root) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance --record-builtin: {e}");
            ExitCode::FAILURE
        }
    }
}

fn record(root: &Path) -> Result<(), String> {
    // rstest lists the scenario files when it compiles: new ones need a rebuild.
    let main = root.join("crates/recon-fake/tests/conformance/main.rs");
    status(Command::new("touch").arg(&main), "touch")?;
    let names = scenarios(root)?;
    let with_controllers = with_controllers(root, &names)?;
    let mut all_but = recording(root);
    all_but.args(["scenario::", "--", "--skip", DEEP]);
    for name in &with_controllers {
        all_but.args(["--skip", name]);
    }
    status(
        &mut all_but,
        "recording the scenarios but `deep/` and those with controllers",
    )?;
    for name in names.iter().filter(|name| name.contains(DEEP)) {
        status(
            recording(root).args(["--", "--exact", name]),
            &format!("recording {name}"),
        )?;
    }
    for name in &with_controllers {
        status(
            recording(root)
                .env("RECON_KUBE_CONTROLLERS", "1")
                .args(["--", "--exact", name]),
            &format!("recording {name} with kube-controller-manager"),
        )?;
    }
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

/// The tests of the scenario files that name `controllers:`. rstest names a test after its
/// file's path, `/`, `-` and `.` written `_`, cut to a length: a name matches the file whose
/// path so written starts with the name's part after `__UP__UP_`.
fn with_controllers(root: &Path, names: &[String]) -> Result<Vec<String>, String> {
    let dir = root.join("fixtures/conformance");
    let mut files = Vec::new();
    for area in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let area = area.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Ok(entries) = std::fs::read_dir(&area) else {
            continue;
        };
        for file in entries.flatten().map(|e| e.path()) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if text.lines().any(|line| line.starts_with("controllers:"))
                && let Ok(relative) = file.strip_prefix(root)
            {
                files.push(relative.to_string_lossy().replace(['/', '-', '.'], "_"));
            }
        }
    }
    Ok(names
        .iter()
        .filter(|name| files.iter().any(|file| names_file(name, file)))
        .cloned()
        .collect())
}

/// Whether the test `name` is the scenario of `file` (its path with `/`, `-`, `.` as `_`).
fn names_file(name: &str, file: &str) -> bool {
    name.split_once("__UP__UP_")
        .is_some_and(|(_, path)| file.starts_with(path))
}

fn status(command: &mut Command, what: &str) -> Result<(), String> {
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{what} failed ({s})")),
        Err(e) => Err(format!("{what}: {e}")),
    }
}
