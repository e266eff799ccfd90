//! The README's "Testing a kube-rs controller" example is `tests/echo/table.rs`, verbatim.

use std::path::Path;

#[test]
fn the_readme_shows_the_tested_example_verbatim() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let example = std::fs::read_to_string(root.join("tests/echo/table.rs")).expect("table.rs");
    assert!(
        readme.contains(&format!("```rust\n{example}```\n")),
        "README.md must show examples/echo-controller/tests/echo/table.rs in a ```rust block, \
         verbatim; paste the file's current text there"
    );
}
