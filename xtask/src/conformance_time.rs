//! `cargo xtask conformance --time`: the recorded conformance scenarios timed on the project's
//! real servers and on the in-memory one, in one run (see the conformance test's `timing.rs`
//! for what each side includes), with the ratio per server.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use crate::peer::{load_average, machine, today};

/// The real servers, by the script that runs one and the name scenarios give it.
const SERVERS: [(&str, &str); 2] = [
    ("xtask/real-apiserver.sh", "apiextensions"),
    ("xtask/kube-apiserver.sh", "kube-apiserver"),
];

/// How many times the in-memory side runs; each scenario's time is the median.
const IN_MEMORY_RUNS: usize = 3;

/// The test filter per script: kube-apiserver's watch cache of a kind stops serving once an
/// object nested deeper than Go's decoder reads is stored (`cacher ... exceeded max depth`), and
/// the later scenarios' reads of that kind then wait on it, so the `deep/` scenarios are left
/// out there (they still replay in `cargo test`).
fn filter(script: &str) -> &'static [&'static str] {
    match script {
        "xtask/kube-apiserver.sh" => &["--skip", "_conformance_deep_"],
        _ => &[],
    }
}

/// The tests built as `cargo test` builds them.
pub fn debug(root: &Path) -> ExitCode {
    run(root, Build::Debug)
}

/// The tests built in release mode, as the real servers are.
pub fn release(root: &Path) -> ExitCode {
    run(root, Build::Release)
}

#[derive(Clone, Copy, PartialEq)]
enum Build {
    Debug,
    Release,
}

fn run(root: &Path, build: Build) -> ExitCode {
    crate::exit_code("conformance --time", measure(root, build))
}

fn measure(root: &Path, build: Build) -> Result<(), String> {
    let started = Instant::now();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let on_real = target.join("conformance-times-real.tsv");
    let in_memory = target.join("conformance-times-memory.tsv");
    let times = target.join("conformance-times.tsv");
    for file in [&on_real, &in_memory, &times] {
        if file.exists() {
            std::fs::remove_file(file).map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    // rstest lists the scenario files when it compiles: new ones need a rebuild.
    let main = root.join("crates/recon-fake/tests/conformance/main.rs");
    let status = Command::new("touch")
        .arg(&main)
        .status()
        .map_err(|e| format!("touch: {e}"))?;
    if !status.success() {
        return Err(format!("touch {} failed", main.display()));
    }
    let load_before = load_average();
    // `cargo test` of the scenarios in time mode `mode`, writing to `file`, under `bash script
    // run` when a real server is wanted. The real servers go first, each started, timed and
    // stopped; then the in-memory side, with no real server running, so that their background
    // work is not on its cores. One test thread: with more, the others read their scenarios'
    // YAML while one is timed.
    let test = |script: Option<&str>, mode: &str, file: &Path| {
        let mut command = match script {
            Some(script) => {
                let mut bash = Command::new("bash");
                bash.args([script, "run", "cargo"]);
                bash
            }
            None => Command::new("cargo"),
        };
        command
            .current_dir(root)
            .args(["test", "-p", "recon-fake"])
            .args((build == Build::Release).then_some("--release"))
            .args([
                "--test",
                "conformance",
                "scenario::",
                "--",
                "--test-threads=1",
            ])
            .args(script.map_or(&[][..], filter))
            .env("RECON_CONFORMANCE", mode)
            .env("RECON_CONFORMANCE_TIMES", file)
            .status()
    };
    for (script, _) in SERVERS {
        let status = test(Some(script), "time", &on_real).map_err(|e| format!("{script}: {e}"))?;
        if !status.success() {
            return Err(format!("timing the scenarios with {script} failed"));
        }
    }
    // The in-memory side takes seconds, where the real one takes minutes: it runs several
    // times, and each scenario's time is its median, which the machine's moments of slowness
    // (the hour's speed drifts by a third) move less than one run's.
    let read =
        |file: &Path| std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()));
    let mut runs = Vec::new();
    for run in 1..=IN_MEMORY_RUNS {
        let file = target.join(format!("conformance-times-memory-{run}.tsv"));
        if file.exists() {
            std::fs::remove_file(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        let status = test(None, "time-memory", &file).map_err(|e| format!("in memory: {e}"))?;
        if !status.success() {
            return Err("timing the scenarios in memory failed".into());
        }
        runs.push(read(&file)?);
    }
    let in_memory_times = medians(&runs)?;
    std::fs::write(&in_memory, &in_memory_times)
        .map_err(|e| format!("{}: {e}", in_memory.display()))?;
    let text = join(&read(&on_real)?, &in_memory_times)?;
    std::fs::write(&times, &text).map_err(|e| format!("{}: {e}", times.display()))?;
    println!(
        "Recorded conformance scenarios, each on its real server (through `kube::Client`, CRDs \
         installed once, clean-up not timed) and then, with no real server running, on a fresh \
         in-memory server as `cargo test` replays it (new server and CRD installs included, and \
         given apart as set-up; waits on a paused clock; each scenario's median of {IN_MEMORY_RUNS} \
         runs); one test thread; {} \
         build of the tests; kube-apiserver's `deep/` scenarios left out.",
        match build {
            Build::Debug => "debug",
            Build::Release => "release",
        }
    );
    println!(
        "{}, {}; load average {load_before} before, {} after.\n",
        today(),
        machine(),
        load_average()
    );
    println!("{}", table(&text)?);
    println!(
        "conformance --time: {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The in-memory runs' lines (`id, server, in-memory s, set-up s`) as one: each scenario's line
/// of the run whose time for it is the median, in the first run's order.
fn medians(runs: &[String]) -> Result<String, String> {
    let mut by_id: std::collections::HashMap<&str, Vec<(f64, &str)>> = Default::default();
    for (r, run) in runs.iter().enumerate() {
        for (i, line) in run.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            let [id, _, total, _] = fields[..] else {
                return Err(format!(
                    "line {} of in-memory run {} is not 4 fields: {line:?}",
                    i + 1,
                    r + 1
                ));
            };
            let total: f64 = total
                .parse()
                .map_err(|e| format!("line {} of in-memory run {}: {e}", i + 1, r + 1))?;
            by_id.entry(id).or_default().push((total, line));
        }
    }
    let mut out = String::new();
    for line in runs.first().map_or("", String::as_str).lines() {
        let id = line.split('\t').next().unwrap_or_default();
        let Some(times) = by_id.get_mut(id) else {
            continue;
        };
        if times.len() != runs.len() {
            return Err(format!(
                "{id} was timed in {} of the in-memory runs",
                times.len()
            ));
        }
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.push_str(times[times.len() / 2].1);
        out.push('\n');
    }
    Ok(out)
}

/// The real side's lines (`id, server, real s`, `-` when not timed) with the in-memory times of
/// the same scenarios (`id, server, in-memory s, set-up s`): `id, server, real s, in-memory s,
/// set-up s`, `-` for each time of a scenario the real side did not time.
fn join(on_real: &str, in_memory: &str) -> Result<String, String> {
    let mut memory = std::collections::HashMap::new();
    for (i, line) in in_memory.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let [id, _, total, setup] = fields[..] else {
            return Err(format!(
                "line {} of the in-memory times is not 4 fields: {line:?}",
                i + 1
            ));
        };
        memory.insert(id, (total, setup));
    }
    let mut out = String::new();
    for (i, line) in on_real.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let [id, server, real] = fields[..] else {
            return Err(format!(
                "line {} of the real servers' times is not 3 fields: {line:?}",
                i + 1
            ));
        };
        let (total, setup) = match real {
            "-" => ("-", "-"),
            _ => *memory
                .get(id)
                .ok_or_else(|| format!("{id} was timed on {server} but not in memory"))?,
        };
        out.push_str(&format!("{id}\t{server}\t{real}\t{total}\t{setup}\n"));
    }
    Ok(out)
}

/// The Markdown table of the times in `text` (`id, server, real s, in-memory s, in-memory
/// set-up s` per line).
fn table(text: &str) -> Result<String, String> {
    let mut out = String::from(
        "| real server | scenarios timed | not timed | real server | in-memory | of which set-up | in-memory / real, speed |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (_, server) in SERVERS {
        let (mut count, mut untimed, mut real, mut memory, mut setup) = (0, 0, 0.0, 0.0, 0.0);
        for (i, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            let [_, name, on_real, in_memory, in_setup] = fields[..] else {
                return Err(format!(
                    "line {} of the times is not 5 fields: {line:?}",
                    i + 1
                ));
            };
            if name != server {
                continue;
            }
            if on_real == "-" {
                untimed += 1;
                continue;
            }
            let number = |s: &str| {
                s.parse::<f64>()
                    .map_err(|e| format!("line {}: {s:?}: {e}", i + 1))
            };
            count += 1;
            real += number(on_real)?;
            memory += number(in_memory)?;
            setup += number(in_setup)?;
        }
        if count == 0 {
            return Err(format!("no scenario of {server} was timed"));
        }
        out.push_str(&format!(
            "| {server} | {count} | {untimed} | {real:.2} s | {memory:.2} s | {setup:.2} s | {:.1}× |\n",
            real / memory
        ));
    }
    Ok(out)
}
