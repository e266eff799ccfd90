//! The README's "Testing a reconciler tree" example is `tests/harness/readme_example.rs` and its
//! YAML suite `fixtures/suites/function/status.yaml`, verbatim, so the example a newcomer copies
//! is one that compiles and passes.

use std::path::Path;

fn readme_and(file: &str) -> (String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    (readme, text)
}

#[test]
fn the_readme_shows_the_tested_example_verbatim() {
    let (readme, example) = readme_and("tests/harness/readme_example.rs");
    let block = format!("```rust\n{example}```\n");
    assert!(
        readme.contains(&block),
        "README.md must show crates/recon-testing/tests/harness/readme_example.rs in a ```rust block, \
         verbatim; paste the file's current text there"
    );
}

#[test]
fn the_readme_shows_the_tested_suite_verbatim() {
    let (readme, suite) = readme_and("../../fixtures/suites/function/status.yaml");
    let block = format!("```yaml\n{suite}```\n");
    assert!(
        readme.contains(&block),
        "README.md must show fixtures/suites/function/status.yaml in a ```yaml block, verbatim; \
         paste the file's current text there"
    );
}
