//! `cargo xtask measure`: what a newcomer's first `cargo test --workspace` costs. It builds and
//! runs every test in a fresh target directory (cold), then again (warm), and prints the wall
//! time, the CPU time (user + sys of cargo, rustc, the linker and the tests) and the size the
//! target directory reached.

use std::path::Path;
use std::process::{Command, ExitCode};

/// One timed run of a command, as bash's `time` reports it.
struct Timing {
    wall: f64,
    cpu: f64,
}

/// The test command the README gives (and `.ci/run` runs).
const TEST_COMMAND: &str = "cargo test --workspace --locked";

pub fn run(root: &Path, args: &[String]) -> ExitCode {
    let keep = args.iter().any(|a| a == "--keep");
    if let Some(unknown) = args.iter().find(|a| *a != "--keep") {
        eprintln!("measure: unknown flag `{unknown}` (only --keep)");
        return ExitCode::from(2);
    }
    let target = root.join("target/measure");
    let log = root.join("target/measure.log");
    if target.exists()
        && let Err(err) = std::fs::remove_dir_all(&target)
    {
        eprintln!("measure: cannot empty {}: {err}", target.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "measure: `{TEST_COMMAND}` with CARGO_TARGET_DIR={}, output in {}",
        target.display(),
        log.display()
    );
    let cold = match timed(root, &target, &log) {
        Ok(t) => t,
        Err(err) => return fail(&err),
    };
    let size = match disk_usage(&target) {
        Ok(size) => size,
        Err(err) => return fail(&err),
    };
    let warm = match timed(root, &target, &log) {
        Ok(t) => t,
        Err(err) => return fail(&err),
    };
    println!("| run | wall | CPU (user + sys) |");
    println!("|---|---|---|");
    println!("| cold | {:.0} s | {:.0} s |", cold.wall, cold.cpu);
    println!("| warm | {:.1} s | {:.1} s |", warm.wall, warm.cpu);
    println!(
        "target directory after the cold run: {:.1} GB",
        size as f64 / 1e9
    );
    if !keep && let Err(err) = std::fs::remove_dir_all(&target) {
        eprintln!("measure: cannot remove {}: {err}", target.display());
    }
    ExitCode::SUCCESS
}

fn fail(err: &str) -> ExitCode {
    eprintln!("measure: {err}");
    ExitCode::FAILURE
}

/// Runs the test command under bash's `time`, which counts the CPU time of every process the
/// command waited for.
fn timed(root: &Path, target: &Path, log: &Path) -> Result<Timing, String> {
    let script = format!(
        "TIMEFORMAT='%R %U %S'; {{ time {TEST_COMMAND} >\"$1\" 2>&1; }} 2>&1 || {{ echo 'tests failed, see '\"$1\" >&2; exit 1; }}"
    );
    let output = Command::new("bash")
        .args(["-c", &script, "measure"])
        .arg(log)
        .env("CARGO_TARGET_DIR", target)
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let numbers: Vec<f64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| format!("unexpected output of `time`: {text:?}"))?;
    match numbers[..] {
        [wall, user, sys] => Ok(Timing {
            wall,
            cpu: user + sys,
        }),
        _ => Err(format!("unexpected output of `time`: {text:?}")),
    }
}

/// The disk space `dir` takes, as `du` counts it (hard-linked artifacts once).
fn disk_usage(dir: &Path) -> Result<u64, String> {
    let output = Command::new("du")
        .arg("-sk")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run du: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .next()
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| format!("unexpected output of du: {text:?}"))
}
