//! The README's tutorial compiles and passes as a new user's crate, made only of what README.md
//! shows: its Install section's dependency lines, the tutorial's test file and YAML suite, and
//! the CRD manifest the README says to generate. A dependency the tutorial uses and Install
//! leaves out fails this test, naming the README.
//!
//! recon's crates are not published, so the crate takes them from this repository through
//! `[patch.crates-io]`; every other crate is the version the workspace's `Cargo.lock` pins. The
//! build has a target directory of its own, `target/readme-tutorial`: cold, it compiles the
//! crate's dependencies once (a minute or two); warm, a run costs seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The README's tutorial: its table test and YAML suite are shown under this heading.
const TUTORIAL: &str = "## Tutorial";
/// Where the tutorial's suite lives, relative to the repository (or a user's) root; the README
/// names it just before showing it.
const SUITE: &str = "fixtures/suites/function/status.yaml";
/// The CRD manifest the tutorial generates, relative to the same root.
const MANIFEST: &str = "fixtures/crds/functions.example.com.yaml";
/// The new crate, in `crates/` as the tutorial's relative paths expect.
const CRATE: &str = "crates/readme-tutorial";

#[test]
fn the_readme_tutorial_passes_as_a_new_crate() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root");
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    let tutorial = TutorialFiles::from_readme(&readme);
    let manifest = cargo_toml(&tutorial.dependencies, &repo);

    let root = TempDir::new();
    let dir = root.path().join(CRATE);
    write(&dir.join("Cargo.toml"), &manifest);
    write(&dir.join("tests/function.rs"), &tutorial.test);
    write(&root.path().join(SUITE), &tutorial.suite);
    // The workspace's lock, so that the crate builds with the versions recon is tested with.
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");

    // A target directory of its own under the workspace's: the workspace's build directory may
    // be locked by another cargo command meanwhile (or by the outer `cargo test`, in a cargo
    // that locks it while tests run), and waiting on it here would hold up the whole run.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("readme-tutorial");

    // As the README says: the first run with RECON_FIXTURES=overwrite writes the CRD manifest,
    // then a plain `cargo test` must pass.
    let first = cargo_test(&dir, &target, true);
    expect_passed(
        &first,
        "RECON_FIXTURES=overwrite cargo test",
        &dir,
        &manifest,
    );
    let second = cargo_test(&dir, &target, false);
    expect_passed(&second, "cargo test", &dir, &manifest);

    assert!(
        root.path().join(MANIFEST).is_file(),
        "RECON_FIXTURES=overwrite cargo test did not write {MANIFEST}, as README.md's tutorial \
         says it does"
    );
    // The overwrite run rewrites a suite whose expectations do not hold: the README's suite
    // must be one that needed no rewriting.
    let suite_after = std::fs::read_to_string(root.path().join(SUITE)).expect("the suite");
    assert_eq!(
        suite_after, tutorial.suite,
        "RECON_FIXTURES=overwrite cargo test rewrote the suite README.md's tutorial shows \
         ({SUITE}): its expectations are not what its cases observe"
    );
}

/// What the README gives a new user: dependency lines, the test file, the suite.
struct TutorialFiles {
    dependencies: String,
    test: String,
    suite: String,
}

impl TutorialFiles {
    fn from_readme(readme: &str) -> Self {
        let install = section(readme, "## Install");
        let dependencies = merge_toml_tables(&blocks(install, "toml"));
        let tutorial = section(readme, TUTORIAL);
        let test = blocks(tutorial, "rust")
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("README.md: no ```rust block under {TUTORIAL:?}"));
        // The suite is the first ```yaml block after the README names its file.
        let named = tutorial.find(SUITE).unwrap_or_else(|| {
            panic!("README.md: the section {TUTORIAL:?} does not name its suite, {SUITE}")
        });
        let suite = blocks(&tutorial[named..], "yaml")
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("README.md: no ```yaml block after it names {SUITE}"));
        TutorialFiles {
            dependencies,
            test,
            suite,
        }
    }
}

/// The part of `markdown` under the heading line `heading`, up to the next heading of the same
/// or a higher level. Lines in fenced blocks are not headings (`#[test]`, YAML comments).
fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut in_fence = false;
    let mut start = None;
    let mut offset = 0;
    for line in markdown.split_inclusive('\n') {
        let text = line.trim_end();
        let hashes = text.chars().take_while(|&c| c == '#').count();
        if text.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && hashes > 0 && text[hashes..].starts_with(' ') {
            match start {
                None if text == heading => start = Some(offset + line.len()),
                Some(s) if hashes <= level => return &markdown[s..offset],
                _ => {}
            }
        }
        offset += line.len();
    }
    match start {
        Some(s) => &markdown[s..],
        None => panic!("README.md has no heading {heading:?}"),
    }
}

/// The contents of the fenced blocks of language `lang` in `text`, in order, each without its
/// fences and without the fence's own indentation (a block inside a list item is indented).
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut found = Vec::new();
    // The open block: its fence's indentation, and its text if it is of `lang`.
    let mut open: Option<(usize, Option<String>)> = None;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let fence = line.trim();
        if let Some((fence_indent, body)) = &mut open {
            if fence == "```" {
                found.extend(body.take());
                open = None;
            } else if let Some(body) = body {
                body.push_str(&line[indent.min(*fence_indent)..]);
            }
        } else if let Some(info) = fence.strip_prefix("```") {
            open = Some((indent, (info == lang).then(String::new)));
        }
    }
    found
}

/// The TOML blocks as one manifest fragment: each table once, with the lines every block gives
/// it, in order (the Install section adds a `[dev-dependencies]` line in a block of its own).
fn merge_toml_tables(blocks: &[String]) -> String {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for block in blocks {
        let mut current: Option<usize> = None;
        for line in block.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                current = Some(match tables.iter().position(|(h, _)| h == trimmed) {
                    Some(i) => i,
                    None => {
                        tables.push((trimmed.to_owned(), Vec::new()));
                        tables.len() - 1
                    }
                });
            } else if let Some(i) = current {
                tables[i].1.push(line.to_owned());
            } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
                panic!("README.md's Install section has a ```toml line outside a table: {line:?}");
            }
        }
    }
    assert!(
        !tables.is_empty(),
        "README.md's Install section shows no ```toml dependencies"
    );
    let mut out = String::new();
    for (header, lines) in &tables {
        out.push_str(header);
        out.push('\n');
        let last = lines.iter().rposition(|l| !l.trim().is_empty());
        for line in &lines[..last.map_or(0, |i| i + 1)] {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The new crate's manifest: a package, the README's dependency lines verbatim, and what only
/// this test needs, after them.
fn cargo_toml(dependencies: &str, repo: &Path) -> String {
    let mut manifest = String::from(
        "[package]\nname = \"readme-tutorial\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
         publish = false\n\n",
    );
    manifest.push_str(dependencies);
    manifest.push_str(
        "# Not from the README. recon's crates are not published: this repository's stand in.\n\
         [patch.crates-io]\n",
    );
    for (name, path) in published_crates(repo) {
        // Debug quoting escapes `\` and `"` as a TOML basic string does.
        manifest.push_str(&format!(
            "{name} = {{ path = {:?} }}\n",
            path.display().to_string()
        ));
    }
    // The repository's dev profile: no debug info or incremental caches, a cheaper cold build.
    manifest.push_str("\n[profile.dev]\ndebug = false\nincremental = false\n");
    manifest
}

/// recon's publishable crates (those under `crates/` not marked `publish = false`), by name.
fn published_crates(repo: &Path) -> Vec<(String, PathBuf)> {
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(repo.join("crates")).expect("crates/") {
        let path = entry.expect("a directory entry").path();
        let Ok(manifest) = std::fs::read_to_string(path.join("Cargo.toml")) else {
            continue;
        };
        if manifest.lines().any(|l| l.trim() == "publish = false") {
            continue;
        }
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        crates.push((name, path));
    }
    crates.sort();
    assert!(!crates.is_empty(), "no crates under {}", repo.display());
    crates
}

/// `cargo test` in `dir`, offline first (the workspace's build has fetched every crate the lock
/// names for this platform), and online when offline resolution is what failed.
fn cargo_test(dir: &Path, target: &Path, overwrite: bool) -> Output {
    let run = |offline: bool| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command.arg("test").arg("--target-dir").arg(target);
        if offline {
            command.arg("--offline");
        }
        command.current_dir(dir).env_remove("RECON_FIXTURES");
        if overwrite {
            command.env("RECON_FIXTURES", "overwrite");
        }
        command.output().expect("run cargo")
    };
    let offline = run(true);
    if !offline.status.success() && String::from_utf8_lossy(&offline.stderr).contains("--offline") {
        return run(false);
    }
    offline
}

fn expect_passed(output: &Output, what: &str, dir: &Path, manifest: &str) {
    if output.status.success() {
        return;
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let missing = missing_crates(&stderr, manifest);
    let hint = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "The tutorial uses crates README.md's Install section does not list: `{}`.\n",
            missing.join("`, `")
        )
    };
    panic!(
        "README.md's tutorial does not pass as a new crate made of its Install section and its \
         files: `{what}` failed in {} (kept to look at).\n{hint}\n\
         cargo's errors:\n{}\n\ntest output:\n{}\n\nThe crate's Cargo.toml:\n{manifest}",
        dir.display(),
        tail(&without_progress(&stderr), 80),
        tail(&stdout, 60),
    );
}

/// The crates rustc could not find that `manifest` does not name: the first path segment in
/// rustc's errors for a missing crate or import.
fn missing_crates(stderr: &str, manifest: &str) -> Vec<String> {
    const MARKERS: &[&str] = &[
        "unresolved import `",
        "unlinked crate `",
        "can't find crate for `",
        "cannot find module or crate `",
        "could not find `",
    ];
    let listed: Vec<String> = manifest
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(name, _)| name.trim().replace('-', "_"))
        .collect();
    let mut names = Vec::new();
    for marker in MARKERS {
        for (at, _) in stderr.match_indices(marker) {
            let rest = &stderr[at + marker.len()..];
            let path = rest.split('`').next().unwrap_or_default();
            let name = path.split("::").next().unwrap_or(path).to_owned();
            let is_crate =
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if is_crate && !listed.contains(&name) && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// cargo's stderr without its progress lines (`Compiling x`, `Locking`, ...).
fn without_progress(stderr: &str) -> String {
    const PROGRESS: &[&str] = &[
        "Compiling ",
        "Checking ",
        "Downloading ",
        "Downloaded ",
        "Locking ",
        "Adding ",
        "Updating ",
        "Blocking ",
        "Running ",
        "Doc-tests ",
        "Finished ",
    ];
    stderr
        .lines()
        .filter(|l| !PROGRESS.iter().any(|p| l.trim_start().starts_with(p)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
    std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A directory under the system's temporary directory, removed when the test passes and kept
/// when it fails, to look at.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let path =
            std::env::temp_dir().join(format!("recon-readme-tutorial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path); // left by a failed run of the same pid
        std::fs::create_dir_all(&path).expect("create the temporary directory");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn sections_end_at_a_heading_of_their_level_and_skip_fenced_lines() {
    let markdown =
        "# A\n## B\ntext\n```rust\n#[test]\n## not a heading\n```\n### C\nmore\n## D\nlast\n";
    assert_eq!(
        section(markdown, "## B"),
        "text\n```rust\n#[test]\n## not a heading\n```\n### C\nmore\n"
    );
    assert_eq!(section(markdown, "## D"), "last\n");
}

#[test]
fn blocks_of_a_language_lose_their_fences_and_indentation() {
    let text = "```toml\na = 1\n```\n```rust\nfn f() {}\n```\n- item:\n\n  ```toml\n  [t]\n    b = 2\n  ```\n";
    assert_eq!(blocks(text, "toml"), ["a = 1\n", "[t]\n  b = 2\n"]);
    assert_eq!(blocks(text, "rust"), ["fn f() {}\n"]);
}

#[test]
fn toml_blocks_merge_by_table() {
    let merged = merge_toml_tables(&[
        "[dependencies]\na = \"1\"\n\n[dev-dependencies]\nb = \"2\"\n".to_owned(),
        "[dev-dependencies]\nc = \"3\"   # a comment\n".to_owned(),
    ]);
    assert_eq!(
        merged,
        "[dependencies]\na = \"1\"\n\n[dev-dependencies]\nb = \"2\"\nc = \"3\"   # a comment\n\n"
    );
}

#[test]
fn missing_crates_are_named_once_and_listed_ones_not() {
    let stderr = "error[E0432]: unresolved import `schemars`\n\
                  error[E0433]: cannot find `schemars` in the crate root\n\
                  | could not find `schemars` in the list of imported crates\n\
                  error[E0433]: failed to resolve: use of unresolved module or unlinked crate `rstest`\n\
                  error[E0432]: unresolved import `recon_testing::Missing`\n\
                  error[E0463]: can't find crate for `serde_saphyr`\n";
    let manifest = "[dev-dependencies]\nrecon-testing = \"0.1\"\n";
    assert_eq!(
        missing_crates(stderr, manifest),
        ["schemars", "rstest", "serde_saphyr"]
    );
}
