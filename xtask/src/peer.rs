//! `cargo xtask bench --peer` (issue 24): recon against kube-fake-client 0.3, measured side by
//! side in the same run.
//!
//! Each side is a program of its own, on its own kube: kube-fake-client's is `bench/peer` (kube
//! 4, outside the workspace), recon's the bench `versus_peer` of recon-fake (kube 5). Both read
//! `bench/workload.json`. Before measuring, this checks that the two programs are the same below
//! their marked line and that they send byte-identical bodies. Then, for each shape, it records
//! recon's answers once and runs the sides interleaved — peer, recon, recon with its request log
//! off, and the floor (recon's program with no server, its client fed the recorded answers:
//! what `kube::Api` alone costs), then the same again for memory (the floor has none) —
//! `RECON_BENCH_RUNS` times (3), each run a fresh process, and prints the medians and the ratios
//! to the peer as a Markdown table. `RECON_BENCH_OBJECTS` overrides the number of objects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

const WORKLOAD: &str = "bench/workload.json";
const PEER_MANIFEST: &str = "bench/peer/Cargo.toml";
const PEER_SOURCE: &str = "bench/peer/src/main.rs";
const RECON_SOURCE: &str = "crates/recon-fake/benches/versus_peer.rs";
/// Both programs are identical from the line holding this on.
const SHARED_FROM: &str = "From here on, both programs are identical";
/// The side that measures the client alone.
const FLOOR: &str = "kube::Api alone (floor)";
/// The shapes of `bench/workload.json`, in the order they run.
const SHAPES: [&str; 2] = ["large", "small"];
/// What the programs print in `speed` mode, and how the table names it.
const WORKLOADS: [(&str, &str); 5] = [
    ("create", "create"),
    ("get", "get by name"),
    ("patch", "merge patch"),
    ("apply", "server-side apply (force)"),
    ("list", "list, label selector matching 1%"),
];

/// One program run as one side of the comparison.
struct Side {
    label: &'static str,
    exe: PathBuf,
    /// Extra flags (recon's request log).
    flags: &'static [&'static str],
    /// `RECON_BENCH_ANSWERS`, for the side that replays recorded answers (the floor).
    answers: Option<String>,
}

impl Side {
    /// The floor replays answers: its memory says nothing about a server.
    fn has_memory(&self) -> bool {
        self.answers.is_none()
    }
}

/// What the runs of one side measured: rate per workload, bytes per object.
#[derive(Default)]
struct Runs {
    rates: BTreeMap<&'static str, Vec<f64>>,
    bytes_per_object: Vec<f64>,
}

pub fn run(root: &Path) -> ExitCode {
    crate::exit_code("bench --peer", measure(root))
}

fn measure(root: &Path) -> Result<(), String> {
    let started = Instant::now();
    let runs = env_number("RECON_BENCH_RUNS").unwrap_or(3);
    let objects = env_number("RECON_BENCH_OBJECTS");
    check_sources(root)?;

    let build = Instant::now();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    // Release, with the peer's own Cargo.lock; in the workspace's target directory, so that
    // there is one place to clean.
    let peer = executable(
        root,
        &[
            "build",
            "--release",
            "--locked",
            "--manifest-path",
            PEER_MANIFEST,
            "--target-dir",
            &target.to_string_lossy(),
        ],
        "recon-bench-peer",
    )?;
    let recon = executable(
        root,
        &[
            "bench",
            "--no-run",
            "-p",
            "recon-fake",
            "--bench",
            "versus_peer",
        ],
        "versus_peer",
    )?;
    let build = build.elapsed().as_secs_f64();
    let answers = target.join("bench-answers.bin");
    let replay = format!("replay:{}", answers.display());
    let sides = [
        Side {
            label: "kube-fake-client 0.3",
            exe: peer,
            flags: &[],
            answers: None,
        },
        Side {
            label: "recon",
            exe: recon.clone(),
            flags: &["--log", "on"],
            answers: None,
        },
        Side {
            label: "recon, request log off",
            exe: recon.clone(),
            flags: &["--log", "off"],
            answers: None,
        },
        Side {
            label: FLOOR,
            exe: recon.clone(),
            flags: &[],
            answers: Some(replay),
        },
    ];
    let recording = Side {
        label: "recon, recording its answers",
        exe: recon,
        flags: &[],
        answers: Some(format!("record:{}", answers.display())),
    };

    let load_before = load_average();
    let mut tables = Vec::new();
    let mut objects_run = 0;
    for shape in SHAPES {
        let body_bytes = check_bodies(root, &sides, shape, objects)?;
        eprintln!("{shape}: {}", recording.label);
        run_side(root, &recording, shape, "speed", objects)?;
        let mut measured: Vec<Runs> = sides.iter().map(|_| Runs::default()).collect();
        for round in 1..=runs {
            for mode in ["speed", "memory"] {
                for (side, into) in sides.iter().zip(&mut measured) {
                    if mode == "memory" && !side.has_memory() {
                        continue;
                    }
                    eprintln!("{shape}, run {round}/{runs}: {} ({mode})", side.label);
                    let line = run_side(root, side, shape, mode, objects)?;
                    objects_run =
                        record(&line, into).map_err(|e| format!("{}: {e}", side.label))?;
                }
            }
        }
        tables.push(table(&sides, &measured, shape, body_bytes));
    }
    // The recorded answers are large (about 80 MB per shape) and only this run's.
    let _ = std::fs::remove_file(&answers);
    let load_after = load_average();

    println!(
        "kube-fake-client 0.3 (kube 4) and recon (kube 5), side by side: {} ConfigMaps in one \
         namespace through `kube::Api`, sequential `.await`s on a current-thread runtime, release \
         builds; medians of {runs} interleaved runs, each a fresh process.",
        thousands(objects_run),
    );
    println!(
        "{}, {}; load average {load_before} before, {load_after} after.",
        today(),
        machine()
    );
    for t in tables {
        println!("\n{t}");
    }
    println!(
        "\nMemory: peak resident set (VmHWM) of a process that only created the objects, divided \
         by their number (KB = 1,000 bytes); lower is better, so a ratio below 1 favours recon."
    );
    println!(
        "{FLOOR}: the same program with no server, its client fed recon's recorded answers by a \
         service that does nothing else: what `kube::Api` itself costs. Its ratio is the most \
         any in-memory backend's can be."
    );
    eprintln!(
        "bench --peer: {:.0} s in all ({build:.0} s building)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
}

/// The two programs must measure the same thing: below their marked line they are one text.
fn check_sources(root: &Path) -> Result<(), String> {
    let shared = |path: &str| -> Result<String, String> {
        let text =
            std::fs::read_to_string(root.join(path)).map_err(|e| format!("reading {path}: {e}"))?;
        let line = text
            .lines()
            .position(|l| l.contains(SHARED_FROM))
            .ok_or_else(|| format!("{path} has no line `{SHARED_FROM}`"))?;
        Ok(text.lines().skip(line).collect::<Vec<_>>().join("\n"))
    };
    let (peer, recon) = (shared(PEER_SOURCE)?, shared(RECON_SOURCE)?);
    if peer != recon {
        let at = peer
            .lines()
            .zip(recon.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(peer.lines().count().min(recon.lines().count()));
        return Err(format!(
            "{PEER_SOURCE} and {RECON_SOURCE} differ below `{SHARED_FROM}`, \
             {at} lines after it: keep the two programs identical there"
        ));
    }
    Ok(())
}

/// Builds with `cargo <args>` and returns the path of the executable of the target `name`, as
/// cargo's JSON messages name it.
fn executable(root: &Path, args: &[&str], name: &str) -> Result<PathBuf, String> {
    eprintln!("$ cargo {}", args.join(" "));
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("`cargo {}` failed", args.join(" ")));
    }
    // Paths are plain strings here: no JSON parser for one field.
    let target = format!("\"name\":\"{name}\"");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains(&target))
        .find_map(|l| {
            let start = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = start + l[start..].find('"')?;
            Some(PathBuf::from(&l[start..end]))
        })
        .ok_or_else(|| format!("`cargo {}` named no executable {name}", args.join(" ")))
}

/// Runs one side once and returns what it printed.
fn run_side(
    root: &Path,
    side: &Side,
    shape: &str,
    mode: &str,
    objects: Option<usize>,
) -> Result<String, String> {
    let mut command = Command::new(&side.exe);
    command
        .args(["--workload", WORKLOAD, "--shape", shape, "--mode", mode])
        .args(side.flags)
        .current_dir(root)
        .stderr(Stdio::inherit());
    match &side.answers {
        Some(answers) => command.env("RECON_BENCH_ANSWERS", answers),
        None => command.env_remove("RECON_BENCH_ANSWERS"),
    };
    if let Some(n) = objects {
        command.args(["--objects", &n.to_string()]);
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", side.exe.display()))?;
    if !output.status.success() {
        return Err(format!("{} ({shape}, {mode}) failed", side.label));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("{}: {e}", side.label))
}

/// Every side must send the same bytes: returns the size of the first create body.
fn check_bodies(
    root: &Path,
    sides: &[Side],
    shape: &str,
    objects: Option<usize>,
) -> Result<usize, String> {
    // The recon sides differ only in the log: one recon run stands for both.
    let peer = run_side(root, &sides[0], shape, "bodies", objects)?;
    let recon = run_side(root, &sides[1], shape, "bodies", objects)?;
    if let Some((i, (p, r))) = peer
        .lines()
        .zip(recon.lines())
        .enumerate()
        .find(|(_, (p, r))| p != r)
    {
        return Err(format!(
            "{shape}: body {} differs:\n  kube-fake-client side: {p}\n  recon side:            {r}",
            i + 1
        ));
    }
    if peer.lines().count() != recon.lines().count() || peer.is_empty() {
        return Err(format!(
            "{shape}: the two sides do not send the same bodies"
        ));
    }
    Ok(peer.lines().next().map_or(0, str::len))
}

/// Adds what one run printed (`objects=N create=S ...` or `objects=N peak_rss=B`) to `runs`;
/// returns the number of objects.
fn record(line: &str, runs: &mut Runs) -> Result<usize, String> {
    let fields: BTreeMap<&str, f64> = line
        .split_whitespace()
        .filter_map(|f| f.split_once('='))
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect();
    let number = |key: &str| {
        fields
            .get(key)
            .copied()
            .ok_or_else(|| format!("printed no {key}: `{}`", line.trim()))
    };
    let objects = number("objects")?;
    if fields.contains_key("peak_rss") {
        runs.bytes_per_object.push(number("peak_rss")? / objects);
        return Ok(objects as usize);
    }
    for (workload, _) in WORKLOADS {
        let requests = if workload == "list" {
            number("list_rounds")?
        } else {
            objects
        };
        let rate = requests / number(workload)?;
        runs.rates.entry(workload).or_default().push(rate);
    }
    Ok(objects as usize)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The Markdown table of one shape: each side's medians and recon / peer.
fn table(sides: &[Side], measured: &[Runs], shape: &str, body_bytes: usize) -> String {
    let mut out = format!(
        "{shape}: ConfigMaps of {} bytes of JSON\n\n",
        thousands(body_bytes)
    );
    out.push_str("| workload |");
    for (i, side) in sides.iter().enumerate() {
        out.push_str(&format!(" {} |", side.label));
        if side.label == FLOOR {
            out.push_str(" floor / peer |");
        } else if i > 0 {
            out.push_str(" recon / peer |");
        }
    }
    out.push_str(&format!("\n|---|{}\n", "---|".repeat(2 * sides.len() - 1)));
    let peer = &measured[0];
    for (workload, label) in WORKLOADS {
        let base = median(&peer.rates[workload]);
        out.push_str(&format!("| {label} | {} |", rate(base)));
        for runs in &measured[1..] {
            let m = median(&runs.rates[workload]);
            out.push_str(&format!(" {} | {} |", rate(m), ratio(m / base)));
        }
        out.push('\n');
    }
    let base = median(&peer.bytes_per_object);
    out.push_str(&format!(
        "| peak memory per stored object | {:.1} KB |",
        base / 1000.0
    ));
    for (side, runs) in sides.iter().zip(measured).skip(1) {
        if !side.has_memory() {
            out.push_str(" – | – |");
            continue;
        }
        let m = median(&runs.bytes_per_object);
        out.push_str(&format!(" {:.1} KB | {} |", m / 1000.0, ratio(m / base)));
    }
    out.push('\n');
    out
}

fn rate(per_second: f64) -> String {
    if per_second >= 10_000.0 {
        format!("{:.1}k /s", per_second / 1000.0)
    } else if per_second >= 1000.0 {
        format!("{} /s", thousands(per_second.round() as usize))
    } else {
        format!("{per_second:.1} /s")
    }
}

fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.2}")
    }
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The 1-minute load average: figures taken above 1 on this 2-core machine are noisy.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// `N × model` from /proc/cpuinfo, N as `nproc` counts.
pub(crate) fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("nproc {cpus}, {model}")
}

/// Today's date, as `date` prints it.
pub(crate) fn today() -> String {
    Command::new("date")
        .arg("+%F")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown date".into(), |d| d.trim().to_owned())
}
