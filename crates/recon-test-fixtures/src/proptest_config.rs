//! How recon's property tests run: how many cases, and from which seed.

use proptest::test_runner::{Config, RngSeed};

/// The seed `cargo test` explores from, so that a run on CI explores what it explored on the
/// machine that submitted it. `cargo xtask fuzz` explores from a new seed each time.
const SEED: u64 = 0x7265_636f_6e00;

/// `RECON_PROPTEST_CASES` cases per property (`cargo xtask fuzz` sets it high), else `default`,
/// chosen per property so that all of them take a few seconds of a debug build.
///
/// The seed is `PROPTEST_RNG_SEED` when set (the fuzz command sets and prints it), else fixed.
/// No failure persistence: a failure prints its minimal input, which belongs in a plain
/// regression test, and nothing is written into the source tree.
pub fn proptest_config(default: u32) -> Config {
    let cases = std::env::var("RECON_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    // `Config::default()` reads `PROPTEST_RNG_SEED` itself.
    let given = std::env::var_os("PROPTEST_RNG_SEED").is_some();
    let defaults = Config::default();
    Config {
        cases,
        failure_persistence: None,
        rng_seed: if given {
            defaults.rng_seed
        } else {
            RngSeed::Fixed(SEED)
        },
        ..defaults
    }
}
