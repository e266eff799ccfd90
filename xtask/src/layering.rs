//! `cargo xtask layering`: the reconciler tree stays free of the in-memory API server. A
//! production operator depends on `recon-core` with default features; that build must not
//! compile the server or what only the server uses, and the tree's sources must not import it.

use std::path::Path;
use std::process::{Command, ExitCode};

/// Crates only the in-memory API server needs.
const SERVER_ONLY: &[&str] = &["recon-fake", "kube-cel", "cel", "sha2"];

pub fn run(root: &Path, args: &[String]) -> ExitCode {
    if let Some(unknown) = args.first() {
        eprintln!("layering: unexpected argument `{unknown}`");
        return ExitCode::from(2);
    }
    let mut problems = Vec::new();
    match normal_dependencies(root) {
        Ok(crates) => {
            for name in SERVER_ONLY {
                if crates.iter().any(|c| c == name) {
                    problems.push(format!(
                        "`cargo tree -p recon-core -e normal` lists `{name}`, which only the in-memory API server needs"
                    ));
                }
            }
            println!(
                "recon-core with default features: {} crates, none of {SERVER_ONLY:?}",
                crates.len()
            );
        }
        Err(err) => problems.push(err),
    }
    problems.extend(server_imports(&root.join("crates/recon-core/src")));
    if problems.is_empty() {
        println!("recon-core's sources import nothing from the in-memory API server");
        ExitCode::SUCCESS
    } else {
        for problem in &problems {
            eprintln!("layering: {problem}");
        }
        ExitCode::FAILURE
    }
}

/// The names of the crates in recon-core's normal dependency tree, itself included.
fn normal_dependencies(root: &Path) -> Result<Vec<String>, String> {
    let output = Command::new("cargo")
        .args([
            "tree",
            "-p",
            "recon-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let mut crates: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    crates.sort();
    crates.dedup();
    Ok(crates)
}

/// Lines of code (not comments or doctests) under `dir` that name the server's crate, other
/// than the feature-gated re-export in `lib.rs`.
fn server_imports(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![format!("cannot read {}", dir.display())];
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(server_imports(&path));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            found.push(format!("cannot read {}", path.display()));
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") || code == "pub use recon_fake as fake;" {
                continue;
            }
            if code.contains("recon_fake") || code.contains("crate::fake") {
                found.push(format!(
                    "{}:{}: the tree imports the server: {code}",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    found
}
