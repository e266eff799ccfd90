//! `cargo xtask fuzz [CASES] [SEED]`: the property tests of the parsers and patch engines
//! (issue 22), run long in a release build. `cargo test` runs the same tests with a few hundred
//! cases each, from a fixed seed; this runs `CASES` (default 100000) each from `SEED`, or from a
//! new seed it prints, for a search that a CI budget cannot afford.

use std::path::Path;
use std::process::{Command, ExitCode};

/// Cases per property when no count is given: a hundred times what `cargo test` runs.
const DEFAULT_CASES: u64 = 100_000;

/// The test runs: the selector properties are an integration test of recon-apimachinery, the
/// others `#[cfg(test)]` modules picked by their module names: recon-fake's (patch engines,
/// server-side apply and request bodies through the server, CEL), recon-core's (admission
/// reviews) and recon-testing's (YAML suite loaders).
const RUNS: &[&[&str]] = &[
    &[
        "test",
        "--release",
        "-p",
        "recon-apimachinery",
        "--test",
        "selector_properties",
    ],
    &[
        "test",
        "--release",
        "-p",
        "recon-fake",
        "--lib",
        "--",
        "proptests::",
        "cel::tests::properties::",
    ],
    &[
        "test",
        "--release",
        "-p",
        "recon-core",
        "--lib",
        "--",
        "proptests::",
    ],
    &[
        "test",
        "--release",
        "-p",
        "recon-testing",
        "--lib",
        "--",
        "proptests::",
    ],
];

pub fn run(root: &Path, args: &[String]) -> ExitCode {
    let positive = |what: &str, arg: &str| match arg.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => {
            eprintln!("fuzz: {what} must be a positive number, not `{arg}`");
            Err(ExitCode::from(2))
        }
    };
    let (cases, seed) = match args {
        [] => (Ok(DEFAULT_CASES), Ok(new_seed())),
        [count] => (positive("CASES", count), Ok(new_seed())),
        [count, seed] => (positive("CASES", count), positive("SEED", seed)),
        [_, _, unknown, ..] => {
            eprintln!("fuzz: unexpected argument `{unknown}`");
            return ExitCode::from(2);
        }
    };
    let (cases, seed) = match (cases, seed) {
        (Ok(cases), Ok(seed)) => (cases, seed),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    eprintln!("fuzz: seed {seed} (again: cargo xtask fuzz {cases} {seed})");
    for run in RUNS {
        eprintln!(
            "$ RECON_PROPTEST_CASES={cases} PROPTEST_RNG_SEED={seed} cargo {}",
            run.join(" ")
        );
        let status = Command::new("cargo")
            .args(*run)
            .env("RECON_PROPTEST_CASES", cases.to_string())
            .env("PROPTEST_RNG_SEED", seed.to_string())
            .current_dir(root)
            .status();
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("fuzz: `cargo {}` failed ({status})", run.join(" "));
                return ExitCode::FAILURE;
            }
            Err(err) => {
                eprintln!("fuzz: could not run cargo: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// A seed that differs from run to run: the clock's nanoseconds mixed with the process id.
fn new_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ u64::from(std::process::id()).rotate_left(32)).max(1)
}
