//! Schedules explored per second: the echo controller's default exploration (its test's
//! scenario), against the floor of the same work with nothing perturbed: reference runs alone,
//! one after another. Prints the medians of 3 runs. Run with `cargo bench -p echo-controller`
//! or `cargo xtask bench`.

#[path = "../tests/echo/explore.rs"]
mod explore;

use std::time::Instant;

const RUNS: usize = 3;

/// Reference runs timed for the floor (`only("reference")` still makes two, to check the
/// controller is deterministic).
const REFERENCES: usize = 20;

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn main() {
    let mut schedules = 0;
    let explored = median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let report = explore::scenario().explore();
                let elapsed = start.elapsed();
                assert!(report.is_clean(), "{report}");
                schedules = report.explored;
                (report.explored + 2) as f64 / elapsed.as_secs_f64()
            })
            .collect(),
    );
    let floor = median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..REFERENCES {
                    let report = explore::scenario().only("reference").explore();
                    assert!(report.is_clean(), "{report}");
                }
                (2 * REFERENCES) as f64 / start.elapsed().as_secs_f64()
            })
            .collect(),
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "exploration (echo, {schedules} schedules, {threads} threads): {explored:.0} runs/s; \
         unperturbed reference runs one at a time: {floor:.0} runs/s; ratio {:.2} (medians of \
         {RUNS})",
        explored / floor
    );
}
