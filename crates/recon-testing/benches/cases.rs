//! Table tests per second: a table of 1,000 generated reconciler cases (half expect a status
//! patch and an event, half expect nothing), each on a fresh in-memory API server with its CRD
//! (a fork of one built with it).
//! Prints the median of 3 runs. Run with `cargo bench -p recon-testing` or `cargo xtask bench`.

#[path = "../tests/support/doubler.rs"]
mod doubler;

use std::time::Instant;

const CASES: usize = 1_000;
const RUNS: usize = 3;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let mut rates: Vec<f64> = (0..RUNS)
        .map(|_| {
            let table = doubler::table(CASES);
            let start = Instant::now();
            let report = runtime.block_on(table.check(doubler::reconciler));
            let elapsed = start.elapsed();
            assert!(report.passed(), "{}", report.render(false));
            CASES as f64 / elapsed.as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    println!(
        "table tests: {:.0} cases/s (median of {RUNS} runs of {CASES} cases; target >= 1,000)",
        rates[RUNS / 2]
    );
}
