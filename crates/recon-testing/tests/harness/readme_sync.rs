//! The README's "Testing your reconciler" example is `tests/harness/readme_example.rs`, verbatim, so the
//! example a newcomer copies is one that compiles and passes.

use std::path::Path;

#[test]
fn the_readme_shows_the_tested_example_verbatim() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let example = std::fs::read_to_string(root.join("tests/harness/readme_example.rs"))
        .expect("readme_example.rs");
    let block = format!("```rust\n{example}```\n");
    assert!(
        readme.contains(&block),
        "README.md must show crates/recon-testing/tests/harness/readme_example.rs in a ```rust block, \
         verbatim; paste the file's current text there"
    );
}
