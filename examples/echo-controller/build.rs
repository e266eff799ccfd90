//! Rebuilds the tests when a suite file is added under `tests/suites`: rstest's `#[files]`
//! globs are read at compile time.

fn main() {
    println!("cargo::rerun-if-changed=tests/suites");
}
