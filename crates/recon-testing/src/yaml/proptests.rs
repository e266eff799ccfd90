//! Property tests of the YAML suite loaders (issue 22): the repository's suites with lines
//! deleted, duplicated, swapped or re-indented, scalars swapped, YAML's own syntax inserted and
//! bytes edited; and generated documents that nest deep or expand aliases ("billion laughs").
//! Read from a string and from a file (with a CRD file beside it), no input panics, and an
//! error names its origin, and the line when it comes from the YAML. A suite that loads is
//! written back as `RECON_FIXTURES=overwrite` writes it and reads back the same.

use std::path::Path;

use proptest::prelude::*;
use recon_test_fixtures::proptest_config as config;

use super::{SuiteFile, parse};
use crate::{AdmissionWebhookTestSuite, ReconcilerTestSuite, SubReconcilerTestSuite};

/// The repository's suites, to mutate: each kind of table, CRDs inline and by file, flow and
/// block style, comments, multi-line strings.
const SUITES: &[&str] = &[
    include_str!("../../../../fixtures/harness/suites/config-map.yaml"),
    include_str!("../../../../fixtures/harness/suites/status.yaml"),
    include_str!("../../../../fixtures/harness/sub/labels.yaml"),
    include_str!("../../../../fixtures/harness/admission/sprockets.yaml"),
    include_str!("../../../../fixtures/suites/function/status.yaml"),
    include_str!("../../../../examples/admission-webhook/tests/suites/widgets.yaml"),
];

/// The CRD the file-based suites name, written beside them (as `crd.yaml`) when read from a file.
const CRD: &str = include_str!("../../../../fixtures/harness/crds/sprockets.example.com.yaml");

/// What the scalar and line mutations put in: YAML's indicators, tags, anchors and aliases,
/// values of the wrong type, and text a scanner may handle badly.
const TOKENS: &[&str] = &[
    "null",
    "~",
    "[]",
    "{}",
    "''",
    "\"\"",
    "1e999",
    "-1",
    "0x1F",
    ".inf",
    "yes",
    "2024-13-45T99:99:99Z",
    "30s",
    "&a x",
    "*a",
    "*undefined",
    "!!binary aGk=",
    "!!int x",
    "!custom x",
    "|",
    ">-",
    "? x",
    "- a",
    "{a: [b, {c: d}]}",
    "[[[[",
    "]]]]",
    "\"unterminated",
    "'",
    "#",
    "é\u{0}",
    "\t",
    "<<: *a",
    "\u{feff}",
];

/// Whole lines the mutations insert.
const LINES: &[&str] = &[
    "---",
    "...",
    "%YAML 1.2",
    "%TAG ! tag:example.com,2000:",
    "<<: *a",
    "a: &a {b: c}",
    "  extra: field",
    "- name: dup",
    "cases: []",
    "crds: [crd.yaml]",
    "cases: &c [{name: x}]",
    "? [a, b]\n: c",
];

/// One change to a suite's text, its line (or lines) picked modulo the number of lines.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    /// Spaces added (or, negative, removed) at the line's start; a tab when 0.
    Indent(usize, i8),
    /// The text after the line's first `: ` (or `- `) replaced by a token.
    Scalar(usize, usize),
    Insert(usize, usize),
    /// Bytes inserted, deleted or replaced: (where, byte, which).
    Bytes(Vec<(usize, u8, u8)>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<usize>().prop_map(Mutation::Delete),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        1 => (any::<usize>(), -4i8..5).prop_map(|(a, d)| Mutation::Indent(a, d)),
        3 => (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Mutation::Scalar(a, t)),
        1 => (any::<usize>(), 0..LINES.len()).prop_map(|(a, l)| Mutation::Insert(a, l)),
        1 => prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4)
            .prop_map(Mutation::Bytes),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for m in mutations {
        let n = lines.len().max(1);
        match m {
            Mutation::Delete(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::Duplicate(i) if !lines.is_empty() => {
                let line = lines[i % n].clone();
                lines.insert(i % n, line);
            }
            Mutation::Swap(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Mutation::Indent(i, delta) if !lines.is_empty() => {
                let line = &mut lines[i % n];
                match *delta {
                    0 => line.insert(0, '\t'),
                    d if d > 0 => line.insert_str(0, &" ".repeat(d.unsigned_abs().into())),
                    d => {
                        let strip = line
                            .chars()
                            .take(d.unsigned_abs().into())
                            .take_while(|c| *c == ' ')
                            .count();
                        line.drain(..strip);
                    }
                }
            }
            Mutation::Scalar(i, token) if !lines.is_empty() => {
                let line = &mut lines[i % n];
                let at = line
                    .find(": ")
                    .map(|p| p + 2)
                    .or_else(|| line.find("- ").map(|p| p + 2))
                    .unwrap_or(line.len());
                line.truncate(at);
                line.push_str(TOKENS[*token]);
            }
            Mutation::Insert(i, line) => {
                lines.insert(i % (lines.len() + 1), LINES[*line].to_owned())
            }
            Mutation::Bytes(edits) => {
                let mut bytes = lines.join("\n").into_bytes();
                for &(at, byte, kind) in edits {
                    let at = at % (bytes.len() + 1);
                    match kind {
                        0 => bytes.insert(at, byte),
                        1 if at < bytes.len() => {
                            bytes.remove(at);
                        }
                        _ if at < bytes.len() => bytes[at] = byte,
                        _ => bytes.push(byte),
                    }
                }
                // A suite is read as text: a file that is not UTF-8 is refused before parsing.
                lines = String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_owned)
                    .collect();
            }
            _ => {}
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A suite whose CRD files are all `crd.yaml`, so that one written beside it resolves.
fn with_local_crds(suite: &str) -> String {
    suite
        .lines()
        .map(|l| {
            if l.starts_with("- ") && l.ends_with(".yaml") {
                "- crd.yaml"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Documents no suite is, but a loader must survive, where a case holds free-form values: flow
/// and block nesting, and aliases that expand exponentially.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        (1usize..300).prop_map(|d| format!(
            "cases: [{{name: x, given: [{}{}]}}]",
            "[".repeat(d),
            "]".repeat(d)
        )),
        (1usize..300).prop_map(|d| format!("cases: [{{name: x, given: {}", "[".repeat(d))),
        (1usize..100).prop_map(|d| format!(
            "cases:\n- name: x\n  given:\n{}",
            (0..d)
                .map(|i| format!("{}  - \n", "  ".repeat(i)))
                .collect::<String>()
        )),
        (1usize..100).prop_map(|d| format!(
            "cases:\n- name: x\n  metadata:\n{}",
            (0..d)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i + 4)))
                .collect::<String>()
        )),
        (1usize..6, 1usize..6).prop_map(|(levels, width)| laughs(levels, width)),
    ]
}

/// A "billion laughs" suite: each of `levels` anchors is a list of `width` aliases of the one
/// before, so the last expands to `width^levels` strings.
fn laughs(levels: usize, width: usize) -> String {
    let mut text = "cases:\n- name: x\n  metadata:\n    l0: &l0 [lol]\n".to_owned();
    for level in 1..=levels {
        let aliases = vec![format!("*l{}", level - 1); width].join(", ");
        text.push_str(&format!("    l{level}: &l{level} [{aliases}]\n"));
    }
    text.push_str(&format!("  given: [*l{levels}]\n"));
    text
}

/// A suite with its CRD files left out: a suite read from a string needs its CRDs inline.
fn without_crd_files(suite: &str) -> String {
    let mut out = String::new();
    for line in suite.lines() {
        if line.starts_with("- ") && line.ends_with(".yaml") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.replace("crds:\ncases:", "cases:")
}

/// Errors that are the loader's own, not the YAML's: they need not name a line.
fn is_loader_error(message: &str) -> bool {
    message.contains("has no name")
        || message.contains("has the name of")
        || message.contains("needs inline CRDs")
        || message.contains("cannot read")
}

/// Loads `text` from a string as the `which`th kind of suite (all three read suites alike),
/// and checks the answer.
fn check_from_str(origin: &str, text: &str, which: usize) -> Result<(), TestCaseError> {
    let result = match which % 3 {
        0 => ReconcilerTestSuite::from_yaml_str(origin, text).map(|_| ()),
        1 => SubReconcilerTestSuite::from_yaml_str(origin, text).map(|_| ()),
        _ => AdmissionWebhookTestSuite::from_yaml_str(origin, text).map(|_| ()),
    };
    if let Err(e) = &result {
        prop_assert_eq!(&e.path, Path::new(origin));
        let shown = e.to_string();
        prop_assert!(shown.starts_with(&format!("{origin}: ")), "{}", shown);
        prop_assert!(
            is_loader_error(&e.message) || e.message.contains("line "),
            "no line: {}",
            shown
        );
    }
    // What loads is what `RECON_FIXTURES=overwrite` writes back, and that reads the same.
    if let Ok(file) = parse::<SuiteFile>(Path::new(origin), text) {
        let written = serde_saphyr::to_string(&file).expect("a loaded suite writes");
        let reread = parse::<SuiteFile>(Path::new(origin), &written)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
        let rewritten = serde_saphyr::to_string(&reread).expect("a loaded suite writes");
        prop_assert_eq!(written, rewritten);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn mutated_suites_load_or_name_where_they_are_wrong(
        suite in 0..SUITES.len(),
        mutations in prop::collection::vec(mutation(), 0..4),
        which in 0usize..3,
    ) {
        let text = mutate(&without_crd_files(SUITES[suite]), &mutations);
        check_from_str("suites/mutated.yaml", &text, which)?;
    }
}

proptest! {
    // The largest documents, and the slowest to read.
    #![proptest_config(config(200))]

    #[test]
    fn hostile_documents_are_refused_or_loaded(text in hostile(), which in 0usize..3) {
        check_from_str("hostile.yaml", &text, which)?;
    }
}

proptest! {
    // Each case writes two files: fewer cases.
    #![proptest_config(config(100))]

    #[test]
    fn mutated_suite_files_load_or_name_the_file_at_fault(
        suite in 0..SUITES.len(),
        mutations in prop::collection::vec(mutation(), 0..3),
        crd_mutations in prop::collection::vec(mutation(), 0..2),
    ) {
        let dir = std::env::temp_dir().join(format!(
            "recon-yaml-proptests-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let (suite_path, crd_path) = (dir.join("suite.yaml"), dir.join("crd.yaml"));
        std::fs::write(&suite_path, mutate(&with_local_crds(SUITES[suite]), &mutations))
            .expect("the suite written");
        std::fs::write(&crd_path, mutate(CRD, &crd_mutations)).expect("the CRD written");
        let result = ReconcilerTestSuite::from_yaml_file(&suite_path).map(|_| ());
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = &result {
            prop_assert!(e.path == suite_path || e.path == crd_path, "{:?}", e);
            let shown = e.to_string();
            prop_assert!(shown.starts_with(&format!("{}: ", e.path.display())), "{}", shown);
            prop_assert!(
                is_loader_error(&e.message) || e.message.contains("line "),
                "no line: {}",
                shown
            );
        }
    }
}

/// Documents past every limit, each read on a 2 MiB thread (a test thread's stack) in a child
/// process, so that a stack overflow is this test's failure rather than the end of the run: no
/// panic, no overflow, an answer within seconds (the alias budget stops the billion laughs),
/// an error that names the origin and the line.
#[test]
fn deep_and_exploding_suites_are_refused_on_a_test_threads_stack() {
    const NAME: &str =
        "yaml::proptests::deep_and_exploding_suites_are_refused_on_a_test_threads_stack";
    if std::env::var_os("RECON_RISKY_CHILD").is_none() {
        let exe = std::env::current_exe().expect("the test binary");
        let child = std::process::Command::new(exe)
            .args(["--exact", NAME, "--test-threads=1"])
            .env("RECON_RISKY_CHILD", "1")
            .output()
            .expect("the child test runs");
        assert!(
            child.status.success(),
            "the child failed ({}):\n{}\n{}",
            child.status,
            String::from_utf8_lossy(&child.stdout),
            String::from_utf8_lossy(&child.stderr)
        );
        return;
    }
    let documents = [
        format!(
            "cases: [{{name: x, given: [{}{}]}}]",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
        format!("cases: {}", "[".repeat(100_000)),
        format!("cases: [{{name: x, metadata: {}", "{a: ".repeat(10_000)),
        format!(
            "cases:\n- name: x\n  metadata:\n{}",
            (0..1_000)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i + 4)))
                .collect::<String>()
        ),
        format!("cases:\n- name: x\n  given:\n  {}x\n", "- ".repeat(10_000)),
        laughs(9, 10),
        laughs(30, 2),
    ];
    let outcomes = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            documents
                .iter()
                .map(|text| {
                    let start = std::time::Instant::now();
                    let result = ReconcilerTestSuite::from_yaml_str("deep.yaml", text).map(|_| ());
                    (
                        text.chars().take(40).collect::<String>(),
                        result,
                        start.elapsed(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .expect("a 2 MiB thread")
        .join()
        .expect("no panic");
    for (start, result, took) in outcomes {
        let err = result.expect_err(&start);
        assert!(
            err.to_string().starts_with("deep.yaml: ") && err.message.contains("line "),
            "{start}: {err}"
        );
        assert!(took.as_secs() < 10, "{start}: {took:?}");
    }
}

/// Found by `cargo xtask fuzz`: an empty YAML document has no position of its own, and a
/// second document was refused with a hint at the reader's Rust API.
#[test]
fn empty_and_extra_documents_are_named_by_line() {
    let message = |text: &str| {
        ReconcilerTestSuite::from_yaml_str("x.yaml", text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        message("# a suite\n---\n---\ncases: []\n"),
        "x.yaml: line 2: missing field `cases` (the YAML document is empty)"
    );
    let second = message("cases: []\n---\ncases: []\n");
    assert!(
        second.starts_with(
            "x.yaml: error: line 3 column 1: a fixture file holds one YAML document, and another starts here"
        ),
        "{second}"
    );
    let text = mutate(
        &without_crd_files(SUITES[1]),
        &[Mutation::Insert(0, 0), Mutation::Insert(0, 0)],
    );
    if let Err(e) = check_from_str("suites/mutated.yaml", &text, 0) {
        panic!("{e}");
    }
}
