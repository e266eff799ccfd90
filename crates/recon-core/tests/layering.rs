//! The layering rule, checked by `cargo test` (and by `cargo xtask layering`, which runs this
//! test): the reconciler tree stays free of the in-memory API server. A production operator
//! depends on `recon-core` with default features; that build must not compile the server or
//! what only the server uses, and the tree's sources must not name it. Tests, doctests and
//! examples reach the server as `recon_fake`, a dev-dependency.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates only the in-memory API server needs.
const SERVER_ONLY: &[&str] = &["recon-fake", "kube-cel", "cel", "sha2"];

/// How the tree's sources would name the server's crate.
const SERVER_CRATE: &str = "recon_fake";

/// recon-core's own directory.
fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_tree_s_sources_name_no_server_crate() {
    let src = crate_dir().join("src");
    let mut found = Vec::new();
    server_imports(&src, &mut found);
    assert!(
        found.is_empty(),
        "recon-core's sources name the in-memory API server (`{SERVER_CRATE}`); the reconciler \
         tree must not import it (tests reach it as a dev-dependency, outside `src/`, or in \
         doctests):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_normal_dependency_tree_has_no_server_only_crate() {
    let crates = normal_dependencies();
    let present: Vec<&str> = SERVER_ONLY
        .iter()
        .copied()
        .filter(|name| crates.iter().any(|c| c == name))
        .collect();
    assert!(
        present.is_empty(),
        "`cargo tree -p recon-core -e normal` lists {present:?}, which only the in-memory API \
         server needs: a production operator depending on recon-core would compile them"
    );
}

/// The names of the crates in recon-core's normal dependency tree, with default features,
/// itself included.
fn normal_dependencies() -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
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
        .current_dir(crate_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo tree: {e}"));
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let mut crates: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    crates.sort();
    crates.dedup();
    assert!(
        crates.iter().any(|c| c == "recon-core"),
        "cargo tree did not list recon-core itself:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    crates
}

/// Appends `file:line: code` for each line of code (not a comment, so neither rustdoc nor its
/// doctests) under `dir` that names the server's crate.
fn server_imports(dir: &Path, found: &mut Vec<String>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .path()
        })
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            server_imports(&path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let shown = path.strip_prefix(crate_dir()).unwrap_or(&path);
        for (i, code) in code_lines(&text) {
            if code.contains(SERVER_CRATE) {
                found.push(format!(
                    "crates/recon-core/{}:{}: {}",
                    shown.display(),
                    i + 1,
                    code.trim()
                ));
            }
        }
    }
}

/// Each line's code, with its index: from `//` on is a comment (rustdoc too, and the doctests
/// in it, which may use dev-dependencies), so it is left out. A `//` inside a string literal
/// (a URL) is taken for a comment too, which at worst hides the rest of that line. recon-core
/// writes no `/* */` comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i, line.split_once("//").map_or(line, |(code, _)| code)))
}

#[test]
fn comments_and_doctests_are_not_read_as_code() {
    let text = "use a::b; // recon_fake in a comment\n\
                /// recon_fake::ApiServer::new()\n\
                //! recon_fake\n\
                let x = recon_fake::ApiServer::new();\n";
    let naming: Vec<usize> = code_lines(text)
        .filter(|(_, code)| code.contains(SERVER_CRATE))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(naming, [3]);
}
