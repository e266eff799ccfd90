//! `cargo xtask layering`: the reconciler tree stays free of the in-memory API server. The check
//! itself is recon-core's `layering` test (`crates/recon-core/tests/layering.rs`), which
//! `cargo test --workspace` runs too; this runs that test alone.

use std::path::Path;
use std::process::{Command, ExitCode};

pub fn run(root: &Path, args: &[String]) -> ExitCode {
    if let Some(unknown) = args.first() {
        eprintln!("layering: unexpected argument `{unknown}`");
        return ExitCode::from(2);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["test", "-p", "recon-core", "--test", "layering"])
        .current_dir(root)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("layering: cannot run cargo test: {e}");
            ExitCode::FAILURE
        }
    }
}
