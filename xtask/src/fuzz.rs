//! `cargo xtask fuzz [CASES]`: the property tests of the parsers and patch engines (issue 22),
//! run long in a release build. `cargo test` runs the same tests with a few hundred cases each;
//! this runs `CASES` (default 100000) each, for a search that a CI budget cannot afford.

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
    let cases = match args {
        [] => DEFAULT_CASES,
        [count] => match count.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("fuzz: CASES must be a positive number, not `{count}`");
                return ExitCode::from(2);
            }
        },
        [_, unknown, ..] => {
            eprintln!("fuzz: unexpected argument `{unknown}`");
            return ExitCode::from(2);
        }
    };
    for run in RUNS {
        eprintln!("$ RECON_PROPTEST_CASES={cases} cargo {}", run.join(" "));
        let status = Command::new("cargo")
            .args(*run)
            .env("RECON_PROPTEST_CASES", cases.to_string())
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
